//! The one trait every model adapter implements, and the stream it answers with. Below the
//! adapters, the retry loop and the scripted provider, which all build on it.

use crate::error::ProviderError;
use crate::types::{ChatRequest, Delta};
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
