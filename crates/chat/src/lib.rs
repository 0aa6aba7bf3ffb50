//! wright's chat agent (seed 001's agent system, in Rust).
//!
//! Every [`ChatTool`] scores its own relevance to a message ([`ChatTool::can_handle`]); the
//! [`ChatAgent`] runs the ones at or above its threshold (0.7), at most five, best first and in
//! parallel, each under a timeout, so one tool's failure or panic never stops the others.
//! Background tools ([`ChatTool::background`]) never delay the reply. The reply's shape follows
//! from how many tools worked ([`reply::ReplyForm`]), and the message is stored with typed parts
//! (diagram, quiz, flashcards, videos, code…). [`turn::run_turn`] is one chat turn end to end;
//! the engine runs it as a run of kind `chat`, so its events are stored before anyone sees them.

pub mod agent;
pub mod assistant;
pub mod model;
pub mod relevance;
pub mod reply;
pub mod tool;
pub mod tools;
mod transcript;
pub mod turn;

pub use agent::{AgentSettings, ChatAgent, Chosen, Selection};
pub use relevance::{Cues, Embedder, Scorer};
pub use tool::{ChatContext, ChatTool, ToolError, ToolOutput, ToolResult};
pub use turn::{Background, BackgroundOutcome, Turn, TurnDeps, TurnOutcome, run_turn};

use std::sync::Arc;
use tools::video::VideoSettings;

/// The built-in tools, in registration order (which breaks ties between equal scores).
pub fn builtin_tools(video: VideoSettings) -> Vec<Arc<dyn ChatTool>> {
    vec![
        Arc::new(tools::diagram::Diagram),
        Arc::new(tools::quiz::QuizTool),
        Arc::new(tools::flashcards::Flashcards),
        Arc::new(tools::flashcards::FlashcardUpdate),
        Arc::new(tools::video::VideoSearch::new(video)),
        Arc::new(tools::code::Code),
    ]
}

/// The scorer for `tools`' cues, with the embedding model when one is loaded.
pub fn scorer_for(
    tools: &[Arc<dyn ChatTool>],
    embedder: Option<Arc<dyn Embedder>>,
) -> Result<Scorer, relevance::CueError> {
    Scorer::new(tools.iter().map(|t| (t.name(), t.cues())).collect(), embedder)
}
