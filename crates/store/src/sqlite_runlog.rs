//! [`RunLog`] on SQLite. Each call is one `BEGIN IMMEDIATE` transaction: it takes the write
//! lock before it reads the run's last `seq` and holder, so two writers (threads, processes)
//! can never number two events alike, and a writer that lost the run finds out in the same
//! transaction that would have stored its events.

use crate::rows::u;
use crate::runlog::{
    Draft, Finished, Head, Logged, RunEnd, RunLog, check_append, check_end, check_head, end_drafts, follow,
    parse_event, stamp,
};
use crate::sqlite::SqliteStore;
use crate::types::{EndReason, RunStatus};
use crate::{Notifier, Result, StoreError};
use async_trait::async_trait;
use futures::stream::BoxStream;
use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};
use std::sync::Arc;
use wright_events::Event;

/// Rows per `INSERT`: well under SQLite's limit of bound values (5 a row).
const ROWS_PER_INSERT: usize = 200;

/// Read the run's status, holder and last `seq`, and check that `writer` may write to it
/// ([`check_head`]).
async fn head(tx: &mut SqliteConnection, run: &str, writer: Option<&str>, ending: bool) -> Result<Head> {
    let row = sqlx::query(
        "SELECT status, worker, (SELECT COALESCE(MAX(seq), 0) FROM events WHERE build_id = ?1) AS last, \
         (lease_until IS NOT NULL AND lease_until < ?2) AS expired FROM builds WHERE id = ?1",
    )
    .bind(run)
    .bind(crate::now())
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| StoreError::NotFound(format!("run {run}")))?;
    let (status, worker): (String, Option<String>) = (row.try_get("status")?, row.try_get("worker")?);
    let expired = row.try_get::<i64, _>("expired")? != 0;
    check_head(run, &status, worker.as_deref(), u(row.try_get("last")?), expired, writer, ending)
}

/// Store `events` as `seq` `after + 1…` of `run`, in the caller's transaction.
pub(crate) async fn insert(
    tx: &mut SqliteConnection,
    run: &str,
    after: u64,
    events: Vec<Draft>,
) -> Result<Vec<Arc<Logged>>> {
    let logged = stamp(run, after, events);
    for chunk in logged.chunks(ROWS_PER_INSERT) {
        let mut q: QueryBuilder<Sqlite> = QueryBuilder::new("INSERT INTO events (build_id, seq, ts, type, data) ");
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
    Ok(logged)
}

impl SqliteStore {
    pub(crate) async fn log_append(
        &self,
        run: &str,
        writer: Option<&str>,
        events: Vec<Draft>,
    ) -> Result<Vec<Arc<Logged>>> {
        check_append(&events)?;
        if events.is_empty() {
            return Ok(vec![]);
        }
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let head = head(&mut tx, run, writer, false).await?;
        let logged = insert(&mut tx, run, head.last, events).await?;
        tx.commit().await?;
        self.notifier.appended(run, &logged);
        Ok(logged)
    }

    pub(crate) async fn log_finish(&self, run: &str, writer: Option<&str>, end: RunEnd) -> Result<Finished> {
        check_end(&end)?;
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let head = head(&mut tx, run, writer, true).await?;
        if head.status.is_final() {
            let complete =
                sqlx::query("SELECT data FROM events WHERE build_id = ? AND type = 'complete' ORDER BY seq LIMIT 1")
                    .bind(run)
                    .fetch_optional(&mut *tx)
                    .await?
                    .map(|r| r.try_get::<String, _>("data"))
                    .transpose()?
                    .as_deref()
                    .map(parse_event)
                    .transpose()?;
            tx.rollback().await?;
            return Ok(Finished::Already { complete, status: head.status });
        }
        let RunEnd { last_words, record: f, complete } = end;
        let logged = insert(&mut tx, run, head.last, end_drafts(last_words, complete)).await?;
        sqlx::query(
            "UPDATE builds SET status=?, end_reason=?, fix_attempts=?, turns=?, input_tokens=?, output_tokens=?, \
             cached_tokens=?, cost_usd=?, duration_ms=?, files=?, report=?, finished_at=?, lease_until=NULL WHERE id=?",
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

    pub(crate) async fn log_has_ended(&self, run: &str) -> Result<bool> {
        let status: Option<String> = sqlx::query("SELECT status FROM builds WHERE id = ?")
            .bind(run)
            .fetch_optional(&self.read)
            .await?
            .map(|r| r.try_get("status"))
            .transpose()?;
        Ok(status.as_deref().and_then(RunStatus::parse).is_some_and(RunStatus::is_final))
    }
}

#[async_trait]
impl RunLog for SqliteStore {
    async fn append(&self, run: &str, writer: Option<&str>, events: Vec<Draft>) -> Result<Vec<Arc<Logged>>> {
        self.log_append(run, writer, events).await
    }

    async fn finish(&self, run: &str, writer: Option<&str>, end: RunEnd) -> Result<Finished> {
        self.log_finish(run, writer, end).await
    }

    async fn events(&self, run: &str, after: u64) -> Result<Vec<Event>> {
        let rows = sqlx::query("SELECT data FROM events WHERE build_id = ? AND seq > ? ORDER BY seq")
            .bind(run)
            .bind(after as i64)
            .fetch_all(&self.read)
            .await?;
        rows.iter().map(|r| parse_event(&r.try_get::<String, _>("data")?)).collect()
    }

    async fn has_ended(&self, run: &str) -> Result<bool> {
        self.log_has_ended(run).await
    }

    fn subscribe(&self, run: &str, after: u64) -> BoxStream<'static, Result<Arc<Logged>>> {
        follow(self.clone(), run, after)
    }

    fn notifier(&self) -> Arc<dyn Notifier> {
        self.notifier.clone()
    }
}
