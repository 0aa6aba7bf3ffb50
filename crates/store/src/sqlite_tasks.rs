//! The task runs' part of [`SqliteStore`]: one row per task of a run, replaced when the task
//! runs again (a resumed run, `--rerun`).

use crate::rows::task_row;
use crate::sqlite::SqliteStore;
use crate::types::TaskRecord;
use crate::{Result, StoreError};

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
        rows.iter().map(task_row).collect()
    }
}
