//! JUnit XML, as pytest's `--junitxml` writes it (see `tests/fixtures/pytest9_*.xml`).
//!
//! Quirks: pytest's default `junit_family=xunit2` has no `file`/`line` attributes
//! (wright's plan asks for xunit1, which has them, with a 0-based `line`); the
//! failing line is in the last `path.py:13: AssertionError` line of the body instead;
//! collection errors (syntax/import errors) are `<error message="collection failure">`
//! on a testcase named after the module, with a traceback full of pytest internals.

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::text::{cap, count, has_line_suffix, strip_ansi};
use crate::{ParseError, TestFailure, TestReport};

#[derive(Debug, Default)]
struct Case {
    name: String,
    classname: String,
    file: Option<String>,
    line: Option<String>,
    outcome: Outcome,
    messages: Vec<String>,
    bodies: Vec<String>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    #[default]
    Passed,
    Failed,
    Skipped,
}

/// Which child of a `<testcase>` the reader is inside, to route its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inside {
    Nothing,
    Problem,
    Other,
}

pub(crate) fn parse(text: &str) -> Result<TestReport, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError::NoResults);
    }
    let mut reader = Reader::from_str(text);
    let mut cases: Vec<Case> = Vec::new();
    let mut current: Option<Case> = None;
    let mut inside = Inside::Nothing;
    let mut depth_in_child = 0usize;
    let mut saw_suite = false;

    loop {
        let event = reader.read_event().map_err(|e| ParseError::Malformed(format!("invalid JUnit XML: {e}")))?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(event, Event::Empty(_));
                let tag = e.local_name();
                let tag = tag.as_ref();
                if let Some(case) = current.as_mut() {
                    if inside == Inside::Nothing {
                        let problem = match tag {
                            b"failure" | b"error" => {
                                case.outcome = Outcome::Failed;
                                true
                            }
                            b"skipped" => {
                                if case.outcome == Outcome::Passed {
                                    case.outcome = Outcome::Skipped;
                                }
                                false
                            }
                            _ => false,
                        };
                        if problem {
                            let message = attr(&reader, e, b"message").unwrap_or_default();
                            if !message.trim().is_empty() {
                                case.messages.push(message);
                            }
                            if !empty {
                                case.bodies.push(String::new());
                            }
                        }
                        if !empty {
                            inside = if problem { Inside::Problem } else { Inside::Other };
                            depth_in_child = 1;
                        }
                    } else if !empty {
                        depth_in_child += 1;
                    }
                } else if tag == b"testcase" {
                    let case = Case {
                        name: attr(&reader, e, b"name").unwrap_or_default(),
                        classname: attr(&reader, e, b"classname").unwrap_or_default(),
                        file: attr(&reader, e, b"file"),
                        line: attr(&reader, e, b"line"),
                        ..Case::default()
                    };
                    if empty {
                        cases.push(case);
                    } else {
                        current = Some(case);
                    }
                } else if tag == b"testsuite" || tag == b"testsuites" {
                    saw_suite = true;
                }
            }
            Event::End(_) => {
                if inside != Inside::Nothing {
                    depth_in_child = depth_in_child.saturating_sub(1);
                    if depth_in_child == 0 {
                        inside = Inside::Nothing;
                    }
                } else if let Some(case) = current.take() {
                    cases.push(case);
                }
            }
            Event::Text(t) if inside == Inside::Problem => {
                let s = t.xml_content().map_err(|e| ParseError::Malformed(e.to_string()))?;
                push_text(&mut current, &s);
            }
            Event::CData(t) if inside == Inside::Problem => {
                let s = t.xml_content().map_err(|e| ParseError::Malformed(e.to_string()))?;
                push_text(&mut current, &s);
            }
            Event::GeneralRef(r) if inside == Inside::Problem => {
                let resolved = match r.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    _ => {
                        let name = r.decode().map_err(|e| ParseError::Malformed(e.to_string()))?;
                        quick_xml::escape::resolve_predefined_entity(&name)
                            .map_or_else(|| format!("&{name};"), str::to_string)
                    }
                };
                push_text(&mut current, &resolved);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if let Some(case) = current.take() {
        cases.push(case);
    }
    if cases.is_empty() && !saw_suite {
        return Err(ParseError::NoResults);
    }

    let mut report = TestReport::default();
    let (mut passed, mut skipped) = (0usize, 0usize);
    for case in &cases {
        match case.outcome {
            Outcome::Passed => passed += 1,
            Outcome::Skipped => skipped += 1,
            Outcome::Failed => report.errors.push(failure(case)),
        }
    }
    let failed = report.errors.len();
    report.passed = count(passed);
    report.skipped = count(skipped);
    report.failed = count(failed);
    report.total = count(passed + failed + skipped);
    Ok(report)
}

fn attr(reader: &Reader<&[u8]>, e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .and_then(|a| a.decode_and_unescape_value(reader.decoder()).ok())
        .map(|v| v.into_owned())
}

fn push_text(current: &mut Option<Case>, s: &str) {
    // Text of one <failure> arrives in pieces (entity references are separate events).
    if let Some(last) = current.as_mut().and_then(|c| c.bodies.last_mut()) {
        last.push_str(s);
    }
}

fn failure(case: &Case) -> TestFailure {
    let test = test_name(case);
    let body = strip_ansi(&case.bodies.join("\n"));
    let body = condense_traceback(&body);
    let mut parts: Vec<String> = Vec::new();
    for m in &case.messages {
        let m = strip_ansi(m).trim().to_string();
        if !body.contains(&m) && !parts.contains(&m) {
            parts.push(m);
        }
    }
    if !body.trim().is_empty() {
        parts.push(body.trim().to_string());
    }
    let error = if parts.is_empty() { "test failed".to_string() } else { parts.join("\n\n") };
    TestFailure { test, error: cap(&error), location: location(case, &body) }
}

/// pytest-style id (`tests/test_calc.py::TestGroup::test_method`) when the file is
/// known, `classname::name` otherwise.
fn test_name(case: &Case) -> String {
    if let Some(file) = case.file.as_deref().filter(|f| !f.is_empty()) {
        let module = file.trim_end_matches(".py").replace(['/', '\\'], ".");
        let class = case.classname.strip_prefix(&module).map(|rest| rest.trim_start_matches('.')).unwrap_or("");
        let mut id = file.to_string();
        if !class.is_empty() {
            id.push_str("::");
            id.push_str(&class.replace('.', "::"));
        }
        id.push_str("::");
        id.push_str(&case.name);
        return id;
    }
    if case.classname.is_empty() { case.name.clone() } else { format!("{}::{}", case.classname, case.name) }
}

fn is_library_path(path: &str) -> bool {
    path.contains("site-packages")
        || path.contains("dist-packages")
        || path.starts_with("<frozen")
        || path.contains("/lib/python")
}

/// Drops pytest/stdlib traceback entries (`/…/site-packages/x.py:12: in f` and their
/// indented lines) unless they carry the `E   ` lines that say what went wrong.
fn condense_traceback(body: &str) -> String {
    let lines: Vec<&str> = body.lines().collect();
    let mut entries: Vec<Vec<&str>> = vec![Vec::new()];
    for line in &lines {
        if frame_header(line).is_some() {
            entries.push(Vec::new());
        }
        if let Some(last) = entries.last_mut() {
            last.push(line);
        }
    }
    let kept: Vec<&str> = entries
        .into_iter()
        .filter(|entry| {
            let header = entry.first().and_then(|l| frame_header(l));
            let library = header.is_some_and(|(path, _)| is_library_path(path));
            !library || entry.iter().any(|l| l.starts_with("E "))
        })
        .flatten()
        .collect();
    kept.join("\n")
}

/// Parses `path.py:13: in func` / `path.py:13: AssertionError` into (path, line).
fn frame_header(line: &str) -> Option<(&str, &str)> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let (head, _) = line.split_once(": ")?;
    let (path, number) = head.rsplit_once(':')?;
    let is_number = !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
    (is_number && !path.is_empty() && !path.contains(' ')).then_some((path, number))
}

fn location(case: &Case, body: &str) -> Option<String> {
    let from_frame = body
        .lines()
        .filter_map(frame_header)
        .rfind(|(path, _)| !is_library_path(path))
        .map(|(path, line)| format!("{path}:{line}"));
    if from_frame.is_some() {
        return from_frame;
    }
    // SyntaxError during collection: `File "/p/test_bad.py", line 1`.
    let from_syntax = body.lines().rev().find_map(|l| {
        let rest = l.split_once("File \"")?.1;
        let (path, rest) = rest.split_once('"')?;
        let number: String = rest.trim_start_matches(", line ").chars().take_while(char::is_ascii_digit).collect();
        let loc = format!("{path}:{number}");
        (!is_library_path(path) && has_line_suffix(&loc)).then_some(loc)
    });
    if from_syntax.is_some() {
        return from_syntax;
    }
    if let Some(file) = case.file.as_deref().filter(|f| !f.is_empty()) {
        // pytest writes a 0-based line number.
        let line = case.line.as_deref().and_then(|l| l.parse::<u64>().ok());
        return Some(match line {
            Some(n) if file.ends_with(".py") => format!("{file}:{}", n + 1),
            Some(n) => format!("{file}:{n}"),
            None => file.to_string(),
        });
    }
    (!case.classname.is_empty()).then(|| case.classname.clone())
}
