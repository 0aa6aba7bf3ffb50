//! Gemini adapter against recorded wire data (tests/fixtures/gemini, sources in its README),
//! served by a local HTTP server that also records what the adapter sent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

// One module so `cargo test gemini` selects these tests by path.
mod gemini {
    use futures::StreamExt;
    use proptest::prelude::*;
    use serde_json::{Value, json};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;
    use wright_provider::gemini::{
        GeminiConfig, GeminiProvider, ResponseParser, parse_chunk, parse_response, request_body, to_gemini_schema,
    };
    use wright_provider::{
        ChatRequest, ChatResponse, Delta, FinishReason, Message, Provider, ProviderError, RetryPolicy, ToolCall,
        ToolSpec, Usage, complete,
    };

    fn fixture(name: &str) -> String {
        let path = format!("{}/tests/fixtures/gemini/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// One canned answer of the mock server.
    #[derive(Clone)]
    struct Reply {
        status: u16,
        content_type: &'static str,
        body: String,
    }

    fn sse(body: String) -> Reply {
        Reply { status: 200, content_type: "text/event-stream", body }
    }

    fn json_reply(status: u16, body: String) -> Reply {
        Reply { status, content_type: "application/json; charset=UTF-8", body }
    }

    /// What one request to the mock looked like.
    #[derive(Clone, Debug)]
    struct Seen {
        path_and_query: String,
        api_key: Option<String>,
        body: Value,
    }

    struct Mock {
        base: String,
        seen: Arc<Mutex<Vec<Seen>>>,
    }

    impl Mock {
        fn seen(&self) -> Vec<Seen> {
            self.seen.lock().unwrap().clone()
        }
    }

    /// Serve `replies` in order (repeating the last) on 127.0.0.1:0; every reply carries
    /// `retry-after: 1` so tests can tell a body-given retry delay from the header.
    async fn serve(replies: Vec<Reply>) -> Mock {
        use axum::http::{HeaderMap, StatusCode, Uri};
        use axum::response::IntoResponse;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: String| {
            let log = log.clone();
            let replies = replies.clone();
            async move {
                let n = {
                    let mut log = log.lock().unwrap();
                    log.push(Seen {
                        path_and_query: uri.path_and_query().map(|p| p.to_string()).unwrap_or_default(),
                        api_key: headers.get("x-goog-api-key").map(|v| v.to_str().unwrap().to_string()),
                        body: serde_json::from_str(&body).unwrap_or(Value::Null),
                    });
                    log.len() - 1
                };
                let r = &replies[n.min(replies.len() - 1)];
                (
                    StatusCode::from_u16(r.status).unwrap(),
                    [("content-type", r.content_type), ("retry-after", "1")],
                    r.body.clone(),
                )
                    .into_response()
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Mock { base: format!("http://{addr}"), seen }
    }

    fn provider(base_url: &str, stream: bool) -> GeminiProvider {
        GeminiProvider::new(GeminiConfig {
            base_url: base_url.to_string(),
            api_key: Some("test-key".into()),
            stream,
            call_timeout: Duration::from_secs(5),
        })
        .unwrap()
    }

    fn req(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            model: "gemini-2.5-flash".into(),
            messages,
            tools: vec![],
            temperature: None,
            max_tokens: None,
            tool_choice: Default::default(),
        }
    }

    async fn run(p: &GeminiProvider, request: &ChatRequest) -> (ChatResponse, usize) {
        let mut deltas = 0;
        let policy = RetryPolicy { max_retries: 0, ..RetryPolicy::default() };
        let r = complete(p, request, &policy, &CancellationToken::new(), |_| deltas += 1, |_, _, _| {}).await.unwrap();
        (r, deltas)
    }

    async fn first_error(reply: Reply, stream: bool) -> ProviderError {
        let mock = serve(vec![reply]).await;
        let p = provider(&mock.base, stream);
        p.stream(req(vec![Message::user("hi")])).next().await.unwrap().unwrap_err()
    }

    const SIGNATURE_PREFIX: &str = "CpsCAdHtim8WOVxCrHLFwbK3h2vgGLuRTJq";

    #[tokio::test]
    async fn streams_text_then_a_function_call() {
        let mock = serve(vec![sse(fixture("stream_text_then_call.sse"))]).await;
        let p = provider(&mock.base, true);
        assert_eq!(p.name(), "gemini");
        let (r, deltas) = run(&p, &req(vec![Message::user("What is the weather in London?")])).await;
        assert_eq!(r.content, "I'll check the current weather in London.");
        assert_eq!(
            r.tool_calls,
            vec![ToolCall {
                id: "call_0".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"london"}"#.into()
            }]
        );
        assert_eq!(r.usage, Usage { input_tokens: 4210, output_tokens: 24 + 64, cached_tokens: 3072 });
        assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
        assert!(deltas >= 4, "{deltas}");

        let seen = mock.seen();
        assert_eq!(seen[0].path_and_query, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
        assert_eq!(seen[0].api_key.as_deref(), Some("test-key"));
    }

    #[tokio::test]
    async fn streams_plain_text_with_crlf_framing_and_repeated_stop() {
        let mock = serve(vec![sse(fixture("stream_text.sse"))]).await;
        let (r, _) =
            run(&provider(&mock.base, true), &req(vec![Message::user("Write a cute story about cats.")])).await;
        assert!(
            r.content.starts_with(
                "In the quaint, sunlit cottage nestled amidst a lush meadow, resided two feline companions"
            )
        );
        assert!(r.content.ends_with("Whiskers, other and for adventure stronger than ever."));
        assert!(r.tool_calls.is_empty());
        assert_eq!(r.finish_reason, Some(FinishReason::Stop));
        assert_eq!(r.usage, Usage::default());
    }

    #[tokio::test]
    async fn reads_a_non_streaming_function_call() {
        let mock = serve(vec![json_reply(200, fixture("generate_function_call.json"))]).await;
        let (r, _) = run(&provider(&mock.base, false), &req(vec![Message::user("weather?")])).await;
        assert_eq!(r.content, "");
        assert_eq!(
            r.tool_calls,
            vec![ToolCall {
                id: "call_0".into(),
                name: "get_weather".into(),
                arguments: r#"{"City":"New York"}"#.into()
            }]
        );
        assert_eq!(r.usage, Usage { input_tokens: 123, output_tokens: 6, cached_tokens: 0 });
        assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(mock.seen()[0].path_and_query, "/v1beta/models/gemini-2.5-flash:generateContent");
    }

    #[tokio::test]
    async fn reads_cached_token_usage() {
        let mock = serve(vec![json_reply(200, fixture("generate_cached_text.json"))]).await;
        let (r, _) = run(&provider(&mock.base, false), &req(vec![Message::user("summarize")])).await;
        assert!(r.content.starts_with("This is a transcript of the air-to-ground voice transmission"));
        assert!(r.content.contains("Neil Armstrong\u{2019}s famous first steps"));
        assert_eq!(r.usage, Usage { input_tokens: 323388, output_tokens: 397, cached_tokens: 323383 });
        assert_eq!(r.finish_reason, Some(FinishReason::Stop));
    }

    #[tokio::test]
    async fn parallel_calls_get_distinct_ids_and_indices() {
        // As recorded: Gemini 3 names its calls, and those names are kept.
        let mock = serve(vec![json_reply(200, fixture("generate_parallel_calls.json"))]).await;
        let (r, _) = run(&provider(&mock.base, false), &req(vec![Message::user("Translate 'good morning'")])).await;
        let got: Vec<(&str, &str, &str)> =
            r.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str())).collect();
        assert_eq!(
            got,
            vec![
                ("rgjcr7hc", "translator_es", r#"{"request":"good morning"}"#),
                ("cu6rg45q", "translator_fr", r#"{"request":"good morning"}"#)
            ]
        );
        assert_eq!(r.usage, Usage { input_tokens: 186, output_tokens: 34 + 129, cached_tokens: 0 });
        assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));

        // The same answer from a model that gives no ids: numbered per call, one index each.
        let mut body: Value = serde_json::from_str(&fixture("generate_parallel_calls.json")).unwrap();
        let parts = body["candidates"][0]["content"]["parts"].as_array_mut().unwrap();
        for part in parts.iter_mut() {
            part["functionCall"].as_object_mut().unwrap().remove("id");
        }
        let indexed: Vec<(usize, Option<String>)> = parse_response(&body.to_string())
            .unwrap()
            .into_iter()
            .filter_map(|d| match d {
                Delta::ToolCall { index, id, .. } => Some((index, id)),
                _ => None,
            })
            .collect();
        assert_eq!(indexed, vec![(0, Some("call_0".into())), (1, Some("call_1".into()))]);

        // Streamed one call per chunk: each functionCall part is a new call, counted across chunks.
        let mut first = body.clone();
        first["candidates"][0]["content"]["parts"].as_array_mut().unwrap().truncate(1);
        first["candidates"][0].as_object_mut().unwrap().remove("finishReason");
        let mut second = body.clone();
        second["candidates"][0]["content"]["parts"].as_array_mut().unwrap().remove(0);
        let mock = serve(vec![sse(format!("data: {first}\n\ndata: {second}\n\n"))]).await;
        let (r, _) = run(&provider(&mock.base, true), &req(vec![Message::user("Translate")])).await;
        let ids: Vec<(&str, &str)> = r.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str())).collect();
        assert_eq!(ids, vec![("call_0", "translator_es"), ("call_1", "translator_fr")]);
        assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    }

    fn schemars_style_schema() -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "CreateFileArgs",
            "type": "object",
            "properties": {
                "path": {"description": "Where to write.", "type": "string"},
                "content": {"type": ["string", "null"], "default": null},
                "mode": {"anyOf": [{"$ref": "#/$defs/Mode"}, {"type": "null"}]}
            },
            "required": ["path"],
            "additionalProperties": false,
            "$defs": {"Mode": {"type": "string", "enum": ["create", "overwrite"], "examples": ["create"]}}
        })
    }

    #[tokio::test]
    async fn outbound_body_threads_calls_results_and_schema() {
        let mock = serve(vec![sse(fixture("stream_text.sse"))]).await;
        let p = provider(&mock.base, true);
        let calls = vec![
            ToolCall { id: "call_0".into(), name: "readFile".into(), arguments: r#"{"path":"a.txt"}"#.into() },
            ToolCall { id: "call_1".into(), name: "runTests".into(), arguments: "{}".into() },
        ];
        let request = ChatRequest {
            model: "gemini-2.5-flash".into(),
            messages: vec![
                Message::system("You build software."),
                Message::user("Fix the bug."),
                Message::assistant_calls(Some("Looking first.".into()), calls),
                Message::tool_result("call_0", "readFile", r#"{"content":"hello"}"#),
                Message::tool_result("call_1", "runTests", "2 passed, 1 failed"),
            ],
            tools: vec![ToolSpec {
                name: "createFile".into(),
                description: "Create a file.".into(),
                parameters: schemars_style_schema(),
            }],
            temperature: Some(0.2),
            max_tokens: Some(1024),
            tool_choice: Default::default(),
        };
        run(&p, &request).await;
        let seen = mock.seen();
        assert_eq!(seen.len(), 1);
        let sent = &seen[0];
        assert_eq!(sent.path_and_query, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
        assert_eq!(sent.api_key.as_deref(), Some("test-key"));
        let b = &sent.body;
        assert_eq!(b["systemInstruction"], json!({"parts": [{"text": "You build software."}]}));
        assert_eq!(
            b["contents"],
            json!([
                {"role": "user", "parts": [{"text": "Fix the bug."}]},
                {"role": "model", "parts": [
                    {"text": "Looking first."},
                    {"functionCall": {"name": "readFile", "args": {"path": "a.txt"}}},
                    {"functionCall": {"name": "runTests", "args": {}}}
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "readFile", "response": {"content": "hello"}}},
                    {"functionResponse": {"name": "runTests", "response": {"result": "2 passed, 1 failed"}}}
                ]}
            ])
        );
        assert_eq!(
            b["tools"],
            json!([{"functionDeclarations": [{
                "name": "createFile",
                "description": "Create a file.",
                "parameters": {
                    "type": "object",
                    "description": "CreateFileArgs",
                    "properties": {
                        "path": {"type": "string", "description": "Where to write."},
                        "content": {"type": "string", "nullable": true},
                        "mode": {"type": "string", "enum": ["create", "overwrite"], "nullable": true}
                    },
                    "required": ["path"]
                }
            }]}])
        );
        assert_eq!(b["toolConfig"], json!({"functionCallingConfig": {"mode": "AUTO"}}));
        assert_eq!(b["generationConfig"]["maxOutputTokens"], 1024);
        assert!((b["generationConfig"]["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
        // What the public builder says is exactly what went out.
        assert_eq!(b, &request_body(&request));
    }

    #[tokio::test]
    async fn thought_signatures_come_back_on_replayed_calls() {
        let mock = serve(vec![sse(fixture("stream_text_then_call.sse"))]).await;
        let p = provider(&mock.base, true);
        let first = req(vec![Message::user("What is the weather in London?")]);
        let (r, _) = run(&p, &first).await;
        let mut messages = first.messages.clone();
        messages.push(Message::assistant_calls(Some(r.content.clone()), r.tool_calls.clone()));
        messages.push(Message::tool_result(&r.tool_calls[0].id, "get_weather", r#"{"weather_summary":"sunny"}"#));
        run(&p, &req(messages)).await;
        let replayed = &mock.seen()[1].body["contents"][1];
        assert_eq!(replayed["role"], "model");
        assert_eq!(replayed["parts"][1]["functionCall"], json!({"name": "get_weather", "args": {"city": "london"}}));
        assert!(replayed["parts"][1]["thoughtSignature"].as_str().unwrap().starts_with(SIGNATURE_PREFIX));
        // No signature is invented for Gemini 2.x when none was received.
        assert!(
            request_body(&req(vec![Message::assistant_calls(None, r.tool_calls)]))["contents"][0]["parts"][0]
                .get("thoughtSignature")
                .is_none()
        );
    }

    #[tokio::test]
    async fn rate_limit_uses_the_body_retry_delay() {
        let e = first_error(json_reply(429, fixture("error_429_retry_info.json")), true).await;
        assert!(
            matches!(&e, ProviderError::RateLimited { retry_after: Some(d), message } if *d == Duration::from_secs(21) && message.contains("RESOURCE_EXHAUSTED")),
            "{e:?}"
        );
    }

    #[tokio::test]
    async fn invalid_key_is_auth_even_as_400() {
        let e = first_error(json_reply(400, fixture("error_400_api_key_invalid.json")), true).await;
        assert!(matches!(&e, ProviderError::Auth(m) if m.contains("API key not valid")), "{e:?}");
        assert!(!e.is_retryable());
    }

    #[tokio::test]
    async fn overload_is_transient() {
        let e = first_error(json_reply(503, fixture("error_503_unavailable.json")), false).await;
        assert!(matches!(&e, ProviderError::Transient(m) if m.contains("overloaded")), "{e:?}");
        assert!(e.is_retryable());
    }

    #[tokio::test]
    async fn token_limit_missing_model_and_blocked_prompt() {
        let e = first_error(json_reply(400, fixture("error_400_token_limit.json")), true).await;
        assert!(matches!(e, ProviderError::ContextTooLong(_)), "{e:?}");
        let e = first_error(json_reply(404, fixture("error_404_model.json")), true).await;
        assert!(matches!(&e, ProviderError::BadRequest(m) if m.contains("check --base-url and --model")), "{e:?}");
        let e = first_error(json_reply(200, fixture("prompt_blocked.json")), false).await;
        assert!(matches!(&e, ProviderError::BadRequest(m) if m.contains("SAFETY")), "{e:?}");
        let e = first_error(json_reply(200, "<html>proxy error</html>".into()), false).await;
        assert!(matches!(e, ProviderError::Protocol(_)), "{e:?}");
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| json!(f)),
            "[a-z#/$]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            let key = prop_oneof![
                Just("type".to_string()),
                Just("properties".to_string()),
                Just("required".to_string()),
                Just("items".to_string()),
                Just("anyOf".to_string()),
                Just("allOf".to_string()),
                Just("$ref".to_string()),
                Just("enum".to_string()),
                Just("$defs".to_string()),
                "[a-z]{1,6}",
            ];
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((key, inner), 0..5).prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn parsing_and_schema_conversion_never_panic(parts in arb_json(), finish in arb_json(), usage in arb_json(), raw in ".*") {
            let chunk = json!({"candidates": [{"content": {"parts": parts}, "finishReason": finish}], "usageMetadata": usage});
            let mut parser = ResponseParser::new();
            for text in [chunk.to_string(), parts.to_string(), raw.clone()] {
                let _ = parser.parse_chunk(&text);
                let _ = parse_chunk(&text);
                let _ = parse_response(&text);
            }
            let _ = to_gemini_schema(&parts);
            let _ = to_gemini_schema(&json!({"type": "object", "properties": {"p": parts}, "$defs": {"x": usage}}));
        }
    }
}
