//! The service's queue on PostgreSQL, shared by any number of servers and workers: leases by
//! the database's clock (`wright_now`), claims and reaping with `FOR UPDATE SKIP LOCKED`, each
//! owner's requests queued one at a time under a transaction-scoped advisory lock (so limits
//! and twins are decided on what every server has queued), and the workers told of queued and
//! cancelled builds by `NOTIFY` in the very transaction.

use super::PgStore;
use super::runlog::insert;
use crate::notify::{Notifier, Signal};
use crate::rows::{build_row, n};
use crate::runlog::{Draft, Finished, RunEnd, RunLog};
use crate::types::*;
use crate::{Result, StoreError};
use sqlx::{PgConnection, Row};
use std::time::Duration;
use wright_events::EventKind;

impl PgStore {
    pub(crate) async fn q_enqueue(&self, q: &QueuedBuild) -> Result<Enqueued> {
        // Two tries: an existing twin may finish between the refused insert and the lookup.
        for _ in 0..2 {
            let b = &q.build;
            let mut tx = self.pool.begin().await?;
            // One owner's requests one at a time (limits, twins), and one folder's (a follow-up
            // of someone else's build), across every server; owner first, always, so two never
            // wait for each other.
            sqlx::query(
                "SELECT pg_advisory_xact_lock(hashtextextended('wright-owner:' || $1, 0)), \
                 pg_advisory_xact_lock(hashtextextended('wright-folder:' || $2, 0))",
            )
            .bind(&q.owner)
            .bind(&b.workspace)
            .execute(&mut *tx)
            .await?;
            let inserted = sqlx::query(
                "INSERT INTO builds (id, parent_id, prompt, template, lang, provider, model, workspace, \
                 status, started_at, owner, request, idempotency_key, queued_at, preview_key, dedup_key, kind) \
                 VALUES ($1,$2,$3,$4,$5,$6,$7,$8,'queued',$9,$10,$11,$12,wright_now(),$13,$14,$15) \
                 ON CONFLICT DO NOTHING",
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
            .bind(&q.preview_key)
            .bind(&q.dedup_key)
            .bind(b.kind.as_str())
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if inserted == 1 {
                // Limits first, then the folder, as on SQLite.
                if let Some(limits) = q.limits
                    && let Some(limited) = over_limit(&mut tx, &q.owner, &b.id, b.kind, limits).await?
                {
                    tx.rollback().await?;
                    return Ok(limited);
                }
                let busy: Option<String> = sqlx::query_scalar(
                    "SELECT id FROM builds WHERE workspace = $1 AND id <> $2 AND status IN ('queued', 'running') \
                     ORDER BY queued_at LIMIT 1",
                )
                .bind(&b.workspace)
                .bind(b.id.as_str())
                .fetch_optional(&mut *tx)
                .await?;
                if let Some(id) = busy {
                    tx.rollback().await?;
                    return Ok(Enqueued::FolderBusy(id));
                }
                // The first event goes in with the build, so no worker can claim it before it.
                let first = match &q.first_event {
                    Some(kind) => {
                        insert(&mut tx, self.notifier.origin(), &b.id, 0, vec![Draft::now(kind.clone())]).await?
                    }
                    None => vec![],
                };
                self.notify_in(&mut tx, &Signal::Queued).await?;
                tx.commit().await?;
                self.notifier.appended(&b.id, &first);
                self.notifier.signal(Signal::Queued);
                return Ok(Enqueued::New);
            }
            tx.rollback().await?;
            let existing = sqlx::query(
                "SELECT * FROM builds WHERE owner = $1 AND ((idempotency_key IS NOT NULL AND idempotency_key = $2) \
                 OR (dedup_key = $3 AND status IN ('queued', 'running'))) ORDER BY queued_at LIMIT 1",
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

    pub(crate) async fn q_claim(&self, worker: &str, lease: Duration) -> Result<Option<BuildRecord>> {
        let row = sqlx::query(
            "UPDATE builds SET status = 'running', worker = $1, lease_until = wright_now($2) WHERE id = \
             (SELECT id FROM builds WHERE status = 'queued' ORDER BY queued_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) \
             RETURNING *",
        )
        .bind(worker)
        .bind(lease.as_secs_f64())
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(build_row).transpose()
    }

    pub(crate) async fn q_renew(&self, id: &str, worker: &str, lease: Duration) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE builds SET lease_until = wright_now($1) WHERE id = $2 AND worker = $3 AND status = 'running' \
             AND (lease_until IS NULL OR lease_until >= wright_now())",
        )
        .bind(lease.as_secs_f64())
        .bind(id)
        .bind(worker)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(done == 1)
    }

    pub(crate) async fn q_claim_folder(&self, id: &str, worker: &str, folder: &str) -> Result<bool> {
        let done = sqlx::query("UPDATE builds SET workspace = $1 WHERE id = $2 AND worker = $3 AND status = 'running'")
            .bind(folder)
            .bind(id)
            .bind(worker)
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(done == 1)
    }

    pub(crate) async fn q_take_expired(&self, reaper: &str, lease: Duration, spare: &str) -> Result<Vec<BuildRecord>> {
        // One reaper at a time (a transaction-scoped advisory lock: a reaper that dies lets go
        // with its connection); the others find the lock taken and try on their next pass. The
        // rows are still taken with SKIP LOCKED, so even without the lock each lost build
        // would go to exactly one reaper.
        let mut tx = self.pool.begin().await?;
        let mine: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock(hashtextextended('wright-reaper', 0))")
            .fetch_one(&mut *tx)
            .await?;
        if !mine {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "UPDATE builds SET worker = $1, lease_until = wright_now($2) WHERE id IN \
             (SELECT id FROM builds WHERE status = 'running' AND kind <> 'chat' AND lease_until IS NOT NULL \
              AND lease_until < wright_now() \
              AND ($3 = '' OR worker IS NULL OR left(worker, length($3)) <> $3) \
              FOR UPDATE SKIP LOCKED) \
             RETURNING *",
        )
        .bind(reaper)
        .bind(lease.as_secs_f64())
        .bind(spare)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        rows.iter().map(build_row).collect()
    }

    pub(crate) async fn q_position(&self, id: &str) -> Result<u64> {
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM builds q, builds me WHERE me.id = $1 AND me.status = 'queued' \
             AND q.status = 'queued' AND (q.queued_at, q.id) < (me.queued_at, me.id)",
        )
        .bind(id)
        .fetch_one(&self.pool)
        .await?;
        n(&row, "n")
    }

    pub(crate) async fn q_depth(&self) -> Result<u64> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM builds WHERE status = 'queued'").fetch_one(&self.pool).await?;
        n(&row, "n")
    }

    pub(crate) async fn q_cancel(&self, id: &str, if_queued: RunEnd) -> Result<CancelOutcome> {
        let status = self.q_build(id).await?.status;
        if status == RunStatus::Queued {
            // Ended through the run log (no worker holds a queued build); a worker that
            // claimed it meanwhile holds it now, and it is cancelled as a running one.
            match RunLog::finish(self, id, None, if_queued).await {
                Ok(Finished::Now(_)) => {
                    sqlx::query("UPDATE builds SET cancel_requested = 1 WHERE id = $1")
                        .bind(id)
                        .execute(&self.pool)
                        .await?;
                    return Ok(CancelOutcome::WasQueued);
                }
                Ok(Finished::Already { .. }) => return Ok(CancelOutcome::AlreadyEnded),
                Err(StoreError::NotHolder(_)) => {}
                Err(e) => return Err(e),
            }
        }
        let mut tx = self.pool.begin().await?;
        let running = sqlx::query("UPDATE builds SET cancel_requested = 1 WHERE id = $1 AND status = 'running'")
            .bind(id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if running == 1 {
            let signal = Signal::Cancel(id.to_string());
            self.notify_in(&mut tx, &signal).await?;
            tx.commit().await?;
            self.notifier.signal(signal);
            return Ok(CancelOutcome::Running);
        }
        tx.rollback().await?;
        // Unknown ids are an error; ended builds are not.
        self.q_build(id).await.map(|_| CancelOutcome::AlreadyEnded)
    }

    async fn q_build(&self, id: &str) -> Result<BuildRecord> {
        let row = sqlx::query("SELECT * FROM builds WHERE id = $1").bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(build_row).transpose()?.ok_or_else(|| StoreError::NotFound(format!("build {id}")))
    }

    pub(crate) async fn q_cancel_requested(&self, id: &str) -> Result<bool> {
        let flag: Option<i64> = sqlx::query_scalar("SELECT cancel_requested FROM builds WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(flag.unwrap_or(0) != 0)
    }

    pub(crate) async fn q_builds_of(&self, owner: Option<&str>, limit: u32) -> Result<Vec<BuildRecord>> {
        let rows = match owner {
            Some(o) => {
                sqlx::query(
                    "SELECT * FROM builds WHERE owner = $1 AND kind <> 'chat' \
                     ORDER BY started_at DESC, id COLLATE \"C\" DESC LIMIT $2",
                )
                .bind(o)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?
            }
            None => sqlx::query(
                "SELECT * FROM builds WHERE kind <> 'chat' ORDER BY started_at DESC, id COLLATE \"C\" DESC LIMIT $1",
            )
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?,
        };
        rows.iter().map(build_row).collect()
    }

    pub(crate) async fn q_builds_since(&self, owner: &str, since: &str) -> Result<(u64, Option<String>)> {
        let row = sqlx::query(
            "SELECT COUNT(*) AS n, MIN(queued_at) AS oldest FROM builds WHERE owner = $1 AND queued_at >= $2 \
             AND kind <> 'chat'",
        )
        .bind(owner)
        .bind(since)
        .fetch_one(&self.pool)
        .await?;
        Ok((n(&row, "n")?, row.try_get("oldest")?))
    }

    pub(crate) async fn q_active(&self, owner: &str) -> Result<u64> {
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM builds WHERE owner = $1 AND status IN ('queued', 'running') \
             AND kind <> 'chat'",
        )
        .bind(owner)
        .fetch_one(&self.pool)
        .await?;
        n(&row, "n")
    }

    /// One transaction, the build's row locked: check who holds it, put it back at its old
    /// place in the queue with the next attempt, drop the interrupted run's conversation and
    /// store its `restarted` event, so no worker can claim it before the event is there.
    pub(crate) async fn q_restart(
        &self,
        id: &str,
        holder: &str,
        max_attempts: u32,
        reason: wright_events::RestartReason,
    ) -> Result<Restart> {
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query("SELECT status, worker, attempt, cancel_requested FROM builds WHERE id = $1 FOR UPDATE")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(row) = row else {
            tx.rollback().await?;
            return Ok(Restart::NotHeld);
        };
        let (status, worker): (String, Option<String>) = (row.try_get("status")?, row.try_get("worker")?);
        let cancel_requested = row.try_get::<i64, _>("cancel_requested")? != 0;
        let attempt = match Restart::decide(
            RunStatus::parse(&status),
            worker.as_deref(),
            holder,
            cancel_requested,
            n(&row, "attempt")? as u32,
            max_attempts,
        ) {
            Ok(attempt) => attempt,
            Err(answer) => {
                tx.rollback().await?;
                return Ok(answer);
            }
        };
        sqlx::query(
            "UPDATE builds SET status = 'queued', attempt = attempt + 1, worker = NULL, lease_until = NULL \
             WHERE id = $1",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM turns WHERE build_id = $1").bind(id).execute(&mut *tx).await?;
        let last: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0)::BIGINT FROM events WHERE build_id = $1")
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        let kind = EventKind::Restarted { attempt: attempt + 1, reason };
        let logged = insert(&mut tx, self.notifier.origin(), id, crate::rows::u(last), vec![Draft::now(kind)]).await?;
        let Some(event) = logged.first().map(|l| l.event.clone()) else {
            return Err(StoreError::Invalid(format!("build {id}: its restart was not stored")));
        };
        self.notify_in(&mut tx, &Signal::Queued).await?;
        tx.commit().await?;
        self.notifier.appended(id, &logged);
        self.notifier.signal(Signal::Queued);
        Ok(Restart::Requeued(Box::new(event)))
    }

    pub(crate) async fn q_existing(
        &self,
        owner: &str,
        idempotency_key: Option<&str>,
        dedup_key: &str,
    ) -> Result<Option<BuildRecord>> {
        // The key first: it names one build for good; the twin only while it is active.
        if let Some(key) = idempotency_key {
            let row = sqlx::query("SELECT * FROM builds WHERE owner = $1 AND idempotency_key = $2")
                .bind(owner)
                .bind(key)
                .fetch_optional(&self.pool)
                .await?;
            if let Some(row) = row {
                return Ok(Some(build_row(&row)?));
            }
        }
        let row = sqlx::query(
            "SELECT * FROM builds WHERE owner = $1 AND dedup_key = $2 AND status IN ('queued', 'running') LIMIT 1",
        )
        .bind(owner)
        .bind(dedup_key)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(build_row).transpose()
    }
}

/// The limit `owner` is at, not counting build `this`: runs queued or running (chat turns are
/// not counted), then runs of `this`'s `kind` queued this past hour by the database's clock
/// (builds and task runs have an hourly limit each). The caller holds the owner's advisory
/// lock, so no other request of theirs is being decided meanwhile.
async fn over_limit(
    tx: &mut PgConnection,
    owner: &str,
    this: &str,
    kind: wright_events::RunKind,
    limits: Limits,
) -> Result<Option<Enqueued>> {
    let active = sqlx::query(
        "SELECT COUNT(*) AS n FROM builds WHERE owner = $1 AND id <> $2 AND status IN ('queued', 'running') \
         AND kind <> 'chat'",
    )
    .bind(owner)
    .bind(this)
    .fetch_one(&mut *tx)
    .await?;
    let active = n(&active, "n")?;
    if active >= u64::from(limits.concurrent) {
        return Ok(Some(Enqueued::Limited { kind: LimitKind::Concurrent, count: active, oldest: None }));
    }
    let hour = sqlx::query(
        "SELECT COUNT(*) AS n, MIN(queued_at) AS oldest FROM builds, (SELECT wright_now(-3600) AS since) AS s \
         WHERE owner = $1 AND id <> $2 AND queued_at >= s.since AND kind = $3",
    )
    .bind(owner)
    .bind(this)
    .bind(kind.as_str())
    .fetch_one(&mut *tx)
    .await?;
    let count = n(&hour, "n")?;
    if count >= u64::from(limits.per_hour) {
        return Ok(Some(Enqueued::Limited { kind: LimitKind::Hourly, count, oldest: hour.try_get("oldest")? }));
    }
    Ok(None)
}
