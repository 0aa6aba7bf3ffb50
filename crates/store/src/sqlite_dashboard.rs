//! The admin dashboard's part of [`SqliteStore`]: builds per day and template, and the kinds
//! of problem verification found. Both read through the readers' pool.

use crate::Result;
use crate::sqlite::{SqliteStore, u};
use crate::types::{DayStats, ErrorKindCount};
use sqlx::Row;

impl SqliteStore {
    pub(crate) async fn days(&self, days: u32) -> Result<Vec<DayStats>> {
        // `started_at` is RFC 3339 UTC, so its first ten characters are the day.
        let since = format!("-{} days", days.max(1) - 1);
        let rows = sqlx::query(
            "SELECT substr(started_at, 1, 10) AS day, template, COUNT(*) AS n, SUM(status = 'published') AS ok, \
             SUM(status = 'published' AND fix_attempts = 0) AS first, SUM(input_tokens) AS input, \
             SUM(output_tokens) AS output, SUM(cost_usd) AS cost FROM builds \
             WHERE status IN ('published', 'failed') AND started_at >= date('now', ?) \
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

    pub(crate) async fn kinds(&self, limit: u32) -> Result<Vec<ErrorKindCount>> {
        let rows = sqlx::query(
            "SELECT json_extract(data, '$.kind') AS kind, COUNT(*) AS n FROM events \
             WHERE type = 'error_detected' GROUP BY kind ORDER BY n DESC, kind LIMIT ?",
        )
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
}
