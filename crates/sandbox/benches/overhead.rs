//! What the sandbox costs: start overhead of `true` and the run time of a small `node --test`
//! suite, plain vs in bubblewrap (and vs the Landlock fallback when `WRIGHT_BIN` names a
//! built `wright` binary, which confines commands through itself).
//! Run: `cargo bench -p wright-sandbox --bench overhead` (add `-- 50` for 50 runs each).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

use std::path::Path;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use wright_sandbox::{Bwrap, CommandRunner, CommandSpec, Landlock, NoIsolation, Policy, ProcessRunner};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

async fn time(runner: &ProcessRunner, dir: &Path, program: &str, args: &[&str], runs: usize) -> Duration {
    let env = vec![("PATH".to_string(), "/usr/local/bin:/usr/bin:/bin".to_string())];
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let spec =
            CommandSpec::new(program, args.iter().map(|s| s.to_string()).collect(), dir.to_path_buf(), env.clone());
        let t = Instant::now();
        let o = runner.run(spec, &(), &CancellationToken::new()).await.expect("run");
        assert!(o.success(), "{} {}", o.stdout.render(), o.stderr.render());
        times.push(t.elapsed());
    }
    median(times)
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(30);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("tests")).expect("mkdir");
    std::fs::write(
        dir.path().join("tests/math.test.js"),
        "const test = require('node:test');\nconst assert = require('node:assert');\n\
         for (let i = 0; i < 20; i++) test(`adds ${i}`, () => assert.strictEqual(i + 1, 1 + i));\n",
    )
    .expect("write");
    let policy = Policy { writable: vec![dir.path().to_path_buf()], ..Policy::default() };
    let mut runners = vec![("plain", ProcessRunner::new(Box::new(NoIsolation)))];
    runners.push(("bwrap", ProcessRunner::new(Box::new(Bwrap::new(policy.clone()).expect("bubblewrap")))));
    if let Ok(bin) = std::env::var("WRIGHT_BIN") {
        runners.push(("landlock", ProcessRunner::new(Box::new(Landlock::new(bin.into(), policy)))));
    }
    let mut base = (Duration::ZERO, Duration::ZERO);
    for (name, runner) in &runners {
        let start = rt.block_on(time(runner, dir.path(), "true", &[], runs));
        let node = rt.block_on(time(runner, dir.path(), "node", &["--test"], runs.min(15)));
        if *name == "plain" {
            base = (start, node);
        }
        println!(
            "{name:9} start `true` median {:7.2} ms ({:5.1}x)   `node --test` (20 tests) median {:7.1} ms ({:4.2}x)",
            start.as_secs_f64() * 1e3,
            start.as_secs_f64() / base.0.as_secs_f64(),
            node.as_secs_f64() * 1e3,
            node.as_secs_f64() / base.1.as_secs_f64()
        );
    }
}
