//! Fit the chat's tool-selection model on the tuning split and measure it on both splits.
//! Run: `cargo run -p wright-chat --example select_fit --release [EMBEDDED|PATTERNS|EXAMPLES]` (fetches the e5 model into
//! `target/wright-test-data` once, like the tests; `WRIGHT_TEST_DATA_DIR` moves it).
//!
//! Every (message, tool) pair of `eval/tuning.jsonl` gives one row: the [`Signals`] of the
//! message against the tool (leave-one-out: a message is never its own example or neighbour)
//! and whether the message asked for the tool. One logistic regression with the same weights
//! for every tool is fitted to all rows (Newton's method, a small ridge so cue patterns that
//! separate the tuning split perfectly do not run off to infinity); then each tool's threshold
//! is the one with the best F1 on its own tuning rows (the default threshold: on all rows). It
//! is done twice: with the embedding's signals and with patterns alone (those signals at 0).
//! It prints the constants `relevance::model` holds, then precision and recall per tool on the
//! tuning split and on the held-out split, which is only measured, never fitted on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // a tool: a panic is the report
#![allow(clippy::needless_range_loop)] // linear algebra reads better indexed

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use wright_chat::relevance::model::{FEATURES, Model, Signals};
use wright_chat::relevance::{Example, Scorer};
use wright_chat::tools::video::VideoSettings;
use wright_chat::{ChatTool, Embedder, builtin_tools};

#[path = "../tests/common/e5.rs"]
mod e5;
use e5::E5;

fn load(name: &str) -> Vec<Example> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("eval").join(name);
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// One (message, tool) pair.
struct Row {
    tool: String,
    x: [f32; FEATURES],
    y: bool,
    /// The message's index (cross-validation folds keep a message's rows together).
    message: usize,
}

impl Row {
    fn clone_row(&self) -> Row {
        Row { tool: self.tool.clone(), x: self.x, y: self.y, message: self.message }
    }
}

/// Rows of `set`; `patterns: false` zeroes the pattern signals (a tool that has none).
fn rows(scorer: &Scorer, set: &[Example], tools: &[Arc<dyn ChatTool>], embedded: bool, patterns: bool) -> Vec<Row> {
    let mut out = Vec::new();
    for (i, m) in set.iter().enumerate() {
        let v = if embedded { scorer.embed(&m.text) } else { None };
        for t in tools {
            let s = scorer.signals(t.name(), &m.text, v.as_deref()).unwrap_or_default();
            let mut x = s.features();
            if !patterns {
                x[..5].fill(0.0);
            }
            out.push(Row { tool: t.name().into(), x, y: m.tools.iter().any(|w| w == t.name()), message: i });
        }
    }
    out
}

/// Logistic regression by Newton's method with an L2 ridge on the weights (not the bias).
fn fit(rows: &[Row], ridge: f64) -> ([f32; FEATURES], f32) {
    const N: usize = FEATURES + 1;
    let mut w = [0.0f64; N];
    let feat = |r: &Row| {
        let mut x = [1.0f64; N];
        for i in 0..FEATURES {
            x[i] = r.x[i] as f64;
        }
        x
    };
    for _ in 0..50 {
        let mut g = [0.0f64; N];
        let mut h = [[0.0f64; N]; N];
        for r in rows {
            let x = feat(r);
            let z: f64 = w.iter().zip(&x).map(|(a, b)| a * b).sum();
            let p = 1.0 / (1.0 + (-z).exp());
            let y = if r.y { 1.0 } else { 0.0 };
            for i in 0..N {
                g[i] += (p - y) * x[i];
                for j in 0..N {
                    h[i][j] += p * (1.0 - p) * x[i] * x[j];
                }
            }
        }
        for i in 0..FEATURES {
            g[i] += ridge * w[i];
            h[i][i] += ridge;
        }
        h[FEATURES][FEATURES] += 1e-6;
        let step = solve(h, g);
        let size: f64 = step.iter().map(|s| s.abs()).sum();
        for i in 0..N {
            w[i] -= step[i];
        }
        if size < 1e-9 {
            break;
        }
    }
    let mut out = [0.0f32; FEATURES];
    for i in 0..FEATURES {
        out[i] = w[i] as f32;
    }
    (out, w[FEATURES] as f32)
}

/// `a x = b` by Gaussian elimination with partial pivoting.
fn solve<const N: usize>(mut a: [[f64; N]; N], mut b: [f64; N]) -> [f64; N] {
    for c in 0..N {
        let p = (c..N).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs())).unwrap();
        a.swap(c, p);
        b.swap(c, p);
        for r in c + 1..N {
            let f = a[r][c] / a[c][c];
            for k in c..N {
                a[r][k] -= f * a[c][k];
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = [0.0f64; N];
    for r in (0..N).rev() {
        let s: f64 = (r + 1..N).map(|k| a[r][k] * x[k]).sum();
        x[r] = (b[r] - s) / a[r][r];
    }
    x
}

/// [`fit`] on features scaled to mean 0 and deviation 1 (so the ridge weighs a cosine margin of
/// a few hundredths like a 0/1 pattern flag), returned as weights on the raw features.
fn fit_scaled(rows: &[Row], ridge: f64) -> ([f32; FEATURES], f32) {
    let n = rows.len().max(1) as f64;
    let mut mean = [0.0f64; FEATURES];
    let mut sd = [0.0f64; FEATURES];
    for r in rows {
        for i in 0..FEATURES {
            mean[i] += r.x[i] as f64 / n;
        }
    }
    for r in rows {
        for i in 0..FEATURES {
            sd[i] += (r.x[i] as f64 - mean[i]).powi(2) / n;
        }
    }
    let sd: Vec<f64> = sd.iter().map(|v| if v.sqrt() > 1e-9 { v.sqrt() } else { 1.0 }).collect();
    let scaled: Vec<Row> = rows
        .iter()
        .map(|r| {
            let mut x = [0.0f32; FEATURES];
            for i in 0..FEATURES {
                x[i] = ((r.x[i] as f64 - mean[i]) / sd[i]) as f32;
            }
            Row { tool: r.tool.clone(), x, y: r.y, message: r.message }
        })
        .collect();
    let (w, b) = fit(&scaled, ridge);
    let mut raw = [0.0f32; FEATURES];
    let mut bias = b as f64;
    for i in 0..FEATURES {
        raw[i] = (w[i] as f64 / sd[i]) as f32;
        bias -= w[i] as f64 * mean[i] / sd[i];
    }
    (raw, bias as f32)
}

/// The ridge with the lowest log-loss in 5-fold cross-validation over the tuning messages.
fn choose_ridge(rows: &[Row]) -> f64 {
    let mut best = (f64::INFINITY, 1.0);
    for ridge in [0.01, 0.1, 1.0, 10.0, 100.0] {
        let mut loss = 0.0;
        for fold in 0..5 {
            let train: Vec<Row> = rows.iter().filter(|r| r.message % 5 != fold).map(Row::clone_row).collect();
            let (w, b) = fit_scaled(&train, ridge);
            for r in rows.iter().filter(|r| r.message % 5 == fold) {
                let p = (probability(&w, b, &r.x) as f64).clamp(1e-6, 1.0 - 1e-6);
                loss -= if r.y { p.ln() } else { (1.0 - p).ln() };
            }
        }
        println!("// ridge {ridge}: cross-validated log-loss {loss:.1}");
        if loss < best.0 {
            best = (loss, ridge);
        }
    }
    best.1
}

fn probability(w: &[f32; FEATURES], b: f32, x: &[f32; FEATURES]) -> f32 {
    let z: f32 = w.iter().zip(x).map(|(a, b)| a * b).sum::<f32>() + b;
    1.0 / (1.0 + (-z).exp())
}

/// The threshold with the best F1 on `scored` (probability, wanted), halfway between the
/// lowest probability it takes and the highest it leaves (ties: the higher threshold).
fn best_threshold(scored: &[(f32, bool)]) -> f32 {
    let mut ps: Vec<f32> = scored.iter().map(|s| s.0).collect();
    ps.sort_by(|a, b| a.total_cmp(b));
    ps.dedup();
    let (mut best, mut best_f1) = (0.5f32, -1.0f32);
    for (i, &t) in ps.iter().enumerate() {
        let (tp, fp, fn_) = counts(scored, t);
        let f1 = if tp == 0 { 0.0 } else { 2.0 * tp as f32 / (2 * tp + fp + fn_) as f32 };
        if f1 >= best_f1 {
            best_f1 = f1;
            let below = if i == 0 { 0.0 } else { ps[i - 1] };
            best = (t + below) / 2.0;
        }
    }
    best.clamp(0.05, 0.95)
}

fn counts(scored: &[(f32, bool)], t: f32) -> (u32, u32, u32) {
    let (mut tp, mut fp, mut fn_) = (0, 0, 0);
    for &(p, y) in scored {
        match (p >= t, y) {
            (true, true) => tp += 1,
            (true, false) => fp += 1,
            (false, true) => fn_ += 1,
            _ => {}
        }
    }
    (tp, fp, fn_)
}

fn pr(tp: u32, fp: u32, fn_: u32) -> (f32, f32) {
    let p = if tp + fp == 0 { 1.0 } else { tp as f32 / (tp + fp) as f32 };
    let r = if tp + fn_ == 0 { 1.0 } else { tp as f32 / (tp + fn_) as f32 };
    (p, r)
}

fn table(name: &str, model: &Model, tuning: &[Row], heldout: &[Row]) {
    println!("\n{name}\n| tool | tuning P | tuning R | held-out P | held-out R |\n|---|---|---|---|---|");
    let mut tools: Vec<&str> = tuning.iter().map(|r| r.tool.as_str()).collect();
    tools.sort();
    tools.dedup();
    let mut all = [(0, 0, 0), (0, 0, 0)];
    for tool in tools {
        let mut line = format!("| {tool} |");
        for (k, set) in [tuning, heldout].into_iter().enumerate() {
            let scored: Vec<(f32, bool)> = set
                .iter()
                .filter(|r| r.tool == tool)
                .map(|r| (probability(&model.weights, model.bias, &r.x), r.y))
                .collect();
            let (tp, fp, fn_) = counts(&scored, model.threshold(tool));
            all[k] = (all[k].0 + tp, all[k].1 + fp, all[k].2 + fn_);
            let (p, r) = pr(tp, fp, fn_);
            line += &format!(" {p:.3} | {r:.3} |");
        }
        println!("{line}");
    }
    let (tp, tr) = pr(all[0].0, all[0].1, all[0].2);
    let (hp, hr) = pr(all[1].0, all[1].1, all[1].2);
    println!("| all | {tp:.3} | {tr:.3} | {hp:.3} | {hr:.3} |");
}

fn print_model(name: &str, doc: &str, m: &Model) {
    println!("/// {doc}");
    println!("pub const {name}: Model = Model {{");
    println!("    weights: {:?},", m.weights);
    println!("    bias: {:?},", m.bias);
    let t: Vec<String> = m.thresholds.iter().map(|(t, v)| format!("(\"{t}\", {v:?})")).collect();
    println!("    thresholds: &[{}],", t.join(", "));
    println!("    default_threshold: {:?},", m.default_threshold);
    println!("}};");
}

fn main() {
    let data = std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"));
    let path = wright_local::pull_embedding_model(&data, &|_| {}).unwrap();
    let e5: Arc<dyn Embedder> = Arc::new(E5(wright_local::E5Embedder::load(&path).unwrap()));
    let tools = builtin_tools(VideoSettings {
        base_url: "http://127.0.0.1:9".into(),
        api_key: Some("k".into()),
        key_source: String::new(),
        max_results: 3,
    });
    let cues = || tools.iter().map(|t| (t.name(), t.cues())).collect::<Vec<_>>();
    let (tuning, heldout) = (load("tuning.jsonl"), load("heldout.jsonl"));
    let only: Option<String> = std::env::args().nth(1);
    for (name, embedded, patterns) in [("EMBEDDED", true, true), ("PATTERNS", false, true), ("EXAMPLES", true, false)] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let e = embedded.then(|| e5.clone());
        let loo = Scorer::with_bank(cues(), e.clone(), tuning.clone(), true).unwrap();
        let shipped = Scorer::with_bank(cues(), e, tuning.clone(), false).unwrap();
        let tune_rows = rows(&loo, &tuning, &tools, embedded, patterns);
        let held_rows = rows(&shipped, &heldout, &tools, embedded, patterns);
        let ridge = choose_ridge(&tune_rows);
        let (weights, bias) = fit_scaled(&tune_rows, ridge);
        let scored = |tool: Option<&str>| -> Vec<(f32, bool)> {
            tune_rows
                .iter()
                .filter(|r| tool.is_none_or(|t| r.tool == t))
                .map(|r| (probability(&weights, bias, &r.x), r.y))
                .collect()
        };
        let default_threshold = best_threshold(&scored(None));
        let mut thresholds = BTreeMap::new();
        for t in &tools {
            thresholds.insert(t.name().to_string(), best_threshold(&scored(Some(t.name()))));
        }
        // The fitted model names its tools for the length of the program (it prints them).
        let leaked: &'static [(&'static str, f32)] = Box::leak(
            thresholds
                .into_iter()
                .map(|(name, t)| (&*Box::leak(name.into_boxed_str()), t))
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        );
        let model = Model { weights, bias, thresholds: leaked, default_threshold };
        println!("\n// ridge {ridge}; features {:?}", Signals::NAMES);
        let doc = match name {
            "EMBEDDED" => "With the embedding model.",
            "PATTERNS" => "Patterns alone.",
            _ => "Examples alone (a tool without patterns).",
        };
        print_model(name, doc, &model);
        table(&format!("{name}, freshly fitted"), &model, &tune_rows, &held_rows);
        let committed =
            if embedded { wright_chat::relevance::model::EMBEDDED } else { wright_chat::relevance::model::PATTERNS };
        table(&format!("{name}, as committed"), &committed, &tune_rows, &held_rows);
    }
}
