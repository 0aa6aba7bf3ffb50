//! One chat turn end to end: store the user's message, score and run the tools, stream the
//! reply, store the reply with its typed parts. Every step is an event of the turn's run
//! (stored by the run's writer before anyone is shown it).
//!
//! Background tools (a flashcard update) start once the reply is stored and never hold it: the turn hands
//! them back in [`TurnOutcome::background`], its run ends (`done`) and the user may send the
//! next message, while the caller waits for them ([`Background::finish`]) and their parts are
//! stored as a follow-up assistant message of the same run.

use crate::agent::ChatAgent;
use crate::model::provider_words;
use crate::relevance::Scorer;
use crate::reply::{ReplyForm, prompt};
use crate::tool::{ChatContext, ToolResult};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use wright_events::chat::{ChatMessage, ContentFlags, Mode, Part, Role};
use wright_events::{Emitter, EventKind, Lang};
use wright_provider::{ChatRequest, Delta, Provider, RetryPolicy, Usage, complete};
use wright_store::Store;

/// What every turn shares.
#[derive(Clone)]
pub struct TurnDeps {
    pub agent: Arc<ChatAgent>,
    pub provider: Arc<dyn Provider>,
    pub model: String,
    /// Rate limits are not waited out (`max_rate_limited_retries: 0`): the user is told.
    pub retry: RetryPolicy,
    pub store: Arc<dyn Store>,
    pub scorer: Arc<Scorer>,
    /// Tokens of history the reply's prompt may carry.
    pub history_budget: usize,
    /// The reply's sampling temperature (`[sampling.chat]`; 0.4 by default, a little
    /// variety in the words).
    pub temperature: Option<f32>,
}

/// One message to answer.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The user's message when it is stored already (as the turn was recorded); else the turn
    /// stores `content` as it starts.
    pub asked: Option<ChatMessage>,
    pub conversation: String,
    pub user: String,
    pub content: String,
    pub modes: BTreeMap<String, Mode>,
    pub lang: Lang,
}

/// How the turn went.
#[derive(Debug, Default)]
pub struct TurnOutcome {
    pub reply: Option<ChatMessage>,
    pub usage: Usage,
    /// Why the reply could not be written (rate limit, provider down…), in the user's words.
    pub error: Option<String>,
    /// The technical reason behind `error`, when its words are for a person (a provider's error).
    pub detail: Option<String>,
    /// Tools that ran (worked or not).
    pub tools: Vec<String>,
    /// Background tools still running when the reply was stored: the caller finishes them
    /// after the turn's end, see [`Background::finish`].
    pub background: Option<Background>,
}

/// Background tools of a turn, running after its reply.
#[derive(Debug)]
pub struct Background {
    handle: tokio::task::JoinHandle<Vec<ToolResult>>,
    /// Their own usage (the turn's is recorded with the turn, before they end).
    usage: Arc<std::sync::Mutex<Usage>>,
    conversation: String,
    run: String,
    tools: Vec<String>,
}

/// What background tools left: the message holding their parts (stored) and what they cost.
#[derive(Debug, Clone, Default)]
pub struct BackgroundOutcome {
    pub message: Option<ChatMessage>,
    pub usage: Usage,
    pub tools: Vec<String>,
}

impl Background {
    /// Which background tools run.
    pub fn tools(&self) -> &[String] {
        &self.tools
    }

    /// Wait for the tools (each bounded by the agent's tool timeout; `within` bounds them all,
    /// past it they are stopped), then store their parts as an assistant message of the same
    /// run, after the reply, so the history shows them. Nothing is stored when no tool left
    /// a part.
    pub async fn finish(self, store: &dyn Store, within: std::time::Duration) -> BackgroundOutcome {
        let Background { mut handle, usage, conversation, run, tools } = self;
        let results = match tokio::time::timeout(within, &mut handle).await {
            Ok(done) => done.unwrap_or_default(),
            Err(_) => {
                handle.abort();
                tracing::warn!(run = %run, "background chat tools ran past {within:?}; stopped");
                Vec::new()
            }
        };
        let usage = *usage.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let parts: Vec<Part> = results.iter().filter_map(|r| r.part.clone()).collect();
        let message = if parts.is_empty() {
            None
        } else {
            let m = message(Role::Assistant, parts, &run);
            match store.add_message(&conversation, &m, &tools).await {
                Ok(()) => Some(m),
                Err(e) => {
                    tracing::warn!(run = %run, "background chat tools' parts not stored: {e}");
                    None
                }
            }
        };
        BackgroundOutcome { message, usage, tools }
    }
}

/// The user's message `content`, asked in run `run`.
pub fn user_message(content: &str, run: &str) -> ChatMessage {
    message(Role::User, vec![Part::Text { text: content.to_string() }], run)
}

/// A fresh conversation id.
pub fn conversation_id() -> String {
    format!("c-{:012x}", fastrand::u64(..) & 0xffff_ffff_ffff)
}

/// A fresh message id.
pub fn message_id() -> String {
    format!("m-{:012x}", fastrand::u64(..) & 0xffff_ffff_ffff)
}

/// A new message of `role` with `parts`, written in run `run`.
pub fn message(role: Role, parts: Vec<Part>, run: &str) -> ChatMessage {
    ChatMessage {
        id: message_id(),
        role,
        flags: ContentFlags::of(&parts),
        parts,
        run: Some(run.to_string()),
        created_at: chrono::Utc::now().to_rfc3339(),
        feedback: None,
    }
}

fn result_event(r: &ToolResult) -> EventKind {
    EventKind::ChatToolResult {
        tool: r.tool.clone(),
        success: r.success,
        outcome: r.outcome,
        message_type: r.message_type.clone(),
        content: (!r.content.is_empty()).then(|| r.content.clone()),
        structured_data: r.part.as_ref().map(|p| Box::new(serde_json::to_value(p.public()).unwrap_or_default())),
        error: r.error.clone(),
        execution_order: r.execution_order,
        metadata: Box::new(r.metadata.clone()),
    }
}

/// Run one turn. Errors reach the user as words in the outcome; nothing here panics.
pub async fn run_turn(deps: &TurnDeps, turn: &Turn, emit: &Emitter, cancel: &CancellationToken) -> TurnOutcome {
    let t0 = Instant::now();
    let run = emit.build_id().to_string();
    let mut out = TurnOutcome::default();
    let store = |e: wright_store::StoreError| format!("the conversation could not be saved: {e}");

    let mut history = match deps.store.messages(&turn.conversation, Some(41)).await {
        Ok(h) => h,
        Err(e) => return TurnOutcome { error: Some(store(e)), ..out },
    };
    let asked = match &turn.asked {
        Some(stored) => {
            history.retain(|m| m.id != stored.id);
            stored.clone()
        }
        None => {
            let asked = user_message(&turn.content, &run);
            if let Err(e) = deps.store.add_message(&turn.conversation, &asked, &[]).await {
                return TurnOutcome { error: Some(store(e)), ..out };
            }
            asked
        }
    };
    if history.len() > 40 {
        history.drain(..history.len() - 40);
    }
    emit.emit(EventKind::ChatMessage { message: Box::new(asked.clone()) });

    let scorer = deps.scorer.clone();
    let (text, user) = (turn.content.clone(), turn.user.clone());
    let embedding =
        tokio::task::spawn_blocking(move || scorer.embed_for(&user, &text)).await.ok().flatten().map(Arc::new);
    let ctx = ChatContext {
        user: turn.user.clone(),
        conversation: turn.conversation.clone(),
        lang: turn.lang,
        history: Arc::new(history.clone()),
        provider: deps.provider.clone(),
        model: deps.model.clone(),
        retry: deps.retry.clone(),
        store: deps.store.clone(),
        scorer: deps.scorer.clone(),
        embedding,
        usage: Default::default(),
        cancel: cancel.clone(),
    };

    let selection = deps.agent.select(&turn.content, &ctx, &turn.modes);
    emit.emit(EventKind::ToolScores { scores: selection.scores.clone(), micros: selection.micros });
    let mut chosen: Vec<_> = selection.foreground.iter().chain(&selection.background).collect();
    chosen.sort_by_key(|c| c.execution_order);
    for c in &chosen {
        emit.emit(EventKind::ToolSelected { tool: c.tool.name().to_string(), confidence: c.confidence });
        out.tools.push(c.tool.name().to_string());
    }

    let results = tokio::select! {
        r = deps.agent.run(&selection.foreground, &turn.content, &ctx, t0) => r,
        _ = cancel.cancelled() => Vec::new(),
    };
    for r in &results {
        emit.emit(result_event(r));
    }

    let form = ReplyForm::for_successes(results.iter().filter(|r| r.success).count());
    let req = ChatRequest {
        model: deps.model.clone(),
        messages: prompt(form, turn.lang, &results, &history, &turn.content, deps.history_budget),
        tools: Vec::new(),
        temperature: deps.temperature,
        max_tokens: Some(form.max_tokens()),
        tool_choice: Default::default(),
    };
    tracing::info!(run = %run, form = form.as_str(), tools = results.len(), "chat reply");
    let mut streamed = String::new();
    let answer = complete(
        deps.provider.as_ref(),
        &req,
        &deps.retry,
        cancel,
        |d| {
            if let Delta::Text(t) = d
                && !t.is_empty()
            {
                streamed.push_str(t);
                emit.emit(EventKind::TextDelta { text: t.clone() });
            }
        },
        |_, _, _| {},
    )
    .await;
    let mut parts = Vec::new();
    match answer {
        Ok(a) => {
            ctx.add_usage(a.usage);
            let text = a.content.trim().to_string();
            if !text.is_empty() {
                parts.push(Part::Text { text });
            }
        }
        Err(e) => {
            // What the user already saw stays in the conversation.
            if !streamed.trim().is_empty() {
                parts.push(Part::Text { text: streamed.trim().to_string() });
            }
            out.error = Some(provider_words(turn.lang, &e));
            out.detail = Some(e.to_string());
        }
    }
    parts.extend(results.iter().filter_map(|r| r.part.clone()));

    if let Some(e) = &out.error {
        parts.push(Part::Error { tool: "reply".into(), message: e.clone() });
    }
    let reply = message(Role::Assistant, parts, &run);
    if let Err(e) = deps.store.add_message(&turn.conversation, &reply, &out.tools).await {
        out.error.get_or_insert(store(e));
    }
    // The event log shows what clients may see: a quiz's answers stay in the store.
    emit.emit(EventKind::ChatMessage { message: Box::new(reply.public()) });
    // Background tools start once the reply is stored, so they never delay it, and go on
    // after the turn ends (see `Background`) with their own usage, so the turn's total does not
    // change under its record. They see the reply last in their history: a card is taken from
    // what the learner was told. A stopped turn starts none.
    out.background = (!selection.background.is_empty() && !cancel.is_cancelled()).then(|| {
        let mut seen = history.clone();
        seen.push(asked);
        seen.push(reply.clone());
        let ctx = ChatContext { usage: Default::default(), history: Arc::new(seen), ..ctx.clone() };
        let usage = ctx.usage.clone();
        let (agent, bg, msg) = (deps.agent.clone(), selection.background.clone(), turn.content.clone());
        let tools = bg.iter().map(|c| c.tool.name().to_string()).collect();
        let handle = tokio::spawn(async move { agent.run(&bg, &msg, &ctx, t0).await });
        Background { handle, usage, conversation: turn.conversation.clone(), run: run.clone(), tools }
    });
    out.reply = Some(reply);
    out.usage = ctx.usage();
    out
}
