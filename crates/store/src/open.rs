//! A store from its URL: the embedded SQLite file or the shared PostgreSQL database.

use crate::{PgStore, Result, SqliteStore, Store, StoreError};
use std::sync::Arc;

/// Open the store a URL names: `sqlite://PATH` (created if missing), `sqlite::memory:`, or
/// `postgres://user[:password]@host[:port]/database` (the shared store; migrated on open).
pub async fn open(url: &str) -> Result<Arc<dyn Store>> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::open(url).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PgStore::open(url).await?))
    } else {
        Err(StoreError::Invalid(format!(
            "unknown database URL `{url}`; use sqlite://PATH or postgres://user@host/database"
        )))
    }
}
