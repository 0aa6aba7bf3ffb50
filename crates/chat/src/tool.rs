//! The contract every chat tool keeps (seed 001's `BaseTool`): it says how relevant it is to a
//! message, and when chosen it runs and returns a [`ToolResult`] with validated structured data.

use crate::relevance::Scorer;
use async_trait::async_trait;
use std::sync::Arc;
use wright_events::Lang;
use wright_events::chat::{ChatMessage, Outcome, Part};
use wright_provider::{Provider, RetryPolicy, Usage};
use wright_store::Store;

/// What a tool may read while it scores and runs: the user, the conversation so far, the model
/// and the store. Cheap to clone (every tool of a turn gets one).
#[derive(Clone)]
pub struct ChatContext {
    pub user: String,
    pub conversation: String,
    pub lang: Lang,
    /// The recent history, oldest first, without the message being answered.
    pub history: Arc<Vec<ChatMessage>>,
    pub provider: Arc<dyn Provider>,
    pub model: String,
    pub retry: RetryPolicy,
    pub store: Arc<dyn Store>,
    /// Relevance helpers shared by the built-in tools (patterns and the embedding model).
    pub scorer: Arc<Scorer>,
    /// The message's embedding, computed once per turn when an embedding model is loaded.
    pub embedding: Option<Arc<Vec<f32>>>,
    /// Tokens spent by the turn's model calls, tools included.
    pub usage: Arc<std::sync::Mutex<Usage>>,
    /// Stops the turn's model calls when the turn is cancelled.
    pub cancel: tokio_util::sync::CancellationToken,
}

impl ChatContext {
    pub fn add_usage(&self, u: Usage) {
        self.usage.lock().unwrap_or_else(std::sync::PoisonError::into_inner).add(u);
    }

    pub fn usage(&self) -> Usage {
        *self.usage.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The end of the conversation as plain text (at most `max_chars`, newest kept), so a tool
    /// can tell what "it" or "that" refers to.
    pub fn recent_text(&self, max_chars: usize) -> String {
        let mut lines: Vec<String> = Vec::new();
        let mut used = 0;
        for m in self.history.iter().rev().take(6) {
            let line = format!("{}: {}", m.role.as_str(), crate::transcript::as_text(m));
            let n = line.chars().count();
            if used + n > max_chars {
                break;
            }
            used += n;
            lines.push(line);
        }
        lines.reverse();
        lines.join("\n")
    }
}

/// What a tool produced: seed 001's `ToolResult`. `execution_order` and the outcome are set by
/// the agent, which also turns errors, panics and timeouts into failed results.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub tool: String,
    pub success: bool,
    pub outcome: Outcome,
    /// Plain words about the result, for the reply's prompt and for clients that show text.
    pub content: String,
    /// The validated data, as the message part it becomes.
    pub part: Option<Part>,
    /// `diagram`, `quiz`, `flashcards`, `videos`, `code`, `background_process` or `error`.
    pub message_type: String,
    pub metadata: serde_json::Value,
    pub error: Option<String>,
    pub execution_order: u32,
}

/// What a tool's `execute` returns when it worked.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: String,
    pub part: Part,
    /// Worked, with something to say (the model was re-asked, fewer items than asked…).
    pub warning: Option<String>,
}

/// Why a tool failed; shown to the user beside the tools that worked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    #[error("the model's answer was not usable: {0}")]
    Invalid(String),
    #[error("{0}")]
    Provider(String),
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Store(String),
}

/// A chat tool. Adding one is this impl plus one line in [`crate::builtin_tools`].
#[async_trait]
pub trait ChatTool: Send + Sync {
    /// A built-in's name is fixed; an MCP server's tool's (`mcp__<server>__<tool>`) is known
    /// once the server has listed it.
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// Words that bring the tool to mind, in English and Portuguese (shown in docs and used by
    /// the scorer).
    fn triggers(&self) -> &'static [&'static str];
    /// The patterns and example requests the shared [`Scorer`] judges this tool by (none: the
    /// tool scores itself entirely in [`ChatTool::can_handle`]).
    fn cues(&self) -> crate::relevance::Cues {
        crate::relevance::Cues::default()
    }
    /// How relevant the tool is to `message`, from 0 to 1. The agent runs tools at or above
    /// its threshold.
    fn can_handle(&self, message: &str, ctx: &ChatContext) -> f32;
    async fn execute(&self, message: &str, ctx: &ChatContext) -> Result<ToolOutput, ToolError>;
    /// The message part type it produces.
    fn message_type(&self) -> &'static str;
    /// A background tool never delays the reply; its result arrives as a `background_process`
    /// part and feeds the next turn.
    fn background(&self) -> bool {
        false
    }
    /// A key under which a result may be reused for the same message and context, for tools
    /// whose answer does not change between calls. `None`: never cached.
    fn cache_key(&self, _message: &str, _ctx: &ChatContext) -> Option<String> {
        None
    }
    /// Why the tool cannot run on this machine (no API key…), for `wright doctor`.
    fn unavailable(&self) -> Option<String> {
        None
    }
}
