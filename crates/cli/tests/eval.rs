//! `wright eval` through the real binary: real builds in the sandbox, a scripted model that
//! answers by the model name each variant sets (the only scripted part).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::Value;
use support::eval_model::{SUITE, scripted_model};
use support::{HOST_ENV, MockLlm, key_for};

async fn eval(dir: &std::path::Path, base_url: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.arg("eval").args(args);
    cmd.args(["--provider", "openai", "--base-url", base_url, "--model", "mock-model", "--browser-check", "off"]);
    cmd.arg("--data-dir").arg(dir.join("data")).current_dir(dir);
    for k in HOST_ENV {
        cmd.env_remove(k);
    }
    let (k, v) = key_for("openai").unwrap();
    cmd.env(k, v);
    cmd.output().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_variant_that_always_needs_a_fix_is_flagged_worse_with_its_interval() {
    let mock = MockLlm::start_with_fallback(vec![], scripted_model()).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.toml"), SUITE).unwrap();
    let html = dir.path().join("report.html");
    let out = eval(
        dir.path(),
        &mock.base_url,
        &["suite.toml", "--variants", "strong,weak", "--repeats", "2", "--json", "--html", html.to_str().unwrap()],
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r["suite"], "pages");
    assert_eq!(r["builds"].as_array().unwrap().len(), 12, "3 requests × 2 repeats × 2 variants");
    let c = &r["comparison"];
    assert_eq!(c["pairs"], 6);
    // Both publish every time; only the weak one needs its fix.
    assert_eq!(c["a"]["published"]["successes"], 6);
    assert_eq!(c["b"]["published"]["successes"], 6);
    assert_eq!(c["a"]["first_try"]["successes"], 6);
    assert_eq!(c["b"]["first_try"]["successes"], 0);
    let first = c["rates"].as_array().unwrap().iter().find(|t| t["metric"] == "first_try").unwrap();
    assert_eq!((first["a_only"].as_u64(), first["b_only"].as_u64()), (Some(6), Some(0)));
    assert!((first["p_value"].as_f64().unwrap() - 0.03125).abs() < 1e-12, "2 · 0.5^6");
    assert_eq!(first["b_better"], false);
    // Its interval is in the verdict: 0/6 is 0%–39% by Wilson's interval.
    let headline = c["headline"].as_str().unwrap();
    assert_eq!(headline, "weak is worse than strong on first-try success: 0/6 (0%–39%) vs 6/6 (61%–100%), p = 0.031");
    let fixes = c["amounts"].as_array().unwrap().iter().find(|t| t["metric"] == "fix_attempts").unwrap();
    assert_eq!((fixes["low"].as_f64(), fixes["high"].as_f64()), (Some(1.0), Some(1.0)));
    // Each build was a real build under its variant, announced as such and stored.
    let weak_builds: Vec<&Value> = r["builds"].as_array().unwrap().iter().filter(|b| b["variant"] == "weak").collect();
    assert!(weak_builds.iter().all(|b| b["outcome"]["fix_attempts"] == 1 && b["outcome"]["published"] == true));
    let reqs = mock.requests();
    assert!(reqs.iter().any(|q| q["model"] == "weak") && reqs.iter().any(|q| q["model"] == "strong"));
    assert!(reqs.iter().all(|q| q["model"] != "mock-model"), "every call used its variant's model");
    let id = weak_builds[0]["build"].as_str().unwrap();
    let shown = std::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args(["builds", "events", id, "--data-dir"])
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    let events = String::from_utf8_lossy(&shown.stdout);
    assert!(events.contains("experiment_assigned") && events.contains("eval:pages"), "{events}");
    // The HTML report stands alone: its charts are inline and it fetches nothing.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("first-try success: 0/6"), "{page}");
    assert!(!page.contains("http://") && !page.contains("https://") || page.contains("http://www.w3.org/2000/svg"));
    assert!(!page.contains("src=") && !page.contains("<link"), "nothing to fetch");

    // The table says it in plain words; with three pairs the same gap is not yet shown.
    let mock2 = MockLlm::start_with_fallback(vec![], scripted_model()).await;
    let out = eval(dir.path(), &mock2.base_url, &["suite.toml", "--variants", "strong,weak"]).await;
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}");
    assert!(
        table.contains("verdict: No difference shown between weak and strong on first-try success: 0/3 (0%–56%) vs 3/3 (44%–100%), p = 0.250"),
        "{table}"
    );
    assert!(table.contains("weak is worse than strong on fix attempts: +1.00 per build"), "{table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_suite_or_variant_is_a_usage_error_before_anything_is_built() {
    let mock = MockLlm::start_with_fallback(vec![], scripted_model()).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.toml"), SUITE).unwrap();
    std::fs::write(dir.path().join("bad.jsonl"), "{\"prompt\": \"ok\"}\n{\"prompt\": 3}\n").unwrap();
    let out = eval(dir.path(), &mock.base_url, &["bad.jsonl", "--variants", "strong,weak"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = eval(dir.path(), &mock.base_url, &["suite.toml", "--variants", "strong,huge"]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no variant `huge`") && err.contains("strong, weak"), "{err}");
    assert!(mock.requests().is_empty(), "nothing was built");
}
