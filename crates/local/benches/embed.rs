//! Embedding model figures on this machine: load time, latency of embedding one short chat
//! message (p50/p99 over 200 messages of 5–25 words, English and Portuguese), and the process
//! RSS after load. Run: `cargo bench -p wright-local --bench embed` (pulls the model if needed).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

use std::path::PathBuf;
use std::time::{Duration, Instant};
use wright_local::E5Embedder;

fn status_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

const WORDS: &[&str] = &[
    "make",
    "me",
    "a",
    "quiz",
    "about",
    "the",
    "French",
    "Revolution",
    "please",
    "draw",
    "flowchart",
    "of",
    "login",
    "process",
    "summarise",
    "this",
    "article",
    "on",
    "climate",
    "policy",
    "faça",
    "um",
    "sobre",
    "revolução",
    "francesa",
    "desenhe",
    "fluxograma",
    "do",
    "processo",
    "resuma",
    "este",
    "artigo",
    "política",
    "climática",
    "can",
    "you",
    "explain",
    "how",
    "interest",
    "works",
    "crie",
    "cartões",
    "de",
    "estudo",
    "para",
    "biologia",
    "timer",
    "for",
    "ten",
    "minutes",
    "viagem",
    "Roma",
    "weather",
    "tomorrow",
    "amanhã",
    "tempo",
];

/// 200 messages of 5–25 words, the same on every run.
fn messages() -> Vec<String> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..200)
        .map(|_| {
            let n = 5 + (next() % 21) as usize;
            (0..n).map(|_| WORDS[(next() % WORDS.len() as u64) as usize]).collect::<Vec<_>>().join(" ")
        })
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn main() {
    let dir = std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"));
    let path = match wright_local::pull_embedding_model(&dir, &|_| {}) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cannot pull the embedding model: {e}");
            std::process::exit(1);
        }
    };
    let rss_before = status_mib("VmRSS");
    let started = Instant::now();
    let model = match E5Embedder::load(&path) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("cannot load the embedding model: {e}");
            std::process::exit(1);
        }
    };
    let load = started.elapsed();
    let rss_loaded = status_mib("VmRSS");

    let msgs = messages();
    for m in msgs.iter().take(5) {
        model.embed(std::slice::from_ref(m)).expect("embed");
    }
    let mut times: Vec<Duration> = msgs
        .iter()
        .map(|m| {
            let t = Instant::now();
            model.embed(std::slice::from_ref(m)).expect("embed");
            t.elapsed()
        })
        .collect();
    times.sort();
    let rss_singles = status_mib("VmRSS");
    let batch_started = Instant::now();
    model.embed(&msgs).expect("embed");
    let batch = batch_started.elapsed();
    // The longest input the model takes (512 tokens) touches the most working memory.
    let long = "Portuguese and English sentences, over and over. ".repeat(120);
    let long_started = Instant::now();
    model.embed(&[long]).expect("embed");
    let long_time = long_started.elapsed();

    println!("model {} · {}-d · {}", model.name(), model.dim(), path.display());
    println!(
        "load {:.0} ms · RSS before load {rss_before:.0} MiB, after load {rss_loaded:.0} MiB",
        load.as_secs_f64() * 1e3
    );
    println!(
        "one message (5–25 words), {} runs: p50 {:.2} ms · p99 {:.2} ms · max {:.2} ms · RSS then {rss_singles:.0} MiB",
        times.len(),
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.99).as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3
    );
    println!(
        "all {} messages in one call: {:.0} ms ({:.2} ms a message) · a 6,000-character text (cut to 512 tokens): \
         {:.0} ms · RSS after the runs {:.0} MiB (peak {:.0} MiB)",
        msgs.len(),
        batch.as_secs_f64() * 1e3,
        batch.as_secs_f64() * 1e3 / msgs.len() as f64,
        long_time.as_secs_f64() * 1e3,
        status_mib("VmRSS"),
        status_mib("VmHWM")
    );
}
