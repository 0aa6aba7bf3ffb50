//! [`RunLog`] on PostgreSQL. Each call is one transaction that first locks the run's row
//! (`FOR UPDATE`): writers of one run take turns, so `seq` stays gapless and unique however
//! many processes on however many machines write, and a writer that lost its lease finds out
//! in the very transaction that would have stored its events (the fence). The notice to other
//! processes (`pg_notify`) is part of the transaction: PostgreSQL sends it on commit, never
//! for a rolled-back write.

use super::PgStore;
use super::notify::{RUNS, run_notice};
use crate::rows::u;
use crate::runlog::{Draft, Finished, Logged, RunEnd, RunLog, check_end, follow};
use crate::types::{EndReason, RunStatus};
use crate::{Notifier, Result, StoreError};
use async_trait::async_trait;
use futures::stream::BoxStream;
use sqlx::{PgConnection, Postgres, QueryBuilder, Row};
use std::sync::Arc;
use wright_events::Event;

/// Rows per `INSERT`: 5 bound values a row, well under PostgreSQL's 65,535.
const ROWS_PER_INSERT: usize = 1000;

struct Head {
    status: RunStatus,
    last: u64,
}

/// Lock the run's row, read its status and last `seq`, and check that `writer` may write.
async fn head(tx: &mut PgConnection, run: &str, writer: Option<&str>, ending: bool) -> Result<Head> {
    let row = sqlx::query("SELECT status, worker FROM builds WHERE id = $1 FOR UPDATE")
        .bind(run)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("run {run}")))?;
    let status: String = row.try_get("status")?;
    let status = RunStatus::parse(&status).ok_or_else(|| StoreError::Corrupt(format!("run status `{status}`")))?;
    let last: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0)::BIGINT FROM events WHERE build_id = $1")
        .bind(run)
        .fetch_one(&mut *tx)
        .await?;
    let head = Head { status, last: u(last) };
    if status.is_final() {
        return if ending { Ok(head) } else { Err(StoreError::Ended(run.to_string())) };
    }
    let worker: Option<String> = row.try_get("worker")?;
    let holds = match writer {
        Some(w) => status == RunStatus::Running && worker.as_deref() == Some(w),
        None => worker.is_none(),
    };
    if !holds {
        return Err(StoreError::NotHolder(run.to_string()));
    }
    Ok(head)
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
    let stamped: Vec<Event> = events
        .into_iter()
        .zip(after + 1..)
        .map(|(d, seq)| Event { seq, build: run.to_string(), ts: d.ts, kind: d.kind })
        .collect();
    let mut logged = Vec::with_capacity(stamped.len());
    for chunk in stamped.chunks(ROWS_PER_INSERT) {
        let mut rows = Vec::with_capacity(chunk.len());
        for e in chunk {
            let l = Logged::new(e.clone());
            rows.push((e.seq as i64, l.json().to_string()));
            logged.push(Arc::new(l));
        }
        let mut q: QueryBuilder<Postgres> = QueryBuilder::new("INSERT INTO events (build_id, seq, ts, type, data) ");
        q.push_values(chunk.iter().zip(rows), |mut b, (e, (seq, json))| {
            b.push_bind(run).push_bind(seq).push_bind(e.ts.clone()).push_bind(e.kind.type_name()).push_bind(json);
        });
        q.build().execute(&mut *tx).await?;
    }
    if let (Some(first), Some(last)) = (logged.first(), logged.last()) {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(RUNS)
            .bind(run_notice(origin, run, first.event.seq, last.event.seq))
            .execute(&mut *tx)
            .await?;
    }
    Ok(logged)
}

fn parse_event(s: &str) -> Result<Event> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt(format!("event: {e}")))
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
        if events.iter().any(|d| matches!(d.kind, wright_events::EventKind::Complete { .. })) {
            return Err(StoreError::Invalid("`complete` is stored by finishing the run, not appended".into()));
        }
        if events.is_empty() {
            return Ok(vec![]);
        }
        let mut tx = self.pool.begin().await?;
        let head = head(&mut tx, run, writer, false).await?;
        let logged = insert(&mut tx, self.notifier.origin(), run, head.last, events).await?;
        tx.commit().await?;
        self.notifier.appended(run, &logged);
        Ok(logged)
    }

    async fn finish(&self, run: &str, writer: Option<&str>, end: RunEnd) -> Result<Finished> {
        check_end(&end)?;
        let mut tx = self.pool.begin().await?;
        let head = head(&mut tx, run, writer, true).await?;
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
        let RunEnd { last_words, record: f, complete } = end;
        let mut drafts: Vec<Draft> = last_words.into_iter().map(Draft::now).collect();
        drafts.push(Draft::now(complete));
        let logged = insert(&mut tx, self.notifier.origin(), run, head.last, drafts).await?;
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
        tx.commit().await?;
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
