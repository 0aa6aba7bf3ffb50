//! The engine's error, and how it reads the environment: below every other module of the
//! crate, which all return it.

/// Why wright could not be set up. The CLI maps these to its exit codes; the server to HTTP.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    /// A setting, name or path the user gave is wrong (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// The AI provider cannot be used: missing key, unreachable, model not loadable (exit code 3).
    #[error("{0}")]
    Provider(String),
}

impl EngineError {
    /// The CLI's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => 2,
            Self::Provider(_) => 3,
        }
    }
}

/// The process environment, read when asked (never cached): what [`providers::Wire`] uses by default.
pub fn env_var(k: &str) -> Option<String> {
    std::env::var(k).ok()
}
