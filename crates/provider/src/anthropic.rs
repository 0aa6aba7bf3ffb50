//! Anthropic Messages API (`POST {base}/v1/messages`).
//!
//! Same shape as the OpenAI adapter: one request builder, two readers (a JSON `Message` body, or
//! SSE events with `stream: true`), both producing the same [`Delta`]s. The differences that matter
//! live in [`request_body`]: system text goes top-level, tool results ride inside user turns, roles
//! must alternate, and the stable prefix (tools, then system) carries prompt-cache breakpoints.

use crate::http::{SseHandler, SseStep, body_text, send, sse_deltas};
use crate::{ChatRequest, Delta, DeltaStream, FinishReason, Message, Provider, ProviderError, Role, ToolChoice, Usage};
use futures::TryStreamExt;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;
use wright_text::clip;

/// The wire version this adapter speaks; sent as `anthropic-version` on every request.
pub const API_VERSION: &str = "2023-06-01";

/// Settings for one Anthropic-compatible endpoint.
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// Host root (no `/v1`); requests go to `{base_url}/v1/messages`.
    pub base_url: String,
    pub api_key: Option<String>,
    /// Stream with SSE (default) or ask for one JSON body.
    pub stream: bool,
    /// Longest wait for the response to start, and for each streamed chunk after it.
    pub call_timeout: Duration,
    /// Output cap sent when the request sets none: the Messages API requires `max_tokens`.
    pub max_tokens: u32,
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        Self {
            base_url: "https://api.anthropic.com".into(),
            api_key: None,
            stream: true,
            call_timeout: Duration::from_secs(45),
            max_tokens: 8192,
        }
    }
}

/// The adapter. Cheap to clone.
#[derive(Clone)]
pub struct AnthropicProvider {
    inner: Arc<Inner>,
}

struct Inner {
    cfg: AnthropicConfig,
    http: reqwest::Client,
}

impl AnthropicProvider {
    pub fn new(cfg: AnthropicConfig) -> Result<Self, ProviderError> {
        let http = crate::http::client()?;
        Ok(Self { inner: Arc::new(Inner { cfg, http }) })
    }
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn stream(&self, request: ChatRequest) -> DeltaStream {
        let inner = self.inner.clone();
        Box::pin(futures::stream::once(async move { inner.open(request).await }).try_flatten())
    }
}

/// The JSON body for a request; public so wire tests can assert on exactly what is sent.
///
/// `max_tokens` is the fallback for `req.max_tokens` (the API rejects a request without one).
/// Cache breakpoints go on the last tool and the last system block: Anthropic caches the prefix
/// in the order tools → system → messages, and both are stable across the turns of a build.
pub fn request_body(req: &ChatRequest, stream: bool, max_tokens: u32) -> Value {
    let mut body = json!({
        "model": req.model,
        "max_tokens": req.max_tokens.unwrap_or(max_tokens),
        "messages": messages_to_wire(&req.messages),
    });
    let mut system: Vec<Value> = req
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .filter_map(|m| non_blank(m.content.as_deref()))
        .map(|t| json!({"type": "text", "text": t}))
        .collect();
    if let Some(last) = system.last_mut() {
        last["cache_control"] = json!({"type": "ephemeral"});
        body["system"] = Value::Array(system);
    }
    if !req.tools.is_empty() {
        let mut tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": input_schema(&t.parameters)}))
            .collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = json!({"type": "ephemeral"});
        }
        body["tools"] = Value::Array(tools);
        body["tool_choice"] = match req.tool_choice {
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::Required => json!({"type": "any"}),
        };
    }
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    if stream {
        body["stream"] = json!(true);
    }
    body
}

/// `input_schema` must be a JSON Schema object; a tool declared without one takes no arguments.
fn input_schema(parameters: &Value) -> Value {
    if parameters.is_object() { parameters.clone() } else { json!({"type": "object", "properties": {}}) }
}

/// Text the API will accept: it rejects empty and whitespace-only text blocks.
fn non_blank(s: Option<&str>) -> Option<&str> {
    s.filter(|t| !t.trim().is_empty())
}

/// Our flat history → Anthropic turns. Tool results become `tool_result` blocks of a user turn,
/// and same-role neighbours are merged, because the API demands strictly alternating roles.
fn messages_to_wire(messages: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in messages {
        let (role, blocks) = match m.role {
            Role::System => continue,
            Role::User => ("user", non_blank(m.content.as_deref()).map(text_block).into_iter().collect()),
            Role::Assistant => {
                let mut blocks: Vec<Value> = non_blank(m.content.as_deref()).map(text_block).into_iter().collect();
                blocks.extend(m.tool_calls.iter().map(
                    |c| json!({"type": "tool_use", "id": c.id, "name": c.name, "input": tool_input(&c.arguments)}),
                ));
                ("assistant", blocks)
            }
            Role::Tool => ("user", vec![tool_result_block(m)]),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, mut blocks)| {
            // In a user turn the tool results must come before any text.
            blocks.sort_by_key(|b| b["type"] != "tool_result");
            json!({"role": role, "content": blocks})
        })
        .collect()
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// The stored arguments text as the `input` object the wire wants. Malformed text (which the
/// tool layer already reported to the model) must not make the whole request invalid: send `{}`.
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    }
}

fn tool_result_block(m: &Message) -> Value {
    let text = m.content.as_deref().unwrap_or_default();
    let mut block = json!({"type": "tool_result", "tool_use_id": m.tool_call_id.as_deref().unwrap_or_default()});
    if !text.is_empty() {
        block["content"] = json!(text);
    }
    // Our tools answer `{"ok": false, ...}` on failure; `is_error` lets the model see it as one.
    let failed = serde_json::from_str::<Value>(text).ok().is_some_and(|v| v.get("ok") == Some(&Value::Bool(false)));
    if failed {
        block["is_error"] = json!(true);
    }
    block
}

impl Inner {
    async fn open(self: Arc<Self>, req: ChatRequest) -> Result<DeltaStream, ProviderError> {
        let url = format!("{}/v1/messages", self.cfg.base_url.trim_end_matches('/'));
        let body = request_body(&req, self.cfg.stream, self.cfg.max_tokens);
        let mut builder = self.http.post(&url).header("anthropic-version", API_VERSION).json(&body);
        if let Some(key) = self.cfg.api_key.as_deref().filter(|k| !k.is_empty()) {
            builder = builder.header("x-api-key", key);
        }
        let timeout = self.cfg.call_timeout;
        let resp = send(builder, &url, timeout, classify_status).await?;
        if !self.cfg.stream {
            let deltas = parse_message(&body_text(resp, &url, timeout).await?)?;
            return Ok(Box::pin(futures::stream::iter(deltas.into_iter().map(Ok))));
        }
        Ok(sse_deltas(resp, timeout, EventReader { finished: false }))
    }
}

/// Reads Messages API events until `message_stop`.
struct EventReader {
    /// Saw `message_stop` or a stop reason: a clean end, not a cut connection.
    finished: bool,
}

impl SseHandler for EventReader {
    fn on_data(&mut self, data: &str) -> Result<SseStep, ProviderError> {
        let (deltas, stop) = parse_event_inner(data)?;
        self.finished |= stop || deltas.iter().any(|d| matches!(d, Delta::Finish(_)));
        Ok(SseStep { deltas, stop })
    }

    fn on_end(&mut self) -> Result<(), ProviderError> {
        if self.finished {
            Ok(())
        } else {
            // A truncated answer must not pass for a complete one; retrying is the fix.
            Err(ProviderError::Transient("the stream ended before message_stop".into()))
        }
    }
}

/// A text or `tool_use` content block as a delta (other block types are skipped).
fn block_delta(index: usize, block: &Value, arguments: String) -> Option<Delta> {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => {
            block.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()).map(|t| Delta::Text(t.to_string()))
        }
        Some("tool_use") => Some(Delta::ToolCall {
            index,
            id: block.get("id").and_then(Value::as_str).map(str::to_string),
            name: block.get("name").and_then(Value::as_str).map(str::to_string),
            arguments,
        }),
        _ => None,
    }
}

/// Parse the `data` of one streamed event (`message_start`, `content_block_delta`, …).
///
/// Tool-call pieces carry the content block `index`, so a text block at 0 and parallel
/// `tool_use` blocks at 1, 2… assemble independently. Unknown event and delta types (thinking,
/// citations, future additions) are ignored, as the API's versioning policy asks.
pub fn parse_event(data: &str) -> Result<Vec<Delta>, ProviderError> {
    parse_event_inner(data).map(|(deltas, _)| deltas)
}

/// [`parse_event`] plus whether the event was `message_stop`.
fn parse_event_inner(data: &str) -> Result<(Vec<Delta>, bool), ProviderError> {
    let v: Value = serde_json::from_str(data)
        .map_err(|e| ProviderError::Protocol(format!("bad stream event ({e}): {}", clip(data, 200))))?;
    let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
    if kind == "error" || (kind.is_empty() && v.get("error").is_some()) {
        return Err(classify_stream_error(v.get("error").unwrap_or(&Value::Null)));
    }
    let index = v.get("index").and_then(Value::as_u64).map_or(0, |i| i as usize);
    let mut out = Vec::new();
    match kind {
        "message_start" => {
            if let Some(u) = v.pointer("/message/usage").filter(|u| u.is_object()) {
                out.push(Delta::Usage(Usage { output_tokens: 0, ..parse_usage(u) }));
            }
        }
        "content_block_start" => {
            let block = v.get("content_block").unwrap_or(&Value::Null);
            // `input` is always `{}` here; the arguments arrive as `input_json_delta` pieces.
            out.extend(block_delta(index, block, String::new()));
        }
        "content_block_delta" => {
            let delta = v.get("delta").unwrap_or(&Value::Null);
            match delta.get("type").and_then(Value::as_str) {
                Some("text_delta") => {
                    if let Some(t) = delta.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                        out.push(Delta::Text(t.to_string()));
                    }
                }
                Some("input_json_delta") => {
                    if let Some(p) = delta.get("partial_json").and_then(Value::as_str).filter(|p| !p.is_empty()) {
                        out.push(Delta::ToolCall { index, id: None, name: None, arguments: p.to_string() });
                    }
                }
                _ => {}
            }
        }
        "message_delta" => {
            if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                out.push(Delta::Finish(finish_reason(r)));
            }
            if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
                // Counts here are cumulative. Output always; the input side only when the event
                // restates it (server tools can grow it), else `message_start`'s figure stands.
                let full = parse_usage(u);
                let restated = u.get("input_tokens").is_some();
                out.push(Delta::Usage(if restated {
                    full
                } else {
                    Usage { output_tokens: full.output_tokens, ..Usage::default() }
                }));
            }
        }
        "message_stop" => return Ok((out, true)),
        _ => {}
    }
    Ok((out, false))
}

/// Parse a non-streaming `Message` body into the deltas a stream would have carried.
pub fn parse_message(text: &str) -> Result<Vec<Delta>, ProviderError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| ProviderError::Protocol(format!("response is not JSON ({e}): {}", clip(text, 200))))?;
    if v.get("type").and_then(Value::as_str) == Some("error") || v.get("error").is_some_and(Value::is_object) {
        return Err(classify_stream_error(v.get("error").unwrap_or(&Value::Null)));
    }
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::Protocol(format!("response has no content: {}", clip(text, 200))))?;
    let mut out = Vec::new();
    for (index, block) in content.iter().enumerate() {
        let arguments = block.get("input").filter(|i| !i.is_null()).map(Value::to_string).unwrap_or_default();
        out.extend(block_delta(index, block, arguments));
    }
    if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
        out.push(Delta::Usage(parse_usage(u)));
    }
    if let Some(r) = v.get("stop_reason").and_then(Value::as_str) {
        out.push(Delta::Finish(finish_reason(r)));
    }
    Ok(out)
}

/// Anthropic's `usage` → ours.
///
/// Anthropic splits the prompt in three disjoint parts: `input_tokens` (after the last cache
/// breakpoint), `cache_read_input_tokens` (served from cache) and `cache_creation_input_tokens`
/// (written to cache). Our `input_tokens` counts the whole prompt, so it is their sum, and
/// `cached_tokens` is the cache-read part, a subset of it as [`Usage`] documents.
fn parse_usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let cache_read = n("cache_read_input_tokens");
    Usage {
        input_tokens: n("input_tokens") + cache_read + n("cache_creation_input_tokens"),
        output_tokens: n("output_tokens"),
        cached_tokens: cache_read,
    }
}

/// `stop_reason` values beyond what [`FinishReason::from_wire`] knows.
fn finish_reason(r: &str) -> FinishReason {
    match r {
        "stop_sequence" => FinishReason::Stop,
        "refusal" => FinishReason::ContentFilter,
        "model_context_window_exceeded" => FinishReason::Length,
        other => FinishReason::from_wire(other),
    }
}

/// `(error.type, error.message)` of an error object; the message falls back to the raw text.
fn error_parts(err: &Value, raw: &str) -> (String, String) {
    let kind = err.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
    let msg = err
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| err.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| clip(raw.trim(), 300));
    (kind, msg)
}

fn looks_like_context_overflow(msg: &str) -> bool {
    let m = msg.to_ascii_lowercase();
    m.contains("prompt is too long") || m.contains("context window") || m.contains("context length")
}

/// A monthly spend cap also answers 429 but never clears by waiting, so it must not be retried.
fn is_spend_cap(err: &Value) -> bool {
    err.pointer("/details/error_code").and_then(Value::as_str) == Some("enforced_spend_limit_reached")
}

/// Map an HTTP error status and its `{"type":"error","error":{"type","message"}}` body to the
/// error class that decides retrying.
pub fn classify_status(status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let err = v.get("error").unwrap_or(&Value::Null);
    let (kind, msg) = error_parts(err, body);
    let msg = match (kind.is_empty(), msg.is_empty()) {
        (_, true) => format!("HTTP {status}"),
        (true, false) => format!("HTTP {status}: {msg}"),
        (false, false) => format!("HTTP {status} {kind}: {msg}"),
    };
    match status {
        401..=403 => ProviderError::Auth(msg),
        429 if is_spend_cap(err) => ProviderError::Auth(msg),
        429 => ProviderError::RateLimited { retry_after, message: msg },
        400 | 413 if looks_like_context_overflow(&msg) => ProviderError::ContextTooLong(msg),
        404 => ProviderError::BadRequest(format!("{msg} (check --base-url and --model)")),
        // 529 is Anthropic's "overloaded".
        408 | 409 | 425 | 500..=599 => ProviderError::Transient(msg),
        _ => ProviderError::BadRequest(msg),
    }
}

/// An error object that arrived inside a 200 response (an SSE `error` event, or a JSON body).
fn classify_stream_error(err: &Value) -> ProviderError {
    let (kind, msg) = error_parts(err, &err.to_string());
    let msg = if kind.is_empty() { msg } else { format!("{kind}: {msg}") };
    match kind.as_str() {
        _ if looks_like_context_overflow(&msg) => ProviderError::ContextTooLong(msg),
        "rate_limit_error" => ProviderError::RateLimited { retry_after: None, message: msg },
        "authentication_error" | "permission_error" | "billing_error" => ProviderError::Auth(msg),
        "invalid_request_error" | "request_too_large" => ProviderError::BadRequest(msg),
        "not_found_error" => ProviderError::BadRequest(format!("{msg} (check --base-url and --model)")),
        // overloaded_error, api_error, timeout_error and anything new: the server's trouble.
        _ => ProviderError::Transient(format!("error inside the response: {msg}")),
    }
}
