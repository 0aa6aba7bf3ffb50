//! The embedded store: one SQLite file in WAL mode, migrated on open.

use crate::note::{Note, NoteStatus};
use crate::rows::{attempt_row, build_row, json, like_prefix, note_row, percentile, tokens, turn_row, u, usage_row};
use crate::types::*;
use crate::{NoteFilter, NoteHit, Result, Store, StoreError};
use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Retrieval looks at no more than this many keys (one compound-select term each; SQLite
/// allows 500 terms).
const MAX_KEYS: usize = 256;

/// Retrieval reads at most this many notes per key, best ranked first, so a word that half the
/// notes share costs the same as a rare one.
const PER_KEY: u32 = 128;

/// [`Store`] on SQLite.
#[derive(Clone)]
pub struct SqliteStore {
    /// Writes, and reads that must see them at once.
    pub(crate) pool: SqlitePool,
    /// Reads that many callers make at once (followers, status polls, sign-ins): a pool of their
    /// own, so a crowd of them never queues a build's writes or lease renewals behind it. WAL
    /// lets these readers run beside the one writer.
    pub(crate) read: SqlitePool,
    /// Told of every commit someone may be waiting for (see [`crate::notify`]).
    pub(crate) notifier: Arc<dyn crate::Notifier>,
}

impl SqliteStore {
    /// Open (creating the file and its folder if needed) and migrate. `url` is `sqlite://PATH`,
    /// `sqlite:PATH` or `sqlite::memory:`.
    pub async fn open(url: &str) -> Result<Self> {
        let memory = url.contains(":memory:") || url.contains("mode=memory");
        if !memory {
            let path = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
            let path = path.split('?').next().unwrap_or(path);
            if let Some(parent) = std::path::Path::new(path).parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .map_err(|e| StoreError::Invalid(format!("cannot create {}: {e}", parent.display())))?;
            }
        }
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        // An in-memory database lives as long as its one connection.
        let pool = if memory {
            SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(options.clone())
                .await?
        } else {
            SqlitePoolOptions::new().max_connections(4).connect_with(options.clone()).await?
        };
        MIGRATOR.run(&pool).await?;
        let read = if memory {
            pool.clone()
        } else {
            SqlitePoolOptions::new().max_connections(8).connect_with(options).await?
        };
        Ok(Self { pool, read, notifier: Arc::new(crate::LocalNotifier::default()) })
    }

    /// An in-memory store (tests, benches).
    pub async fn memory() -> Result<Self> {
        Self::open("sqlite::memory:").await
    }
}

/// `d` from now by this machine's clock: a SQLite file has no clock of its own, and every
/// process that shares one runs on the same machine.
pub(crate) fn from_now(d: Duration) -> String {
    let now = std::time::SystemTime::now() + d;
    let t: chrono::DateTime<chrono::Utc> = now.into();
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `d` ago by this machine's clock.
pub(crate) fn from_now_minus(d: Duration) -> String {
    let then = std::time::SystemTime::now() - d;
    let t: chrono::DateTime<chrono::Utc> = then.into();
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

async fn write_note(tx: &mut sqlx::SqliteConnection, note: &Note) -> Result<()> {
    sqlx::query(
        "INSERT INTO notes (id, trigger, trigger_type, lesson, libraries, error_patterns, tags, help_count, \
         fail_count, confidence, status, source_build, source_error, source_fix, created_at, updated_at) \
         VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) \
         ON CONFLICT(id) DO UPDATE SET trigger=excluded.trigger, trigger_type=excluded.trigger_type, \
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
    sqlx::query("DELETE FROM note_keys WHERE note_id = ?").bind(&note.id).execute(&mut *tx).await?;
    if note.status == NoteStatus::Deprecated {
        return Ok(());
    }
    for key in note.keys() {
        sqlx::query("INSERT OR IGNORE INTO note_keys (key, note_id, rank) VALUES (?, ?, ?)")
            .bind(key)
            .bind(&note.id)
            .bind(note.confidence)
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

#[async_trait]
impl Store for SqliteStore {
    async fn create_build(&self, b: &NewBuild) -> Result<()> {
        sqlx::query(
            "INSERT INTO builds (id, parent_id, prompt, template, lang, provider, model, workspace, status, started_at, kind) \
             VALUES (?,?,?,?,?,?,?,?,'running',?,?) ON CONFLICT (id) DO UPDATE SET parent_id = excluded.parent_id, \
             template = excluded.template, lang = excluded.lang, provider = excluded.provider, model = excluded.model, \
             workspace = CASE WHEN builds.worker IS NULL THEN excluded.workspace ELSE builds.workspace END, \
             status = 'running'",
        )
        .bind(b.id.as_str())
        .bind(b.parent_id.as_deref())
        .bind(&b.prompt)
        .bind(crate::rows::template_text(b.template))
        .bind(b.lang.as_str())
        .bind(&b.provider)
        .bind(&b.model)
        .bind(&b.workspace)
        .bind(&b.started_at)
        .bind(b.kind.as_str())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn build(&self, id: &str) -> Result<BuildRecord> {
        let row = sqlx::query("SELECT * FROM builds WHERE id = ?").bind(id).fetch_optional(&self.read).await?;
        row.as_ref().map(build_row).transpose()?.ok_or_else(|| StoreError::NotFound(format!("build {id}")))
    }

    async fn list_builds(&self, limit: u32) -> Result<Vec<BuildRecord>> {
        let rows = sqlx::query("SELECT * FROM builds WHERE kind <> 'chat' ORDER BY started_at DESC, id DESC LIMIT ?")
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(build_row).collect()
    }

    async fn resolve_build(&self, id: &str) -> Result<BuildRecord> {
        if let Ok(b) = self.build(id).await {
            return Ok(b);
        }
        let rows = sqlx::query("SELECT * FROM builds WHERE id LIKE ? ESCAPE '\\' LIMIT 2")
            .bind(like_prefix(id))
            .fetch_all(&self.pool)
            .await?;
        match rows.len() {
            1 => build_row(&rows[0]),
            0 => Err(StoreError::NotFound(format!("build {id}"))),
            _ => Err(StoreError::Invalid(format!("`{id}` matches more than one build; type more of its id"))),
        }
    }

    async fn append_turn(&self, t: &Turn, writer: Option<&str>) -> Result<()> {
        // Fenced like events: a dropped run's late turns never land in the run that replaced it.
        let stored = sqlx::query(
            "INSERT INTO turns (build_id, idx, phase, role, message, ts, input_tokens, output_tokens, cached_tokens) \
             SELECT ?,?,?,?,?,?,?,?,? WHERE EXISTS (SELECT 1 FROM builds WHERE id = ? AND worker IS ? \
             AND (lease_until IS NULL OR lease_until >= ?))",
        )
        .bind(&t.build_id)
        .bind(i64::from(t.idx))
        .bind(&t.phase)
        .bind(&t.role)
        .bind(json(&t.message)?)
        .bind(&t.ts)
        .bind(t.tokens.input_tokens as i64)
        .bind(t.tokens.output_tokens as i64)
        .bind(t.tokens.cached_tokens as i64)
        .bind(&t.build_id)
        .bind(writer)
        .bind(crate::now())
        .execute(&self.pool)
        .await?
        .rows_affected();
        if stored == 0 {
            return Err(StoreError::NotHolder(t.build_id.clone()));
        }
        Ok(())
    }

    async fn turns(&self, build_id: &str) -> Result<Vec<Turn>> {
        let rows = sqlx::query("SELECT * FROM turns WHERE build_id = ? ORDER BY idx")
            .bind(build_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(turn_row).collect()
    }

    async fn record_attempt(&self, a: &Attempt) -> Result<()> {
        sqlx::query(
            "INSERT INTO attempts (id, build_id, template, success, iterations, duration_ms, notes_applied, errors, \
             model, input_tokens, output_tokens, cached_tokens, cost_usd, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        )
        .bind(&a.id)
        .bind(&a.build_id)
        .bind(a.template.as_str())
        .bind(a.success)
        .bind(i64::from(a.iterations))
        .bind(a.duration_ms as i64)
        .bind(json(&a.notes_applied)?)
        .bind(json(&a.errors)?)
        .bind(&a.model)
        .bind(a.tokens.input_tokens as i64)
        .bind(a.tokens.output_tokens as i64)
        .bind(a.tokens.cached_tokens as i64)
        .bind(a.tokens.cost_usd)
        .bind(&a.created_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn attempts(&self, build_id: &str) -> Result<Vec<Attempt>> {
        let rows = sqlx::query("SELECT * FROM attempts WHERE build_id = ? ORDER BY created_at")
            .bind(build_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(attempt_row).collect()
    }

    async fn log_usage(&self, e: &UsageEntry) -> Result<()> {
        sqlx::query(
            "INSERT INTO usage_log (build_id, phase, provider, model, input_tokens, output_tokens, cached_tokens, \
             cost_usd, ts) VALUES (?,?,?,?,?,?,?,?,?)",
        )
        .bind(&e.build_id)
        .bind(&e.phase)
        .bind(&e.provider)
        .bind(&e.model)
        .bind(e.tokens.input_tokens as i64)
        .bind(e.tokens.output_tokens as i64)
        .bind(e.tokens.cached_tokens as i64)
        .bind(e.tokens.cost_usd)
        .bind(&e.ts)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn usage(&self, build_id: &str) -> Result<Vec<UsageEntry>> {
        let rows = sqlx::query("SELECT * FROM usage_log WHERE build_id = ? ORDER BY id")
            .bind(build_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(usage_row).collect()
    }

    async fn put_note(&self, note: &Note) -> Result<()> {
        if note.id.trim().is_empty() || note.lesson.trim().is_empty() || note.trigger.trim().is_empty() {
            return Err(StoreError::Invalid("a note needs an id, a trigger and a lesson".into()));
        }
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        write_note(&mut tx, note).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn note(&self, id: &str) -> Result<Note> {
        let row = sqlx::query("SELECT * FROM notes WHERE id = ?").bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(note_row).transpose()?.ok_or_else(|| StoreError::NotFound(format!("note {id}")))
    }

    async fn resolve_note(&self, id: &str) -> Result<Note> {
        if let Ok(n) = self.note(id).await {
            return Ok(n);
        }
        let rows = sqlx::query("SELECT * FROM notes WHERE id LIKE ? ESCAPE '\\' LIMIT 2")
            .bind(like_prefix(id))
            .fetch_all(&self.pool)
            .await?;
        match rows.len() {
            1 => note_row(&rows[0]),
            0 => Err(StoreError::NotFound(format!("note {id}"))),
            _ => Err(StoreError::Invalid(format!("`{id}` matches more than one note; type more of its id"))),
        }
    }

    async fn list_notes(&self, filter: &NoteFilter) -> Result<Vec<Note>> {
        let limit = i64::from(filter.limit.unwrap_or(u32::MAX));
        let rows = match filter.status {
            Some(s) => {
                sqlx::query(
                    "SELECT * FROM notes WHERE status = ? ORDER BY confidence DESC, help_count DESC, id LIMIT ?",
                )
                .bind(s.as_str())
                .bind(limit)
                .fetch_all(&self.pool)
                .await?
            }
            None => {
                sqlx::query("SELECT * FROM notes ORDER BY confidence DESC, help_count DESC, id LIMIT ?")
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        rows.iter().map(note_row).collect()
    }

    async fn find_notes(&self, keys: &[String], limit: u32) -> Result<Vec<NoteHit>> {
        let keys = &keys[..keys.len().min(MAX_KEYS)];
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let per_key = format!(
            "SELECT * FROM (SELECT note_id, rank FROM note_keys WHERE key = ? ORDER BY rank DESC, note_id LIMIT {PER_KEY})"
        );
        // Ranking uses the index alone; only the winners are read from `notes`.
        let sql = format!(
            "WITH k(note_id, rank) AS ({}), \
             h AS (SELECT note_id, COUNT(*) AS hits, MAX(rank) AS rank FROM k GROUP BY note_id \
                   ORDER BY hits DESC, rank DESC, note_id LIMIT ?) \
             SELECT n.*, h.hits FROM h JOIN notes n ON n.id = h.note_id WHERE n.status != 'DEPRECATED' \
             ORDER BY h.hits DESC, h.rank DESC, n.id",
            vec![per_key.as_str(); keys.len()].join(" UNION ALL ")
        );
        let mut q = sqlx::query(&sql);
        for k in keys {
            q = q.bind(k);
        }
        let rows = q.bind(i64::from(limit)).fetch_all(&self.pool).await?;
        rows.iter().map(|r| Ok(NoteHit { note: note_row(r)?, matched: u(r.try_get("hits")?) as u32 })).collect()
    }

    async fn record_note_outcome(&self, ids: &[String], helped: bool) -> Result<Vec<Note>> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let mut out = Vec::new();
        for id in ids {
            let Some(row) = sqlx::query("SELECT * FROM notes WHERE id = ?").bind(id).fetch_optional(&mut *tx).await?
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

    async fn record_note_uses(&self, build_id: &str, ids: &[String], phase: &str) -> Result<()> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let ts = crate::now();
        for id in ids {
            sqlx::query("INSERT OR IGNORE INTO note_uses (build_id, note_id, phase, ts) VALUES (?,?,?,?)")
                .bind(build_id)
                .bind(id)
                .bind(phase)
                .bind(&ts)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn note_uses(&self, build_id: &str) -> Result<Vec<String>> {
        let rows = sqlx::query("SELECT note_id FROM note_uses WHERE build_id = ? ORDER BY ts, note_id")
            .bind(build_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| Ok(r.try_get("note_id")?)).collect()
    }

    async fn enqueue_build(&self, build: &QueuedBuild) -> Result<Enqueued> {
        let done = self.svc_enqueue(build).await?;
        if matches!(done, Enqueued::New) {
            self.notifier.signal(crate::Signal::Queued);
        }
        Ok(done)
    }
    async fn claim_build(&self, worker: &str, lease: Duration) -> Result<Option<BuildRecord>> {
        self.svc_claim(worker, &from_now(lease)).await
    }
    async fn renew_lease(&self, id: &str, worker: &str, lease: Duration) -> Result<bool> {
        self.svc_renew(id, worker, &from_now(lease)).await
    }
    async fn set_claim_folder(&self, id: &str, worker: &str, folder: &str) -> Result<bool> {
        self.svc_claim_folder(id, worker, folder).await
    }
    async fn take_expired(&self, reaper: &str, lease: Duration, spare: &str) -> Result<Vec<BuildRecord>> {
        self.svc_take_expired(&crate::now(), reaper, &from_now(lease), spare).await
    }
    async fn queue_position(&self, id: &str) -> Result<u64> {
        self.svc_queue_position(id).await
    }
    async fn queue_depth(&self) -> Result<u64> {
        self.svc_queue_depth().await
    }
    async fn request_cancel(&self, id: &str, if_queued: crate::RunEnd) -> Result<CancelOutcome> {
        let outcome = self.svc_request_cancel(id, if_queued).await?;
        if outcome == CancelOutcome::Running {
            self.notifier.signal(crate::Signal::Cancel(id.to_string()));
        }
        Ok(outcome)
    }
    async fn cancel_requested(&self, id: &str) -> Result<bool> {
        self.svc_cancel_requested(id).await
    }
    async fn builds_of(&self, owner: Option<&str>, limit: u32) -> Result<Vec<BuildRecord>> {
        self.svc_builds_of(owner, limit).await
    }
    async fn builds_since(&self, owner: &str, since: &str) -> Result<(u64, Option<String>)> {
        self.svc_builds_since(owner, since).await
    }
    async fn active_builds(&self, owner: &str) -> Result<u64> {
        self.svc_active(owner).await
    }
    async fn create_user(&self, user: &User, token_hash: &str) -> Result<()> {
        self.svc_create_user(user, token_hash).await
    }
    async fn users(&self) -> Result<Vec<User>> {
        self.svc_users().await
    }
    async fn remove_user(&self, name: &str) -> Result<bool> {
        self.svc_remove_user(name).await
    }
    async fn user_by_token(&self, token_hash: &str) -> Result<Option<User>> {
        self.svc_user_by_token(token_hash).await
    }
    async fn put_session(&self, token_hash: &str, user_id: &str, kind: SessionKind, expires_at: &str) -> Result<()> {
        self.svc_put_session(token_hash, user_id, kind, expires_at).await
    }
    async fn session_user(&self, token_hash: &str, kind: SessionKind, now: &str) -> Result<Option<User>> {
        self.svc_session_user(token_hash, kind, now).await
    }
    async fn end_session(&self, token_hash: &str) -> Result<()> {
        self.svc_end_session(token_hash).await
    }
    async fn log_refusal(&self, user_id: &str, reason: &str) -> Result<()> {
        self.svc_log_refusal(user_id, reason).await
    }
    async fn put_task_result(&self, record: &TaskRecord) -> Result<()> {
        self.tasks_put(record).await
    }
    async fn task_results(&self, run_id: &str) -> Result<Vec<TaskRecord>> {
        self.tasks_of(run_id).await
    }
    async fn restart_build(
        &self,
        id: &str,
        holder: &str,
        max_attempts: u32,
        reason: wright_events::RestartReason,
    ) -> Result<Restart> {
        let restart = self.rs_restart(id, holder, max_attempts, reason).await?;
        if let Restart::Requeued(event) = &restart {
            self.notifier.appended(id, &[Arc::new(crate::Logged::new((**event).clone()))]);
            self.notifier.signal(crate::Signal::Queued);
        }
        Ok(restart)
    }
    async fn existing_build(
        &self,
        owner: &str,
        idempotency_key: Option<&str>,
        dedup_key: &str,
    ) -> Result<Option<BuildRecord>> {
        self.rs_existing(owner, idempotency_key, dedup_key).await
    }
    async fn lend_project(&self, project: &LentProject) -> Result<()> {
        self.rs_lend(project).await
    }
    async fn lent_projects(&self) -> Result<Vec<LentProject>> {
        self.rs_lent().await
    }
    async fn project_returned(&self, run_id: &str) -> Result<()> {
        self.rs_returned(run_id).await
    }

    async fn edit_note(&self, id: &str, lesson: Option<&str>, status: Option<NoteStatus>) -> Result<Note> {
        self.note_edit(id, lesson, status).await
    }

    async fn daily_stats(&self, days: u32) -> Result<Vec<DayStats>> {
        self.days(days).await
    }

    async fn error_kinds(&self, days: u32, limit: u32) -> Result<Vec<ErrorKindCount>> {
        self.kinds(days, limit).await
    }

    async fn stats(&self) -> Result<Stats> {
        let mut s = Stats::default();
        // Success figures are about builds: a chat turn is neither published nor fixed.
        let finished = "status IN ('published', 'failed') AND kind <> 'chat'";
        let rows = sqlx::query(&format!(
            "SELECT template, COUNT(*) AS n, SUM(status = 'published') AS ok, \
             SUM(status = 'published' AND fix_attempts = 0) AS first FROM builds WHERE {finished} \
             GROUP BY template ORDER BY template"
        ))
        .fetch_all(&self.pool)
        .await?;
        for r in &rows {
            let t = TemplateStats {
                template: r.try_get("template")?,
                builds: u(r.try_get("n")?),
                published: u(r.try_get::<Option<i64>, _>("ok")?.unwrap_or(0)),
                first_try: u(r.try_get::<Option<i64>, _>("first")?.unwrap_or(0)),
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
            let k = u(r.try_get("fix_attempts")?) as usize;
            if k > 1000 {
                continue;
            }
            if s.fix_histogram.len() <= k {
                s.fix_histogram.resize(k + 1, 0);
            }
            s.fix_histogram[k] = u(r.try_get("n")?);
        }
        let r = sqlx::query(&format!(
            "SELECT COUNT(*) AS n, SUM(status = 'published') AS ok FROM builds b WHERE {finished} \
             AND EXISTS (SELECT 1 FROM note_uses x WHERE x.build_id = b.id)"
        ))
        .fetch_one(&self.pool)
        .await?;
        s.builds_with_notes = u(r.try_get("n")?);
        s.published_with_notes = u(r.try_get::<Option<i64>, _>("ok")?.unwrap_or(0));
        s.published_without_notes = s.published - s.published_with_notes.min(s.published);
        let rows = sqlx::query("SELECT status, COUNT(*) AS n FROM notes GROUP BY status").fetch_all(&self.pool).await?;
        for r in &rows {
            let n = u(r.try_get("n")?);
            s.notes_total += n;
            match NoteStatus::parse(&r.try_get::<String, _>("status")?) {
                Some(NoteStatus::Active) => s.notes_active = n,
                Some(NoteStatus::Candidate) => s.notes_candidate = n,
                Some(NoteStatus::Deprecated) => s.notes_deprecated = n,
                None => {}
            }
        }
        let r = sqlx::query(
            "SELECT COALESCE(SUM(input_tokens),0) AS input_tokens, COALESCE(SUM(output_tokens),0) AS output_tokens, \
             COALESCE(SUM(cached_tokens),0) AS cached_tokens, COALESCE(SUM(cost_usd),0.0) AS cost_usd FROM builds",
        )
        .fetch_one(&self.pool)
        .await?;
        s.tokens = tokens(&r)?;
        let rows = sqlx::query(&format!(
            "SELECT duration_ms FROM builds WHERE {finished} AND duration_ms IS NOT NULL ORDER BY duration_ms"
        ))
        .fetch_all(&self.pool)
        .await?;
        let durations: Vec<u64> =
            rows.iter().map(|r| r.try_get::<i64, _>("duration_ms").map(u)).collect::<Result<_, _>>()?;
        s.duration_p50_ms = percentile(&durations, 50.0);
        s.duration_p95_ms = percentile(&durations, 95.0);
        Ok(s)
    }
}
