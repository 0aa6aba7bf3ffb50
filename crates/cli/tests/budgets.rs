//! Sampling per phase (`[sampling]`) and token budgets per template (`[budgets]`), through the
//! real `wright` binary against mock model servers that speak each wire's request shape.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use support::counter::*;
use support::{MockLlm, Run, Turn, Wire, wright_in};

const PAGE: &str = "<!DOCTYPE html>\n<html>\n<head>\n  <meta charset=\"utf-8\">\n  <title>Bakery</title>\n</head>\n<body>\n  <h1>Fresh bread every morning</h1>\n</body>\n</html>\n";

fn dir_with(toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wright.toml"), toml).unwrap();
    dir
}

/// The temperature of a request body, where each wire puts it.
fn temperature(wire: Wire, body: &Value) -> Option<f64> {
    match wire {
        Wire::Gemini => body["generationConfig"]["temperature"].as_f64(),
        Wire::OpenAi | Wire::Anthropic => body["temperature"].as_f64(),
    }
}

fn close(t: Option<f64>, want: f64) -> bool {
    t.is_some_and(|t| (t - want).abs() < 1e-6)
}

#[tokio::test]
async fn code_generation_is_sampled_at_0_3_on_every_wire_by_default() {
    for wire in [Wire::OpenAi, Wire::Anthropic, Wire::Gemini] {
        let turns = vec![
            Turn::calls(&[("createFile", json!({"path": "index.html", "content": PAGE}))]),
            Turn::text("A static page."),
        ];
        let mock = MockLlm::start_wire(wire, turns, Turn::text("done")).await;
        let run = wright_in(
            tempfile::tempdir().unwrap(),
            wire.provider(),
            &mock.base_url,
            "a bakery page",
            &["--template", "static"],
            &[],
        )
        .await;
        assert_eq!(run.code, 0, "{wire:?}: {}", run.stderr);
        let received = mock.received();
        assert_eq!(received.len(), 2, "{wire:?}");
        for r in &received {
            assert!(close(temperature(wire, &r.body), 0.3), "{wire:?}: {}", r.body);
        }
    }
}

#[tokio::test]
async fn each_phase_is_sampled_as_set_and_the_flag_sets_every_phase() {
    let toml = "[sampling.generate]\ntemperature = 0.7\n[sampling.fix]\ntemperature = 0.1\n[sampling.note]\ntemperature = 0.5\n";
    let mock = MockLlm::start(counter_turns()).await;
    let run = wright_in(dir_with(toml), "openai", &mock.base_url, "make a counter app with a + button", &[], &[]).await;
    assert_counter_run(&run);
    let bodies = mock.requests();
    let (with_tools, note): (Vec<&Value>, Vec<&Value>) =
        bodies.iter().partition(|b| b["tools"].as_array().is_some_and(|t| !t.is_empty()));
    assert_eq!((with_tools.len(), note.len()), (5, 1), "five build turns and the lesson");
    let temps: Vec<Option<f64>> = with_tools.iter().map(|b| temperature(Wire::OpenAi, b)).collect();
    assert!(close(temps[0], 0.7) && close(temps[1], 0.7), "generation: {temps:?}");
    assert!(temps[2..].iter().all(|t| close(*t, 0.1)), "fix attempts: {temps:?}");
    assert!(close(temperature(Wire::OpenAi, note[0]), 0.5), "the lesson: {}", note[0]);

    let mock = MockLlm::start(counter_turns()).await;
    let run = wright_in(
        dir_with(toml),
        "openai",
        &mock.base_url,
        "make a counter app with a + button",
        &["--temperature", "0.9"],
        &[],
    )
    .await;
    assert_counter_run(&run);
    assert!(mock.requests().iter().all(|b| close(temperature(Wire::OpenAi, b), 0.9)));
}

#[tokio::test]
async fn a_temperature_out_of_range_is_refused_before_any_call() {
    let mock = MockLlm::start(vec![]).await;
    let run =
        wright_in(dir_with("[sampling.chat]\ntemperature = 7\n"), "openai", &mock.base_url, "a page", &[], &[]).await;
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("[sampling.chat] temperature = 7 is out of range"), "{}", run.stderr);
    assert!(mock.requests().is_empty());
}

/// A static page written section by section: each turn rewrites the whole (growing) page,
/// reads it back and runs a command with a long output.
fn long_turns() -> Vec<Turn> {
    let mut body = String::new();
    let mut turns = Vec::new();
    for i in 0..8 {
        body.push_str(&format!(
            "  <section id=\"s{i}\">\n    <h2>Loaf {i}</h2>\n    <p>{}</p>\n  </section>\n",
            "Fresh loaves, baked before dawn with stone-ground flour. ".repeat(20)
        ));
        let page = format!(
            "<!DOCTYPE html>\n<html>\n<head>\n  <meta charset=\"utf-8\">\n  <title>Bakery</title>\n</head>\n<body>\n{body}</body>\n</html>\n"
        );
        turns.push(Turn::calls(&[("createFile", json!({"path": "index.html", "content": page}))]));
        turns.push(Turn::calls(&[("readFile", json!({"path": "index.html"}))]));
        let to = (3000 + i).to_string();
        turns.push(Turn::calls(&[("runCommand", json!({"command": "seq", "args": ["1", to]}))]));
    }
    turns.push(Turn::text("The bakery page is ready."));
    turns
}

/// Estimated tokens a request body sends (four characters each) and its answer cap.
fn sent_tokens(body: &Value) -> (usize, u64) {
    let chars: usize = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["content"].as_str().map_or(0, |c| c.chars().count())
                + m["tool_calls"].as_array().map_or(0, |calls| {
                    calls.iter().map(|c| c["function"]["arguments"].as_str().unwrap().chars().count()).sum()
                })
        })
        .sum();
    (chars.div_ceil(4), body["max_tokens"].as_u64().unwrap_or(0))
}

async fn long_build(toml: &str) -> (Run, Vec<Value>) {
    let mock = MockLlm::start(long_turns()).await;
    let run =
        wright_in(dir_with(toml), "openai", &mock.base_url, "a bakery page", &["--template", "static"], &[]).await;
    (run, mock.requests())
}

fn outcome(run: &Run) -> (i32, Vec<String>, Value, Vec<String>) {
    let complete = run.of_type("complete")[0];
    let files = std::fs::read_to_string(run.workspace().join("index.html")).unwrap_or_default();
    (run.code, run.phases(), complete["success"].clone(), vec![files])
}

#[tokio::test]
async fn a_long_conversation_stays_within_the_templates_total_and_still_publishes() {
    let (kept, bodies) = long_build("[budgets]\nenforce = true\n").await;
    assert_eq!(kept.code, 0, "{}", kept.stderr);
    assert!(kept.phases().last().unwrap().starts_with("PUBLISHED"), "{:?}", kept.phases());
    let usage = kept.of_type("usage");
    assert_eq!(usage.len(), bodies.len());
    for (u, body) in usage.iter().zip(&bodies) {
        let b = &u["budget"];
        assert_eq!(b["name"], "static");
        assert_eq!(b["total"], 3200);
        assert_eq!(b["enforced"], true);
        assert!(b["used"].as_u64().unwrap() <= 3200, "{b}");
        assert!(!b["over"].as_array().is_some_and(|o| o.contains(&json!("total"))), "{b}");
        // The contract's fields are still there.
        assert!(u["input_tokens"].is_u64() && u["cost_usd"].is_number());
        let (prompt, cap) = sent_tokens(body);
        assert_eq!(cap, 2000, "the answer's share is the call's max_tokens");
        assert!(prompt as u64 + cap <= 3200, "sent {prompt} tokens + {cap}");
    }
    // The request is in every call, and what was said about trimming reaches the model.
    assert!(bodies.iter().all(|b| b["messages"][1]["content"].as_str().unwrap().contains("a bakery page")));
    let last = bodies.last().unwrap().to_string();
    assert!(last.contains("characters shown, to keep within the token budget"), "{last}");
    // What the model wrote is on disk: a line stands for it, even in the latest turn.
    assert!(bodies[1].to_string().contains("bytes written earlier; readFile to see it"), "{}", bodies[1]);

    // The same script without budgets: the same outcome, and calls well over the total.
    let (free, free_bodies) = long_build("").await;
    assert_eq!(outcome(&free), outcome(&kept));
    let over = free.of_type("usage").iter().filter(|u| u["budget"]["used"].as_u64().unwrap() > 3200).count();
    assert!(over > 10, "{over} calls over without budgets");
    assert!(free_bodies.iter().all(|b| b.get("max_tokens").is_none()), "nothing is capped without budgets");
}

/// Tokens per build on the scripted builds, measured against their budgets and kept to them;
/// the outcome must not change. `cargo test -p wright-cli --test budgets tokens_per_build --
/// --nocapture` prints the figures.
#[tokio::test]
async fn tokens_per_build_with_and_without_budgets() {
    let sum = |run: &Run| -> (u64, u64) {
        let u = run.of_type("usage");
        // The lesson's call is not a build turn and has no budget.
        (u.iter().filter_map(|e| e["budget"]["used"].as_u64()).sum(), u.len() as u64)
    };
    let (free, _) = long_build("").await;
    let (kept, _) = long_build("[budgets]\nenforce = true\n").await;
    assert_eq!(outcome(&free), outcome(&kept));
    let (f, k) = (sum(&free), sum(&kept));
    println!("long static build: {} calls, {} tokens measured; with budgets {} tokens", f.1, f.0, k.0);
    assert!(k.0 < f.0 / 2, "{k:?} vs {f:?}");

    let counter = |toml: &'static str| async move {
        let mock = MockLlm::start(counter_turns()).await;
        wright_in(dir_with(toml), "openai", &mock.base_url, "make a counter app with a + button", &[], &[]).await
    };
    let free = counter("").await;
    let kept = counter("[budgets]\nenforce = true\n").await;
    assert_counter_run(&free);
    assert_counter_run(&kept);
    let (f, k) = (sum(&free), sum(&kept));
    println!(
        "counter build (interactive, one fix): {} calls, {} tokens measured; with budgets {} tokens",
        f.1, f.0, k.0
    );
    assert!(k.0 <= f.0, "{k:?} vs {f:?}");
}

/// A task run (`wright task run`) has its own budget (`[budgets.task]`) and samples as code
/// generation does.
#[tokio::test]
async fn a_task_run_keeps_to_the_task_budget_and_samples_as_generation() {
    let dir = dir_with("[budgets]\nenforce = true\n[budgets.task]\nanswer = 1000\ntotal = 2400\n");
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let comments = "// the sum of two numbers, as the price list needs it\n".repeat(200);
    // Small to begin with: a task's request carries its input files, and the request is never cut.
    std::fs::write(proj.join("math.js"), "exports.add = (a, b) => a - b;\n").unwrap();
    let plan = json!({"goal": "make add add", "tasks": [
        {"id": "fix-add", "type": "code_generation", "description": "add must add, not subtract",
         "input_artifacts": ["math.js"], "output_artifacts": ["math.js"],
         "validation_criteria": ["node -e \"process.exit(require('./math.js').add(2, 3) === 5 ? 0 : 1)\""]}
    ]});
    std::fs::write(dir.path().join("plan.json"), plan.to_string()).unwrap();
    let fixed = format!("{comments}exports.add = (a, b) => a + b;\n");
    let mock = MockLlm::start(vec![
        Turn::calls(&[("readFile", json!({"path": "math.js"}))]),
        Turn::calls(&[("runCommand", json!({"command": "seq", "args": ["1", "4000"]}))]),
        Turn::calls(&[("updateFile", json!({"path": "math.js", "content": fixed}))]),
        Turn::text("add now adds."),
    ])
    .await;
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.args(["task", "run", "plan.json", "--events", "jsonl", "--workspace"]).arg(&proj);
    cmd.args(["--provider", "openai", "--base-url", &mock.base_url, "--model", "mock-model", "--data-dir"]);
    cmd.arg(dir.path().join("data")).current_dir(dir.path()).env("OPENAI_API_KEY", support::OPENAI_KEY);
    for k in support::HOST_ENV {
        cmd.env_remove(k);
    }
    let out = cmd.output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let events: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let usage: Vec<&Value> = events.iter().filter(|e| e["type"] == "usage").collect();
    let bodies = mock.requests();
    assert_eq!(usage.len(), 4);
    for (u, body) in usage.iter().zip(&bodies) {
        let b = &u["budget"];
        assert_eq!((b["name"].as_str(), b["total"].as_u64()), (Some("task"), Some(2400)));
        assert!(b["used"].as_u64().unwrap() <= 2400, "{b}");
        let (prompt, cap) = sent_tokens(body);
        assert_eq!(cap, 1000);
        assert!(prompt as u64 + cap <= 2400, "sent {prompt} + {cap}");
        assert!(close(temperature(Wire::OpenAi, body), 0.3), "{}", body["temperature"]);
    }
    assert!(std::fs::read_to_string(proj.join("math.js")).unwrap().contains("a + b"));
}
