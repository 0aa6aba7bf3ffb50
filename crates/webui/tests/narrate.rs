//! The web UI's narration module (`assets/narrate.js`) under node's own test runner: the same
//! file the page loads, run for real.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

#[test]
fn narration_passes_its_node_tests() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let out = std::process::Command::new("node")
        .args(["--test", "--test-reporter=spec", "narrate.test.mjs"])
        .current_dir(&dir)
        .output()
        .expect("these tests need Node.js (cargo xtask setup installs it)");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("pass 5") && text.contains("fail 0"), "{text}");
}
