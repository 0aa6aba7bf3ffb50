//! `jest --json` output (recorded from jest 30 in `tests/fixtures/jest30_*.json`).
//!
//! Quirks: `location` is `null` unless jest runs with `--testLocationInResults`;
//! `failureMessages` carry ANSI colours when jest thinks it has a terminal
//! (`FORCE_COLOR`); a file that fails to load has no `assertionResults`, only
//! `status: "failed"` and a long `message` whose useful part follows `Details:`.

use serde::Deserialize;

use crate::text::{cap, count, strip_ansi};
use crate::{ParseError, TestFailure, TestReport};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JestRun {
    test_results: Option<Vec<JestSuite>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JestSuite {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    message: Option<String>,
    /// Older jest versions used this name for `message`.
    #[serde(default)]
    failure_message: Option<String>,
    #[serde(default)]
    assertion_results: Option<Vec<JestAssertion>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct JestAssertion {
    #[serde(default)]
    full_name: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    failure_messages: Option<Vec<String>>,
    #[serde(default)]
    location: Option<JestLocation>,
}

#[derive(Debug, Deserialize)]
struct JestLocation {
    line: Option<u64>,
    column: Option<u64>,
}

pub(crate) fn parse(text: &str) -> Result<TestReport, ParseError> {
    let run = find_json(text)?;
    let suites = run
        .test_results
        .ok_or_else(|| ParseError::Malformed("JSON has no `testResults`: not jest --json output".to_string()))?;

    let (mut passed, mut skipped) = (0usize, 0usize);
    let mut errors = Vec::new();
    for suite in &suites {
        let file = suite.name.clone().unwrap_or_default();
        let assertions = suite.assertion_results.as_deref().unwrap_or(&[]);
        let mut suite_had_failure = false;
        for a in assertions {
            match a.status.as_deref().unwrap_or("") {
                "passed" | "focused" => passed += 1,
                "failed" => {
                    suite_had_failure = true;
                    errors.push(assertion_failure(a, &file));
                }
                _ => skipped += 1,
            }
        }
        let suite_failed = suite.status.as_deref() == Some("failed");
        if suite_failed && !suite_had_failure {
            let message = suite
                .message
                .as_deref()
                .filter(|m| !m.trim().is_empty())
                .or(suite.failure_message.as_deref())
                .unwrap_or("");
            errors.push(TestFailure {
                test: if file.is_empty() { "test suite".to_string() } else { file.clone() },
                error: suite_error(message),
                location: (!file.is_empty()).then_some(file),
            });
        }
    }
    let failed = errors.len();
    Ok(TestReport {
        passed: count(passed),
        failed: count(failed),
        skipped: count(skipped),
        total: count(passed + failed + skipped),
        errors,
    })
}

/// Accepts the report file as is, or stdout where other output surrounds the JSON.
fn find_json(text: &str) -> Result<JestRun, ParseError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ParseError::NoResults);
    }
    let first_error = match serde_json::from_str::<JestRun>(trimmed) {
        Ok(run) => return Ok(run),
        Err(e) => e,
    };
    for (idx, _) in text.match_indices('{') {
        let at_line_start = idx == 0 || text[..idx].ends_with('\n');
        if !at_line_start {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[idx..]).into_iter::<JestRun>();
        if let Some(Ok(run)) = stream.next() {
            if run.test_results.is_some() {
                return Ok(run);
            }
        }
    }
    if trimmed.contains("testResults") {
        Err(ParseError::Malformed(format!("invalid jest JSON: {first_error}")))
    } else {
        Err(ParseError::NoResults)
    }
}

fn assertion_failure(a: &JestAssertion, file: &str) -> TestFailure {
    let test = a.full_name.clone().or_else(|| a.title.clone()).unwrap_or_else(|| "unnamed test".to_string());
    let messages = a.failure_messages.as_deref().unwrap_or(&[]);
    let mut error = messages.iter().map(|m| drop_framework_frames(&strip_ansi(m))).collect::<Vec<_>>().join("\n\n");
    if error.trim().is_empty() {
        error = "test failed".to_string();
    }
    let location = match a.location.as_ref().and_then(|l| l.line.map(|line| (line, l.column))) {
        Some((line, Some(col))) if !file.is_empty() => Some(format!("{file}:{line}:{col}")),
        Some((line, None)) if !file.is_empty() => Some(format!("{file}:{line}")),
        // Vitest reports no location; its stack names the test file's failing line.
        _ if !file.is_empty() => Some(frame_in(&error, file).unwrap_or_else(|| file.to_string())),
        _ => None,
    };
    TestFailure { test, error: cap(error.trim()), location }
}

/// The first stack frame `at [fn (]FILE:LINE:COL[)]` in `file`, as `FILE:LINE:COL`.
fn frame_in(error: &str, file: &str) -> Option<String> {
    error.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix("at ")?;
        let at = rest.find(file)?;
        let tail = rest[at + file.len()..].trim_end_matches(')');
        let mut parts = tail.strip_prefix(':')?.splitn(2, ':');
        let line: u32 = parts.next()?.parse().ok()?;
        let col: Option<u32> = parts.next().and_then(|c| c.parse().ok());
        Some(match col {
            Some(c) => format!("{file}:{line}:{c}"),
            None => format!("{file}:{line}"),
        })
    })
}

/// Jest's stack traces are mostly jest-circus internals; keep the project's frames.
fn drop_framework_frames(message: &str) -> String {
    message
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("at ") && (t.contains("node_modules") || t.contains("node:") || t.contains("<anonymous>")))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Condenses "Test suite failed to run": jest's advice paragraphs go, `Details:` stays.
fn suite_error(message: &str) -> String {
    let clean = strip_ansi(message);
    let lines: Vec<&str> = clean.lines().collect();
    let mut out: Vec<String> = Vec::new();
    out.push("Test suite failed to run".to_string());
    let details = lines.iter().position(|l| l.trim() == "Details:");
    let body: Vec<&str> = match details {
        Some(d) => {
            // Keep the one-line summary jest gives first (e.g. "Jest encountered an unexpected token").
            if let Some(summary) =
                lines[..d].iter().map(|l| l.trim()).find(|l| !l.is_empty() && !l.contains("Test suite failed to run"))
            {
                out.push(summary.to_string());
            }
            lines[d + 1..].to_vec()
        }
        None => lines.iter().copied().filter(|l| !l.contains("Test suite failed to run")).collect(),
    };
    let body = drop_framework_frames(&body.join("\n"));
    let indent =
        body.lines().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    for line in body.lines() {
        out.push(line.get(indent..).unwrap_or(line.trim_start()).trim_end().to_string());
    }
    let joined = out.join("\n");
    cap(joined.trim())
}
