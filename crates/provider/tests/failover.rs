//! Fail-over without hammering: a primary that answers HTTP 500 with a JSON error body gets one
//! request per attempt of the retry policy builds use, none while its breaker is open, and one
//! probe after the cool-down. Real HTTP servers on loopback; the wire code, the retry loop and
//! the breakers are the real ones.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::post;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_provider::fallback::{BreakerConfig, BreakerState, CircuitBreaker, FallbackProvider, Link};
use wright_provider::openai::{OpenAiConfig, OpenAiProvider};
use wright_provider::{ChatRequest, Message, Provider, ProviderError, RetryPolicy, ToolSpec, complete};

const ERROR_BODY: &str = r#"{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}"#;

const WHOLE_ANSWER: &str = r#"{"id":"chatcmpl-b","object":"chat.completion","created":1,"model":"backup","choices":[{"index":0,"message":{"role":"assistant","content":"from the backup"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}"#;

/// The `stream` flag of every request a server received, in order.
type Seen = Arc<Mutex<Vec<bool>>>;

async fn record(State(seen): State<Seen>, body: &Bytes) {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    seen.lock().unwrap().push(v["stream"] == true);
}

/// A server answering every chat request with `status` and `body` (JSON).
async fn server(status: u16, body: &'static str) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(move |state: State<Seen>, bytes: Bytes| async move {
                record(state, &bytes).await;
                (axum::http::StatusCode::from_u16(status).unwrap(), [("content-type", "application/json")], body)
                    .into_response()
            }),
        )
        .with_state(seen.clone());
    let addr = spawn(app).await;
    (format!("http://{addr}/v1"), seen)
}

fn openai(base_url: &str, stream: bool) -> Arc<dyn Provider> {
    Arc::new(
        OpenAiProvider::new(OpenAiConfig { base_url: base_url.into(), stream, ..OpenAiConfig::default() }).unwrap(),
    )
}

/// A streamed tool request: the kind that used to be asked again as a whole answer.
fn tool_request() -> ChatRequest {
    ChatRequest {
        model: "primary-model".into(),
        messages: vec![Message::system("You write files."), Message::user("Create index.html.")],
        tools: vec![ToolSpec {
            name: "createFile".into(),
            description: "Create a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        temperature: None,
        max_tokens: Some(64),
        tool_choice: Default::default(),
    }
}

/// The retry policy builds use (its count of retries), with millisecond back-off so the test
/// does not sleep through it.
fn build_policy() -> RetryPolicy {
    RetryPolicy { base_delay: Duration::from_millis(1), max_delay: Duration::from_millis(2), ..RetryPolicy::default() }
}

#[tokio::test]
async fn an_error_status_is_asked_once_per_attempt_never_again_as_a_whole_answer() {
    let (url, seen) = server(500, ERROR_BODY).await;
    let policy = build_policy();
    let p = openai(&url, true);
    let mut retries = 0;
    let e = complete(p.as_ref(), &tool_request(), &policy, &CancellationToken::new(), |_| {}, |_, _, _| retries += 1)
        .await
        .unwrap_err();
    assert!(matches!(&e, ProviderError::Transient(m) if m.contains("HTTP 500") && m.contains("Sorry")), "{e:?}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len() as u32, policy.max_retries + 1, "one request per attempt: {seen:?}");
    assert!(seen.iter().all(|s| *s), "every attempt streamed; no whole-answer doubling: {seen:?}");
    assert_eq!(retries, policy.max_retries);
}

#[tokio::test]
async fn a_streaming_refusal_that_says_so_still_gets_a_whole_answer() {
    // A server that refuses streamed tool calls with an error status saying why.
    let refusal =
        r#"{"error":{"message":"Automatic streaming tool choice is not supported","type":"invalid_request_error"}}"#;
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(move |state: State<Seen>, bytes: Bytes| async move {
                let streamed = serde_json::from_slice::<Value>(&bytes).unwrap()["stream"] == true;
                record(state, &bytes).await;
                let (status, body) = if streamed { (400, refusal) } else { (200, WHOLE_ANSWER) };
                (axum::http::StatusCode::from_u16(status).unwrap(), [("content-type", "application/json")], body)
                    .into_response()
            }),
        )
        .with_state(seen.clone());
    let addr = spawn(app).await;
    let p = openai(&format!("http://{addr}/v1"), true);
    let policy = RetryPolicy { max_retries: 0, ..build_policy() };
    let r =
        complete(p.as_ref(), &tool_request(), &policy, &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap();
    assert_eq!(r.content, "from the backup");
    assert!(r.notices[0].contains("cannot stream tool calls"), "{:?}", r.notices);
    assert_eq!(*seen.lock().unwrap(), [true, false]);
}

#[tokio::test]
async fn a_failing_primary_is_left_alone_while_its_breaker_is_open_then_probed_once() {
    let (primary_url, primary) = server(500, ERROR_BODY).await;
    let (backup_url, backup) = server(200, WHOLE_ANSWER).await;
    // The breaker builds use, with a cool-down this test can wait for.
    let cfg = BreakerConfig { cooldown: Duration::from_millis(500), ..BreakerConfig::default() };
    let links = vec![
        Link {
            label: "openai:primary-model".into(),
            provider: openai(&primary_url, true),
            model: None,
            breaker: Arc::new(CircuitBreaker::new(cfg)),
        },
        Link {
            label: "openai:backup".into(),
            provider: openai(&backup_url, false),
            model: Some("backup".into()),
            breaker: Arc::new(CircuitBreaker::new(cfg)),
        },
    ];
    let chain = FallbackProvider::new(links);
    let policy = build_policy();
    let (request, cancel) = (tool_request(), CancellationToken::new());
    let call = || complete(&chain, &request, &policy, &cancel, |_| {}, |_, _, _| {});
    let hits = || primary.lock().unwrap().len() as u32;

    let r = call().await.unwrap();
    assert_eq!(r.content, "from the backup");
    let first = hits();
    assert!(first <= policy.max_retries + 1, "{first} requests before the fallback answered");
    assert_eq!(first, cfg.failure_threshold, "the breaker opened after its threshold");
    assert_eq!(chain.links()[0].breaker.state(), BreakerState::Open);

    // Right after: straight to the fallback.
    assert_eq!(call().await.unwrap().content, "from the backup");
    assert_eq!(hits(), first, "no request while the breaker is open");

    // After the cool-down: exactly one probe, which fails and re-opens the breaker.
    let reopens = chain.links()[0].breaker.reopens_at().unwrap();
    tokio::time::sleep_until(tokio::time::Instant::from_std(reopens)).await;
    assert_eq!(call().await.unwrap().content, "from the backup");
    assert_eq!(hits(), first + 1, "one probe");
    assert_eq!(chain.links()[0].breaker.state(), BreakerState::Open);
    assert_eq!(backup.lock().unwrap().len(), 3, "the backup answered every call");
}

/// Serve `app` on a loopback port of its own; its address.
async fn spawn(app: Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}
