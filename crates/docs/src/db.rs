//! The index file: documents, chunks, their vectors and an FTS5 table over the chunks.
//!
//! Everything here is derived from the documents, so the schema is not migrated: an index made
//! by another schema version is emptied and built again, and one SQLite cannot read is moved
//! aside and replaced.

use crate::chunk::Chunk;
use crate::error::DocsError;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Bump when the tables or the chunking change: older files are then rebuilt.
const SCHEMA_VERSION: i64 = 1;
/// Marks a file as a docs index, so a schema change never empties someone else's database.
const FORMAT: &str = "wright-docs-index";

const SCHEMA: &[&str] = &[
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        checked_ns INTEGER NOT NULL)",
    "CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        ord INTEGER NOT NULL,
        heading TEXT NOT NULL,
        anchor TEXT,
        body TEXT NOT NULL,
        embedding BLOB)",
    "CREATE INDEX chunks_file ON chunks(file_id)",
    "CREATE INDEX chunks_unembedded ON chunks(id) WHERE embedding IS NULL",
    // Accents folded so "configuracao" finds "Configuração"; the text lives in `chunks` only.
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(heading, body, content='chunks', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2')",
    // Chunks are inserted and deleted, never edited (only `embedding` is updated), so these
    // two triggers keep the FTS table in step.
    "CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts(rowid, heading, body) VALUES (new.id, new.heading, new.body); END",
    "CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, heading, body) VALUES ('delete', old.id, old.heading, old.body); END",
];

/// A stored document's identity, for deciding whether to read it again.
pub(crate) struct FileRow {
    pub id: i64,
    pub hash: String,
    pub size: i64,
    pub mtime_ns: i64,
    pub checked_ns: i64,
}

/// A stored chunk, as a hit shows it.
pub(crate) struct ChunkRow {
    pub id: i64,
    pub source: String,
    pub heading: String,
    pub anchor: Option<String>,
    pub body: String,
}

/// The open index file.
#[derive(Clone)]
pub(crate) struct Db {
    pub pool: SqlitePool,
    pub path: PathBuf,
}

impl Db {
    /// Opens `path`, creating it and its folder. A docs index of another schema version is
    /// emptied (the next refresh fills it); a file SQLite cannot read is moved aside to
    /// `<path>.damaged` and replaced. A database that is not a docs index is left alone.
    pub(crate) async fn open(path: &Path) -> Result<Self, DocsError> {
        let open_err = |source| DocsError::Open { path: path.to_path_buf(), source };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| open_err(sqlx::Error::Io(e)))?;
        }
        let opened = match Self::try_open(path).await {
            Err(e) if is_damaged(&e) => {
                tracing::warn!(path = %path.display(), error = %e, "the docs index is unreadable; moving it aside and rebuilding it");
                for suffix in ["", "-wal", "-shm"] {
                    let with = |extra: &str| {
                        let mut p = path.as_os_str().to_owned();
                        p.push(suffix);
                        p.push(extra);
                        PathBuf::from(p)
                    };
                    // Moved, not deleted: a wrong path must never cost someone a file.
                    let _ = std::fs::rename(with(""), with(".damaged"));
                }
                Self::try_open(path).await
            }
            other => other,
        };
        opened.map_err(open_err)?.ok_or_else(|| DocsError::NotAnIndex { path: path.to_path_buf() })
    }

    /// `None` when the file is a database of something else.
    async fn try_open(path: &Path) -> Result<Option<Self>, sqlx::Error> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        // One writer (refresh) and a few readers (searches) at once, thanks to WAL.
        let pool = SqlitePoolOptions::new().max_connections(4).connect_with(options).await?;
        let version: i64 = sqlx::query_scalar("PRAGMA user_version").fetch_one(&pool).await?;
        if version != SCHEMA_VERSION {
            let mut tx = pool.begin().await?;
            let old: Vec<(String, String)> = sqlx::query_as(
                "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger') AND name NOT LIKE 'sqlite_%'
                 AND name NOT LIKE 'chunks_fts_%'",
            )
            .fetch_all(&mut *tx)
            .await?;
            if !old.is_empty() && !Self::is_ours(&mut tx).await? {
                drop(tx);
                pool.close().await;
                return Ok(None);
            }
            for (kind, name) in old {
                let kind = if kind == "trigger" { "TRIGGER" } else { "TABLE" };
                sqlx::query(&format!("DROP {kind} IF EXISTS \"{}\"", name.replace('"', "\"\"")))
                    .execute(&mut *tx)
                    .await?;
            }
            for statement in SCHEMA {
                sqlx::query(statement).execute(&mut *tx).await?;
            }
            sqlx::query("INSERT INTO meta(key, value) VALUES ('format', ?)").bind(FORMAT).execute(&mut *tx).await?;
            sqlx::query(&format!("PRAGMA user_version = {SCHEMA_VERSION}")).execute(&mut *tx).await?;
            tx.commit().await?;
        }
        Ok(Some(Self { pool, path: path.to_path_buf() }))
    }

    /// Whether a database with tables was made by this crate (any version).
    async fn is_ours(tx: &mut sqlx::SqliteConnection) -> Result<bool, sqlx::Error> {
        let has_meta: i64 =
            sqlx::query_scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
                .fetch_one(&mut *tx)
                .await?;
        if has_meta == 0 {
            return Ok(false);
        }
        let format: Option<String> = sqlx::query_scalar("SELECT value FROM meta WHERE key = 'format'")
            .fetch_optional(&mut *tx)
            .await
            .unwrap_or(None);
        Ok(format.as_deref() == Some(FORMAT))
    }

    /// Wraps an SQL error with the file it concerns.
    pub(crate) fn err(&self) -> impl Fn(sqlx::Error) -> DocsError + '_ {
        |source| DocsError::Database { path: self.path.clone(), source }
    }

    pub(crate) async fn meta(&self, key: &str) -> Result<Option<String>, DocsError> {
        sqlx::query_scalar("SELECT value FROM meta WHERE key = ?")
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.err())
    }

    pub(crate) async fn set_meta(&self, key: &str, value: &str) -> Result<(), DocsError> {
        sqlx::query("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
            .bind(key)
            .bind(value)
            .execute(&self.pool)
            .await
            .map_err(self.err())?;
        Ok(())
    }

    /// Every stored document by path.
    pub(crate) async fn files(&self) -> Result<std::collections::HashMap<String, FileRow>, DocsError> {
        let rows = sqlx::query("SELECT id, path, hash, size, mtime_ns, checked_ns FROM files")
            .fetch_all(&self.pool)
            .await
            .map_err(self.err())?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.try_get("path")?,
                    FileRow {
                        id: r.try_get("id")?,
                        hash: r.try_get("hash")?,
                        size: r.try_get("size")?,
                        mtime_ns: r.try_get("mtime_ns")?,
                        checked_ns: r.try_get("checked_ns")?,
                    },
                ))
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(self.err())
    }

    /// Drops the documents with these ids and their chunks.
    pub(crate) async fn remove_files(&self, ids: &[i64]) -> Result<(), DocsError> {
        let mut tx = self.pool.begin().await.map_err(self.err())?;
        for id in ids {
            // Chunks first and explicitly, so the FTS trigger sees each one go.
            sqlx::query("DELETE FROM chunks WHERE file_id = ?").bind(id).execute(&mut *tx).await.map_err(self.err())?;
            sqlx::query("DELETE FROM files WHERE id = ?").bind(id).execute(&mut *tx).await.map_err(self.err())?;
        }
        tx.commit().await.map_err(self.err())
    }

    /// Stores what a refresh learnt about some documents, in one transaction.
    pub(crate) async fn apply(&self, updates: Vec<FileUpdate>) -> Result<(), DocsError> {
        let mut tx = self.pool.begin().await.map_err(self.err())?;
        for u in updates {
            let Some(chunks) = u.chunks else {
                // Same content (the file was touched): remember the new time and size.
                sqlx::query("UPDATE files SET size = ?, mtime_ns = ?, checked_ns = ? WHERE path = ?")
                    .bind(u.size)
                    .bind(u.mtime_ns)
                    .bind(u.checked_ns)
                    .bind(&u.path)
                    .execute(&mut *tx)
                    .await
                    .map_err(self.err())?;
                continue;
            };
            sqlx::query("DELETE FROM chunks WHERE file_id = (SELECT id FROM files WHERE path = ?)")
                .bind(&u.path)
                .execute(&mut *tx)
                .await
                .map_err(self.err())?;
            let file_id: i64 = sqlx::query_scalar(
                "INSERT INTO files(path, hash, size, mtime_ns, checked_ns) VALUES (?, ?, ?, ?, ?)
                 ON CONFLICT(path) DO UPDATE SET hash = excluded.hash, size = excluded.size,
                    mtime_ns = excluded.mtime_ns, checked_ns = excluded.checked_ns
                 RETURNING id",
            )
            .bind(&u.path)
            .bind(&u.hash)
            .bind(u.size)
            .bind(u.mtime_ns)
            .bind(u.checked_ns)
            .fetch_one(&mut *tx)
            .await
            .map_err(self.err())?;
            for (ord, c) in chunks.iter().enumerate() {
                sqlx::query("INSERT INTO chunks(file_id, ord, heading, anchor, body) VALUES (?, ?, ?, ?, ?)")
                    .bind(file_id)
                    .bind(ord as i64)
                    .bind(&c.heading)
                    .bind(&c.anchor)
                    .bind(&c.text)
                    .execute(&mut *tx)
                    .await
                    .map_err(self.err())?;
            }
        }
        tx.commit().await.map_err(self.err())
    }

    /// Up to `limit` chunks that have no vector yet: `(id, heading, body)`.
    pub(crate) async fn unembedded(&self, limit: usize) -> Result<Vec<(i64, String, String)>, DocsError> {
        sqlx::query_as("SELECT id, heading, body FROM chunks WHERE embedding IS NULL ORDER BY id LIMIT ?")
            .bind(limit as i64)
            .fetch_all(&self.pool)
            .await
            .map_err(self.err())
    }

    pub(crate) async fn store_vectors(&self, vectors: &[(i64, Vec<u8>)]) -> Result<(), DocsError> {
        let mut tx = self.pool.begin().await.map_err(self.err())?;
        for (id, blob) in vectors {
            sqlx::query("UPDATE chunks SET embedding = ? WHERE id = ?")
                .bind(blob)
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(self.err())?;
        }
        tx.commit().await.map_err(self.err())
    }

    pub(crate) async fn clear_vectors(&self) -> Result<(), DocsError> {
        sqlx::query("UPDATE chunks SET embedding = NULL WHERE embedding IS NOT NULL")
            .execute(&self.pool)
            .await
            .map_err(self.err())?;
        Ok(())
    }

    /// Every stored vector.
    pub(crate) async fn vectors(&self) -> Result<Vec<(i64, Vec<u8>)>, DocsError> {
        sqlx::query_as("SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL")
            .fetch_all(&self.pool)
            .await
            .map_err(self.err())
    }

    /// The ids of the `limit` chunks that best match an FTS5 expression, best first. A heading
    /// match weighs twice a body match.
    pub(crate) async fn keyword(&self, fts: &str, limit: usize) -> Result<Vec<i64>, DocsError> {
        sqlx::query_scalar(
            "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, 2.0, 1.0), rowid LIMIT ?",
        )
        .bind(fts)
        .bind(limit as i64)
        .fetch_all(&self.pool)
        .await
        .map_err(self.err())
    }

    /// The chunks with these ids (in no particular order).
    pub(crate) async fn chunks(&self, ids: &[i64]) -> Result<Vec<ChunkRow>, DocsError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; ids.len()].join(", ");
        let sql = format!(
            "SELECT c.id, f.path, c.heading, c.anchor, c.body FROM chunks c JOIN files f ON f.id = c.file_id
             WHERE c.id IN ({marks})"
        );
        let mut q = sqlx::query(&sql);
        for id in ids {
            q = q.bind(id);
        }
        let rows = q.fetch_all(&self.pool).await.map_err(self.err())?;
        rows.iter()
            .map(|r| {
                Ok(ChunkRow {
                    id: r.try_get(0)?,
                    source: r.try_get(1)?,
                    heading: r.try_get(2)?,
                    anchor: r.try_get(3)?,
                    body: r.try_get(4)?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(self.err())
    }

    /// `(files, chunks, chunks with a vector)`.
    pub(crate) async fn counts(&self) -> Result<(i64, i64, i64), DocsError> {
        sqlx::query_as(
            "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM chunks),
                    (SELECT count(*) FROM chunks WHERE embedding IS NOT NULL)",
        )
        .fetch_one(&self.pool)
        .await
        .map_err(self.err())
    }
}

/// What a refresh found about one document.
pub(crate) struct FileUpdate {
    pub path: String,
    pub hash: String,
    pub size: i64,
    pub mtime_ns: i64,
    pub checked_ns: i64,
    /// The new chunks, or `None` when the content is unchanged.
    pub chunks: Option<Vec<Chunk>>,
}

/// Whether SQLite says the file is not a database or is corrupt (primary codes 26 and 11).
fn is_damaged(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(d) => {
            d.code().and_then(|c| c.parse::<i32>().ok()).is_some_and(|c| matches!(c & 0xff, 11 | 26))
        }
        _ => false,
    }
}
