//! Tool selection measured on the labelled split (`eval/README.md`): the tuning split (the
//! model's weights and the tools' thresholds were fitted on it; scored leave-one-out, so a
//! message is never its own neighbour) beside the held-out split (only ever measured, with the
//! tuning split as the example bank, as shipped), per tool, with patterns alone and with the
//! embedding model.
//!
//! The gate is the configuration wright ships (patterns + embedding) on the held-out split:
//! precision ≥ 0.9 and recall ≥ 0.85 over all tools, and no tool below precision 0.8 or recall
//! 0.7. Patterns alone (a machine without the model) must keep precision ≥ 0.9: what it cannot
//! understand it leaves alone. The embedding model is fetched like every test that needs it
//! (`WRIGHT_TEST_DATA_DIR`, `cargo xtask setup`); without it the gate fails rather than pass
//! on patterns.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)] // test code: a failed unwrap is a failed test

mod common;

use common::{Labelled, context_with, load};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use wright_chat::{AgentSettings, ChatAgent, Embedder};

#[derive(Default, Clone, Copy)]
struct Counts {
    tp: u32,
    fp: u32,
    fn_: u32,
}

impl Counts {
    fn add(&mut self, o: Counts) {
        self.tp += o.tp;
        self.fp += o.fp;
        self.fn_ += o.fn_;
    }
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 { 1.0 } else { self.tp as f64 / (self.tp + self.fp) as f64 }
    }
    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 { 1.0 } else { self.tp as f64 / (self.tp + self.fn_) as f64 }
    }
}

struct Measured {
    /// Per tool, and `all` summed over tools.
    tools: BTreeMap<String, Counts>,
    /// Messages whose selection was exactly right, per language and kind: (right, all).
    kinds: BTreeMap<(String, String), (u32, u32)>,
    misses: Vec<String>,
}

fn measure(set: &[Labelled], embedder: Option<Arc<dyn Embedder>>, leave_one_out: bool) -> Measured {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (ctx, tools) = rt.block_on(context_with(embedder, leave_one_out));
    let agent = ChatAgent::new(tools.clone(), AgentSettings::default());
    let mut m = Measured {
        tools: tools.iter().map(|t| (t.name().to_string(), Counts::default())).collect(),
        kinds: BTreeMap::new(),
        misses: Vec::new(),
    };
    for l in set {
        let mut ctx = ctx.clone();
        ctx.embedding = ctx.scorer.embed(&l.text).map(Arc::new);
        let sel = agent.select(&l.text, &ctx, &BTreeMap::new());
        let got: BTreeSet<String> =
            sel.foreground.iter().chain(&sel.background).map(|c| c.tool.name().to_string()).collect();
        let want: BTreeSet<String> = l.tools.iter().cloned().collect();
        for (tool, c) in m.tools.iter_mut() {
            match (got.contains(tool), want.contains(tool)) {
                (true, true) => c.tp += 1,
                (true, false) => c.fp += 1,
                (false, true) => c.fn_ += 1,
                _ => {}
            }
        }
        let k = m.kinds.entry((l.lang.clone(), l.kind.clone())).or_default();
        k.1 += 1;
        if got == want {
            k.0 += 1;
        } else {
            let scores: Vec<String> = sel.scores.iter().map(|s| format!("{}={:.2}", s.tool, s.confidence)).collect();
            m.misses.push(format!(
                "[{} {}] {:?}: want {want:?} got {got:?} ({})",
                l.lang,
                l.kind,
                l.text,
                scores.join(" ")
            ));
        }
    }
    let mut all = Counts::default();
    for c in m.tools.values() {
        all.add(*c);
    }
    m.tools.insert("all".into(), all);
    m
}

/// Prints tuning and held-out side by side; returns the held-out figures.
fn report(name: &str, tuning: &[Labelled], heldout: &[Labelled], embedder: Option<Arc<dyn Embedder>>) -> Measured {
    let t = measure(tuning, embedder.clone(), true);
    let h = measure(heldout, embedder, false);
    println!(
        "\n{name}: tuning ({} messages, leave-one-out) | held-out ({} messages)\n\
         | tool | tuning P | tuning R | held-out P | held-out R | held-out TP/FP/FN |\n|---|---|---|---|---|---|",
        tuning.len(),
        heldout.len()
    );
    for (tool, c) in &h.tools {
        let tc = t.tools[tool];
        println!(
            "| {tool} | {:.3} | {:.3} | {:.3} | {:.3} | {}/{}/{} |",
            tc.precision(),
            tc.recall(),
            c.precision(),
            c.recall(),
            c.tp,
            c.fp,
            c.fn_
        );
    }
    println!("held-out messages selected exactly right, by language and kind:");
    for ((lang, kind), (right, all)) in &h.kinds {
        println!("  {lang} {kind}: {right}/{all}");
    }
    for m in &h.misses {
        println!("  held-out miss {m}");
    }
    h
}

#[test]
fn selection_meets_precision_and_recall_on_the_held_out_split() {
    let tuning = load("tuning.jsonl");
    let heldout = load("heldout.jsonl");
    assert!(tuning.len() + heldout.len() >= 300, "{} + {} messages", tuning.len(), heldout.len());
    for lang in ["en", "pt"] {
        let indirect = heldout.iter().filter(|l| l.lang == lang && l.kind == "indirect").count();
        assert!(indirect >= 10, "the held-out split has {indirect} indirect requests in {lang}");
    }
    let mut failing = Vec::new();
    let patterns = report("patterns only", &tuning, &heldout, None);
    let all = patterns.tools["all"];
    if all.precision() < 0.9 {
        failing.push(format!("patterns only: held-out precision {:.3} < 0.9", all.precision()));
    }
    let e = common::embedder().expect("the gate needs the embedding model wright ships (`cargo xtask setup`)");
    let shipped = report("patterns + embedding (as shipped)", &tuning, &heldout, Some(e));
    for (tool, c) in &shipped.tools {
        let (p, r) = (c.precision(), c.recall());
        let (pf, rf) = if tool == "all" { (0.9, 0.85) } else { (0.8, 0.7) };
        if p < pf || r < rf {
            failing
                .push(format!("held-out, as shipped: {tool} precision {p:.3} (floor {pf}) recall {r:.3} (floor {rf})"));
        }
    }
    assert!(failing.is_empty(), "below the floors:\n{}", failing.join("\n"));
}

/// A tool from outside (an MCP server's) brings no patterns, only example requests: the same
/// model, with the default threshold, scores it.
#[test]
fn a_tool_with_only_examples_is_scored_by_the_same_model() {
    use wright_chat::relevance::{Cues, Scorer, labelled};
    let e = common::embedder().expect("the embedding model (`cargo xtask setup`)");
    let tools = wright_chat::builtin_tools(common::video("http://127.0.0.1:9", Some("k")));
    let mut cues: Vec<(&str, Cues)> = tools.iter().map(|t| (t.name(), t.cues())).collect();
    let examples = [
        "make me a timeline of the French Revolution",
        "put the events of World War II on a timeline",
        "order these inventions in time for me, oldest first",
        "faz uma linha do tempo da história do Brasil",
        "quero uma linha do tempo das grandes navegações",
    ];
    cues.push(("timeline", Cues { examples: examples.iter().map(|s| s.to_string()).collect(), ..Cues::default() }));
    let scorer = Scorer::with_bank(cues, Some(e), labelled(), false).unwrap();
    let score = |m: &str| {
        let v = scorer.embed(m);
        scorer.score("timeline", m, v.as_deref())
    };
    let asked: Vec<f32> =
        ["a timeline of the Cold War, please", "me mostra uma linha do tempo da Revolução Industrial"]
            .map(score)
            .to_vec();
    let other: Vec<f32> = ["hi, how are you?", "quiz me on the Cold War", "o que é um algoritmo?"].map(score).to_vec();
    println!("timeline requests {asked:?}; other messages {other:?}");
    // Examples alone rank its requests far above the rest, and never select it for the rest;
    // with five examples they do not always reach the threshold (docs/chat.md says so).
    let lowest_asked = asked.iter().copied().fold(f32::INFINITY, f32::min);
    let highest_other = other.iter().copied().fold(0.0f32, f32::max);
    assert!(lowest_asked > highest_other + 0.2, "{asked:?} vs {other:?}");
    assert!(highest_other < 0.7, "{other:?}");
}
