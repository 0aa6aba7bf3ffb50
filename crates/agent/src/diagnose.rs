//! Structured errors out of raw tool output: what went wrong, where, and in which package.
//!
//! Two consumers need more than a wall of output. The fix prompt can lead with "TypeError in
//! src/counter.js:2", and learning notes (lessons from earlier error + fix pairs) are matched
//! by library, kind and a generalised [`Diagnosis::pattern`], so the lesson learned from
//! `count.toFixed is not a function` also applies to the next `items.map is not a function`.
//!
//! The parser is line-based and forgiving. It reads node stack traces, node's syntax-error
//! header (`file:line`, then the source line and a caret), `node --test` TAP (YAML blocks and
//! the `# `-prefixed output of files that failed to load), wright's own failure details, jest
//! and npm. Anything it does not recognise is skipped, and no input makes it panic.
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

use regex::{Captures, Regex};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::LazyLock;

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
/// Longest TAP YAML block read; keeps odd input from being rescanned over and over.
const YAML_WINDOW: usize = 400;

/// Directories that mark where a project-relative path starts (rule 3 in the module docs).
const PROJECT_DIRS: &[&str] =
    &["tests", "test", "__tests__", "spec", "src", "server", "client", "public", "lib", "static"];

/// Test tooling whose frames show up in stacks without being what the error is about.
const TOOLING_PACKAGES: &[&str] = &["expect", "pretty-format", "mocha", "vitest", "tap", "source-map-support"];

/// Node's built-in modules: not packages anyone installs, so never a "library".
const NODE_BUILTINS: &[&str] = &[
    "assert",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "domain",
    "events",
    "fs",
    "http",
    "http2",
    "https",
    "inspector",
    "module",
    "net",
    "os",
    "path",
    "perf_hooks",
    "process",
    "querystring",
    "readline",
    "repl",
    "stream",
    "string_decoder",
    "sys",
    "timers",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
];

/// A fixed pattern compiled once. It is `None` only if the literal were invalid, which the
/// `every_pattern_compiles` test rules out; matching then finds nothing rather than panicking.
type Pattern = LazyLock<Option<Regex>>;

macro_rules! pattern {
    ($re:expr) => {
        LazyLock::new(|| Regex::new($re).ok())
    };
}

static ANSI: Pattern = pattern!(r"\x1b\[[0-9;?]*[ -/]*[@-~]");
/// `TypeError: …`, `Uncaught ReferenceError: …`, `Error [ERR_MODULE_NOT_FOUND]: …`.
static ERROR_LINE: Pattern = pattern!(
    r"^(?:Uncaught\s+)?(?P<name>[A-Z][A-Za-z]*(?:Error|Exception)|Error|UnhandledPromiseRejection)(?:\s*\[(?P<code>[A-Z0-9_]+)\])?:\s*(?P<body>.*)$"
);
/// Messages printed without an error name: assertion diffs, jest, module resolvers.
static BARE_LINE: Pattern = pattern!(
    r#"^(?:✘\s*)?(?:\[ERROR\]\s*)?(?P<body>(?:Expected (?:values|"actual") to be |The expression evaluated to a falsy value|The input did not match the regular expression|Missing expected (?:exception|rejection)|Got unwanted (?:exception|rejection)|expect\(|Cannot find (?:module|package) |Could not resolve |Module not found: |Failed to resolve (?:module specifier|import) ).*)$"#
);
/// `at fn (/abs/app.js:12:5)`, `at /abs/app.js:12:5`, `at file:///abs/app.mjs:3:1`.
static FRAME: Pattern = pattern!(r"^at\s+(?:.*?\()?(?P<loc>[^()\s]+?):(?P<line>\d+)(?::(?P<col>\d+))?\)?\s*\{?$");
/// The same inside a TAP YAML `stack:` block, where node leaves out the `at`.
static YAML_FRAME: Pattern = pattern!(r"^(?:.*?\()?(?P<loc>[^()\s]+?):(?P<line>\d+)(?::(?P<col>\d+))?\)?$");
/// Node's syntax/uncaught header, alone on its line: `/abs/app.js:7` or `file:///abs/app.mjs:5`.
static HEADER: Pattern =
    pattern!(r"^(?:file://)?(?P<path>(?:[A-Za-z]:)?[^\s:()]*\.[A-Za-z0-9]{1,8}):(?P<line>\d+)(?::(?P<col>\d+))?$");
/// `path:line[:col]`, as in TAP's `location:` and wright's `(at …)`.
static LOCATION: Pattern = pattern!(r"^(?P<path>.+?):(?P<line>\d+)(?::(?P<col>\d+))?$");
/// wright's failure detail: `- test name (at tests/x.test.js:5:1):`.
static VERIFY_CONTEXT: Pattern = pattern!(r"^- .+ \(at (?P<loc>[^()\s]+)\):$");
static NPM_LINE: Pattern = pattern!(r"^npm (?:error|ERR!)(?:\s+(?P<body>.*))?$");
/// Babel/jest: `/abs/x.test.js: Unexpected token (2:12)`.
static PATH_PREFIXED: Pattern =
    pattern!(r"^(?P<path>(?:[A-Za-z]:)?[^\s:]+\.[A-Za-z0-9]{1,8}): (?P<rest>.*?)(?: \((?P<line>\d+):(?P<col>\d+)\))?$");
static IMPORTED_FROM: Pattern = pattern!(r"imported from (?P<path>\S+)");
/// Whatever precedes the first `/node_modules/` of an absolute path: the project root.
static NODE_MODULES_ROOT: Pattern =
    pattern!(r#"(?:^|[\s'"(=])(?:file://)?(?P<root>(?:[A-Za-z]:)?[/\\][^\s'"()<>]*?)[/\\]node_modules[/\\]"#);
static MISSING_MODULE_NAME: Pattern = pattern!(
    r#"(?:Cannot find (?:module|package)|Could not resolve|Can't resolve|Failed to resolve (?:module specifier|import))\s+['"`](?P<name>[^'"`]+)['"`]"#
);
static NPM_NOT_IN_REGISTRY: Pattern = pattern!(r"'(?P<name>@?[^'@\s]+)@[^'\s]*' is not in this registry");

static MODULE_MISSING: Pattern = pattern!(
    r"Cannot find (?:module|package) |Could not resolve |Can't resolve |Module not found|Failed to resolve (?:module specifier|import) |ERR_MODULE_NOT_FOUND"
);
static ASSERTION: Pattern = pattern!(
    r#"^(?:Expected (?:values|"actual") to be |The expression evaluated to a falsy value|The input did not match|Missing expected (?:exception|rejection)|Got unwanted (?:exception|rejection)|expect\()"#
);
static SYNTAX: Pattern = pattern!(
    r"Unexpected token|Unexpected end of input|Invalid or unexpected token|missing \) after argument list|Unexpected identifier|Unexpected string|Unexpected number|Unterminated (?:string|template|regular)|Invalid regular expression|Cannot use import statement outside a module|await is only valid"
);
static TYPE: Pattern = pattern!(
    r"is not a function|Cannot read propert(?:y|ies) of|Cannot set propert(?:y|ies) of|is not a constructor|is not iterable|Cannot destructure|Cannot convert undefined or null"
);
static RUNTIME: Pattern = pattern!(r"is not defined|Maximum call stack|EADDRINUSE|ECONNREFUSED");

static QUOTED: Pattern = pattern!(r#"(^|[^\w])(?:'[^'\n]*'|"[^"\n]*"|`[^`\n]*`)"#);
static PATH_TOKEN: Pattern =
    pattern!(r"(?:file://)?(?:[A-Za-z]:)?(?:\.{1,2}/|/)?(?:[\w.@%+~-]+[/\\])+[\w.@%+~-]*(?::\d+)*");
static SUBJECT_IS_NOT: Pattern = pattern!(r"^(?:\(intermediate value\)\S*|\S+) is not\b");
static NUMBER: Pattern = pattern!(r"(^|[^\w])\d+(?:\.\d+)*");
static SPACES: Pattern = pattern!(r"\s+");
static PACKAGE_NAME: Pattern = pattern!(r"^(?i)(?:@[a-z0-9_][a-z0-9._~-]*/)?[a-z0-9_][a-z0-9._~-]*$");

static REQUIRE: Pattern = pattern!(r#"\brequire\s*\(\s*(?:'([^'\n]+)'|"([^"\n]+)"|`([^`\n$]+)`)\s*\)"#);
static IMPORT_FROM: Pattern =
    pattern!(r#"\b(?:import|export)\s+(?:type\s+)?(?:[\w$*{}\s,]+?\s+from\s+)?(?:'([^'\n]+)'|"([^"\n]+)")"#);
static DYNAMIC_IMPORT: Pattern = pattern!(r#"\bimport\s*\(\s*(?:'([^'\n]+)'|"([^"\n]+)"|`([^`\n$]+)`)\s*\)"#);

fn caps<'t>(p: &Pattern, s: &'t str) -> Option<Captures<'t>> {
    p.as_ref()?.captures(s)
}

fn is_match(p: &Pattern, s: &str) -> bool {
    p.as_ref().is_some_and(|r| r.is_match(s))
}

fn replace(p: &Pattern, s: &str, with: &str) -> String {
    match p.as_ref() {
        Some(r) => r.replace_all(s, with).into_owned(),
        None => s.to_string(),
    }
}

fn group<'t>(c: &Captures<'t>, name: &str) -> Option<&'t str> {
    c.name(name).map(|m| m.as_str())
}

fn number(c: &Captures<'_>, name: &str) -> Option<u32> {
    group(c, name).and_then(|s| s.parse().ok())
}

/// The first `max_chars` characters of `s`, unmarked: a message or pattern kept for matching.
fn clip(s: &str, max_chars: usize) -> String {
    wright_text::head(s, max_chars, wright_text::Unit::Chars).to_string()
}

/// A place named in the text, before it is made project-relative.
#[derive(Debug, Clone)]
struct Loc {
    path: String,
    line: Option<u32>,
    column: Option<u32>,
}

impl Loc {
    fn parse(s: &str) -> Option<Loc> {
        let c = caps(&LOCATION, s.trim())?;
        Some(Loc { path: group(&c, "path")?.to_string(), line: number(&c, "line"), column: number(&c, "col") })
    }

    fn from_frame(c: &Captures<'_>) -> Option<Loc> {
        Some(Loc { path: group(c, "loc")?.to_string(), line: number(c, "line"), column: number(c, "col") })
    }
}

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

/// Every distinct error found in `text` (test runner output, node stack traces, TAP YAML from
/// `node --test`, jest, syntax errors with a caret line, npm errors), in order of appearance,
/// deduplicated by (kind, pattern, file, line), at most 20.
pub fn diagnose(text: &str) -> Vec<Diagnosis> {
    let lines: Vec<String> = text.lines().map(clean_line).collect();
    let roots = project_roots(&lines);
    let mut found = Found::default();
    // The `(at …)` of wright's failure detail: where the failing test is, a fallback location.
    let mut context: Option<Loc> = None;
    let mut i = 0;
    while i < lines.len() && found.list.len() < MAX_DIAGNOSES {
        let t = lines[i].trim();
        if let Some(c) = caps(&VERIFY_CONTEXT, t) {
            context = group(&c, "loc").and_then(Loc::parse);
            i += 1;
            continue;
        }
        if t.starts_with("not ok") || t.starts_with("ok ") {
            context = None;
        }
        if t == "---" {
            if let Some((diagnosis, next)) = yaml_block(&lines, i, &roots) {
                if let Some(d) = diagnosis {
                    found.push(d);
                }
                i = next;
                continue;
            }
        }
        if is_match(&NPM_LINE, t) {
            let (diagnosis, next) = npm_block(&lines, i, &roots);
            if let Some(d) = diagnosis {
                found.push(d);
            }
            i = next.max(i + 1);
            continue;
        }
        if let Some(start) = error_start(&lines, i) {
            found.push(from_start(&lines, start, context.as_ref(), &roots));
        }
        i += 1;
    }
    found.list
}

#[derive(Default)]
struct Found {
    list: Vec<Diagnosis>,
    seen: HashSet<(ErrorKind, String, Option<String>, Option<u32>)>,
}

impl Found {
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
        || is_match(&VERIFY_CONTEXT, t)
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

/// One `---` … `...` YAML block of node's TAP. Returns where to go on, or `None` when this is
/// not such a block after all.
fn yaml_block(lines: &[String], at: usize, roots: &[String]) -> Option<(Option<Diagnosis>, usize)> {
    let indent = |s: &str| s.len() - s.trim_start().len();
    let base = indent(lines.get(at)?);
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut j = at + 1;
    loop {
        if j - at > YAML_WINDOW {
            return None;
        }
        let line = lines.get(j)?;
        let t = line.trim();
        if t == "..." && indent(line) == base {
            j += 1;
            break;
        }
        if t.is_empty() || indent(line) > base {
            j += 1;
            continue;
        }
        let (key, value) = t.split_once(':')?;
        if indent(line) != base || key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        let value = value.trim();
        j += 1;
        let text = if matches!(value, "|" | "|-" | "|+" | ">" | ">-" | ">+") {
            let mut block = Vec::new();
            while let Some(next) = lines.get(j) {
                if !next.trim().is_empty() && indent(next) <= base {
                    break;
                }
                block.push(next.trim().to_string());
                j += 1;
            }
            block.join("\n")
        } else {
            yaml_scalar(value)
        };
        fields.push((key.to_string(), text));
    }
    let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());

    let Some(error) = get("error").or_else(|| get("message")) else { return Some((None, j)) };
    let first = error.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    // Roll-ups: the real errors are reported elsewhere (the subtests, or the file's output).
    if first.is_empty() || first == "test failed" || get("failureType") == Some("subtestsFailed") {
        return Some((None, j));
    }
    let name = get("name").filter(|n| !n.is_empty() && *n != "~");
    let message = match name {
        Some(n) if !first.starts_with(n) => format!("{n}: {first}"),
        _ => first.to_string(),
    };
    let code = get("code");
    let kind = classify(name, code, first);
    let frames: Vec<Loc> = get("stack")
        .unwrap_or("")
        .lines()
        .filter_map(|l| caps(&YAML_FRAME, l.trim()).as_ref().and_then(Loc::from_frame))
        .collect();
    let location = get("location").and_then(Loc::parse);
    let place = frames
        .iter()
        .chain(location.iter())
        .find_map(|loc| project_file(&loc.path, roots).map(|file| (file, loc.line, loc.column)));
    let library = missing_package(first).or_else(|| {
        if kind == ErrorKind::ModuleNotFound {
            return None;
        }
        frames.iter().find_map(|loc| library_from_path(&loc.path))
    });
    let (file, line, column) = match place {
        Some((file, line, column)) => (Some(file), line, column),
        None => (None, None, None),
    };
    let d = Diagnosis {
        kind,
        message: clip(&message, MAX_MESSAGE_CHARS),
        file,
        line,
        column,
        library,
        pattern: generalise(first, kind),
    };
    Some((Some(d), j))
}

/// A YAML flow scalar as node writes them: `'it''s'`, `"a \"b\""`, `~`, or plain.
fn yaml_scalar(v: &str) -> String {
    if v == "~" {
        return String::new();
    }
    if let Some(inner) = v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        return inner.replace("''", "'");
    }
    if let Some(inner) = v.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            }
        }
        return out;
    }
    v.to_string()
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

/// Kind from the error's name, its code and its message, most specific first.
fn classify(name: Option<&str>, code: Option<&str>, body: &str) -> ErrorKind {
    let code = code.unwrap_or("");
    if matches!(code, "ERR_MODULE_NOT_FOUND" | "MODULE_NOT_FOUND") || is_match(&MODULE_MISSING, body) {
        ErrorKind::ModuleNotFound
    } else if name == Some("AssertionError") || code == "ERR_ASSERTION" || is_match(&ASSERTION, body) {
        ErrorKind::TestAssertion
    } else if name == Some("SyntaxError") || is_match(&SYNTAX, body) {
        ErrorKind::Syntax
    } else if name == Some("TypeError") || is_match(&TYPE, body) {
        ErrorKind::Type
    } else if name.is_some() || is_match(&RUNTIME, body) {
        ErrorKind::Runtime
    } else {
        ErrorKind::Other
    }
}

/// The package a "cannot find / resolve" message names, if it is a package and not a path.
fn missing_package(message: &str) -> Option<String> {
    caps(&MISSING_MODULE_NAME, message).and_then(|c| group(&c, "name").and_then(package_name))
}

/// The package a `node_modules/<pkg>/…` path belongs to, unless it is test tooling.
fn library_from_path(path: &str) -> Option<String> {
    let p = path.replace('\\', "/");
    let idx = p.rfind("node_modules/")?;
    let mut parts = p.get(idx + "node_modules/".len()..)?.split('/');
    let first = parts.next()?;
    let name = if first.starts_with('@') { format!("{first}/{}", parts.next()?) } else { first.to_string() };
    // The file itself must follow: `node_modules/x` alone is not inside a package.
    parts.next()?;
    let name = package_name(&name)?;
    let tooling = name.starts_with("jest")
        || name.starts_with("@jest/")
        || name.starts_with("@babel/")
        || name.starts_with("@vitest/")
        || TOOLING_PACKAGES.contains(&name.as_str());
    (!tooling).then_some(name)
}

/// The installable package a module specifier refers to: `lodash/fp` → `lodash`,
/// `@scope/pkg/sub` → `@scope/pkg`; `None` for paths, URLs, `node:` and built-in modules.
fn package_name(spec: &str) -> Option<String> {
    let s = spec.trim();
    if s.is_empty() || s.starts_with(['.', '/', '#', '~']) || s.contains(':') || s.contains('\\') {
        return None;
    }
    let mut parts = s.split('/');
    let first = parts.next()?;
    let name = if first.starts_with('@') { format!("{first}/{}", parts.next()?) } else { first.to_string() };
    if name.len() > 214 || !is_match(&PACKAGE_NAME, &name) || NODE_BUILTINS.contains(&name.as_str()) {
        return None;
    }
    Some(name)
}

/// Absolute roots the text reveals through `…/node_modules/` paths, longest first.
fn project_roots(lines: &[String]) -> Vec<String> {
    let mut roots: Vec<String> = Vec::new();
    for line in lines.iter().filter(|l| l.contains("node_modules")) {
        let Some(re) = NODE_MODULES_ROOT.as_ref() else { break };
        for c in re.captures_iter(line) {
            if let Some(root) = group(&c, "root") {
                let root = root.replace('\\', "/");
                if !roots.contains(&root) {
                    roots.push(root);
                }
            }
        }
    }
    roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
    roots
}

/// The project-relative file for a path from the text, following the rules in the module docs.
fn project_file(raw: &str, roots: &[String]) -> Option<String> {
    let mut p = raw.trim().replace('\\', "/").replace("%20", " ");
    if let Some(rest) = p.strip_prefix("file://") {
        p = rest.to_string();
    }
    // Pages served by a local server: `http://localhost:3000/js/app.js` is `js/app.js`.
    for scheme in ["http://", "https://"] {
        if let Some(rest) = p.strip_prefix(scheme) {
            p = rest.split_once('/').map(|(_, path)| path.to_string())?;
        }
    }
    // `file:///C:/x` leaves `/C:/x`.
    let b = p.as_bytes();
    if b.len() > 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b':' {
        p.remove(0);
    }
    let has_drive = p.as_bytes().get(1) == Some(&b':');
    if p.is_empty()
        || p.starts_with("node:")
        || p.starts_with("internal/")
        || p.contains('<')
        || p.starts_with("node_modules/")
        || p.contains("/node_modules/")
        || (p.contains(':') && !has_drive)
    {
        return None;
    }
    let comps: Vec<&str> = p.split('/').filter(|c| !c.is_empty() && *c != "." && *c != "..").collect();
    let name = *comps.last()?;
    let looks_like_file = name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric())
    });
    if !looks_like_file {
        return None;
    }
    let absolute = p.starts_with('/') || has_drive;
    if !absolute && !p.starts_with("../") {
        return Some(comps.join("/"));
    }
    for root in roots {
        if let Some(rest) = p.strip_prefix(root.as_str()).and_then(|r| r.strip_prefix('/')) {
            if !rest.is_empty() {
                return Some(rest.to_string());
            }
        }
    }
    if let Some(k) = comps.iter().rposition(|c| *c == "builds") {
        if k + 2 < comps.len() {
            return Some(comps[k + 2..].join("/"));
        }
    }
    let dirs = &comps[..comps.len() - 1];
    if let Some(mut k) = dirs.iter().rposition(|c| PROJECT_DIRS.contains(c)) {
        while k > 0 && PROJECT_DIRS.contains(&dirs[k - 1]) {
            k -= 1;
        }
        return Some(comps[k..].join("/"));
    }
    Some(name.to_string())
}

/// The message reduced to what stays the same between occurrences of one mistake.
fn generalise(body: &str, kind: ErrorKind) -> String {
    let mut s = body.trim().to_string();
    // npm's JSON errors quote the broken text itself, which is different every time.
    if let Some(i) = s.find(" while parsing") {
        s.truncate(i);
    }
    let s = replace(&QUOTED, &s, "$1'*'");
    let s = replace(&PATH_TOKEN, &s, "*");
    let s = replace(&SUBJECT_IS_NOT, &s, "* is not");
    let s = replace(&NUMBER, &s, "$1*");
    let s = replace(&SPACES, &s, " ");
    let s = clip(s.trim(), MAX_PATTERN_CHARS);
    let s = s.trim();
    if s.is_empty() { kind.as_str().to_string() } else { s.to_string() }
}

/// Package names `text` is about: `require('x')`, `import … from 'x'`, `import('x')`, or the
/// dependencies when `text` is a package.json. Bare names only (no paths, URLs, `node:` or
/// built-in modules), reduced to the package (`lodash/fp` → `lodash`), in order of appearance.
pub fn libraries_in_source(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |spec: &str| {
        if let Some(name) = package_name(spec) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    };
    if text.trim_start().starts_with('{') {
        if let Ok(serde_json::Value::Object(manifest)) = serde_json::from_str::<serde_json::Value>(text) {
            for key in ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"] {
                if let Some(serde_json::Value::Object(deps)) = manifest.get(key) {
                    deps.keys().for_each(|k| add(k));
                }
            }
            return out;
        }
    }
    let mut found: Vec<(usize, String)> = Vec::new();
    for p in [&REQUIRE, &IMPORT_FROM, &DYNAMIC_IMPORT] {
        let Some(re) = p.as_ref() else { continue };
        for c in re.captures_iter(text) {
            let spec = (1..=3).find_map(|g| c.get(g));
            if let (Some(whole), Some(spec)) = (c.get(0), spec) {
                found.push((whole.start(), spec.as_str().to_string()));
            }
        }
    }
    found.sort_by_key(|(at, _)| *at);
    for (_, spec) in &found {
        add(spec);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    macro_rules! fixture {
        ($name:literal) => {
            include_str!(concat!("../tests/fixtures/diagnose/", $name, ".txt"))
        };
    }

    /// What one diagnosis should be; `None` fields must be absent.
    struct Want {
        kind: ErrorKind,
        message: &'static str,
        file: Option<&'static str>,
        line: Option<u32>,
        library: Option<&'static str>,
        pattern: &'static str,
    }

    fn check(d: &Diagnosis, w: &Want) {
        assert_eq!(d.kind, w.kind, "kind of {d:?}");
        assert_eq!(d.message, w.message, "message of {d:?}");
        assert_eq!(d.file.as_deref(), w.file, "file of {d:?}");
        assert_eq!(d.line, w.line, "line of {d:?}");
        assert_eq!(d.library.as_deref(), w.library, "library of {d:?}");
        assert_eq!(d.pattern, w.pattern, "pattern of {d:?}");
    }

    fn only(text: &str, w: Want) -> Diagnosis {
        let all = diagnose(text);
        assert_eq!(all.len(), 1, "{all:#?}");
        check(&all[0], &w);
        all[0].clone()
    }

    const ASSERT_TEST: Want = Want {
        kind: ErrorKind::TestAssertion,
        message: "AssertionError: Expected values to be strictly equal:",
        file: Some("tests/assert.test.js"),
        line: Some(6),
        library: None,
        pattern: "Expected values to be strictly equal:",
    };
    const TYPE_TEST: Want = Want {
        kind: ErrorKind::Type,
        message: "TypeError: count.toFixed is not a function",
        file: Some("src/counter.js"),
        line: Some(2),
        library: None,
        pattern: "* is not a function",
    };
    const REF_TEST: Want = Want {
        kind: ErrorKind::Runtime,
        message: "ReferenceError: totl is not defined",
        file: Some("tests/ref.test.js"),
        line: Some(5),
        library: None,
        pattern: "* is not defined",
    };
    const MISSING_TEST: Want = Want {
        kind: ErrorKind::ModuleNotFound,
        message: "Error: Cannot find module 'express'",
        file: Some("tests/missing.test.js"),
        line: Some(2),
        library: Some("express"),
        pattern: "Cannot find module '*'",
    };
    const SYNTAX_TEST: Want = Want {
        kind: ErrorKind::Syntax,
        message: "SyntaxError: missing ) after argument list",
        file: Some("tests/syntax.test.js"),
        line: Some(5),
        library: None,
        pattern: "missing ) after argument list",
    };
    const LIB_TEST: Want = Want {
        kind: ErrorKind::Type,
        message: "TypeError: Cannot read properties of null (reading 'querySelector')",
        file: Some("tests/lib.test.js"),
        line: Some(5),
        library: Some("@acme/widgets"),
        pattern: "Cannot read properties of null (reading '*')",
    };

    #[test]
    fn node_test_failing_assertion() {
        let d = only(fixture!("node_test_assert"), ASSERT_TEST);
        assert_eq!(d.column, Some(10));
    }

    #[test]
    fn node_test_type_error_points_at_the_throwing_source_file() {
        let d = only(fixture!("node_test_type"), TYPE_TEST);
        assert_eq!(d.column, Some(39));
    }

    #[test]
    fn node_test_reference_error() {
        only(fixture!("node_test_ref"), REF_TEST);
    }

    #[test]
    fn node_test_missing_module_is_read_from_the_file_output_not_the_wrapper() {
        let d = only(fixture!("node_test_missing"), MISSING_TEST);
        assert_eq!(d.column, Some(17));
    }

    #[test]
    fn node_test_syntax_error_uses_the_header_and_caret() {
        let d = only(fixture!("node_test_syntax"), SYNTAX_TEST);
        assert_eq!(d.column, Some(13));
    }

    #[test]
    fn node_test_error_inside_a_scoped_package() {
        let d = only(fixture!("node_test_lib"), LIB_TEST);
        assert_eq!(d.column, Some(3));
    }

    #[test]
    fn node_test_whole_run_keeps_order_and_skips_roll_ups() {
        let all = diagnose(fixture!("node_test_all"));
        let wants = [ASSERT_TEST, LIB_TEST, MISSING_TEST, REF_TEST, SYNTAX_TEST, TYPE_TEST];
        assert_eq!(all.len(), wants.len(), "{all:#?}");
        for (d, w) in all.iter().zip(&wants) {
            check(d, w);
        }
    }

    #[test]
    fn wright_failure_detail_gives_the_same_diagnoses_as_raw_tap() {
        // verify_detail.txt is node_test_all.txt as wright's verify step words it.
        let detail = diagnose(fixture!("verify_detail"));
        let raw = diagnose(fixture!("node_test_all"));
        let key = |d: &Diagnosis| (d.kind, d.pattern.clone(), d.file.clone(), d.line, d.column);
        assert_eq!(detail.iter().map(key).collect::<Vec<_>>(), raw.iter().map(key).collect::<Vec<_>>());
        let libraries = |all: &[Diagnosis]| all.iter().map(|d| d.library.clone()).collect::<Vec<_>>();
        let mut expected = libraries(&raw);
        // The detail keeps only the project's own stack frame, so the package in the
        // node_modules frame above it is gone; a missing module is still named by its message.
        expected[1] = None;
        assert_eq!(libraries(&detail), expected);
        assert_eq!(detail[0].message, "Expected values to be strictly equal:");
        assert_eq!(detail[5].message, "TypeError: count.toFixed is not a function");
    }

    #[test]
    fn node_type_error_in_a_server() {
        let d = only(
            fixture!("node_type_server"),
            Want {
                kind: ErrorKind::Type,
                message: "TypeError: Cannot read properties of undefined (reading 'reduce')",
                file: Some("server/index.js"),
                line: Some(3),
                library: None,
                pattern: "Cannot read properties of undefined (reading '*')",
            },
        );
        assert_eq!(d.column, Some(15));
    }

    #[test]
    fn node_type_error_thrown_inside_a_package_blames_the_package_and_the_calling_file() {
        let d = only(
            fixture!("node_type_in_library"),
            Want {
                kind: ErrorKind::Type,
                message: "TypeError: s.padStart is not a function",
                file: Some("src/uselib.js"),
                line: Some(2),
                library: Some("left-pad"),
                pattern: "* is not a function",
            },
        );
        assert_eq!(d.column, Some(13));
    }

    #[test]
    fn node_syntax_error_commonjs() {
        let d = only(
            fixture!("node_syntax_cjs"),
            Want {
                kind: ErrorKind::Syntax,
                message: "SyntaxError: Unexpected token ';'",
                file: Some("public/js/app.js"),
                line: Some(6),
                library: None,
                pattern: "Unexpected token '*'",
            },
        );
        assert_eq!(d.column, Some(3));
    }

    #[test]
    fn node_syntax_error_esm_file_url_without_caret() {
        let d = only(
            fixture!("node_syntax_esm"),
            Want {
                kind: ErrorKind::Syntax,
                message: "SyntaxError: Unexpected end of input",
                file: Some("src/esm_syntax.mjs"),
                line: Some(5),
                library: None,
                pattern: "Unexpected end of input",
            },
        );
        assert_eq!(d.column, None);
    }

    #[test]
    fn node_esm_missing_package() {
        only(
            fixture!("node_esm_missing_package"),
            Want {
                kind: ErrorKind::ModuleNotFound,
                message: "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'express' imported from /tmp/wright-fixtures/src/todo-app/server/esm.mjs",
                file: Some("server/esm.mjs"),
                line: None,
                library: Some("express"),
                pattern: "Cannot find package '*' imported from *",
            },
        );
    }

    #[test]
    fn node_esm_missing_relative_file_has_no_library() {
        only(
            fixture!("node_esm_missing_relative"),
            Want {
                kind: ErrorKind::ModuleNotFound,
                message: "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/tmp/wright-fixtures/src/todo-app/src/helpers.js' imported from /tmp/wright-fixtures/src/todo-app/src/esm_rel.mjs",
                file: Some("src/esm_rel.mjs"),
                line: None,
                library: None,
                pattern: "Cannot find module '*' imported from *",
            },
        );
    }

    #[test]
    fn node_esm_throw_with_file_url_frames() {
        let d = only(
            fixture!("node_esm_throw"),
            Want {
                kind: ErrorKind::Runtime,
                message: "Error: user 42 not found",
                file: Some("src/reject.mjs"),
                line: Some(1),
                library: None,
                pattern: "user * not found",
            },
        );
        assert_eq!(d.column, Some(38));
    }

    #[test]
    fn node_range_error() {
        only(
            fixture!("node_range"),
            Want {
                kind: ErrorKind::Runtime,
                message: "RangeError: Invalid array length",
                file: Some("src/range.js"),
                line: Some(1),
                library: None,
                pattern: "Invalid array length",
            },
        );
    }

    #[test]
    fn node_uncaught_assertion_outside_a_test_runner() {
        only(
            fixture!("node_assert_uncaught"),
            Want {
                kind: ErrorKind::TestAssertion,
                message: "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
                file: Some("src/plain_assert.js"),
                line: Some(2),
                library: None,
                pattern: "Expected values to be strictly equal:",
            },
        );
    }

    #[test]
    fn node_thrown_string() {
        let d = only(
            fixture!("node_throw_string"),
            Want {
                kind: ErrorKind::Runtime,
                message: "boom",
                file: Some("src/throw_string.js"),
                line: Some(1),
                library: None,
                pattern: "boom",
            },
        );
        assert_eq!(d.column, Some(17));
    }

    #[test]
    fn node_unhandled_rejection() {
        let d = only(
            fixture!("node_unhandled_rejection"),
            Want {
                kind: ErrorKind::Runtime,
                message: "UnhandledPromiseRejection: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason \"oops\".",
                file: None,
                line: None,
                library: None,
                pattern: "This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason '*'.",
            },
        );
        assert!(d.pattern.chars().count() <= MAX_PATTERN_CHARS);
    }

    #[test]
    fn jest_failed_expectation() {
        let d = only(
            fixture!("jest_assertion"),
            Want {
                kind: ErrorKind::TestAssertion,
                message: "expect(received).toBe(expected) // Object.is equality",
                file: Some("tests/cart.test.js"),
                line: Some(3),
                library: None,
                pattern: "expect(received).toBe(expected) // Object.is equality",
            },
        );
        assert_eq!(d.column, Some(47));
    }

    #[test]
    fn jest_missing_module_ignores_jest_resolve_frames() {
        only(
            fixture!("jest_missing"),
            Want {
                kind: ErrorKind::ModuleNotFound,
                message: "Cannot find module 'dayjs' from 'tests/missing.test.js'",
                file: Some("tests/missing.test.js"),
                line: Some(1),
                library: Some("dayjs"),
                pattern: "Cannot find module '*' from '*'",
            },
        );
    }

    #[test]
    fn jest_babel_syntax_error_takes_the_place_from_the_message() {
        let d = only(
            fixture!("jest_syntax"),
            Want {
                kind: ErrorKind::Syntax,
                message: "SyntaxError: /tmp/wright-fixtures/src/todo-app/jest/tests/syntax.test.js: Unexpected token (2:12)",
                file: Some("tests/syntax.test.js"),
                line: Some(2),
                library: None,
                pattern: "Unexpected token",
            },
        );
        assert_eq!(d.column, Some(12));
    }

    #[test]
    fn npm_missing_script() {
        only(
            fixture!("npm_missing_script"),
            Want {
                kind: ErrorKind::Other,
                message: "npm error Missing script: \"start\"",
                file: None,
                line: None,
                library: None,
                pattern: "Missing script: '*'",
            },
        );
    }

    #[test]
    fn npm_broken_package_json() {
        only(
            fixture!("npm_bad_json"),
            Want {
                kind: ErrorKind::Syntax,
                message: "npm error JSON.parse Invalid package.json: JSONParseError: Expected property name or '}' in JSON at position 27 while parsing near \"...:\\\"np\\\", \\\"scripts\\\": {\\n\"",
                file: Some("package.json"),
                line: None,
                library: None,
                pattern: "JSON.parse Invalid package.json: JSONParseError: Expected property name or '*' in JSON at position *",
            },
        );
    }

    #[test]
    fn every_fixture_serialises_and_round_trips() {
        let all = diagnose(fixture!("node_test_all"));
        let json = serde_json::to_string(&all).unwrap_or_default();
        assert!(json.contains("\"kind\":\"module_not_found\""), "{json}");
        let back: Vec<Diagnosis> = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, all);
    }

    #[test]
    fn every_pattern_compiles() {
        let all: Vec<&Pattern> = vec![
            &ANSI,
            &ERROR_LINE,
            &BARE_LINE,
            &FRAME,
            &YAML_FRAME,
            &HEADER,
            &LOCATION,
            &VERIFY_CONTEXT,
            &NPM_LINE,
            &PATH_PREFIXED,
            &IMPORTED_FROM,
            &NODE_MODULES_ROOT,
            &MISSING_MODULE_NAME,
            &NPM_NOT_IN_REGISTRY,
            &MODULE_MISSING,
            &ASSERTION,
            &SYNTAX,
            &TYPE,
            &RUNTIME,
            &QUOTED,
            &PATH_TOKEN,
            &SUBJECT_IS_NOT,
            &NUMBER,
            &SPACES,
            &PACKAGE_NAME,
            &REQUIRE,
            &IMPORT_FROM,
            &DYNAMIC_IMPORT,
        ];
        for (i, p) in all.iter().enumerate() {
            assert!(p.is_some(), "pattern #{i} does not compile");
        }
    }

    #[test]
    fn kinds_have_stable_names_matching_serde() {
        for kind in [
            ErrorKind::TestAssertion,
            ErrorKind::Syntax,
            ErrorKind::Runtime,
            ErrorKind::Type,
            ErrorKind::ModuleNotFound,
            ErrorKind::Other,
        ] {
            assert_eq!(serde_json::to_value(kind).ok(), Some(serde_json::json!(kind.as_str())));
            assert!(!kind.describe().is_empty());
        }
    }

    #[test]
    fn classification_follows_the_message() {
        let kind = |text: &str| diagnose(text).first().map(|d| d.kind);
        assert_eq!(kind("Uncaught TypeError: x.map is not a function"), Some(ErrorKind::Type));
        assert_eq!(kind("SyntaxError: Invalid or unexpected token"), Some(ErrorKind::Syntax));
        assert_eq!(kind("Error: listen EADDRINUSE: address already in use :::3000"), Some(ErrorKind::Runtime));
        assert_eq!(kind("✘ [ERROR] Could not resolve \"react\""), Some(ErrorKind::ModuleNotFound));
        assert_eq!(
            kind("Module not found: Error: Can't resolve 'lodash/fp' in '/w/src'"),
            Some(ErrorKind::ModuleNotFound)
        );
        assert_eq!(kind("all good\nnothing to see"), None);
    }

    #[test]
    fn library_comes_from_the_message_for_resolver_errors() {
        let lib = |text: &str| diagnose(text).first().and_then(|d| d.library.clone());
        assert_eq!(lib("Module not found: Error: Can't resolve 'lodash/fp' in '/w/src'"), Some("lodash".into()));
        assert_eq!(lib("✘ [ERROR] Could not resolve \"@scope/pkg/sub\""), Some("@scope/pkg".into()));
        assert_eq!(lib("Error: Cannot find module './app'"), None);
        assert_eq!(lib("Error: Cannot find module 'node:fs'"), None);
    }

    #[test]
    fn project_relative_paths() {
        let rel = |p: &str| project_file(p, &[]);
        assert_eq!(rel("/home/me/code/app/tests/x.test.js"), Some("tests/x.test.js".into()));
        // The last project dir wins over one in the workspace path…
        assert_eq!(rel("/home/me/src/app/server/index.js"), Some("server/index.js".into()));
        // …and project dirs right before it stay.
        assert_eq!(rel("/home/me/app/src/tests/x.test.js"), Some("src/tests/x.test.js".into()));
        assert_eq!(rel("/home/me/app/public/js/app.js"), Some("public/js/app.js".into()));
        assert_eq!(rel("/home/me/app/app.js"), Some("app.js".into()));
        assert_eq!(rel("/data/wright/builds/b-123/index.js"), Some("index.js".into()));
        assert_eq!(rel("/data/wright/builds/b-123/src/x/y.js"), Some("src/x/y.js".into()));
        assert_eq!(rel("file:///C:/Users/me/app/src/app.js"), Some("src/app.js".into()));
        assert_eq!(rel("C:\\Users\\me\\app\\tests\\a.test.js"), Some("tests/a.test.js".into()));
        assert_eq!(rel("http://127.0.0.1:8080/js/app.js"), Some("js/app.js".into()));
        assert_eq!(rel("./tests/a.test.js"), Some("tests/a.test.js".into()));
        assert_eq!(rel("node:internal/modules/cjs/loader"), None);
        assert_eq!(rel("/w/node_modules/x/index.js"), None);
        assert_eq!(rel("<anonymous>"), None);
        // A root the text reveals beats the directory rule.
        let roots = vec!["/home/me/src/app".to_string()];
        assert_eq!(project_file("/home/me/src/app/server.js", &roots), Some("server.js".into()));
    }

    #[test]
    fn a_node_modules_path_in_the_text_reveals_the_root() {
        let text = "TypeError: s.padStart is not a function\n    at leftPad (/home/me/src/shop/node_modules/left-pad/index.js:1:52)\n    at Object.<anonymous> (/home/me/src/shop/app.js:3:13)\n";
        let d = &diagnose(text)[0];
        assert_eq!((d.file.as_deref(), d.line, d.library.as_deref()), (Some("app.js"), Some(3), Some("left-pad")));
    }

    #[test]
    fn duplicates_are_dropped_and_the_list_is_capped() {
        let once = "TypeError: a.b is not a function\n    at f (/w/src/app.js:3:1)\n";
        assert_eq!(diagnose(&once.repeat(5)).len(), 1);
        assert_eq!(diagnose("TypeError: x\n(Use `node --trace-uncaught ...` to show where)\n").len(), 1);
        let many: String = (0..50).map(|i| format!("Error: boom\n    at f (/w/src/app.js:{i}:1)\n")).collect();
        assert_eq!(diagnose(&many).len(), MAX_DIAGNOSES);
    }

    #[test]
    fn big_odd_input_stays_fast() {
        // Unterminated, ever deeper YAML blocks and error lines without frames: bounded windows
        // keep this linear-ish (it once could rescan the rest of the text from every line).
        let text: String = (0..20_000)
            .map(|i| format!("{}---\n{}key: v\nTypeError: x\n", " ".repeat(i % 300), " ".repeat(i % 300 + 1)))
            .collect();
        let started = std::time::Instant::now();
        assert_eq!(diagnose(&text).len(), 1);
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    }

    #[test]
    fn patterns_generalise_values() {
        let p = |body: &str| generalise(body, ErrorKind::Other);
        assert_eq!(p("(intermediate value).map is not a function"), "* is not a function");
        assert_eq!(p("Cannot access 'total' before initialization"), "Cannot access '*' before initialization");
        assert_eq!(p("test timed out after 100ms"), "test timed out after *ms");
        assert_eq!(
            p("listen EADDRINUSE: address already in use :::3000"),
            "listen EADDRINUSE: address already in use :::*"
        );
        assert_eq!(p("Can't resolve 'x' in '/w/src'"), "Can't resolve '*' in '*'");
        assert_eq!(p("   "), "other");
    }

    #[test]
    fn libraries_in_source_files() {
        let src = r#"
            import express from 'express';
            import { useState, useEffect } from "react";
            import * as fp from 'lodash/fp';
            import './styles.css';
            import test from 'node:test';
            import fs from 'fs';
            export { x } from '@scope/pkg/sub';
            const chalk = require('chalk');
            const local = require('./local');
            const again = require("express");
            const lazy = await import('dayjs');
            import {
              a,
              b,
            } from 'multi-line';
        "#;
        assert_eq!(
            libraries_in_source(src),
            ["express", "react", "lodash", "@scope/pkg", "chalk", "dayjs", "multi-line"]
        );
    }

    #[test]
    fn libraries_in_package_json() {
        let manifest =
            r#"{"name":"app","dependencies":{"express":"^4","@acme/ui":"1"},"devDependencies":{"jest":"^29"}}"#;
        assert_eq!(libraries_in_source(manifest), ["express", "@acme/ui", "jest"]);
        assert!(libraries_in_source("{ not json").is_empty());
    }

    const FRAGMENTS: &[&str] = &[
        "\n",
        "  ",
        "# ",
        "---",
        "...",
        "  error: |-",
        "  error: '",
        "  name: 'TypeError'",
        "  stack: |-",
        "  location: '",
        "TypeError: ",
        "SyntaxError: ",
        "Error [ERR_MODULE_NOT_FOUND]: ",
        "Cannot find module '",
        "'",
        "\"",
        "`",
        "    at f (",
        "at ",
        "/abs/tests/x.test.js",
        "file:///C:/a/src/b.mjs",
        "node_modules/",
        "@scope/",
        "node:internal/x",
        ":12",
        ":5",
        ")",
        "^^^",
        "- t (at x.js:1):",
        "npm error ",
        "code E404",
        "(Use `node --trace-uncaught",
        "é",
        "\u{1b}[31m",
        "require('",
        "import x from '",
        "{\"dependencies\":{\"",
        "9999999999999",
    ];

    proptest! {
        #[test]
        fn never_panics_on_any_text(text in any::<String>()) {
            for d in diagnose(&text) {
                prop_assert!(!d.pattern.is_empty());
                prop_assert!(d.pattern.chars().count() <= MAX_PATTERN_CHARS);
            }
            let _ = libraries_in_source(&text);
        }

        #[test]
        fn never_panics_on_error_shaped_text(parts in prop::collection::vec(prop::sample::select(FRAGMENTS), 0..60)) {
            let text = parts.concat();
            let all = diagnose(&text);
            prop_assert!(all.len() <= MAX_DIAGNOSES);
            for d in all {
                prop_assert!(!d.pattern.is_empty());
                prop_assert!(d.pattern.chars().count() <= MAX_PATTERN_CHARS);
            }
            let _ = libraries_in_source(&text);
        }
    }
}
