//! End to end through the real `wright` binary over the Anthropic and Gemini wires, plus rate-limit
//! storms, the fallback chain and the cost budget. The mock model server speaks each provider's
//! real wire format (see `support`); files, processes, node's test runner and HTTP are all real.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use support::counter::*;
use support::{
    ANTHROPIC_KEY, GEMINI_KEY, MockLlm, OPENAI_KEY, Received, Run, Turn, Wire, anthropic_tool_id, assert_contract,
    gemini_signature, wright_in, wright_with,
};

const PROMPT: &str = "make a counter app with a + button";
const STATIC_HTML: &str = "<!DOCTYPE html>\n<html>\n<head>\n  <meta charset=\"utf-8\">\n  <title>Bakery</title>\n</head>\n<body>\n  <h1>Fresh bread every morning</h1>\n</body>\n</html>\n";

/// A one-file static page in one turn, then done.
fn static_page_turns() -> Vec<Turn> {
    vec![
        Turn::calls(&[("createFile", json!({"path": "index.html", "content": STATIC_HTML}))]),
        Turn::text("A static page."),
    ]
}

/// `(input, output, cached)` tokens.
type Tokens = (u64, u64, u64);

/// The tokens of every usage event, then the complete event's totals.
fn usage_of(run: &Run) -> (Vec<Tokens>, Tokens) {
    let triple = |e: &Value| {
        (
            e["input_tokens"].as_u64().unwrap(),
            e["output_tokens"].as_u64().unwrap(),
            e["cached_tokens"].as_u64().unwrap(),
        )
    };
    (run.of_type("usage").into_iter().map(triple).collect(), triple(run.of_type("complete")[0]))
}

fn assert_no_key_in_bodies(received: &[Received], key: &str) {
    for r in received {
        assert!(!r.body.to_string().contains(key), "the API key leaked into a request body: {}", r.body);
        assert!(!r.query.as_deref().unwrap_or_default().contains(key), "the API key leaked into the URL");
    }
}

// ---------------------------------------------------------------------------------------------
// Anthropic

/// The text of a user turn's blocks, joined.
fn anthropic_text(message: &Value) -> String {
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `(tool_use_id, content)` of every `tool_result` block of a message.
fn anthropic_results(message: &Value) -> Vec<(String, String)> {
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| (b["tool_use_id"].as_str().unwrap().to_string(), b["content"].as_str().unwrap().to_string()))
        .collect()
}

async fn anthropic_counter_build(stream: bool) {
    let mock = MockLlm::start_wire(Wire::Anthropic, counter_turns(), Turn::text("All done.")).await;
    let extra: &[&str] = if stream { &[] } else { &["--no-stream"] };
    let run = wright_with("anthropic", &mock.base_url, PROMPT, extra, &[]).await;
    assert_counter_run(&run);

    // Usage: our input is the whole prompt (fresh + cache write + cache read); cached is the read.
    let (usage, total) = usage_of(&run);
    // Six calls: five build turns, then the lesson request of the LEARNING phase.
    let expected: Vec<Tokens> = (1..=6u64).map(|n| (100 + n + 2048, 100, if n == 1 { 0 } else { 2048 })).collect();
    assert_eq!(usage, expected);
    assert_eq!(total, (6 * 2148 + 21, 600, 5 * 2048));

    let received = mock.received();
    assert_eq!(received.len(), 6);
    let lesson = &received[5].body;
    assert!(lesson["tools"].as_array().is_none_or(|t| t.is_empty()), "the lesson request offers no tools: {lesson}");
    for r in &received[..5] {
        assert_eq!(r.path, "/v1/messages");
        assert_eq!(r.query, None);
        assert_eq!(r.header("x-api-key"), Some(ANTHROPIC_KEY));
        assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(r.header("authorization"), None);
        assert_eq!(r.header("content-type"), Some("application/json"));
        let b = &r.body;
        assert_eq!(b["model"], "mock-model");
        assert_eq!(b["max_tokens"], 8192);
        assert_eq!(b.get("stream"), stream.then_some(&json!(true)), "{b}");
        // System text is top-level, and its last block is a cache breakpoint.
        let system = b["system"].as_array().unwrap();
        assert!(!system.is_empty());
        assert!(system[0]["text"].as_str().unwrap().len() > 100);
        assert_eq!(system.last().unwrap()["cache_control"], json!({"type": "ephemeral"}));
        assert!(system[..system.len() - 1].iter().all(|s| s.get("cache_control").is_none()));
        // Tools carry `input_schema`; the last one is the tools' cache breakpoint.
        let tools = b["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 10);
        for t in tools {
            assert_eq!(t["input_schema"]["type"], "object", "{t}");
            assert!(t.get("parameters").is_none() && t["description"].is_string());
        }
        assert_eq!(tools.last().unwrap()["cache_control"], json!({"type": "ephemeral"}));
        assert_eq!(b["tool_choice"], json!({"type": "auto"}));
        // Roles strictly alternate, starting with the user; no system role in messages.
        let roles: Vec<&str> = b["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert!(
            roles.iter().enumerate().all(|(i, r)| *r == if i % 2 == 0 { "user" } else { "assistant" }),
            "{roles:?}"
        );
    }
    let reqs: Vec<&Value> = received.iter().map(|r| &r.body).collect();
    let names: Vec<&str> = reqs[0]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    for n in ["createFile", "readFile", "updateFile", "runTests", "announceStatus"] {
        assert!(names.contains(&n), "{names:?}");
    }
    assert_eq!(reqs[0]["messages"].as_array().unwrap().len(), 1);
    assert!(anthropic_text(&reqs[0]["messages"][0]).contains(PROMPT));

    // The first answer's calls are replayed as tool_use blocks, and their results come back as
    // tool_result blocks with the same ids, all in one user message.
    let second = reqs[1]["messages"].as_array().unwrap();
    assert_eq!(second.len(), 3);
    let uses = second[1]["content"].as_array().unwrap();
    let calls = counter_app_calls();
    assert_eq!(uses.len(), calls.len());
    for (i, (u, (name, args))) in uses.iter().zip(&calls).enumerate() {
        assert_eq!(u, &json!({"type": "tool_use", "id": anthropic_tool_id(1, i), "name": name, "input": args}));
    }
    let results = anthropic_results(&second[2]);
    let ids: Vec<String> = results.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(ids, (0..7).map(|i| anthropic_tool_id(1, i)).collect::<Vec<_>>());
    assert_eq!(second[2]["content"].as_array().unwrap().len(), 7, "only tool results in that turn");
    for (_, content) in &results {
        let v: Value = serde_json::from_str(content).unwrap();
        assert_eq!(v["ok"], true, "{v}");
    }
    assert!(second[2]["content"].as_array().unwrap().iter().all(|b| b.get("is_error").is_none()));

    // The fix request: the model's last words, then a user message naming the failing test.
    let third = reqs[2]["messages"].as_array().unwrap();
    assert_eq!(third.len(), 5);
    assert_eq!(third[3], json!({"role": "assistant", "content": [{"type": "text", "text": "I made a counter app."}]}));
    let fix = anthropic_text(third.last().unwrap());
    assert_eq!(third.last().unwrap()["role"], "user");
    assert!(
        fix.contains("Failing tests") && fix.contains("the + button adds one") && fix.contains("counter.test.js"),
        "{fix}"
    );
    // The fix phase's calls are threaded back by their own ids too.
    let fourth = reqs[3]["messages"].as_array().unwrap();
    let read = anthropic_results(fourth.last().unwrap());
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].0, anthropic_tool_id(3, 0));
    assert!(read[0].1.contains("count - 1"), "{}", read[0].1);
    let fifth = reqs[4]["messages"].as_array().unwrap();
    let ids: Vec<String> = anthropic_results(fifth.last().unwrap()).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, vec![anthropic_tool_id(4, 0), anthropic_tool_id(4, 1)]);
    assert_eq!(fifth.len(), 9);

    assert_no_key_in_bodies(&received, ANTHROPIC_KEY);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_counter_app_red_then_green_streaming() {
    anthropic_counter_build(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_counter_app_red_then_green_non_streaming() {
    anthropic_counter_build(false).await;
}

// ---------------------------------------------------------------------------------------------
// Gemini

/// The last content of a Gemini request.
fn last_content(req: &Value) -> &Value {
    req["contents"].as_array().unwrap().last().unwrap()
}

/// The names of a content's functionResponse parts.
fn response_names(content: &Value) -> Vec<&str> {
    content["parts"].as_array().unwrap().iter().map(|p| p["functionResponse"]["name"].as_str().unwrap()).collect()
}

/// Every key anywhere in a JSON value.
fn keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                out.push(k.clone());
                keys(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

async fn gemini_counter_build(stream: bool) {
    let mock = MockLlm::start_wire(Wire::Gemini, counter_turns(), Turn::text("All done.")).await;
    let extra: &[&str] = if stream { &[] } else { &["--no-stream"] };
    let run = wright_with("gemini", &mock.base_url, PROMPT, extra, &[]).await;
    assert_counter_run(&run);

    // Usage: the last (cumulative) usageMetadata; output counts candidates plus thoughts.
    let (usage, total) = usage_of(&run);
    // Six calls: five build turns, then the lesson request of the LEARNING phase.
    let expected: Vec<Tokens> = (1..=6u64).map(|n| (4000 + n, 50 + 14, 3072)).collect();
    assert_eq!(usage, expected);
    assert_eq!(total, (6 * 4000 + 21, 6 * 64, 6 * 3072));

    let received = mock.received();
    assert_eq!(received.len(), 6);
    let lesson = &received[5].body;
    assert!(lesson["tools"].as_array().is_none_or(|t| t.is_empty()), "the lesson request offers no tools: {lesson}");
    for r in &received[..5] {
        if stream {
            assert_eq!(r.path, "/v1beta/models/mock-model:streamGenerateContent");
            assert_eq!(r.query.as_deref(), Some("alt=sse"));
        } else {
            assert_eq!(r.path, "/v1beta/models/mock-model:generateContent");
            assert_eq!(r.query, None);
        }
        assert_eq!(r.header("x-goog-api-key"), Some(GEMINI_KEY));
        assert_eq!(r.header("x-api-key"), None);
        assert_eq!(r.header("authorization"), None);
        let b = &r.body;
        let system = b["systemInstruction"]["parts"].as_array().unwrap();
        assert_eq!(system.len(), 1);
        assert!(system[0]["text"].as_str().unwrap().len() > 100);
        let roles: Vec<&str> = b["contents"].as_array().unwrap().iter().map(|c| c["role"].as_str().unwrap()).collect();
        assert!(roles.iter().enumerate().all(|(i, r)| *r == if i % 2 == 0 { "user" } else { "model" }), "{roles:?}");
        let decls = b["tools"][0]["functionDeclarations"].as_array().unwrap();
        assert_eq!(decls.len(), 10);
        let mut all_keys = Vec::new();
        keys(&b["tools"], &mut all_keys);
        for banned in ["$schema", "additionalProperties", "$ref", "$defs", "default"] {
            assert!(!all_keys.iter().any(|k| k == banned), "{banned} in {}", b["tools"]);
        }
        let create = decls.iter().find(|d| d["name"] == "createFile").unwrap();
        assert_eq!(create["parameters"]["type"], "object");
        assert!(create["parameters"]["properties"]["path"].is_object());
        assert_eq!(b["toolConfig"], json!({"functionCallingConfig": {"mode": "AUTO"}}));
    }
    let reqs: Vec<&Value> = received.iter().map(|r| &r.body).collect();
    assert_eq!(reqs[0]["contents"].as_array().unwrap().len(), 1);
    assert!(reqs[0]["contents"][0]["parts"][0]["text"].as_str().unwrap().contains(PROMPT));

    // The calls come back as they were sent (the first with its thought signature, none with an
    // id, since the mock gave none), and their results as functionResponse parts by name.
    let second = reqs[1]["contents"].as_array().unwrap();
    assert_eq!(second.len(), 3);
    let calls = counter_app_calls();
    let parts = second[1]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), calls.len());
    for (i, (p, (name, args))) in parts.iter().zip(&calls).enumerate() {
        assert_eq!(p["functionCall"], json!({"name": name, "args": args}));
        assert_eq!(p.get("thoughtSignature").cloned(), (i == 0).then(|| json!(gemini_signature(1))), "{p}");
    }
    let names: Vec<&str> = calls.iter().map(|(n, _)| *n).collect();
    assert_eq!(second[2]["role"], "user");
    assert_eq!(response_names(&second[2]), names);
    for p in second[2]["parts"].as_array().unwrap() {
        assert_eq!(p["functionResponse"]["response"]["ok"], true, "{p}");
        assert!(p["functionResponse"].get("id").is_none());
    }

    // The fix request: the model's last words, then a user message naming the failing test.
    let third = reqs[2]["contents"].as_array().unwrap();
    assert_eq!(third.len(), 5);
    assert_eq!(third[3], json!({"role": "model", "parts": [{"text": "I made a counter app."}]}));
    let fix = last_content(reqs[2]);
    assert_eq!(fix["role"], "user");
    let fix = fix["parts"].as_array().unwrap().last().unwrap()["text"].as_str().unwrap();
    assert!(
        fix.contains("Failing tests") && fix.contains("the + button adds one") && fix.contains("counter.test.js"),
        "{fix}"
    );
    let read = last_content(reqs[3]);
    assert_eq!(response_names(read), vec!["readFile"]);
    assert!(read["parts"][0]["functionResponse"]["response"].to_string().contains("count - 1"));
    assert_eq!(reqs[3]["contents"][5]["parts"][0]["thoughtSignature"], gemini_signature(3));
    assert_eq!(response_names(last_content(reqs[4])), vec!["updateFile", "runTests"]);
    assert_eq!(reqs[4]["contents"].as_array().unwrap().len(), 9);

    assert_no_key_in_bodies(&received, GEMINI_KEY);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_counter_app_red_then_green_streaming() {
    gemini_counter_build(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_counter_app_red_then_green_non_streaming() {
    gemini_counter_build(false).await;
}

// ---------------------------------------------------------------------------------------------
// Rate limits, fallback, budget

/// Retry narrations: `(error class, retry number)` of each "trying again" status.
fn retries(run: &Run) -> Vec<(String, u32)> {
    run.of_type("status")
        .iter()
        .filter_map(|e| {
            let m = e["message"].as_str().unwrap();
            let class = m.strip_prefix("The model service had a problem (")?.split(')').next()?.to_string();
            let n = m.rsplit("(retry ").next()?.trim_end_matches(").").parse().ok()?;
            Some((class, n))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_rate_limit_storm_does_not_use_the_retry_budget() {
    let limited = r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."},"request_id":"req_011CYgf62wsH78UURDRjqYyi"}"#;
    let mut turns: Vec<Turn> = (0..6).map(|_| Turn::status_with(429, &[("retry-after", "0")], limited)).collect();
    turns.extend(static_page_turns());
    let mock = MockLlm::start_wire(Wire::Anthropic, turns, Turn::text("All done.")).await;
    let run = wright_with(
        "anthropic",
        &mock.base_url,
        "a landing page for my bakery",
        &["--template", "static", "--max-retries", "1"],
        &[],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}\n{}", run.stderr, run.stdout);
    assert_contract(&run);
    assert_eq!(run.phases(), vec!["PLANNING:0", "GENERATING:0", "VERIFYING:0", "PUBLISHED:0"]);
    assert_eq!(retries(&run), (1..=6).map(|n| ("rate_limited".to_string(), n)).collect::<Vec<_>>());
    assert_eq!(run.of_type("usage").len(), 2);
    assert_eq!(run.of_type("complete")[0]["iterations"], 2);
    // Six refused tries of the same request, then the two real turns.
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 8);
    assert!(reqs[..7].iter().all(|r| r == &reqs[0]), "a retry resends the same request");
    assert_eq!(std::fs::read_to_string(run.workspace().join("index.html")).unwrap(), STATIC_HTML);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_primary_opens_its_breaker_and_the_build_falls_back() {
    let down = r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#;
    let primary = MockLlm::start_wire(Wire::Anthropic, vec![], Turn::Status(500, down.into())).await;
    let backup = MockLlm::start_wire(Wire::OpenAi, static_page_turns(), Turn::text("All done.")).await;
    let dir = tempfile::tempdir().unwrap();
    // The primary's model is expensive, the backup's free: cost must follow who answered.
    std::fs::write(
        dir.path().join("wright.toml"),
        format!(
            "fallback = [\"openai:backup-model@{}\"]\n[pricing.\"mock-model\"]\ninput = 1000.0\noutput = 1000.0\n[pricing.\"backup-model\"]\ninput = 0.0\noutput = 0.0\n",
            backup.base_url
        ),
    )
    .unwrap();
    let run = wright_in(
        dir,
        "anthropic",
        &primary.base_url,
        "a landing page for my bakery",
        &["--template", "static"],
        &[("OPENAI_API_KEY", OPENAI_KEY)],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}\n{}", run.stderr, run.stdout);
    assert_contract(&run);
    assert_eq!(run.phases(), vec!["PLANNING:0", "GENERATING:0", "VERIFYING:0", "PUBLISHED:0"]);

    // Breaker threshold 3: the first call fails three times on the primary (opening its breaker,
    // and using 3 of the 4 default retries); the 4th try and every later call go to the backup.
    let p = primary.received();
    assert_eq!(p.len(), 3);
    assert!(p.iter().all(|r| r.body["model"] == "mock-model" && r.header("x-api-key") == Some(ANTHROPIC_KEY)));
    assert_eq!(retries(&run), (1..=3).map(|n| ("transient".to_string(), n)).collect::<Vec<_>>());
    let b = backup.received();
    assert_eq!(b.len(), 2);
    for r in &b {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.body["model"], "backup-model");
        assert_eq!(r.body["messages"][0]["role"], "system");
        assert_eq!(r.header("authorization"), Some(format!("Bearer {OPENAI_KEY}").as_str()));
        assert_eq!(r.header("x-api-key"), None);
    }
    // The backup got the same conversation the primary was refused on.
    assert_eq!(b[0].body["messages"].as_array().unwrap().len(), 2);
    assert_eq!(b[0].body["messages"][1]["content"], p[0].body["messages"][0]["content"][0]["text"]);
    assert_eq!(b[1].body["messages"][3]["role"], "tool");
    assert_eq!(run.of_type("usage").len(), 2);
    assert!(run.of_type("usage").iter().all(|u| u["cost_usd"] == 0.0), "priced at the backup's rates");
    assert_eq!(run.of_type("complete")[0]["cost_usd"], 0.0);
    assert_eq!(std::fs::read_to_string(run.workspace().join("index.html")).unwrap(), STATIC_HTML);
    assert_no_key_in_bodies(&p, ANTHROPIC_KEY);
    assert_no_key_in_bodies(&b, OPENAI_KEY);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cost_budget_ends_the_build_after_the_first_expensive_call_on_every_wire() {
    // $1000 per million tokens (cached input at the input price): the first call's cost, per wire.
    let cases = [
        (Wire::OpenAi, (489.0 + 512.0 + 100.0) / 1000.0),
        (Wire::Anthropic, (101.0 + 2048.0 + 100.0) / 1000.0),
        (Wire::Gemini, (4001.0 + 64.0) / 1000.0),
    ];
    for (wire, cost) in cases {
        let mock = MockLlm::start_wire(wire, counter_turns(), Turn::text("All done.")).await;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("prices.toml"), "[\"mock-model\"]\ninput = 1000.0\noutput = 1000.0\n").unwrap();
        let run = wright_in(
            dir,
            wire.provider(),
            &mock.base_url,
            PROMPT,
            &["--prices", "prices.toml", "--max-cost", "0.5"],
            &[],
        )
        .await;
        assert_eq!(run.code, 1, "{wire:?} stderr: {}\n{}", run.stderr, run.stdout);
        assert_contract(&run);
        assert_eq!(run.phases(), vec!["PLANNING:0", "GENERATING:0", "FAILED:0"], "{wire:?}");
        let message = format!("The cost budget is spent (${cost:.4}); stopping here.");
        let failed = run.of_type("phase").into_iter().find(|e| e["phase"] == "FAILED").unwrap();
        assert_eq!(failed["message"], message.as_str());
        assert_eq!(run.of_type("error").len(), 1);
        assert_eq!(run.of_type("error")[0]["message"], message.as_str());
        let usage = run.of_type("usage");
        assert_eq!(usage.len(), 1);
        let spent = usage[0]["cost_usd"].as_f64().unwrap();
        assert!((spent - cost).abs() < 1e-9, "{wire:?}: {spent} vs {cost}");
        let complete = run.of_type("complete")[0];
        assert_eq!(complete["success"], false);
        assert_eq!(complete["iterations"], 1);
        let total = complete["cost_usd"].as_f64().unwrap();
        assert!(total > 0.5 && (total - cost).abs() < 1e-9, "{wire:?}: {total}");
        // The answer's tool calls were not run: the budget stops the build before them.
        assert_eq!(mock.requests().len(), 1);
        assert!(run.of_type("tool_call").is_empty() && run.of_type("file_written").is_empty());
        assert!(!run.workspace().join("counter.js").exists());
    }
}
