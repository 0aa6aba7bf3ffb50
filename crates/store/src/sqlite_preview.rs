//! [`PreviewLog`] on SQLite: one statement numbers and inserts (SQLite has one writer).

use crate::preview::{PREVIEW_PAGE, PreviewLog, event, payload};
use crate::{Result, SqliteStore};
use async_trait::async_trait;
use sqlx::Row;
use wright_events::{Event, EventKind};

#[async_trait]
impl PreviewLog for SqliteStore {
    async fn add_preview_event(&self, build: &str, kind: &EventKind) -> Result<Event> {
        let ts = crate::now();
        let seq: i64 = sqlx::query_scalar(
            "INSERT INTO preview_events (build_id, seq, ts, data) \
             SELECT ?1, COALESCE(MAX(seq), 0) + 1, ?2, ?3 FROM preview_events WHERE build_id = ?1 RETURNING seq",
        )
        .bind(build)
        .bind(&ts)
        .bind(payload(kind)?)
        .fetch_one(&self.pool)
        .await?;
        Ok(Event {
            seq: wright_events::Seq(u64::try_from(seq).unwrap_or_default()),
            build: build.to_string(),
            ts,
            kind: kind.clone(),
        })
    }

    async fn preview_events(&self, build: &str, after: u64) -> Result<Vec<Event>> {
        let rows =
            sqlx::query("SELECT seq, ts, data FROM preview_events WHERE build_id = ? AND seq > ? ORDER BY seq LIMIT ?")
                .bind(build)
                .bind(i64::try_from(after).unwrap_or(i64::MAX))
                .bind(PREVIEW_PAGE)
                .fetch_all(&self.read)
                .await?;
        rows.iter().map(|r| event(build, r.try_get("seq")?, r.try_get("ts")?, r.try_get::<&str, _>("data")?)).collect()
    }
}
