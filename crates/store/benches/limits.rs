//! What the shared limits cost a chat message: the store's decision (the user's turn slot and
//! two hourly quotas, as an app visitor's message takes them) and giving the slot back, on
//! SQLite (a file, WAL, as `wright serve` opens it) and PostgreSQL (Debian's binaries started
//! for the bench, tuned for tests: no fsync, so commits cost less than on a durable server).
//! Run: `cargo bench -p wright-store --bench limits`.
//!
//! Figures: 2,000 messages from 200 users, one after another (the latency one message adds),
//! then the same 2,000 from 8 tasks at once (throughput, as a busy server sees it): p50/p99
//! of admit, of release, and messages a second. Then a route's hourly limit (`[limits]`): an
//! explanation's admit (its one-at-a-time slot and its hourly quota, one transaction) one
//! after another, as µs per request and requests a second, and the limits route's read
//! (`quota_usage` of three routes and `runs_used` of two run kinds: what `GET /api/limits`
//! asks the store).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a panic is the report
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

use std::sync::Arc;
use std::time::{Duration, Instant};
use wright_events::RunKind;
use wright_store::{Admit, PgStore, Quota, SlotAsk, SqliteStore, Store};

const MESSAGES: usize = 2_000;
const USERS: usize = 200;
const TASKS: usize = 8;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

/// One message of user `u`: take the turn and count it, then give the turn back.
async fn message(store: &dyn Store, u: usize, i: usize) -> (Duration, Duration) {
    let slot = SlotAsk { key: format!("turn:u-{u}"), holder: format!("h-{i}"), lease: Duration::from_secs(30) };
    let quotas = [Quota::per_hour(format!("chat:u-{u}"), 1_000), Quota::per_hour("key:ek-bench", 100_000)];
    let t0 = Instant::now();
    let decided = store.admit(Some(&slot), &quotas).await.unwrap();
    let admit = t0.elapsed();
    assert_eq!(decided, Admit::Admitted);
    let t1 = Instant::now();
    store.release_slot(&slot.key, &slot.holder).await.unwrap();
    (admit, t1.elapsed())
}

async fn run(name: &str, store: Arc<dyn Store>) {
    let (mut admits, mut releases) = (Vec::new(), Vec::new());
    for i in 0..MESSAGES {
        let (a, r) = message(store.as_ref(), i % USERS, i).await;
        admits.push(a);
        releases.push(r);
    }
    admits.sort();
    releases.sort();
    println!(
        "{name}: one at a time: admit p50 {:?} p99 {:?} · release p50 {:?} p99 {:?}",
        percentile(&admits, 0.5),
        percentile(&admits, 0.99),
        percentile(&releases, 0.5),
        percentile(&releases, 0.99)
    );
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut admits = Vec::new();
            for i in (t..MESSAGES).step_by(TASKS) {
                admits.push(message(store.as_ref(), (i % USERS) + USERS, MESSAGES + i).await.0);
            }
            admits
        }));
    }
    let mut admits = Vec::new();
    for t in tasks {
        admits.extend(t.await.unwrap());
    }
    let took = t0.elapsed();
    admits.sort();
    println!(
        "{name}: {TASKS} at once: admit p50 {:?} p99 {:?} · {:.0} messages/s",
        percentile(&admits, 0.5),
        percentile(&admits, 0.99),
        MESSAGES as f64 / took.as_secs_f64()
    );
}

/// An explanation's limits, `MESSAGES` times over `USERS` users: slot and hourly quota taken
/// together, then the slot given back; then the limits route's read as often.
async fn routes(name: &str, store: Arc<dyn Store>) {
    let mut admits = Vec::with_capacity(MESSAGES);
    let t0 = Instant::now();
    for i in 0..MESSAGES {
        let u = i % USERS;
        let slot = SlotAsk { key: format!("explain:r-{u}"), holder: format!("x-{i}"), lease: Duration::from_secs(30) };
        let quota = [Quota::per_hour(format!("explanations:r-{u}"), 1_000)];
        let t = Instant::now();
        assert_eq!(store.admit(Some(&slot), &quota).await.unwrap(), Admit::Admitted);
        admits.push(t.elapsed());
        store.release_slot(&slot.key, &slot.holder).await.unwrap();
    }
    let took = t0.elapsed();
    let mut reads = Vec::with_capacity(MESSAGES);
    for i in 0..MESSAGES {
        let u = i % USERS;
        let quotas = ["explanations", "chat", "assistant"].map(|k| Quota::per_hour(format!("{k}:r-{u}"), 1_000));
        let t = Instant::now();
        store.quota_usage(&quotas).await.unwrap();
        for kind in [RunKind::Build, RunKind::Task] {
            store.runs_used(&format!("r-{u}"), kind, Duration::from_secs(3600)).await.unwrap();
        }
        reads.push(t.elapsed());
    }
    admits.sort();
    reads.sort();
    let mean = admits.iter().sum::<Duration>() / MESSAGES as u32;
    println!(
        "{name}: a route's limit (slot + hourly quota): admit p50 {:?} p99 {:?} mean {:.0} µs · {:.0} requests/s \
         (with the slot's release) · limits route read p50 {:?} p99 {:?}",
        percentile(&admits, 0.5),
        percentile(&admits, 0.99),
        mean.as_secs_f64() * 1e6,
        MESSAGES as f64 / took.as_secs_f64(),
        percentile(&reads, 0.5),
        percentile(&reads, 0.99),
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("wright.db").display());
    let sqlite: Arc<dyn Store> = Arc::new(SqliteStore::open(&url).await.unwrap());
    run("sqlite", sqlite.clone()).await;
    routes("sqlite", sqlite).await;
    let pg = wright_pgtemp::PgServer::shared().expect("a throwaway PostgreSQL (Debian's `postgresql` package)");
    let url = pg.database().unwrap();
    let pg: Arc<dyn Store> = Arc::new(PgStore::open_with(&url, 16).await.unwrap());
    run("postgres", pg.clone()).await;
    routes("postgres", pg).await;
}
