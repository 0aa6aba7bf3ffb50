//! Errors of the embedding model: fetching, converting, loading and running it.

use crate::e5s1::E5s1Error;
use crate::pull::PullError;

#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error(transparent)]
    Pull(#[from] PullError),
    #[error("the embedding model in the package is damaged: {0}")]
    Format(#[from] E5s1Error),
    #[error("{op} {path}: {source}")]
    Io { op: &'static str, path: String, source: std::io::Error },
    /// llama.cpp refused the model or failed while running it.
    #[error("the embedding model: {0}")]
    Model(String),
    #[error("the embedding model's thread has stopped")]
    Stopped,
}
