//! Event write throughput of the SQLite store, the path every build event takes.
//! Run: `cargo bench -p wright-store --bench store`.
//!
//! Three figures: `append_event` awaited one by one (the store alone), events emitted through
//! an `Emitter` whose first sink is the `PersistSink` (persist-before-emit, what a build does),
//! and 16 runs emitting at once from tokio tasks: events/s and the time one `emit` takes
//! (p50/p99). How a run's events get persisted is [`persisting_emitter`], the one place to
//! switch to another persistence API.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;
use std::time::{Duration, Instant};
use wright_events::{Emitter, EventKind, Level, Stream};
use wright_store::{NewBuild, PersistSink, Store};

const EVENTS: u64 = 20_000;
/// Runs emitting at once, and events each of them emits.
const RUNS: usize = 16;
const PER_RUN: u64 = 1_000;

/// The emitter a run emits through, persisting each event before anyone else sees it: today a
/// `PersistSink` of its own per run, as a build gets.
fn persisting_emitter(store: &Arc<dyn Store>, run: &str) -> Emitter {
    Emitter::new(run, vec![Arc::new(PersistSink::new(store.clone()).expect("sink"))])
}

/// One event of a run's stream: mostly command output, a status line every tenth.
fn event(i: u64) -> EventKind {
    if i.is_multiple_of(10) {
        EventKind::Status { message: format!("step {i}"), level: Level::Info }
    } else {
        EventKind::CommandOutput { stream: Stream::Stdout, chunk: format!("line {i} of test output\n") }
    }
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    sorted[((p / 100.0) * (sorted.len() - 1) as f64).round() as usize].as_secs_f64() * 1e6
}

/// [`RUNS`] runs (builds created in a fresh store) each emit [`PER_RUN`] events from their own
/// task on a multi-thread runtime, all at once.
fn concurrent_runs() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let workers = rt.metrics().num_workers();
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let store: Arc<dyn Store> = rt.block_on(wright_store::open(&url)).expect("store");
    let runs: Vec<String> = (0..RUNS).map(|i| format!("run-{i:02}")).collect();
    rt.block_on(async {
        for id in &runs {
            let build = NewBuild {
                id: id.clone(),
                parent_id: None,
                prompt: "a landing page".into(),
                template: "static".into(),
                lang: "en".into(),
                provider: "scripted".into(),
                model: "bench".into(),
                workspace: dir.path().join(id).display().to_string(),
                started_at: "2026-01-01T00:00:00.000Z".into(),
            };
            store.create_build(&build).await.expect("build");
        }
    });
    let emitters: Vec<Emitter> = runs.iter().map(|id| persisting_emitter(&store, id)).collect();
    let t = Instant::now();
    let mut lat: Vec<Duration> = rt.block_on(async {
        let tasks: Vec<_> = emitters
            .into_iter()
            .map(|em| {
                tokio::spawn(async move {
                    let mut took = Vec::with_capacity(PER_RUN as usize);
                    for i in 0..PER_RUN {
                        let sent = Instant::now();
                        em.emit(event(i));
                        took.push(sent.elapsed());
                        tokio::task::yield_now().await;
                    }
                    took
                })
            })
            .collect();
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.expect("run"));
        }
        all
    });
    let el = t.elapsed();
    lat.sort();
    let total = lat.len() as f64;
    println!(
        "{RUNS} runs at once ({workers} tokio workers), {PER_RUN} events each: {total} events in {:.2} s = {:.0} events/s; emit latency µs: p50 {:.0} · p99 {:.0} · max {:.0}",
        el.as_secs_f64(),
        total / el.as_secs_f64(),
        pct(&lat, 50.0),
        pct(&lat, 99.0),
        pct(&lat, 100.0)
    );
    for id in &runs {
        let stored = rt.block_on(store.events(id, 0)).expect("read back");
        assert_eq!(stored.len() as u64, PER_RUN, "every event of {id} stored");
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let store: Arc<dyn Store> = rt.block_on(wright_store::open(&url)).expect("store");

    let t = Instant::now();
    let sink = Arc::new(wright_events::MemorySink::new());
    let em = Emitter::new("direct", vec![sink.clone()]);
    for i in 0..EVENTS {
        em.emit(EventKind::CommandOutput { stream: Stream::Stdout, chunk: format!("line {i} of test output\n") });
    }
    let events = sink.events();
    let made = t.elapsed();
    let t = Instant::now();
    rt.block_on(async {
        for e in &events {
            store.append_event(e).await.expect("append");
        }
    });
    let el = t.elapsed();
    println!(
        "append_event (awaited one by one): {EVENTS} events in {:.2} s = {:.0} events/s ({:.1} µs each; making them took {:.0} ms)",
        el.as_secs_f64(),
        EVENTS as f64 / el.as_secs_f64(),
        el.as_secs_f64() * 1e6 / EVENTS as f64,
        made.as_secs_f64() * 1e3
    );

    let persist = Arc::new(PersistSink::new(store.clone()).expect("sink"));
    let em = Emitter::new("through-sink", vec![persist.clone()]);
    let t = Instant::now();
    for i in 0..EVENTS {
        em.emit(event(i));
    }
    let el = t.elapsed();
    println!(
        "Emitter + PersistSink (stored before emit): {EVENTS} events in {:.2} s = {:.0} events/s ({:.1} µs each), failures {}",
        el.as_secs_f64(),
        EVENTS as f64 / el.as_secs_f64(),
        el.as_secs_f64() * 1e6 / EVENTS as f64,
        persist.failures()
    );
    let stored = rt.block_on(store.events("through-sink", 0)).expect("read back");
    assert_eq!(stored.len() as u64, EVENTS, "every event stored");

    concurrent_runs();
}
