//! The shared store: PostgreSQL, for many API servers and workers on many machines.
//!
//! Same records and behaviour as [`crate::SqliteStore`] (one test suite runs on both), with
//! what sharing needs: leases by the database's clock (`wright_now()`), claims with
//! `FOR UPDATE SKIP LOCKED`, per-owner limits decided under a transaction-scoped advisory lock,
//! appends fenced by the lease holder in the same transaction, and a [`PgNotifier`] that fans
//! commits out to every process over `LISTEN`/`NOTIFY`.

mod apps;
mod assistant;
mod assistant_calls;
mod chat;
mod classes;
mod experiments;
mod feedback;
mod limits;
mod maintenance;
mod notes;
mod notify;
mod preview;
mod queue;
mod runlog;
mod spend;
mod store;
mod users;

pub use notify::PgNotifier;

use crate::{Result, StoreError};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions as _, PgPool};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// Commit `tx` if `done` is `Ok`; otherwise roll it back before handing the error on. sqlx
/// rolls back a transaction dropped unfinished only once its connection goes back to the pool,
/// in a task of its own, and until then the transaction's row and advisory locks stand: a
/// claim (`SKIP LOCKED`) made right after a refused append would pass that run by.
pub(crate) async fn settle<T>(tx: sqlx::Transaction<'_, sqlx::Postgres>, done: Result<T>) -> Result<T> {
    match done {
        Ok(value) => {
            tx.commit().await?;
            Ok(value)
        }
        Err(e) => {
            // A rollback that fails leaves a broken connection, which the pool closes: that
            // ends the transaction too. The caller needs the first error, not this one.
            if let Err(rollback) = tx.rollback().await {
                tracing::debug!(error = %rollback, "rolling back a refused transaction failed");
            }
            Err(e)
        }
    }
}

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations_pg");

/// The longest one statement may run on the server (`statement_timeout`). wright's statements
/// take milliseconds; one that waits (on a lock a frozen process holds, a server under
/// trouble) is ended by PostgreSQL with an error and nothing changed, well before the callers
/// that bound their own waits give up (the server's workers bound a claim, a reaper pass and a
/// restart to a little more than this), instead of holding a pooled connection for good.
/// Migrations run without it (an index on a large table may take longer).
pub const STATEMENT_TIMEOUT: &str = "30s";

/// Server-side TCP keepalives: PostgreSQL probes a silent client's socket after this many
/// seconds idle, every `KEEPALIVE_INTERVAL` seconds, `KEEPALIVE_COUNT` times, so a vanished
/// host's session (and its locks) ends within about 25 s. sqlx 0.8 has no client-side TCP
/// keepalives (launchbadge/sqlx#3540 is open), so wright's side of a silent connection is
/// covered by its callers' own timeouts instead: lease renewals and cancel checks are bounded
/// by the lease's deadline, claims, reaper passes and restarts by [`STATEMENT_TIMEOUT`] and a
/// margin, and the pool's acquire by 30 s.
const KEEPALIVE_IDLE: &str = "10";
const KEEPALIVE_INTERVAL: &str = "5";
const KEEPALIVE_COUNT: &str = "3";

/// [`crate::Store`] on PostgreSQL.
#[derive(Clone)]
pub struct PgStore {
    pub(crate) pool: PgPool,
    pub(crate) notifier: Arc<PgNotifier>,
}

impl PgStore {
    /// Connect to `url` (`postgres://user@host:port/db`), apply migrations (one process at a
    /// time: sqlx holds an advisory lock while it migrates) and start listening for notices.
    pub async fn open(url: &str) -> Result<Self> {
        Self::open_with(url, 16).await
    }

    /// As [`PgStore::open`] with at most `connections` pooled connections (plus the listener's).
    pub async fn open_with(url: &str, connections: u32) -> Result<Self> {
        // A process frozen (SIGSTOP, a paused machine) or gone without closing its socket
        // inside a transaction would keep its row locks, and the builds behind them would be
        // skipped by every reaper: the server ends such a session after a few seconds idle in
        // a transaction (ours take milliseconds), and probes a silent client's socket.
        let options = PgConnectOptions::from_str(url)?.application_name("wright").options([
            ("idle_in_transaction_session_timeout", "5s"),
            ("statement_timeout", STATEMENT_TIMEOUT),
            ("tcp_keepalives_idle", KEEPALIVE_IDLE),
            ("tcp_keepalives_interval", KEEPALIVE_INTERVAL),
            ("tcp_keepalives_count", KEEPALIVE_COUNT),
        ]);
        // One plain connection first: a wrong host, port, user or database is said at once,
        // in PostgreSQL's words, instead of as a pool's timeout. It then applies the
        // migrations, without the statement timeout.
        let mut first = options.connect().await.map_err(|e| {
            StoreError::Invalid(format!("cannot connect to PostgreSQL ({e}); is it running, and is the URL right?"))
        })?;
        sqlx::query("SET statement_timeout = 0").execute(&mut first).await?;
        MIGRATOR.run(&mut first).await?;
        let _ = sqlx::Connection::close(first).await;
        let pool = PgPoolOptions::new()
            .max_connections(connections.max(2))
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(options)
            .await?;
        let notifier = PgNotifier::start(pool.clone()).await?;
        Ok(Self { pool, notifier })
    }

    /// The pool (for benches and maintenance).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

/// A URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.find(':') {
                Some(c) => format!("{}{}:***{}", &url[..s + 3], &creds[..c], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_stay_out_of_messages() {
        assert_eq!(redact("postgres://w:secret@db:5432/wright"), "postgres://w:***@db:5432/wright");
        assert_eq!(redact("postgres://w@db/wright"), "postgres://w@db/wright");
        assert_eq!(redact("postgres://db/wright"), "postgres://db/wright");
    }
}
