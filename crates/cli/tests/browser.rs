//! The browser check inside a real build: the real `wright` binary, a scripted model on the
//! real OpenAI wire, Debian's real Chromium in wright's real sandbox.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::json;
use support::{MockLlm, Turn, assert_contract, wright};

const PAGE: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Countdown</title></head>\n\
<body>\n  <h1>Countdown</h1>\n  <p id=\"left\">10</p>\n  <button id=\"start\">Start</button>\n  <script src=\"app.js\"></script>\n</body>\n</html>\n";
/// Throws on load: `#count` does not exist (the page says `#left`).
const CRASHES: &str = "const start = document.getElementById('start');\ndocument.getElementById('count').textContent = '10';\nstart.addEventListener('click', () => {});\n";
const FIXED: &str = "const start = document.getElementById('start');\nconst left = document.getElementById('left');\nstart.addEventListener('click', () => { left.textContent = String(Number(left.textContent) - 1); });\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_crashes_on_load_is_caught_fixed_and_republished_with_a_screenshot() {
    let mock = MockLlm::start_with_fallback(
        vec![
            Turn::calls(&[
                ("createFile", json!({"path": "index.html", "content": PAGE})),
                ("createFile", json!({"path": "app.js", "content": CRASHES})),
            ]),
            Turn::text("A countdown page."),
            Turn::calls(&[("updateFile", json!({"path": "app.js", "content": FIXED}))]),
            Turn::text("Fixed the element id."),
        ],
        Turn::text(
            &json!({
                "trigger": "element looked up by id",
                "triggerType": "pattern",
                "lesson": "When a script looks up an element by id, use the id the page defines.",
                "libraries": [],
                "tags": ["dom", "getElementById"],
                "errorPatterns": ["Cannot set properties of null"]
            })
            .to_string(),
        ),
    )
    .await;
    let run =
        wright(&mock.base_url, "a countdown timer page", &["--template", "static", "--browser-check", "on"]).await;
    assert_eq!(run.code, 0, "stderr: {}\nstdout: {}", run.stderr, run.stdout);
    assert_contract(&run);

    let detected = run.of_type("error_detected");
    let runtime: Vec<_> = detected.iter().filter(|e| e["kind"] == "runtime").collect();
    assert_eq!(runtime.len(), 1, "{detected:#?}");
    assert_eq!(
        (runtime[0]["file"].as_str(), runtime[0]["line"].as_u64()),
        (Some("app.js"), Some(2)),
        "{:?}",
        runtime[0]
    );
    assert!(runtime[0]["error"].as_str().unwrap().contains("Cannot set properties of null"), "{:?}", runtime[0]);

    let checks = run.of_type("browser_check");
    assert_eq!(checks.len(), 2, "one per verification: {checks:#?}");
    assert_eq!((checks[0]["exceptions"].as_u64(), checks[1]["exceptions"].as_u64()), (Some(1), Some(0)));
    assert_eq!(checks[1]["outcome"], "checked");
    assert!(run.phases().ends_with(&["PUBLISHED:1".to_string()]), "{:?}", run.phases());

    // The fix prompt carried the browser's error like a failing test.
    let fix = serde_json::to_string(&mock.requests()[2]["messages"]).unwrap();
    assert!(fix.contains("Errors in the browser") && fix.contains("app.js:2"), "{fix}");

    // The screenshot of the final page is a PNG of the viewport, outside the project.
    let shot = checks[1]["screenshot"].as_str().unwrap();
    let png = std::fs::read(shot).unwrap();
    assert_eq!(wright_browser::png_size(&png), Some((1280, 800)));
    assert!(!std::path::Path::new(shot).starts_with(run.workspace()));

    // `builds show` names it.
    let build = run.events[0]["build"].as_str().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args(["builds", "show", build, "--data-dir"])
        .arg(run.dir.path().join("data"))
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("screenshot") && shown.contains(shot), "{shown}");
    // The build report links it.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args(["builds", "show", build, "--json", "--data-dir"])
        .arg(run.dir.path().join("data"))
        .output()
        .unwrap();
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let report = record["build"]["report"].as_str().unwrap();
    assert!(report.contains(&format!("## In the browser\nScreenshot of the page as last checked: {shot}")), "{report}");

    // LEARNING learns from the runtime error like from any other: the note model saw the
    // browser's error, and the lesson is stored.
    assert_eq!(run.of_type("learning").len(), 1, "{:?}", run.phases());
    let learn_request = serde_json::to_string(&mock.requests().last().unwrap()["messages"]).unwrap();
    assert!(learn_request.contains("Cannot set properties of null"), "{learn_request}");
    let notes = std::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args(["notes", "list", "--json", "--data-dir"])
        .arg(run.dir.path().join("data"))
        .output()
        .unwrap();
    let notes = String::from_utf8_lossy(&notes.stdout);
    assert!(notes.contains("use the id the page defines"), "{notes}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_check_off_leaves_a_crashing_page_to_the_other_checks() {
    let mock = MockLlm::start_with_fallback(
        vec![Turn::calls(&[
            ("createFile", json!({"path": "index.html", "content": PAGE})),
            ("createFile", json!({"path": "app.js", "content": CRASHES})),
        ])],
        Turn::text("Done."),
    )
    .await;
    let run =
        wright(&mock.base_url, "a countdown timer page", &["--template", "static", "--browser-check", "off"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.of_type("browser_check").is_empty());
    // Not opened, and said so, but no alarm: switching the check off was the user's choice.
    let complete = run.of_type("complete")[0];
    assert_eq!(complete["browser_checked"], false, "{complete}");
    assert!(complete.get("browser_reason").is_none(), "{complete}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_check_on_without_a_chromium_is_refused_before_the_build() {
    let mock = MockLlm::start(vec![]).await;
    let run = wright(
        &mock.base_url,
        "a countdown timer page",
        &["--template", "static", "--browser-check", "on", "--chromium", "/nowhere/chromium"],
    )
    .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("/nowhere/chromium") && run.stderr.contains("apt-get install chromium"),
        "{}",
        run.stderr
    );
    assert!(mock.requests().is_empty());
}
