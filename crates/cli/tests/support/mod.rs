//! A local model server for end-to-end tests. It speaks three real wires, plays a scripted list of
//! model turns, and records every request it receives:
//! - OpenAI Chat Completions (`POST /v1/chat/completions`): JSON bodies, and SSE chunks with
//!   tool-call deltas split by `index` and a final usage chunk;
//! - Anthropic Messages (`POST /v1/messages`): a JSON `Message`, or the SSE events
//!   `message_start` … `content_block_*` … `message_delta`, `message_stop`, with tool arguments
//!   split over several `input_json_delta` pieces;
//! - Gemini (`POST /v1beta/models/{model}:generateContent`, or `:streamGenerateContent?alt=sse`):
//!   a `GenerateContentResponse`, or `data:` chunks each holding one, with cumulative
//!   `usageMetadata`.

#![allow(dead_code)]

pub mod browser;
pub mod counter;
pub mod eval_model;
pub mod python;
pub mod server;

use axum::{
    Router,
    extract::State,
    http::{HeaderMap, StatusCode, Uri},
    response::IntoResponse,
    routing::post,
};
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

/// The keys the runs are given, one per wire; none may ever reach a request body.
pub const OPENAI_KEY: &str = "sk-test-secret-key-123";
pub const ANTHROPIC_KEY: &str = "sk-ant-test-123";
pub const GEMINI_KEY: &str = "gm-test-123";

/// The request headers the mock records (lower-case).
const RECORDED_HEADERS: [&str; 5] =
    ["x-api-key", "anthropic-version", "x-goog-api-key", "authorization", "content-type"];

/// One scripted model turn.
#[derive(Clone, Debug)]
pub enum Turn {
    /// An assistant message: optional text and tool calls `(name, raw arguments text)`.
    Say { text: Option<String>, calls: Vec<(String, String)> },
    /// An HTTP error with a body.
    Status(u16, String),
    /// An HTTP error with extra response headers (e.g. `retry-after`) and a body.
    StatusWith(u16, Vec<(String, String)>, String),
    /// `then` if the request's body contains the text, else `otherwise`: a model whose answer
    /// depends on what its prompt says (a lesson it was given, say).
    When { contains: String, then: Box<Turn>, otherwise: Box<Turn> },
    /// The turn, answered after a pause of this many milliseconds (a slow model).
    Slow(u64, Box<Turn>),
    /// The turn with its calls' ids `call_0`, `call_1`, … in every answer (OpenAI wire), as
    /// servers and parsers that make ids per answer give them.
    SameIds(Box<Turn>),
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
    pub fn when(contains: &str, then: Turn, otherwise: Turn) -> Self {
        Self::When { contains: contains.to_string(), then: Box::new(then), otherwise: Box::new(otherwise) }
    }
    pub fn slow(ms: u64, turn: Turn) -> Self {
        Self::Slow(ms, Box::new(turn))
    }
    pub fn same_ids(turn: Turn) -> Self {
        Self::SameIds(Box::new(turn))
    }
    pub fn status_with(code: u16, headers: &[(&str, &str)], body: &str) -> Self {
        Self::StatusWith(code, headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(), body.to_string())
    }
}

/// Which wire the mock speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Wire {
    /// The `--provider` name for this wire.
    pub fn provider(self) -> &'static str {
        match self {
            Wire::OpenAi => "openai",
            Wire::Anthropic => "anthropic",
            Wire::Gemini => "gemini",
        }
    }
}

/// One request as the mock received it.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub query: Option<String>,
    /// Only the headers in [`RECORDED_HEADERS`], by lower-case name.
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

struct Inner {
    wire: Wire,
    turns: Mutex<VecDeque<Turn>>,
    fallback: Turn,
    received: Mutex<Vec<Received>>,
    counter: Mutex<u64>,
    /// OpenAI wire: report `prompt_tokens` from the request's size (a quarter of its bytes), as
    /// a real server would, instead of the fixed `1000 + n`.
    sized_usage: bool,
    timings: Mutex<Vec<Timing>>,
}

/// When the mock got a request and how long it took to answer it (benches).
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Wall-clock arrival (ms since the Unix epoch, µs precision), when the handler started,
    /// the body already read.
    pub arrived_ms: f64,
    /// The mock's own work: the handler's time from arrival until its response was built.
    pub work_ms: f64,
    /// The request body's size.
    pub bytes: usize,
}

#[derive(Clone)]
pub struct MockLlm {
    inner: Arc<Inner>,
    /// What to pass as `--base-url`: `http://HOST/v1` for OpenAI, the host root for the others.
    pub base_url: String,
}

impl MockLlm {
    pub async fn start(turns: Vec<Turn>) -> Self {
        Self::start_with_fallback(turns, Turn::text("All done.")).await
    }

    pub async fn start_with_fallback(turns: Vec<Turn>, fallback: Turn) -> Self {
        Self::start_wire(Wire::OpenAi, turns, fallback).await
    }

    /// A mock speaking `wire`; once `turns` are used up, every request gets `fallback`.
    pub async fn start_wire(wire: Wire, turns: Vec<Turn>, fallback: Turn) -> Self {
        Self::serve(wire, turns, fallback, None).await
    }

    /// An OpenAI-wire mock that also answers `GET /props` with `props`, as llama-server does.
    pub async fn start_with_props(turns: Vec<Turn>, fallback: Turn, props: Value) -> Self {
        Self::serve(Wire::OpenAi, turns, fallback, Some(props)).await
    }

    /// An OpenAI-wire mock whose `prompt_tokens` follow the request's size, so long
    /// conversations look like what a server would report (benches).
    pub async fn start_sized(turns: Vec<Turn>, fallback: Turn) -> Self {
        Self::serve_with(Wire::OpenAi, turns, fallback, None, true).await
    }

    async fn serve(wire: Wire, turns: Vec<Turn>, fallback: Turn, props: Option<Value>) -> Self {
        Self::serve_with(wire, turns, fallback, props, false).await
    }

    async fn serve_with(wire: Wire, turns: Vec<Turn>, fallback: Turn, props: Option<Value>, sized_usage: bool) -> Self {
        let inner = Arc::new(Inner {
            wire,
            turns: Mutex::new(turns.into()),
            fallback,
            received: Mutex::default(),
            counter: Mutex::new(0),
            sized_usage,
            timings: Mutex::default(),
        });
        let route = match wire {
            Wire::OpenAi => "/v1/chat/completions",
            Wire::Anthropic => "/v1/messages",
            Wire::Gemini => "/v1beta/models/{model_and_method}",
        };
        let mut app = Router::new().route(route, post(handle)).with_state(inner.clone());
        if let Some(props) = props {
            app = app.route("/props", axum::routing::get(move || async move { axum::Json(props) }));
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let base_url = match wire {
            Wire::OpenAi => format!("http://{addr}/v1"),
            Wire::Anthropic | Wire::Gemini => format!("http://{addr}"),
        };
        Self { inner, base_url }
    }

    /// The JSON bodies received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.received().into_iter().map(|r| r.body).collect()
    }

    /// Everything recorded about the requests received, in order.
    pub fn received(&self) -> Vec<Received> {
        self.inner.received.lock().unwrap().clone()
    }

    /// When each request arrived and how long the mock took over it, in order of arrival.
    pub fn timings(&self) -> Vec<Timing> {
        self.inner.timings.lock().unwrap().clone()
    }
}

async fn handle(
    State(inner): State<Arc<Inner>>,
    uri: Uri,
    headers: HeaderMap,
    body: String,
) -> axum::response::Response {
    let started = std::time::Instant::now();
    let arrived_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64() * 1000.0;
    let bytes = body.len();
    let inner_for_timing = inner.clone();
    let response = answer(inner, uri, headers, body).await;
    let work_ms = started.elapsed().as_secs_f64() * 1000.0;
    inner_for_timing.timings.lock().unwrap().push(Timing { arrived_ms, work_ms, bytes });
    response
}

async fn answer(inner: Arc<Inner>, uri: Uri, headers: HeaderMap, body: String) -> axum::response::Response {
    let req: Value = match serde_json::from_str(&body) {
        Ok(v) => v,
        Err(e) => {
            return (StatusCode::BAD_REQUEST, json!({"error": {"message": e.to_string()}}).to_string()).into_response();
        }
    };
    let path = uri.path().to_string();
    let query = uri.query().map(str::to_string);
    // Gemini names the method in the path; the others say `"stream": true` in the body.
    let gemini_method = path.rsplit_once(':').map(|(_, m)| m.to_string()).unwrap_or_default();
    if inner.wire == Wire::Gemini && gemini_method != "generateContent" && gemini_method != "streamGenerateContent" {
        let err =
            json!({"error": {"code": 404, "message": format!("Method not found: {path}"), "status": "NOT_FOUND"}});
        return (StatusCode::NOT_FOUND, [("content-type", "application/json")], err.to_string()).into_response();
    }
    let sse = match inner.wire {
        Wire::OpenAi | Wire::Anthropic => req["stream"] == true,
        Wire::Gemini => {
            gemini_method == "streamGenerateContent"
                && query.as_deref().is_some_and(|q| q.split('&').any(|p| p == "alt=sse"))
        }
    };
    let recorded: BTreeMap<String, String> = RECORDED_HEADERS
        .iter()
        .filter_map(|h| headers.get(*h).map(|v| (h.to_string(), v.to_str().unwrap_or_default().to_string())))
        .collect();
    inner.received.lock().unwrap().push(Received { path, query, headers: recorded, body: req });
    let mut turn = inner.turns.lock().unwrap().pop_front().unwrap_or_else(|| inner.fallback.clone());
    let mut same_ids = false;
    let turn = loop {
        turn = match turn {
            Turn::When { contains, then, otherwise } => {
                if body.contains(&contains) {
                    *then
                } else {
                    *otherwise
                }
            }
            Turn::Slow(ms, then) => {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                *then
            }
            Turn::SameIds(then) => {
                same_ids = true;
                *then
            }
            other => break other,
        };
    };
    let n = {
        let mut c = inner.counter.lock().unwrap();
        *c += 1;
        *c
    };
    match turn {
        Turn::Status(code, body) => {
            (StatusCode::from_u16(code).unwrap(), [("content-type", "application/json")], body).into_response()
        }
        Turn::StatusWith(code, extra, body) => {
            let mut resp =
                (StatusCode::from_u16(code).unwrap(), [("content-type", "application/json")], body).into_response();
            for (k, v) in extra {
                resp.headers_mut().insert(
                    axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    axum::http::HeaderValue::from_str(&v).unwrap(),
                );
            }
            resp
        }
        Turn::When { .. } | Turn::Slow(..) | Turn::SameIds(..) => unreachable!("resolved above"),
        Turn::Say { text, calls } => {
            let prompt_tokens = if inner.sized_usage { body.len() as u64 / 4 } else { 1000 + n };
            let body = match (inner.wire, sse) {
                (Wire::OpenAi, false) => json_body(n, prompt_tokens, text, calls, same_ids),
                (Wire::OpenAi, true) => sse_body(n, prompt_tokens, text, calls, same_ids),
                (Wire::Anthropic, false) => anthropic_json_body(n, text, calls),
                (Wire::Anthropic, true) => anthropic_sse_body(n, text, calls),
                (Wire::Gemini, false) if gemini_method == "streamGenerateContent" => {
                    // Without `alt=sse`, streamGenerateContent answers with a JSON array of chunks.
                    Value::Array(gemini_chunks(n, text, calls)).to_string()
                }
                (Wire::Gemini, false) => gemini_json_body(n, text, calls),
                (Wire::Gemini, true) => gemini_sse_body(n, text, calls),
            };
            let content_type = if sse { "text/event-stream" } else { "application/json" };
            ([("content-type", content_type)], body).into_response()
        }
    }
}

/// `s` cut into up to `k` non-empty pieces on char boundaries (fewer when `s` is short).
pub fn pieces(s: &str, k: usize) -> Vec<&str> {
    let chars: Vec<usize> = s.char_indices().map(|(i, _)| i).collect();
    if chars.is_empty() {
        return vec![];
    }
    let k = k.clamp(1, chars.len());
    let mut cuts: Vec<usize> = (0..k).map(|j| chars[j * chars.len() / k]).collect();
    cuts.push(s.len());
    cuts.windows(2).map(|w| &s[w[0]..w[1]]).collect()
}

// ---------------------------------------------------------------------------------------------
// OpenAI

/// The OpenAI mock's id for call `i` of its `n`-th answer.
fn openai_id(n: u64, i: usize, same_ids: bool) -> String {
    if same_ids { format!("call_{i}") } else { format!("call_{n}_{i}") }
}

fn json_body(n: u64, prompt_tokens: u64, text: Option<String>, calls: Vec<(String, String)>, same_ids: bool) -> String {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| json!({"id": openai_id(n, i, same_ids), "type": "function", "function": {"name": name, "arguments": args}}))
        .collect();
    let mut message = json!({"role": "assistant", "content": text, "refusal": null});
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
    }
    json!({
        "id": format!("chatcmpl-{n}"), "object": "chat.completion", "created": 1_700_000_000u64, "model": "mock-model",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" }}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 100, "total_tokens": prompt_tokens + 100, "prompt_tokens_details": {"cached_tokens": 512, "audio_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}},
        "system_fingerprint": "fp_mock"
    })
    .to_string()
}

fn sse_body(n: u64, prompt_tokens: u64, text: Option<String>, calls: Vec<(String, String)>, same_ids: bool) -> String {
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
            json!({"tool_calls": [{"index": i, "id": openai_id(n, i, same_ids), "type": "function", "function": {"name": name, "arguments": ""}}]}),
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
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 100, "total_tokens": prompt_tokens + 100, "prompt_tokens_details": {"cached_tokens": 512}, "completion_tokens_details": {"reasoning_tokens": 0}}}),
    );
    out.push_str("data: [DONE]\n\n");
    out
}

// ---------------------------------------------------------------------------------------------
// Anthropic

/// The id the Anthropic mock gives call `i` of its `n`-th response.
pub fn anthropic_tool_id(n: u64, i: usize) -> String {
    format!("toolu_01Mock{n:03}x{i:02}")
}

/// The Anthropic mock's `usage` for its `n`-th response: the first request writes the prompt
/// cache, later ones read it. Our whole-prompt count is the sum of the three input fields.
pub fn anthropic_usage(n: u64) -> Value {
    let (creation, read) = if n == 1 { (2048, 0) } else { (0, 2048) };
    json!({"input_tokens": 100 + n, "cache_creation_input_tokens": creation, "cache_read_input_tokens": read, "output_tokens": 100, "service_tier": "standard"})
}

/// The tool-use `input` object for stored arguments text (a non-object cannot be sent as one).
fn input_object(args: &str) -> Value {
    match serde_json::from_str::<Value>(args) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    }
}

fn anthropic_stop_reason(calls: &[(String, String)]) -> &'static str {
    if calls.is_empty() { "end_turn" } else { "tool_use" }
}

fn anthropic_json_body(n: u64, text: Option<String>, calls: Vec<(String, String)>) -> String {
    let mut content: Vec<Value> = text.iter().map(|t| json!({"type": "text", "text": t})).collect();
    content.extend(calls.iter().enumerate().map(|(i, (name, args))| {
        json!({"type": "tool_use", "id": anthropic_tool_id(n, i), "name": name, "input": input_object(args)})
    }));
    json!({
        "id": format!("msg_01Mock{n:04}"), "type": "message", "role": "assistant", "model": "mock-model",
        "content": content, "stop_reason": anthropic_stop_reason(&calls), "stop_sequence": null, "usage": anthropic_usage(n)
    })
    .to_string()
}

fn anthropic_sse_body(n: u64, text: Option<String>, calls: Vec<(String, String)>) -> String {
    let mut out = String::new();
    let mut event = |v: Value| out.push_str(&format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap()));
    let mut start_usage = anthropic_usage(n);
    start_usage["output_tokens"] = json!(1);
    event(json!({"type": "message_start", "message": {
        "id": format!("msg_01Mock{n:04}"), "type": "message", "role": "assistant", "model": "mock-model",
        "content": [], "stop_reason": null, "stop_sequence": null, "usage": start_usage}}));
    let mut index = 0usize;
    if let Some(t) = &text {
        event(json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}));
        event(json!({"type": "ping"}));
        for piece in pieces(t, 3) {
            event(
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
            );
        }
        event(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    for (i, (name, args)) in calls.iter().enumerate() {
        event(
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": anthropic_tool_id(n, i), "name": name, "input": {}}}),
        );
        // As the real API does: an empty first piece, then the JSON text in several pieces.
        let mut parts = vec![""];
        parts.extend(pieces(args, 4));
        for piece in parts {
            event(
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}),
            );
        }
        event(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    // Current API versions restate the whole (cumulative) usage here.
    event(
        json!({"type": "message_delta", "delta": {"stop_reason": anthropic_stop_reason(&calls), "stop_sequence": null}, "usage": anthropic_usage(n)}),
    );
    event(json!({"type": "message_stop"}));
    out
}

// ---------------------------------------------------------------------------------------------
// Gemini

/// The Gemini mock's `usageMetadata` for its `n`-th response; `candidates` grows chunk by chunk
/// in a stream (every chunk carries the running totals).
pub fn gemini_usage(n: u64, candidates: u64) -> Value {
    json!({
        "promptTokenCount": 4000 + n, "candidatesTokenCount": candidates, "totalTokenCount": 4000 + n + candidates + 14,
        "cachedContentTokenCount": 3072, "thoughtsTokenCount": 14,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 4000 + n}],
        "cacheTokensDetails": [{"modality": "TEXT", "tokenCount": 3072}]
    })
}

/// The `thoughtSignature` the Gemini mock puts on the first function call of its `n`-th response.
pub fn gemini_signature(n: u64) -> String {
    format!("CpsCAdHtimMock{n}Sig==")
}

fn gemini_call_part(n: u64, i: usize, name: &str, args: &str) -> Value {
    let mut part = json!({"functionCall": {"name": name, "args": input_object(args)}});
    if i == 0 {
        part["thoughtSignature"] = json!(gemini_signature(n));
    }
    part
}

fn gemini_response(n: u64, parts: Vec<Value>, finish: bool, candidates: u64) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if finish {
        candidate["finishReason"] = json!("STOP");
    }
    json!({"candidates": [candidate], "usageMetadata": gemini_usage(n, candidates), "modelVersion": "mock-model", "responseId": format!("mockResp{n}")})
}

fn gemini_json_body(n: u64, text: Option<String>, calls: Vec<(String, String)>) -> String {
    let mut parts: Vec<Value> = text.iter().map(|t| json!({"text": t})).collect();
    parts.extend(calls.iter().enumerate().map(|(i, (name, args))| gemini_call_part(n, i, name, args)));
    gemini_response(n, parts, true, 50).to_string()
}

/// The chunks of a streamed answer: the text in two pieces, then the calls (whole, as Gemini
/// sends them) over at most two chunks; `finishReason` and the final usage on the last chunk.
fn gemini_chunks(n: u64, text: Option<String>, calls: Vec<(String, String)>) -> Vec<Value> {
    let mut groups: Vec<Vec<Value>> = Vec::new();
    if let Some(t) = &text {
        groups.extend(pieces(t, 2).into_iter().map(|p| vec![json!({"text": p})]));
    }
    let call_parts: Vec<Value> =
        calls.iter().enumerate().map(|(i, (name, args))| gemini_call_part(n, i, name, args)).collect();
    if !call_parts.is_empty() {
        let half = call_parts.len().div_ceil(2);
        groups.extend(call_parts.chunks(half).map(<[Value]>::to_vec));
    }
    if groups.is_empty() {
        groups.push(vec![json!({"text": ""})]);
    }
    let last = groups.len() - 1;
    groups
        .into_iter()
        .enumerate()
        .map(|(k, parts)| gemini_response(n, parts, k == last, if k == last { 50 } else { 10 * (k as u64 + 1) }))
        .collect()
}

fn gemini_sse_body(n: u64, text: Option<String>, calls: Vec<(String, String)>) -> String {
    // Google's servers end each event with CRLF CRLF.
    gemini_chunks(n, text, calls).into_iter().map(|c| format!("data: {c}\r\n\r\n")).collect()
}

// ---------------------------------------------------------------------------------------------
// Running the binary

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

/// The API key variable and value a run with `provider` is given.
pub fn key_for(provider: &str) -> Option<(&'static str, &'static str)> {
    match provider {
        "openai" => Some(("OPENAI_API_KEY", OPENAI_KEY)),
        "anthropic" => Some(("ANTHROPIC_API_KEY", ANTHROPIC_KEY)),
        "gemini" => Some(("GEMINI_API_KEY", GEMINI_KEY)),
        _ => None,
    }
}

/// Run `wright run PROMPT --events jsonl` against `base_url` with extra args, in a fresh dir.
pub async fn wright(base_url: &str, prompt: &str, extra: &[&str]) -> Run {
    wright_with("openai", base_url, prompt, extra, &[]).await
}

/// [`wright`] with another provider (`--provider P --base-url URL --model mock-model`, and P's
/// key in the environment) and extra environment variables.
pub async fn wright_with(provider: &str, base_url: &str, prompt: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
    wright_in(tempfile::tempdir().unwrap(), provider, base_url, prompt, extra, env).await
}

/// Settings from the machine running the tests that would change what wright does.
pub const HOST_ENV: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "WRIGHT_PROVIDER",
    "WRIGHT_MODEL",
    "WRIGHT_BASE_URL",
    "WRIGHT_DATA_DIR",
    "WRIGHT_DATABASE_URL",
    "WRIGHT_CONFIG",
    "WRIGHT_PRICES",
    "WRIGHT_BROWSER_CHECK",
    "WRIGHT_CHROMIUM",
];

/// [`wright_with`] in a directory the caller prepared (e.g. with a `wright.toml`); the run's
/// current dir is `dir`, its workspace `dir/ws` and its data dir `dir/data`.
pub async fn wright_in(
    dir: tempfile::TempDir,
    provider: &str,
    base_url: &str,
    prompt: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    let jsonl = !extra.contains(&"--events");
    cmd.arg("run").arg(prompt).args(["--provider", provider, "--base-url", base_url, "--model", "mock-model"]);
    cmd.arg("--workspace").arg(dir.path().join("ws")).arg("--data-dir").arg(dir.path().join("data"));
    cmd.args(extra);
    if jsonl {
        cmd.args(["--events", "jsonl"]);
    }
    cmd.current_dir(dir.path());
    for k in HOST_ENV {
        cmd.env_remove(k);
    }
    if let Some((k, v)) = key_for(provider) {
        cmd.env(k, v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from_output(cmd.output().await.unwrap(), jsonl, dir)
}

impl Run {
    /// A finished `wright run`; its stdout is read as JSON lines when `jsonl`.
    pub fn from_output(out: std::process::Output, jsonl: bool, dir: tempfile::TempDir) -> Run {
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
