//! Tool selection latency: every built-in tool scored for one message (the message embedded,
//! its signals against every tool's examples and the calibrated model applied, every pattern
//! run), over the labelled set (`eval/tuning.jsonl` and `eval/heldout.jsonl`, 470 messages).
//! Also the embedding model's load time and the example bank's embedding time.
//!
//! `cargo bench -p wright-chat --bench select` (needs the embedding model: it is fetched into
//! `WRIGHT_TEST_DATA_DIR`, default `target/wright-test-data`, like the tests do).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wright_chat::tools::video::VideoSettings;
use wright_chat::{AgentSettings, ChatAgent, ChatContext, Embedder, builtin_tools, scorer_for};
use wright_events::Lang;
use wright_provider::RetryPolicy;
use wright_provider::scripted::ScriptedProvider;
use wright_store::{SqliteStore, Store};

#[path = "../tests/common/e5.rs"]
mod e5;
use e5::E5;

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

fn main() {
    let data = std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"));
    let path = wright_local::pull_embedding_model(&data, &|_| {}).expect("the embedding model");
    let rss0 = rss_mib();
    let t = Instant::now();
    let model = wright_local::E5Embedder::load(&path).unwrap();
    let load = t.elapsed();
    let rss1 = rss_mib();
    let embedder: Arc<dyn Embedder> = Arc::new(E5(model));
    let video = VideoSettings {
        base_url: "http://127.0.0.1:9".into(),
        api_key: Some("k".into()),
        key_source: String::new(),
        max_results: 3,
    };
    let tools = builtin_tools(video);
    let t = Instant::now();
    let scorer = Arc::new(scorer_for(&tools, Some(embedder)).unwrap());
    let bank = t.elapsed();
    let rss2 = rss_mib();

    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("w.db").display());
    let store: Arc<dyn Store> = Arc::new(rt.block_on(SqliteStore::open(&url)).unwrap());
    let ctx = ChatContext {
        user: "u".into(),
        conversation: "c".into(),
        lang: Lang::En,
        history: Arc::new(Vec::new()),
        provider: Arc::new(ScriptedProvider::new(vec![])),
        model: "m".into(),
        retry: RetryPolicy::default(),
        store,
        scorer: scorer.clone(),
        embedding: None,
        usage: Default::default(),
        cancel: Default::default(),
    };
    let agent = ChatAgent::new(tools, AgentSettings::default());
    let mut messages = Vec::new();
    for name in ["tuning.jsonl", "heldout.jsonl"] {
        let text = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("eval").join(name)).unwrap();
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            messages.push(v["text"].as_str().unwrap().to_string());
        }
    }
    let (mut with, mut patterns, mut embed, mut given) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _round in 0..3 {
        for m in &messages {
            let t = Instant::now();
            let mut c = ctx.clone();
            c.embedding = scorer.embed(m).map(Arc::new);
            let embedded = t.elapsed();
            let sel = agent.select(m, &c, &BTreeMap::new());
            with.push(t.elapsed());
            embed.push(embedded);
            given.push(t.elapsed() - embedded);
            std::hint::black_box(sel.scores.len());
            let t = Instant::now();
            let sel = agent.select(m, &ctx, &BTreeMap::new());
            patterns.push(t.elapsed());
            std::hint::black_box(sel.scores.len());
        }
    }
    embed.sort();
    given.sort();
    with.sort();
    patterns.sort();
    println!("embedding model load: {:.0} ms; RSS {rss0:.0} → {rss1:.0} MiB", load.as_secs_f64() * 1000.0);
    println!("example bank embedded in {:.2} s; RSS {rss2:.0} MiB", bank.as_secs_f64());
    println!(
        "selection, all 6 tools, embedding + signals + model: n={} p50 {:.2} ms p99 {:.2} ms max {:.2} ms",
        with.len(),
        pct(&with, 0.5),
        pct(&with, 0.99),
        pct(&with, 1.0)
    );
    println!("  of which embedding the message: p50 {:.2} ms p99 {:.2} ms", pct(&embed, 0.5), pct(&embed, 0.99));
    println!("  of which scoring, given the embedding: p50 {:.3} ms p99 {:.3} ms", pct(&given, 0.5), pct(&given, 0.99));
    println!("selection, patterns only: p50 {:.3} ms p99 {:.3} ms", pct(&patterns, 0.5), pct(&patterns, 0.99));
}
