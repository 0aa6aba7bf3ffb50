//! What users of local OpenAI-compatible servers met, end to end through the real `wright`
//! binary: a llama-server whose context a prose answer filled (the overflow must end the build
//! FAILED, exit 1, never "provider unusable", exit 3), the answer cap taken from its `/props`,
//! and a failing OpenAI-compatible primary that must not be hammered before the fallback.
//! Only the model is scripted (see `support`); its answers use the real wire formats, and the
//! overflow body is llama-server's own, recorded.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use support::{MockLlm, OPENAI_KEY, Turn, Wire, assert_contract, wright, wright_in};

/// llama-server's answer to a request longer than its context (`-c 8192`), as recorded.
const OVERFLOW: &str = include_str!("../../provider/tests/fixtures/real/llama-server/overflow_whole.response.json");

const PAGE: &str = "<!DOCTYPE html>\n<html>\n<head>\n  <meta charset=\"utf-8\">\n  <title>Bakery</title>\n</head>\n<body>\n  <h1>Fresh bread every morning</h1>\n</body>\n</html>\n";

/// What llama-server's `/props` says about its context (trimmed).
fn props() -> Value {
    json!({"default_generation_settings": {"id": 0, "n_ctx": 8192, "params": {"n_predict": -1}}, "total_slots": 1, "build_info": "b1-0c1e570"})
}

/// A small model's answer in prose that goes on until the context is nearly full.
fn runaway_prose() -> String {
    "To build the bakery page I will first think about the layout, the colours and the fonts. ".repeat(350)
}

fn statuses(run: &support::Run) -> Vec<String> {
    run.of_type("status").iter().map(|e| e["message"].as_str().unwrap().to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_that_survives_compaction_fails_the_build_it_is_not_an_unusable_provider() {
    let mock =
        MockLlm::start_with_props(vec![Turn::text(&runaway_prose())], Turn::Status(400, OVERFLOW.into()), props())
            .await;
    let run = wright(&mock.base_url, "a landing page for my bakery", &["--template", "static"]).await;
    assert_eq!(run.code, 1, "FAILED, not 3; stderr: {}\n{}", run.stderr, run.stdout);
    assert!(!run.stderr.contains("could not be used"), "{}", run.stderr);
    assert_contract(&run);
    let complete = run.of_type("complete")[0];
    assert_eq!(complete["success"], false);
    let failed = run.of_type("phase").into_iter().find(|e| e["phase"] == "FAILED").unwrap();
    let reason = failed["message"].as_str().unwrap();
    assert!(reason.contains("context window") && reason.contains("exceeds the available context size"), "{reason}");

    let reqs = mock.requests();
    // The cap from /props: a quarter of 8192, on every call; said once.
    assert!(
        reqs.iter().all(|r| r["max_tokens"] == 2048),
        "{:?}",
        reqs.iter().map(|r| &r["max_tokens"]).collect::<Vec<_>>()
    );
    let said = statuses(&run).iter().filter(|s| s.contains("caps each answer at 2048 tokens")).count();
    assert_eq!(said, 1, "{:?}", statuses(&run));
    // The fix request overflowed; each retry was smaller, the prose clipped, until compaction
    // had tried all it may.
    let fixing: Vec<&Value> = reqs[1..].iter().collect();
    assert!(fixing.len() >= 2, "{}", fixing.len());
    let prose_of = |r: &Value| r["messages"][2]["content"].as_str().unwrap().to_string();
    assert_eq!(prose_of(fixing[0]), runaway_prose());
    assert!(prose_of(fixing[1]).contains("characters cut here to fit the context window"));
    assert!(prose_of(fixing[1]).starts_with("To build the bakery page"));
    let sizes: Vec<usize> = fixing.iter().map(|r| r["messages"].to_string().len()).collect();
    assert!(sizes.windows(2).all(|w| w[1] < w[0]), "{sizes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clipped_runaway_answer_lets_the_build_go_on() {
    let turns = vec![
        Turn::text(&runaway_prose()),
        Turn::Status(400, OVERFLOW.into()),
        Turn::calls(&[("createFile", json!({"path": "index.html", "content": PAGE}))]),
        Turn::text("The page is there now."),
    ];
    let mock = MockLlm::start_with_props(turns, Turn::text("All done."), props()).await;
    let run = wright(&mock.base_url, "a landing page for my bakery", &["--template", "static"]).await;
    assert_eq!(run.code, 0, "stderr: {}\n{}", run.stderr, run.stdout);
    assert_contract(&run);
    let reqs = mock.requests();
    let retried = reqs[2]["messages"][2]["content"].as_str().unwrap();
    assert!(retried.contains("characters cut here") && retried.len() < runaway_prose().len());
    assert!(statuses(&run).iter().any(|s| s.contains("clipped 1 long message")), "{:?}", statuses(&run));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_tokens_replaces_the_cap_from_the_server_and_zero_turns_it_off() {
    let turns =
        || vec![Turn::calls(&[("createFile", json!({"path": "index.html", "content": PAGE}))]), Turn::text("A page.")];
    for (flag, want) in [("300", json!(300)), ("0", Value::Null)] {
        let mock = MockLlm::start_with_props(turns(), Turn::text("All done."), props()).await;
        let run =
            wright(&mock.base_url, "a landing page for my bakery", &["--template", "static", "--max-tokens", flag])
                .await;
        assert_eq!(run.code, 0, "stderr: {}\n{}", run.stderr, run.stdout);
        let reqs = mock.requests();
        assert!(reqs.iter().all(|r| r["max_tokens"] == want), "--max-tokens {flag}: {:?}", reqs[0]["max_tokens"]);
        assert!(!statuses(&run).iter().any(|s| s.contains("caps each answer")));
    }
    // The same from wright.toml.
    let mock = MockLlm::start_with_props(turns(), Turn::text("All done."), props()).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wright.toml"), "max_tokens = 500\n").unwrap();
    let run =
        wright_in(dir, "openai", &mock.base_url, "a landing page for my bakery", &["--template", "static"], &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(mock.requests().iter().all(|r| r["max_tokens"] == 500));
    // A server without /props (Ollama, vLLM) gets no cap.
    let mock = MockLlm::start(turns()).await;
    let run = wright(&mock.base_url, "a landing page for my bakery", &["--template", "static"]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert!(mock.requests().iter().all(|r| r.get("max_tokens").is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primary_answering_500_is_asked_once_per_try_before_the_fallback_takes_over() {
    let down = r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}"#;
    let primary = MockLlm::start_wire(Wire::OpenAi, vec![], Turn::Status(500, down.into())).await;
    let backup = MockLlm::start_wire(
        Wire::OpenAi,
        vec![Turn::calls(&[("createFile", json!({"path": "index.html", "content": PAGE}))]), Turn::text("A page.")],
        Turn::text("All done."),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("wright.toml"),
        format!("fallback = [\"openai:backup-model@{}\"]\n", backup.base_url),
    )
    .unwrap();
    let run = wright_in(
        dir,
        "openai",
        &primary.base_url,
        "a landing page for my bakery",
        &["--template", "static"],
        &[("OPENAI_API_KEY", OPENAI_KEY)],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}\n{}", run.stderr, run.stdout);
    // The default retries (4) allow five tries; the breaker (threshold 3) moves the call to the
    // fallback after three, each a single streamed request, never asked again as a whole answer.
    let p = primary.requests();
    assert_eq!(p.len(), 3, "{p:?}");
    assert!(p.iter().all(|r| r["stream"] == true));
    assert_eq!(backup.requests().len(), 2, "the later call went straight to the fallback");
}
