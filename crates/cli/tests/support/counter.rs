//! The counter app both end-to-end suites build: a buggy `increment`, its node:test tests
//! (red), and the fix (green).

use super::{Run, Turn, assert_contract};
use serde_json::{Value, json};

pub const PACKAGE_JSON: &str = r#"{ "name": "counter", "version": "1.0.0", "scripts": { "test": "node --test" } }"#;
pub const COUNTER_BUGGY: &str = "function increment(count) {\n  return count - 1;\n}\nif (typeof module !== 'undefined') module.exports = { increment };\n";
pub const COUNTER_FIXED: &str = "function increment(count) {\n  return count + 1;\n}\nif (typeof module !== 'undefined') module.exports = { increment };\n";
pub const COUNTER_TEST: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { increment } = require('../counter.js');\n\ntest('the + button adds one', () => {\n  assert.strictEqual(increment(0), 1);\n});\n\ntest('counting keeps going', () => {\n  assert.strictEqual(increment(increment(0)), 2);\n});\n";
pub const INDEX_HTML: &str = "<!DOCTYPE html>\n<html>\n<head>\n  <meta charset=\"utf-8\">\n  <title>Counter</title>\n  <link rel=\"stylesheet\" href=\"styles.css\">\n</head>\n<body>\n  <h1 id=\"count\">0</h1>\n  <button id=\"plus\">+</button>\n  <script src=\"counter.js\"></script>\n  <script src=\"app.js\"></script>\n</body>\n</html>\n";
pub const APP_JS: &str = "let count = 0;\ndocument.getElementById('plus').addEventListener('click', () => {\n  count = increment(count);\n  document.getElementById('count').textContent = count;\n});\n";

/// The tool calls of the first turn, in order, as `(name, arguments)`.
pub fn counter_app_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("announceStatus", json!({"message": "Creating your counter app...", "type": "info"})),
        ("createFile", json!({"path": "package.json", "content": PACKAGE_JSON})),
        ("createFile", json!({"path": "counter.js", "content": COUNTER_BUGGY})),
        ("createFile", json!({"path": "tests/counter.test.js", "content": COUNTER_TEST})),
        ("createFile", json!({"path": "index.html", "content": INDEX_HTML})),
        ("createFile", json!({"path": "styles.css", "content": "body { font-family: sans-serif; }\n"})),
        ("createFile", json!({"path": "app.js", "content": APP_JS})),
    ]
}

/// The counter app's first turn, written correctly (what a model that read a lesson does).
pub fn fixed_app_calls() -> Vec<(&'static str, Value)> {
    counter_app_calls()
        .into_iter()
        .map(|(n, a)| {
            if a["content"] == COUNTER_BUGGY {
                (n, json!({"path": "counter.js", "content": COUNTER_FIXED}))
            } else {
                (n, a)
            }
        })
        .collect()
}

/// Write a buggy counter, say done, then (after wright's verification fails) read, fix, re-test.
pub fn counter_turns() -> Vec<Turn> {
    vec![
        Turn::calls(&counter_app_calls()),
        Turn::text("I made a counter app."),
        Turn::calls(&[("readFile", json!({"path": "counter.js"}))]),
        Turn::calls(&[
            ("updateFile", json!({"path": "counter.js", "content": COUNTER_FIXED})),
            ("runTests", json!({})),
        ]),
        Turn::text("Fixed: the + button now adds one."),
    ]
}

/// The event stream of the counter build, whatever the wire: red, one fix, green.
pub fn assert_counter_run(run: &Run) {
    assert_eq!(run.code, 0, "stderr: {}\nstdout: {}", run.stderr, run.stdout);
    assert_contract(run);
    assert_eq!(
        run.phases(),
        vec!["PLANNING:0", "GENERATING:0", "VERIFYING:0", "FIXING:1", "VERIFYING:1", "LEARNING:1", "PUBLISHED:1"]
    );
    let tests = run.of_type("tests_finished");
    assert_eq!(tests[0]["failed"], 2);
    assert_eq!(tests[0]["passed"], 0);
    assert_eq!(tests[0]["errors"][0]["test"], "the + button adds one");
    assert!(tests[0]["errors"][0]["location"].as_str().unwrap().contains("counter.test.js"));
    assert_eq!(tests.last().unwrap()["passed"], 2);
    assert_eq!(tests.last().unwrap()["failed"], 0);
    assert_eq!(run.of_type("error_detected").len(), 1);
    assert_eq!(run.of_type("error_detected")[0]["kind"], "test_failure");
    assert_eq!(run.of_type("error_fixed").len(), 1);
    assert_eq!(run.of_type("file_written").len(), 7);
    let calls: Vec<&str> = run.of_type("tool_call").iter().map(|e| e["name"].as_str().unwrap()).collect();
    let mut expected: Vec<&str> = counter_app_calls().iter().map(|(n, _)| *n).collect();
    expected.extend(["readFile", "updateFile", "runTests"]);
    assert_eq!(calls, expected);
    assert!(run.of_type("tool_result").iter().all(|e| e["ok"] == true), "{:?}", run.of_type("tool_result"));
    assert!(run.of_type("status").iter().any(|e| e["message"] == "Creating your counter app..."));
    assert!(run.of_type("status").iter().any(|e| e["message"] == "I made a counter app."));

    let complete = run.of_type("complete")[0];
    assert_eq!(complete["success"], true);
    assert_eq!(complete["fix_attempts"], 1);
    assert_eq!(complete["iterations"], 6, "five build turns and the lesson call");
    let files: Vec<&str> = complete["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert_eq!(
        files,
        vec!["app.js", "counter.js", "index.html", "package.json", "styles.css", "tests/counter.test.js"]
    );
    assert_eq!(std::fs::read_to_string(run.workspace().join("counter.js")).unwrap(), COUNTER_FIXED);
}
