//! The event stream of `go test -json`, with go's stderr merged in (see `tests/fixtures/go119_*`).
//!
//! Quirks (Go 1.19): one JSON object per line, `Action` `run`/`output`/`pass`/`fail`/`skip`
//! per test (`Test` set) and per package (`Test` unset); subtests are `Parent/sub` and their
//! parent fails with them; a test that panics gets its `fail` with the trace as its output; a
//! package that does not compile has no JSON at all: the compiler's `# pkg` block and
//! `FAIL\tpkg [build failed]` are plain lines on stderr (Go 1.24 adds `build-output` events and
//! `FailedBuild`, also read here). A package that cannot be loaded (an import no module
//! provides) leaves only go's plain error lines.

use crate::text::{cap, strip_ansi};
use crate::{ParseError, TestFailure, TestReport};
use std::collections::HashMap;

#[derive(serde::Deserialize)]
struct Event {
    #[serde(rename = "Action", default)]
    action: String,
    #[serde(rename = "Package", default)]
    package: Option<String>,
    #[serde(rename = "ImportPath", default)]
    import_path: Option<String>,
    #[serde(rename = "Test", default)]
    test: Option<String>,
    #[serde(rename = "Output", default)]
    output: Option<String>,
    #[serde(rename = "FailedBuild", default)]
    failed_build: Option<String>,
}

#[derive(Default)]
struct Test {
    outcome: Option<&'static str>,
    output: Vec<String>,
}

#[derive(Default)]
struct Package {
    tests: Vec<String>,
    by_name: HashMap<String, Test>,
    output: Vec<String>,
    outcome: Option<&'static str>,
    /// The compiler's or vet's lines, when the package did not build.
    build: Vec<String>,
    build_failed: bool,
}

pub(crate) fn parse(text: &str) -> Result<TestReport, ParseError> {
    let mut order: Vec<String> = Vec::new();
    let mut packages: HashMap<String, Package> = HashMap::new();
    let mut loose: Vec<String> = Vec::new();
    let mut block: Option<String> = None;
    let mut events = 0usize;
    let pkg = |name: &str, order: &mut Vec<String>| -> String {
        if !order.iter().any(|o| o == name) {
            order.push(name.to_string());
        }
        name.to_string()
    };
    let text = strip_ansi(text);
    for raw in text.lines() {
        let line = raw.trim_end();
        if line.trim_start().starts_with('{') {
            if let Ok(e) = serde_json::from_str::<Event>(line.trim_start()) {
                events += 1;
                block = None;
                let Some(name) = e.package.clone().or_else(|| e.import_path.clone()) else { continue };
                // `example.com/b [example.com/b.test]` is the package built for its tests.
                let name = pkg(name.split_whitespace().next().unwrap_or(&name), &mut order);
                let p = packages.entry(name).or_default();
                if e.failed_build.is_some() {
                    p.build_failed = true;
                }
                match (e.action.as_str(), &e.test) {
                    ("build-output", _) => p
                        .build
                        .extend(e.output.iter().map(|o| o.trim_end().to_string()).filter(|o| !o.starts_with("# "))),
                    ("build-fail", _) => p.build_failed = true,
                    ("output", Some(t)) => {
                        let test = test_entry(p, t);
                        test.output.extend(e.output.iter().map(|o| o.trim_end_matches('\n').to_string()));
                    }
                    ("output", None) => p.output.extend(e.output.iter().map(|o| o.trim_end_matches('\n').to_string())),
                    (action, Some(t)) => {
                        let outcome = outcome(action);
                        let test = test_entry(p, t);
                        if outcome.is_some() {
                            test.outcome = outcome;
                        }
                    }
                    (action, None) => {
                        if let Some(o) = outcome(action) {
                            p.outcome = Some(o);
                        }
                    }
                }
                continue;
            }
        }
        // A plain line: go's stderr.
        if let Some(header) = line.strip_prefix("# ") {
            let name = header.split_whitespace().next().unwrap_or(header);
            block = Some(pkg(name, &mut order));
            continue;
        }
        if let Some(rest) = line.strip_prefix("FAIL\t") {
            if let Some(name) = rest.strip_suffix(" [build failed]").or_else(|| rest.strip_suffix(" [setup failed]")) {
                let name = pkg(name.trim(), &mut order);
                let p = packages.entry(name).or_default();
                p.build_failed = true;
                p.outcome = Some("fail");
                block = None;
                continue;
            }
        }
        if line.starts_with("go: downloading ") || line.starts_with("go: finding module ") || line.trim().is_empty() {
            continue;
        }
        match &block {
            Some(name) => packages.entry(name.clone()).or_default().build.push(line.to_string()),
            None => loose.push(line.to_string()),
        }
    }

    let mut report = TestReport::default();
    for name in &order {
        let Some(p) = packages.get(name) else { continue };
        count_package(name, p, &mut report);
    }
    let loose_errors: Vec<&String> = loose.iter().filter(|l| looks_like_error(l)).collect();
    if !loose_errors.is_empty() && report.errors.is_empty() {
        let text: Vec<&str> = loose.iter().map(String::as_str).collect();
        report.errors.push(TestFailure {
            test: "go test (loading the packages)".to_string(),
            error: cap(&text.join("\n")),
            location: loose_errors.iter().find_map(|l| source_location(l)),
        });
        report.failed = report.failed.saturating_add(1);
    }
    if events == 0 && report.errors.is_empty() {
        return Err(ParseError::NoResults);
    }
    report.total = report.passed.saturating_add(report.failed).saturating_add(report.skipped);
    Ok(report)
}

fn test_entry<'a>(p: &'a mut Package, name: &str) -> &'a mut Test {
    if !p.by_name.contains_key(name) {
        p.tests.push(name.to_string());
    }
    p.by_name.entry(name.to_string()).or_default()
}

fn outcome(action: &str) -> Option<&'static str> {
    match action {
        "pass" => Some("pass"),
        "fail" => Some("fail"),
        "skip" => Some("skip"),
        _ => None,
    }
}

/// Counts a package's tests (leaves only: a parent is counted when it failed on its own) and
/// adds its failures; a package that failed without a failing test is a failure itself.
fn count_package(name: &str, p: &Package, report: &mut TestReport) {
    let mut any_failed = false;
    for t in &p.tests {
        let Some(test) = p.by_name.get(t) else { continue };
        let prefix = format!("{t}/");
        let children: Vec<&Test> =
            p.tests.iter().filter(|o| o.starts_with(&prefix)).filter_map(|o| p.by_name.get(o)).collect();
        let child_failed = children.iter().any(|c| c.outcome == Some("fail"));
        let outcome = test.outcome.unwrap_or("fail");
        if !children.is_empty() && (outcome != "fail" || child_failed) {
            continue;
        }
        match outcome {
            "pass" => report.passed = report.passed.saturating_add(1),
            "skip" => report.skipped = report.skipped.saturating_add(1),
            _ => {
                any_failed = true;
                report.failed = report.failed.saturating_add(1);
                report.errors.push(test_failure(name, t, test, p));
            }
        }
    }
    if any_failed {
        return;
    }
    if p.build_failed || !p.build.is_empty() {
        let lines: Vec<&str> = p.build.iter().map(String::as_str).filter(|l| !l.trim().is_empty()).collect();
        let error = if lines.is_empty() {
            "the package does not compile (go printed no details)".to_string()
        } else {
            format!("the package does not compile:\n{}", lines.join("\n"))
        };
        report.failed = report.failed.saturating_add(1);
        report.errors.push(TestFailure {
            test: name.to_string(),
            error: cap(&error),
            location: lines.iter().find_map(|l| source_location(l)),
        });
    } else if p.outcome == Some("fail") {
        let lines: Vec<&str> = p
            .output
            .iter()
            .map(String::as_str)
            .filter(|l| !l.starts_with("FAIL\t") && !matches!(l.trim(), "FAIL" | "PASS" | ""))
            .collect();
        let error = if lines.is_empty() {
            "the package's test binary failed outside any test (TestMain, an init function or os.Exit)".to_string()
        } else {
            format!("the package's tests failed outside any test:\n{}", lines.join("\n"))
        };
        report.failed = report.failed.saturating_add(1);
        report.errors.push(TestFailure { test: name.to_string(), error: cap(&error), location: None });
    }
}

/// One failing test: its own output without go's `=== RUN`/`--- FAIL` framing, a panic's
/// trace cut to the package's own frames, and where it failed.
fn test_failure(package: &str, name: &str, test: &Test, p: &Package) -> TestFailure {
    let mut kept: Vec<String> = Vec::new();
    let mut location = None;
    let mut panic_location = None;
    let mut in_trace = false;
    let mut previous_frame_is_ours = false;
    let own = format!("{package}.");
    let output = if test.outcome.is_none() { [&test.output[..], &p.output[..]].concat() } else { test.output.clone() };
    for line in &output {
        let trimmed = line.trim();
        if trimmed.starts_with("=== ") || trimmed.starts_with("--- PASS") || trimmed.starts_with("--- SKIP") {
            continue;
        }
        if trimmed.starts_with("--- FAIL: ") {
            continue;
        }
        if trimmed.starts_with("goroutine ") && trimmed.ends_with(':') {
            in_trace = true;
            while kept.last().is_some_and(|l| l.is_empty()) {
                kept.pop();
            }
            continue;
        }
        if in_trace {
            if line.starts_with('\t') {
                if previous_frame_is_ours {
                    let place = trimmed.split(" +0x").next().unwrap_or(trimmed).to_string();
                    panic_location = panic_location.or_else(|| source_location(&place));
                    kept.push(format!("\t{place}"));
                }
            } else {
                previous_frame_is_ours = trimmed.starts_with(&own);
                if previous_frame_is_ours {
                    kept.push(trimmed.to_string());
                }
            }
            continue;
        }
        if location.is_none() {
            location = source_location(trimmed);
        }
        kept.push(trimmed.to_string());
    }
    while kept.last().is_some_and(|l| l.is_empty()) {
        kept.pop();
    }
    let text = kept.join("\n");
    let text = text.trim();
    TestFailure {
        test: format!("{package} > {name}"),
        error: if text.is_empty() {
            match test.outcome {
                None => "the test never finished (the test binary stopped: a crash or a timeout)".to_string(),
                Some(_) => "test failed (it printed nothing)".to_string(),
            }
        } else {
            cap(text)
        },
        location: panic_location.or(location),
    }
}

/// `calc_test.go:14: msg` → `calc_test.go:14`; `./greet.go:4:9: undefined` → `greet.go:4:9`;
/// `/p/calc_test.go:9` → itself.
fn source_location(line: &str) -> Option<String> {
    let line = line.trim();
    let at = line.find(".go:")?;
    let start = line[..at].char_indices().rev().find(|(_, c)| c.is_whitespace()).map_or(0, |(i, c)| i + c.len_utf8());
    let file = &line[start..at + 3];
    if file.len() <= 3 {
        return None;
    }
    let mut numbers = Vec::new();
    for part in line[at + 4..].split(':').take(2) {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() {
            break;
        }
        let whole = digits.len() == part.len();
        numbers.push(digits);
        if !whole {
            break;
        }
    }
    if numbers.is_empty() {
        return None;
    }
    let file = file.strip_prefix("./").unwrap_or(file);
    Some(format!("{file}:{}", numbers.join(":")))
}

/// A line of go's that reports a problem, not progress.
fn looks_like_error(line: &str) -> bool {
    source_location(line).is_some()
        || line.starts_with("go: ")
        || line.contains("cannot find")
        || line.starts_with("FAIL")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations() {
        assert_eq!(source_location("calc_test.go:14: Add(2, 2) = 4").as_deref(), Some("calc_test.go:14"));
        assert_eq!(source_location("./greet.go:4:9: undefined: x").as_deref(), Some("greet.go:4:9"));
        assert_eq!(source_location("/tmp/p/calc_test.go:9").as_deref(), Some("/tmp/p/calc_test.go:9"));
        assert_eq!(source_location("sub/a.go:3:8: cannot find").as_deref(), Some("sub/a.go:3:8"));
        assert_eq!(source_location("no location here"), None);
        assert_eq!(source_location("x.go: nothing"), None);
    }
}
