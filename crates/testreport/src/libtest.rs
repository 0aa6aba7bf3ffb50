//! The human output of Rust's libtest on stdout of `cargo test` (stable Rust has no
//! machine-readable format). See `tests/fixtures/cargo_*.stdout`.
//!
//! Quirks: one `running N tests` … `test result:` block per test binary (lib, each
//! `tests/*.rs`, doc-tests), so results add up; without `--no-fail-fast` cargo stops
//! after the first failing binary; `should_panic` tests are listed as
//! `name - should panic`; panics read `thread 'name' (tid) panicked at src/lib.rs:16:9:`
//! (rust ≥ 1.73; this toolchain adds the thread id); the `Running …` lines and compiler
//! errors go to stderr, so a crate that does not compile leaves stdout empty.

use crate::text::{cap, has_line_suffix, strip_ansi};
use crate::{ParseError, TestFailure, TestReport};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Passed,
    Failed,
    Ignored,
}

#[derive(Debug, Default)]
struct Binary {
    expected: Option<usize>,
    results: Vec<(String, Status)>,
    /// passed, failed, ignored from the `test result:` line.
    summary: Option<(u64, u64, u64)>,
    /// A `test name ... ` line whose outcome never came (the process died).
    unfinished: Option<String>,
}

pub(crate) fn parse(text: &str) -> Result<TestReport, ParseError> {
    let clean = strip_ansi(text);
    let lines: Vec<&str> = clean.lines().collect();
    let mut binaries: Vec<Binary> = Vec::new();
    let mut sections: Vec<(String, String)> = Vec::new();

    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end();
        i += 1;
        if let Some(n) = running_count(line) {
            binaries.push(Binary { expected: Some(n), ..Binary::default() });
        } else if let Some(rest) = line.strip_prefix("test result: ") {
            current(&mut binaries).summary = Some(summary_counts(rest));
        } else if let Some(rest) = line.strip_prefix("test ") {
            let Some((name, outcome)) = rest.rsplit_once(" ...") else {
                continue;
            };
            let name = name.strip_suffix(" - should panic").unwrap_or(name).to_string();
            let status = match outcome.trim() {
                "ok" => Status::Passed,
                "FAILED" => Status::Failed,
                o if o.starts_with("ignored") => Status::Ignored,
                "" => {
                    current(&mut binaries).unfinished = Some(name);
                    continue;
                }
                _ => continue,
            };
            let binary = current(&mut binaries);
            binary.unfinished = None;
            binary.results.push((name, status));
        } else if let Some(name) = section_header(line) {
            let start = i;
            while i < lines.len() {
                let l = lines[i].trim_end();
                if section_header(l).is_some() || l == "failures:" || l.starts_with("test result: ") {
                    break;
                }
                i += 1;
            }
            sections.push((name.to_string(), lines[start..i].join("\n")));
        }
    }

    if binaries.is_empty() {
        return Err(ParseError::NoResults);
    }

    let (mut passed, mut failed, mut ignored) = (0u64, 0u64, 0u64);
    let mut errors = Vec::new();
    for binary in &binaries {
        for (name, status) in &binary.results {
            if *status == Status::Failed {
                let section = sections.iter().find(|(n, _)| n == name).map(|(_, b)| b.as_str());
                errors.push(failure(name, section));
            }
        }
        match binary.summary {
            Some((p, f, ig)) => {
                passed = passed.saturating_add(p);
                failed = failed.saturating_add(f);
                ignored = ignored.saturating_add(ig);
            }
            None => {
                let of = |s: Status| binary.results.iter().filter(|(_, st)| *st == s).count() as u64;
                passed = passed.saturating_add(of(Status::Passed));
                failed = failed.saturating_add(of(Status::Failed));
                ignored = ignored.saturating_add(of(Status::Ignored));
                if let Some(crash) = crash_failure(binary) {
                    failed = failed.saturating_add(1);
                    errors.push(crash);
                }
            }
        }
    }
    let to_u32 = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    Ok(TestReport {
        passed: to_u32(passed),
        failed: to_u32(failed),
        skipped: to_u32(ignored),
        total: to_u32(passed.saturating_add(failed).saturating_add(ignored)),
        errors,
    })
}

fn current(binaries: &mut Vec<Binary>) -> &mut Binary {
    if binaries.is_empty() {
        binaries.push(Binary::default());
    }
    let last = binaries.len() - 1;
    &mut binaries[last]
}

/// `running 4 tests` / `running 1 test`.
fn running_count(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("running ")?;
    let (n, word) = rest.split_once(' ')?;
    matches!(word, "test" | "tests").then(|| n.parse().ok()).flatten()
}

/// `ok. 1 passed; 2 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.08s`.
fn summary_counts(rest: &str) -> (u64, u64, u64) {
    let (mut p, mut f, mut ig) = (0, 0, 0);
    let rest = rest.split_once(". ").map_or(rest, |(_, r)| r);
    for part in rest.split(';') {
        let mut words = part.split_whitespace();
        let (Some(n), Some(what)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        match what {
            "passed" => p = n,
            "failed" => f = n,
            "ignored" => ig = n,
            _ => {}
        }
    }
    (p, f, ig)
}

/// `---- tests::adds_wrong stdout ----` → `tests::adds_wrong`.
fn section_header(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("---- ")?;
    inner.strip_suffix(" stdout ----").or_else(|| inner.strip_suffix(" stderr ----"))
}

fn failure(name: &str, section: Option<&str>) -> TestFailure {
    let Some(section) = section else {
        return TestFailure {
            test: name.to_string(),
            error: "test failed (libtest printed no output for it)".to_string(),
            location: None,
        };
    };
    let mut kept: Vec<String> = Vec::new();
    let mut location = None;
    let mut in_backtrace = false;
    for line in section.lines() {
        let line = line.trim_end();
        if in_backtrace {
            if line.starts_with(' ') {
                continue;
            }
            in_backtrace = false;
        }
        if line == "stack backtrace:" {
            in_backtrace = true;
            continue;
        }
        if line.starts_with("note: run with `RUST_BACKTRACE=") || line.starts_with("note: Some details are omitted") {
            continue;
        }
        if let Some((loc, rewritten)) = panic_line(line) {
            location = location.or(loc);
            kept.push(rewritten);
            continue;
        }
        if let Some(loc) = line.strip_prefix("note: test did not panic as expected at ") {
            if has_line_suffix(loc) {
                location = location.or_else(|| Some(loc.to_string()));
            }
        }
        kept.push(line.to_string());
    }
    let text = kept.join("\n");
    let text = text.trim();
    TestFailure {
        test: name.to_string(),
        error: if text.is_empty() { "test failed".to_string() } else { cap(text) },
        location,
    }
}

/// `thread 'x' (123) panicked at src/lib.rs:16:9:` → (location, `panicked at src/lib.rs:16:9:`).
/// Also reads the pre-1.73 form `thread 'x' panicked at 'msg', src/lib.rs:16:9`.
fn panic_line(line: &str) -> Option<(Option<String>, String)> {
    if !line.starts_with("thread '") {
        return None;
    }
    let (_, rest) = line.split_once(" panicked at ")?;
    let candidate = rest.strip_suffix(':').unwrap_or(rest);
    let candidate = candidate.rsplit(", ").next().unwrap_or(candidate);
    let location = has_line_suffix(candidate).then(|| candidate.to_string());
    Some((location, format!("panicked at {rest}")))
}

/// A binary that printed `running N tests` but no `test result:` died mid-run
/// (abort, stack overflow, killed on timeout): say so instead of reporting a clean run.
fn crash_failure(binary: &Binary) -> Option<TestFailure> {
    let done = binary.results.len();
    if let Some(name) = &binary.unfinished {
        return Some(TestFailure {
            test: name.clone(),
            error: format!(
                "the test binary stopped while this test was running, after {done} finished \
                 test(s) and without a summary (crash, abort or timeout); see stderr"
            ),
            location: None,
        });
    }
    let expected = binary.expected?;
    (done < expected).then(|| TestFailure {
        test: "(test binary)".to_string(),
        error: format!(
            "the test binary stopped after {done} of {expected} tests without a summary \
             (crash, abort or timeout); see stderr"
        ),
        location: None,
    })
}
