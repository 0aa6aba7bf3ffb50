//! Time of the react template's setup and of one TRANSPILING pass (type-check, bundle,
//! Tailwind, page) on a to-do app, in bubblewrap with the network denied, as builds run it.
//!
//! - cold: a new, empty package cache, so the packages are downloaded by the host's npm;
//! - warm: a second project on the same cache (a link, no download);
//! - passes: the first pass after setup, then N more on the unchanged project.
//!
//! Run: `cargo bench -p wright-transpile --bench transpile` (needs the npm registry once,
//! Node.js and bubblewrap). `WRIGHT_BENCH_PASSES` sets N (default 10).
#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap is a failed run
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

use std::sync::Arc;
use std::time::{Duration, Instant};
use wright_events::{Emitter, Event, EventSink};
use wright_sandbox::{Bwrap, Policy, ProcessRunner, Workspace, WorkspaceLimits};
use wright_tools::{ExecConfig, ToolContext};

struct Quiet;
impl EventSink for Quiet {
    fn accept(&self, _e: &Event) {}
}

const APP: &str = include_str!("../../cli/tests/fixtures/react_todo/App.fixed.tsx");
const TESTS: &str = include_str!("../../cli/tests/fixtures/react_todo/App.test.tsx");

fn context(base: &std::path::Path, name: &str, cache: &std::path::Path) -> ToolContext {
    let dir = base.join(name);
    let (ws, scratch) = (dir.join("ws"), dir.join("scratch"));
    std::fs::create_dir_all(&ws).unwrap();
    let mut exec = ExecConfig::for_build(&scratch.join("home"), &scratch.join("tmp")).unwrap();
    exec.deps_cache = Some(cache.to_path_buf());
    exec.command_timeout = Duration::from_secs(120);
    let policy = Policy {
        network: false,
        limits: Default::default(),
        writable: vec![ws.clone(), scratch.clone()],
        read_only: vec![cache.to_path_buf()],
        egress: None,
    };
    let runner = ProcessRunner::new(Box::new(Bwrap::new(policy).expect("bubblewrap is needed for this bench")));
    ToolContext {
        workspace: Workspace::open(&ws, WorkspaceLimits::default()).unwrap(),
        runner: Arc::new(runner),
        emitter: Emitter::new("bench", vec![Arc::new(Quiet)]),
        cancel: Default::default(),
        exec,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let passes: usize = std::env::var("WRIGHT_BENCH_PASSES").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let base = tempfile::tempdir().unwrap();
    let cache = base.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    rt.block_on(async {
        for (label, name) in [("cold cache", "a"), ("warm cache", "b")] {
            let ctx = context(base.path(), name, &cache);
            wright_transpile::scaffold::write(&ctx.workspace).unwrap();
            ctx.workspace.write("src/App.tsx", APP.as_bytes()).unwrap();
            ctx.workspace.write("src/App.test.tsx", TESTS.as_bytes()).unwrap();
            let t = Instant::now();
            wright_tools::install_declared(&ctx).await.unwrap();
            let install = t.elapsed();
            let first = wright_transpile::transpile(&ctx, Duration::from_secs(60)).await;
            assert!(first.ok(), "{:?}", first.diagnostics);
            let mut times = Vec::new();
            for _ in 0..passes {
                let r = wright_transpile::transpile(&ctx, Duration::from_secs(60)).await;
                assert!(r.ok(), "{:?}", r.diagnostics);
                times.push(ms(r.duration));
            }
            times.sort_by(f64::total_cmp);
            let pick = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
            println!(
                "{label}: packages {:.0} ms; first pass {:.0} ms; next {passes} passes p50 {:.0} ms, p90 {:.0} ms, max {:.0} ms",
                ms(install),
                ms(first.duration),
                pick(0.5),
                pick(0.9),
                pick(1.0)
            );
        }
    });
}
