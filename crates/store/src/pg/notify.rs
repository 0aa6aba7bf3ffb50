//! [`Notifier`] across processes: PostgreSQL's `LISTEN`/`NOTIFY`.
//!
//! Every write that someone may wait for sends a notice inside its own transaction (so it goes
//! out on commit, and never for a rolled-back write): `wright_runs` with `origin run first
//! last` for events, `wright_signals` for a queued build or a cancel. Each process keeps one
//! listening connection. A notice of another process's events is a wake-up, not the data: the
//! process reads those events from the table once and hands them to all its followers of that
//! run through a [`LocalNotifier`]. Notices are lost while the listening connection is down,
//! so after a reconnect every local follower is told to read the store again (its channel is
//! closed, which makes it re-read `seq > last`), the workers are woken to look at the queue,
//! and the followers' own safety-net read ([`crate::SAFETY_NET`]) covers the rest.

use super::PgStore;
use crate::notify::{LocalNotifier, Notifier, Signal};
use crate::runlog::Logged;
use crate::{Result, StoreError};
use sqlx::PgPool;
use sqlx::postgres::PgListener;
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::broadcast;

/// The channel of appended events.
pub(crate) const RUNS: &str = "wright_runs";
/// The channel of [`Signal`]s.
pub(crate) const SIGNALS: &str = "wright_signals";

/// The payload of a `wright_runs` notice.
pub(crate) fn run_notice(origin: &str, run: &str, first: u64, last: u64) -> String {
    format!("{origin} {run} {first} {last}")
}

/// The payload of a `wright_signals` notice.
pub(crate) fn signal_notice(origin: &str, signal: &Signal) -> String {
    match signal {
        Signal::Queued => format!("{origin} queued"),
        Signal::Cancel(run) => format!("{origin} cancel {run}"),
    }
}

/// A parsed notice from another process.
#[derive(Debug, PartialEq)]
enum Notice {
    Run { run: String, first: u64, last: u64 },
    Signal(Signal),
}

/// `None` for a notice of this process (already delivered here) or one that does not parse.
fn parse(channel: &str, payload: &str, me: &str) -> Option<Notice> {
    let mut parts = payload.split(' ');
    let origin = parts.next()?;
    if origin == me {
        return None;
    }
    match channel {
        RUNS => {
            let run = parts.next()?.to_string();
            let first = parts.next()?.parse().ok()?;
            let last = parts.next()?.parse().ok()?;
            Some(Notice::Run { run, first, last })
        }
        SIGNALS => match (parts.next()?, parts.next()) {
            ("queued", _) => Some(Notice::Signal(Signal::Queued)),
            ("cancel", Some(run)) => Some(Notice::Signal(Signal::Cancel(run.to_string()))),
            _ => None,
        },
        _ => None,
    }
}

/// [`Notifier`] for a [`PgStore`]: local fan-out, plus a listener for other processes' notices.
pub struct PgNotifier {
    local: LocalNotifier,
    /// This process's name in notices (random per store), so it skips its own.
    origin: String,
}

impl PgNotifier {
    /// Start the listener task; it ends when the notifier is dropped.
    pub(crate) async fn start(pool: PgPool) -> Result<Arc<Self>> {
        let origin = crate::new_id("p");
        let me = Arc::new(Self { local: LocalNotifier::default(), origin });
        // The first connection is made here, so a database that refuses LISTEN fails the open.
        let listener = connect(&pool).await.map_err(StoreError::Database)?;
        tokio::spawn(listen(Arc::downgrade(&me), pool, listener));
        Ok(me)
    }

    pub(crate) fn origin(&self) -> &str {
        &self.origin
    }
}

async fn connect(pool: &PgPool) -> sqlx::Result<PgListener> {
    let mut l = PgListener::connect_with(pool).await?;
    l.listen_all([RUNS, SIGNALS]).await?;
    Ok(l)
}

/// The listening loop: hand notices on until the notifier is gone; reconnect with backoff.
async fn listen(me: Weak<PgNotifier>, pool: PgPool, first: PgListener) {
    let mut listener = Some(first);
    let mut backoff = Duration::from_millis(100);
    loop {
        let Some(n) = me.upgrade() else { return };
        let l = match listener.as_mut() {
            Some(l) => l,
            None => match connect(&pool).await {
                Ok(l) => {
                    tracing::info!("listening to the store's notices again");
                    backoff = Duration::from_millis(100);
                    // Notices sent while nobody listened are lost: everyone reads again.
                    n.resync();
                    listener.insert(l)
                }
                Err(e) => {
                    drop(n);
                    tracing::warn!("listening to the store's notices: {e}; trying again in {backoff:?}");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                    continue;
                }
            },
        };
        // Wake up now and then to notice that the store was dropped.
        drop(n);
        let next = tokio::time::timeout(Duration::from_secs(1), l.try_recv()).await;
        let Some(n) = me.upgrade() else { return };
        match next {
            Err(_) => {}
            Ok(Ok(Some(first))) => {
                let mut batch = vec![first];
                while batch.len() < 512
                    && let Some(more) = l.next_buffered()
                {
                    batch.push(more);
                }
                deliver(&n, &pool, batch).await;
            }
            Ok(Ok(None)) => {
                tracing::warn!("the store's notice connection was lost; reconnecting");
                listener = None;
            }
            Ok(Err(e)) => {
                tracing::warn!("the store's notice connection failed: {e}; reconnecting");
                listener = None;
                tokio::time::sleep(backoff).await;
            }
        }
    }
}

/// Hand a batch of notices on: signals as they are, each followed run's events read once.
async fn deliver(n: &PgNotifier, pool: &PgPool, batch: Vec<sqlx::postgres::PgNotification>) {
    let mut runs: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for note in &batch {
        match parse(note.channel(), note.payload(), &n.origin) {
            Some(Notice::Signal(s)) => n.local.signal(s),
            Some(Notice::Run { run, first, last }) if n.local.is_followed(&run) => {
                let e = runs.entry(run).or_insert((first, last));
                e.0 = e.0.min(first);
                e.1 = e.1.max(last);
            }
            Some(Notice::Run { .. }) | None => {}
        }
    }
    for (run, (first, last)) in runs {
        let rows: sqlx::Result<Vec<String>> =
            sqlx::query_scalar("SELECT data FROM events WHERE build_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq")
                .bind(&run)
                .bind(first as i64)
                .bind(last as i64)
                .fetch_all(pool)
                .await;
        match rows {
            Ok(rows) => {
                let events: Vec<Arc<Logged>> = rows
                    .iter()
                    .filter_map(|s| serde_json::from_str(s).ok())
                    .map(|e| Arc::new(Logged::new(e)))
                    .collect();
                let ended = events.iter().any(|l| l.is_complete());
                n.local.appended(&run, &events);
                if ended {
                    n.local.ended(&run);
                }
            }
            Err(e) => {
                // The followers' safety net reads them; closing their channel makes it sooner.
                tracing::warn!(run, "reading notified events: {e}");
                n.local.ended(&run);
            }
        }
    }
}

impl PgNotifier {
    /// Everyone here reads the store again: followers (their channels close) and workers.
    fn resync(&self) {
        self.local.close_all();
        self.local.signal(Signal::Queued);
    }
}

impl Notifier for PgNotifier {
    fn appended(&self, run: &str, events: &[Arc<Logged>]) {
        self.local.appended(run, events);
    }

    fn follow(&self, run: &str) -> broadcast::Receiver<Arc<Logged>> {
        self.local.follow(run)
    }

    fn ended(&self, run: &str) {
        self.local.ended(run);
    }

    fn signal(&self, signal: Signal) {
        self.local.signal(signal);
    }

    fn signals(&self) -> broadcast::Receiver<Signal> {
        self.local.signals()
    }
}

impl PgStore {
    /// Queue `signal`'s notice for the other processes in the caller's transaction.
    pub(crate) async fn notify_in(&self, tx: &mut sqlx::PgConnection, signal: &Signal) -> Result<()> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(SIGNALS)
            .bind(signal_notice(&self.notifier.origin, signal))
            .execute(&mut *tx)
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_round_trip_and_a_process_skips_its_own() {
        let p = run_notice("p-a", "b-1", 3, 7);
        assert_eq!(parse(RUNS, &p, "p-b"), Some(Notice::Run { run: "b-1".into(), first: 3, last: 7 }));
        assert_eq!(parse(RUNS, &p, "p-a"), None);
        let q = signal_notice("p-a", &Signal::Queued);
        assert_eq!(parse(SIGNALS, &q, "p-b"), Some(Notice::Signal(Signal::Queued)));
        let c = signal_notice("p-a", &Signal::Cancel("b-2".into()));
        assert_eq!(parse(SIGNALS, &c, "p-b"), Some(Notice::Signal(Signal::Cancel("b-2".into()))));
        assert_eq!(parse(SIGNALS, "p-a nonsense", "p-b"), None);
        assert_eq!(parse(RUNS, "p-a b-1 x 2", "p-b"), None);
        assert_eq!(parse("other", &p, "p-b"), None);
    }
}
