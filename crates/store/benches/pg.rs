//! The shared store on PostgreSQL: how fast workers take builds from the queue, and how soon
//! an event stored by one process reaches a follower in another.
//! Run: `cargo bench -p wright-store --bench pg` (starts a throwaway PostgreSQL from Debian's
//! binaries, tuned for tests: no fsync, so commits cost less than on a durable server).
//!
//! Figures:
//! 1. Claims per second: 2,000 builds queued, then 8 claimers (tasks sharing one `PgStore`, as
//!    a worker process's slots do) claim with the default lease until the queue is empty.
//! 2. Fan-out across processes: two `PgStore`s on one database (two servers, each with its own
//!    pool and `LISTEN` connection); a follower subscribed on B; 1,000 events appended on A one
//!    at a time. Latency from just before `append` on A to the event's arrival on B (commit,
//!    `NOTIFY`, B's read of the rows), p50/p99/max; and the `append` alone for comparison.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a panic is the report
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

use futures::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use wright_events::{EventKind, Level, RunKind};
use wright_store::{
    BuildArgs, Draft, Enqueued, Lang, NewBuild, PgStore, QueuedBuild, QueuedJob, RunLog, Store, Template,
};

const QUEUED: usize = 2_000;
const CLAIMERS: usize = 8;
const EVENTS: usize = 1_000;
/// `wright serve`'s default lease.
const LEASE: Duration = Duration::from_secs(10);

fn new_build(id: &str) -> NewBuild {
    NewBuild {
        id: id.into(),
        kind: RunKind::Build,
        parent_id: None,
        prompt: format!("bench {id}"),
        template: Some(Template::Static),
        lang: Lang::En,
        provider: "scripted".into(),
        model: "m".into(),
        workspace: format!("/tmp/bench/{id}"),
        started_at: wright_store::now(),
    }
}

fn queued(i: usize) -> QueuedBuild {
    let id = format!("b-{i:06}");
    QueuedBuild {
        build: new_build(&id),
        owner: format!("u-{}", i % 50),
        job: QueuedJob::Build(BuildArgs {
            prompt: "bench".into(),
            template: Some(Template::Static),
            ..Default::default()
        }),
        idempotency_key: None,
        dedup_key: format!("d-{i}"),
        preview_key: format!("k-{i}"),
        first_event: None,
        limits: None,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn summary(name: &str, mut samples: Vec<Duration>) {
    samples.sort_unstable();
    println!(
        "{name} p50: {} p99: {} max: {} (n={})",
        ms(percentile(&samples, 0.50)),
        ms(percentile(&samples, 0.99)),
        ms(*samples.last().unwrap()),
        samples.len()
    );
}

async fn claims(url: &str) {
    let store = Arc::new(PgStore::open(url).await.expect("store"));
    let t = Instant::now();
    for i in 0..QUEUED {
        assert!(matches!(store.enqueue_build(&queued(i)).await.expect("enqueue"), Enqueued::New));
    }
    let enqueue = t.elapsed();
    println!(
        "enqueue: {QUEUED} builds in {:.2} s, {:.0} builds/s (one at a time)",
        enqueue.as_secs_f64(),
        QUEUED as f64 / enqueue.as_secs_f64()
    );
    let claimed = Arc::new(AtomicU64::new(0));
    let t = Instant::now();
    let tasks: Vec<_> = (0..CLAIMERS)
        .map(|n| {
            let (store, claimed) = (store.clone(), claimed.clone());
            tokio::spawn(async move {
                let name = format!("bench-w{n}");
                let mut latencies = Vec::new();
                loop {
                    let s = Instant::now();
                    match store.claim_build(&name, LEASE).await.expect("claim") {
                        Some(_) => {
                            latencies.push(s.elapsed());
                            claimed.fetch_add(1, Ordering::Relaxed);
                        }
                        None => return latencies,
                    }
                }
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.expect("claimer"));
    }
    let took = t.elapsed();
    let n = claimed.load(Ordering::Relaxed);
    assert_eq!(n as usize, QUEUED, "every queued build claimed exactly once");
    assert_eq!(store.queue_depth().await.expect("depth"), 0);
    println!(
        "claims/s: {:.0} ({n} claims by {CLAIMERS} claimers in {:.2} s)",
        n as f64 / took.as_secs_f64(),
        took.as_secs_f64()
    );
    summary("claim", latencies);
}

async fn fan_out(url: &str) {
    let a = PgStore::open(url).await.expect("store A");
    let b = PgStore::open(url).await.expect("store B");
    let run = "fan-out";
    a.create_build(&new_build(run)).await.expect("run");
    let mut follower = b.subscribe(run, 0);
    let event = |i: usize| Draft::now(EventKind::Status { message: format!("step {i}"), level: Level::Info });
    // Warm up the pools and the listener.
    for i in 0..50 {
        a.append(run, None, vec![event(i)]).await.expect("append");
        follower.next().await.expect("live").expect("event");
    }
    let (mut delivered, mut appended) = (Vec::with_capacity(EVENTS), Vec::with_capacity(EVENTS));
    for i in 0..EVENTS {
        let t = Instant::now();
        let stored = a.append(run, None, vec![event(i)]).await.expect("append");
        appended.push(t.elapsed());
        let got = tokio::time::timeout(Duration::from_secs(10), follower.next())
            .await
            .expect("the event reached B")
            .expect("live")
            .expect("event");
        delivered.push(t.elapsed());
        assert_eq!(got.event.seq, stored[0].event.seq);
    }
    summary("append", appended);
    summary("fan-out", delivered);
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let pg = wright_pgtemp::PgServer::start().expect("a throwaway PostgreSQL");
    println!("PostgreSQL: a throwaway local server (fsync and synchronous_commit off), over TCP on 127.0.0.1");
    rt.block_on(async {
        claims(&pg.database().expect("db")).await;
        fan_out(&pg.database().expect("db")).await;
    });
}
