//! [`Maintenance`] on PostgreSQL. Every time is the database's clock (`wright_now`), never a
//! server's: leases and liveness mean the same to every machine sharing the store.

use super::PgStore;
use crate::maintenance::{Decay, IndexFix, JobRun, Maintenance, Recalculated, WorkerBeat, WorkerRow, capped, plan};
use crate::note::{Note, NoteStatus};
use crate::rows::{u, unjson};
use crate::{Result, StoreError};
use async_trait::async_trait;
use sqlx::Row;
use sqlx::postgres::PgRow;
use std::time::Duration;

fn job_row(r: &PgRow) -> Result<JobRun> {
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

fn worker_row(r: &PgRow) -> Result<WorkerRow> {
    Ok(WorkerRow {
        name: r.try_get("name")?,
        host: r.try_get("host")?,
        pid: u(r.try_get("pid")?) as u32,
        slots: u(r.try_get("slots")?) as u32,
        busy: u(r.try_get("busy")?) as u32,
        version: r.try_get("version")?,
        started_at: r.try_get("started_at")?,
        seen_at: r.try_get("seen_at")?,
        alive: r.try_get("alive")?,
    })
}

/// A note as far as recalculating needs it (its counts, status and what its keys are made of),
/// with the time of its last use.
fn note_row(r: &PgRow) -> Result<(Note, Option<String>)> {
    let status: String = r.try_get("status")?;
    let list = |col: &str| -> Result<Vec<String>> {
        let s: String = r.try_get(col)?;
        unjson(&s, col)
    };
    let note = Note {
        id: r.try_get("id")?,
        trigger: r.try_get("trigger")?,
        trigger_type: r.try_get("trigger_type")?,
        lesson: String::new(),
        libraries: list("libraries")?,
        error_patterns: list("error_patterns")?,
        tags: list("tags")?,
        help_count: u(r.try_get("help_count")?) as u32,
        fail_count: u(r.try_get("fail_count")?) as u32,
        confidence: r.try_get("confidence")?,
        status: NoteStatus::parse(&status).ok_or_else(|| StoreError::Corrupt(format!("note status `{status}`")))?,
        source_build: None,
        source_error: None,
        source_fix: None,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    };
    Ok((note, r.try_get("last_use")?))
}

/// Seconds of `d`, for `wright_now`.
fn secs(d: Duration) -> f64 {
    capped(d).as_secs_f64()
}

#[async_trait]
impl Maintenance for PgStore {
    async fn try_job(&self, name: &str, holder: &str, hold: Duration) -> Result<bool> {
        // Two servers at once: the second waits for the first's row, then finds its lease live.
        let taken = sqlx::query(
            "INSERT INTO jobs (name, holder, lease_until, last_started) VALUES ($1, $2, wright_now($3), wright_now()) \
             ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until, \
             last_started = EXCLUDED.last_started WHERE jobs.lease_until IS NULL OR jobs.lease_until <= wright_now()",
        )
        .bind(name)
        .bind(holder)
        .bind(secs(hold))
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(taken == 1)
    }

    async fn finish_job(&self, name: &str, holder: &str, ok: bool, detail: &str) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE jobs SET last_finished = wright_now(), last_ok = $1, last_detail = $2 \
             WHERE name = $3 AND holder = $4",
        )
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
        let rows = sqlx::query("SELECT * FROM jobs ORDER BY name").fetch_all(&self.pool).await?;
        rows.iter().map(job_row).collect()
    }

    async fn recalculate_confidence(&self, decay: Decay) -> Result<Recalculated> {
        let mut tx = self.pool.begin().await?;
        // Notes stay as read until this commits: writers of notes (an outcome, an import, an
        // edit) wait; readers (retrieval) do not. Taken first, so no deadlock halfway through.
        sqlx::query("LOCK TABLE notes IN SHARE ROW EXCLUSIVE MODE").execute(&mut *tx).await?;
        let now: String = sqlx::query_scalar("SELECT wright_now()").fetch_one(&mut *tx).await?;
        let rows = sqlx::query(
            "SELECT n.id, n.trigger, n.trigger_type, n.libraries, n.error_patterns, n.tags, n.help_count, \
             n.fail_count, n.confidence, n.status, n.created_at, n.updated_at, x.last_use FROM notes n \
             LEFT JOIN (SELECT note_id, MAX(ts) AS last_use FROM note_uses GROUP BY note_id) x ON x.note_id = n.id \
             ORDER BY n.id",
        )
        .fetch_all(&mut *tx)
        .await?;
        let notes = rows.iter().map(note_row).collect::<Result<Vec<_>>>()?;
        let index = sqlx::query("SELECT key, note_id, rank FROM note_keys")
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| Ok((r.try_get("key")?, r.try_get("note_id")?, r.try_get("rank")?)))
            .collect::<Result<Vec<_>>>()?;
        let (updates, orphans, counts) = plan(&notes, &index, &now, decay);

        // Each kind of change in one statement, whatever the number of notes.
        let changed: Vec<_> = updates.iter().filter(|u| u.row_changed).collect();
        if !changed.is_empty() {
            sqlx::query(
                "UPDATE notes n SET confidence = v.c, status = v.s \
                 FROM UNNEST($1::text[], $2::float8[], $3::text[]) AS v(id, c, s) WHERE n.id = v.id",
            )
            .bind(changed.iter().map(|u| u.id.clone()).collect::<Vec<_>>())
            .bind(changed.iter().map(|u| u.confidence).collect::<Vec<_>>())
            .bind(changed.iter().map(|u| u.status.as_str().to_string()).collect::<Vec<_>>())
            .execute(&mut *tx)
            .await?;
        }
        let rerank: Vec<_> = updates.iter().filter(|u| u.index == IndexFix::Rerank).collect();
        if !rerank.is_empty() {
            sqlx::query(
                "UPDATE note_keys k SET rank = v.c FROM UNNEST($1::text[], $2::float8[]) AS v(id, c) \
                 WHERE k.note_id = v.id",
            )
            .bind(rerank.iter().map(|u| u.id.clone()).collect::<Vec<_>>())
            .bind(rerank.iter().map(|u| u.confidence).collect::<Vec<_>>())
            .execute(&mut *tx)
            .await?;
        }
        let mut cleared = orphans;
        let (mut keys, mut ids, mut ranks) = (Vec::new(), Vec::new(), Vec::new());
        for up in &updates {
            if let IndexFix::Rewrite(want) = &up.index {
                cleared.push(up.id.clone());
                for k in want {
                    keys.push(k.clone());
                    ids.push(up.id.clone());
                    ranks.push(up.confidence);
                }
            }
        }
        if !cleared.is_empty() {
            sqlx::query("DELETE FROM note_keys WHERE note_id = ANY($1)").bind(&cleared).execute(&mut *tx).await?;
        }
        if !keys.is_empty() {
            sqlx::query(
                "INSERT INTO note_keys (key, note_id, rank) \
                 SELECT * FROM UNNEST($1::text[], $2::text[], $3::float8[]) ON CONFLICT DO NOTHING",
            )
            .bind(&keys)
            .bind(&ids)
            .bind(&ranks)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(counts)
    }

    async fn ended_before(&self, cutoff: &str, limit: u32) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query(
            "SELECT b.id, b.workspace FROM builds b \
             WHERE b.pruned_at IS NULL AND b.status IN ('published', 'failed') AND b.finished_at < $1 \
             AND b.kind IN ('build', 'task') \
             AND NOT EXISTS (SELECT 1 FROM builds o WHERE o.workspace = b.workspace AND o.id <> b.id \
                 AND (o.status NOT IN ('published', 'failed') OR o.finished_at IS NULL OR o.finished_at >= $1)) \
             ORDER BY b.finished_at, b.id LIMIT $2",
        )
        .bind(cutoff)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|r| Ok((r.try_get("id")?, r.try_get("workspace")?))).collect()
    }

    async fn mark_pruned(&self, run_id: &str) -> Result<()> {
        let done = sqlx::query("UPDATE builds SET pruned_at = COALESCE(pruned_at, wright_now()) WHERE id = $1")
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
        sqlx::query(
            "INSERT INTO workers (name, host, pid, slots, busy, version, started_at, seen_at) \
             VALUES ($1, $2, $3, $4, $5, $6, wright_now(), wright_now()) \
             ON CONFLICT (name) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, slots = EXCLUDED.slots, \
             busy = EXCLUDED.busy, version = EXCLUDED.version, seen_at = EXCLUDED.seen_at",
        )
        .bind(&b.name)
        .bind(&b.host)
        .bind(i64::from(b.pid))
        .bind(i64::from(b.slots))
        .bind(i64::from(b.busy))
        .bind(&b.version)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn workers(&self, alive_within: Duration) -> Result<Vec<WorkerRow>> {
        let rows = sqlx::query("SELECT *, seen_at >= wright_now($1) AS alive FROM workers ORDER BY name")
            .bind(-secs(alive_within))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(worker_row).collect()
    }

    async fn forget_workers(&self, older_than: Duration) -> Result<u64> {
        let gone = sqlx::query("DELETE FROM workers WHERE seen_at < wright_now($1)")
            .bind(-secs(older_than))
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(gone)
    }
}
