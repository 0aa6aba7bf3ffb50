//! The tools a model calls to build a project, behind one [`Tool`] trait.
//!
//! The [`Registry`] is the only way calls reach tools: it parses the model's JSON, checks it
//! against the tool's schema, runs the tool and turns every failure into a `{ok:false, error}`
//! result the model can read. A bad call never ends a build.

mod deps;
mod exec;
mod files;
mod registry;
mod relative;
pub mod schema;
mod status;
pub mod testing;

pub use deps::install_declared;
pub use exec::{ExecConfig, RunCommand, run_logged};
pub use files::{
    ApplyPatch, CreateFile, DeleteFile, ListFiles, ReadFile, SearchFiles, UpdateFile, WriteFile, project_files,
    project_files_under,
};
pub use registry::{Registry, ToolOutcome};
pub use status::AnnounceStatus;
pub use testing::{RunTests, TestRun, run_tests};

use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_events::Emitter;
use wright_sandbox::{CommandRunner, PathError, RunError, Workspace};

/// Everything a tool may touch during one build.
#[derive(Clone)]
pub struct ToolContext {
    pub workspace: Workspace,
    pub runner: Arc<dyn CommandRunner>,
    pub emitter: Emitter,
    pub cancel: CancellationToken,
    pub exec: ExecConfig,
}

/// Why a tool call failed; the text is what the model reads.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("{0}")]
    Failed(String),
}

/// What a successful tool call returns: the JSON for the model and a one-line summary for people.
#[derive(Debug, Clone)]
pub struct ToolSuccess {
    pub value: Value,
    pub summary: String,
}

/// One tool. Arguments arrive as checked JSON; most tools decode them into a typed struct whose
/// derived schema is also what `parameters` reports, so the two cannot drift apart.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// JSON Schema of the arguments object.
    fn parameters(&self) -> Value;
    /// Repair common, unambiguous slips before validation (e.g. a JSON object given as file
    /// content). Default: none.
    fn coerce(&self, _args: &mut Value) {}
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolSuccess, ToolError>;
}

/// Decode checked arguments into the tool's argument type.
pub fn decode<T: serde::de::DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| ToolError::InvalidArguments(e.to_string()))
}

/// The registry with the ten contract tools.
pub fn builtin_registry() -> Registry {
    let mut r = Registry::new();
    r.register(Arc::new(CreateFile));
    r.register(Arc::new(UpdateFile));
    r.register(Arc::new(DeleteFile));
    r.register(Arc::new(ReadFile));
    r.register(Arc::new(ListFiles));
    r.register(Arc::new(SearchFiles));
    r.register(Arc::new(ApplyPatch));
    r.register(Arc::new(RunCommand));
    r.register(Arc::new(RunTests));
    r.register(Arc::new(AnnounceStatus));
    r
}

/// Keep the start of `s` up to `max` bytes on a character boundary, saying how much was cut.
pub fn clip(s: &str, max: usize) -> String {
    let kept = wright_text::head(s, max, wright_text::Unit::Bytes);
    if kept.len() == s.len() {
        return s.to_string();
    }
    format!("{kept}… [{} more bytes cut]", s.len() - kept.len())
}

/// Keep the end of `s` up to `max` bytes, saying how much was cut.
pub fn clip_tail(s: &str, max: usize) -> String {
    let kept = wright_text::tail(s, max, wright_text::Unit::Bytes);
    if kept.len() == s.len() {
        return s.to_string();
    }
    format!("[{} earlier bytes cut] …{kept}", s.len() - kept.len())
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use wright_events::MemorySink;
    use wright_sandbox::{ProcessRunner, WorkspaceLimits};

    pub struct Fixture {
        pub _dir: tempfile::TempDir,
        pub ctx: ToolContext,
        pub sink: Arc<MemorySink>,
    }

    pub fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path().join("ws"), WorkspaceLimits::default()).unwrap();
        let sink = Arc::new(MemorySink::new());
        let emitter = Emitter::new("test", vec![sink.clone()]);
        let exec = ExecConfig::for_build(&dir.path().join("home"), &dir.path().join("tmp")).unwrap();
        let ctx = ToolContext {
            workspace: ws,
            runner: Arc::new(ProcessRunner::default()),
            emitter,
            cancel: CancellationToken::new(),
            exec,
        };
        Fixture { _dir: dir, ctx, sink }
    }
}
