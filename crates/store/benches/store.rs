//! Event write throughput of the SQLite store, the path every build event takes.
//! Run: `cargo bench -p wright-store --bench store`.
//!
//! Two figures: `append_event` awaited one by one (the store alone), and events emitted through
//! an `Emitter` whose first sink is the `PersistSink` (persist-before-emit, what a build does).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Instant;
use wright_events::{Emitter, EventKind, Level, Stream};
use wright_store::{PersistSink, Store};

const EVENTS: u64 = 20_000;

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
        if i % 10 == 0 {
            em.status(Level::Info, format!("step {i}"));
        } else {
            em.emit(EventKind::CommandOutput { stream: Stream::Stdout, chunk: format!("line {i} of test output\n") });
        }
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
}
