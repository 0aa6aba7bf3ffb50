//! The page's own modules under node's test runner: the same files the page loads, laid out as
//! the server serves them (`words.js` made from the shared tables), beside a copy of the tests.
//! `narrate.test.mjs` covers the build narration; `chat.test.mjs` the chat's Markdown renderer,
//! SSE reader and parts; `assistant.test.mjs` the in-app assistant's page-free helpers (the
//! describe tree's lines, snapshot diffs, candidates, a round of tool calls); `limits.test.mjs`
//! the words of each route's hourly limit by its button.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

/// Run one of `tests/*.test.mjs` against the embedded assets; node's report.
fn node_tests(file: &str) -> String {
    let root = tempfile::tempdir().unwrap();
    let (assets, tests) = (root.path().join("assets"), root.path().join("tests"));
    std::fs::create_dir_all(&assets).unwrap();
    std::fs::create_dir_all(&tests).unwrap();
    for a in wright_webui::ASSETS {
        std::fs::write(assets.join(a.name), a.body).unwrap();
    }
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    std::fs::copy(here.join(file), tests.join(file)).unwrap();
    let out = std::process::Command::new("node")
        .args(["--test", "--test-reporter=spec", file])
        .current_dir(&tests)
        .output()
        .expect("these tests need Node.js (cargo xtask setup installs it)");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn narration_passes_its_node_tests() {
    let text = node_tests("narrate.test.mjs");
    assert!(text.contains("pass 13") && text.contains("fail 0"), "{text}");
}

#[test]
fn route_limits_words_pass_their_node_tests() {
    let text = node_tests("limits.test.mjs");
    assert!(text.contains("pass 3") && text.contains("fail 0"), "{text}");
}

#[test]
fn markdown_and_sse_pass_their_node_tests() {
    let text = node_tests("chat.test.mjs");
    assert!(text.contains("pass 9") && text.contains("fail 0"), "{text}");
}

#[test]
fn the_assistant_helpers_pass_their_node_tests() {
    let text = node_tests("assistant.test.mjs");
    assert!(text.contains("pass 11") && text.contains("fail 0"), "{text}");
}
