//! Notes, their retrieval keys and uses, and the statistics (`wright stats`, the admin
//! dashboard) of [`PgStore`]: the SQLite store's queries in PostgreSQL's words.

use super::PgStore;
use crate::note::{Note, NoteStatus};
use crate::rows::{json, like_prefix, n, n_or_0, note_row, percentile, tokens};
use crate::types::{DayStats, ErrorKindCount, Stats, TemplateStats};
use crate::{NoteFilter, NoteHit, Result, StoreError};
use sqlx::{PgConnection, Row};

/// Retrieval looks at no more than this many keys (as on SQLite).
const MAX_KEYS: usize = 256;

/// Retrieval reads at most this many notes per key, best ranked first (as on SQLite).
const PER_KEY: i64 = 128;

/// Days back as PostgreSQL's `date - integer` takes them, kept within its calendar.
fn days_back(days: u32) -> i32 {
    i32::try_from(days.max(1) - 1).unwrap_or(i32::MAX).min(700_000)
}

/// The first day of the last `$n` days as `YYYY-MM-DD` (UTC, the database's clock): SQLite's
/// `date('now', '-N days')`.
fn since_day(param: &str) -> String {
    format!("to_char((clock_timestamp() AT TIME ZONE 'UTC')::date - {param}::integer, 'YYYY-MM-DD')")
}

/// Insert or replace a note and rewrite its keys, in the caller's transaction.
async fn write_note(tx: &mut PgConnection, note: &Note) -> Result<()> {
    sqlx::query(
        "INSERT INTO notes (id, trigger, trigger_type, lesson, libraries, error_patterns, tags, help_count, \
         fail_count, confidence, status, source_build, source_error, source_fix, created_at, updated_at) \
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16) \
         ON CONFLICT (id) DO UPDATE SET trigger=excluded.trigger, trigger_type=excluded.trigger_type, \
         lesson=excluded.lesson, libraries=excluded.libraries, error_patterns=excluded.error_patterns, \
         tags=excluded.tags, help_count=excluded.help_count, fail_count=excluded.fail_count, \
         confidence=excluded.confidence, status=excluded.status, source_build=excluded.source_build, \
         source_error=excluded.source_error, source_fix=excluded.source_fix, updated_at=excluded.updated_at",
    )
    .bind(&note.id)
    .bind(&note.trigger)
    .bind(&note.trigger_type)
    .bind(&note.lesson)
    .bind(json(&note.libraries)?)
    .bind(json(&note.error_patterns)?)
    .bind(json(&note.tags)?)
    .bind(i64::from(note.help_count))
    .bind(i64::from(note.fail_count))
    .bind(note.confidence)
    .bind(note.status.as_str())
    .bind(&note.source_build)
    .bind(&note.source_error)
    .bind(&note.source_fix)
    .bind(&note.created_at)
    .bind(&note.updated_at)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM note_keys WHERE note_id = $1").bind(&note.id).execute(&mut *tx).await?;
    if note.status == NoteStatus::Deprecated {
        return Ok(());
    }
    let keys: Vec<String> = note.keys();
    if keys.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO note_keys (key, note_id, rank) SELECT k, $2, $3 FROM unnest($1::text[]) AS k \
         ON CONFLICT DO NOTHING",
    )
    .bind(&keys)
    .bind(&note.id)
    .bind(note.confidence)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

impl PgStore {
    pub(crate) async fn notes_put(&self, note: &Note) -> Result<()> {
        if note.id.trim().is_empty() || note.lesson.trim().is_empty() || note.trigger.trim().is_empty() {
            return Err(StoreError::Invalid("a note needs an id, a trigger and a lesson".into()));
        }
        let mut tx = self.pool.begin().await?;
        write_note(&mut tx, note).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn notes_get(&self, id: &str) -> Result<Note> {
        let row = sqlx::query("SELECT * FROM notes WHERE id = $1").bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(note_row).transpose()?.ok_or_else(|| StoreError::NotFound(format!("note {id}")))
    }

    pub(crate) async fn notes_resolve(&self, id: &str) -> Result<Note> {
        if let Ok(n) = self.notes_get(id).await {
            return Ok(n);
        }
        // ILIKE: SQLite's LIKE ignores the case of ASCII letters.
        let rows = sqlx::query("SELECT * FROM notes WHERE id ILIKE $1 ESCAPE '\\' LIMIT 2")
            .bind(like_prefix(id))
            .fetch_all(&self.pool)
            .await?;
        match rows.len() {
            1 => note_row(&rows[0]),
            0 => Err(StoreError::NotFound(format!("note {id}"))),
            _ => Err(StoreError::Invalid(format!("`{id}` matches more than one note; type more of its id"))),
        }
    }

    pub(crate) async fn notes_edit(&self, id: &str, lesson: Option<&str>, status: Option<NoteStatus>) -> Result<Note> {
        if lesson.is_some_and(|l| l.trim().is_empty()) {
            return Err(StoreError::Invalid("a lesson cannot be empty".into()));
        }
        let done = sqlx::query(
            "UPDATE notes SET lesson = COALESCE($1, lesson), status = COALESCE($2, status), updated_at = $3 \
             WHERE id = $4",
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
        self.notes_get(id).await
    }

    pub(crate) async fn notes_list(&self, filter: &NoteFilter) -> Result<Vec<Note>> {
        let limit = i64::from(filter.limit.unwrap_or(u32::MAX));
        let rows = match filter.status {
            Some(s) => {
                sqlx::query(
                    "SELECT * FROM notes WHERE status = $1 \
                     ORDER BY confidence DESC, help_count DESC, id COLLATE \"C\" LIMIT $2",
                )
                .bind(s.as_str())
                .bind(limit)
                .fetch_all(&self.pool)
                .await?
            }
            None => {
                sqlx::query("SELECT * FROM notes ORDER BY confidence DESC, help_count DESC, id COLLATE \"C\" LIMIT $1")
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        rows.iter().map(note_row).collect()
    }

    pub(crate) async fn notes_find(&self, keys: &[String], limit: u32) -> Result<Vec<NoteHit>> {
        let keys = &keys[..keys.len().min(MAX_KEYS)];
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        // Each key (a repeated key counts again, as on SQLite) reads its best ranked notes from
        // the index; only the winners are read from `notes`.
        let rows = sqlx::query(
            "WITH k AS (SELECT t.note_id, t.rank FROM unnest($1::text[]) AS q(key) CROSS JOIN LATERAL \
                   (SELECT note_id, rank FROM note_keys WHERE note_keys.key = q.key \
                    ORDER BY rank DESC, note_id LIMIT $2) AS t), \
             h AS (SELECT note_id, COUNT(*) AS hits, MAX(rank) AS rank FROM k GROUP BY note_id \
                   ORDER BY hits DESC, rank DESC, note_id COLLATE \"C\" LIMIT $3) \
             SELECT n.*, h.hits FROM h JOIN notes n ON n.id = h.note_id WHERE n.status <> 'DEPRECATED' \
             ORDER BY h.hits DESC, h.rank DESC, n.id COLLATE \"C\"",
        )
        .bind(keys)
        .bind(PER_KEY)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|r| Ok(NoteHit { note: note_row(r)?, matched: n(r, "hits")? as u32 })).collect()
    }

    pub(crate) async fn notes_outcome(&self, ids: &[String], helped: bool) -> Result<Vec<Note>> {
        let mut tx = self.pool.begin().await?;
        let mut out = Vec::new();
        for id in ids {
            // Locked: two outcomes of one note (from any process) count one after the other.
            let Some(row) =
                sqlx::query("SELECT * FROM notes WHERE id = $1 FOR UPDATE").bind(id).fetch_optional(&mut *tx).await?
            else {
                continue;
            };
            let mut note = note_row(&row)?;
            note.record(helped);
            note.updated_at = crate::now();
            // Writing the note also re-ranks its keys (or drops them once it is deprecated).
            write_note(&mut tx, &note).await?;
            out.push(note);
        }
        tx.commit().await?;
        Ok(out)
    }

    pub(crate) async fn notes_record_uses(&self, build_id: &str, ids: &[String], phase: &str) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        sqlx::query(
            "INSERT INTO note_uses (build_id, note_id, phase, ts) SELECT $1, id, $3, $4 FROM unnest($2::text[]) AS id \
             ON CONFLICT DO NOTHING",
        )
        .bind(build_id)
        .bind(ids)
        .bind(phase)
        .bind(crate::now())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(crate) async fn notes_uses(&self, build_id: &str) -> Result<Vec<String>> {
        let rows = sqlx::query("SELECT note_id FROM note_uses WHERE build_id = $1 ORDER BY ts, note_id COLLATE \"C\"")
            .bind(build_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| Ok(r.try_get("note_id")?)).collect()
    }

    pub(crate) async fn stats_all(&self) -> Result<Stats> {
        let mut s = Stats::default();
        // Success figures are about builds: a chat turn is neither published nor fixed.
        let finished = "status IN ('published', 'failed') AND kind <> 'chat'";
        let rows = sqlx::query(&format!(
            "SELECT template, COUNT(*) AS n, COUNT(*) FILTER (WHERE status = 'published') AS ok, \
             COUNT(*) FILTER (WHERE status = 'published' AND fix_attempts = 0) AS first FROM builds \
             WHERE {finished} GROUP BY template ORDER BY template COLLATE \"C\""
        ))
        .fetch_all(&self.pool)
        .await?;
        for r in &rows {
            let t = TemplateStats {
                template: r.try_get("template")?,
                builds: n(r, "n")?,
                published: n_or_0(r, "ok")?,
                first_try: n_or_0(r, "first")?,
            };
            s.builds += t.builds;
            s.published += t.published;
            s.first_try += t.first_try;
            s.per_template.push(t);
        }
        let rows = sqlx::query(&format!(
            "SELECT fix_attempts, COUNT(*) AS n FROM builds WHERE {finished} GROUP BY fix_attempts"
        ))
        .fetch_all(&self.pool)
        .await?;
        for r in &rows {
            let k = n(r, "fix_attempts")? as usize;
            if k > 1000 {
                continue;
            }
            if s.fix_histogram.len() <= k {
                s.fix_histogram.resize(k + 1, 0);
            }
            s.fix_histogram[k] = n(r, "n")?;
        }
        let r = sqlx::query(&format!(
            "SELECT COUNT(*) AS n, COUNT(*) FILTER (WHERE status = 'published') AS ok FROM builds b WHERE {finished} \
             AND EXISTS (SELECT 1 FROM note_uses x WHERE x.build_id = b.id)"
        ))
        .fetch_one(&self.pool)
        .await?;
        s.builds_with_notes = n(&r, "n")?;
        s.published_with_notes = n_or_0(&r, "ok")?;
        s.published_without_notes = s.published - s.published_with_notes.min(s.published);
        let rows = sqlx::query("SELECT status, COUNT(*) AS n FROM notes GROUP BY status").fetch_all(&self.pool).await?;
        for r in &rows {
            let count = n(r, "n")?;
            s.notes_total += count;
            match NoteStatus::parse(&r.try_get::<String, _>("status")?) {
                Some(NoteStatus::Active) => s.notes_active = count,
                Some(NoteStatus::Candidate) => s.notes_candidate = count,
                Some(NoteStatus::Deprecated) => s.notes_deprecated = count,
                None => {}
            }
        }
        let r = sqlx::query(
            "SELECT COALESCE(SUM(input_tokens), 0)::BIGINT AS input_tokens, \
             COALESCE(SUM(output_tokens), 0)::BIGINT AS output_tokens, \
             COALESCE(SUM(cached_tokens), 0)::BIGINT AS cached_tokens, \
             COALESCE(SUM(cost_usd), 0)::DOUBLE PRECISION AS cost_usd FROM builds",
        )
        .fetch_one(&self.pool)
        .await?;
        s.tokens = tokens(&r)?;
        let rows = sqlx::query(&format!(
            "SELECT duration_ms FROM builds WHERE {finished} AND duration_ms IS NOT NULL ORDER BY duration_ms"
        ))
        .fetch_all(&self.pool)
        .await?;
        let durations: Vec<u64> = rows.iter().map(|r| n(r, "duration_ms")).collect::<Result<_>>()?;
        s.duration_p50_ms = percentile(&durations, 50.0);
        s.duration_p95_ms = percentile(&durations, 95.0);
        Ok(s)
    }

    pub(crate) async fn stats_days(&self, days: u32) -> Result<Vec<DayStats>> {
        // `started_at` is RFC 3339 UTC, so its first ten characters are the day.
        let rows = sqlx::query(&format!(
            "SELECT left(started_at, 10) AS day, template, COUNT(*) AS n, \
             COUNT(*) FILTER (WHERE status = 'published') AS ok, \
             COUNT(*) FILTER (WHERE status = 'published' AND fix_attempts = 0) AS first, \
             SUM(input_tokens)::BIGINT AS input, SUM(output_tokens)::BIGINT AS output, SUM(cost_usd) AS cost \
             FROM builds WHERE status IN ('published', 'failed') AND kind <> 'chat' AND started_at >= {} \
             GROUP BY day, template ORDER BY day, template COLLATE \"C\"",
            since_day("$1")
        ))
        .bind(days_back(days))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(DayStats {
                    day: r.try_get("day")?,
                    template: r.try_get("template")?,
                    builds: n(r, "n")?,
                    published: n_or_0(r, "ok")?,
                    first_try: n_or_0(r, "first")?,
                    input_tokens: n_or_0(r, "input")?,
                    output_tokens: n_or_0(r, "output")?,
                    cost_usd: r.try_get::<Option<f64>, _>("cost")?.unwrap_or(0.0),
                })
            })
            .collect()
    }

    pub(crate) async fn stats_kinds(&self, days: u32, limit: u32) -> Result<Vec<ErrorKindCount>> {
        // SQLite sorts a missing kind (NULL) first.
        let rows = sqlx::query(&format!(
            "SELECT kind, n FROM (SELECT data::json ->> 'kind' AS kind, COUNT(*) AS n FROM events \
             WHERE type = 'error_detected' AND ts >= {} GROUP BY 1) AS k \
             ORDER BY n DESC, kind COLLATE \"C\" NULLS FIRST LIMIT $2",
            since_day("$1")
        ))
        .bind(days_back(days))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(ErrorKindCount {
                    kind: r.try_get::<Option<String>, _>("kind")?.unwrap_or_else(|| "unknown".into()),
                    count: n(r, "n")?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::days_back;

    #[test]
    fn day_windows() {
        assert_eq!((days_back(0), days_back(1), days_back(30)), (0, 0, 29));
        assert_eq!(days_back(u32::MAX), 700_000);
    }
}
