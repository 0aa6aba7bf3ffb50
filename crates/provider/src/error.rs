//! Provider failures, classified by what the caller should do about them.

use std::time::Duration;

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ProviderError {
    #[error("the provider rejected the credentials ({0}); check the API key")]
    Auth(String),
    #[error("rate limited by the provider{}: {message}", retry_after.map(|d| format!(" (retry after {}s)", d.as_secs_f32())).unwrap_or_default())]
    RateLimited { retry_after: Option<Duration>, message: String },
    #[error("could not reach the provider: {0}")]
    Unreachable(String),
    #[error("temporary provider failure: {0}")]
    Transient(String),
    #[error("the provider refused the request: {0}")]
    BadRequest(String),
    #[error("the conversation is longer than the model's context window: {0}")]
    ContextTooLong(String),
    #[error("the provider did not answer within {}s", .0.as_secs())]
    Timeout(Duration),
    /// A whole (non-streamed) answer did not arrive in time. Not retried: the server may still
    /// be generating the abandoned answer, and a retry would queue behind it.
    #[error("the provider did not finish its answer within {}s (it may still be working on it; use streaming or a longer --generation-timeout)", .0.as_secs())]
    GenerationTimeout(Duration),
    #[error("the provider sent a response wright could not read: {0}")]
    Protocol(String),
    #[error("cancelled")]
    Cancelled,
    #[error("provider not usable: {0}")]
    Config(String),
}

impl ProviderError {
    /// Whether trying the same request again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. } | Self::Unreachable(_) | Self::Transient(_) | Self::Timeout(_) | Self::Protocol(_)
        )
    }

    /// A short machine-friendly class name for logs and metrics.
    pub fn class(&self) -> &'static str {
        match self {
            Self::Auth(_) => "auth",
            Self::RateLimited { .. } => "rate_limited",
            Self::Unreachable(_) => "unreachable",
            Self::Transient(_) => "transient",
            Self::BadRequest(_) => "bad_request",
            Self::ContextTooLong(_) => "context_too_long",
            Self::Timeout(_) => "timeout",
            Self::GenerationTimeout(_) => "generation_timeout",
            Self::Protocol(_) => "protocol",
            Self::Cancelled => "cancelled",
            Self::Config(_) => "config",
        }
    }
}
