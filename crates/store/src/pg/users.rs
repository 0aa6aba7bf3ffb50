//! Users, sessions and refusals of the service, task results of `wright task`, and projects
//! lent to the sandbox user: the rest of [`PgStore`], statement for statement as on SQLite.

use super::PgStore;
use crate::rows::{lent_row, task_row, user_row};
use crate::types::*;
use crate::{Result, StoreError};

impl PgStore {
    pub(crate) async fn users_create(&self, user: &User, token_hash: &str) -> Result<()> {
        let done = sqlx::query(
            "INSERT INTO users (id, name, role, token_hash, created_at) VALUES ($1,$2,$3,$4,$5) \
             ON CONFLICT DO NOTHING",
        )
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

    pub(crate) async fn users_all(&self) -> Result<Vec<User>> {
        let rows =
            sqlx::query("SELECT * FROM users ORDER BY created_at, name COLLATE \"C\"").fetch_all(&self.pool).await?;
        rows.iter().map(user_row).collect()
    }

    pub(crate) async fn users_remove(&self, name: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM users WHERE name = $1").bind(name).execute(&self.pool).await?;
        Ok(done.rows_affected() > 0)
    }

    pub(crate) async fn users_by_token(&self, hash: &str) -> Result<Option<User>> {
        let row =
            sqlx::query("SELECT * FROM users WHERE token_hash = $1").bind(hash).fetch_optional(&self.pool).await?;
        row.as_ref().map(user_row).transpose()
    }

    pub(crate) async fn sessions_put(&self, hash: &str, user: &str, kind: SessionKind, until: &str) -> Result<()> {
        sqlx::query(
            "INSERT INTO sessions (token_hash, user_id, kind, expires_at) VALUES ($1,$2,$3,$4) \
             ON CONFLICT (token_hash) DO UPDATE SET user_id = excluded.user_id, kind = excluded.kind, \
             expires_at = excluded.expires_at",
        )
        .bind(hash)
        .bind(user)
        .bind(kind.as_str())
        .bind(until)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub(crate) async fn sessions_user(&self, hash: &str, kind: SessionKind, now: &str) -> Result<Option<User>> {
        let user_id: Option<String> = match kind {
            // A login link works once: deleting it is how it is used.
            SessionKind::Login => {
                sqlx::query_scalar(
                    "DELETE FROM sessions WHERE token_hash = $1 AND kind = 'login' AND expires_at > $2 \
                     RETURNING user_id",
                )
                .bind(hash)
                .bind(now)
                .fetch_optional(&self.pool)
                .await?
            }
            SessionKind::Session => {
                sqlx::query_scalar(
                    "SELECT user_id FROM sessions WHERE token_hash = $1 AND kind = 'session' AND expires_at > $2",
                )
                .bind(hash)
                .bind(now)
                .fetch_optional(&self.pool)
                .await?
            }
        };
        let Some(id) = user_id else { return Ok(None) };
        let row = sqlx::query("SELECT * FROM users WHERE id = $1").bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(user_row).transpose()
    }

    pub(crate) async fn sessions_end(&self, hash: &str) -> Result<()> {
        sqlx::query("DELETE FROM sessions WHERE token_hash = $1").bind(hash).execute(&self.pool).await?;
        Ok(())
    }

    pub(crate) async fn users_log_refusal(&self, user: &str, reason: &str) -> Result<()> {
        sqlx::query("INSERT INTO refusals (user_id, reason, ts) VALUES ($1,$2,$3)")
            .bind(user)
            .bind(reason)
            .bind(crate::now())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub(crate) async fn tasks_put(&self, t: &TaskRecord) -> Result<()> {
        let result = serde_json::to_string(&t.result).map_err(|e| StoreError::Invalid(e.to_string()))?;
        sqlx::query(
            "INSERT INTO task_results (run_id, task_id, position, kind, status, message, result, task_hash, \
             started_at, finished_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) \
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
        let rows = sqlx::query("SELECT * FROM task_results WHERE run_id = $1 ORDER BY position, task_id COLLATE \"C\"")
            .bind(run_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(task_row).collect()
    }

    pub(crate) async fn lent_put(&self, p: &LentProject) -> Result<()> {
        sqlx::query(
            "INSERT INTO lent_projects (run_id, path, uid, gid, pid, pid_start, lent_at) VALUES ($1,$2,$3,$4,$5,$6,$7) \
             ON CONFLICT (run_id) DO UPDATE SET path = excluded.path, uid = excluded.uid, gid = excluded.gid, \
             pid = excluded.pid, pid_start = excluded.pid_start, lent_at = excluded.lent_at",
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

    pub(crate) async fn lent_all(&self) -> Result<Vec<LentProject>> {
        let rows = sqlx::query("SELECT * FROM lent_projects ORDER BY lent_at").fetch_all(&self.pool).await?;
        rows.iter().map(lent_row).collect()
    }

    pub(crate) async fn lent_returned(&self, run_id: &str) -> Result<()> {
        sqlx::query("DELETE FROM lent_projects WHERE run_id = $1").bind(run_id).execute(&self.pool).await?;
        Ok(())
    }
}
