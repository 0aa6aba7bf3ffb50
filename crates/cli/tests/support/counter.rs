//! The counter app both end-to-end suites build: a buggy `increment`, its node:test tests
//! (red), and the fix (green).

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
