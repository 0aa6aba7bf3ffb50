//! [`Store`] on PostgreSQL: builds, turns, attempts and usage here; notes and statistics in
//! [`super::notes`], the queue in [`super::queue`], users, sessions, task results and lent
//! projects in [`super::users`].

use super::PgStore;
use crate::note::{Note, NoteStatus};
use crate::rows::{attempt_row, build_row, json, like_prefix, turn_row, usage_row};
use crate::types::*;
use crate::{NoteFilter, NoteHit, Result, RunEnd, Store, StoreError};
use async_trait::async_trait;
use std::time::Duration;

#[async_trait]
impl Store for PgStore {
    async fn create_build(&self, b: &NewBuild) -> Result<()> {
        sqlx::query(
            "INSERT INTO builds (id, parent_id, prompt, template, lang, provider, model, workspace, status, started_at, kind) \
             VALUES ($1,$2,$3,$4,$5,$6,$7,$8,'running',$9,$10) ON CONFLICT (id) DO UPDATE SET parent_id = excluded.parent_id, \
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
        let row = sqlx::query("SELECT * FROM builds WHERE id = $1").bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(build_row).transpose()?.ok_or_else(|| StoreError::NotFound(format!("build {id}")))
    }

    async fn list_builds(&self, limit: u32) -> Result<Vec<BuildRecord>> {
        let rows = sqlx::query(
            "SELECT * FROM builds WHERE kind <> 'chat' ORDER BY started_at DESC, id COLLATE \"C\" DESC LIMIT $1",
        )
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(build_row).collect()
    }

    async fn resolve_build(&self, id: &str) -> Result<BuildRecord> {
        if let Ok(b) = self.build(id).await {
            return Ok(b);
        }
        // ILIKE: SQLite's LIKE ignores the case of ASCII letters, and a prefix must resolve alike.
        let rows = sqlx::query("SELECT * FROM builds WHERE id ILIKE $1 ESCAPE '\\' LIMIT 2")
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
        // FOR SHARE waits for a restart that is taking the run away (it holds the row FOR
        // UPDATE while it drops the conversation) and then sees its new holder.
        let stored = sqlx::query(
            "INSERT INTO turns (build_id, idx, phase, role, message, ts, input_tokens, output_tokens, cached_tokens) \
             SELECT $1,$2,$3,$4,$5,$6,$7,$8,$9 WHERE EXISTS \
             (SELECT 1 FROM builds WHERE id = $1 AND worker IS NOT DISTINCT FROM $10 \
              AND (lease_until IS NULL OR lease_until >= wright_now()) FOR SHARE)",
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
        .bind(writer)
        .execute(&self.pool)
        .await?
        .rows_affected();
        if stored == 0 {
            return Err(StoreError::NotHolder(t.build_id.clone()));
        }
        Ok(())
    }

    async fn turns(&self, build_id: &str) -> Result<Vec<Turn>> {
        let rows = sqlx::query("SELECT * FROM turns WHERE build_id = $1 ORDER BY idx")
            .bind(build_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(turn_row).collect()
    }

    async fn record_attempt(&self, a: &Attempt) -> Result<()> {
        sqlx::query(
            "INSERT INTO attempts (id, build_id, template, success, iterations, duration_ms, notes_applied, errors, \
             model, input_tokens, output_tokens, cached_tokens, cost_usd, created_at) \
             VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)",
        )
        .bind(&a.id)
        .bind(&a.build_id)
        .bind(a.template.as_str())
        .bind(i64::from(a.success))
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
        let rows = sqlx::query("SELECT * FROM attempts WHERE build_id = $1 ORDER BY created_at")
            .bind(build_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(attempt_row).collect()
    }

    async fn log_usage(&self, e: &UsageEntry) -> Result<()> {
        sqlx::query(
            "INSERT INTO usage_log (build_id, phase, provider, model, input_tokens, output_tokens, cached_tokens, \
             cost_usd, ts) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)",
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
        let rows = sqlx::query("SELECT * FROM usage_log WHERE build_id = $1 ORDER BY id")
            .bind(build_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(usage_row).collect()
    }

    async fn put_note(&self, note: &Note) -> Result<()> {
        self.notes_put(note).await
    }
    async fn note(&self, id: &str) -> Result<Note> {
        self.notes_get(id).await
    }
    async fn resolve_note(&self, id_or_prefix: &str) -> Result<Note> {
        self.notes_resolve(id_or_prefix).await
    }
    async fn edit_note(&self, id: &str, lesson: Option<&str>, status: Option<NoteStatus>) -> Result<Note> {
        self.notes_edit(id, lesson, status).await
    }
    async fn list_notes(&self, filter: &NoteFilter) -> Result<Vec<Note>> {
        self.notes_list(filter).await
    }
    async fn find_notes(&self, keys: &[String], limit: u32) -> Result<Vec<NoteHit>> {
        self.notes_find(keys, limit).await
    }
    async fn record_note_outcome(&self, ids: &[String], helped: bool) -> Result<Vec<Note>> {
        self.notes_outcome(ids, helped).await
    }
    async fn record_note_uses(&self, build_id: &str, ids: &[String], phase: &str) -> Result<()> {
        self.notes_record_uses(build_id, ids, phase).await
    }
    async fn note_uses(&self, build_id: &str) -> Result<Vec<String>> {
        self.notes_uses(build_id).await
    }

    async fn stats(&self) -> Result<Stats> {
        self.stats_all().await
    }
    async fn daily_stats(&self, days: u32) -> Result<Vec<DayStats>> {
        self.stats_days(days).await
    }
    async fn error_kinds(&self, days: u32, limit: u32) -> Result<Vec<ErrorKindCount>> {
        self.stats_kinds(days, limit).await
    }

    async fn enqueue_build(&self, build: &QueuedBuild) -> Result<Enqueued> {
        self.q_enqueue(build).await
    }
    async fn claim_build(&self, worker: &str, lease: Duration) -> Result<Option<BuildRecord>> {
        self.q_claim(worker, lease).await
    }
    async fn renew_lease(&self, id: &str, worker: &str, lease: Duration) -> Result<bool> {
        self.q_renew(id, worker, lease).await
    }
    async fn set_claim_folder(&self, id: &str, worker: &str, folder: &str) -> Result<bool> {
        self.q_claim_folder(id, worker, folder).await
    }
    async fn take_expired(&self, reaper: &str, lease: Duration, spare: &str) -> Result<Vec<BuildRecord>> {
        self.q_take_expired(reaper, lease, spare).await
    }
    async fn queue_position(&self, id: &str) -> Result<u64> {
        self.q_position(id).await
    }
    async fn queue_depth(&self) -> Result<u64> {
        self.q_depth().await
    }
    async fn request_cancel(&self, id: &str, if_queued: RunEnd) -> Result<CancelOutcome> {
        self.q_cancel(id, if_queued).await
    }
    async fn cancel_requested(&self, id: &str) -> Result<bool> {
        self.q_cancel_requested(id).await
    }
    async fn builds_of(&self, owner: Option<&str>, limit: u32) -> Result<Vec<BuildRecord>> {
        self.q_builds_of(owner, limit).await
    }
    async fn builds_since(&self, owner: &str, since: &str) -> Result<(u64, Option<String>)> {
        self.q_builds_since(owner, since).await
    }
    async fn active_builds(&self, owner: &str) -> Result<u64> {
        self.q_active(owner).await
    }
    async fn restart_build(
        &self,
        id: &str,
        holder: &str,
        max_attempts: u32,
        reason: wright_events::RestartReason,
    ) -> Result<Restart> {
        self.q_restart(id, holder, max_attempts, reason).await
    }
    async fn existing_build(
        &self,
        owner: &str,
        idempotency_key: Option<&str>,
        dedup_key: &str,
    ) -> Result<Option<BuildRecord>> {
        self.q_existing(owner, idempotency_key, dedup_key).await
    }

    async fn create_user(&self, user: &User, token_hash: &str) -> Result<()> {
        self.users_create(user, token_hash).await
    }
    async fn users(&self) -> Result<Vec<User>> {
        self.users_all().await
    }
    async fn remove_user(&self, name: &str) -> Result<bool> {
        self.users_remove(name).await
    }
    async fn user_by_token(&self, token_hash: &str) -> Result<Option<User>> {
        self.users_by_token(token_hash).await
    }
    async fn put_session(&self, token_hash: &str, user_id: &str, kind: SessionKind, expires_at: &str) -> Result<()> {
        self.sessions_put(token_hash, user_id, kind, expires_at).await
    }
    async fn session_user(&self, token_hash: &str, kind: SessionKind, now: &str) -> Result<Option<User>> {
        self.sessions_user(token_hash, kind, now).await
    }
    async fn end_session(&self, token_hash: &str) -> Result<()> {
        self.sessions_end(token_hash).await
    }
    async fn log_refusal(&self, user_id: &str, reason: &str) -> Result<()> {
        self.users_log_refusal(user_id, reason).await
    }

    async fn put_task_result(&self, record: &TaskRecord) -> Result<()> {
        self.tasks_put(record).await
    }
    async fn task_results(&self, run_id: &str) -> Result<Vec<TaskRecord>> {
        self.tasks_of(run_id).await
    }
    async fn lend_project(&self, project: &LentProject) -> Result<()> {
        self.lent_put(project).await
    }
    async fn lent_projects(&self) -> Result<Vec<LentProject>> {
        self.lent_all().await
    }
    async fn project_returned(&self, run_id: &str) -> Result<()> {
        self.lent_returned(run_id).await
    }
}
