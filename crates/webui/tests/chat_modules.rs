//! The chat's Markdown renderer and SSE reader (`assets/markdown.js`, `assets/sse.js`) under
//! node's own test runner: the same files the page loads, laid out as the server serves them,
//! beside a copy of the tests.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

#[test]
fn markdown_and_sse_pass_their_node_tests() {
    let root = tempfile::tempdir().unwrap();
    let (assets, tests) = (root.path().join("assets"), root.path().join("tests"));
    std::fs::create_dir_all(&assets).unwrap();
    std::fs::create_dir_all(&tests).unwrap();
    for a in wright_webui::ASSETS {
        std::fs::write(assets.join(a.name), a.body).unwrap();
    }
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    std::fs::copy(here.join("chat.test.mjs"), tests.join("chat.test.mjs")).unwrap();
    let out = std::process::Command::new("node")
        .args(["--test", "--test-reporter=spec", "chat.test.mjs"])
        .current_dir(&tests)
        .output()
        .expect("these tests need Node.js (cargo xtask setup installs it)");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("pass 9") && text.contains("fail 0"), "{text}");
}
