//! Google Gemini API (`generativelanguage` v1beta): `models/{model}:generateContent`, or
//! `:streamGenerateContent?alt=sse` where every SSE event is a whole `GenerateContentResponse`.
//!
//! Same shape as the OpenAI adapter: one request builder, one response reader for both a JSON body
//! and each streamed chunk, both producing the same [`Delta`]s. The differences that matter:
//! - Gemini sends each function call whole and (before Gemini 3) without an id, so the reader
//!   numbers calls itself (`call_<n>`), counting across chunks so indices never collide.
//! - Tool results are `functionResponse` parts inside a user turn, named by function, not by id,
//!   and parallel results must share one turn.
//! - Tool parameters must be the OpenAPI-3 subset Gemini accepts; see [`to_gemini_schema`].
//! - Thinking models attach an opaque `thoughtSignature` to function calls and (Gemini 3) reject
//!   history that drops it. [`ToolCall`] has no field for it, so the provider remembers signatures
//!   per call and puts them back when that call is replayed; see [`THOUGHT_SIGNATURE_SKIP`].

use crate::http::{SseHandler, SseStep, body_text, send, sse_deltas};
use crate::{
    ChatRequest, Delta, DeltaStream, FinishReason, Provider, ProviderError, Role, ToolCall, ToolChoice, Usage,
};
use futures::TryStreamExt;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use wright_text::clip;

/// Documented placeholder signature for a function call whose real signature is unknown (history
/// from another provider, or from before a restart). Gemini 3 rejects unsigned calls; this value
/// tells it to skip the check instead of failing the whole request.
pub const THOUGHT_SIGNATURE_SKIP: &str = "skip_thought_signature_validator";

/// Settings for one Gemini API endpoint.
#[derive(Debug, Clone)]
pub struct GeminiConfig {
    /// Host root (no `/v1beta`); requests go to `{base_url}/v1beta/models/{model}:…`.
    pub base_url: String,
    /// Sent as `x-goog-api-key`, never in the URL, so keys stay out of logs and error messages.
    pub api_key: Option<String>,
    /// Stream with SSE (default) or ask for one JSON body.
    pub stream: bool,
    /// Longest wait for the response to start, and for each streamed chunk after it.
    pub call_timeout: Duration,
}

impl Default for GeminiConfig {
    fn default() -> Self {
        Self {
            base_url: "https://generativelanguage.googleapis.com".into(),
            api_key: None,
            stream: true,
            call_timeout: Duration::from_secs(45),
        }
    }
}

/// The adapter. Cheap to clone; clones share the thought-signature memory.
#[derive(Clone)]
pub struct GeminiProvider {
    inner: Arc<Inner>,
}

struct Inner {
    cfg: GeminiConfig,
    http: reqwest::Client,
    memory: Mutex<CallMemory>,
}

impl GeminiProvider {
    pub fn new(cfg: GeminiConfig) -> Result<Self, ProviderError> {
        let http = crate::http::client()?;
        Ok(Self { inner: Arc::new(Inner { cfg, http, memory: Mutex::new(CallMemory::default()) }) })
    }
}

impl Provider for GeminiProvider {
    fn name(&self) -> &str {
        "gemini"
    }

    fn stream(&self, request: ChatRequest) -> DeltaStream {
        let inner = self.inner.clone();
        Box::pin(futures::stream::once(async move { inner.open(request).await }).try_flatten())
    }
}

// ---------------------------------------------------------------------------------------------
// Request

/// What the provider learned about a call it received: its signature and whether its id came
/// from Gemini (only those ids are sent back; ours or another provider's would mean nothing).
#[derive(Debug, Clone, Default, PartialEq)]
struct CallMemo {
    signature: Option<String>,
    wire_id: bool,
}

/// Bounded memory of received calls, keyed by id, name and arguments so a replayed call finds its
/// own signature even though `call_<n>` ids repeat across turns.
#[derive(Default)]
struct CallMemory {
    map: HashMap<String, CallMemo>,
    order: VecDeque<String>,
}

const MEMORY_CAP: usize = 1024;

impl CallMemory {
    fn remember(&mut self, entries: Vec<(String, CallMemo)>) {
        for (key, memo) in entries {
            if self.map.insert(key.clone(), memo).is_none() {
                self.order.push_back(key);
            }
            while self.order.len() > MEMORY_CAP {
                if let Some(old) = self.order.pop_front() {
                    self.map.remove(&old);
                }
            }
        }
    }

    fn recall(&self, call: &ToolCall) -> Option<CallMemo> {
        self.map.get(&call_key(&call.id, &call.name, &call.arguments)).cloned()
    }
}

fn call_key(id: &str, name: &str, arguments: &str) -> String {
    format!("{id}\u{0}{name}\u{0}{arguments}")
}

/// The JSON body for a request; public so wire tests can assert on exactly what is sent. Without
/// provider memory, replayed calls carry no real thought signatures (see [`THOUGHT_SIGNATURE_SKIP`]).
pub fn request_body(req: &ChatRequest) -> Value {
    build_body(req, &|_| None)
}

fn build_body(req: &ChatRequest, recall: &dyn Fn(&ToolCall) -> Option<CallMemo>) -> Value {
    let placeholder_signatures = enforces_thought_signatures(&req.model);
    let mut system_parts = Vec::new();
    let mut contents: Vec<Value> = Vec::new();
    // Tool results carry the call id; Gemini wants the function name and (if it gave one) its id.
    let mut calls_by_id: HashMap<&str, (&str, bool)> = HashMap::new();
    for m in &req.messages {
        let text = m.content.as_deref().filter(|t| !t.is_empty());
        match m.role {
            Role::System => system_parts.extend(text.map(|t| json!({ "text": t }))),
            Role::User => push_content(&mut contents, "user", text.map(|t| json!({ "text": t })).into_iter().collect()),
            Role::Assistant => {
                let mut parts: Vec<Value> = text.map(|t| json!({ "text": t })).into_iter().collect();
                for (i, call) in m.tool_calls.iter().enumerate() {
                    let memo = recall(call).unwrap_or_default();
                    calls_by_id.insert(&call.id, (&call.name, memo.wire_id));
                    let mut function_call = json!({ "name": call.name, "args": args_object(&call.arguments) });
                    if memo.wire_id {
                        function_call["id"] = json!(call.id);
                    }
                    let mut part = json!({ "functionCall": function_call });
                    // Gemini signs the first call of a step; a replayed step needs a signature there.
                    match memo.signature {
                        Some(sig) => part["thoughtSignature"] = json!(sig),
                        None if i == 0 && placeholder_signatures => {
                            part["thoughtSignature"] = json!(THOUGHT_SIGNATURE_SKIP)
                        }
                        None => {}
                    }
                    parts.push(part);
                }
                push_content(&mut contents, "model", parts);
            }
            Role::Tool => {
                let call = m.tool_call_id.as_deref().and_then(|id| calls_by_id.get(id).map(|c| (id, *c)));
                let name = m
                    .name
                    .as_deref()
                    .filter(|n| !n.is_empty())
                    .or(call.map(|(_, (name, _))| name))
                    .unwrap_or("unknown_tool");
                let mut response = json!({ "name": name, "response": response_object(m.content.as_deref()) });
                if let Some((id, (_, true))) = call {
                    response["id"] = json!(id);
                }
                push_content(&mut contents, "user", vec![json!({ "functionResponse": response })]);
            }
        }
    }

    let mut body = json!({ "contents": contents });
    if !system_parts.is_empty() {
        body["systemInstruction"] = json!({ "parts": system_parts });
    }
    if !req.tools.is_empty() {
        let declarations: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                let mut d = json!({ "name": t.name, "description": t.description });
                if let Some(params) = parameters_schema(&t.parameters) {
                    d["parameters"] = params;
                }
                d
            })
            .collect();
        body["tools"] = json!([{ "functionDeclarations": declarations }]);
        let mode = match req.tool_choice {
            ToolChoice::Auto => "AUTO",
            ToolChoice::Required => "ANY",
        };
        body["toolConfig"] = json!({ "functionCallingConfig": { "mode": mode } });
    }
    let mut generation = Map::new();
    if let Some(t) = req.temperature {
        generation.insert("temperature".into(), json!(t));
    }
    if let Some(m) = req.max_tokens {
        generation.insert("maxOutputTokens".into(), json!(m));
    }
    if !generation.is_empty() {
        body["generationConfig"] = Value::Object(generation);
    }
    body
}

/// Appends parts to the last content when the role repeats: Gemini wants parallel function
/// responses in one turn, and merging keeps roles alternating whatever the history looks like.
fn push_content(contents: &mut Vec<Value>, role: &str, parts: Vec<Value>) {
    if parts.is_empty() {
        return;
    }
    let last = contents.last_mut().filter(|c| c["role"] == role);
    match last.and_then(|c| c.get_mut("parts")).and_then(Value::as_array_mut) {
        Some(existing) => existing.extend(parts),
        None => contents.push(json!({ "role": role, "parts": parts })),
    }
}

/// `functionCall.args` must be an object; anything else (malformed model output kept verbatim by
/// the tool layer) becomes `{}` so one bad call cannot make the whole history unsendable.
fn args_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    }
}

/// `functionResponse.response` must be an object (a protobuf Struct); other results are wrapped.
fn response_object(content: Option<&str>) -> Value {
    let text = content.unwrap_or_default();
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => v,
        Ok(other) => json!({ "result": other }),
        Err(_) => json!({ "result": text }),
    }
}

/// Gemini 3 and later reject replayed function calls without a thought signature.
fn enforces_thought_signatures(model: &str) -> bool {
    let name = model.trim().trim_start_matches("models/");
    let Some(version) = name.strip_prefix("gemini-") else { return false };
    let major: String = version.chars().take_while(char::is_ascii_digit).collect();
    major.parse::<u32>().is_ok_and(|m| m >= 3)
}

/// Tool parameters as Gemini wants them, or `None` for a tool without parameters: Gemini rejects
/// an object schema with no properties ("should be non-empty for OBJECT type").
fn parameters_schema(schema: &Value) -> Option<Value> {
    let mut converted = to_gemini_schema(schema);
    let has_properties = converted.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
    if !has_properties {
        return None;
    }
    converted["type"] = json!("object");
    Some(converted)
}

// ---------------------------------------------------------------------------------------------
// Schema conversion

/// Deepest `$ref`/nesting level followed; recursive schemas are cut off here instead of looping.
const MAX_SCHEMA_DEPTH: usize = 24;

/// Convert a JSON Schema (as schemars and MCP servers write it) to the OpenAPI-3 subset Gemini's
/// function declarations accept. Gemini rejects unknown keys outright ("Unknown name …"), so this
/// keeps only `type`, `format`, `description`, `nullable`, `enum`, `properties`, `required`,
/// `items`, `minimum`/`maximum` and `minItems`/`maxItems`, and rewrites what it can:
/// - `"type": ["string", "null"]` and `anyOf`/`oneOf` with a null branch → `nullable: true`;
/// - other `anyOf`/`oneOf` → the first non-null branch; `allOf` → its branches merged;
/// - local `$ref`s (`#/$defs/…`, `#/definitions/…`) → inlined; `const` → a one-value `enum`;
/// - `title` → `description` when there is none; `required` → only names in `properties`;
/// - `format` → kept only where Gemini gives it meaning (`enum`/`date-time`, `int32`/`int64`,
///   `float`/`double`).
///
/// Dropping a constraint only loosens the declaration; the tool layer still validates arguments.
pub fn to_gemini_schema(schema: &Value) -> Value {
    convert_schema(schema, schema, 0, &mut Vec::new())
}

/// `active` holds the `$ref`s being expanded on the current path, so a recursive type is cut at
/// its first repetition instead of expanding exponentially.
fn convert_schema(schema: &Value, root: &Value, depth: usize, active: &mut Vec<String>) -> Value {
    let Some(obj) = schema.as_object() else { return json!({}) };
    if depth > MAX_SCHEMA_DEPTH {
        return json!({});
    }
    let mut out = Map::new();
    let mut nullable = obj.get("nullable").and_then(Value::as_bool).unwrap_or(false);

    match obj.get("type") {
        Some(Value::String(t)) if t == "null" => nullable = true,
        Some(Value::String(t)) => {
            out.insert("type".into(), json!(t));
        }
        Some(Value::Array(types)) => {
            nullable |= types.iter().any(|t| t == "null");
            if let Some(first) = types.iter().filter_map(Value::as_str).find(|t| *t != "null") {
                out.insert("type".into(), json!(first));
            }
        }
        _ => {}
    }
    if let Some(d) = obj.get("description").or_else(|| obj.get("title")).and_then(Value::as_str) {
        out.insert("description".into(), json!(d));
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        nullable |= values.iter().any(Value::is_null);
        let strings: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
        // Gemini enums are strings; an enum of numbers cannot be said, so it is left out.
        if !strings.is_empty() && strings.len() == values.iter().filter(|v| !v.is_null()).count() {
            out.insert("enum".into(), json!(strings));
        }
    }
    if let Some(c) = obj.get("const").and_then(Value::as_str) {
        out.insert("enum".into(), json!([c]));
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        let converted: Map<String, Value> =
            props.iter().map(|(k, v)| (k.clone(), convert_schema(v, root, depth + 1, active))).collect();
        out.insert("properties".into(), Value::Object(converted));
    }
    if let Some(req) = obj.get("required").and_then(Value::as_array) {
        out.insert("required".into(), json!(req.iter().filter_map(Value::as_str).collect::<Vec<_>>()));
    }
    // `prefixItems` is the 2020-12 tuple form (schemars 1 writes it for Rust tuples).
    match obj.get("items").or_else(|| obj.get("prefixItems")) {
        Some(items @ Value::Object(_)) => {
            out.insert("items".into(), convert_schema(items, root, depth + 1, active));
        }
        // Tuple forms: the first item type is the best Gemini can hold.
        Some(Value::Array(items)) => {
            if let Some(first) = items.first() {
                out.insert("items".into(), convert_schema(first, root, depth + 1, active));
            }
        }
        _ => {}
    }
    for key in ["minimum", "maximum"] {
        if let Some(n) = obj.get(key).filter(|v| v.is_number()) {
            out.insert(key.into(), n.clone());
        }
    }
    for key in ["minItems", "maxItems"] {
        if let Some(n) = obj.get(key).filter(|v| v.is_u64()) {
            out.insert(key.into(), n.clone());
        }
    }

    // Sources whose keys fill in what this node does not say itself.
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str).filter(|r| !active.iter().any(|a| a == r)) {
        if let Some(target) = resolve_ref(root, reference) {
            active.push(reference.to_string());
            let converted = convert_schema(target, root, depth + 1, active);
            active.pop();
            merge_schema(&mut out, converted);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = obj.get(key).and_then(Value::as_array) {
            nullable |= branches.iter().any(is_null_schema);
            if let Some(first) = branches.iter().find(|b| !is_null_schema(b)) {
                merge_schema(&mut out, convert_schema(first, root, depth + 1, active));
            }
        }
    }
    if let Some(branches) = obj.get("allOf").and_then(Value::as_array) {
        for branch in branches {
            merge_schema(&mut out, convert_schema(branch, root, depth + 1, active));
        }
    }

    if !out.contains_key("type") {
        let inferred = if out.contains_key("properties") {
            Some("object")
        } else if out.contains_key("items") {
            Some("array")
        } else if out.contains_key("enum") {
            Some("string")
        } else {
            None
        };
        if let Some(t) = inferred {
            out.insert("type".into(), json!(t));
        }
    }
    if let Some(format) = obj.get("format").and_then(Value::as_str) {
        let ty = out.get("type").and_then(Value::as_str).unwrap_or("");
        let meaningful = matches!(
            (ty, format),
            ("string", "enum" | "date-time") | ("integer", "int32" | "int64") | ("number", "float" | "double")
        );
        if meaningful {
            out.insert("format".into(), json!(format));
        }
    }
    // Gemini rejects `required` names missing from `properties` and empty property maps.
    let names: Option<Vec<String>> =
        out.get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect());
    if let Some(Value::Array(required)) = out.get_mut("required") {
        required.retain(|r| r.as_str().is_some_and(|r| names.as_ref().is_some_and(|n| n.iter().any(|k| k == r))));
        let mut seen = Vec::new();
        required.retain(|r| {
            let fresh = !seen.contains(r);
            seen.push(r.clone());
            fresh
        });
    }
    if out.get("required").and_then(Value::as_array).is_some_and(Vec::is_empty) {
        out.remove("required");
    }
    if out.get("properties").and_then(Value::as_object).is_some_and(Map::is_empty) {
        out.remove("properties");
    }
    // Merged `$ref`/`anyOf`/`allOf` branches may have said `nullable` themselves.
    nullable |= out.remove("nullable").and_then(|n| n.as_bool()).unwrap_or(false);
    if nullable {
        out.insert("nullable".into(), json!(true));
    }
    Value::Object(out)
}

/// Fill `out` with what `other` says and `out` does not; object properties and required names
/// are unioned, since `allOf` branches and `$ref` targets add to one another.
fn merge_schema(out: &mut Map<String, Value>, other: Value) {
    let Value::Object(other) = other else { return };
    for (key, value) in other {
        match (key.as_str(), out.get_mut(&key)) {
            ("properties", Some(Value::Object(mine))) => {
                if let Value::Object(theirs) = value {
                    for (k, v) in theirs {
                        mine.entry(k).or_insert(v);
                    }
                }
            }
            ("required", Some(Value::Array(mine))) => {
                if let Value::Array(theirs) = value {
                    mine.extend(theirs);
                }
            }
            (_, Some(_)) => {}
            (_, None) => {
                out.insert(key, value);
            }
        }
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").is_some_and(|t| t == "null")
}

/// A local JSON pointer (`#/$defs/Name`); remote references cannot be followed and are dropped.
fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

// ---------------------------------------------------------------------------------------------
// Transport

impl Inner {
    fn memory(&self) -> std::sync::MutexGuard<'_, CallMemory> {
        self.memory.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn open(self: Arc<Self>, req: ChatRequest) -> Result<DeltaStream, ProviderError> {
        let base = self.cfg.base_url.trim_end_matches('/');
        // Accept a base URL that already names the API version.
        let base = base.strip_suffix("/v1beta").unwrap_or(base);
        let model = req.model.trim().trim_start_matches("models/");
        if model.is_empty() {
            return Err(ProviderError::Config("no Gemini model given (--model)".into()));
        }
        let url = if self.cfg.stream {
            format!("{base}/v1beta/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("{base}/v1beta/models/{model}:generateContent")
        };
        let body = {
            let memory = self.memory();
            build_body(&req, &|call| memory.recall(call))
        };
        let mut builder = self.http.post(&url).json(&body);
        if let Some(key) = self.cfg.api_key.as_deref().filter(|k| !k.is_empty()) {
            builder = builder.header("x-goog-api-key", key);
        }
        let timeout = self.cfg.call_timeout;
        let resp = send(builder, &url, timeout, classify_status).await?;
        if !self.cfg.stream {
            let text = body_text(resp, &url, timeout).await?;
            let mut parser = ResponseParser::new();
            let deltas = parser.parse_body(&text)?;
            self.memory().remember(parser.take_memos());
            return Ok(Box::pin(futures::stream::iter(deltas.into_iter().map(Ok))));
        }
        Ok(sse_deltas(resp, timeout, ChunkReader { parser: ResponseParser::new(), inner: self.clone() }))
    }
}

/// Reads `GenerateContentResponse` chunks; Gemini ends a stream by closing it (no sentinel).
struct ChunkReader {
    parser: ResponseParser,
    inner: Arc<Inner>,
}

impl SseHandler for ChunkReader {
    fn on_data(&mut self, data: &str) -> Result<SseStep, ProviderError> {
        if data == "[DONE]" {
            return Ok(SseStep { deltas: Vec::new(), stop: false });
        }
        let deltas = self.parser.parse_chunk(data)?;
        let memos = self.parser.take_memos();
        if !memos.is_empty() {
            self.inner.memory().remember(memos);
        }
        Ok(SseStep { deltas, stop: false })
    }
}

// ---------------------------------------------------------------------------------------------
// Response

/// Reads `GenerateContentResponse`s — a whole body or successive SSE chunks of one answer — into
/// [`Delta`]s. It keeps state across chunks: the call counter (so every function call gets its
/// own index and a unique `call_<n>` id) and whether the turn has called a function (Gemini says
/// `STOP` either way; the caller needs `ToolCalls`).
#[derive(Debug, Default)]
pub struct ResponseParser {
    next_call: usize,
    saw_call: bool,
    finished: bool,
    memos: Vec<(String, CallMemo)>,
}

impl ResponseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parse one streamed chunk (the `data:` of one SSE event).
    pub fn parse_chunk(&mut self, data: &str) -> Result<Vec<Delta>, ProviderError> {
        let v: Value = serde_json::from_str(data)
            .map_err(|e| ProviderError::Protocol(format!("bad stream chunk ({e}): {}", clip(data, 200))))?;
        let mut out = Vec::new();
        match &v {
            // `streamGenerateContent` without `alt=sse` answers with a JSON array of chunks.
            Value::Array(items) => {
                for item in items {
                    self.parse_value(item, &mut out)?;
                }
            }
            Value::Object(_) => self.parse_value(&v, &mut out)?,
            _ => return Err(ProviderError::Protocol(format!("unexpected stream chunk: {}", clip(data, 200)))),
        }
        Ok(out)
    }

    /// Parse a whole non-streaming body; unlike a chunk it must say something.
    pub fn parse_body(&mut self, text: &str) -> Result<Vec<Delta>, ProviderError> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| ProviderError::Protocol(format!("response is not JSON ({e}): {}", clip(text, 200))))?;
        let first = if let Value::Array(items) = &v { items.first().unwrap_or(&Value::Null) } else { &v };
        let meaningful = ["candidates", "promptFeedback", "error"].iter().any(|k| first.get(k).is_some());
        if !meaningful {
            return Err(ProviderError::Protocol(format!("response has no candidates: {}", clip(text, 200))));
        }
        self.parse_chunk(text)
    }

    fn parse_value(&mut self, v: &Value, out: &mut Vec<Delta>) -> Result<(), ProviderError> {
        if let Some(err) = v.get("error") {
            return Err(classify_error_value(err));
        }
        let candidate = v.get("candidates").and_then(|c| c.get(0));
        let blocked = v.pointer("/promptFeedback/blockReason").and_then(Value::as_str);
        if let (None, Some(reason)) = (candidate, blocked) {
            let detail = v
                .pointer("/promptFeedback/blockReasonMessage")
                .and_then(Value::as_str)
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
            return Err(ProviderError::BadRequest(format!("Gemini blocked the prompt ({reason}){detail}")));
        }
        if let Some(c) = candidate {
            let mut calls_here = false;
            for part in c.pointer("/content/parts").and_then(Value::as_array).into_iter().flatten() {
                if let Some(call) = part.get("functionCall") {
                    out.push(self.function_call(call, part.get("thoughtSignature")));
                    calls_here = true;
                } else if let Some(text) = part.get("text").and_then(Value::as_str) {
                    // Thought summaries (`thought: true`) are the model's notes, not its answer.
                    let thought = part.get("thought").and_then(Value::as_bool).unwrap_or(false);
                    if !thought && !text.is_empty() {
                        out.push(Delta::Text(text.to_string()));
                    }
                }
            }
            match c.get("finishReason").and_then(Value::as_str) {
                Some(reason) if reason != "FINISH_REASON_UNSPECIFIED" => {
                    out.push(Delta::Finish(self.finish_reason(reason)));
                    self.finished = true;
                }
                // A call after a finish already reported (older models repeat STOP on every chunk).
                _ if calls_here && self.finished => out.push(Delta::Finish(FinishReason::ToolCalls)),
                _ => {}
            }
        }
        if let Some(u) = v.get("usageMetadata").filter(|u| u.is_object()) {
            out.push(Delta::Usage(parse_usage(u)));
        }
        Ok(())
    }

    fn function_call(&mut self, call: &Value, signature: Option<&Value>) -> Delta {
        let index = self.next_call;
        self.next_call += 1;
        self.saw_call = true;
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        let arguments = match call.get("args") {
            None | Some(Value::Null) => "{}".to_string(),
            Some(args) => args.to_string(),
        };
        // Gemini 3 names its calls; older models do not, and then the id is ours.
        let wire_id = call.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
        let id = wire_id.map_or_else(|| format!("call_{index}"), str::to_string);
        let signature = signature.and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        if signature.is_some() || wire_id.is_some() {
            self.memos.push((call_key(&id, &name, &arguments), CallMemo { signature, wire_id: wire_id.is_some() }));
        }
        Delta::ToolCall { index, id: Some(id), name: Some(name), arguments }
    }

    fn finish_reason(&self, reason: &str) -> FinishReason {
        let mapped = match reason {
            "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => FinishReason::ContentFilter,
            other => FinishReason::from_wire(other),
        };
        // Abnormal endings (length, safety, malformed call) stay visible even with calls made.
        if self.saw_call && mapped == FinishReason::Stop { FinishReason::ToolCalls } else { mapped }
    }

    fn take_memos(&mut self) -> Vec<(String, CallMemo)> {
        std::mem::take(&mut self.memos)
    }
}

/// Parse a whole `generateContent` body into the deltas a stream would have carried.
pub fn parse_response(text: &str) -> Result<Vec<Delta>, ProviderError> {
    ResponseParser::new().parse_body(text)
}

/// Parse one streamed chunk on its own (no state across chunks; use [`ResponseParser`] for a
/// whole stream so call indices keep counting).
pub fn parse_chunk(data: &str) -> Result<Vec<Delta>, ProviderError> {
    ResponseParser::new().parse_chunk(data)
}

/// Gemini counts thinking apart from the answer; both are billed as output.
fn parse_usage(u: &Value) -> Usage {
    let n = |key: &str| u.get(key).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: n("promptTokenCount"),
        output_tokens: n("candidatesTokenCount").saturating_add(n("thoughtsTokenCount")),
        cached_tokens: n("cachedContentTokenCount"),
    }
}

// ---------------------------------------------------------------------------------------------
// Errors
/// The parts of a Google API error body (`{"error": {code, message, status, details}}`) that
/// decide what to do. Some endpoints wrap it in a one-element array.
struct GoogleError {
    message: String,
    status: String,
    reasons: Vec<String>,
    retry_delay: Option<Duration>,
}

impl GoogleError {
    fn parse(body: &str) -> Self {
        let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let v = if let Value::Array(items) = &v { items.first().cloned().unwrap_or(Value::Null) } else { v };
        let err = v.get("error").unwrap_or(&v);
        let message =
            err.get("message").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| clip(body.trim(), 300));
        let status = err.get("status").and_then(Value::as_str).unwrap_or_default().to_string();
        let details = err.get("details").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let reasons =
            details.iter().filter_map(|d| d.get("reason").and_then(Value::as_str).map(str::to_string)).collect();
        let retry_delay = details
            .iter()
            .filter(|d| d.get("@type").and_then(Value::as_str).is_none_or(|t| t.ends_with("google.rpc.RetryInfo")))
            .find_map(|d| d.get("retryDelay").and_then(Value::as_str).and_then(parse_proto_duration));
        Self { message, status, reasons, retry_delay }
    }
}

/// A protobuf JSON duration: decimal seconds with an `s` suffix (`"21s"`, `"45.837906927s"`).
fn parse_proto_duration(raw: &str) -> Option<Duration> {
    let secs: f64 = raw.trim().strip_suffix('s')?.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

fn is_context_overflow(msg: &str) -> bool {
    let m = msg.to_ascii_lowercase();
    m.contains("exceeds the maximum number of tokens")
        || (m.contains("input token count") && m.contains("exceeds"))
        || m.contains("context window")
        || m.contains("too many tokens")
}

fn is_bad_key(e: &GoogleError) -> bool {
    let m = e.message.to_ascii_lowercase();
    m.contains("api key not valid")
        || m.contains("api key not found")
        || m.contains("api key expired")
        || e.reasons.iter().any(|r| r == "API_KEY_INVALID")
}

/// Map an HTTP error status and body to the error class that decides retrying.
pub fn classify_status(status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
    let err = GoogleError::parse(body);
    let label = if err.status.is_empty() { format!("HTTP {status}") } else { format!("HTTP {status} {}", err.status) };
    let msg = if err.message.is_empty() { label } else { format!("{label}: {}", err.message) };
    let auth_status = matches!(err.status.as_str(), "UNAUTHENTICATED" | "PERMISSION_DENIED");
    match status {
        401 | 403 => ProviderError::Auth(msg),
        400 if is_bad_key(&err) => ProviderError::Auth(msg),
        _ if auth_status => ProviderError::Auth(msg),
        429 => ProviderError::RateLimited { retry_after: err.retry_delay.or(retry_after), message: msg },
        400 | 413 if is_context_overflow(&err.message) => ProviderError::ContextTooLong(msg),
        404 => ProviderError::BadRequest(format!("{msg} (check --base-url and --model)")),
        408 | 409 | 425 | 500..=599 => ProviderError::Transient(msg),
        _ => ProviderError::BadRequest(msg),
    }
}

/// An `error` object inside a 200 response or stream: classify by its own code when it has one.
fn classify_error_value(err: &Value) -> ProviderError {
    let body = json!({ "error": err }).to_string();
    match err.get("code").and_then(Value::as_u64).and_then(|c| u16::try_from(c).ok()) {
        Some(code) if code >= 400 => classify_status(code, None, &body),
        _ => {
            let msg = GoogleError::parse(&body).message;
            if is_context_overflow(&msg) {
                ProviderError::ContextTooLong(msg)
            } else {
                ProviderError::Transient(format!("error inside the stream: {msg}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Message, ToolSpec};

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: args.into() }
    }

    fn req(model: &str, messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            model: model.into(),
            messages,
            tools: vec![],
            temperature: None,
            max_tokens: None,
            tool_choice: Default::default(),
        }
    }

    #[test]
    fn ids_count_across_chunks_and_finish_becomes_tool_calls() {
        let mut p = ResponseParser::new();
        let a = p
            .parse_chunk(r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"a","args":{"x":1}}}],"role":"model"},"index":0}]}"#)
            .unwrap();
        let b = p
            .parse_chunk(r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"b"}}],"role":"model"},"finishReason":"STOP","index":0}]}"#)
            .unwrap();
        assert_eq!(
            a,
            vec![Delta::ToolCall {
                index: 0,
                id: Some("call_0".into()),
                name: Some("a".into()),
                arguments: "{\"x\":1}".into()
            }]
        );
        assert_eq!(
            b[0],
            Delta::ToolCall { index: 1, id: Some("call_1".into()), name: Some("b".into()), arguments: "{}".into() }
        );
        assert_eq!(b[1], Delta::Finish(FinishReason::ToolCalls));
    }

    #[test]
    fn thoughts_are_skipped_and_usage_adds_thinking() {
        let d = parse_chunk(
            r#"{"candidates":[{"content":{"parts":[{"text":"**Plan**","thought":true},{"text":"Hi"}],"role":"model"},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":28,"candidatesTokenCount":47,"thoughtsTokenCount":1174}}"#,
        )
        .unwrap();
        assert_eq!(
            d,
            vec![
                Delta::Text("Hi".into()),
                Delta::Finish(FinishReason::Length),
                Delta::Usage(Usage { input_tokens: 28, output_tokens: 1221, cached_tokens: 0 })
            ]
        );
    }

    #[test]
    fn stream_error_chunks_and_blocked_prompts_are_errors() {
        let e = parse_chunk(r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#);
        assert!(matches!(e, Err(ProviderError::Transient(_))), "{e:?}");
        let e = parse_chunk(r#"{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"}}"#);
        assert!(matches!(e, Err(ProviderError::BadRequest(m)) if m.contains("PROHIBITED_CONTENT")));
        assert!(matches!(parse_response("{}"), Err(ProviderError::Protocol(_))));
        assert!(matches!(parse_chunk("[1]"), Ok(d) if d.is_empty()));
    }

    #[test]
    fn classifies_statuses() {
        let body = r#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"45.5s"}]}}"#;
        assert!(
            matches!(classify_status(429, Some(Duration::from_secs(3)), body), ProviderError::RateLimited { retry_after: Some(d), .. } if d == Duration::from_millis(45_500))
        );
        assert!(
            matches!(classify_status(429, Some(Duration::from_secs(3)), "{}"), ProviderError::RateLimited { retry_after: Some(d), .. } if d == Duration::from_secs(3))
        );
        assert!(matches!(
            classify_status(
                400,
                None,
                r#"{"error":{"code":400,"message":"The input token count (1054016) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#
            ),
            ProviderError::ContextTooLong(_)
        ));
        assert!(matches!(
            classify_status(404, None, r#"[{"error":{"code":404,"message":"models/x is not found","status":"NOT_FOUND"}}]"#),
            ProviderError::BadRequest(m) if m.contains("models/x is not found") && m.contains("--model")
        ));
        assert!(matches!(
            classify_status(403, None, r#"{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}"#),
            ProviderError::Auth(_)
        ));
        assert!(matches!(classify_status(504, None, "gateway"), ProviderError::Transient(m) if m.contains("gateway")));
        assert!(matches!(classify_status(400, None, r#"{"error":{"message":"bad"}}"#), ProviderError::BadRequest(_)));
        assert_eq!(parse_proto_duration("0.25s"), Some(Duration::from_millis(250)));
        assert_eq!(parse_proto_duration("21"), None);
    }

    #[test]
    fn replayed_calls_carry_signatures_ids_and_placeholders() {
        let mut p = ResponseParser::new();
        p.parse_chunk(r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":1},"id":"abc123"},"thoughtSignature":"SIG"},{"functionCall":{"name":"g","args":{}}}]}}]}"#)
            .unwrap();
        let mut memory = CallMemory::default();
        memory.remember(p.take_memos());
        let history = vec![
            Message::user("go"),
            Message::assistant_calls(None, vec![call("abc123", "f", "{\"a\":1}"), call("call_1", "g", "{}")]),
            Message::tool_result("abc123", "f", "ok"),
            Message::tool_result("call_1", "g", "[1,2]"),
            Message::assistant_calls(None, vec![call("call_0", "h", "not json")]),
        ];
        let b = build_body(&req("gemini-3-flash-preview", history.clone()), &|c| memory.recall(c));
        let parts = &b["contents"][1]["parts"];
        assert_eq!(parts[0]["thoughtSignature"], "SIG");
        assert_eq!(parts[0]["functionCall"]["id"], "abc123");
        assert!(parts[1].get("thoughtSignature").is_none());
        assert!(parts[1]["functionCall"].get("id").is_none());
        let results = &b["contents"][2]["parts"];
        assert_eq!(results[0]["functionResponse"], json!({"name": "f", "response": {"result": "ok"}, "id": "abc123"}));
        assert_eq!(results[1]["functionResponse"], json!({"name": "g", "response": {"result": [1, 2]}}));
        assert_eq!(b["contents"][3]["parts"][0]["thoughtSignature"], THOUGHT_SIGNATURE_SKIP);
        assert_eq!(b["contents"][3]["parts"][0]["functionCall"]["args"], json!({}));
        // Older models get no placeholder: they never asked for signatures.
        let b = request_body(&req("gemini-2.5-flash", history));
        assert!(b["contents"][3]["parts"][0].get("thoughtSignature").is_none());
        assert!(enforces_thought_signatures("models/gemini-10-pro") && !enforces_thought_signatures("gemma-3-27b"));
    }

    #[test]
    fn schema_conversion_covers_refs_unions_and_formats() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {
                "mode": {"$ref": "#/$defs/Mode"},
                "count": {"type": "integer", "format": "uint32", "minimum": 0, "default": 1},
                "when": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]},
                "pick": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3, "uniqueItems": true},
                "any": true,
                "both": {"allOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]}, {"properties": {"b": {"type": "number", "format": "double"}}}]}
            },
            "required": ["mode", "ghost"],
            "additionalProperties": false,
            "$defs": {"Mode": {"description": "How", "type": "string", "enum": ["fast", "slow", null]}}
        });
        let g = to_gemini_schema(&schema);
        assert_eq!(
            g,
            json!({
                "type": "object",
                "description": "Args",
                "properties": {
                    "mode": {"type": "string", "description": "How", "enum": ["fast", "slow"], "nullable": true},
                    "count": {"type": "integer", "minimum": 0},
                    "when": {"type": "string", "format": "date-time", "nullable": true},
                    "pick": {"type": "integer"},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                    "any": {},
                    "both": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number", "format": "double"}}, "required": ["a"]}
                },
                "required": ["mode"]
            })
        );
        let recursive = json!({"$ref": "#", "properties": {"next": {"$ref": "#"}}});
        let _ = to_gemini_schema(&recursive);
        assert_eq!(parameters_schema(&json!({"type": "object", "properties": {}})), None);
        assert_eq!(parameters_schema(&json!({"type": "object"})), None);
    }

    #[test]
    fn no_tools_no_generation_config() {
        let b = request_body(&req(
            "gemini-2.5-flash",
            vec![Message::user("hi"), Message::assistant(""), Message::user("again")],
        ));
        assert_eq!(b, json!({"contents": [{"role": "user", "parts": [{"text": "hi"}, {"text": "again"}]}]}));
        let mut r = req("gemini-2.5-flash", vec![Message::user("hi")]);
        r.tools =
            vec![ToolSpec { name: "noop".into(), description: "d".into(), parameters: json!({"type": "object"}) }];
        r.max_tokens = Some(64);
        let b = request_body(&r);
        assert_eq!(b["tools"][0]["functionDeclarations"][0], json!({"name": "noop", "description": "d"}));
        assert_eq!(b["generationConfig"], json!({"maxOutputTokens": 64}));
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(s in ".*") {
            let _ = parse_chunk(&s);
            let _ = parse_response(&s);
            let _ = classify_status(429, None, &s);
        }

        #[test]
        fn schema_conversion_never_panics(s in ".*") {
            if let Ok(v) = serde_json::from_str::<Value>(&s) {
                let _ = to_gemini_schema(&v);
            }
        }
    }
}
