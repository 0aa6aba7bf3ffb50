//! End to end through the real `wright` binary and a mock model server speaking the real
//! OpenAI wire. Files, processes, node's test runner and HTTP are all real.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use support::counter::*;
use support::{MockLlm, Turn, assert_contract, wright};

fn write_counter_app() -> Turn {
    Turn::calls(&counter_app_calls())
}

fn last_user_message(req: &Value) -> String {
    req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .unwrap()
}

async fn counter_build(extra: &[&str]) {
    let mock = MockLlm::start(counter_turns()).await;
    let run = wright(&mock.base_url, "make a counter app with a + button", extra).await;
    assert_counter_run(&run);
    assert!(
        run.of_type("usage").iter().all(|e| e["input_tokens"].as_u64().unwrap() > 1000 && e["cached_tokens"] == 512)
    );

    // The failure went back to the model as a user message naming the failing test.
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 6, "five build turns, then the lesson request");
    assert!(reqs[5]["tools"].as_array().is_none_or(|t| t.is_empty()), "the lesson call offers no tools");
    assert!(last_user_message(&reqs[5]).contains("the + button adds one"), "the lesson request shows the error");
    let fix = last_user_message(&reqs[2]);
    assert!(
        fix.contains("Failing tests") && fix.contains("the + button adds one") && fix.contains("counter.test.js"),
        "{fix}"
    );
    // Tool results were threaded back by call id, and the tools were offered.
    let second: &Vec<Value> = reqs[1]["messages"].as_array().unwrap();
    let tool_msgs: Vec<&Value> = second.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_msgs.len(), 7);
    assert_eq!(tool_msgs[0]["tool_call_id"], "call_1_0");
    assert_eq!(reqs[0]["tools"].as_array().unwrap().len(), 10);
    // The API key never reaches generated code's environment or the model.
    assert!(!serde_json::to_string(&reqs).unwrap().contains("sk-test-secret-key-123"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counter_app_red_then_green_streaming() {
    counter_build(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counter_app_red_then_green_non_streaming() {
    counter_build(&["--no-stream"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_calls_are_answered_and_the_build_recovers() {
    let mock = MockLlm::start(vec![
        Turn::raw_calls(&[
            ("createFile", "{\"path\": \"index.html\", \"content\": "),
            ("launchRocket", "{}"),
            ("createFile", "{\"path\": [\"index.html\"], \"content\": 5}"),
            ("readFile", "{\"path\": \"../../../etc/passwd\"}"),
        ]),
        Turn::calls(&fixed_app_calls()),
        Turn::text("Done."),
    ])
    .await;
    let run = wright(&mock.base_url, "make a counter app", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_contract(&run);
    // Published: an address named after the page's <title>; no description, so the request.
    let app = &run.of_type("complete")[0]["app"];
    assert_eq!((app["slug"].as_str(), app["url_path"].as_str()), (Some("counter"), Some("/apps/counter")), "{app}");
    assert_eq!((app["title"].as_str(), app["description"].as_str()), (Some("Counter"), Some("make a counter app")));
    let reqs = mock.requests();
    let results: Vec<Value> = reqs[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(results.len(), 4);
    assert!(results.iter().all(|r| r["ok"] == false));
    assert!(results[0]["error"].as_str().unwrap().contains("not valid JSON"));
    assert!(results[1]["error"].as_str().unwrap().contains("unknown tool `launchRocket`"));
    assert!(results[2]["error"].as_str().unwrap().contains("`path` must be a string"));
    assert!(results[3]["error"].as_str().unwrap().contains("outside the project folder"));
    let failed: Vec<&Value> = run.of_type("tool_result").into_iter().filter(|e| e["ok"] == false).collect();
    assert_eq!(failed.len(), 4);
    // The malformed arguments are still shown in the tool_call event, as text.
    assert!(run.of_type("tool_call")[0]["arguments"].is_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_repeats_itself_is_stopped() {
    let mock = MockLlm::start_with_fallback(vec![], Turn::calls(&[("readFile", json!({"path": "notes.txt"}))])).await;
    let run = wright(&mock.base_url, "make a counter app", &["--max-fix-attempts", "1"]).await;
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert_contract(&run);
    let stuck: Vec<&Value> = run
        .of_type("status")
        .into_iter()
        .filter(|e| e["message"].as_str().unwrap().contains("repeating itself"))
        .collect();
    assert_eq!(stuck.len(), 2, "one stop per phase");
    // Warned once (a user message), then stopped: 6 model calls per phase, 2 phases.
    assert_eq!(mock.requests().len(), 12);
    assert_eq!(run.of_type("complete")[0]["success"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_never_fixes_fails_after_exactly_three_attempts() {
    let mock = MockLlm::start(vec![write_counter_app(), Turn::text("Done.")]).await;
    // Fallback: claims to have fixed it, changes nothing.
    let run = wright(&mock.base_url, "make a counter app with a + button", &[]).await;
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert_contract(&run);
    assert_eq!(
        run.phases(),
        vec![
            "PLANNING:0",
            "GENERATING:0",
            "VERIFYING:0",
            "FIXING:1",
            "VERIFYING:1",
            "FIXING:2",
            "VERIFYING:2",
            "FIXING:3",
            "VERIFYING:3",
            "FAILED:3"
        ]
    );
    assert_eq!(run.of_type("complete")[0]["fix_attempts"], 3);
    assert_eq!(run.of_type("error").len(), 1);
    // The last attempt starts from a fresh context: system + one user message with the history.
    let reqs = mock.requests();
    let last = reqs.last().unwrap()["messages"].as_array().unwrap();
    assert_eq!(last.len(), 2, "{last:?}");
    let opening = last[1]["content"].as_str().unwrap();
    assert!(
        opening.contains("What failed before") && opening.contains("verification 1") && opening.contains("counter.js"),
        "{opening}"
    );
    // Files are kept for the person to look at.
    assert!(run.workspace().join("counter.js").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_provider_exits_3() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let run = wright(&format!("http://127.0.0.1:{port}/v1"), "make a counter app", &["--max-retries", "1"]).await;
    assert_eq!(run.code, 3, "stderr: {}", run.stderr);
    assert_contract(&run);
    assert!(run.stderr.contains("could not reach the provider"), "{}", run.stderr);
    assert!(run.of_type("status").iter().any(|e| e["message"].as_str().unwrap().contains("trying again")));
    // A beginner reads kind words; the technical reason is the error's detail.
    let error = &run.of_type("error")[0];
    assert!(error["message"].as_str().unwrap().starts_with("I'm having trouble reaching the AI model"), "{error}");
    assert!(error["detail"].as_str().unwrap().contains("could not reach the provider"), "{error}");
    let pt =
        wright(&format!("http://127.0.0.1:{port}/v1"), "make a counter app", &["--max-retries", "1", "--lang", "pt"])
            .await;
    let error = &pt.of_type("error")[0];
    assert!(error["message"].as_str().unwrap().starts_with("Estou com dificuldade para falar com o modelo"), "{error}");
    assert!(error["detail"].as_str().unwrap().contains("could not reach the provider"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_key_exits_3_without_retrying() {
    let body = json!({"error": {"message": "Incorrect API key provided: sk-test***123.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}).to_string();
    let mock = MockLlm::start_with_fallback(vec![], Turn::Status(401, body)).await;
    let run = wright(&mock.base_url, "make a counter app", &[]).await;
    assert_eq!(run.code, 3, "stderr: {}", run.stderr);
    assert!(run.stderr.contains("credentials") && run.stderr.contains("Incorrect API key"), "{}", run.stderr);
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limited_call_is_retried_and_the_build_goes_on() {
    let mock = MockLlm::start(vec![
        Turn::Status(429, json!({"error": {"message": "Rate limit reached", "type": "requests"}}).to_string()),
        Turn::Status(503, "upstream overloaded".into()),
        Turn::calls(&[("createFile", json!({"path": "index.html", "content": INDEX_HTML.replace("<script src=\"counter.js\"></script>\n  <script src=\"app.js\"></script>\n", "").replace("<link rel=\"stylesheet\" href=\"styles.css\">\n", "")}))]),
        Turn::text("A static page."),
    ])
    .await;
    let run = wright(&mock.base_url, "a landing page for my bakery", &["--template", "static"]).await;
    assert_eq!(run.code, 0, "stderr: {}\n{}", run.stderr, run.stdout);
    assert_eq!(mock.requests().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_build_timeout_kills_running_commands_and_still_completes() {
    let mock = MockLlm::start(vec![Turn::calls(&[("runCommand", json!({"command": "sleep", "args": ["60"]}))])]).await;
    let started = std::time::Instant::now();
    let run = wright(&mock.base_url, "make a counter app", &["--timeout", "2"]).await;
    assert_eq!(run.code, 1);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_contract(&run);
    let failed = run.of_type("phase").into_iter().find(|e| e["phase"] == "FAILED").unwrap().clone();
    assert!(failed["message"].as_str().unwrap().contains("ran out of time"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_commands_and_template_checks_are_part_of_verification() {
    let broken_html =
        "<!DOCTYPE html>\n<html><body>\n<div><p>hi</div>\n<script src=\"missing.js\"></script>\n</body></html>\n";
    let mock = MockLlm::start(vec![
        Turn::calls(&[("createFile", json!({"path": "index.html", "content": broken_html}))]),
        Turn::text("ok"),
        Turn::calls(&[
            (
                "createFile",
                json!({"path": "index.html", "content": "<!DOCTYPE html>\n<html><body><p>hi</p></body></html>\n"}),
            ),
            ("createFile", json!({"path": "READY", "content": "yes"})),
        ]),
        Turn::text("fixed"),
    ])
    .await;
    let run = wright(&mock.base_url, "a landing page", &["--template", "static", "--check", "test -f READY"]).await;
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, run.stdout);
    let detected = run.of_type("error_detected");
    let kinds: Vec<&str> = detected.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    // The browser (a test requirement) also sees the page ask for the missing script.
    assert_eq!(kinds, vec!["template_check", "runtime", "check_failed"]);
    assert_eq!(detected[1]["file"], "missing.js", "{:?}", detected[1]);
    let fix = last_user_message(&mock.requests()[2]);
    assert!(fix.contains("missing.js") && fix.contains("test -f READY"), "{fix}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_errors_exit_2() {
    let bin = env!("CARGO_BIN_EXE_wright");
    let data = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(bin)
        .args(["run", "x", "--template", "nope", "--data-dir"])
        .arg(data.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown template"));
    assert!(std::fs::read_dir(data.path()).unwrap().next().is_none(), "a usage error creates nothing");
    let out = std::process::Command::new(bin).args(["run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = std::process::Command::new(bin).args(["--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Examples"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn human_mode_narrates_in_plain_words_in_english_and_portuguese() {
    for (lang, expect) in [
        (
            "en",
            [
                "📋 Planning an interactive web app.",
                "Writing the code",
                "Tests: 0 passed, 2 failed",
                "Fixing what went wrong (1/3)",
                "Fixed!",
                "Done!",
            ],
        ),
        (
            "pt",
            [
                "📋 Planejando um app web interativo.",
                "Escrevendo o código",
                "Testes: 0 passaram, 2 falharam",
                "Corrigindo o que deu errado (1/3)",
                "Corrigido!",
                "Pronto!",
            ],
        ),
    ] {
        let mock = MockLlm::start(vec![
            write_counter_app(),
            Turn::text("I made a counter app."),
            Turn::calls(&[("updateFile", json!({"path": "counter.js", "content": COUNTER_FIXED}))]),
            Turn::text("Fixed."),
        ])
        .await;
        let run =
            wright(&mock.base_url, "make a counter app with a + button", &["--events", "human", "--lang", lang]).await;
        assert_eq!(run.code, 0, "{}", run.stderr);
        for e in expect {
            assert!(run.stdout.contains(e), "missing {e:?} in:\n{}", run.stdout);
        }
        assert!(run.stdout.contains(" tests/counter.test.js ("), "{}", run.stdout);
        // The app's address, and where to open it.
        assert!(run.stdout.contains("/apps/counter — ") && run.stdout.contains("http://127.0.0.1:8787/apps/counter"));
        // The system prompt asks for narration in the chosen language, and for the page's names.
        let system = mock.requests()[0]["messages"][0]["content"].as_str().unwrap().to_string();
        assert_eq!(system.contains("Brazilian Portuguese"), lang == "pt");
        assert!(system.contains("<meta name=\"description\""), "{system}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_kills_running_commands_and_still_completes() {
    let mock = MockLlm::start(vec![Turn::calls(&[(
        "runCommand",
        json!({"command": "sh", "args": ["-c", "(sleep 3; touch left-behind) & sleep 60"]}),
    )])])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args(["run", "make a counter app", "--events", "jsonl", "--provider", "openai", "--base-url", &mock.base_url])
        .arg("--workspace")
        .arg(dir.path().join("ws"))
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .env("OPENAI_API_KEY", "sk-x")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the command is running, then press Ctrl-C.
    let started = std::time::Instant::now();
    while mock.requests().is_empty() && started.elapsed() < std::time::Duration::from_secs(10) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    let pid = child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()).await.unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let last = events.last().unwrap();
    assert_eq!(last["type"], "complete");
    assert_eq!(last["success"], false);
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "phase" && e["phase"] == "FAILED" && e["message"] == "The build was stopped.")
    );
    // The command's background child died with it.
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    assert!(!dir.path().join("ws/left-behind").exists());
}
