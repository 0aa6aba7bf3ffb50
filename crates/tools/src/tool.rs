//! The one trait every tool implements, what a call gets to work with, and what it returns.

use crate::exec_config::ExecConfig;
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
    /// The name the model calls it by: a built-in's is fixed, an MCP server's tool's
    /// (`mcp__<server>__<tool>`) is known once the server has said what it offers.
    fn name(&self) -> &str;
    fn description(&self) -> &str;
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
