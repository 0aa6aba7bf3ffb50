//! [`PreviewLog`] on PostgreSQL. Two servers may add to one build's preview log at once; the
//! one whose number was taken first tries again with the next.

use super::PgStore;
use crate::Result;
use crate::preview::{PREVIEW_PAGE, PreviewLog, event, payload};
use async_trait::async_trait;
use sqlx::Row;
use wright_events::{Event, EventKind};

/// Tries before a crowd of writers to one build's preview log is an error.
const TRIES: u32 = 8;

#[async_trait]
impl PreviewLog for PgStore {
    async fn add_preview_event(&self, build: &str, kind: &EventKind) -> Result<Event> {
        let ts = crate::now();
        let data = payload(kind)?;
        let mut tries = 0;
        loop {
            let r: std::result::Result<i64, sqlx::Error> = sqlx::query_scalar(
                "INSERT INTO preview_events (build_id, seq, ts, data) \
                 SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3 FROM preview_events WHERE build_id = $1 RETURNING seq",
            )
            .bind(build)
            .bind(&ts)
            .bind(&data)
            .fetch_one(&self.pool)
            .await;
            match r {
                Ok(seq) => {
                    let seq = wright_events::Seq(u64::try_from(seq).unwrap_or_default());
                    return Ok(Event { seq, build: build.to_string(), ts, kind: kind.clone() });
                }
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() && tries < TRIES => tries += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }

    async fn preview_events(&self, build: &str, after: u64) -> Result<Vec<Event>> {
        let rows = sqlx::query(
            "SELECT seq, ts, data FROM preview_events WHERE build_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        )
        .bind(build)
        .bind(i64::try_from(after).unwrap_or(i64::MAX))
        .bind(i64::from(PREVIEW_PAGE))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|r| event(build, r.try_get("seq")?, r.try_get("ts")?, r.try_get::<&str, _>("data")?)).collect()
    }
}
