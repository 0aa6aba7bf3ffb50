//! [`AssistantStore`] on SQLite. Results are accepted inside `BEGIN IMMEDIATE`, so the check
//! that every id is pending and the resume decision see one state of the table.

use crate::assistant::{Answer, Answered, AssistantStore, AssistantTurn, CallRow, CallStatus, EmbedKey};
use crate::chat_rows::{assistant_turn_row, call_row, key_row};
use crate::rows::json;
use crate::sqlite::SqliteStore;
use crate::{Result, StoreError};
use async_trait::async_trait;
use sqlx::Row;
use std::collections::HashSet;

/// End the waiting turns of `runs` and close their pending calls as `status` with `why`,
/// inside `tx`.
async fn close_calls(
    tx: &mut sqlx::SqliteConnection,
    runs: &[String],
    status: CallStatus,
    why: &str,
    now: &str,
) -> Result<()> {
    for run in runs {
        sqlx::query(
            "UPDATE assistant_calls SET status = ?, error = ?, answered_at = ? WHERE run_id = ? AND status = 'pending'",
        )
        .bind(status.as_str())
        .bind(why)
        .bind(now)
        .bind(run)
        .execute(&mut *tx)
        .await?;
        sqlx::query("UPDATE assistant_turns SET state = 'ended', updated_at = ? WHERE run_id = ?")
            .bind(now)
            .bind(run)
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

#[async_trait]
impl AssistantStore for SqliteStore {
    async fn begin_assistant_turn(&self, t: &AssistantTurn) -> Result<()> {
        sqlx::query(
            "INSERT INTO assistant_turns (run_id, conversation_id, user_id, assistant, lang, client_tools, transcript, \
             parts, round, state, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        )
        .bind(&t.run)
        .bind(&t.conversation)
        .bind(&t.user)
        .bind(&t.assistant)
        .bind(t.lang.as_str())
        .bind(json(&t.client_tools)?)
        .bind(json(&t.transcript)?)
        .bind(json(&t.parts)?)
        .bind(i64::from(t.round))
        .bind(t.state.as_str())
        .bind(crate::now())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn assistant_turn(&self, run: &str) -> Result<AssistantTurn> {
        let row =
            sqlx::query("SELECT * FROM assistant_turns WHERE run_id = ?").bind(run).fetch_optional(&self.pool).await?;
        row.as_ref()
            .map(assistant_turn_row)
            .transpose()?
            .ok_or_else(|| StoreError::NotFound(format!("assistant turn {run}")))
    }

    async fn save_assistant_turn(&self, t: &AssistantTurn) -> Result<()> {
        let done = sqlx::query(
            "UPDATE assistant_turns SET transcript = ?, parts = ?, round = ?, state = ?, updated_at = ? WHERE run_id = ?",
        )
        .bind(json(&t.transcript)?)
        .bind(json(&t.parts)?)
        .bind(i64::from(t.round))
        .bind(t.state.as_str())
        .bind(crate::now())
        .bind(&t.run)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("assistant turn {}", t.run)));
        }
        Ok(())
    }

    async fn wait_for_page(&self, t: &AssistantTurn, calls: &[CallRow]) -> Result<()> {
        let now = crate::now();
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let done = sqlx::query(
            "UPDATE assistant_turns SET transcript = ?, parts = ?, round = ?, state = 'waiting', updated_at = ? \
             WHERE run_id = ? AND state = 'running'",
        )
        .bind(json(&t.transcript)?)
        .bind(json(&t.parts)?)
        .bind(i64::from(t.round))
        .bind(&now)
        .bind(&t.run)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::Invalid(format!("assistant turn {} is not running", t.run)));
        }
        for c in calls {
            sqlx::query(
                "INSERT INTO assistant_calls (id, provider_id, run_id, conversation_id, round, pos, name, arguments, \
                 args_hash, side, read_only, deadline, status, output, error, answered_at) \
                 VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            )
            .bind(&c.id)
            .bind(&c.provider_id)
            .bind(&t.run)
            .bind(&t.conversation)
            .bind(i64::from(c.round))
            .bind(i64::from(c.pos))
            .bind(&c.name)
            .bind(&c.arguments)
            .bind(&c.args_hash)
            .bind(c.side.as_str())
            .bind(c.read_only)
            .bind(&c.deadline)
            .bind(c.status.as_str())
            .bind(&c.output)
            .bind(&c.error)
            .bind((c.status != CallStatus::Pending).then(|| now.clone()))
            .execute(&mut *tx)
            .await
            .map_err(|e| match &e {
                sqlx::Error::Database(d) if d.is_unique_violation() => {
                    StoreError::Invalid(format!("tool call {} is recorded already", c.id))
                }
                _ => e.into(),
            })?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn answer_calls(&self, conversation: &str, answers: &[(String, Answer)], answerer: &str) -> Result<Answered> {
        if answers.is_empty() {
            return Err(StoreError::Invalid("results: give at least one result".into()));
        }
        let mut seen = HashSet::new();
        if let Some((dup, _)) = answers.iter().find(|(id, _)| !seen.insert(id.as_str())) {
            return Err(StoreError::Invalid(format!("results: call {dup} is answered twice in this batch")));
        }
        let now = crate::now();
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let mut run: Option<String> = None;
        for (id, _) in answers {
            let row =
                sqlx::query("SELECT run_id, status, side FROM assistant_calls WHERE id = ? AND conversation_id = ?")
                    .bind(id)
                    .bind(conversation)
                    .fetch_optional(&mut *tx)
                    .await?
                    .ok_or_else(|| {
                        StoreError::Invalid(format!("results: no tool call {id} is waiting in this conversation"))
                    })?;
            let (this_run, status, side): (String, String, String) =
                (row.try_get("run_id")?, row.try_get("status")?, row.try_get("side")?);
            crate::assistant::waiting_for_result(id, &side, &status)?;
            match &run {
                Some(r) if *r != this_run => {
                    return Err(StoreError::Invalid("results: the calls belong to different turns".into()));
                }
                Some(_) => {}
                None => run = Some(this_run),
            }
        }
        let run = run.unwrap_or_default();
        for (id, answer) in answers {
            let (output, error) = match answer {
                Answer::Output(o) => (Some(o.as_str()), None),
                Answer::Error(e) => (None, Some(e.as_str())),
            };
            sqlx::query(
                "UPDATE assistant_calls SET status = 'answered', output = ?, error = ?, answered_at = ? WHERE id = ?",
            )
            .bind(output)
            .bind(error)
            .bind(&now)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        let left: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM assistant_calls WHERE run_id = ? AND status = 'pending'")
                .bind(&run)
                .fetch_one(&mut *tx)
                .await?;
        let outcome = if left == 0 {
            let resumed = sqlx::query(
                "UPDATE assistant_turns SET state = 'running', updated_at = ? WHERE run_id = ? AND state = 'waiting'",
            )
            .bind(&now)
            .bind(&run)
            .execute(&mut *tx)
            .await?;
            if resumed.rows_affected() == 0 {
                return Err(StoreError::Invalid(format!("results: turn {run} is not waiting for results")));
            }
            sqlx::query("UPDATE builds SET workspace = ? WHERE id = ?")
                .bind(answerer)
                .bind(&run)
                .execute(&mut *tx)
                .await?;
            Answered::RoundComplete { run }
        } else {
            Answered::Waiting { run, left: usize::try_from(left).unwrap_or(usize::MAX) }
        };
        tx.commit().await?;
        Ok(outcome)
    }

    async fn round_calls(&self, run: &str, round: u32) -> Result<Vec<CallRow>> {
        let rows = sqlx::query("SELECT * FROM assistant_calls WHERE run_id = ? AND round = ? ORDER BY pos")
            .bind(run)
            .bind(i64::from(round))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(call_row).collect()
    }

    async fn pending_calls(&self, conversation: &str) -> Result<Vec<CallRow>> {
        let rows = sqlx::query(
            "SELECT * FROM assistant_calls WHERE conversation_id = ? AND status = 'pending' ORDER BY round, pos",
        )
        .bind(conversation)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(call_row).collect()
    }

    async fn close_pending(&self, conversation: &str, why: &str) -> Result<Vec<String>> {
        let now = crate::now();
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let runs: Vec<String> = sqlx::query_scalar(
            "SELECT run_id FROM assistant_turns WHERE conversation_id = ? AND state = 'waiting' ORDER BY updated_at",
        )
        .bind(conversation)
        .fetch_all(&mut *tx)
        .await?;
        close_calls(&mut tx, &runs, CallStatus::Cancelled, why, &now).await?;
        tx.commit().await?;
        Ok(runs)
    }

    async fn expire_calls(&self, now: &str) -> Result<Vec<(String, String)>> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let rows = sqlx::query(
            "SELECT DISTINCT t.run_id, t.conversation_id FROM assistant_turns t JOIN assistant_calls c ON c.run_id = t.run_id \
             WHERE t.state = 'waiting' AND c.status = 'pending' AND c.deadline < ?",
        )
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
        let mut out = Vec::new();
        for r in &rows {
            out.push((r.try_get::<String, _>("run_id")?, r.try_get::<String, _>("conversation_id")?));
        }
        let runs: Vec<String> = out.iter().map(|(r, _)| r.clone()).collect();
        close_calls(&mut tx, &runs, CallStatus::Expired, "expired: the page did not answer in time", now).await?;
        tx.commit().await?;
        Ok(out)
    }

    async fn create_embed_key(&self, k: &EmbedKey, key_hash: &str) -> Result<()> {
        sqlx::query(
            "INSERT INTO embed_keys (id, key_hash, owner_id, name, origins, tools, docs_dir, per_hour, created_at) \
             VALUES (?,?,?,?,?,?,?,?,?)",
        )
        .bind(&k.id)
        .bind(key_hash)
        .bind(&k.owner_id)
        .bind(&k.name)
        .bind(json(&k.origins)?)
        .bind(json(&k.tools)?)
        .bind(&k.docs_dir)
        .bind(i64::from(k.per_hour))
        .bind(&k.created_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn embed_key_by_hash(&self, key_hash: &str) -> Result<Option<EmbedKey>> {
        let row = sqlx::query("SELECT * FROM embed_keys WHERE key_hash = ? AND revoked_at IS NULL")
            .bind(key_hash)
            .fetch_optional(&self.read)
            .await?;
        row.as_ref().map(key_row).transpose()
    }

    async fn embed_key(&self, id: &str) -> Result<Option<EmbedKey>> {
        let row = sqlx::query("SELECT * FROM embed_keys WHERE id = ?").bind(id).fetch_optional(&self.read).await?;
        row.as_ref().map(key_row).transpose()
    }

    async fn embed_keys(&self, owner: &str) -> Result<Vec<EmbedKey>> {
        let rows = sqlx::query("SELECT * FROM embed_keys WHERE owner_id = ? ORDER BY created_at DESC, id DESC")
            .bind(owner)
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(key_row).collect()
    }

    async fn revoke_embed_key(&self, owner: &str, id: &str) -> Result<bool> {
        let done =
            sqlx::query("UPDATE embed_keys SET revoked_at = ? WHERE id = ? AND owner_id = ? AND revoked_at IS NULL")
                .bind(crate::now())
                .bind(id)
                .bind(owner)
                .execute(&self.pool)
                .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn create_visitor(
        &self,
        id: &str,
        token_hash: &str,
        key_id: &str,
        idle: std::time::Duration,
        max_live: u32,
    ) -> Result<bool> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let live: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM visitors WHERE key_id = ? AND expires_at > ?")
            .bind(key_id)
            .bind(crate::now())
            .fetch_one(&mut *tx)
            .await?;
        if live >= i64::from(max_live) {
            tx.rollback().await?;
            return Ok(false);
        }
        sqlx::query("INSERT INTO visitors (id, token_hash, key_id, created_at, expires_at) VALUES (?,?,?,?,?)")
            .bind(id)
            .bind(token_hash)
            .bind(key_id)
            .bind(crate::now())
            .bind(crate::sqlite::from_now(idle))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn touch_visitor(&self, id: &str, idle: std::time::Duration) -> Result<()> {
        sqlx::query("UPDATE visitors SET expires_at = ? WHERE id = ?")
            .bind(crate::sqlite::from_now(idle))
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn visitor_by_hash(&self, token_hash: &str) -> Result<Option<(String, EmbedKey)>> {
        let row = sqlx::query(
            "SELECT v.id AS visitor, k.* FROM visitors v JOIN embed_keys k ON k.id = v.key_id \
             WHERE v.token_hash = ? AND v.expires_at > ? AND k.revoked_at IS NULL",
        )
        .bind(token_hash)
        .bind(crate::now())
        .fetch_optional(&self.read)
        .await?;
        row.as_ref().map(|r| Ok((r.try_get::<String, _>("visitor")?, key_row(r)?))).transpose()
    }
}
