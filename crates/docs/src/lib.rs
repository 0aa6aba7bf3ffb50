//! A document search index for an in-app assistant: point it at a folder of Markdown and HTML,
//! ask it questions in English or Portuguese, get back the sections that answer them.
//!
//! ```no_run
//! # async fn demo(data_dir: &std::path::Path, embedder: std::sync::Arc<dyn wright_docs::Embed>)
//! # -> Result<(), wright_docs::DocsError> {
//! use std::{sync::Arc, time::Duration};
//! use wright_docs::DocsIndex;
//!
//! let index = Arc::new(
//!     DocsIndex::open(&data_dir.join("docs-index/helper.sqlite"), &data_dir.join("docs"), Some(embedder)).await?,
//! );
//! // Index now, then every 30 s, until the token is cancelled.
//! let stop = tokio_util::sync::CancellationToken::new();
//! let _watcher = index.clone().watch(Duration::from_secs(30), stop.clone());
//! for hit in index.search("como adiciono uma ferramenta?", 5).await? {
//!     println!("{}#{} ({}): {}", hit.source, hit.anchor.unwrap_or_default(), hit.heading, hit.snippet);
//! }
//! # Ok(()) }
//! ```
//!
//! # What is indexed
//!
//! Every `.md`, `.markdown`, `.html` and `.htm` file under the folder, at any depth, except in
//! hidden folders (`.git`). Files over 2 MB, files that are not UTF-8 and symbolic links to
//! outside the folder are skipped with a warning (once per file). Each document is split at its
//! headings (`#`…`######`, `<h1>`…`<h6>`) into sections that carry their heading path
//! ("Chat › Adding a tool") and the anchor of their last heading (an explicit id, else
//! GitHub's slug), so a hit links to the right place. Front matter, scripts, styles and
//! navigation menus are left out; code blocks stay in their section; sections longer than about
//! 1,000 characters are cut at paragraph or sentence boundaries with a little overlap; empty
//! sections are dropped.
//!
//! # How search works
//!
//! Two rankings are fused with Reciprocal Rank Fusion (k = 60):
//!
//! - **keywords**: SQLite FTS5 with bm25, headings weighted double, accents folded
//!   (`unicode61 remove_diacritics 2`, so "configuracao" finds "Configuração"). The question is
//!   turned into quoted terms joined by `OR`, with common English and Portuguese question words
//!   dropped and longer terms matched as prefixes; nothing a person types is read as FTS5 syntax,
//!   and a question of only punctuation finds nothing rather than failing.
//! - **meaning**: with an [`Embed`]der, every chunk gets a vector of "heading path: text", and
//!   the question's vector is compared with all of them (cosine, brute force: exact, and about a
//!   millisecond per 10,000 chunks). This finds "how do I plug in my own command?" in a section
//!   called "Adding a tool", and an English section from a Portuguese question.
//!
//! Without an embedder, or for chunks whose vectors are not computed yet (a refresh embeds after
//! it has stored the text), keywords alone answer.
//!
//! # Storage
//!
//! One SQLite file per index, passed by the caller (for example
//! `data_dir/docs-index/<name>.sqlite`). It is a cache derived from the folder: one written by
//! another version of this crate is emptied and rebuilt, one SQLite cannot read is moved aside
//! (`.damaged`) and rebuilt, and deleting it by hand is always safe. A database that is not a
//! docs index is refused and left untouched. A refresh reads only files whose size or modification
//! time changed, re-chunks only those whose SHA-256 changed, and removes the ones that are gone.
//! Vectors are kept as little-endian `f32` BLOBs and, for searching, in memory (1.5 KB per chunk
//! at 384 dimensions).
//!
//! # Cost
//!
//! Measured by `cargo bench -p wright-docs` (release, on a 2-core machine shared with other
//! work; synthetic Markdown, one chunk per section). "Model cost aside" uses a stand-in
//! embedder of the model's width (384) that costs nothing, to show what the index adds:
//!
//! | | 10,000 chunks | 50,000 chunks |
//! |---|---|---|
//! | index, keywords only | 10,100 chunks/s | 12,100 chunks/s |
//! | index with vectors, model cost aside | 7,200 chunks/s | 7,500 chunks/s |
//! | refresh with nothing changed | 40 ms | 105 ms |
//! | keyword search p50 / p99 | 2.4 / 9 ms | 11 / 34 ms |
//! | meaning search p50 / p99, model cost aside | 0.6 / 0.9 ms | 2.7 / 5.5 ms |
//! | fused search p50 / p99, model cost aside | 3 / 11 ms | 14 / 36 ms |
//! | first meaning search (loads the vectors) | 31 ms | 360 ms |
//!
//! The model is the slow part. wright-local's e5 embedded 500 chunks of real English and
//! Portuguese text at 8.7 chunks/s (11.8 pinned to one core), so a 10,000-chunk folder takes
//! 15 to 20 minutes the first time. Keyword search works meanwhile, and later refreshes embed
//! only new chunks. A search embeds its question in 6 to 9 ms (p50), and waits 100 to 130 ms
//! (p50; p99 about 210 ms) when a refresh is using the model.

mod chunk;
mod db;
mod error;
mod fts;
mod fuse;
mod html;
mod index;
mod markdown;
mod reader;
mod scan;
mod types;
mod vector;

#[cfg(test)]
mod props;

pub use error::DocsError;
pub use index::{DocsIndex, MAX_TOP_N};
pub use scan::MAX_FILE_BYTES;
pub use types::{Embed, Hit, IndexStatus, RefreshStats, SearchMode};
