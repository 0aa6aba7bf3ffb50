//! A round's tool calls on PostgreSQL: waiting for the page, accepting its results, closing and
//! expiring waiting turns.
//!
//! Every transaction that changes a waiting turn's calls first locks the turn's row
//! (`FOR NO KEY UPDATE`), and reads the calls only after it holds the lock, each read a statement of
//! its own (so, at PostgreSQL's default isolation, it sees what the lock's previous holder
//! committed). Posts for one turn from any number of servers therefore take turns: the check
//! that every id is pending and the count of what is left see one state of the round, and
//! exactly one post, the one that answers the last call, resumes the turn. Turns are locked
//! in `run_id` order when there are several, so two sweeps cannot deadlock.

use super::chat::refused;
use super::{PgStore, settle};
use crate::assistant::{Answer, Answered, AssistantTurn, CallRow, CallStatus};
use crate::rows::json;
use crate::{Result, StoreError};
use sqlx::{PgConnection, Row};
use std::collections::HashSet;

/// The database's clock, read once for the rows one transaction stamps.
async fn db_now(tx: &mut PgConnection) -> Result<String> {
    Ok(sqlx::query_scalar("SELECT wright_now()").fetch_one(&mut *tx).await?)
}

/// End the turns of `runs` (locked by the caller) and close their pending calls as `status`
/// with `why`, inside `tx`.
async fn close_calls(tx: &mut PgConnection, runs: &[String], status: CallStatus, why: &str, now: &str) -> Result<()> {
    if runs.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "UPDATE assistant_calls SET status = $1, error = $2, answered_at = $3 \
         WHERE run_id = ANY($4) AND status = 'pending'",
    )
    .bind(status.as_str())
    .bind(why)
    .bind(now)
    .bind(runs)
    .execute(&mut *tx)
    .await
    .map_err(refused)?;
    sqlx::query("UPDATE assistant_turns SET state = 'ended', updated_at = $1 WHERE run_id = ANY($2)")
        .bind(now)
        .bind(runs)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

impl PgStore {
    pub(super) async fn wait_for_page_pg(&self, t: &AssistantTurn, calls: &[CallRow]) -> Result<()> {
        let mut tx = self.pool.begin().await?;
        let written = async {
            let now = db_now(&mut tx).await?;
            // The UPDATE locks the turn's row, as every writer of its calls does first.
            let done = sqlx::query(
            "UPDATE assistant_turns SET transcript = $1, parts = $2, round = $3, state = 'waiting', updated_at = $4 \
             WHERE run_id = $5 AND state = 'running'",
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
                 VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)",
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
                _ => refused(e),
            })?;
            }
            Ok(())
        }
        .await;
        settle(tx, written).await
    }

    pub(super) async fn answer_calls_pg(
        &self,
        conversation: &str,
        answers: &[(String, Answer)],
        answerer: &str,
    ) -> Result<Answered> {
        let Some((first, _)) = answers.first() else {
            return Err(StoreError::Invalid("results: give at least one result".into()));
        };
        let mut seen = HashSet::new();
        if let Some((dup, _)) = answers.iter().find(|(id, _)| !seen.insert(id.as_str())) {
            return Err(StoreError::Invalid(format!("results: call {dup} is answered twice in this batch")));
        }
        let mut tx = self.pool.begin().await?;
        let answered = async {
            // The turn of the first call, locked before any call is looked at: posts for one turn
            // take turns from here on. (A call's turn never changes; an unknown first id is
            // reported by the checks below.)
            let first_run: Option<String> =
                sqlx::query_scalar("SELECT run_id FROM assistant_calls WHERE id = $1 AND conversation_id = $2")
                    .bind(first)
                    .bind(conversation)
                    .fetch_optional(&mut *tx)
                    .await?;
            if let Some(r) = &first_run {
                sqlx::query("SELECT 1 FROM assistant_turns WHERE run_id = $1 FOR NO KEY UPDATE")
                    .bind(r)
                    .execute(&mut *tx)
                    .await?;
            }
            let now = db_now(&mut tx).await?;
            let mut run: Option<String> = None;
            for (id, _) in answers {
                let row = sqlx::query(
                    "SELECT run_id, status, side FROM assistant_calls WHERE id = $1 AND conversation_id = $2",
                )
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
                    "UPDATE assistant_calls SET status = 'answered', output = $1, error = $2, answered_at = $3 \
                 WHERE id = $4",
                )
                .bind(output)
                .bind(error)
                .bind(&now)
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(refused)?;
            }
            let left: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM assistant_calls WHERE run_id = $1 AND status = 'pending'")
                    .bind(&run)
                    .fetch_one(&mut *tx)
                    .await?;
            let outcome = if left == 0 {
                let resumed = sqlx::query(
                "UPDATE assistant_turns SET state = 'running', updated_at = $1 WHERE run_id = $2 AND state = 'waiting'",
            )
            .bind(&now)
            .bind(&run)
            .execute(&mut *tx)
            .await?;
                if resumed.rows_affected() == 0 {
                    return Err(StoreError::Invalid(format!("results: turn {run} is not waiting for results")));
                }
                sqlx::query("UPDATE builds SET workspace = $1 WHERE id = $2")
                    .bind(answerer)
                    .bind(&run)
                    .execute(&mut *tx)
                    .await
                    .map_err(refused)?;
                Answered::RoundComplete { run }
            } else {
                Answered::Waiting { run, left: usize::try_from(left).unwrap_or(usize::MAX) }
            };
            Ok(outcome)
        }
        .await;
        settle(tx, answered).await
    }

    pub(super) async fn close_pending_pg(&self, conversation: &str, why: &str) -> Result<Vec<String>> {
        let mut tx = self.pool.begin().await?;
        let now = db_now(&mut tx).await?;
        // Locked in run order; a turn another transaction resumed meanwhile is re-checked once
        // its lock is free, and left out for no longer waiting.
        let rows = sqlx::query(
            "SELECT run_id, updated_at FROM assistant_turns WHERE conversation_id = $1 AND state = 'waiting' \
             ORDER BY run_id FOR NO KEY UPDATE",
        )
        .bind(conversation)
        .fetch_all(&mut *tx)
        .await?;
        let mut turns = rows
            .iter()
            .map(|r| Ok((r.try_get::<String, _>("updated_at")?, r.try_get::<String, _>("run_id")?)))
            .collect::<Result<Vec<_>>>()?;
        // Reported oldest first, as SQLite does.
        turns.sort();
        let runs: Vec<String> = turns.into_iter().map(|(_, run)| run).collect();
        close_calls(&mut tx, &runs, CallStatus::Cancelled, why, &now).await?;
        tx.commit().await?;
        Ok(runs)
    }

    pub(super) async fn expire_calls_pg(&self, now: &str) -> Result<Vec<(String, String)>> {
        const OVERDUE: &str = "t.state = 'waiting' AND EXISTS (SELECT 1 FROM assistant_calls c \
                               WHERE c.run_id = t.run_id AND c.status = 'pending' AND c.deadline < $1)";
        let mut tx = self.pool.begin().await?;
        // Lock the overdue turns, then look again with all of them held: a post that answered
        // some of their calls meanwhile is seen by this second, fresh statement.
        let locked: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT t.run_id FROM assistant_turns t WHERE {OVERDUE} ORDER BY t.run_id FOR NO KEY UPDATE OF t"
        ))
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
        if locked.is_empty() {
            tx.rollback().await?;
            return Ok(vec![]);
        }
        let rows = sqlx::query(&format!(
            "SELECT t.run_id, t.conversation_id FROM assistant_turns t WHERE t.run_id = ANY($2) AND {OVERDUE} \
             ORDER BY t.run_id"
        ))
        .bind(now)
        .bind(&locked)
        .fetch_all(&mut *tx)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            out.push((r.try_get::<String, _>("run_id")?, r.try_get::<String, _>("conversation_id")?));
        }
        let runs: Vec<String> = out.iter().map(|(r, _)| r.clone()).collect();
        close_calls(&mut tx, &runs, CallStatus::Expired, "expired: the page did not answer in time", now).await?;
        tx.commit().await?;
        Ok(out)
    }
}
