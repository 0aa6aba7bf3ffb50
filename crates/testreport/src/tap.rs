//! TAP, as node 20's `--test-reporter=tap` writes it (and as tape & co. do, more simply).
//!
//! Node quirks handled here (all seen in `tests/fixtures/node20_*.tap`):
//! - nesting is 4 spaces per level, each test preceded by `# Subtest: name`; a parent's
//!   `ok`/`not ok` line comes after its children;
//! - a failing `describe` suite (`type: 'suite'`) or `test()` parent reports
//!   `failureType: 'subtestsFailed'` on top of its failing children: not an extra failure;
//! - the trailing `# tests/# pass/# fail/# cancelled/# skipped/# todo` counters count
//!   `test()` parents but not `describe` suites, and not suite-level failures (hook errors);
//! - a file that cannot even load (syntax error) becomes one `not ok` test named after the
//!   file with `error: 'test failed'` and `exitCode: 1`; what node printed is only in the
//!   `#` comment lines just before it, so those are folded into that failure.

use crate::text::{cap, count, has_line_suffix, project_frame, squeeze_blank_lines, strip_ansi};
use crate::{ParseError, TestFailure, TestReport};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Directive {
    None,
    Skip,
    Todo,
}

/// One test point (`ok`/`not ok` line) with its YAML block, in the order of the text.
#[derive(Debug)]
pub(crate) struct Point {
    pub(crate) ok: bool,
    name: String,
    directive: Directive,
    yaml: Vec<YamlEntry>,
    has_children: bool,
    /// `#` comment lines printed at the top level since the previous top-level test:
    /// node's copy of a test file's stdout/stderr.
    pub(crate) file_output: Vec<String>,
}

/// What [`read`] found in a TAP text: the points and the counters, before they become a
/// report ([`parse`]) or diagnoses (`crate::diagnose`).
#[derive(Debug)]
pub(crate) struct Stream {
    pub(crate) points: Vec<Point>,
    counters: Counters,
    bail_outs: Vec<String>,
}

impl Stream {
    /// Whether any test failed: only then is the text worth reading as TAP for diagnosis.
    pub(crate) fn has_failures(&self) -> bool {
        self.points.iter().any(|p| !p.ok) || !self.bail_outs.is_empty()
    }
}

impl Point {
    /// A YAML field's value (unquoted, block scalars dedented), if the block has it.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.entry(key).map(|e| e.value.as_str())
    }

    fn entry(&self, key: &str) -> Option<&YamlEntry> {
        self.yaml.iter().find(|e| e.key == key)
    }

    fn is_suite(&self) -> bool {
        self.get("type") == Some("suite")
    }

    /// Whether this `not ok` is a failure in its own right rather than a roll-up of
    /// failing children or an expected (todo/skip) failure.
    fn is_reportable_failure(&self) -> bool {
        if self.ok || self.directive != Directive::None {
            return false;
        }
        let rollup = self.get("failureType") == Some("subtestsFailed");
        if self.has_children || self.is_suite() {
            // Generic TAP has no failureType: a parent's `not ok` is then a roll-up.
            !rollup && self.get("failureType").is_some()
        } else {
            !rollup
        }
    }
}

#[derive(Debug, Default)]
struct Counters {
    seen: bool,
    tests: u64,
    pass: u64,
    fail: u64,
    cancelled: u64,
    skipped: u64,
    todo: u64,
}

impl Counters {
    /// Reads `# tests 3`-style lines (node and tape); returns false for other comments.
    fn read(&mut self, comment: &str) -> bool {
        let mut words = comment.split_whitespace();
        let (Some(key), Some(value), None) = (words.next(), words.next(), words.next()) else {
            return false;
        };
        let Ok(value) = value.parse::<u64>() else {
            return false;
        };
        let slot = match key {
            "tests" => &mut self.tests,
            "pass" => &mut self.pass,
            "fail" => &mut self.fail,
            "cancelled" => &mut self.cancelled,
            "skipped" => &mut self.skipped,
            "todo" => &mut self.todo,
            "suites" => return true,
            _ => return false,
        };
        // Several TAP streams (e.g. two `node --test` runs in one npm script) add up.
        *slot = slot.saturating_add(value);
        self.seen |= key == "tests";
        true
    }
}

pub(crate) fn parse(text: &str) -> Result<TestReport, ParseError> {
    let stream = read(text)?;
    Ok(build_report(&stream.points, &stream.counters, stream.bail_outs))
}

/// Reads the points, counters and bail-outs of a TAP text.
pub(crate) fn read(text: &str) -> Result<Stream, ParseError> {
    let clean = strip_ansi(text);
    let lines: Vec<&str> = clean.lines().collect();

    let mut points: Vec<Point> = Vec::new();
    let mut subtests: Vec<String> = Vec::new();
    let mut child_seen: Vec<bool> = Vec::new();
    let mut comments: Vec<String> = Vec::new();
    let mut counters = Counters::default();
    let mut plan_seen = false;
    let mut bail_outs: Vec<String> = Vec::new();

    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let indent = leading_spaces(line);
        let depth = indent / 4;
        let body = line[indent..].trim_end();

        if let Some((ok, description)) = point_line(body) {
            let mut yaml = Vec::new();
            if lines.get(i).is_some_and(|l| l.trim() == "---") {
                let yaml_indent = lines.get(i).map_or(0, |l| leading_spaces(l));
                i += 1;
                let start = i;
                while let Some(l) = lines.get(i) {
                    let t = l.trim();
                    if t == "..." || (!t.is_empty() && leading_spaces(l) < yaml_indent) {
                        break;
                    }
                    i += 1;
                }
                yaml = parse_yaml(&lines[start..i]);
                if lines.get(i).is_some_and(|l| l.trim() == "...") {
                    i += 1;
                }
            }

            if child_seen.len() <= depth {
                child_seen.resize(depth + 1, false);
            }
            let has_children = child_seen[depth];
            child_seen.truncate(depth + 1);
            child_seen[depth] = false;
            if depth > 0 {
                child_seen[depth - 1] = true;
            }

            let (name, directive) = split_directive(&description);
            let mut full: Vec<&str> = subtests.iter().take(depth).map(String::as_str).collect();
            let own = if name.is_empty() { format!("test {}", points.len() + 1) } else { name };
            full.push(&own);
            let name = full.join(" > ");
            subtests.truncate(depth);

            let file_output = if depth == 0 { std::mem::take(&mut comments) } else { Vec::new() };
            points.push(Point { ok, name, directive, yaml, has_children, file_output });
            continue;
        }

        if let Some(comment) = body.strip_prefix('#') {
            let comment = comment.strip_prefix(' ').unwrap_or(comment);
            if let Some(name) = comment.strip_prefix("Subtest:") {
                subtests.truncate(depth);
                subtests.push(unescape(name.trim()));
            } else if depth == 0 && !counters.read(comment) {
                comments.push(comment.to_string());
            }
        } else if let Some(reason) = body.strip_prefix("Bail out!") {
            bail_outs.push(reason.trim().to_string());
        } else if body.starts_with("1..") {
            plan_seen = true;
        }
    }

    if points.is_empty() && !plan_seen && !counters.seen && bail_outs.is_empty() {
        return Err(ParseError::NoResults);
    }
    Ok(Stream { points, counters, bail_outs })
}

fn build_report(points: &[Point], counters: &Counters, bail_outs: Vec<String>) -> TestReport {
    let mut errors: Vec<TestFailure> = points.iter().filter(|p| p.is_reportable_failure()).map(failure).collect();
    errors.extend(bail_outs.into_iter().map(|reason| TestFailure {
        test: "Bail out!".to_string(),
        error: if reason.is_empty() { "the TAP producer bailed out".to_string() } else { cap(&reason) },
        location: None,
    }));

    // Failures node leaves out of its counters (suite hooks, a throwing describe body).
    let suite_failures = points.iter().filter(|p| p.is_suite() && p.is_reportable_failure()).count();

    if counters.seen {
        // Node counts `test()` parents as tests; only leaves should count.
        let parents = points.iter().filter(|p| p.has_children && !p.is_suite());
        let (mut parent_ok, mut parent_rollup) = (0u64, 0u64);
        for p in parents {
            if p.ok && p.directive == Directive::None {
                parent_ok += 1;
            } else if p.get("failureType") == Some("subtestsFailed") {
                parent_rollup += 1;
            }
        }
        let suite_failures = suite_failures as u64;
        let to_u32 = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        TestReport {
            passed: to_u32(counters.pass.saturating_sub(parent_ok)),
            failed: to_u32(
                counters
                    .fail
                    .saturating_add(counters.cancelled)
                    .saturating_sub(parent_rollup)
                    .saturating_add(suite_failures),
            ),
            skipped: to_u32(counters.skipped.saturating_add(counters.todo)),
            total: to_u32(counters.tests.saturating_sub(parent_ok + parent_rollup).saturating_add(suite_failures)),
            errors,
        }
    } else {
        let leaves = || points.iter().filter(|p| !p.has_children && !p.is_suite());
        let passed = leaves().filter(|p| p.ok && p.directive == Directive::None).count();
        let skipped = leaves().filter(|p| p.directive != Directive::None).count();
        let failed = errors.len();
        TestReport {
            passed: count(passed),
            failed: count(failed),
            skipped: count(skipped),
            total: count(passed + failed + skipped),
            errors,
        }
    }
}

/// Builds the model-facing failure: message, expected/actual, where it broke.
fn failure(p: &Point) -> TestFailure {
    let exit_code = p.get("exitCode").filter(|v| *v != "~" && *v != "0");
    let signal = p.get("signal").filter(|v| *v != "~");
    let file_failed = exit_code.is_some() || signal.is_some();

    let mut head = squeeze_blank_lines(p.get("error").or_else(|| p.get("message")).unwrap_or("test failed"));
    if file_failed && head == "test failed" {
        head = match (exit_code, signal) {
            (Some(code), _) => format!("test file failed (exit code {code})"),
            (None, Some(sig)) => format!("test file failed (killed by {sig})"),
            (None, None) => head,
        };
    }
    if let Some(kind) = p.get("name").filter(|kind| *kind != "AssertionError" && !head.starts_with(kind)) {
        head = format!("{kind}: {head}");
    }
    let mut parts = vec![head];

    // Quotes kept on purpose: they tell the string '1' from the number 1.
    for key in ["expected", "actual"] {
        if let Some(entry) = p.entry(key) {
            if entry.nested {
                let indented: Vec<String> = entry.value.lines().map(|l| format!("  {l}")).collect();
                parts.push(format!("{key}:\n{}", indented.join("\n")));
            } else {
                parts.push(format!("{key}: {}", entry.raw));
            }
        }
    }
    if let Some(operator) = p.get("operator") {
        parts.push(format!("operator: {operator}"));
    }

    let output = file_output(&p.file_output);
    if !output.is_empty() {
        parts.push(output.join("\n"));
    }

    let stack_frame = p.get("stack").and_then(|stack| stack.lines().find_map(project_frame));
    let output_location = output
        .first()
        .map(|l| l.trim())
        .map(|l| l.strip_prefix("file://").unwrap_or(l))
        .filter(|l| !l.contains(' ') && has_line_suffix(l))
        .map(str::to_string);
    let yaml_location = p.get("location").map(str::to_string);
    let at_location = p.get("at").and_then(project_frame);
    let location = if file_failed { output_location.or(yaml_location) } else { yaml_location }
        .or_else(|| stack_frame.clone())
        .or(at_location);

    if let Some(frame) = stack_frame.filter(|f| location.as_deref() != Some(f.as_str())) {
        parts.push(format!("at {frame}"));
    }

    TestFailure { test: p.name.clone(), error: cap(&parts.join("\n")), location }
}

/// Drops node's own stack frames and version banner from a file's captured output.
fn file_output(lines: &[String]) -> Vec<String> {
    let kept: Vec<String> = lines
        .iter()
        .map(|l| l.trim_end().to_string())
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("Node.js v")
                || (t.starts_with("at ") && (t.contains("node:internal") || t.contains("(node:"))))
        })
        .collect();
    let start = kept.iter().position(|l| !l.trim().is_empty());
    let end = kept.iter().rposition(|l| !l.trim().is_empty());
    match (start, end) {
        (Some(s), Some(e)) => kept[s..=e].to_vec(),
        _ => Vec::new(),
    }
}

fn leading_spaces(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Recognises `ok 1 - name` / `not ok 2 - name # SKIP`; returns (ok, description).
fn point_line(body: &str) -> Option<(bool, String)> {
    let (ok, rest) = if let Some(rest) = body.strip_prefix("not ok") {
        (false, rest)
    } else if let Some(rest) = body.strip_prefix("ok") {
        (true, rest)
    } else {
        return None;
    };
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let rest = rest.trim_start().trim_start_matches(|c: char| c.is_ascii_digit()).trim_start();
    let rest = if rest == "-" { "" } else { rest.strip_prefix("- ").unwrap_or(rest) };
    Some((ok, rest.to_string()))
}

/// Splits `name # SKIP reason` at the first unescaped `#`, unescaping node's `\#` and `\\`.
fn split_directive(description: &str) -> (String, Directive) {
    let mut escaped = false;
    for (idx, c) in description.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' {
            escaped = true;
        } else if c == '#' {
            let directive = description[idx + 1..].trim_start().to_ascii_uppercase();
            let kind = if directive.starts_with("SKIP") {
                Directive::Skip
            } else if directive.starts_with("TODO") {
                Directive::Todo
            } else {
                continue;
            };
            return (unescape(description[..idx].trim()), kind);
        }
    }
    (unescape(description.trim()), Directive::None)
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n @ ('#' | '\\')) => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[derive(Debug)]
struct YamlEntry {
    key: String,
    /// Unquoted scalar, or dedented text of a block scalar / nested value.
    value: String,
    /// The scalar as written, quotes included.
    raw: String,
    /// Block scalar or nested map/list: multi-line by nature.
    nested: bool,
}

/// Reads the flat YAML map node writes between `---` and `...`: quoted/plain scalars,
/// `|-` block scalars, and nested values (kept as dedented text, e.g. `expected:`).
fn parse_yaml(lines: &[&str]) -> Vec<YamlEntry> {
    let Some(base) = lines.iter().filter(|l| !l.trim().is_empty()).map(|l| leading_spaces(l)).min() else {
        return Vec::new();
    };
    let key_of = |line: &str| -> Option<(String, String)> {
        if leading_spaces(line) != base {
            return None;
        }
        let body = line.trim();
        let colon = body.find(':')?;
        let key = &body[..colon];
        let valid = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        let rest = &body[colon + 1..];
        (valid && (rest.is_empty() || rest.starts_with(' '))).then(|| (key.to_string(), rest.trim().to_string()))
    };

    let mut out = Vec::new();
    let mut idx = 0;
    while idx < lines.len() {
        let Some((key, rest)) = key_of(lines[idx]) else {
            idx += 1;
            continue;
        };
        idx += 1;
        let start = idx;
        while idx < lines.len() && key_of(lines[idx]).is_none() {
            idx += 1;
        }
        let continuation = &lines[start..idx];
        let nested = rest.starts_with('|') || rest.starts_with('>') || rest.is_empty();
        let (value, raw) = if nested {
            let text = dedent(continuation);
            (text.clone(), text)
        } else {
            let mut joined = rest;
            for l in continuation {
                let t = l.trim();
                if !t.is_empty() {
                    joined.push(' ');
                    joined.push_str(t);
                }
            }
            (unquote(&joined), joined)
        };
        if raw != "~" {
            out.push(YamlEntry { key, value, raw, nested });
        }
    }
    out
}

fn dedent(lines: &[&str]) -> String {
    let min = lines.iter().filter(|l| !l.trim().is_empty()).map(|l| leading_spaces(l)).min().unwrap_or(0);
    let text: Vec<&str> = lines.iter().map(|l| l.get(min..).unwrap_or("").trim_end()).collect();
    text.join("\n").trim_end().to_string()
}

fn unquote(value: &str) -> String {
    if value.len() >= 2 && value.starts_with('\'') && value.ends_with('\'') {
        return value[1..value.len() - 1].replace("''", "'");
    }
    if value.starts_with('"') {
        if let Ok(s) = serde_json::from_str::<String>(value) {
            return s;
        }
        if value.len() >= 2 && value.ends_with('"') {
            return value[1..value.len() - 1].to_string();
        }
    }
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_lines() {
        assert_eq!(point_line("not ok 2 - compares values"), Some((false, "compares values".to_string())));
        assert_eq!(point_line("ok 1"), Some((true, String::new())));
        assert_eq!(point_line("okay"), None);
        assert_eq!(split_directive("skipped one # SKIP not ready"), ("skipped one".to_string(), Directive::Skip));
        assert_eq!(split_directive(r"issue \#12 # todo"), ("issue #12".to_string(), Directive::Todo));
        assert_eq!(split_directive("a # b"), ("a # b".to_string(), Directive::None));
    }

    #[test]
    fn yaml_values() {
        let lines = [
            "  duration_ms: 1.1",
            "  error: |-",
            "    Expected values",
            "    ",
            "    1 !== 2",
            "  expected:",
            "    a: 2",
            "  message: \"it's \\\"quoted\\\"\"",
            "  signal: ~",
            "  operator: 'strictEqual'",
        ];
        let yaml = parse_yaml(&lines);
        let get = |k: &str| yaml.iter().find(|e| e.key == k).map(|e| e.value.as_str());
        assert_eq!(get("error"), Some("Expected values\n\n1 !== 2"));
        assert_eq!(get("expected"), Some("a: 2"));
        assert_eq!(get("message"), Some("it's \"quoted\""));
        assert_eq!(get("signal"), None);
        assert_eq!(get("operator"), Some("strictEqual"));
    }

    #[test]
    fn generic_tap_without_counters() {
        let text = "TAP version 13\nok 1 - a\nnot ok 2 - b\n  ---\n  message: 'boom'\n  ...\nok 3 - c # SKIP\n1..3\n";
        let report = parse(text).map(TestReport::normalise);
        let report = report.ok().unwrap_or_default();
        assert_eq!((report.passed, report.failed, report.skipped, report.total), (1, 1, 1, 3));
        assert_eq!(report.errors[0].error, "boom");
    }

    #[test]
    fn bail_out_is_a_failure() {
        let report =
            parse("1..3\nok 1 - a\nBail out! database down\n").map(TestReport::normalise).ok().unwrap_or_default();
        assert_eq!(report.failed, 1);
        assert_eq!(report.errors[0].error, "database down");
    }
}
