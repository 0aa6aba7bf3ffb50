//! LLM providers behind one streaming-first trait.
//!
//! A [`Provider`] turns a [`ChatRequest`] into a stream of [`Delta`]s; a whole answer is derived
//! from that stream by [`ResponseAssembler`] (see [`complete`]), so every adapter implements one
//! code path and streaming is never an afterthought. [`complete`] also owns the retry policy,
//! because retrying is the same decision whatever the wire.

pub mod anthropic;
mod assemble;
pub mod compact;
mod error;
pub mod fallback;
pub mod gemini;
mod http;
pub mod local_server;
pub mod openai;
mod retry;
pub mod scripted;
mod types;

pub use assemble::ResponseAssembler;
pub use error::ProviderError;
pub use retry::{RetryPolicy, complete};
pub use types::*;

use futures::stream::BoxStream;

/// The stream of increments one model call produces.
pub type DeltaStream = BoxStream<'static, Result<Delta, ProviderError>>;

/// A chat model reachable over some wire (or in process).
pub trait Provider: Send + Sync {
    /// Short name for logs and events: `openai`, `anthropic`, `scripted`…
    fn name(&self) -> &str;
    /// Start one model call. Errors before the first increment arrive as the stream's first item,
    /// which lets callers retry a call that produced nothing without special cases.
    fn stream(&self, request: ChatRequest) -> DeltaStream;
    /// The caller spent its retries on whoever answers calls now. A chain moves later calls to
    /// its next provider and returns `true`; a single provider has nothing to move to.
    fn fail_over(&self) -> bool {
        false
    }
}
