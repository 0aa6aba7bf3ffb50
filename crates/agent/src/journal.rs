//! The build's record in the store: every conversation message (with its time and the usage
//! of the call that produced it) and every model call's usage.
//!
//! Store failures are logged and never end a build: the build is what the person asked for,
//! the record is a by-product. The writes are made by a task of their own, in order, so a
//! step of the agent never waits for the database (the events, which people are shown, are
//! stored first by the run's log writer; this record only serves `--continue`, re-runs and
//! statistics). [`Journal::flush`] waits for them: a build ends only once its record is whole.

use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};
use wright_events::Phase;
use wright_provider::{Message, Usage};
use wright_store::{Store, Tokens, Turn, UsageEntry};

struct State {
    phase: Phase,
    /// Index the next stored turn gets.
    next_idx: u32,
    /// How many messages of the current conversation are stored.
    recorded: usize,
}

enum Write {
    Turn(Turn),
    Usage(UsageEntry),
    Flush(oneshot::Sender<()>),
}

/// Writes a build's turns and usage to a [`Store`].
pub struct Journal {
    store: Arc<dyn Store>,
    build_id: String,
    provider: String,
    state: Mutex<State>,
    writes: mpsc::UnboundedSender<Write>,
}

/// Who writes the journal: the worker holding the run (`wright serve`), or nobody's (`None`).
type Writer = Option<String>;

impl Journal {
    /// Start the journal and its writer task (on the current tokio runtime) for a run no worker
    /// holds.
    pub fn new(store: Arc<dyn Store>, build_id: impl Into<String>, provider: impl Into<String>) -> Self {
        Self::for_writer(store, build_id, provider, None)
    }

    /// The journal of a run `writer` holds (its lease fences the turns it stores).
    pub fn for_writer(
        store: Arc<dyn Store>,
        build_id: impl Into<String>,
        provider: impl Into<String>,
        writer: Writer,
    ) -> Self {
        let build_id = build_id.into();
        let (writes, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_all(store.clone(), build_id.clone(), writer, rx));
        Self {
            store,
            build_id,
            provider: provider.into(),
            state: Mutex::new(State { phase: Phase::Planning, next_idx: 0, recorded: 0 }),
            writes,
        }
    }

    /// Wait until everything recorded so far is in the store.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.writes.send(Write::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }

    fn write(&self, w: Write) {
        if self.writes.send(w).is_err() {
            tracing::warn!(build = %self.build_id, "the journal's writer has stopped; a record was not stored");
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        }
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn build_id(&self) -> &str {
        &self.build_id
    }

    /// The phase later turns and usage belong to.
    pub fn set_phase(&self, phase: Phase) {
        self.state().phase = phase;
    }

    pub fn phase(&self) -> Phase {
        self.state().phase
    }

    /// The conversation was replaced (a fresh-context fix): its messages are all new.
    pub fn restart(&self) {
        self.state().recorded = 0;
    }

    /// Store the messages of `messages` not stored yet. `usage` belongs to the newest assistant
    /// message among them (the call that just answered).
    pub async fn sync(&self, messages: &[Message], usage: Option<(Usage, f64)>) {
        let (start, first_idx, phase) = {
            let mut s = self.state();
            let start = s.recorded.min(messages.len());
            let first = s.next_idx;
            s.next_idx += (messages.len() - start) as u32;
            s.recorded = messages.len();
            (start, first, s.phase)
        };
        let new = &messages[start..];
        let last_assistant = new.iter().rposition(|m| m.role == wright_provider::Role::Assistant);
        let ts = wright_store::now();
        for (i, m) in new.iter().enumerate() {
            let tokens = match (usage, Some(i) == last_assistant) {
                (Some((u, cost)), true) => tokens(u, cost),
                _ => Tokens::default(),
            };
            let turn = Turn {
                build_id: self.build_id.clone(),
                idx: first_idx + i as u32,
                phase: phase.as_str().to_string(),
                role: role_name(m).to_string(),
                message: serde_json::to_value(m).unwrap_or(serde_json::Value::Null),
                ts: ts.clone(),
                tokens,
            };
            self.write(Write::Turn(turn));
        }
    }

    /// Log one model call.
    pub async fn usage(&self, model: &str, usage: Usage, cost: f64) {
        let entry = UsageEntry {
            build_id: self.build_id.clone(),
            phase: self.phase().as_str().to_string(),
            provider: self.provider.clone(),
            model: model.to_string(),
            tokens: tokens(usage, cost),
            ts: wright_store::now(),
        };
        self.write(Write::Usage(entry));
    }
}

/// The journal's writer: stores what it is given, in order, until the journal is dropped.
async fn write_all(store: Arc<dyn Store>, build: String, writer: Writer, mut rx: mpsc::UnboundedReceiver<Write>) {
    while let Some(w) = rx.recv().await {
        match w {
            Write::Turn(turn) => {
                if let Err(e) = store.append_turn(&turn, writer.as_deref()).await {
                    tracing::warn!(build, "conversation turn not stored: {e}");
                }
            }
            Write::Usage(entry) => {
                if let Err(e) = store.log_usage(&entry).await {
                    tracing::warn!(build, "usage not stored: {e}");
                }
            }
            Write::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}

fn role_name(m: &Message) -> &'static str {
    match m.role {
        wright_provider::Role::System => "system",
        wright_provider::Role::User => "user",
        wright_provider::Role::Assistant => "assistant",
        wright_provider::Role::Tool => "tool",
    }
}

/// Rebuild a stored conversation: the messages of its latest context (from the last system
/// message on), for `wright run --continue`.
pub fn conversation_from_turns(turns: &[Turn]) -> Vec<Message> {
    let messages: Vec<Message> = turns.iter().filter_map(|t| serde_json::from_value(t.message.clone()).ok()).collect();
    let start = messages.iter().rposition(|m| m.role == wright_provider::Role::System).unwrap_or(0);
    messages[start..].to_vec()
}

/// A model call's usage and price, as the store keeps them.
pub(crate) fn tokens(u: Usage, cost_usd: f64) -> Tokens {
    Tokens { input_tokens: u.input_tokens, output_tokens: u.output_tokens, cached_tokens: u.cached_tokens, cost_usd }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wright_provider::ToolCall;

    #[tokio::test]
    async fn turns_are_recorded_once_with_usage_and_the_latest_context_comes_back() {
        let store: Arc<dyn Store> = Arc::new(wright_store::SqliteStore::memory().await.unwrap());
        let run = wright_store::NewBuild {
            id: "b1".into(),
            kind: wright_events::RunKind::Build,
            parent_id: None,
            prompt: "p".into(),
            template: Some(wright_events::Template::Static),
            lang: wright_events::Lang::En,
            provider: "openai".into(),
            model: "m".into(),
            workspace: "/tmp/b1".into(),
            started_at: wright_store::now(),
        };
        store.create_build(&run).await.unwrap();
        let j = Journal::new(store.clone(), "b1", "openai:m");
        j.set_phase(Phase::Generating);
        let mut msgs = vec![Message::system("s"), Message::user("build it")];
        j.sync(&msgs, None).await;
        let call = ToolCall { id: "c1".into(), name: "listFiles".into(), arguments: "{}".into() };
        msgs.push(Message::assistant_calls(None, vec![call]));
        let usage = Usage { input_tokens: 10, output_tokens: 3, cached_tokens: 4 };
        j.sync(&msgs, Some((usage, 0.5))).await;
        j.sync(&msgs, None).await; // nothing new: nothing stored twice
        msgs.push(Message::tool_result("c1", "listFiles", "{\"ok\":true}"));
        j.set_phase(Phase::Fixing);
        j.restart(); // a fresh context replaces the conversation
        let fresh = vec![Message::system("s"), Message::user("fix it from scratch")];
        j.sync(&fresh, None).await;
        j.usage("m", usage, 0.5).await;
        j.flush().await;

        let turns = store.turns("b1").await.unwrap();
        assert_eq!(turns.iter().map(|t| t.idx).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
        assert_eq!(turns[2].role, "assistant");
        assert_eq!((turns[2].tokens.input_tokens, turns[2].tokens.cached_tokens), (10, 4));
        assert_eq!(turns[0].tokens, Tokens::default());
        assert_eq!((turns[3].phase.as_str(), turns[3].role.as_str()), ("FIXING", "system"));
        assert_eq!(conversation_from_turns(&turns), fresh, "the latest context, from its system message");
        let logged = store.usage("b1").await.unwrap();
        assert_eq!((logged.len(), logged[0].phase.as_str(), logged[0].provider.as_str()), (1, "FIXING", "openai:m"));
    }
}
