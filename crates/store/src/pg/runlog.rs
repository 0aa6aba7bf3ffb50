//! [`RunLog`] on PostgreSQL. Each call is one transaction that first locks the run's row
//! (`FOR UPDATE`): writers of one run take turns, so `seq` stays gapless and unique however
//! many processes on however many machines write, and a writer that lost its lease finds out
//! in the very transaction that would have stored its events (the fence). The notice to other
//! processes (`pg_notify`) is part of the transaction: PostgreSQL sends it on commit, never
//! for a rolled-back write.

use super::notify::{RUNS, run_notice};
use super::{PgStore, settle};
use crate::rows::u;
use crate::runlog::{
    Draft, Finished, Head, Logged, RunEnd, RunLog, check_append, check_end, check_head, end_drafts, follow,
    parse_event, stamp,
};
use crate::types::{EndReason, RunStatus};
use crate::{Notifier, Result, StoreError};
use async_trait::async_trait;
use futures::stream::BoxStream;
use sqlx::{PgConnection, Postgres, QueryBuilder, Row};
use std::sync::Arc;
use wright_events::Event;

/// Rows per `INSERT`: 5 bound values a row, well under PostgreSQL's 65,535.
const ROWS_PER_INSERT: usize = 1000;

/// Lock the run's row, read its status, holder and last `seq`, and check that `writer` may
/// write ([`check_head`]).
async fn head(tx: &mut PgConnection, run: &str, writer: Option<&str>, ending: bool) -> Result<Head> {
    let row = sqlx::query(
        "SELECT status, worker, (lease_until IS NOT NULL AND lease_until < wright_now()) AS expired \
         FROM builds WHERE id = $1 FOR UPDATE",
    )
    .bind(run)
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("run {run}")))?;
    let last: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0)::BIGINT FROM events WHERE build_id = $1")
        .bind(run)
        .fetch_one(&mut *tx)
        .await?;
    let (status, worker): (String, Option<String>) = (row.try_get("status")?, row.try_get("worker")?);
    let expired: bool = row.try_get("expired")?;
    check_head(run, &status, worker.as_deref(), u(last), expired, writer, ending)
}

/// Store `events` as `seq` `after + 1…` of `run` and queue the notice, in the caller's
/// transaction.
pub(crate) async fn insert(
    tx: &mut PgConnection,
    origin: &str,
    run: &str,
    after: u64,
    events: Vec<Draft>,
) -> Result<Vec<Arc<Logged>>> {
    let logged = stamp(run, after, events);
    for chunk in logged.chunks(ROWS_PER_INSERT) {
        let mut q: QueryBuilder<Postgres> = QueryBuilder::new("INSERT INTO events (build_id, seq, ts, type, data) ");
        q.push_values(chunk, |mut b, l| {
            let e = &l.event;
            b.push_bind(run)
                .push_bind(e.seq.0 as i64)
                .push_bind(e.ts.clone())
                .push_bind(e.kind.type_name())
                .push_bind(l.json().to_string());
        });
        q.build().execute(&mut *tx).await?;
    }
    if let (Some(first), Some(last)) = (logged.first(), logged.last()) {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(RUNS)
            .bind(run_notice(origin, run, first.event.seq.0, last.event.seq.0))
            .execute(&mut *tx)
            .await?;
    }
    Ok(logged)
}

impl PgStore {
    pub(crate) async fn events_between(&self, run: &str, after: u64, upto: Option<u64>) -> Result<Vec<Event>> {
        let rows = sqlx::query("SELECT data FROM events WHERE build_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq")
            .bind(run)
            .bind(after as i64)
            .bind(upto.map_or(i64::MAX, |u| u as i64))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| parse_event(&r.try_get::<String, _>("data")?)).collect()
    }
}

#[async_trait]
impl RunLog for PgStore {
    async fn append(&self, run: &str, writer: Option<&str>, events: Vec<Draft>) -> Result<Vec<Arc<Logged>>> {
        check_append(&events)?;
        if events.is_empty() {
            return Ok(vec![]);
        }
        let mut tx = self.pool.begin().await?;
        let stored = async {
            let head = head(&mut tx, run, writer, false).await?;
            insert(&mut tx, self.notifier.origin(), run, head.last, events).await
        }
        .await;
        let logged = settle(tx, stored).await?;
        self.notifier.appended(run, &logged);
        Ok(logged)
    }

    async fn finish(&self, run: &str, writer: Option<&str>, end: RunEnd) -> Result<Finished> {
        check_end(&end)?;
        let mut tx = self.pool.begin().await?;
        let head = match head(&mut tx, run, writer, true).await {
            Ok(head) => head,
            Err(refused) => return settle(tx, Err(refused)).await,
        };
        if head.status.is_final() {
            let complete: Option<String> = sqlx::query_scalar(
                "SELECT data FROM events WHERE build_id = $1 AND type = 'complete' ORDER BY seq LIMIT 1",
            )
            .bind(run)
            .fetch_optional(&mut *tx)
            .await?;
            tx.rollback().await?;
            let complete = complete.as_deref().map(parse_event).transpose()?;
            return Ok(Finished::Already { complete, status: head.status });
        }
        let stored = async {
            let RunEnd { last_words, record: f, complete } = end;
            let logged =
                insert(&mut tx, self.notifier.origin(), run, head.last, end_drafts(last_words, complete)).await?;
            sqlx::query(
            "UPDATE builds SET status=$1, end_reason=$2, fix_attempts=$3, turns=$4, input_tokens=$5, output_tokens=$6, \
             cached_tokens=$7, cost_usd=$8, duration_ms=$9, files=$10, report=$11, finished_at=$12, lease_until=NULL \
             WHERE id=$13",
        )
        .bind(f.status.as_str())
        .bind(f.end_reason.map(EndReason::as_str))
        .bind(i64::from(f.fix_attempts))
        .bind(i64::from(f.turns))
        .bind(f.tokens.input_tokens as i64)
        .bind(f.tokens.output_tokens as i64)
        .bind(f.tokens.cached_tokens as i64)
        .bind(f.tokens.cost_usd)
        .bind(f.duration_ms as i64)
        .bind(serde_json::to_string(&f.files).map_err(|e| StoreError::Invalid(e.to_string()))?)
        .bind(&f.report)
        .bind(&f.finished_at)
        .bind(run)
        .execute(&mut *tx)
        .await?;
            Ok(logged)
        }
        .await;
        let logged = settle(tx, stored).await?;
        self.notifier.appended(run, &logged);
        self.notifier.ended(run);
        Ok(Finished::Now(logged))
    }

    async fn events(&self, run: &str, after: u64) -> Result<Vec<Event>> {
        self.events_between(run, after, None).await
    }

    async fn has_ended(&self, run: &str) -> Result<bool> {
        let status: Option<String> =
            sqlx::query_scalar("SELECT status FROM builds WHERE id = $1").bind(run).fetch_optional(&self.pool).await?;
        Ok(status.as_deref().and_then(RunStatus::parse).is_some_and(RunStatus::is_final))
    }

    fn subscribe(&self, run: &str, after: u64) -> BoxStream<'static, Result<Arc<Logged>>> {
        follow(self.clone(), run, after)
    }

    fn notifier(&self) -> Arc<dyn Notifier> {
        self.notifier.clone()
    }
}
