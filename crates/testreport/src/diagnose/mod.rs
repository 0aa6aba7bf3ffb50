//! Structured errors out of raw tool output: what went wrong, where, and in which package.
//!
//! Two consumers need more than a wall of output. The fix prompt can lead with "TypeError in
//! src/counter.js:2", and learning notes (lessons from earlier error + fix pairs) are matched
//! by library, kind and a generalised [`Diagnosis::pattern`], so the lesson learned from
//! `count.toFixed is not a function` also applies to the next `items.map is not a function`.
//!
//! The reader is line-based and forgiving. It reads node stack traces, node's syntax-error
//! header (`file:line`, then the source line and a caret), jest and npm. `node --test` TAP is
//! read by this crate's one TAP parser ([`crate::parse_tap`]'s), whose YAML fields and folded
//! file output are diagnosed here; a [`TestFailure`] a report already holds is diagnosed from
//! its error text, with its location as the fallback place ([`Evidence::Test`]). Anything it
//! does not recognise is skipped, and no input makes it panic.
//!
//! # File paths
//!
//! Reports name files by absolute path, but the parser does not know the workspace root, so it
//! makes them project-relative like this, first rule that applies:
//! 1. a root the text itself reveals: whatever comes before `/node_modules/` in any absolute
//!    path in the text is the project root;
//! 2. wright's default workspace layout `…/builds/<build-id>/`: what follows it;
//! 3. the last known project directory in the path (`tests/`, `test/`, `__tests__/`, `spec/`,
//!    `src/`, `server/`, `client/`, `public/`, `lib/`, `static/`) and everything after it,
//!    also keeping project directories right before it (`src/tests/x.js`);
//! 4. just the file name.
//!
//! Paths that are already relative are kept. `node:internal` frames, `<anonymous>` and files
//! under `node_modules/` never become [`Diagnosis::file`]; a `node_modules/<pkg>/` path names
//! the [`Diagnosis::library`] instead.

mod paths;
mod patterns;
mod tap;

pub use paths::libraries_in_source;

use crate::{Location, TestFailure};
use paths::{Loc, library_from_path, missing_package, package_name, project_file, project_roots};
use patterns::{
    ANSI, BARE_LINE, ERROR_LINE, FRAME, HEADER, IMPORTED_FROM, NPM_LINE, NPM_NOT_IN_REGISTRY, PATH_PREFIXED, caps,
    classify, clip, generalise, group, is_match, number, replace,
};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// What sort of error this is, at the granularity notes and fix prompts care about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    TestAssertion,
    Syntax,
    Runtime,
    Type,
    ModuleNotFound,
    Other,
}

impl ErrorKind {
    /// The stable snake_case name, the same as the serde form.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TestAssertion => "test_assertion",
            Self::Syntax => "syntax",
            Self::Runtime => "runtime",
            Self::Type => "type",
            Self::ModuleNotFound => "module_not_found",
            Self::Other => "other",
        }
    }

    /// A plain-words label for people (event streams, the fix prompt).
    pub fn describe(self) -> &'static str {
        match self {
            Self::TestAssertion => "a test's expectation was not met",
            Self::Syntax => "the code could not be parsed (syntax error)",
            Self::Runtime => "the code threw an error while running",
            Self::Type => "a value was not of the expected type (e.g. calling something that is not a function)",
            Self::ModuleNotFound => "a module or package could not be found",
            Self::Other => "something else went wrong",
        }
    }
}

/// One error found in tool output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnosis {
    pub kind: ErrorKind,
    /// The error's own message line, trimmed (e.g. "TypeError: count.toFixed is not a function").
    pub message: String,
    /// Project-relative file when the text names one (see the module docs for how).
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// The package the error is about: a missing module, or the library a stack frame runs in.
    pub library: Option<String>,
    /// The message with numbers, quoted values, paths and leading identifiers replaced by `*`,
    /// so that the same mistake matches the same notes, e.g. "* is not a function".
    pub pattern: String,
}

/// At most this many diagnoses per text: more would drown the fix prompt, not help it.
const MAX_DIAGNOSES: usize = 20;
const MAX_PATTERN_CHARS: usize = 200;
/// Messages are single lines, but minified code can make one line enormous.
const MAX_MESSAGE_CHARS: usize = 500;
/// How far after an error line its stack frames may be.
const FRAME_WINDOW: usize = 80;
/// How far before an error line node's `file:line` / source / caret header may be.
const HEADER_WINDOW: usize = 6;

/// The start of one error: its message line and what the line says about it.
struct Start {
    /// Index of the message line.
    at: usize,
    name: Option<String>,
    code: Option<String>,
    /// The message line as printed, trimmed.
    message: String,
    /// The message without its error name, which is what patterns are made from.
    body: String,
}

/// What diagnosis reads: a tool's output as it printed it, or a failing test a report holds.
#[derive(Debug, Clone, Copy)]
pub enum Evidence<'a> {
    /// Raw output: test runner output (TAP included), stack traces, jest, npm.
    Output(&'a str),
    /// A failing test, already parsed: its error text is read, and its location is where the
    /// error is when the text names no place of its own.
    Test(&'a TestFailure),
    /// A tool's output about one place (a browser error at a line of a script): read like
    /// [`Evidence::Output`], with the place as the fallback when the text names none.
    At(&'a str, &'a Location),
}

/// Every distinct error found in `text` (test runner output, node stack traces, TAP from
/// `node --test`, jest, syntax errors with a caret line, npm errors), in order of appearance,
/// deduplicated by (kind, pattern, file, line), at most 20.
pub fn diagnose(text: &str) -> Vec<Diagnosis> {
    diagnose_all(&[Evidence::Output(text)])
}

/// [`diagnose`] over several pieces of evidence, in order, deduplicated and capped together.
/// Project roots revealed by any piece apply to all of them.
pub fn diagnose_all(evidence: &[Evidence<'_>]) -> Vec<Diagnosis> {
    let texts: Vec<Vec<String>> = evidence
        .iter()
        .map(|e| match e {
            Evidence::Output(text) | Evidence::At(text, _) => text.lines().map(clean_line).collect(),
            Evidence::Test(t) => t.error.lines().map(|l| replace(&ANSI, l, "").trim_end().to_string()).collect(),
        })
        .collect();
    let roots = project_roots(&texts.concat());
    let mut found = Found::default();
    for (e, lines) in evidence.iter().zip(&texts) {
        match e {
            Evidence::Output(text) => match crate::tap::read(text) {
                Ok(stream) if stream.has_failures() => tap::diagnose_stream(&stream, &roots, &mut found),
                _ => scan(lines, None, &roots, &mut found),
            },
            Evidence::Test(t) => {
                let place = t.place().map(|p| Loc { path: p.file, line: p.line, column: p.column });
                scan(lines, place.as_ref(), &roots, &mut found);
            }
            Evidence::At(_, p) => {
                let place = Loc { path: p.file.clone(), line: p.line, column: p.column };
                scan(lines, Some(&place), &roots, &mut found);
            }
        }
    }
    found.list
}

/// Reads errors line by line; `context` is where they are when the text does not say.
fn scan(lines: &[String], context: Option<&Loc>, roots: &[String], found: &mut Found) {
    let mut i = 0;
    while i < lines.len() && !found.full() {
        let t = lines[i].trim();
        if is_match(&NPM_LINE, t) {
            let (diagnosis, next) = npm_block(lines, i, roots);
            if let Some(d) = diagnosis {
                found.push(d);
            }
            i = next.max(i + 1);
            continue;
        }
        if let Some(start) = error_start(lines, i) {
            found.push(from_start(lines, start, context, roots));
        }
        i += 1;
    }
}

#[derive(Default)]
struct Found {
    list: Vec<Diagnosis>,
    seen: HashSet<(ErrorKind, String, Option<String>, Option<u32>)>,
}

impl Found {
    fn full(&self) -> bool {
        self.list.len() >= MAX_DIAGNOSES
    }

    fn push(&mut self, d: Diagnosis) {
        if self.list.len() < MAX_DIAGNOSES && self.seen.insert((d.kind, d.pattern.clone(), d.file.clone(), d.line)) {
            self.list.push(d);
        }
    }
}

/// Drops colour codes, `\r` and TAP's `# ` comment prefix, under which node --test prints
/// the output of a test file that could not even load.
fn clean_line(line: &str) -> String {
    let line = replace(&ANSI, line, "");
    let line = line.trim_end();
    match line.strip_prefix('#') {
        Some(rest) => rest.strip_prefix(' ').unwrap_or(rest).to_string(),
        None => line.to_string(),
    }
}

/// Where an error's message line is, if line `i` starts one.
fn error_start(lines: &[String], i: usize) -> Option<Start> {
    let t = lines.get(i)?.trim();
    if let Some(c) = caps(&ERROR_LINE, t) {
        return Some(Start {
            at: i,
            name: group(&c, "name").map(str::to_string),
            code: group(&c, "code").map(str::to_string),
            message: t.to_string(),
            body: group(&c, "body").unwrap_or("").to_string(),
        });
    }
    if let Some(c) = caps(&BARE_LINE, t) {
        return Some(Start {
            at: i,
            name: None,
            code: None,
            message: t.to_string(),
            body: group(&c, "body").unwrap_or(t).to_string(),
        });
    }
    // `throw 'boom'`: node prints the value, then this hint.
    if t.starts_with("(Use `node --trace-uncaught") {
        let at = i.checked_sub(1)?;
        let message = lines.get(at)?.trim();
        // An error line right above was reported already.
        if message.is_empty()
            || message.chars().all(|c| c == '^')
            || is_match(&ERROR_LINE, message)
            || is_match(&BARE_LINE, message)
        {
            return None;
        }
        return Some(Start {
            at,
            name: Some("Uncaught".into()),
            code: None,
            message: message.to_string(),
            body: message.to_string(),
        });
    }
    None
}

/// Where the text moves on to something else, so an error's frames end there.
fn ends_error(lines: &[String], j: usize) -> bool {
    let Some(line) = lines.get(j) else { return true };
    let t = line.trim();
    t.starts_with("not ok")
        || t.starts_with("ok ")
        || t.starts_with("Subtest:")
        || t == "---"
        || t.starts_with('●')
        || t.starts_with("FAIL ")
        || t.starts_with("PASS ")
        || is_match(&NPM_LINE, t)
        || error_start(lines, j).is_some()
}

fn from_start(lines: &[String], start: Start, context: Option<&Loc>, roots: &[String]) -> Diagnosis {
    let kind = classify(start.name.as_deref(), start.code.as_deref(), &start.body);

    let mut frames = Vec::new();
    let end = lines.len().min(start.at.saturating_add(FRAME_WINDOW));
    for j in start.at + 1..end {
        if ends_error(lines, j) {
            break;
        }
        if let Some(loc) = caps(&FRAME, lines[j].trim()).as_ref().and_then(Loc::from_frame) {
            frames.push(loc);
        }
    }
    let header = header_before(lines, start.at);
    let path_prefixed = caps(&PATH_PREFIXED, &start.body).and_then(|c| {
        Some(Loc { path: group(&c, "path")?.to_string(), line: number(&c, "line"), column: number(&c, "col") })
    });
    let imported_from = caps(&IMPORTED_FROM, &start.body)
        .and_then(|c| group(&c, "path").map(|p| Loc { path: p.to_string(), line: None, column: None }));

    // A syntax error is where the parser says, not where the parser's own code is.
    let candidates: Vec<&Loc> = if kind == ErrorKind::Syntax {
        path_prefixed.iter().chain(header.iter()).chain(&frames).chain(context).chain(imported_from.iter()).collect()
    } else {
        frames
            .iter()
            .chain(header.iter())
            .chain(context)
            .chain(imported_from.iter())
            .chain(path_prefixed.iter())
            .collect()
    };
    let place =
        candidates.iter().find_map(|loc| project_file(&loc.path, roots).map(|file| (file, loc.line, loc.column)));

    let library = missing_package(&start.body).or_else(|| {
        if kind == ErrorKind::ModuleNotFound {
            return None;
        }
        header.iter().chain(&frames).find_map(|loc| library_from_path(&loc.path))
    });

    let body = match &path_prefixed {
        Some(_) => caps(&PATH_PREFIXED, &start.body).and_then(|c| group(&c, "rest").map(str::to_string)),
        None => None,
    }
    .unwrap_or_else(|| start.body.clone());

    let (file, line, column) = match place {
        Some((file, line, column)) => (Some(file), line, column),
        None => (None, None, None),
    };
    Diagnosis {
        kind,
        message: clip(&start.message, MAX_MESSAGE_CHARS),
        file,
        line,
        column,
        library,
        pattern: generalise(&body, kind),
    }
}

/// Node's `file:line` header a few lines above an error (syntax errors and uncaught throws),
/// with the column taken from the caret under the source line.
fn header_before(lines: &[String], at: usize) -> Option<Loc> {
    let stop = at.saturating_sub(HEADER_WINDOW);
    let mut h = at;
    while h > stop {
        h -= 1;
        let raw = lines.get(h)?;
        let t = raw.trim();
        if t.starts_with("at ") || t.starts_with("Node.js v") || ends_error(lines, h) {
            return None;
        }
        let Some(c) = caps(&HEADER, t) else { continue };
        let mut loc = Loc { path: group(&c, "path")?.to_string(), line: number(&c, "line"), column: number(&c, "col") };
        if loc.column.is_none() && h + 2 < at {
            let caret = lines.get(h + 2).map(String::as_str).unwrap_or("");
            if !caret.trim().is_empty() && caret.trim().chars().all(|c| c == '^') {
                // Everything was indented alike (by TAP or by wright), the header included.
                let indent = raw.len() - raw.trim_start().len();
                let col = caret.find('^').map(|p| p.saturating_sub(indent) + 1);
                loc.column = col.and_then(|c| u32::try_from(c).ok());
            }
        }
        return Some(loc);
    }
    None
}

/// A run of `npm error` / `npm ERR!` lines: one diagnosis from its informative line.
fn npm_block(lines: &[String], at: usize, roots: &[String]) -> (Option<Diagnosis>, usize) {
    let mut bodies: Vec<(usize, String)> = Vec::new();
    let mut j = at;
    while let Some(c) = lines.get(j).and_then(|l| caps(&NPM_LINE, l.trim())) {
        bodies.push((j, group(&c, "body").unwrap_or("").trim().to_string()));
        j += 1;
    }
    let field = |key: &str| {
        bodies.iter().find_map(|(_, b)| b.strip_prefix(key).and_then(|r| r.strip_prefix(' ')).map(str::trim))
    };
    let code = field("code");
    let path = field("path");
    let noise = ["code ", "errno ", "syscall ", "path ", "A complete log", "Log files were written", "signal "];
    let Some((idx, body)) = bodies.iter().find(|(_, b)| !b.is_empty() && !noise.iter().any(|n| b.starts_with(n)))
    else {
        return (None, j);
    };
    let kind = match code {
        Some("E404") => ErrorKind::ModuleNotFound,
        Some("EJSONPARSE") => ErrorKind::Syntax,
        _ => {
            let k = classify(None, code, body);
            if k == ErrorKind::Runtime { ErrorKind::Other } else { k }
        }
    };
    let file = path.and_then(|p| project_file(p, roots)).or_else(|| {
        (code == Some("EJSONPARSE") || body.contains("Invalid package.json")).then(|| "package.json".to_string())
    });
    let library = bodies
        .iter()
        .find_map(|(_, b)| caps(&NPM_NOT_IN_REGISTRY, b).and_then(|c| group(&c, "name").and_then(package_name)));
    let message = lines.get(*idx).map(|l| l.trim()).unwrap_or(body);
    let d = Diagnosis {
        kind,
        message: clip(message, MAX_MESSAGE_CHARS),
        file,
        line: None,
        column: None,
        library,
        pattern: generalise(body, kind),
    };
    (Some(d), j)
}

#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;
