//! OpenAI-compatible Chat Completions: OpenAI, OpenRouter, vLLM, llama.cpp server, Ollama…
//!
//! One request builder, two readers: a JSON body (non-streaming) and SSE (`stream: true` with
//! `stream_options.include_usage`). Both produce the same [`Delta`]s.

pub use crate::http::parse_retry_after;
use crate::http::{SendError, SseHandler, SseStep, body_text, send, send_request, sse_deltas};
use crate::{
    ChatRequest, Delta, DeltaStream, FinishReason, Message, Provider, ProviderError, Role, ToolChoice, Usage,
    local_server,
};
use futures::{StreamExt, TryStreamExt};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wright_text::clip;

/// Settings for one OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Endpoint root ending in `/v1` (or whatever prefix the server uses before `/chat/completions`).
    pub base_url: String,
    pub api_key: Option<String>,
    /// Stream with SSE (default) or ask for one JSON body.
    pub stream: bool,
    /// Longest wait for the response to start, and for each streamed chunk after it.
    pub call_timeout: Duration,
    /// Longest wait for a whole (non-streamed) answer, which a local server on a CPU may take
    /// minutes to write; `max_tokens` shortens it when the request sets one.
    pub generation_timeout: Duration,
    /// What this process has learned about endpoints (shared by the providers it makes).
    pub memory: Arc<EndpointMemory>,
    /// Cap answers of requests that set no `max_tokens` at a quarter of the server's context,
    /// when it says its size ([`crate::local_server`]).
    pub auto_max_tokens: bool,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        Self {
            base_url: "https://api.openai.com/v1".into(),
            api_key: None,
            stream: true,
            call_timeout: Duration::from_secs(45),
            generation_timeout: Duration::from_secs(600),
            memory: Arc::default(),
            auto_max_tokens: true,
        }
    }
}

/// What wright learned about endpoints while using them, kept for the life of the process by
/// whoever wires the providers (one per process, passed in; no global state).
#[derive(Debug, Default)]
pub struct EndpointMemory {
    quirks: Mutex<HashSet<(String, Quirk)>>,
    /// Context sizes asked for (`None`: the endpoint did not say), and whether the cap taken
    /// from one was announced.
    contexts: Mutex<HashMap<String, (Option<u32>, bool)>>,
}

/// Something an endpoint showed it cannot do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quirk {
    /// Tool calls cannot be streamed (llama-cpp-python's `chatml-function-calling`).
    NoStreamedTools,
    /// `stream_options` is refused as an unknown field (vLLM before 0.6.5, some proxies).
    NoStreamOptions,
}

impl EndpointMemory {
    /// Whether `base_url` showed `quirk`.
    pub fn has(&self, base_url: &str, quirk: Quirk) -> bool {
        self.quirks.lock().is_ok_and(|s| s.contains(&(base_url.to_string(), quirk)))
    }

    /// Remember that `base_url` has `quirk`; `true` the first time.
    pub fn learn(&self, base_url: &str, quirk: Quirk) -> bool {
        self.quirks.lock().is_ok_and(|mut s| s.insert((base_url.to_string(), quirk)))
    }

    /// The context size `base_url` said it has: `None` until it was asked, `Some(None)` when it
    /// said nothing.
    fn context(&self, base_url: &str) -> Option<Option<u32>> {
        self.contexts.lock().ok()?.get(base_url).map(|(n, _)| *n)
    }

    fn set_context(&self, base_url: &str, n_ctx: Option<u32>) {
        if let Ok(mut c) = self.contexts.lock() {
            c.entry(base_url.to_string()).or_insert((n_ctx, false));
        }
    }

    /// `true` the first time the cap taken from `base_url`'s context is announced.
    fn announce_cap(&self, base_url: &str) -> bool {
        let Ok(mut c) = self.contexts.lock() else { return false };
        let entry = c.entry(base_url.to_string()).or_insert((None, false));
        !std::mem::replace(&mut entry.1, true)
    }
}

/// The wait for a whole answer: the call timeout plus a tenth of a second per token the
/// answer may have, never more than the ceiling (nor less than the call timeout).
pub fn whole_answer_wait(call_timeout: Duration, ceiling: Duration, max_tokens: Option<u32>) -> Duration {
    let by_size = max_tokens.map_or(ceiling, |n| call_timeout + Duration::from_millis(100) * n);
    by_size.min(ceiling).max(call_timeout)
}

/// The adapter. Cheap to clone.
#[derive(Clone)]
pub struct OpenAiProvider {
    inner: Arc<Inner>,
}

struct Inner {
    cfg: OpenAiConfig,
    http: reqwest::Client,
}

impl OpenAiProvider {
    pub fn new(cfg: OpenAiConfig) -> Result<Self, ProviderError> {
        let http = crate::http::client()?;
        Ok(Self { inner: Arc::new(Inner { cfg, http }) })
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai"
    }

    fn stream(&self, request: ChatRequest) -> DeltaStream {
        let inner = self.inner.clone();
        Box::pin(futures::stream::once(async move { inner.open(request).await }).try_flatten())
    }
}

/// The JSON body for a request; public so wire tests can assert on exactly what is sent.
pub fn request_body(req: &ChatRequest, stream: bool) -> Value {
    serde_json::from_slice(&wire_body(req, stream, true)).unwrap_or(Value::Null)
}

/// The request as the OpenAI wire has it, borrowing from the conversation: serialised straight
/// to bytes, with no copy of the history and no intermediate JSON tree. The history is sent
/// whole on every call (the wire is stateless), so this is most of a step's own work late in
/// a long build.
#[derive(Serialize)]
struct Wire<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: Role,
    /// Never null: llama-cpp-python rejects a null content (its schema wants a string) and its
    /// chat templates fail on a missing one; "" is accepted by every server.
    content: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCall<'a>>,
    /// Present (possibly null) on tool results only.
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<Option<&'a str>>,
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    r#type: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    r#type: &'static str,
    function: WireToolSpec<'a>,
}

#[derive(Serialize)]
struct WireToolSpec<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// [`request_body`] as bytes; `stream_options` left out for servers that refuse it.
fn wire_body(req: &ChatRequest, stream: bool, stream_options: bool) -> Vec<u8> {
    let wire = Wire {
        model: &req.model,
        messages: req.messages.iter().map(message_to_wire).collect(),
        tools: req
            .tools
            .iter()
            .map(|t| WireTool {
                r#type: "function",
                function: WireToolSpec { name: &t.name, description: &t.description, parameters: &t.parameters },
            })
            .collect(),
        tool_choice: (!req.tools.is_empty()).then_some(match req.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "required",
        }),
        temperature: req.temperature,
        max_tokens: req.max_tokens,
        stream: stream.then_some(true),
        stream_options: (stream && stream_options).then_some(StreamOptions { include_usage: true }),
    };
    // Plain data with string keys: serialising cannot fail.
    serde_json::to_vec(&wire).unwrap_or_default()
}

fn message_to_wire(m: &Message) -> WireMessage<'_> {
    let content = m.content.as_deref().unwrap_or_default();
    match m.role {
        Role::System | Role::User => WireMessage { role: m.role, content, tool_calls: vec![], tool_call_id: None },
        Role::Assistant => WireMessage {
            role: Role::Assistant,
            content,
            tool_calls: m
                .tool_calls
                .iter()
                .map(|c| WireCall {
                    id: &c.id,
                    r#type: "function",
                    function: WireFunction { name: &c.name, arguments: &c.arguments },
                })
                .collect(),
            tool_call_id: None,
        },
        Role::Tool => {
            WireMessage { role: Role::Tool, content, tool_calls: vec![], tool_call_id: Some(m.tool_call_id.as_deref()) }
        }
    }
}

/// A streamed request that gave nothing to read.
struct StreamFailure {
    error: ProviderError,
    /// No answer came at all: the connection failed or broke, or the stream ended or broke
    /// off before its first piece without the server saying anything. An error status or an
    /// error inside the stream is an answer, and leaves this `false`.
    broke: bool,
}

impl StreamFailure {
    fn sent(e: SendError) -> Self {
        match e {
            SendError::Answered(error) => Self { error, broke: false },
            SendError::NoAnswer(error) => Self { error, broke: true },
        }
    }
}

impl Inner {
    async fn open(self: Arc<Self>, mut req: ChatRequest) -> Result<DeltaStream, ProviderError> {
        // A whole answer may be waited for by its size only when the caller chose that size:
        // wright's own cap is no promise that a CPU server writes it quickly.
        let sized = req.max_tokens;
        let cap = self.default_cap(&req).await;
        if let Some((_, max_tokens)) = cap {
            req.max_tokens = Some(max_tokens);
        }
        let answer = self.clone().answer(req, sized).await?;
        let Some((n_ctx, max_tokens)) = cap else { return Ok(answer) };
        // Said once, after the first answer that came through whole with the cap.
        let notice = futures::stream::once(async move {
            let base = self.cfg.base_url.trim_end_matches('/');
            self.cfg
                .memory
                .announce_cap(base)
                .then(|| Ok(Delta::Notice(local_server::cap_notice(base, n_ctx, max_tokens))))
        })
        .filter_map(futures::future::ready);
        Ok(Box::pin(answer.chain(notice)))
    }

    /// `(context, cap)` for a request that sets no `max_tokens`, from the context size the
    /// server says it has (asked once per endpoint and process).
    async fn default_cap(&self, req: &ChatRequest) -> Option<(u32, u32)> {
        if req.max_tokens.is_some() || !self.cfg.auto_max_tokens {
            return None;
        }
        let base = self.cfg.base_url.trim_end_matches('/');
        let n_ctx = match self.cfg.memory.context(base) {
            Some(known) => known,
            None => {
                // A server that could not answer now (still loading its model: 503, or not up
                // yet) is asked again next time; only a real answer is remembered.
                let said = self.ask_context().await.ok()?;
                self.cfg.memory.set_context(base, said);
                if let Some(n) = said {
                    let cap = local_server::default_max_tokens(n);
                    tracing::info!(
                        endpoint = base,
                        n_ctx = n,
                        max_tokens = cap,
                        "answers capped at a quarter of the server's context"
                    );
                }
                said
            }
        }?;
        Some((n_ctx, local_server::default_max_tokens(n_ctx)))
    }

    /// The context size at `GET /props` (llama-server): `Ok(None)` when the server answered
    /// and says none (a 4xx such as another server's 404, or a body without it); `Err(())` when
    /// it gave no answer worth remembering (no connection, a time-out, a 5xx).
    async fn ask_context(&self) -> Result<Option<u32>, ()> {
        let url = local_server::props_url(&self.cfg.base_url);
        let mut builder = self.http.get(&url);
        if let Some(key) = self.cfg.api_key.as_deref().filter(|k| !k.is_empty()) {
            builder = builder.bearer_auth(key);
        }
        let wait = self.cfg.call_timeout.min(Duration::from_secs(5));
        let resp = match send_request(builder, &url, wait, classify_status).await {
            Ok(resp) => resp,
            Err(SendError::Answered(e)) if !e.is_retryable() => return Ok(None),
            Err(_) => return Err(()),
        };
        let body = body_text(resp, &url, wait).await.map_err(|_| ())?;
        Ok(local_server::parse_props(&body))
    }

    /// `sized`: the answer size the caller set, which bounds the wait for a whole answer.
    async fn answer(self: Arc<Self>, req: ChatRequest, sized: Option<u32>) -> Result<DeltaStream, ProviderError> {
        let base = self.cfg.base_url.trim_end_matches('/');
        let tools = !req.tools.is_empty();
        if !self.cfg.stream || (tools && self.cfg.memory.has(base, Quirk::NoStreamedTools)) {
            return self.whole(&req, sized).await;
        }
        let said = Arc::new(AtomicBool::new(false));
        let first_try = match self.streamed(&req, &said).await {
            Ok(mut stream) => match stream.next().await {
                Some(Ok(first)) => return Ok(Box::pin(futures::stream::once(async { Ok(first) }).chain(stream))),
                Some(Err(error)) => StreamFailure { error, broke: !said.load(Ordering::Relaxed) },
                None => return Ok(stream),
            },
            Err(e) => e,
        };
        if !(tools && cannot_stream_tools(&first_try)) {
            return Err(first_try.error);
        }
        let first_try = first_try.error;
        // The server broke off a streamed tool request before answering anything (as
        // llama-cpp-python does: "Automatic streaming tool choice is not supported"). Ask for
        // the whole answer instead; if that works, this endpoint gets whole answers from now on.
        tracing::warn!(endpoint = base, error = %first_try, "streamed tool call failed; asking for a whole answer");
        // On a client of its own: the broken connection must not be reused, and a server that
        // just reset one may reset the next; one more try when no answer came, then give up.
        // An answer (an error status) is the caller's to retry, once per attempt.
        let fresh = crate::http::client()?;
        let whole = match self.whole_with(&fresh, &req, sized).await {
            Err(SendError::NoAnswer(ProviderError::Transient(_) | ProviderError::Unreachable(_))) => {
                self.whole_with(&fresh, &req, sized).await.map_err(SendError::into_error)?
            }
            other => other.map_err(SendError::into_error)?,
        };
        let notice = self.cfg.memory.learn(base, Quirk::NoStreamedTools).then(|| {
            Delta::Notice(format!(
                "The model server at {base} cannot stream tool calls ({}); wright asks it for whole answers from now on.",
                clip(&first_try.to_string(), 160)
            ))
        });
        Ok(Box::pin(futures::stream::iter(notice.map(Ok)).chain(whole)))
    }

    fn post(&self, body: Vec<u8>) -> (reqwest::RequestBuilder, String) {
        self.post_with(&self.http, body)
    }

    fn post_with(&self, http: &reqwest::Client, body: Vec<u8>) -> (reqwest::RequestBuilder, String) {
        let url = format!("{}/chat/completions", self.cfg.base_url.trim_end_matches('/'));
        let mut builder = http.post(&url).header(reqwest::header::CONTENT_TYPE, "application/json").body(body);
        if let Some(key) = self.cfg.api_key.as_deref().filter(|k| !k.is_empty()) {
            builder = builder.bearer_auth(key);
        }
        (builder, url)
    }

    /// Open a streamed answer. `said` turns `true` when the server says something in the
    /// stream that wright cannot use (an error event, a bad chunk): an answer, not a break.
    async fn streamed(&self, req: &ChatRequest, said: &Arc<AtomicBool>) -> Result<DeltaStream, StreamFailure> {
        let base = self.cfg.base_url.trim_end_matches('/');
        let timeout = self.cfg.call_timeout;
        let options = !self.cfg.memory.has(base, Quirk::NoStreamOptions);
        let (builder, url) = self.post(wire_body(req, true, options));
        let resp = match send_request(builder, &url, timeout, classify_status).await {
            // A server that refuses the field gets the request again without it (usage is then
            // whatever it reports, often nothing), and never sees the field again.
            Err(SendError::Answered(ProviderError::BadRequest(m))) if options && m.contains("stream_options") => {
                self.cfg.memory.learn(base, Quirk::NoStreamOptions);
                tracing::warn!(endpoint = base, "the server refuses stream_options; leaving it out");
                let (builder, url) = self.post(wire_body(req, true, false));
                send_request(builder, &url, timeout, classify_status).await.map_err(StreamFailure::sent)?
            }
            other => other.map_err(StreamFailure::sent)?,
        };
        Ok(sse_deltas(resp, timeout, ChunkReader { finished: false, said: said.clone() }))
    }

    /// One JSON answer. A server writes nothing until it has generated the whole answer, so
    /// the wait is [`whole_answer_wait`], and running out of it is not retried.
    async fn whole(&self, req: &ChatRequest, sized: Option<u32>) -> Result<DeltaStream, ProviderError> {
        self.whole_with(&self.http, req, sized).await.map_err(SendError::into_error)
    }

    async fn whole_with(
        &self,
        http: &reqwest::Client,
        req: &ChatRequest,
        sized: Option<u32>,
    ) -> Result<DeltaStream, SendError> {
        let (builder, url) = self.post_with(http, wire_body(req, false, false));
        let wait = whole_answer_wait(self.cfg.call_timeout, self.cfg.generation_timeout, sized);
        let late = |e: SendError| match e {
            SendError::NoAnswer(ProviderError::Timeout(_)) => {
                SendError::NoAnswer(ProviderError::GenerationTimeout(wait))
            }
            other => other,
        };
        let started = std::time::Instant::now();
        let resp = send_request(builder, &url, wait, classify_status).await.map_err(late)?;
        let left = wait.saturating_sub(started.elapsed()).max(Duration::from_secs(1));
        let text = body_text(resp, &url, left).await.map_err(|e| late(SendError::NoAnswer(e)))?;
        let deltas = parse_completion(&text).map_err(SendError::Answered)?;
        Ok(Box::pin(futures::stream::iter(deltas.into_iter().map(Ok))))
    }
}

/// The model ids an endpoint serves (`GET {base_url}/models`), for `wright doctor`.
pub async fn list_models(cfg: &OpenAiConfig) -> Result<Vec<String>, ProviderError> {
    let http = crate::http::client()?;
    let url = format!("{}/models", cfg.base_url.trim_end_matches('/'));
    let mut builder = http.get(&url);
    if let Some(key) = cfg.api_key.as_deref().filter(|k| !k.is_empty()) {
        builder = builder.bearer_auth(key);
    }
    let resp = send(builder, &url, cfg.call_timeout, classify_status).await?;
    let text = body_text(resp, &url, cfg.call_timeout).await?;
    parse_models(&text)
}

/// The ids in a `/models` answer (`{"data": [{"id": …}, …]}`, as every server here sends).
pub fn parse_models(text: &str) -> Result<Vec<String>, ProviderError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| ProviderError::Protocol(format!("model list is not JSON ({e}): {}", clip(text, 200))))?;
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::Protocol(format!("model list has no `data`: {}", clip(text, 200))))?;
    Ok(data.iter().filter_map(|m| m.get("id").and_then(Value::as_str)).map(str::to_string).collect())
}

/// Whether a streamed tool request failed the way servers fail when they cannot stream tool
/// calls: an error that says so, or a connection or stream that broke off before its first
/// piece with no answer (llama-cpp-python raises after sending its status line, so the client
/// sees "connection closed before message completed" or an empty stream). Not an error status
/// (a server failing with 500 would get every attempt twice) and not a timeout (a server slow
/// to start is still working, and a second request would queue behind the first).
fn cannot_stream_tools(f: &StreamFailure) -> bool {
    let text = f.error.to_string().to_ascii_lowercase();
    let says_so = text.contains("stream")
        && (text.contains("not supported") || text.contains("cannot use tools") || text.contains("unsupported"));
    says_so || (f.broke && matches!(f.error, ProviderError::Transient(_) | ProviderError::Protocol(_)))
}

/// Reads `chat.completion.chunk` events until `[DONE]`. A stream that ends before `[DONE]`
/// or a finish reason was cut off (a server that failed after sending its headers), and must
/// not pass for a complete, empty answer.
struct ChunkReader {
    finished: bool,
    /// Set when the server said something unusable in the stream (see [`Inner::streamed`]).
    said: Arc<AtomicBool>,
}

impl SseHandler for ChunkReader {
    fn on_data(&mut self, data: &str) -> Result<SseStep, ProviderError> {
        if data == "[DONE]" {
            self.finished = true;
            return Ok(SseStep { deltas: Vec::new(), stop: true });
        }
        let deltas = parse_chunk(data).inspect_err(|_| self.said.store(true, Ordering::Relaxed))?;
        self.finished |= deltas.iter().any(|d| matches!(d, Delta::Finish(_)));
        Ok(SseStep { deltas, stop: false })
    }

    fn on_end(&mut self) -> Result<(), ProviderError> {
        if self.finished {
            Ok(())
        } else {
            Err(ProviderError::Transient("the stream ended before the answer was finished".into()))
        }
    }
}

/// Parse one streamed `chat.completion.chunk`.
pub fn parse_chunk(data: &str) -> Result<Vec<Delta>, ProviderError> {
    let v: Value = serde_json::from_str(data)
        .map_err(|e| ProviderError::Protocol(format!("bad stream chunk ({e}): {}", clip(data, 200))))?;
    if let Some(err) = v.get("error") {
        return Err(classify_stream_error(err));
    }
    let mut out = Vec::new();
    if let Some(choice) = v.get("choices").and_then(|c| c.get(0)) {
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        if let Some(t) = delta.get("content").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            out.push(Delta::Text(t.to_string()));
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (pos, c) in calls.iter().enumerate() {
                let index = c.get("index").and_then(Value::as_u64).map_or(pos, |i| i as usize);
                let f = c.get("function").unwrap_or(&Value::Null);
                out.push(Delta::ToolCall {
                    index,
                    id: c.get("id").and_then(Value::as_str).map(str::to_string),
                    name: f.get("name").and_then(Value::as_str).map(str::to_string),
                    arguments: arguments_text(f.get("arguments")),
                });
            }
        }
        if let Some(fr) = choice.get("finish_reason").and_then(Value::as_str) {
            out.push(Delta::Finish(FinishReason::from_wire(fr)));
        }
    }
    if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
        out.push(Delta::Usage(parse_usage(u)));
    }
    Ok(out)
}

/// Parse a non-streaming `chat.completion` body into the deltas a stream would have carried.
pub fn parse_completion(text: &str) -> Result<Vec<Delta>, ProviderError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| ProviderError::Protocol(format!("response is not JSON ({e}): {}", clip(text, 200))))?;
    if let Some(err) = v.get("error") {
        return Err(classify_stream_error(err));
    }
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| ProviderError::Protocol(format!("response has no choices: {}", clip(text, 200))))?;
    let msg = choice.get("message").unwrap_or(&Value::Null);
    let mut out = Vec::new();
    if let Some(t) = msg.get("content").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        out.push(Delta::Text(t.to_string()));
    }
    if let Some(calls) = msg.get("tool_calls").and_then(Value::as_array) {
        for (index, c) in calls.iter().enumerate() {
            let f = c.get("function").unwrap_or(&Value::Null);
            out.push(Delta::ToolCall {
                index,
                id: c.get("id").and_then(Value::as_str).map(str::to_string),
                name: f.get("name").and_then(Value::as_str).map(str::to_string),
                arguments: arguments_text(f.get("arguments")),
            });
        }
    }
    if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
        out.push(Delta::Usage(parse_usage(u)));
    }
    if let Some(fr) = choice.get("finish_reason").and_then(Value::as_str) {
        out.push(Delta::Finish(FinishReason::from_wire(fr)));
    }
    Ok(out)
}

/// Arguments are a JSON string on the wire; some servers send an object instead. Keep text.
fn arguments_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn parse_usage(u: &Value) -> Usage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: n(u.get("prompt_tokens")),
        output_tokens: n(u.get("completion_tokens")),
        cached_tokens: n(u.pointer("/prompt_tokens_details/cached_tokens")),
    }
}

fn error_message(body: &str) -> (String, String) {
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let err = v.get("error").unwrap_or(&v);
    let msg = err
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| err.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| clip(body.trim(), 300));
    // Both tags, when they are strings: llama.cpp's `code` is the number 400 and its `type`
    // (`exceed_context_size_error`) is what tells the error apart.
    let tags: Vec<&str> = ["code", "type"].iter().filter_map(|k| err.get(*k).and_then(Value::as_str)).collect();
    (msg, tags.join(" "))
}

fn looks_like_context_overflow(msg: &str, code: &str) -> bool {
    let m = msg.to_ascii_lowercase();
    code.contains("context_length_exceeded")
        || code.contains("exceed_context_size")
        || m.contains("context length")
        || m.contains("context window")
        || m.contains("maximum context")
        || m.contains("too many tokens")
        || m.contains("prompt is too long")
        || m.contains("exceeds the context")
        || m.contains("exceeds the available context size")
        || m.contains("context size has been exceeded")
        || m.contains("input token count")
}

/// A request the server's schema refused, reported as a 500 (llama-cpp-python turns every
/// exception, pydantic's validation errors included, into one): sending it again cannot help.
fn looks_like_validation_error(msg: &str) -> bool {
    msg.contains("'loc': (") || msg.contains("validation error") || msg.contains("Input should be")
}

/// Map an HTTP error status and body to the error class that decides retrying.
pub fn classify_status(status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
    let (msg, code) = error_message(body);
    let msg = if msg.is_empty() { format!("HTTP {status}") } else { format!("HTTP {status}: {msg}") };
    match status {
        401 | 403 => ProviderError::Auth(msg),
        429 if code.contains("insufficient_quota") => ProviderError::Auth(msg),
        429 => ProviderError::RateLimited { retry_after, message: msg },
        // Older llama.cpp servers answer an overflow with 500.
        400 | 413 | 422 | 500 if looks_like_context_overflow(&msg, &code) => ProviderError::ContextTooLong(msg),
        500 if looks_like_validation_error(&msg) => {
            ProviderError::BadRequest(format!("{msg} (the server's schema refused wright's request)"))
        }
        404 => ProviderError::BadRequest(format!("{msg} (check --base-url and --model)")),
        408 | 409 | 425 | 500..=599 => ProviderError::Transient(msg),
        _ => ProviderError::BadRequest(msg),
    }
}

fn classify_stream_error(err: &Value) -> ProviderError {
    let body = json!({ "error": err }).to_string();
    let (msg, code) = error_message(&body);
    if looks_like_context_overflow(&msg, &code) {
        ProviderError::ContextTooLong(msg)
    } else if code.contains("rate") {
        ProviderError::RateLimited { retry_after: None, message: msg }
    } else {
        ProviderError::Transient(format!("error inside the stream: {msg}"))
    }
}

#[cfg(test)]
#[path = "openai_tests.rs"]
mod tests;
