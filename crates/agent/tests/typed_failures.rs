//! Verification hands the fix loop typed failures: a failing `node --test` test arrives as a
//! `TestFailure` whose location names the test file and line, and a broken page as webcheck
//! `Problem`s with their severity; diagnosis and the fix prompt are made from those values.
//! Real `node` processes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_agent::verify::{BrowserCheck, FailureKind};
use wright_agent::{Template, verify};
use wright_events::{Emitter, MemorySink};
use wright_sandbox::{ProcessRunner, Workspace, WorkspaceLimits};
use wright_testreport::Location;
use wright_tools::{ExecConfig, ToolContext};
use wright_webcheck::Severity;

const SUM: &str = "exports.sum = (a, b) => a - b;\n";
const TEST: &str = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { sum } = require('../src/sum.js');\n\ntest('adds two numbers', () => {\n  assert.strictEqual(sum(2, 3), 5);\n});\n";
const PAGE: &str = "<html><head><title>Sum</title></head><body><div><p>sum</p></body></html>\n";

#[tokio::test]
async fn a_failing_tests_file_and_line_reach_the_fix_loop_as_values() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path().join("ws"), WorkspaceLimits::default()).unwrap();
    let ctx = ToolContext {
        workspace: ws,
        runner: Arc::new(ProcessRunner::default()),
        emitter: Emitter::new("t", vec![Arc::new(MemorySink::new())]),
        cancel: CancellationToken::new(),
        exec: ExecConfig::for_build(&dir.path().join("home"), &dir.path().join("tmp")).unwrap(),
    };
    for (path, text) in [
        ("package.json", r#"{ "name": "sum", "version": "1.0.0", "scripts": { "test": "node --test" } }"#),
        ("src/sum.js", SUM),
        ("tests/sum.test.js", TEST),
        ("index.html", PAGE),
    ] {
        ctx.workspace.write(path, text.as_bytes()).unwrap();
    }
    let off = wright_browser::BrowserSettings { mode: wright_browser::BrowserMode::Off, ..Default::default() };
    let v = verify(&ctx, Template::Auto, &[], 0, &BrowserCheck { settings: &off, screenshot: None }).await;

    let tests = v.failures.iter().find(|f| f.kind == FailureKind::TestFailure).expect("a test failure");
    assert_eq!(tests.tests.len(), 1, "{tests:#?}");
    assert_eq!(tests.tests[0].test, "adds two numbers");
    let place = tests.tests[0].place().expect("the failing test's place");
    // Where the test is declared; the failing line (6) is in its error text.
    assert_eq!(place, Location { file: "tests/sum.test.js".into(), line: Some(5), column: Some(1) });

    let page = v.failures.iter().find(|f| f.kind == FailureKind::TemplateCheck).expect("page problems");
    assert!(page.problems.iter().any(|p| p.severity == Severity::Error && p.line.is_some()), "{page:#?}");
    let warning = page.problems.iter().find(|p| p.severity == Severity::Warning).expect("the doctype warning");
    assert!(!warning.message.starts_with("warning: "), "{}", warning.message);

    let diagnoses = wright_agent::diagnose::diagnose(&v.failures);
    let d = diagnoses.iter().find(|d| d.file.as_deref() == Some("tests/sum.test.js")).expect("{diagnoses:#?}");
    assert_eq!(d.line, Some(6), "{d:?}");

    let prompt = wright_agent::prompts::fix_message(&v.failures, 1, 3);
    assert!(prompt.contains("- adds two numbers (at tests/sum.test.js:5:1):"), "{prompt}");
    assert!(prompt.contains("- index.html:1: warning: missing `<!DOCTYPE html>`"), "{prompt}");
}
