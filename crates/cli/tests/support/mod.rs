//! A local OpenAI-compatible server for end-to-end tests. It speaks the real Chat Completions
//! wire (JSON bodies, and SSE chunks with tool-call deltas split by `index` and a final usage
//! chunk), plays a scripted list of model turns, and records every request it receives.

#![allow(dead_code)]

use axum::{Router, extract::State, http::StatusCode, response::IntoResponse, routing::post};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One scripted model turn.
#[derive(Clone, Debug)]
pub enum Turn {
    /// An assistant message: optional text and tool calls `(name, raw arguments text)`.
    Say { text: Option<String>, calls: Vec<(String, String)> },
    /// An HTTP error with a body.
    Status(u16, String),
}

impl Turn {
    pub fn calls(calls: &[(&str, Value)]) -> Self {
        Self::Say { text: None, calls: calls.iter().map(|(n, a)| (n.to_string(), a.to_string())).collect() }
    }
    pub fn raw_calls(calls: &[(&str, &str)]) -> Self {
        Self::Say { text: None, calls: calls.iter().map(|(n, a)| (n.to_string(), a.to_string())).collect() }
    }
    pub fn text(t: &str) -> Self {
        Self::Say { text: Some(t.to_string()), calls: vec![] }
    }
}

struct Inner {
    turns: Mutex<VecDeque<Turn>>,
    fallback: Turn,
    requests: Mutex<Vec<Value>>,
    counter: Mutex<u64>,
}

#[derive(Clone)]
pub struct MockLlm {
    inner: Arc<Inner>,
    pub base_url: String,
}

impl MockLlm {
    pub async fn start(turns: Vec<Turn>) -> Self {
        Self::start_with_fallback(turns, Turn::text("All done.")).await
    }

    pub async fn start_with_fallback(turns: Vec<Turn>, fallback: Turn) -> Self {
        let inner = Arc::new(Inner {
            turns: Mutex::new(turns.into()),
            fallback,
            requests: Mutex::default(),
            counter: Mutex::new(0),
        });
        let app = Router::new().route("/v1/chat/completions", post(handle)).with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { inner, base_url: format!("http://{addr}/v1") }
    }

    pub fn requests(&self) -> Vec<Value> {
        self.inner.requests.lock().unwrap().clone()
    }
}

async fn handle(State(inner): State<Arc<Inner>>, body: String) -> axum::response::Response {
    let req: Value = match serde_json::from_str(&body) {
        Ok(v) => v,
        Err(e) => {
            return (StatusCode::BAD_REQUEST, json!({"error": {"message": e.to_string()}}).to_string()).into_response();
        }
    };
    let stream = req["stream"] == true;
    inner.requests.lock().unwrap().push(req);
    let turn = inner.turns.lock().unwrap().pop_front().unwrap_or_else(|| inner.fallback.clone());
    let n = {
        let mut c = inner.counter.lock().unwrap();
        *c += 1;
        *c
    };
    match turn {
        Turn::Status(code, body) => {
            (StatusCode::from_u16(code).unwrap(), [("content-type", "application/json")], body).into_response()
        }
        Turn::Say { text, calls } => {
            if stream {
                ([("content-type", "text/event-stream")], sse_body(n, text, calls)).into_response()
            } else {
                ([("content-type", "application/json")], json_body(n, text, calls)).into_response()
            }
        }
    }
}

fn json_body(n: u64, text: Option<String>, calls: Vec<(String, String)>) -> String {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| json!({"id": format!("call_{n}_{i}"), "type": "function", "function": {"name": name, "arguments": args}}))
        .collect();
    let mut message = json!({"role": "assistant", "content": text, "refusal": null});
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
    }
    json!({
        "id": format!("chatcmpl-{n}"), "object": "chat.completion", "created": 1_700_000_000u64, "model": "mock-model",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" }}],
        "usage": {"prompt_tokens": 1000 + n, "completion_tokens": 100, "total_tokens": 1100 + n, "prompt_tokens_details": {"cached_tokens": 512, "audio_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}},
        "system_fingerprint": "fp_mock"
    })
    .to_string()
}

fn sse_body(n: u64, text: Option<String>, calls: Vec<(String, String)>) -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk", "created": 1_700_000_000u64, "model": "mock-model", "system_fingerprint": "fp_mock",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}], "usage": null})
    };
    let mut out = String::new();
    let mut push = |v: Value| out.push_str(&format!("data: {v}\n\n"));
    push(chunk(
        json!({"role": "assistant", "content": if text.is_some() { json!("") } else { Value::Null }, "refusal": null}),
        Value::Null,
    ));
    if let Some(t) = &text {
        let mid = t.char_indices().nth(t.chars().count() / 2).map_or(0, |(i, _)| i);
        for piece in [&t[..mid], &t[mid..]] {
            push(chunk(json!({"content": piece}), Value::Null));
        }
    }
    for (i, (name, args)) in calls.iter().enumerate() {
        push(chunk(
            json!({"tool_calls": [{"index": i, "id": format!("call_{n}_{i}"), "type": "function", "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ));
        // Arguments arrive in pieces, split on a char boundary, as real servers send them.
        let mid = args.char_indices().nth(args.chars().count() / 2).map_or(0, |(i, _)| i);
        for piece in [&args[..mid], &args[mid..]] {
            push(chunk(json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}), Value::Null));
        }
    }
    push(chunk(json!({}), json!(if calls.is_empty() { "stop" } else { "tool_calls" })));
    push(
        json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk", "created": 1_700_000_000u64, "model": "mock-model", "choices": [],
                "usage": {"prompt_tokens": 1000 + n, "completion_tokens": 100, "total_tokens": 1100 + n, "prompt_tokens_details": {"cached_tokens": 512}, "completion_tokens_details": {"reasoning_tokens": 0}}}),
    );
    out.push_str("data: [DONE]\n\n");
    out
}

/// The result of running the real binary.
pub struct Run {
    pub code: i32,
    pub events: Vec<Value>,
    pub stdout: String,
    pub stderr: String,
    pub dir: tempfile::TempDir,
}

impl Run {
    pub fn workspace(&self) -> std::path::PathBuf {
        self.dir.path().join("ws")
    }
    pub fn of_type(&self, t: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == t).collect()
    }
    pub fn phases(&self) -> Vec<String> {
        self.of_type("phase").iter().map(|e| format!("{}:{}", e["phase"].as_str().unwrap(), e["iteration"])).collect()
    }
}

/// Run `wright run PROMPT --events jsonl` against `base_url` with extra args, in a fresh dir.
pub async fn wright(base_url: &str, prompt: &str, extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    let jsonl = !extra.contains(&"--events");
    cmd.arg("run").arg(prompt).args(["--provider", "openai", "--base-url", base_url, "--model", "mock-model"]);
    cmd.arg("--workspace").arg(dir.path().join("ws")).arg("--data-dir").arg(dir.path().join("data"));
    cmd.args(extra);
    if jsonl {
        cmd.args(["--events", "jsonl"]);
    }
    cmd.current_dir(dir.path());
    for k in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "WRIGHT_PROVIDER",
        "WRIGHT_MODEL",
        "WRIGHT_BASE_URL",
        "WRIGHT_DATA_DIR",
        "WRIGHT_CONFIG",
    ] {
        cmd.env_remove(k);
    }
    cmd.env("OPENAI_API_KEY", "sk-test-secret-key-123");
    let out = cmd.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let events = if !jsonl {
        vec![]
    } else {
        stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    };
    Run {
        code: out.status.code().unwrap_or(-1),
        events,
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        dir,
    }
}

/// The contract's invariants for every event stream.
pub fn assert_contract(run: &Run) {
    assert!(!run.events.is_empty(), "no events; stderr: {}", run.stderr);
    let build = run.events[0]["build"].as_str().unwrap().to_string();
    for (i, e) in run.events.iter().enumerate() {
        assert_eq!(e["seq"], (i + 1) as u64, "seq gap at {i}: {e}");
        assert_eq!(e["build"], build.as_str());
        let ts = e["ts"].as_str().unwrap();
        assert!(chrono_like(ts), "ts not RFC 3339: {ts}");
        assert!(e["type"].is_string());
    }
    assert_eq!(run.events.last().unwrap()["type"], "complete", "last event must be complete");
    assert_eq!(run.of_type("complete").len(), 1);
}

fn chrono_like(ts: &str) -> bool {
    ts.len() >= 20 && ts.as_bytes()[4] == b'-' && ts.as_bytes()[10] == b'T' && (ts.ends_with('Z') || ts.contains('+'))
}
