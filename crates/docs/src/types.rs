//! What the index's callers hand it and get back: the embedding seam, hits, statistics and
//! status, and the search modes. Every module of the crate may use these; they use none.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The seam to an embedding model (the engine adapts wright-local's e5 model to it).
pub trait Embed: Send + Sync {
    /// Shown in [`IndexStatus`]; vectors are recomputed when it changes.
    fn name(&self) -> &str;
    /// One unit-length vector per text (blocking, CPU-heavy: call from spawn_blocking).
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String>;
    /// [`Embed::embed`] for a search query someone waits for: a shared model serves it before
    /// indexing work. Blocking like `embed`.
    fn embed_query(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.embed(texts)
    }
}

/// One search result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Hit {
    /// Path relative to the folder, `/`-separated.
    pub source: String,
    /// Heading path, e.g. "Chat › Adding a tool"; empty for text before the first heading.
    pub heading: String,
    /// Anchor of the last heading: its explicit id, else its GitHub-style slug.
    pub anchor: Option<String>,
    /// The chunk text, at most about 700 characters, whitespace collapsed.
    pub snippet: String,
    /// Reciprocal-rank-fusion score: higher is better; only the order means something.
    pub score: f32,
}

/// What a [`DocsIndex::refresh`] changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RefreshStats {
    /// Files new or changed, whose chunks were (re)written.
    pub files_indexed: usize,
    /// Files gone from the folder (or no longer readable), dropped from the index.
    pub files_removed: usize,
    /// Chunks written for the indexed files.
    pub chunks: usize,
    /// Chunks that got a vector.
    pub embedded: usize,
    pub elapsed: Duration,
}

/// The state of an index, for a status page.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IndexStatus {
    pub files: usize,
    pub chunks: usize,
    /// Chunks with a vector from the current embedder (0 without one).
    pub embedded: usize,
    /// When the last refresh finished (RFC 3339, UTC), or `None` before the first.
    pub last_refresh: Option<String>,
    /// The embedder's name, or `None` for keyword search only.
    pub embedder: Option<String>,
}

/// Which rankings a search uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchMode {
    /// Keywords and meaning, fused (keywords alone without an embedder).
    #[default]
    Fused,
    /// FTS5 bm25 only.
    Keyword,
    /// Vectors only (nothing without an embedder).
    Meaning,
}
