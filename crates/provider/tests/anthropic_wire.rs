//! Wire tests for the Anthropic Messages adapter against a local HTTP server that replays
//! transcripts copied from Anthropic's documentation (see `fixtures/anthropic/README.md`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use futures::StreamExt;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_provider::anthropic::{self, AnthropicConfig, AnthropicProvider};
use wright_provider::{
    ChatRequest, ChatResponse, Delta, FinishReason, Message, Provider, ProviderError, RetryPolicy, ToolCall, ToolSpec,
    Usage, complete,
};

const STREAM_TOOL_USE: &str = include_str!("fixtures/anthropic/stream_tool_use.sse");
const STREAM_WEB_SEARCH_USAGE: &str = include_str!("fixtures/anthropic/stream_web_search_usage.sse");
const STREAM_OVERLOADED: &str = include_str!("fixtures/anthropic/stream_overloaded.sse");
const MESSAGE_CACHED_USAGE: &str = include_str!("fixtures/anthropic/message_cached_usage.json");
const MESSAGE_TOOL_USE: &str = include_str!("fixtures/anthropic/message_tool_use.json");
const ERROR_NOT_FOUND: &str = include_str!("fixtures/anthropic/error_not_found.json");
const ERROR_OVERLOADED: &str = include_str!("fixtures/anthropic/error_overloaded.json");
const ERROR_AUTHENTICATION: &str = include_str!("fixtures/anthropic/error_authentication.json");
const ERROR_RATE_LIMIT: &str = include_str!("fixtures/anthropic/error_rate_limit.json");
const ERROR_PROMPT_TOO_LONG: &str = include_str!("fixtures/anthropic/error_prompt_too_long.json");

/// Requests the mock server received: headers and parsed JSON body.
type Seen = Arc<Mutex<Vec<(HeaderMap, Value)>>>;

/// Serve `body` with `status` on `POST /v1/messages`; returns the host root and what was received.
async fn serve(
    status: u16,
    content_type: &'static str,
    body: &str,
    extra: &[(&'static str, &'static str)],
) -> (String, Seen) {
    use axum::{Router, response::IntoResponse, routing::post};
    let seen: Seen = Arc::default();
    let mut headers = HeaderMap::new();
    headers.insert("content-type", HeaderValue::from_static(content_type));
    for (k, v) in extra {
        headers.insert(*k, HeaderValue::from_static(v));
    }
    let body = body.to_string();
    let record = seen.clone();
    let app = Router::new().route(
        "/v1/messages",
        post(move |req_headers: HeaderMap, req_body: String| {
            let (headers, body, record) = (headers.clone(), body.clone(), record.clone());
            async move {
                let parsed = serde_json::from_str(&req_body).unwrap_or(Value::Null);
                record.lock().unwrap().push((req_headers, parsed));
                (StatusCode::from_u16(status).unwrap(), headers, body).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), seen)
}

fn provider(base_url: String, stream: bool) -> AnthropicProvider {
    AnthropicProvider::new(AnthropicConfig {
        base_url,
        api_key: Some("sk-ant-test".into()),
        stream,
        call_timeout: Duration::from_secs(5),
        ..AnthropicConfig::default()
    })
    .unwrap()
}

fn req() -> ChatRequest {
    ChatRequest {
        model: "claude-opus-4-6".into(),
        messages: vec![Message::user("What is the weather like in San Francisco?")],
        tools: vec![],
        temperature: None,
        max_tokens: None,
        tool_choice: Default::default(),
    }
}

fn no_retries() -> RetryPolicy {
    RetryPolicy { max_retries: 0, ..RetryPolicy::default() }
}

async fn run(p: &AnthropicProvider, policy: &RetryPolicy) -> (Result<ChatResponse, ProviderError>, Vec<Delta>) {
    let mut deltas = Vec::new();
    let r = complete(p, &req(), policy, &CancellationToken::new(), |d| deltas.push(d.clone()), |_, _, _| {}).await;
    (r, deltas)
}

async fn first_error(p: &AnthropicProvider) -> ProviderError {
    p.stream(req()).next().await.unwrap().unwrap_err()
}

#[tokio::test]
async fn streamed_tool_use_transcript_assembles() {
    let (base, _) = serve(200, "text/event-stream", STREAM_TOOL_USE, &[]).await;
    let (r, deltas) = run(&provider(base, true), &RetryPolicy::default()).await;
    let r = r.unwrap();
    assert_eq!(r.content, "Okay, let's check the weather for San Francisco, CA:");
    assert_eq!(
        r.tool_calls,
        vec![ToolCall {
            id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
            name: "get_weather".into(),
            arguments: r#"{"location": "San Francisco, CA", "unit": "fahrenheit"}"#.into(),
        }]
    );
    assert_eq!(r.usage, Usage { input_tokens: 472, output_tokens: 89, cached_tokens: 0 });
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    // The arguments really arrived in pieces, all keyed by the tool_use block's index (1).
    let pieces: Vec<_> = deltas
        .iter()
        .filter_map(|d| match d {
            Delta::ToolCall { index, arguments, .. } if !arguments.is_empty() => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(pieces, vec![1; 8]);
}

#[tokio::test]
async fn usage_restated_in_message_delta_wins() {
    let (base, _) = serve(200, "text/event-stream", STREAM_WEB_SEARCH_USAGE, &[]).await;
    let (r, _) = run(&provider(base, true), &RetryPolicy::default()).await;
    let r = r.unwrap();
    assert_eq!(r.usage, Usage { input_tokens: 10682, output_tokens: 510, cached_tokens: 0 });
    assert_eq!(r.finish_reason, Some(FinishReason::Stop));
}

#[test]
fn events_map_to_deltas() {
    let events: Vec<&str> = STREAM_TOOL_USE.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
    assert_eq!(
        anthropic::parse_event(events[0]).unwrap(),
        vec![Delta::Usage(Usage { input_tokens: 472, ..Usage::default() })]
    );
    assert_eq!(anthropic::parse_event(events[1]).unwrap(), vec![]);
    assert_eq!(anthropic::parse_event(events[2]).unwrap(), vec![], "ping");
    assert_eq!(anthropic::parse_event(events[3]).unwrap(), vec![Delta::Text("Okay".into())]);
    let start = events.iter().find(|e| e.contains("\"tool_use\"")).unwrap();
    assert_eq!(
        anthropic::parse_event(start).unwrap(),
        vec![Delta::ToolCall {
            index: 1,
            id: Some("toolu_01T1x1fJ34qAmk2tNTrN7Up6".into()),
            name: Some("get_weather".into()),
            arguments: String::new()
        }]
    );
    let last_delta = events[events.len() - 2];
    assert_eq!(
        anthropic::parse_event(last_delta).unwrap(),
        vec![Delta::Finish(FinishReason::ToolCalls), Delta::Usage(Usage { output_tokens: 89, ..Usage::default() })]
    );
}

#[tokio::test]
async fn non_streaming_body_maps_cached_usage() {
    let (base, seen) = serve(200, "application/json", MESSAGE_CACHED_USAGE, &[]).await;
    let (r, _) = run(&provider(base, false), &RetryPolicy::default()).await;
    let r = r.unwrap();
    assert_eq!(r.content, "Hi! My name is Claude.");
    assert!(r.tool_calls.is_empty());
    // All prompt tokens: 2095 uncached + 2051 read from cache + 2051 written to it.
    assert_eq!(r.usage, Usage { input_tokens: 6197, output_tokens: 503, cached_tokens: 2051 });
    assert_eq!(r.finish_reason, Some(FinishReason::Stop));
    assert!(seen.lock().unwrap()[0].1.get("stream").is_none());
}

#[tokio::test]
async fn non_streaming_tool_use_body() {
    let (base, _) = serve(200, "application/json", MESSAGE_TOOL_USE, &[]).await;
    let (r, _) = run(&provider(base, false), &RetryPolicy::default()).await;
    let r = r.unwrap();
    assert_eq!(r.content, "I'll check the current weather in San Francisco for you.");
    assert_eq!(
        r.tool_calls,
        vec![ToolCall {
            id: "toolu_01A09q90qw90lq917835lq9".into(),
            name: "get_weather".into(),
            arguments: r#"{"location":"San Francisco, CA","unit":"celsius"}"#.into(),
        }]
    );
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(r.usage, Usage::default());
}

fn tool(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("{name} tool"),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }
}

#[tokio::test]
async fn outbound_request_threads_tool_results_and_marks_cache() {
    let (base, seen) = serve(200, "text/event-stream", STREAM_TOOL_USE, &[]).await;
    let p = provider(base, true);
    let request = ChatRequest {
        model: "claude-opus-4-6".into(),
        messages: vec![
            Message::system("You are wright."),
            Message::system("Project rules."),
            Message::user("Read a and b."),
            Message::assistant_calls(
                Some("Reading both.".into()),
                vec![
                    ToolCall { id: "toolu_a".into(), name: "readFile".into(), arguments: r#"{"path":"a"}"#.into() },
                    ToolCall { id: "toolu_b".into(), name: "readFile".into(), arguments: "{\"path\":".into() },
                ],
            ),
            Message::tool_result("toolu_a", "readFile", r#"{"ok":true,"content":"A"}"#),
            Message::tool_result("toolu_b", "readFile", r#"{"ok":false,"error":"bad arguments"}"#),
        ],
        tools: vec![tool("readFile"), tool("runTests")],
        temperature: Some(0.2),
        max_tokens: None,
        tool_choice: Default::default(),
    };
    complete(&p, &request, &RetryPolicy::default(), &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap();
    let (headers, body) = seen.lock().unwrap()[0].clone();

    assert_eq!(headers["x-api-key"], "sk-ant-test");
    assert_eq!(headers["anthropic-version"], "2023-06-01");
    assert_eq!(headers["content-type"], "application/json");
    assert!(headers.get("authorization").is_none());

    assert_eq!(body["model"], "claude-opus-4-6");
    assert_eq!(body["max_tokens"], 8192);
    assert_eq!(body["stream"], true);
    assert_eq!(body["tool_choice"], json!({"type": "auto"}));
    assert!((body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
    assert_eq!(
        body["system"],
        json!([
            {"type": "text", "text": "You are wright."},
            {"type": "text", "text": "Project rules.", "cache_control": {"type": "ephemeral"}}
        ])
    );
    assert_eq!(
        body["tools"][0],
        json!({"name": "readFile", "description": "readFile tool", "input_schema": tool("readFile").parameters})
    );
    assert_eq!(body["tools"][1]["cache_control"], json!({"type": "ephemeral"}));

    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_eq!(messages[0], json!({"role": "user", "content": [{"type": "text", "text": "Read a and b."}]}));
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Reading both."},
            {"type": "tool_use", "id": "toolu_a", "name": "readFile", "input": {"path": "a"}},
            {"type": "tool_use", "id": "toolu_b", "name": "readFile", "input": {}}
        ]})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "{\"ok\":true,\"content\":\"A\"}"},
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "{\"ok\":false,\"error\":\"bad arguments\"}", "is_error": true}
        ]})
    );
}

#[test]
fn request_body_merges_same_role_turns() {
    let mut request = req();
    request.messages = vec![
        Message::user("first"),
        Message::user("second"),
        Message::assistant_calls(None, vec![ToolCall { id: "t1".into(), name: "run".into(), arguments: "{}".into() }]),
        Message::tool_result("t1", "run", "done"),
        Message::user("and now?"),
        Message::assistant(""),
    ];
    request.max_tokens = Some(1000);
    let b = anthropic::request_body(&request, false, 8192);
    assert_eq!(b["max_tokens"], 1000);
    assert!(b.get("stream").is_none() && b.get("system").is_none() && b.get("tools").is_none());
    assert_eq!(
        b["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "run", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "done"},
                {"type": "text", "text": "and now?"}
            ]}
        ])
    );
}

#[tokio::test]
async fn unauthorized_is_auth_and_not_retried() {
    let (base, seen) = serve(401, "application/json", ERROR_AUTHENTICATION, &[]).await;
    let (r, _) = run(&provider(base, true), &RetryPolicy::default()).await;
    let e = r.unwrap_err();
    assert!(matches!(&e, ProviderError::Auth(m) if m.contains("invalid x-api-key")), "{e:?}");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn rate_limited_carries_retry_after() {
    let (base, _) = serve(429, "application/json", ERROR_RATE_LIMIT, &[("retry-after", "30")]).await;
    let e = first_error(&provider(base, true)).await;
    assert!(
        matches!(&e, ProviderError::RateLimited { retry_after: Some(d), message } if *d == Duration::from_secs(30) && message.contains("rate_limit_error")),
        "{e:?}"
    );
}

#[tokio::test]
async fn overloaded_529_is_transient() {
    let (base, _) = serve(529, "application/json", ERROR_OVERLOADED, &[]).await;
    let e = first_error(&provider(base, true)).await;
    assert!(matches!(&e, ProviderError::Transient(m) if m.contains("Overloaded")), "{e:?}");
    assert!(e.is_retryable());
}

#[tokio::test]
async fn not_found_and_prompt_too_long_are_final() {
    let (base, _) = serve(404, "application/json", ERROR_NOT_FOUND, &[]).await;
    let e = first_error(&provider(base, false)).await;
    assert!(matches!(&e, ProviderError::BadRequest(m) if m.contains("check --base-url and --model")), "{e:?}");

    let (base, _) = serve(400, "application/json", ERROR_PROMPT_TOO_LONG, &[]).await;
    let e = first_error(&provider(base, true)).await;
    assert!(matches!(e, ProviderError::ContextTooLong(_)), "{e:?}");
}

#[test]
fn spend_cap_429_is_not_retryable() {
    let body = r#"{"type":"error","error":{"type":"rate_limit_error","message":"cap","details":{"error_code":"enforced_spend_limit_reached"}}}"#;
    assert!(!anthropic::classify_status(429, None, body).is_retryable());
    assert!(matches!(anthropic::classify_status(502, None, "<html>bad gateway</html>"), ProviderError::Transient(_)));
}

#[tokio::test]
async fn mid_stream_error_event_is_transient() {
    let (base, _) = serve(200, "text/event-stream", STREAM_OVERLOADED, &[]).await;
    let p = provider(base, true);
    let items: Vec<_> = p.stream(req()).collect().await;
    assert_eq!(items.len(), 3, "{items:?}");
    assert_eq!(items[0], Ok(Delta::Usage(Usage { input_tokens: 472, ..Usage::default() })));
    assert_eq!(items[1], Ok(Delta::Text("Okay".into())));
    assert!(matches!(&items[2], Err(ProviderError::Transient(m)) if m.contains("overloaded_error")), "{items:?}");

    let (r, _) = run(&p, &no_retries()).await;
    assert!(matches!(r, Err(ProviderError::Transient(_))));
}

#[tokio::test]
async fn truncated_stream_is_not_a_complete_answer() {
    let cut = STREAM_TOOL_USE.find("event: message_delta").unwrap();
    let (base, _) = serve(200, "text/event-stream", &STREAM_TOOL_USE[..cut], &[]).await;
    let (r, _) = run(&provider(base, true), &no_retries()).await;
    assert!(matches!(&r, Err(ProviderError::Transient(m)) if m.contains("message_stop")), "{r:?}");
}

#[tokio::test]
async fn garbage_and_unreachable_are_classified() {
    let (base, _) = serve(200, "application/json", "<html>proxy error</html>", &[]).await;
    let e = first_error(&provider(base, false)).await;
    assert!(matches!(e, ProviderError::Protocol(_)), "{e:?}");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let e = first_error(&provider(format!("http://127.0.0.1:{port}"), true)).await;
    assert!(matches!(e, ProviderError::Unreachable(_)), "{e:?}");
}

#[test]
fn provider_name() {
    assert_eq!(provider("http://127.0.0.1:9".into(), true).name(), "anthropic");
}

proptest::proptest! {
    #[test]
    fn parsers_never_panic(s in ".*", status in 0u16..1000) {
        let _ = anthropic::parse_event(&s);
        let _ = anthropic::parse_message(&s);
        let _ = anthropic::classify_status(status, None, &s);
    }

    #[test]
    fn parsers_never_panic_on_json_shaped_input(
        kind in "(message_start|content_block_start|content_block_delta|message_delta|error|message|ping)",
        index in proptest::prelude::any::<i64>(),
        inner in ".*",
    ) {
        let event = format!(r#"{{"type":"{kind}","index":{index},"delta":{{"type":"input_json_delta","partial_json":{inner:?}}},"usage":{{"input_tokens":{index}}},"content":[{{"type":"tool_use","input":{inner:?}}}]}}"#);
        let _ = anthropic::parse_event(&event);
        let _ = anthropic::parse_message(&event);
    }
}
