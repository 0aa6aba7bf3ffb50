//! `wright doctor --provider openai --base-url URL`: the endpoint check, against a local server
//! speaking the OpenAI wire (only the model's answers are scripted).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use support::{HOST_ENV, MockLlm, Turn};

async fn doctor(base_url: &str, extra: &[&str]) -> (i32, String) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.args(["doctor", "--provider", "openai", "--base-url", base_url, "--model", "mock-model"]).args(extra);
    for k in HOST_ENV {
        cmd.env_remove(k);
    }
    let out = cmd.output().await.unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_calls_tools_both_ways_is_usable() {
    let call = Turn::calls(&[("announceStatus", json!({"message": "ready"}))]);
    let mock = MockLlm::start(vec![call.clone(), call]).await;
    let (_, out) = doctor(&mock.base_url, &["--json"]).await;
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    let e = &v["endpoint"];
    assert_eq!(e["usable"], true, "{e}");
    let checks = e["checks"].as_array().unwrap();
    let by_name = |n: &str| checks.iter().find(|c| c["name"] == n).unwrap_or_else(|| panic!("{n}: {e}"));
    assert_eq!(by_name("tool call, streamed")["ok"], true);
    assert_eq!(by_name("tool call, whole")["ok"], true);
    assert!(by_name("tool call, whole")["text"].as_str().unwrap().contains("announceStatus"));
    let sent = mock.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0]["stream"], true);
    assert!(sent[1].get("stream").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_calls_tools_is_named_unusable_with_the_reason() {
    let mock = MockLlm::start_with_fallback(vec![], Turn::text("Hello! How can I help?")).await;
    let (code, out) = doctor(&mock.base_url, &[]).await;
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("answered in text, without a tool call"), "{out}");
    assert!(out.contains("no tool call came back"), "{out}");

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (code, out) = doctor(&format!("http://127.0.0.1:{port}/v1"), &[]).await;
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("nothing answers there"), "{out}");
}
