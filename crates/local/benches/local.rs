//! Offline model figures on this machine: load time, prompt and generation tokens per second,
//! peak RSS. Run: `cargo bench -p wright-local --bench local` (pulls the model if needed).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

use std::path::PathBuf;
use std::sync::Arc;
use wright_local::{DEFAULT_MODEL, EngineConfig, LocalEngine};
use wright_provider::Message;

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM")).and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let dir = std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"));
    let path = match wright_local::pull::pull(&DEFAULT_MODEL, &dir, "python3", false, &|_| {}) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cannot pull the model: {e}");
            std::process::exit(1);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let engine = match LocalEngine::load(EngineConfig::new(path)) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("cannot load the model: {e}");
            std::process::exit(1);
        }
    };
    let tools = vec![wright_provider::ToolSpec {
        name: "createFile".into(),
        description: "Create a file with the given content.".into(),
        parameters: serde_json::json!({"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}),
    }];
    let system = Message::system("You are a helpful coding assistant. ".repeat(40));
    for (i, ask) in ["Write index.html with a page that says Hello.", "Now write styles.css that makes the text blue."]
        .iter()
        .enumerate()
    {
        let messages = vec![system.clone(), Message::user(*ask)];
        let before = engine.stats();
        let g = rt.block_on(engine.generate(messages, tools.clone(), Some(256), Some(0.0))).expect("generate");
        let after = engine.stats();
        let pt = after.prompt_tokens - before.prompt_tokens;
        let ptime = (after.prompt_time - before.prompt_time).as_secs_f64();
        let gt = after.generated_tokens - before.generated_tokens;
        let gtime = (after.generation_time - before.generation_time).as_secs_f64();
        println!(
            "run {i}: prompt {pt} new tokens ({} reused) at {:.0} tok/s; generated {gt} tokens at {:.0} tok/s (grammar-constrained)",
            g.reused_tokens,
            pt as f64 / ptime.max(1e-9),
            gt as f64 / gtime.max(1e-9)
        );
    }
    let s = engine.stats();
    println!(
        "model {} · n_ctx {} · load {:.0} ms · peak RSS {:.0} MiB",
        s.model_name,
        s.n_ctx,
        s.load.as_secs_f64() * 1e3,
        peak_rss_mib()
    );
}
