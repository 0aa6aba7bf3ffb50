//! The admin dashboard's part of [`SqliteStore`]: builds per day and template, the kinds of
//! problem verification found (both read through the readers' pool), and an admin's edit of
//! a lesson.

use crate::note::{Note, NoteStatus};
use crate::rows::u;
use crate::sqlite::SqliteStore;
use crate::types::{DayStats, ErrorKindCount};
use crate::{Result, Store, StoreError};
use sqlx::Row;

impl SqliteStore {
    pub(crate) async fn days(&self, days: u32) -> Result<Vec<DayStats>> {
        // `started_at` is RFC 3339 UTC, so its first ten characters are the day.
        let since = format!("-{} days", days.max(1) - 1);
        let rows = sqlx::query(
            "SELECT substr(started_at, 1, 10) AS day, template, COUNT(*) AS n, SUM(status = 'published') AS ok, \
             SUM(status = 'published' AND fix_attempts = 0) AS first, SUM(input_tokens) AS input, \
             SUM(output_tokens) AS output, SUM(cost_usd) AS cost FROM builds \
             WHERE status IN ('published', 'failed') AND kind <> 'chat' AND started_at >= date('now', ?) \
             GROUP BY day, template ORDER BY day, template",
        )
        .bind(since)
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(DayStats {
                    day: r.try_get("day")?,
                    template: r.try_get("template")?,
                    builds: u(r.try_get("n")?),
                    published: u(r.try_get::<Option<i64>, _>("ok")?.unwrap_or(0)),
                    first_try: u(r.try_get::<Option<i64>, _>("first")?.unwrap_or(0)),
                    input_tokens: u(r.try_get::<Option<i64>, _>("input")?.unwrap_or(0)),
                    output_tokens: u(r.try_get::<Option<i64>, _>("output")?.unwrap_or(0)),
                    cost_usd: r.try_get::<Option<f64>, _>("cost")?.unwrap_or(0.0),
                })
            })
            .collect()
    }

    pub(crate) async fn kinds(&self, days: u32, limit: u32) -> Result<Vec<ErrorKindCount>> {
        let rows = sqlx::query(
            "SELECT json_extract(data, '$.kind') AS kind, COUNT(*) AS n FROM events \
             WHERE type = 'error_detected' AND ts >= date('now', ?) GROUP BY kind ORDER BY n DESC, kind LIMIT ?",
        )
        .bind(format!("-{} days", days.max(1) - 1))
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(ErrorKindCount {
                    kind: r.try_get::<Option<String>, _>("kind")?.unwrap_or_else(|| "unknown".into()),
                    count: u(r.try_get("n")?),
                })
            })
            .collect()
    }

    pub(crate) async fn note_edit(&self, id: &str, lesson: Option<&str>, status: Option<NoteStatus>) -> Result<Note> {
        if lesson.is_some_and(|l| l.trim().is_empty()) {
            return Err(StoreError::Invalid("a lesson cannot be empty".into()));
        }
        let done = sqlx::query(
            "UPDATE notes SET lesson = COALESCE(?, lesson), status = COALESCE(?, status), updated_at = ? WHERE id = ?",
        )
        .bind(lesson)
        .bind(status.map(NoteStatus::as_str))
        .bind(crate::now())
        .bind(id)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("note {id}")));
        }
        self.note(id).await
    }
}
