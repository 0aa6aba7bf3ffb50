//! Builds that run again after an interruption, requests recognised before any limit, and
//! projects lent to the sandbox user: the parts of [`SqliteStore`] that let a crash or kill -9
//! cost a user nothing.

use crate::rows::{build_row, lent_row, u};
use crate::sqlite::SqliteStore;
use crate::types::*;
use crate::{Result, StoreError};
use sqlx::Row;
use wright_events::EventKind;

impl SqliteStore {
    /// One transaction: check who holds the build, put it back at its old place in the queue
    /// with the next attempt, drop the interrupted run's conversation (the re-run writes its
    /// own from turn 0) and store its `restarted` event, so no worker can claim it before the
    /// event is there and the stream stays gapless.
    pub(crate) async fn rs_restart(
        &self,
        id: &str,
        holder: &str,
        max_attempts: u32,
        reason: wright_events::RestartReason,
    ) -> Result<Restart> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let row = sqlx::query("SELECT status, worker, attempt, cancel_requested FROM builds WHERE id = ?")
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
            u(row.try_get("attempt")?) as u32,
            max_attempts,
        ) {
            Ok(attempt) => attempt,
            Err(answer) => {
                tx.rollback().await?;
                return Ok(answer);
            }
        };
        sqlx::query(
            "UPDATE builds SET status = 'queued', attempt = attempt + 1, worker = NULL, lease_until = NULL WHERE id = ?",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM turns WHERE build_id = ?").bind(id).execute(&mut *tx).await?;
        let last: i64 = sqlx::query("SELECT COALESCE(MAX(seq), 0) AS n FROM events WHERE build_id = ?")
            .bind(id)
            .fetch_one(&mut *tx)
            .await?
            .try_get("n")?;
        let kind = EventKind::Restarted { attempt: attempt + 1, reason };
        let logged = crate::sqlite_runlog::insert(&mut tx, id, u(last), vec![crate::Draft::now(kind)]).await?;
        let Some(event) = logged.first().map(|l| l.event.clone()) else {
            return Err(StoreError::Invalid(format!("build {id}: its restart was not stored")));
        };
        tx.commit().await?;
        Ok(Restart::Requeued(Box::new(event)))
    }

    pub(crate) async fn rs_existing(
        &self,
        owner: &str,
        idempotency_key: Option<&str>,
        dedup_key: &str,
    ) -> Result<Option<BuildRecord>> {
        // The key first: it names one build for good; the twin only while it is active.
        if let Some(key) = idempotency_key {
            let row = sqlx::query("SELECT * FROM builds WHERE owner = ? AND idempotency_key = ?")
                .bind(owner)
                .bind(key)
                .fetch_optional(&self.pool)
                .await?;
            if let Some(row) = row {
                return Ok(Some(build_row(&row)?));
            }
        }
        let row = sqlx::query(
            "SELECT * FROM builds WHERE owner = ? AND dedup_key = ? AND status IN ('queued', 'running') LIMIT 1",
        )
        .bind(owner)
        .bind(dedup_key)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(build_row).transpose()
    }

    pub(crate) async fn rs_lend(&self, p: &LentProject) -> Result<()> {
        sqlx::query(
            "INSERT OR REPLACE INTO lent_projects (run_id, path, uid, gid, pid, pid_start, lent_at) \
             VALUES (?,?,?,?,?,?,?)",
        )
        .bind(&p.run_id)
        .bind(&p.path)
        .bind(i64::from(p.uid))
        .bind(i64::from(p.gid))
        .bind(i64::from(p.pid))
        .bind(&p.pid_start)
        .bind(&p.lent_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(crate) async fn rs_lent(&self) -> Result<Vec<LentProject>> {
        let rows = sqlx::query("SELECT * FROM lent_projects ORDER BY lent_at").fetch_all(&self.pool).await?;
        rows.iter().map(lent_row).collect()
    }

    pub(crate) async fn rs_returned(&self, run_id: &str) -> Result<()> {
        sqlx::query("DELETE FROM lent_projects WHERE run_id = ?").bind(run_id).execute(&self.pool).await?;
        Ok(())
    }
}
