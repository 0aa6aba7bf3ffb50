//! runTests: find the project's test runner, run it, and read its machine-readable report.
//!
//! The same function serves the model's `runTests` tool and wright's own verification, so
//! the model and the verdict always see the same numbers.

use crate::{Tool, ToolContext, ToolError, ToolSuccess, decode, exec::run_logged, schema::schema_for};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use wright_events::{EventKind, TestError};
use wright_testreport::{ParseError, RunPlan, Runner, TestFailure, TestReport};

/// How a test run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestStatus {
    Passed,
    Failed,
    /// Nothing to run: its own outcome, never a silent pass.
    NoTests,
    /// The tests could not be run at all (broken package.json, runner missing, timeout).
    Error,
}

/// The result of one run, in the contract's shape plus what a fix prompt needs.
#[derive(Debug, Clone)]
pub struct TestRun {
    pub status: TestStatus,
    pub report: TestReport,
    /// Human name of the runner used, when one was found.
    pub runner: Option<String>,
    /// Why there were no tests or why they could not run.
    pub message: Option<String>,
    /// The end of the run's output, for people and fix prompts.
    pub output_tail: String,
}

impl TestRun {
    fn without_report(status: TestStatus, runner: Option<String>, message: String, output_tail: String) -> Self {
        Self { status, report: TestReport::default(), runner, message: Some(message), output_tail }
    }

    /// The JSON the model receives.
    pub fn to_value(&self) -> Value {
        let mut v = json!({
            "ok": self.status == TestStatus::Passed,
            "passed": self.report.passed,
            "failed": self.report.failed,
            "total": self.report.total,
            "errors": self.report.errors,
        });
        if let Some(r) = &self.runner {
            v["runner"] = json!(r);
        }
        if self.report.skipped > 0 {
            v["skipped"] = json!(self.report.skipped);
        }
        match self.status {
            TestStatus::NoTests => {
                v["no_tests"] = json!(true);
                v["error"] = json!(self.message.clone().unwrap_or_default());
            }
            TestStatus::Error => {
                v["error"] = json!(self.message.clone().unwrap_or_default());
                v["output"] = json!(self.output_tail);
            }
            TestStatus::Failed if self.report.errors.is_empty() => v["output"] = json!(self.output_tail),
            _ => {}
        }
        v
    }

    /// One line for people: "3 passed, 1 failed (node --test)".
    pub fn summary(&self) -> String {
        let r = &self.report;
        let runner = self.runner.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
        match self.status {
            TestStatus::NoTests => format!("no tests found{runner}"),
            TestStatus::Error => {
                format!("tests could not run{runner}: {}", crate::clip(self.message.as_deref().unwrap_or(""), 160))
            }
            _ => format!("{} passed, {} failed of {}{runner}", r.passed, r.failed, r.total),
        }
    }
}

const NO_TESTS_HINT: &str = "no tests found: add a test file (for example tests/app.test.js using node:test and node:assert) and a \"test\" script in package.json such as \"node --test\"";
const OUTPUT_TAIL: usize = 3000;

/// Run the project's tests (or only `test_file`) and emit `tests_finished` when they ran.
pub async fn run_tests(ctx: &ToolContext, test_file: Option<&str>) -> TestRun {
    let plan = match wright_testreport::detect(ctx.workspace.root(), test_file) {
        Err(e) => return TestRun::without_report(TestStatus::Error, None, e.to_string(), String::new()),
        Ok(None) => return TestRun::without_report(TestStatus::NoTests, None, NO_TESTS_HINT.into(), String::new()),
        Ok(Some(plan)) => plan,
    };
    let run = execute(ctx, &plan).await;
    if matches!(run.status, TestStatus::Passed | TestStatus::Failed) {
        ctx.emitter.emit(EventKind::TestsFinished {
            passed: run.report.passed,
            failed: run.report.failed,
            total: run.report.total,
            errors: run
                .report
                .errors
                .iter()
                .map(|e| TestError { test: e.test.clone(), error: e.error.clone(), location: e.location.clone() })
                .collect(),
        });
    }
    run
}

async fn execute(ctx: &ToolContext, plan: &RunPlan) -> TestRun {
    let runner = Some(plan.description.clone());
    if let Some(report) = &plan.report_file {
        if let Ok(real) = ctx.workspace.resolve(&report.to_string_lossy()) {
            if let Some(parent) = real.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::remove_file(&real);
        }
    }
    let outcome = match run_logged(ctx, &plan.program, &plan.args, &plan.env, ctx.exec.test_timeout).await {
        Ok(o) => o,
        Err(e) => return TestRun::without_report(TestStatus::Error, runner, e.to_string(), String::new()),
    };
    let stdout = outcome.stdout.render();
    let stderr = outcome.stderr.render();
    let tail = crate::clip_tail(&format!("{stdout}{}{stderr}", if stderr.is_empty() { "" } else { "\n" }), OUTPUT_TAIL);
    if outcome.cancelled {
        return TestRun::without_report(
            TestStatus::Error,
            runner,
            "the build was stopped while the tests ran".into(),
            tail,
        );
    }
    if outcome.timed_out {
        let msg = format!(
            "the tests did not finish within {}s (a test that never ends, or a server left running?)",
            ctx.exec.test_timeout.as_secs()
        );
        return TestRun::without_report(TestStatus::Error, runner, msg, tail);
    }
    let text = match &plan.report_file {
        Some(p) => ctx
            .workspace
            .read(&p.to_string_lossy())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default(),
        None => stdout.clone(),
    };
    let exit = outcome.exit_code;
    let parsed =
        if text.trim().is_empty() { Err(ParseError::NoResults) } else { wright_testreport::parse(plan.format, &text) };
    match parsed {
        Ok(mut report) if report.total > 0 => {
            relativize_and_redact(&mut report, ctx);
            let mut status = if report.failed == 0 { TestStatus::Passed } else { TestStatus::Failed };
            if exit != Some(0) && report.failed == 0 {
                // The runner failed although every reported test passed (a crash after the
                // tests, a file that did not load): that is a failure the model must see.
                status = TestStatus::Failed;
                report.errors.push(TestFailure {
                    test: plan.description.clone(),
                    error: format!(
                        "the test command exited with code {} although no test failed:\n{}",
                        exit.map_or("none".into(), |c| c.to_string()),
                        crate::clip_tail(&stderr, 1500)
                    ),
                    location: None,
                });
            }
            if status == TestStatus::Failed {
                add_stderr_context(&mut report, &stderr);
            }
            TestRun { status, report, runner, message: None, output_tail: tail }
        }
        _ => whole_command_result(plan, exit, runner, tail, &stderr),
    }
}

/// Project paths become relative and every message is redacted. The captured output was
/// redacted already (a workspace under the home folder reads `~/…` there), so both spellings of
/// the root are stripped; a report file read from the workspace is redacted here.
fn relativize_and_redact(report: &mut TestReport, ctx: &ToolContext) {
    let root = ctx.workspace.root();
    report.relativize_paths(root);
    let redactor = &ctx.exec.redactor;
    let root_text = root.to_string_lossy();
    if let std::borrow::Cow::Owned(shown) = redactor.redact(&root_text) {
        report.relativize_paths(std::path::Path::new(&shown));
    }
    for e in report.errors.iter_mut() {
        e.test = redactor.redact(&e.test).into_owned();
        e.error = redactor.redact(&e.error).into_owned();
        e.location = e.location.as_deref().map(|l| redactor.redact(l).into_owned());
    }
}

/// When a failing test's error says little (a file that failed to load), the useful part is
/// usually on stderr: attach its end.
fn add_stderr_context(report: &mut TestReport, stderr: &str) {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        return;
    }
    for e in report.errors.iter_mut() {
        if e.error.trim().len() < 40 && !e.error.contains(stderr) {
            e.error = format!("{}\n{}", e.error.trim(), crate::clip_tail(stderr, 1500));
        }
    }
}

/// No per-test results could be read: judge the command as a whole, and say so.
fn whole_command_result(
    plan: &RunPlan,
    exit: Option<i32>,
    runner: Option<String>,
    tail: String,
    stderr: &str,
) -> TestRun {
    let line = std::iter::once(plan.program.as_str())
        .chain(plan.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    // pytest exits 5 when it collected nothing; node/jest report zero tests.
    let no_tests =
        exit == Some(5) && plan.runner == Runner::Pytest || exit == Some(0) && plan.runner != Runner::NpmScript;
    if no_tests {
        return TestRun::without_report(
            TestStatus::NoTests,
            runner,
            format!("{NO_TESTS_HINT} (`{line}` ran no test)"),
            tail,
        );
    }
    let passed = exit == Some(0);
    let report = TestReport {
        passed: u32::from(passed),
        failed: u32::from(!passed),
        skipped: 0,
        total: 1,
        errors: if passed {
            vec![]
        } else {
            vec![TestFailure {
                test: line.clone(),
                error: format!(
                    "exited with code {}:\n{}",
                    exit.map_or("none".into(), |c| c.to_string()),
                    crate::clip_tail(if stderr.trim().is_empty() { &tail } else { stderr }, 2000)
                ),
                location: None,
            }]
        },
    };
    let runner = runner.map(|r| format!("{r}; no per-test report, judged by exit code"));
    TestRun {
        status: if passed { TestStatus::Passed } else { TestStatus::Failed },
        report,
        runner,
        message: None,
        output_tail: tail,
    }
}

#[derive(Deserialize, JsonSchema)]
struct TestArgs {
    /// Path to one test file like 'tests/app.test.js' (optional; default: all tests).
    #[serde(default, rename = "testFile")]
    test_file: Option<String>,
}

pub struct RunTests;

#[async_trait::async_trait]
impl Tool for RunTests {
    fn name(&self) -> &'static str {
        "runTests"
    }
    fn description(&self) -> &'static str {
        "Run the project's tests (node --test, jest, pytest or cargo test, found automatically) and get passed/failed counts with each failure's message and location."
    }
    fn parameters(&self) -> Value {
        schema_for::<TestArgs>()
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolSuccess, ToolError> {
        let a: TestArgs = decode(args)?;
        let run = run_tests(ctx, a.test_file.as_deref().filter(|s| !s.trim().is_empty())).await;
        Ok(ToolSuccess { summary: run.summary(), value: run.to_value() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::fixture;

    fn write(f: &crate::test_support::Fixture, path: &str, text: &str) {
        f.ctx.workspace.write(path, text.as_bytes()).unwrap();
    }

    #[tokio::test]
    async fn node_tests_red_then_green() {
        let f = fixture();
        write(&f, "package.json", r#"{"name":"c","scripts":{"test":"node --test"}}"#);
        write(&f, "counter.js", "exports.inc = (n) => n - 1;\n");
        write(
            &f,
            "counter.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\nconst { inc } = require('./counter');\ntest('inc adds one', () => { assert.strictEqual(inc(1), 2); });\ntest('inc is a function', () => { assert.strictEqual(typeof inc, 'function'); });\n",
        );
        let run = run_tests(&f.ctx, None).await;
        assert_eq!(run.status, TestStatus::Failed, "{run:?}");
        assert_eq!((run.report.passed, run.report.failed, run.report.total), (1, 1, 2));
        assert_eq!(run.report.errors[0].test, "inc adds one");
        assert!(
            run.report.errors[0].error.contains('0') && run.report.errors[0].error.contains('2'),
            "{:?}",
            run.report.errors[0]
        );
        assert!(
            run.report.errors[0].location.as_deref().unwrap_or("").contains("counter.test.js"),
            "{:?}",
            run.report.errors[0]
        );
        write(&f, "counter.js", "exports.inc = (n) => n + 1;\n");
        let run = run_tests(&f.ctx, None).await;
        assert_eq!(run.status, TestStatus::Passed, "{run:?}");
        assert_eq!(run.to_value()["ok"], true);
        let finished = f.sink.events().iter().filter(|e| e.kind.type_name() == "tests_finished").count();
        assert_eq!(finished, 2);
    }

    #[tokio::test]
    async fn locations_stay_relative_when_the_home_folder_is_redacted() {
        let mut f = fixture();
        // The workspace lives under the "home" folder, so its output reads `~/ws/…`.
        let home = f.ctx.workspace.root().parent().unwrap().to_path_buf();
        f.ctx.exec.redactor = wright_sandbox::Redactor::new(Vec::new(), Some(&home));
        write(&f, "package.json", r#"{"name":"c","scripts":{"test":"node --test"}}"#);
        write(
            &f,
            "a.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\ntest('fails', () => { assert.strictEqual(1, 2); });\n",
        );
        let run = run_tests(&f.ctx, None).await;
        assert_eq!(run.status, TestStatus::Failed, "{run:?}");
        let location = run.report.errors[0].location.clone().unwrap_or_default();
        assert!(location.starts_with("a.test.js"), "{location}");
        let all = serde_json::to_string(&run.to_value()).unwrap();
        assert!(!all.contains(&home.to_string_lossy().to_string()), "{all}");
    }

    #[tokio::test]
    async fn no_tests_is_its_own_outcome() {
        let f = fixture();
        write(&f, "index.html", "<!DOCTYPE html><p>hi</p>");
        let run = run_tests(&f.ctx, None).await;
        assert_eq!(run.status, TestStatus::NoTests);
        let v = run.to_value();
        assert_eq!(v["ok"], false);
        assert_eq!(v["no_tests"], true);
        assert_eq!(v["total"], 0);
    }

    #[tokio::test]
    async fn syntax_error_in_test_file_is_a_failure_with_the_reason() {
        let f = fixture();
        write(&f, "package.json", r#"{"scripts":{"test":"node --test"}}"#);
        write(&f, "app.test.js", "const test = require('node:test');\ntest('x', () => { let = ; });\n");
        let run = run_tests(&f.ctx, None).await;
        assert_eq!(run.status, TestStatus::Failed, "{run:?}");
        let all = serde_json::to_string(&run.report.errors).unwrap();
        assert!(all.contains("SyntaxError"), "{all}");
    }

    #[tokio::test]
    async fn broken_package_json_is_an_error_the_model_can_fix() {
        let f = fixture();
        write(&f, "package.json", "{ \"scripts\": ");
        let run = run_tests(&f.ctx, None).await;
        assert_eq!(run.status, TestStatus::Error);
        assert!(run.message.unwrap().contains("package.json"));
    }
}
