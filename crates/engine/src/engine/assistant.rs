//! In-app assistant turns, composed here: the model and the store from the engine, the
//! assistant's tools and documents from its scope (wright's own UI, or an app's embed key).
//! A turn runs until it waits for the page (its run stays open, holding nothing) or ends
//! (its run ends with `complete`, whose `end_reason` the chat stream says as `finish_reason`).

use super::Engine;
use crate::EngineError;
use async_trait::async_trait;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use wright_chat::assistant::{self, AssistantDeps, Finish, ServerOutput, ServerTool, Step, prompt};
use wright_docs::DocsIndex;
use wright_events::chat::{ClientToolDef, DocHit, Part};
use wright_events::{Emitter, EndReason, EventKind, EventSink, Lang, RunStatus};
use wright_provider::{RetryPolicy, ToolSpec, Usage};
use wright_store::{AssistantTurn, BuildFinish, LogWriter, RunEnd, Tokens, TurnState};

/// wright's own documents, embedded so the assistant of any install can search them.
static WRIGHT_DOCS: include_dir::Dir<'static> = include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../docs");

/// Which assistant a turn talks to: its tools and its documents. Each has its own documents,
/// never another's.
#[derive(Clone)]
pub struct AssistantScope {
    /// `wright` or `key:<embed key id>`.
    pub id: String,
    /// Who the assistant serves, for its prompt.
    pub app: String,
    pub tools: Vec<ClientToolDef>,
    pub docs: Option<Arc<DocsIndex>>,
}

/// The documents indexes this engine keeps, one per folder.
pub type DocsIndexes = tokio::sync::Mutex<HashMap<PathBuf, Arc<DocsIndex>>>;

/// `search_documents` over one assistant's documents.
struct SearchDocuments(Arc<DocsIndex>);

#[async_trait]
impl ServerTool for SearchDocuments {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: assistant::ui_tools::SEARCH_DOCUMENTS.into(),
            description: "Search this app's documentation by meaning and keywords. Returns the best sections \
                          with their source file and heading; cite them in your answer."
                .into(),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what to look for, in the user's words"},
                    "topN": {"type": "integer", "minimum": 1, "maximum": 10, "description": "how many sections (default 5)"}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        }
    }

    async fn run(&self, args: &Value) -> Result<ServerOutput, String> {
        let query = args.get("query").and_then(Value::as_str).map(str::trim).unwrap_or_default();
        if query.is_empty() {
            return Err("query: say what to look for".into());
        }
        let top = args.get("topN").and_then(Value::as_u64).unwrap_or(5).clamp(1, 10) as usize;
        let hits = self.0.search(query, top).await.map_err(|e| format!("the documents could not be searched: {e}"))?;
        if hits.is_empty() {
            return Ok(ServerOutput { for_model: "No section of the documents matches.".into(), part: None });
        }
        let for_model = hits
            .iter()
            .enumerate()
            .map(|(i, h)| format!("[{}] {} › {}\n{}", i + 1, h.source, h.heading, h.snippet))
            .collect::<Vec<_>>()
            .join("\n\n");
        let hits = hits
            .into_iter()
            .map(|h| DocHit { source: h.source, heading: h.heading, anchor: h.anchor, snippet: h.snippet })
            .collect();
        Ok(ServerOutput { for_model, part: Some(Part::Documents { query: query.to_string(), hits }) })
    }
}

/// Write wright's embedded documents under `dir` (kept up to date with this binary).
fn materialise_wright_docs(dir: &Path) -> Result<(), EngineError> {
    let io = |e: std::io::Error| EngineError::Usage(format!("writing wright's docs to {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(io)?;
    for file in WRIGHT_DOCS.files() {
        let to = dir.join(file.path());
        if std::fs::read(&to).ok().as_deref() != Some(file.contents()) {
            std::fs::write(&to, file.contents()).map_err(io)?;
        }
    }
    Ok(())
}

/// A short, stable file name for the index of `dir`.
fn index_name(dir: &Path) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(dir.to_string_lossy().as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

impl Engine {
    /// Rounds of tool calls one assistant message may take.
    pub fn assistant_max_rounds(&self) -> u32 {
        self.file.assistant.max_rounds.unwrap_or(10).clamp(1, 50)
    }

    /// How long the page has to answer a round.
    pub fn assistant_page_timeout(&self) -> Duration {
        Duration::from_secs(self.file.assistant.page_timeout_secs.unwrap_or(300).max(5))
    }

    /// The folder wright's own assistant searches: `[assistant] docs`, else wright's own docs
    /// written into the data dir (once per engine).
    pub fn wright_docs_dir(&self) -> Result<PathBuf, EngineError> {
        if let Some(dir) = &self.file.assistant.docs {
            return Ok(dir.clone());
        }
        // Written once per engine (every message asks for the folder); a failure is tried again.
        if let Some(dir) = self.wright_docs.get() {
            return Ok(dir.clone());
        }
        let dir = self.data_dir.join("docs").join("wright");
        materialise_wright_docs(&dir)?;
        Ok(self.wright_docs.get_or_init(|| dir).clone())
    }

    /// The index of the documents in `dir`, opened once and kept up to date in the background
    /// (every 30 s) until `stop`.
    pub async fn docs_index(&self, dir: &Path, stop: &CancellationToken) -> Result<Arc<DocsIndex>, EngineError> {
        let dir = dir.canonicalize().map_err(|e| EngineError::Usage(format!("docs folder {}: {e}", dir.display())))?;
        let mut open = self.docs.lock().await;
        if let Some(index) = open.get(&dir) {
            return Ok(index.clone());
        }
        // Every index gets the scheduler (unless the model is off): when the model cannot load
        // yet, a refresh says so and a later one, past the backoff, embeds what is missing.
        let embedder = (!matches!(self.embeddings().status(), crate::embedq::ModelStatus::Off(_))).then(|| {
            let owner = format!("docs:{}", index_name(&dir));
            Arc::new(crate::embedq::ScheduledDocs { handle: self.embeddings().clone(), owner })
                as Arc<dyn wright_docs::Embed>
        });
        let file = self.data_dir.join("docs-index").join(format!("{}.sqlite", index_name(&dir)));
        let index = Arc::new(
            DocsIndex::open(&file, &dir, embedder)
                .await
                .map_err(|e| EngineError::Usage(format!("the docs index of {}: {e}", dir.display())))?,
        );
        index.clone().watch(Duration::from_secs(30), stop.child_token());
        open.insert(dir, index.clone());
        Ok(index)
    }

    fn assistant_deps(
        &self,
        scope: &AssistantScope,
        provider: Arc<dyn wright_provider::Provider>,
        model: String,
    ) -> AssistantDeps {
        let server_tools: Vec<Arc<dyn ServerTool>> = match &scope.docs {
            Some(docs) => vec![Arc::new(SearchDocuments(docs.clone()))],
            None => Vec::new(),
        };
        AssistantDeps {
            provider,
            model,
            retry: RetryPolicy { max_rate_limited_retries: 0, ..self.retry_policy() },
            store: self.store.clone(),
            app: scope.app.clone(),
            server_tools,
            client_tools: scope.tools.clone(),
            max_rounds: self.assistant_max_rounds(),
            page_timeout: self.assistant_page_timeout(),
            history_budget: self.file.chat.history_tokens.unwrap_or(3000),
        }
    }

    /// Answer `job` (recorded by [`Engine::record_chat_turn`]) with the assistant of `scope`,
    /// whose page runs `client_tools`: until the page must act (the run stays open) or the turn
    /// ends (`complete`).
    pub async fn assistant_turn(
        &self,
        job: super::chat::ChatJob,
        scope: AssistantScope,
        client_tools: Vec<String>,
        sinks: Vec<Arc<dyn EventSink>>,
        cancel: CancellationToken,
    ) -> Result<(), EngineError> {
        let clock = Instant::now();
        let log = LogWriter::start(self.store.clone(), &job.run, None, sinks);
        // Held by this server until the turn ends or waits for the page (which holds none).
        let held = self.hold_turn(&job.run).await;
        let (provider, model) = match self.provider().await {
            Ok(p) => p,
            Err(e) => {
                self.end_assistant_run(&log, &job.run, Finish::Error(e.to_string()), Usage::default(), "", clock).await;
                return Err(e);
            }
        };
        let emitter = Emitter::new(job.run.clone(), vec![log.clone()]);
        if let Some(asked) = &job.asked {
            emitter.emit(EventKind::ChatMessage { message: Box::new(asked.clone()) });
        }
        let deps = self.assistant_deps(&scope, provider, model.clone());
        let turn = AssistantTurn {
            run: job.run.clone(),
            conversation: job.conversation.clone(),
            user: job.user.clone(),
            assistant: scope.id.clone(),
            lang: job.lang,
            client_tools,
            transcript: Value::Array(Vec::new()),
            parts: Vec::new(),
            round: 0,
            state: TurnState::Running,
        };
        let stepped = assistant::start(&deps, turn, job.lang, &emitter, &cancel).await;
        log.flush().await;
        match stepped.step {
            Step::Done { finish, .. } => {
                self.end_assistant_run(&log, &job.run, finish, stepped.usage, &model, clock).await
            }
            Step::Waiting { .. } => held.release().await,
        }
        Ok(())
    }

    /// Go on with assistant turn `run` after the page answered its round (the store chose this
    /// caller to resume it).
    pub async fn resume_assistant_turn(
        &self,
        run: &str,
        scope: AssistantScope,
        lang: Lang,
        sinks: Vec<Arc<dyn EventSink>>,
        cancel: CancellationToken,
    ) -> Result<(), EngineError> {
        let clock = Instant::now();
        let log = LogWriter::start(self.store.clone(), run, None, sinks);
        let held = self.hold_turn(run).await;
        let (provider, model) = match self.provider().await {
            Ok(p) => p,
            Err(e) => {
                self.end_assistant_run(&log, run, Finish::Error(e.to_string()), Usage::default(), "", clock).await;
                return Err(e);
            }
        };
        let emitter = Emitter::new(run.to_string(), vec![log.clone()]);
        let deps = self.assistant_deps(&scope, provider, model.clone());
        let stepped = assistant::resume(&deps, run, lang, &emitter, &cancel).await;
        log.flush().await;
        match stepped.step {
            Step::Done { finish, .. } => self.end_assistant_run(&log, run, finish, stepped.usage, &model, clock).await,
            Step::Waiting { .. } => held.release().await,
        }
        Ok(())
    }

    /// Close the turns of `conversation` that wait for the page (a new message, a reload):
    /// their calls are answered "cancelled" with `why`, a short reply says the turn was
    /// interrupted (so the history stays valid), and their runs end. How many were closed.
    pub async fn close_waiting_turns(&self, conversation: &str, why: &str, lang: Lang) -> usize {
        let runs = match self.store.close_pending(conversation, why).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(conversation, "waiting assistant turns could not be closed: {e}");
                return 0;
            }
        };
        for run in &runs {
            self.interrupt(conversation, run, lang).await;
        }
        runs.len()
    }

    /// Close the assistant calls past their deadline and end their turns; how many turns.
    pub async fn expire_assistant_calls(&self) -> usize {
        let expired = match self.store.expire_calls(&wright_events::now()).await {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!("expired assistant calls could not be closed: {e}");
                return 0;
            }
        };
        for (run, conversation) in &expired {
            let lang = match self.store.assistant_turn(run).await {
                Ok(t) => t.lang,
                Err(_) => Lang::En,
            };
            self.interrupt(conversation, run, lang).await;
        }
        expired.len()
    }

    async fn interrupt(&self, conversation: &str, run: &str, lang: Lang) {
        let words = prompt::interrupted(lang);
        let reply =
            wright_chat::turn::message(wright_events::chat::Role::Assistant, vec![Part::Text { text: words }], run);
        if let Err(e) = self.store.add_message(conversation, &reply, &[]).await {
            tracing::warn!(run, "the interrupted turn's reply was not stored: {e}");
        }
        let log = LogWriter::start(self.store.clone(), run, None, Vec::new());
        Emitter::new(run.to_string(), vec![log.clone()])
            .emit(EventKind::ChatMessage { message: Box::new(reply.public()) });
        log.flush().await;
        self.end_assistant_run(&log, run, Finish::Cancelled, Usage::default(), "", Instant::now()).await;
    }

    async fn end_assistant_run(
        &self,
        log: &Arc<LogWriter>,
        run: &str,
        finish: Finish,
        usage: Usage,
        model: &str,
        clock: Instant,
    ) {
        let (status, reason, error) = match &finish {
            Finish::Stop => (RunStatus::Published, None, None),
            Finish::RoundLimit => (RunStatus::Failed, Some(EndReason::RoundLimit), None),
            Finish::Cancelled => (RunStatus::Failed, Some(EndReason::Cancelled), None),
            Finish::Error(why) => (RunStatus::Failed, Some(EndReason::ProviderUnusable), Some(why.clone())),
        };
        let tokens = Tokens {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cached_tokens: usage.cached_tokens,
            cost_usd: self.pricing.cost(model, usage),
        };
        let record = BuildFinish {
            status,
            end_reason: reason,
            fix_attempts: 0,
            turns: 1,
            tokens,
            duration_ms: u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX),
            files: Vec::new(),
            report: error.clone(),
            finished_at: wright_events::now(),
        };
        let words = error.map(|message| EventKind::Error { message, detail: None }).into_iter().collect();
        if let Err(e) = log.finish(RunEnd::of(record, words)).await {
            tracing::warn!(run, "assistant turn end not stored: {e}");
        }
    }
}
