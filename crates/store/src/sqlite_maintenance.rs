//! [`Maintenance`] on SQLite: job leases, confidence recalculation, retention and the worker
//! registry. Times are this machine's clock (every process sharing a SQLite file runs on it).

use crate::maintenance::{Decay, IndexFix, JobRun, Maintenance, Recalculated, WorkerBeat, WorkerRow, capped, plan};
use crate::rows::{note_row, u};
use crate::sqlite::{SqliteStore, from_now, from_now_minus};
use crate::{Result, StoreError};
use async_trait::async_trait;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use std::time::Duration;

fn job_row(r: &SqliteRow) -> Result<JobRun> {
    Ok(JobRun {
        name: r.try_get("name")?,
        holder: r.try_get("holder")?,
        lease_until: r.try_get("lease_until")?,
        last_started: r.try_get("last_started")?,
        last_finished: r.try_get("last_finished")?,
        last_ok: r.try_get::<Option<i64>, _>("last_ok")?.map(|v| v != 0),
        last_detail: r.try_get("last_detail")?,
    })
}

fn worker_row(r: &SqliteRow, alive_since: &str) -> Result<WorkerRow> {
    let seen_at: String = r.try_get("seen_at")?;
    Ok(WorkerRow {
        name: r.try_get("name")?,
        host: r.try_get("host")?,
        pid: u(r.try_get("pid")?) as u32,
        slots: u(r.try_get("slots")?) as u32,
        busy: u(r.try_get("busy")?) as u32,
        version: r.try_get("version")?,
        started_at: r.try_get("started_at")?,
        alive: seen_at.as_str() >= alive_since,
        seen_at,
    })
}

#[async_trait]
impl Maintenance for SqliteStore {
    async fn try_job(&self, name: &str, holder: &str, hold: Duration) -> Result<bool> {
        let now = crate::now();
        let taken = sqlx::query(
            "INSERT INTO jobs (name, holder, lease_until, last_started) VALUES (?, ?, ?, ?) \
             ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until, \
             last_started = excluded.last_started WHERE jobs.lease_until IS NULL OR jobs.lease_until <= ?",
        )
        .bind(name)
        .bind(holder)
        .bind(from_now(capped(hold)))
        .bind(&now)
        .bind(&now)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(taken == 1)
    }

    async fn finish_job(&self, name: &str, holder: &str, ok: bool, detail: &str) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE jobs SET last_finished = ?, last_ok = ?, last_detail = ? WHERE name = ? AND holder = ?",
        )
        .bind(crate::now())
        .bind(i64::from(ok))
        .bind(detail)
        .bind(name)
        .bind(holder)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(done == 1)
    }

    async fn jobs(&self) -> Result<Vec<JobRun>> {
        let rows = sqlx::query("SELECT * FROM jobs ORDER BY name").fetch_all(&self.read).await?;
        rows.iter().map(job_row).collect()
    }

    async fn recalculate_confidence(&self, decay: Decay) -> Result<Recalculated> {
        // One writer at a time: nothing changes a note between the read and the writes.
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let now = crate::now();
        let rows = sqlx::query(
            "SELECT n.*, (SELECT MAX(ts) FROM note_uses x WHERE x.note_id = n.id) AS last_use FROM notes n ORDER BY n.id",
        )
        .fetch_all(&mut *tx)
        .await?;
        let notes = rows
            .iter()
            .map(|r| Ok((note_row(r)?, r.try_get::<Option<String>, _>("last_use")?)))
            .collect::<Result<Vec<_>>>()?;
        let index = sqlx::query("SELECT key, note_id, rank FROM note_keys")
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| Ok((r.try_get("key")?, r.try_get("note_id")?, r.try_get("rank")?)))
            .collect::<Result<Vec<_>>>()?;
        let (updates, orphans, counts) = plan(&notes, &index, &now, decay);
        for up in &updates {
            if up.row_changed {
                sqlx::query("UPDATE notes SET confidence = ?, status = ? WHERE id = ?")
                    .bind(up.confidence)
                    .bind(up.status.as_str())
                    .bind(&up.id)
                    .execute(&mut *tx)
                    .await?;
            }
            match &up.index {
                IndexFix::InStep => {}
                IndexFix::Rerank => {
                    sqlx::query("UPDATE note_keys SET rank = ? WHERE note_id = ?")
                        .bind(up.confidence)
                        .bind(&up.id)
                        .execute(&mut *tx)
                        .await?;
                }
                IndexFix::Rewrite(keys) => {
                    sqlx::query("DELETE FROM note_keys WHERE note_id = ?").bind(&up.id).execute(&mut *tx).await?;
                    for key in keys {
                        sqlx::query("INSERT OR IGNORE INTO note_keys (key, note_id, rank) VALUES (?, ?, ?)")
                            .bind(key)
                            .bind(&up.id)
                            .bind(up.confidence)
                            .execute(&mut *tx)
                            .await?;
                    }
                }
            }
        }
        for id in &orphans {
            sqlx::query("DELETE FROM note_keys WHERE note_id = ?").bind(id).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(counts)
    }

    async fn ended_before(&self, cutoff: &str, limit: u32) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query(
            "SELECT b.id, b.workspace FROM builds b \
             WHERE b.pruned_at IS NULL AND b.status IN ('published', 'failed') AND b.finished_at < ? \
             AND b.kind IN ('build', 'task') \
             AND NOT EXISTS (SELECT 1 FROM builds o WHERE o.workspace = b.workspace AND o.id <> b.id \
                 AND (o.status NOT IN ('published', 'failed') OR o.finished_at IS NULL OR o.finished_at >= ?)) \
             ORDER BY b.finished_at, b.id LIMIT ?",
        )
        .bind(cutoff)
        .bind(cutoff)
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?;
        rows.iter().map(|r| Ok((r.try_get("id")?, r.try_get("workspace")?))).collect()
    }

    async fn mark_pruned(&self, run_id: &str) -> Result<()> {
        let done = sqlx::query("UPDATE builds SET pruned_at = COALESCE(pruned_at, ?) WHERE id = ?")
            .bind(crate::now())
            .bind(run_id)
            .execute(&self.pool)
            .await?
            .rows_affected();
        if done == 0 {
            return Err(StoreError::NotFound(format!("run {run_id}")));
        }
        Ok(())
    }

    async fn worker_heartbeat(&self, b: &WorkerBeat) -> Result<()> {
        let now = crate::now();
        sqlx::query(
            "INSERT INTO workers (name, host, pid, slots, busy, version, started_at, seen_at) VALUES (?,?,?,?,?,?,?,?) \
             ON CONFLICT (name) DO UPDATE SET host = excluded.host, pid = excluded.pid, slots = excluded.slots, \
             busy = excluded.busy, version = excluded.version, seen_at = excluded.seen_at",
        )
        .bind(&b.name)
        .bind(&b.host)
        .bind(i64::from(b.pid))
        .bind(i64::from(b.slots))
        .bind(i64::from(b.busy))
        .bind(&b.version)
        .bind(&now)
        .bind(&now)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn workers(&self, alive_within: Duration) -> Result<Vec<WorkerRow>> {
        let since = from_now_minus(capped(alive_within));
        let rows = sqlx::query("SELECT * FROM workers ORDER BY name").fetch_all(&self.read).await?;
        rows.iter().map(|r| worker_row(r, &since)).collect()
    }

    async fn forget_workers(&self, older_than: Duration) -> Result<u64> {
        let gone = sqlx::query("DELETE FROM workers WHERE seen_at < ?")
            .bind(from_now_minus(capped(older_than)))
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(gone)
    }
}
