//! wright's memory of what happened: builds, their events and conversations, generation
//! attempts, learning notes and model usage.
//!
//! Callers talk to the [`Store`] trait; [`SqliteStore`] is the embedded default (one file,
//! WAL, migrations applied on open). The trait speaks plain records ([`types`], [`note`]) so a
//! PostgreSQL store can follow without changing a caller. [`PersistSink`] writes every event
//! before the sinks after it see it, which is what lets a stream be resumed from the store.

pub mod note;
mod sink;
mod sqlite;
pub mod types;

pub use note::{Note, NoteStatus};
pub use sink::PersistSink;
pub use sqlite::SqliteStore;
pub use types::*;

use async_trait::async_trait;
use std::sync::Arc;
use wright_events::Event;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("database migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    #[error("stored data is damaged: {0}")]
    Corrupt(String),
    #[error("{0}")]
    Unsupported(String),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Which notes to list.
#[derive(Debug, Clone, Default)]
pub struct NoteFilter {
    pub status: Option<NoteStatus>,
    pub limit: Option<u32>,
}

/// A note found by retrieval and how many of the query's keys it matched.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteHit {
    pub note: Note,
    pub matched: u32,
}

/// Everything wright persists. Implementations must be safe to share between tasks.
#[async_trait]
pub trait Store: Send + Sync {
    // Builds.
    async fn create_build(&self, build: &NewBuild) -> Result<()>;
    async fn finish_build(&self, id: &str, finish: &BuildFinish) -> Result<()>;
    async fn build(&self, id: &str) -> Result<BuildRecord>;
    /// Newest first.
    async fn list_builds(&self, limit: u32) -> Result<Vec<BuildRecord>>;
    /// The one build whose id is `id` or starts with it (so people can type a prefix).
    async fn resolve_build(&self, id_or_prefix: &str) -> Result<BuildRecord>;

    // Events and conversation.
    async fn append_event(&self, event: &Event) -> Result<()>;
    /// Events of a build with `seq > after`, in order.
    async fn events(&self, build_id: &str, after: u64) -> Result<Vec<Event>>;
    async fn append_turn(&self, turn: &Turn) -> Result<()>;
    async fn turns(&self, build_id: &str) -> Result<Vec<Turn>>;

    // Attempts and usage.
    async fn record_attempt(&self, attempt: &Attempt) -> Result<()>;
    async fn attempts(&self, build_id: &str) -> Result<Vec<Attempt>>;
    async fn log_usage(&self, entry: &UsageEntry) -> Result<()>;
    async fn usage(&self, build_id: &str) -> Result<Vec<UsageEntry>>;

    // Notes.
    /// Insert a note, or replace the one with the same id (import, edit).
    async fn put_note(&self, note: &Note) -> Result<()>;
    async fn note(&self, id: &str) -> Result<Note>;
    /// The one note whose id is `id` or starts with it.
    async fn resolve_note(&self, id_or_prefix: &str) -> Result<Note>;
    /// Best confidence first.
    async fn list_notes(&self, filter: &NoteFilter) -> Result<Vec<Note>>;
    /// Non-deprecated notes carrying any of `keys` (see [`Note::keys`]), most matched keys
    /// first, then best score; at most `limit`.
    async fn find_notes(&self, keys: &[String], limit: u32) -> Result<Vec<NoteHit>>;
    /// Count one use of each note (`helped` when the build succeeded) and move it along its
    /// lifecycle, atomically per note. Returns the updated notes.
    async fn record_note_outcome(&self, ids: &[String], helped: bool) -> Result<Vec<Note>>;
    /// Remember that `build_id` had these notes in its prompt.
    async fn record_note_uses(&self, build_id: &str, ids: &[String], phase: &str) -> Result<()>;
    async fn note_uses(&self, build_id: &str) -> Result<Vec<String>>;

    /// Aggregates for `wright stats`.
    async fn stats(&self) -> Result<Stats>;
}

/// Open the store a URL names: `sqlite://PATH` (created if missing) or `sqlite::memory:`.
/// `postgres://` is recognised and refused with a clear message until that store exists.
pub async fn open(url: &str) -> Result<Arc<dyn Store>> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::open(url).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Err(StoreError::Unsupported(
            "PostgreSQL is not supported by this build of wright yet; use sqlite://PATH".into(),
        ))
    } else {
        Err(StoreError::Invalid(format!("unknown database URL `{url}`; use sqlite://PATH")))
    }
}

/// Now, as stored: the events' timestamp form, so rows and events sort together as text.
pub use wright_events::now;

/// A short random id with a prefix (`n-3fa2c1d09e4b`); 48 random bits.
pub fn new_id(prefix: &str) -> String {
    let u = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}-{}", &u[..12])
}
