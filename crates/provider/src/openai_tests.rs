use super::*;
use crate::{RetryPolicy, ToolSpec, complete};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

#[test]
fn classifies_statuses() {
    assert!(
        matches!(classify_status(401, None, r#"{"error":{"message":"Incorrect API key provided"}}"#), ProviderError::Auth(m) if m.contains("Incorrect API key"))
    );
    assert!(
        matches!(classify_status(429, Some(Duration::from_secs(2)), "{}"), ProviderError::RateLimited { retry_after: Some(d), .. } if d == Duration::from_secs(2))
    );
    assert!(matches!(
        classify_status(429, None, r#"{"error":{"message":"quota","code":"insufficient_quota"}}"#),
        ProviderError::Auth(_)
    ));
    assert!(matches!(
        classify_status(
            400,
            None,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#
        ),
        ProviderError::ContextTooLong(_)
    ));
    assert!(matches!(classify_status(400, None, r#"{"error":{"message":"bad"}}"#), ProviderError::BadRequest(_)));
    assert!(
        matches!(classify_status(503, None, "upstream down"), ProviderError::Transient(m) if m.contains("upstream down"))
    );
}

#[test]
fn retry_after_forms() {
    let now =
        chrono::DateTime::parse_from_rfc2822("Wed, 21 Oct 2015 07:28:00 GMT").unwrap().with_timezone(&chrono::Utc);
    assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
    assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now), Some(Duration::from_secs(30)));
    assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now), Some(Duration::ZERO));
    assert_eq!(parse_retry_after("soon", now), None);
}

#[test]
fn request_body_carries_tools_and_history() {
    let req = ChatRequest {
        model: "gpt-4o-mini".into(),
        messages: vec![
            Message::system("sys"),
            Message::user("hi"),
            Message::assistant_calls(
                None,
                vec![crate::ToolCall {
                    id: "c1".into(),
                    name: "readFile".into(),
                    arguments: "{\"path\":\"a\"}".into(),
                }],
            ),
            Message::tool_result("c1", "readFile", "{\"ok\":true}"),
        ],
        tools: vec![ToolSpec {
            name: "readFile".into(),
            description: "read".into(),
            parameters: json!({"type":"object"}),
        }],
        temperature: Some(0.2),
        max_tokens: None,
        tool_choice: Default::default(),
    };
    let b = request_body(&req, true);
    assert_eq!(b["tool_choice"], "auto");
    let required = ChatRequest { tool_choice: crate::ToolChoice::Required, ..req.clone() };
    assert_eq!(request_body(&required, true)["tool_choice"], "required");
    assert_eq!(b["stream_options"]["include_usage"], true);
    assert_eq!(b["tools"][0]["type"], "function");
    assert_eq!(b["tools"][0]["function"]["name"], "readFile");
    assert_eq!(b["messages"][2]["tool_calls"][0]["function"]["arguments"], "{\"path\":\"a\"}");
    assert_eq!(b["messages"][2]["content"], "");
    assert_eq!(b["messages"][3]["tool_call_id"], "c1");
    let b = request_body(&req, false);
    assert!(b.get("stream").is_none());
}

// A real OpenAI streaming transcript shape (tool call split over chunks, usage chunk last).
const SSE: &str = concat!(
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_abc\",\"type\":\"function\",\"function\":{\"name\":\"createFile\",\"arguments\":\"\"}}],\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\",\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"content\\\":\\\"hi\\\"}\"}}]},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":30,\"total_tokens\":150,\"prompt_tokens_details\":{\"cached_tokens\":64,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0}}}\n\n",
    "data: [DONE]\n\n"
);

async fn serve(status: u16, content_type: &'static str, body: String) -> String {
    use axum::{Router, http::StatusCode, response::IntoResponse, routing::post};
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move || {
            let body = body.clone();
            async move {
                (StatusCode::from_u16(status).unwrap(), [("content-type", content_type), ("retry-after", "1")], body)
                    .into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

fn provider(base_url: String, api_key: Option<String>, stream: bool) -> OpenAiProvider {
    OpenAiProvider::new(OpenAiConfig {
        base_url,
        api_key,
        stream,
        call_timeout: Duration::from_secs(5),
        ..OpenAiConfig::default()
    })
    .unwrap()
}

fn req() -> ChatRequest {
    ChatRequest {
        model: "gpt-4o-mini".into(),
        messages: vec![Message::user("hi")],
        tools: vec![],
        temperature: None,
        max_tokens: None,
        tool_choice: Default::default(),
    }
}

#[tokio::test]
async fn streams_tool_calls_and_usage_over_http() {
    let base = serve(200, "text/event-stream", SSE.to_string()).await;
    let p = provider(base, Some("k".into()), true);
    let mut deltas = 0;
    let r = complete(&p, &req(), &RetryPolicy::default(), &CancellationToken::new(), |_| deltas += 1, |_, _, _| {})
        .await
        .unwrap();
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].id, "call_abc");
    assert_eq!(r.tool_calls[0].name, "createFile");
    assert_eq!(r.tool_calls[0].arguments, "{\"path\":\"a.txt\",\"content\":\"hi\"}");
    assert_eq!(r.usage, Usage { input_tokens: 120, output_tokens: 30, cached_tokens: 64 });
    assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    assert!(deltas >= 4);
}

#[tokio::test]
async fn reads_non_streaming_body() {
    let body = r#"{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"runTests","arguments":"{}"}}],"refusal":null},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":50,"completion_tokens":5,"total_tokens":55,"prompt_tokens_details":{"cached_tokens":0}}}"#;
    let base = serve(200, "application/json", body.to_string()).await;
    let p = provider(base, None, false);
    let r =
        complete(&p, &req(), &RetryPolicy::default(), &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap();
    assert_eq!(r.tool_calls[0].name, "runTests");
    assert_eq!(r.usage.input_tokens, 50);
}

#[tokio::test]
async fn maps_http_errors() {
    let base = serve(401, "application/json", r#"{"error":{"message":"Incorrect API key provided: sk-xx","type":"invalid_request_error","code":"invalid_api_key"}}"#.into()).await;
    let p = provider(base, Some("bad".into()), true);
    let e = complete(&p, &req(), &RetryPolicy::default(), &CancellationToken::new(), |_| {}, |_, _, _| {})
        .await
        .unwrap_err();
    assert!(matches!(e, ProviderError::Auth(_)), "{e:?}");

    let base = serve(429, "application/json", r#"{"error":{"message":"Rate limit reached"}}"#.into()).await;
    let p = provider(base, None, true);
    let mut s = p.stream(req());
    let e = s.next().await.unwrap().unwrap_err();
    assert_eq!(
        e,
        ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(1)),
            message: "HTTP 429: Rate limit reached".into()
        }
    );
}

#[tokio::test]
async fn garbage_and_unreachable_are_classified() {
    let base = serve(200, "application/json", "<html>proxy error</html>".into()).await;
    let p = provider(base, None, false);
    let e = p.stream(req()).next().await.unwrap().unwrap_err();
    assert!(matches!(e, ProviderError::Protocol(_)), "{e:?}");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let p = provider(format!("http://127.0.0.1:{port}/v1"), None, true);
    let e = p.stream(req()).next().await.unwrap().unwrap_err();
    assert!(matches!(e, ProviderError::Unreachable(_)), "{e:?}");
}

/// A server that takes every request and answers nothing for 30 s; counts the requests.
async fn silent_server() -> (std::net::SocketAddr, std::sync::Arc<std::sync::atomic::AtomicU32>) {
    use axum::{Router, routing::post};
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let h = hits.clone();
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move || {
            h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                "late"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, hits)
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_retried() {
    let (addr, hits) = silent_server().await;
    let p = OpenAiProvider::new(OpenAiConfig {
        base_url: format!("http://{addr}/v1"),
        api_key: None,
        stream: true,
        call_timeout: Duration::from_millis(200),
        ..OpenAiConfig::default()
    })
    .unwrap();
    let policy = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(2),
        ..RetryPolicy::default()
    };
    let started = std::time::Instant::now();
    let e = complete(&p, &req(), &policy, &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap_err();
    assert!(matches!(e, ProviderError::Timeout(d) if d == Duration::from_millis(200)), "{e:?}");
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 3, "first try plus two retries");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_whole_answer_that_takes_too_long_is_not_asked_for_again() {
    let (addr, hits) = silent_server().await;
    let p = OpenAiProvider::new(OpenAiConfig {
        base_url: format!("http://{addr}/v1"),
        stream: false,
        call_timeout: Duration::from_millis(100),
        generation_timeout: Duration::from_millis(300),
        ..OpenAiConfig::default()
    })
    .unwrap();
    let policy = RetryPolicy { max_retries: 3, base_delay: Duration::from_millis(1), ..RetryPolicy::default() };
    let e = complete(&p, &req(), &policy, &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap_err();
    assert_eq!(e, ProviderError::GenerationTimeout(Duration::from_millis(300)));
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1, "never retried while the server works on it");
}

/// wright's own cap (from `/props`) is no promise of speed: a whole answer under it is waited
/// for up to the ceiling, not by its size (a CPU server may write a few tokens a second).
#[tokio::test]
async fn a_whole_answer_under_wrights_own_cap_gets_the_whole_ceiling() {
    use axum::{
        Json, Router,
        routing::{get, post},
    };
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None::<u64>));
    let app = Router::new()
        // n_ctx 40: a cap of 10 tokens, which by size alone would be waited for 0.2 + 1 s.
        .route("/props", get(|| async { Json(serde_json::json!({"default_generation_settings": {"n_ctx": 40}})) }))
        .route(
            "/v1/chat/completions",
            post({
                let seen = seen.clone();
                move |Json(body): Json<serde_json::Value>| async move {
                    *seen.lock().unwrap() = body["max_tokens"].as_u64();
                    tokio::time::sleep(Duration::from_millis(2500)).await;
                    Json(serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "slow but whole"}, "finish_reason": "stop"}]}))
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let p = OpenAiProvider::new(OpenAiConfig {
        base_url: format!("http://{addr}/v1"),
        stream: false,
        call_timeout: Duration::from_millis(200),
        generation_timeout: Duration::from_secs(30),
        ..OpenAiConfig::default()
    })
    .unwrap();
    let policy = RetryPolicy { max_retries: 0, ..RetryPolicy::default() };
    let r = complete(&p, &req(), &policy, &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap();
    assert_eq!(r.content, "slow but whole");
    assert_eq!(*seen.lock().unwrap(), Some(10), "the cap was sent");
}

/// A llama-server still loading its model answers `/props` with 503: it is asked again on the
/// next call, not taken for a server with no context size for the life of the process.
#[tokio::test]
async fn a_props_answer_of_503_is_asked_again() {
    use axum::{
        Json, Router,
        http::StatusCode,
        response::IntoResponse,
        routing::{get, post},
    };
    let props_hits = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let caps = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Option<u64>>::new()));
    let app = Router::new()
        .route(
            "/props",
            get({
                let hits = props_hits.clone();
                move || async move {
                    if hits.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                        (StatusCode::SERVICE_UNAVAILABLE, "{\"error\":{\"message\":\"Loading model\"}}").into_response()
                    } else {
                        Json(serde_json::json!({"n_ctx": 4096})).into_response()
                    }
                }
            }),
        )
        .route(
            "/v1/chat/completions",
            post({
                let caps = caps.clone();
                move |Json(body): Json<serde_json::Value>| async move {
                    caps.lock().unwrap().push(body["max_tokens"].as_u64());
                    Json(serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}))
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let p = provider(format!("http://{addr}/v1"), None, false);
    let policy = RetryPolicy { max_retries: 0, ..RetryPolicy::default() };
    for _ in 0..3 {
        complete(&p, &req(), &policy, &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap();
    }
    assert_eq!(*caps.lock().unwrap(), vec![None, Some(1024), Some(1024)]);
    assert_eq!(props_hits.load(std::sync::atomic::Ordering::SeqCst), 2, "asked again once, then remembered");
}

#[test]
fn a_whole_answer_gets_time_for_its_tokens_within_the_ceiling() {
    let call = Duration::from_secs(45);
    let ceiling = Duration::from_secs(600);
    assert_eq!(whole_answer_wait(call, ceiling, None), ceiling);
    assert_eq!(whole_answer_wait(call, ceiling, Some(1000)), Duration::from_secs(145));
    assert_eq!(whole_answer_wait(call, ceiling, Some(100_000)), ceiling);
    assert_eq!(whole_answer_wait(call, Duration::from_secs(10), Some(10)), call);
}

proptest::proptest! {
    #[test]
    fn chunk_parser_never_panics(s in ".*") {
        let _ = parse_chunk(&s);
        let _ = parse_completion(&s);
    }
}
