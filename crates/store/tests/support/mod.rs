//! The shared store suite: each test is an `async fn(Arc<dyn Store>)`, run once on SQLite and
//! once on PostgreSQL (a real server from Debian's packages, started for the test binary;
//! a fresh database per test) by [`both!`].
#![allow(dead_code)]

use std::sync::Arc;
use wright_store::{PgStore, SqliteStore, Store};

/// A fresh in-memory SQLite store.
pub async fn sqlite() -> Arc<dyn Store> {
    Arc::new(SqliteStore::memory().await.unwrap())
}

/// A fresh PostgreSQL store (its own empty database).
pub async fn postgres() -> Arc<dyn Store> {
    Arc::new(pg().await)
}

/// A fresh PostgreSQL store as its own type.
pub async fn pg() -> PgStore {
    let url = postgres_url();
    PgStore::open_with(&url, 8).await.unwrap()
}

/// A new empty database on the shared test server.
pub fn postgres_url() -> String {
    wright_pgtemp::PgServer::shared().unwrap().database().unwrap()
}

/// Run each `async fn name(store: Arc<dyn Store>)` on both backends: `sqlite::name` and
/// `postgres::name`.
#[macro_export]
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::support::sqlite().await).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::support::postgres().await).await
                }
            )*
        }
    };
}
