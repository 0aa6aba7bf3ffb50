//! Event write throughput of the SQLite store, the path every build event takes.
//! Run: `cargo bench -p wright-store --bench store`.
//!
//! Three figures:
//! 1. `RunLog::append` of one event, awaited one by one (the store alone, one transaction each).
//! 2. One run emitting through an `Emitter` whose sink is the run's `LogWriter` (what a build
//!    does): how long an emit takes, and how fast events are stored (until `flush`).
//! 3. 16 runs emitting at once from tokio tasks: emit latency p50/p99 and events stored per
//!    second over all of them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a panic is the report
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

use std::sync::Arc;
use std::time::{Duration, Instant};
use wright_events::{Emitter, EventKind, Level, RunKind, Stream};
use wright_store::{Draft, Lang, LogWriter, NewBuild, Store, Template};

const EVENTS: u64 = 20_000;
const RUNS: usize = 16;
const PER_RUN: u64 = 2_000;

fn new_run(id: &str) -> NewBuild {
    NewBuild {
        id: id.into(),
        kind: RunKind::Build,
        parent_id: None,
        prompt: "bench".into(),
        template: Some(Template::Static),
        lang: Lang::En,
        provider: "scripted".into(),
        model: "m".into(),
        workspace: "/tmp/bench".into(),
        started_at: wright_store::now(),
    }
}

fn line(i: u64) -> EventKind {
    if i.is_multiple_of(10) {
        EventKind::Status { message: format!("step {i}"), level: Level::Info }
    } else {
        EventKind::CommandOutput { stream: Stream::Stdout, chunk: format!("line {i} of test output\n") }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

/// Start a run's writer and emitter: the one place that says how events get persisted.
async fn emitter_for(store: &Arc<dyn Store>, run: &str) -> (Emitter, Arc<LogWriter>) {
    store.create_build(&new_run(run)).await.expect("run");
    let writer = LogWriter::start(store.clone(), run, None, vec![]);
    (Emitter::new(run, vec![writer.clone()]), writer)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let store: Arc<dyn Store> = rt.block_on(wright_store::open(&url)).expect("store");

    // 1. The store alone.
    rt.block_on(store.create_build(&new_run("direct"))).expect("run");
    let t = Instant::now();
    rt.block_on(async {
        for i in 0..EVENTS {
            store.append("direct", None, vec![Draft::now(line(i))]).await.expect("append");
        }
    });
    let el = t.elapsed();
    println!(
        "append (one event per transaction, awaited one by one): {EVENTS} events in {:.2} s = {:.0} events/s ({:.1} µs each)",
        el.as_secs_f64(),
        EVENTS as f64 / el.as_secs_f64(),
        el.as_secs_f64() * 1e6 / EVENTS as f64,
    );

    // 2. One run through its log writer.
    let (em, writer) = rt.block_on(emitter_for(&store, "one-run"));
    let mut lat = Vec::with_capacity(EVENTS as usize);
    let t = Instant::now();
    rt.block_on(async {
        for i in 0..EVENTS {
            let e = Instant::now();
            em.emit(line(i));
            lat.push(e.elapsed());
        }
    });
    let emitted = t.elapsed();
    rt.block_on(writer.flush());
    let stored = t.elapsed();
    lat.sort();
    println!(
        "one run, Emitter + LogWriter: emit p50 {:.1} µs, p99 {:.1} µs (all {EVENTS} emitted in {:.0} ms); stored {:.0} events/s, failures {}",
        percentile(&lat, 0.5).as_secs_f64() * 1e6,
        percentile(&lat, 0.99).as_secs_f64() * 1e6,
        emitted.as_secs_f64() * 1e3,
        EVENTS as f64 / stored.as_secs_f64(),
        writer.failures()
    );
    assert_eq!(rt.block_on(store.events("one-run", 0)).expect("read back").len() as u64, EVENTS, "every event stored");

    // 3. Sixteen runs at once, each emitting from its own task (a step, then a yield, as a
    //    build does between tool calls).
    let t = Instant::now();
    let results = rt.block_on(async {
        let tasks: Vec<_> = (0..RUNS)
            .map(|r| {
                let store = store.clone();
                tokio::spawn(async move {
                    let (em, writer) = emitter_for(&store, &format!("run-{r}")).await;
                    let mut lat = Vec::with_capacity(PER_RUN as usize);
                    for i in 0..PER_RUN {
                        let e = Instant::now();
                        em.emit(line(i));
                        lat.push(e.elapsed());
                        if i.is_multiple_of(20) {
                            tokio::task::yield_now().await;
                        }
                    }
                    writer.flush().await;
                    (lat, writer.failures())
                })
            })
            .collect();
        let mut all = Vec::new();
        let mut failures = 0;
        for task in tasks {
            let (lat, f) = task.await.expect("run");
            all.extend(lat);
            failures += f;
        }
        (all, failures)
    });
    let el = t.elapsed();
    let (mut lat, failures) = results;
    lat.sort();
    let total = RUNS as u64 * PER_RUN;
    println!(
        "{RUNS} runs at once: emit p50 {:.1} µs, p99 {:.1} µs; {total} events stored in {:.2} s = {:.0} events/s, failures {failures}",
        percentile(&lat, 0.5).as_secs_f64() * 1e6,
        percentile(&lat, 0.99).as_secs_f64() * 1e6,
        el.as_secs_f64(),
        total as f64 / el.as_secs_f64(),
    );
    for r in 0..RUNS {
        let seqs: Vec<u64> =
            rt.block_on(store.events(&format!("run-{r}"), 0)).expect("read back").iter().map(|e| e.seq.0).collect();
        assert_eq!(seqs, (1..=PER_RUN).collect::<Vec<_>>(), "run {r}: every event stored once, in order");
    }
}
