//! What `wright eval` costs over the builds it makes: the real binary, 20 requests × 2 variants
//! × 3 repeats (120 real builds in the sandbox) with a scripted model (one variant needs a
//! fix every time). Reports the wall time, the builds' own time (their `duration`), the
//! overhead between the two, and the size of the JSON and HTML reports.
//!
//! Run: `cargo bench --profile dev -p wright-cli --bench eval`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a panic is the report
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;
use support::eval_model::{scripted_model, suite_of};
use support::{HOST_ENV, MockLlm, key_for};

const REQUESTS: usize = 20;
const REPEATS: &str = "3";

#[tokio::main]
async fn main() {
    let mock = MockLlm::start_with_fallback(vec![], scripted_model()).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.toml"), suite_of(REQUESTS)).unwrap();
    let html = dir.path().join("report.html");
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.args(["eval", "suite.toml", "--variants", "strong,weak", "--repeats", REPEATS, "--json", "--html"])
        .arg(&html)
        .args(["--provider", "openai", "--base-url", &mock.base_url, "--model", "mock-model", "--browser-check", "off"])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .current_dir(dir.path());
    for k in HOST_ENV {
        cmd.env_remove(k);
    }
    let (k, v) = key_for("openai").unwrap();
    cmd.env(k, v);
    let started = Instant::now();
    let out = cmd.output().await.unwrap();
    let wall = started.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let builds = report["builds"].as_array().unwrap().len();
    let builds_secs = report["builds_secs"].as_f64().unwrap();
    println!("wright eval: {REQUESTS} requests × 2 variants × {REPEATS} repeats = {builds} builds");
    println!("  wall time (process start to exit): {wall:.1} s, {:.0} ms per build", wall * 1000.0 / builds as f64);
    println!("  the builds' own time:              {builds_secs:.1} s");
    println!(
        "  overhead (set-up, records, stats):  {:.1} s ({:.0} ms per build, {:.0}%)",
        wall - builds_secs,
        (wall - builds_secs) * 1000.0 / builds as f64,
        (wall - builds_secs) / wall * 100.0
    );
    println!(
        "  JSON report: {} bytes; HTML report: {} bytes",
        out.stdout.len(),
        std::fs::metadata(&html).unwrap().len()
    );
    println!("  headline: {}", report["comparison"]["headline"].as_str().unwrap());
}
