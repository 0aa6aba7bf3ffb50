//! The task runs' part of [`SqliteStore`]: one row per task of a run, replaced when the task
//! runs again (a resumed run, `--rerun`).

use crate::sqlite::{SqliteStore, u};
use crate::types::{TaskRecord, TaskStatus};
use crate::{Result, StoreError};
use sqlx::Row;

impl SqliteStore {
    pub(crate) async fn tasks_put(&self, t: &TaskRecord) -> Result<()> {
        let result = serde_json::to_string(&t.result).map_err(|e| StoreError::Invalid(e.to_string()))?;
        sqlx::query(
            "INSERT INTO task_results (run_id, task_id, position, kind, status, message, result, task_hash, \
             started_at, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?) \
             ON CONFLICT (run_id, task_id) DO UPDATE SET position = excluded.position, kind = excluded.kind, \
             status = excluded.status, message = excluded.message, result = excluded.result, \
             task_hash = excluded.task_hash, started_at = excluded.started_at, finished_at = excluded.finished_at",
        )
        .bind(&t.run_id)
        .bind(&t.task_id)
        .bind(i64::from(t.position))
        .bind(&t.kind)
        .bind(t.status.as_str())
        .bind(&t.message)
        .bind(result)
        .bind(&t.task_hash)
        .bind(&t.started_at)
        .bind(&t.finished_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(crate) async fn tasks_of(&self, run_id: &str) -> Result<Vec<TaskRecord>> {
        let rows = sqlx::query("SELECT * FROM task_results WHERE run_id = ? ORDER BY position, task_id")
            .bind(run_id)
            .fetch_all(&self.read)
            .await?;
        rows.iter()
            .map(|r| -> Result<TaskRecord> {
                let result: String = r.try_get("result")?;
                Ok(TaskRecord {
                    run_id: r.try_get("run_id")?,
                    task_id: r.try_get("task_id")?,
                    position: u32::try_from(u(r.try_get("position")?)).unwrap_or(u32::MAX),
                    kind: r.try_get("kind")?,
                    status: {
                        let s: String = r.try_get("status")?;
                        TaskStatus::parse(&s).ok_or_else(|| StoreError::Corrupt(format!("task status `{s}`")))?
                    },
                    message: r.try_get("message")?,
                    result: serde_json::from_str(&result)
                        .map_err(|e| StoreError::Corrupt(format!("task result: {e}")))?,
                    task_hash: r.try_get("task_hash")?,
                    started_at: r.try_get("started_at")?,
                    finished_at: r.try_get("finished_at")?,
                })
            })
            .collect()
    }
}
