//! Replays wire traffic recorded from two real OpenAI-compatible servers, llama-cpp-python
//! 0.3.36 and the llama-server of the llama.cpp it vendors (see fixtures/real/README.md), so the
//! normal suite guards what the ignored `real_servers` suite found without building servers.
//! The server here only plays the recorded status, content type and body; wright's wire code
//! and retry policy are the real ones.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::post;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_provider::openai::{OpenAiConfig, OpenAiProvider, parse_models, request_body};
use wright_provider::{
    ChatRequest, ChatResponse, Message, ProviderError, RetryPolicy, ToolCall, ToolSpec, compact, complete,
};

fn fixture(server: &str, name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real").join(server).join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// One recorded answer: status, content type, body.
#[derive(Clone)]
struct Answer(u16, &'static str, String);

fn recorded(server: &str, name: &str) -> Answer {
    let headers = fixture(server, &format!("{name}.headers.txt"));
    let status: u16 = headers.split_whitespace().nth(1).unwrap().parse().unwrap();
    let sse = headers.to_ascii_lowercase().contains("text/event-stream");
    let body = fixture(server, &format!("{name}.response.{}", if sse { "sse" } else { "json" }));
    Answer(status, if sse { "text/event-stream" } else { "application/json" }, body)
}

#[derive(Default)]
struct Replay {
    answers: Mutex<Vec<Answer>>,
    requests: Mutex<Vec<Value>>,
}

async fn answer(State(r): State<Arc<Replay>>, body: Bytes) -> impl IntoResponse {
    r.requests.lock().unwrap().push(serde_json::from_slice(&body).unwrap_or(Value::Null));
    let mut answers = r.answers.lock().unwrap();
    let Answer(status, ct, body) = if answers.len() > 1 { answers.remove(0) } else { answers[0].clone() };
    (axum::http::StatusCode::from_u16(status).unwrap(), [("content-type", ct)], body)
}

/// A server that gives `answers` in order (the last one again and again).
async fn replay(answers: Vec<Answer>) -> (String, Arc<Replay>) {
    let state = Arc::new(Replay { answers: Mutex::new(answers), ..Replay::default() });
    let app = Router::new().route("/v1/chat/completions", post(answer)).with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), state)
}

fn provider(base_url: &str, stream: bool) -> OpenAiProvider {
    OpenAiProvider::new(OpenAiConfig { base_url: base_url.into(), stream, ..OpenAiConfig::default() }).unwrap()
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "createFile".into(),
        description: "Create a file".into(),
        parameters: json!({"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}),
    }]
}

fn tool_request() -> ChatRequest {
    ChatRequest {
        model: "SmolLM2-135M-Instruct".into(),
        messages: vec![Message::system("You write files."), Message::user("Create index.html saying hello.")],
        tools: tools(),
        temperature: None,
        max_tokens: None,
        tool_choice: Default::default(),
    }
}

fn policy(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(2),
        ..RetryPolicy::default()
    }
}

async fn call(p: &OpenAiProvider, req: &ChatRequest, retries: u32) -> Result<ChatResponse, ProviderError> {
    complete(p, req, &policy(retries), &CancellationToken::new(), |_| {}, |_, _, _| {}).await
}

#[tokio::test]
async fn llama_cpp_python_whole_tool_calls_are_read() {
    let (url, _) = replay(vec![recorded("llama-cpp-python", "tools_whole")]).await;
    let r = call(&provider(&url, false), &tool_request(), 0).await.unwrap();
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].name, "createFile", "the legacy function_call's `createFile:` is not used");
    let args: Value = serde_json::from_str(&r.tool_calls[0].arguments).unwrap();
    assert_eq!(args["path"], "index.html");
    assert_eq!(r.usage.input_tokens, 314);
}

#[tokio::test]
async fn an_assistant_tool_turn_is_sent_with_empty_content_never_null() {
    let mut req = tool_request();
    let call = ToolCall { id: "call_1".into(), name: "createFile".into(), arguments: "{}".into() };
    req.messages.push(Message::assistant_calls(None, vec![call]));
    req.messages.push(Message::tool_result("call_1", "createFile", "{\"ok\":true}"));
    for stream in [false, true] {
        let body = request_body(&req, stream);
        assert_eq!(body["messages"][2]["content"], "", "{body}");
    }
    // The recorded proof: the same turn with "" was answered 200 by both servers; with null,
    // llama-cpp-python answered 500 with pydantic's validation errors.
    let sent: Value =
        serde_json::from_str(&fixture("llama-cpp-python", "continued_content_empty.request.json")).unwrap();
    assert_eq!(sent["messages"][2]["content"], "");
    assert_eq!(recorded("llama-cpp-python", "continued_content_empty").0, 200);
    assert_eq!(recorded("llama-server", "continued_content_empty").0, 200);
}

#[tokio::test]
async fn a_500_that_is_a_schema_error_is_not_retried() {
    let (url, state) = replay(vec![recorded("llama-cpp-python", "continued_content_null")]).await;
    let e = call(&provider(&url, false), &tool_request(), 3).await.unwrap_err();
    assert!(matches!(&e, ProviderError::BadRequest(m) if m.contains("validation errors")), "{e:?}");
    assert_eq!(state.requests.lock().unwrap().len(), 1, "a request the schema refuses is sent once");
}

#[tokio::test]
async fn an_empty_tool_stream_falls_back_to_whole_answers_for_the_endpoint() {
    // llama-cpp-python answers a streamed tool request with 200 and an empty event stream
    // ("Automatic streaming tool choice is not supported" is only in its log).
    let (url, state) =
        replay(vec![recorded("llama-cpp-python", "tools_streamed"), recorded("llama-cpp-python", "tools_whole")]).await;
    assert!(recorded("llama-cpp-python", "tools_streamed").2.is_empty());
    let p = provider(&url, true);
    // No retry budget at all: the fallback does not spend it.
    let r = call(&p, &tool_request(), 0).await.unwrap();
    assert_eq!(r.tool_calls[0].name, "createFile");
    assert_eq!(r.notices.len(), 1, "{:?}", r.notices);
    assert!(r.notices[0].contains("cannot stream tool calls"), "{}", r.notices[0]);
    let r = call(&p, &tool_request(), 0).await.unwrap();
    assert!(r.notices.is_empty(), "said once");
    let sent: Vec<bool> = state.requests.lock().unwrap().iter().map(|b| b["stream"] == true).collect();
    assert_eq!(sent, [true, false, false], "streamed once, then whole answers only");
}

/// A server that hangs up on every streamed request before answering: what
/// wright's own streamed tool requests met from llama-cpp-python (its exception comes after
/// uvicorn logged "200 OK"). Whole requests get the recorded whole answer.
async fn hang_up_on_streams(whole: Answer) -> (String, Arc<Mutex<Vec<bool>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let (mut sock, _) = listener.accept().await.unwrap();
            let (log, whole) = (log.clone(), whole.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                // Read the head, then as many body bytes as it announces.
                let body_start = loop {
                    let n = sock.read(&mut chunk).await.unwrap();
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..body_start]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                while buf.len() < body_start + len {
                    let n = sock.read(&mut chunk).await.unwrap();
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let body: Value = serde_json::from_slice(&buf[body_start..]).unwrap();
                let stream = body["stream"] == true;
                log.lock().unwrap().push(stream);
                if stream {
                    // Nothing at all: hyper's "connection closed before message completed",
                    // as wright met it (uvicorn had logged "200 OK" already).
                    return;
                }
                let Answer(status, ct, text) = whole;
                let reply = format!(
                    "HTTP/1.1 {status} OK\r\ncontent-type: {ct}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    (format!("http://{addr}/v1"), seen)
}

#[tokio::test]
async fn a_connection_that_breaks_off_a_streamed_tool_request_gets_whole_answers() {
    let (url, seen) = hang_up_on_streams(recorded("llama-cpp-python", "wright_shaped_whole")).await;
    let p = provider(&url, true);
    let r = call(&p, &tool_request(), 0).await.unwrap();
    assert!(!r.tool_calls.is_empty(), "{r:?}");
    assert_eq!(r.notices.len(), 1);
    call(&p, &tool_request(), 0).await.unwrap();
    // Without tools there is nothing to fall back for: the break is an ordinary failure.
    let mut plain = tool_request();
    plain.tools.clear();
    let e = call(&p, &plain, 0).await.unwrap_err();
    assert!(matches!(&e, ProviderError::Transient(m) if m.contains("connection closed")), "{e:?}");
    assert_eq!(*seen.lock().unwrap(), [true, false, false, true]);
}

#[tokio::test]
async fn a_streamed_answer_without_tools_still_streams() {
    let (url, _) = replay(vec![recorded("llama-server", "chat_streamed")]).await;
    let mut req = tool_request();
    req.tools.clear();
    let r = call(&provider(&url, true), &req, 0).await.unwrap();
    assert!(r.content.starts_with("Hello"), "{}", r.content);
    assert_eq!(r.usage.input_tokens, 36, "usage from the choices-less final chunk");
    assert!(r.notices.is_empty());
}

#[tokio::test]
async fn a_stream_that_ends_with_nothing_is_an_error_not_an_empty_answer() {
    let (url, state) = replay(vec![recorded("llama-cpp-python", "overflow_streamed")]).await;
    let mut req = tool_request();
    req.tools.clear();
    let e = call(&provider(&url, true), &req, 1).await.unwrap_err();
    assert!(matches!(&e, ProviderError::Transient(m) if m.contains("ended before")), "{e:?}");
    assert_eq!(state.requests.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn both_servers_overflow_answers_are_context_too_long_with_their_sizes() {
    for (server, want) in [("llama-server", (9032, 8192)), ("llama-cpp-python", (9339, 8192))] {
        let (url, state) = replay(vec![recorded(server, "overflow_whole")]).await;
        let e = call(&provider(&url, false), &tool_request(), 3).await.unwrap_err();
        let ProviderError::ContextTooLong(m) = &e else { panic!("{server}: {e:?}") };
        assert_eq!(compact::reported_sizes(m), Some(want), "{server}: {m}");
        assert_eq!(state.requests.lock().unwrap().len(), 1, "{server}: not retried as it is");
    }
    // llama-server refuses a streamed request that overflows before streaming: the same 400.
    let (url, _) = replay(vec![recorded("llama-server", "overflow_streamed")]).await;
    let e = call(&provider(&url, true), &tool_request(), 0).await.unwrap_err();
    assert!(matches!(e, ProviderError::ContextTooLong(_)), "{e:?}");
}

#[tokio::test]
async fn a_server_that_refuses_stream_options_is_asked_again_without_it() {
    // vLLM before 0.6.5 forbade unknown fields; this is its answer (from vllm#10463's report).
    let refusal = Answer(
        400,
        "application/json",
        json!({"object": "error", "message": "[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'), 'msg': 'Extra inputs are not permitted'}]", "type": "BadRequestError", "param": null, "code": 400}).to_string(),
    );
    let (url, state) = replay(vec![refusal, recorded("llama-server", "chat_streamed")]).await;
    let p = provider(&url, true);
    let mut req = tool_request();
    req.tools.clear();
    let r = call(&p, &req, 0).await.unwrap();
    assert!(r.content.starts_with("Hello"));
    call(&p, &req, 0).await.unwrap();
    let sent = state.requests.lock().unwrap();
    let with_options: Vec<bool> = sent.iter().map(|b| b.get("stream_options").is_some()).collect();
    assert_eq!(with_options, [true, false, false]);
}

#[test]
fn both_servers_model_lists_are_read() {
    for server in ["llama-cpp-python", "llama-server"] {
        assert_eq!(parse_models(&fixture(server, "models.response.json")).unwrap(), ["SmolLM2-135M-Instruct"]);
    }
}
