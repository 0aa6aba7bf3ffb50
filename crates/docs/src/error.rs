//! What can go wrong, each saying what to do about it.

use std::path::PathBuf;

/// An error from the docs index.
#[derive(Debug, thiserror::Error)]
pub enum DocsError {
    /// The index file cannot be opened or created.
    #[error(
        "cannot open the docs index {path}: {source}. Check that its folder is writable; the index is only a \
         cache, so deleting the file is safe (it is rebuilt from the documents)"
    )]
    Open { path: PathBuf, source: sqlx::Error },
    /// The index path names a database that is not a docs index.
    #[error(
        "{path} is a database of something else, not a docs index; it was left untouched. Give the docs index a \
         file of its own, such as data_dir/docs-index/<name>.sqlite"
    )]
    NotAnIndex { path: PathBuf },
    /// A read or write of the index failed.
    #[error(
        "the docs index {path} failed: {source}. Try again; if it keeps failing, delete the file (it is rebuilt \
         from the documents)"
    )]
    Database { path: PathBuf, source: sqlx::Error },
    /// The documents folder is not there.
    #[error(
        "the docs folder {path} does not exist or is not a folder: create it, or point the assistant at the \
         folder that holds its documents"
    )]
    SourceMissing { path: PathBuf },
    /// The embedding model failed; keyword search is unaffected.
    #[error(
        "the embedding model {model} failed: {message}. Keyword search still works; vectors for the remaining \
         chunks are computed at the next refresh"
    )]
    Embed { model: String, message: String },
    /// A background task died (a panic in a reader or the embedder).
    #[error("a docs indexing task stopped unexpectedly ({0}); try again, and report it if it happens again")]
    Task(String),
}
