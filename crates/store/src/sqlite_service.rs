//! The service's part of [`SqliteStore`]: the queue with leases, users and sessions. Every
//! state change is one statement (or guarded by its `WHERE`), so servers sharing the file
//! never both take the same build.

use crate::rows::{build_row, u, user_row};
use crate::sqlite::SqliteStore;
use crate::types::*;
use crate::{Result, StoreError, new_id};
use sqlx::Row;
use std::time::Duration;

impl SqliteStore {
    pub(crate) async fn svc_enqueue(&self, q: &QueuedBuild) -> Result<Enqueued> {
        // Two tries: an existing twin may finish between the refused insert and the lookup.
        for _ in 0..2 {
            let b = &q.build;
            let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
            let inserted = sqlx::query(
                "INSERT OR IGNORE INTO builds (id, parent_id, prompt, template, lang, provider, model, workspace, \
                 status, started_at, owner, request, idempotency_key, queued_at, preview_key, dedup_key, kind) \
                 VALUES (?,?,?,?,?,?,?,?,'queued',?,?,?,?,?,?,?,?)",
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
            .bind(&q.owner)
            .bind(q.job.encode())
            .bind(&q.idempotency_key)
            .bind(&b.started_at)
            .bind(&q.preview_key)
            .bind(&q.dedup_key)
            .bind(b.kind.as_str())
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if inserted == 1 {
                // Limits and the folder are checked after the insert, in the same transaction
                // (BEGIN IMMEDIATE: one writer at a time), so two requests at once cannot both
                // see room left.
                if let Some(limits) = q.limits
                    && let Some(limited) = self.over_limit(&mut tx, &q.owner, &b.id, b.kind, limits).await?
                {
                    tx.rollback().await?;
                    return Ok(limited);
                }
                let busy = sqlx::query(
                    "SELECT id FROM builds WHERE workspace = ? AND id <> ? AND status IN ('queued', 'running') \
                     ORDER BY queued_at LIMIT 1",
                )
                .bind(&b.workspace)
                .bind(b.id.as_str())
                .fetch_optional(&mut *tx)
                .await?;
                if let Some(row) = busy {
                    tx.rollback().await?;
                    return Ok(Enqueued::FolderBusy(row.try_get("id")?));
                }
                // The first event goes in with the build, so no worker can claim it before it.
                let first = match &q.first_event {
                    Some(kind) => {
                        crate::sqlite_runlog::insert(&mut tx, &b.id, 0, vec![crate::Draft::now(kind.clone())]).await?
                    }
                    None => vec![],
                };
                tx.commit().await?;
                self.notifier.appended(&b.id, &first);
                return Ok(Enqueued::New);
            }
            tx.rollback().await?;
            let existing = sqlx::query(
                "SELECT * FROM builds WHERE owner = ? AND ((idempotency_key IS NOT NULL AND idempotency_key = ?) \
                 OR (dedup_key = ? AND status IN ('queued', 'running'))) ORDER BY queued_at LIMIT 1",
            )
            .bind(&q.owner)
            .bind(&q.idempotency_key)
            .bind(&q.dedup_key)
            .fetch_optional(&self.pool)
            .await?;
            if let Some(row) = existing {
                return Ok(Enqueued::Existing(Box::new(build_row(&row)?)));
            }
        }
        Err(StoreError::Invalid(format!("build {} could not be queued", q.build.id)))
    }

    /// The limit `owner` is at, not counting build `this`: runs queued or running (every kind
    /// but chat), then runs of `this`'s `kind` queued this past hour (builds and task runs have
    /// an hourly limit each).
    async fn over_limit(
        &self,
        tx: &mut sqlx::SqliteConnection,
        owner: &str,
        this: &str,
        kind: wright_events::RunKind,
        limits: crate::Limits,
    ) -> Result<Option<Enqueued>> {
        let active = sqlx::query(
            "SELECT COUNT(*) AS n FROM builds WHERE owner = ? AND id <> ? AND status IN ('queued', 'running') \
             AND kind <> 'chat'",
        )
        .bind(owner)
        .bind(this)
        .fetch_one(&mut *tx)
        .await?;
        let active = u(active.try_get("n")?);
        if active >= u64::from(limits.concurrent) {
            return Ok(Some(Enqueued::Limited { kind: crate::LimitKind::Concurrent, count: active, oldest: None }));
        }
        let since = crate::sqlite::from_now_minus(Duration::from_secs(3600));
        let hour = sqlx::query(
            "SELECT COUNT(*) AS n, MIN(queued_at) AS oldest FROM builds WHERE owner = ? AND id <> ? \
             AND queued_at >= ? AND kind = ?",
        )
        .bind(owner)
        .bind(this)
        .bind(&since)
        .bind(kind.as_str())
        .fetch_one(&mut *tx)
        .await?;
        let count = u(hour.try_get("n")?);
        if count >= u64::from(limits.per_hour) {
            return Ok(Some(Enqueued::Limited {
                kind: crate::LimitKind::Hourly,
                count,
                oldest: hour.try_get("oldest")?,
            }));
        }
        Ok(None)
    }

    pub(crate) async fn svc_claim(&self, worker: &str, lease_until: &str) -> Result<Option<BuildRecord>> {
        let row = sqlx::query(
            "UPDATE builds SET status = 'running', worker = ?, lease_until = ? WHERE id = \
             (SELECT id FROM builds WHERE status = 'queued' ORDER BY queued_at, id LIMIT 1) AND status = 'queued' \
             RETURNING *",
        )
        .bind(worker)
        .bind(lease_until)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(build_row).transpose()
    }

    pub(crate) async fn svc_renew(&self, id: &str, worker: &str, lease_until: &str) -> Result<bool> {
        let n = sqlx::query(
            "UPDATE builds SET lease_until = ? WHERE id = ? AND worker = ? AND status = 'running' \
             AND (lease_until IS NULL OR lease_until >= ?)",
        )
        .bind(lease_until)
        .bind(id)
        .bind(worker)
        .bind(crate::now())
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(n == 1)
    }

    pub(crate) async fn svc_claim_folder(&self, id: &str, worker: &str, folder: &str) -> Result<bool> {
        let n = sqlx::query("UPDATE builds SET workspace = ? WHERE id = ? AND worker = ? AND status = 'running'")
            .bind(folder)
            .bind(id)
            .bind(worker)
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(n == 1)
    }

    pub(crate) async fn svc_take_expired(
        &self,
        now: &str,
        reaper: &str,
        until: &str,
        spare: &str,
    ) -> Result<Vec<BuildRecord>> {
        let rows = sqlx::query(
            "UPDATE builds SET worker = ?, lease_until = ? \
             WHERE status = 'running' AND kind <> 'chat' AND lease_until IS NOT NULL AND lease_until < ? \
             AND (? = '' OR worker IS NULL OR substr(worker, 1, length(?)) <> ?) RETURNING *",
        )
        .bind(reaper)
        .bind(until)
        .bind(now)
        .bind(spare)
        .bind(spare)
        .bind(spare)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(build_row).collect()
    }

    pub(crate) async fn svc_queue_position(&self, id: &str) -> Result<u64> {
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM builds q, builds me WHERE me.id = ? AND me.status = 'queued' \
             AND q.status = 'queued' AND (q.queued_at, q.id) < (me.queued_at, me.id)",
        )
        .bind(id)
        .fetch_one(&self.read)
        .await?;
        Ok(u(row.try_get("n")?))
    }

    pub(crate) async fn svc_queue_depth(&self) -> Result<u64> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM builds WHERE status = 'queued'").fetch_one(&self.read).await?;
        Ok(u(row.try_get("n")?))
    }

    pub(crate) async fn svc_request_cancel(&self, id: &str, if_queued: crate::RunEnd) -> Result<CancelOutcome> {
        let status = self.svc_build(id).await?.status;
        if status == RunStatus::Queued {
            // Ended through the run log (no worker holds a queued build); a worker that
            // claimed it meanwhile holds it now, and it is cancelled as a running one.
            match self.log_finish(id, None, if_queued).await {
                Ok(crate::Finished::Now(_)) => {
                    sqlx::query("UPDATE builds SET cancel_requested = 1 WHERE id = ?")
                        .bind(id)
                        .execute(&self.pool)
                        .await?;
                    return Ok(CancelOutcome::WasQueued);
                }
                Ok(crate::Finished::Already { .. }) => return Ok(CancelOutcome::AlreadyEnded),
                Err(StoreError::NotHolder(_)) => {}
                Err(e) => return Err(e),
            }
        }
        let running = sqlx::query("UPDATE builds SET cancel_requested = 1 WHERE id = ? AND status = 'running'")
            .bind(id)
            .execute(&self.pool)
            .await?
            .rows_affected();
        if running == 1 {
            return Ok(CancelOutcome::Running);
        }
        // Unknown ids are an error; ended builds are not.
        self.svc_build(id).await.map(|_| CancelOutcome::AlreadyEnded)
    }

    async fn svc_build(&self, id: &str) -> Result<BuildRecord> {
        let row = sqlx::query("SELECT * FROM builds WHERE id = ?").bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(build_row).transpose()?.ok_or_else(|| StoreError::NotFound(format!("build {id}")))
    }

    pub(crate) async fn svc_cancel_requested(&self, id: &str) -> Result<bool> {
        let row =
            sqlx::query("SELECT cancel_requested FROM builds WHERE id = ?").bind(id).fetch_optional(&self.read).await?;
        Ok(row.map(|r| r.try_get::<i64, _>("cancel_requested")).transpose()?.unwrap_or(0) != 0)
    }

    pub(crate) async fn svc_builds_of(&self, owner: Option<&str>, limit: u32) -> Result<Vec<BuildRecord>> {
        let rows = match owner {
            Some(o) => {
                sqlx::query(
                    "SELECT * FROM builds WHERE owner = ? AND kind <> 'chat' \
                     ORDER BY started_at DESC, id DESC LIMIT ?",
                )
                .bind(o)
                .bind(i64::from(limit))
                .fetch_all(&self.read)
                .await?
            }
            None => {
                sqlx::query("SELECT * FROM builds WHERE kind <> 'chat' ORDER BY started_at DESC, id DESC LIMIT ?")
                    .bind(i64::from(limit))
                    .fetch_all(&self.read)
                    .await?
            }
        };
        rows.iter().map(build_row).collect()
    }

    pub(crate) async fn svc_builds_since(&self, owner: &str, since: &str) -> Result<(u64, Option<String>)> {
        let row = sqlx::query(
            "SELECT COUNT(*) AS n, MIN(queued_at) AS oldest FROM builds WHERE owner = ? AND queued_at >= ? \
             AND kind <> 'chat'",
        )
        .bind(owner)
        .bind(since)
        .fetch_one(&self.pool)
        .await?;
        Ok((u(row.try_get("n")?), row.try_get("oldest")?))
    }

    pub(crate) async fn svc_active(&self, owner: &str) -> Result<u64> {
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM builds WHERE owner = ? AND status IN ('queued', 'running') AND kind <> 'chat'",
        )
        .bind(owner)
        .fetch_one(&self.pool)
        .await?;
        Ok(u(row.try_get("n")?))
    }

    pub(crate) async fn svc_create_user(&self, user: &User, token_hash: &str) -> Result<()> {
        let done =
            sqlx::query("INSERT OR IGNORE INTO users (id, name, role, token_hash, created_at) VALUES (?,?,?,?,?)")
                .bind(&user.id)
                .bind(&user.name)
                .bind(user.role.as_str())
                .bind(token_hash)
                .bind(&user.created_at)
                .execute(&self.pool)
                .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::Invalid(format!("a user named `{}` already exists", user.name)));
        }
        Ok(())
    }

    pub(crate) async fn svc_users(&self) -> Result<Vec<User>> {
        let rows = sqlx::query("SELECT * FROM users ORDER BY created_at, name").fetch_all(&self.pool).await?;
        rows.iter().map(user_row).collect()
    }

    pub(crate) async fn svc_remove_user(&self, name: &str) -> Result<bool> {
        let n = sqlx::query("DELETE FROM users WHERE name = ?").bind(name).execute(&self.pool).await?.rows_affected();
        Ok(n > 0)
    }

    pub(crate) async fn svc_user_by_token(&self, hash: &str) -> Result<Option<User>> {
        let row = sqlx::query("SELECT * FROM users WHERE token_hash = ?").bind(hash).fetch_optional(&self.read).await?;
        row.as_ref().map(user_row).transpose()
    }

    pub(crate) async fn svc_put_session(&self, hash: &str, user: &str, kind: SessionKind, until: &str) -> Result<()> {
        sqlx::query("INSERT OR REPLACE INTO sessions (token_hash, user_id, kind, expires_at) VALUES (?,?,?,?)")
            .bind(hash)
            .bind(user)
            .bind(kind.as_str())
            .bind(until)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub(crate) async fn svc_session_user(&self, hash: &str, kind: SessionKind, now: &str) -> Result<Option<User>> {
        let user_id: Option<String> = match kind {
            // A login link works once: deleting it is how it is used.
            SessionKind::Login => sqlx::query(
                "DELETE FROM sessions WHERE token_hash = ? AND kind = 'login' AND expires_at > ? RETURNING user_id",
            )
            .bind(hash)
            .bind(now)
            .fetch_optional(&self.pool)
            .await?
            .map(|r| r.try_get("user_id"))
            .transpose()?,
            SessionKind::Session => {
                sqlx::query("SELECT user_id FROM sessions WHERE token_hash = ? AND kind = 'session' AND expires_at > ?")
                    .bind(hash)
                    .bind(now)
                    .fetch_optional(&self.read)
                    .await?
                    .map(|r| r.try_get("user_id"))
                    .transpose()?
            }
        };
        let Some(id) = user_id else { return Ok(None) };
        let row = sqlx::query("SELECT * FROM users WHERE id = ?").bind(id).fetch_optional(&self.read).await?;
        row.as_ref().map(user_row).transpose()
    }

    pub(crate) async fn svc_end_session(&self, hash: &str) -> Result<()> {
        sqlx::query("DELETE FROM sessions WHERE token_hash = ?").bind(hash).execute(&self.pool).await?;
        Ok(())
    }

    pub(crate) async fn svc_log_refusal(&self, user: &str, reason: &str) -> Result<()> {
        sqlx::query("INSERT INTO refusals (user_id, reason, ts) VALUES (?,?,?)")
            .bind(user)
            .bind(reason)
            .bind(crate::now())
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

/// A new user record (the caller makes and shows the token).
pub fn new_user(name: &str, role: Role) -> User {
    User { id: new_id("u"), name: name.to_string(), role, created_at: crate::now() }
}
