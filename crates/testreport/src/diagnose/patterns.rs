//! The fixed regular expressions that read tool output, compiled once, and what is decided
//! from a message alone: its [`ErrorKind`] and its generalised pattern.

use super::{ErrorKind, MAX_PATTERN_CHARS};
use regex::{Captures, Regex};
use std::sync::LazyLock;

/// A fixed pattern compiled once. It is `None` only if the literal were invalid, which the
/// `every_pattern_compiles` test rules out; matching then finds nothing rather than panicking.
pub(super) type Pattern = LazyLock<Option<Regex>>;

macro_rules! pattern {
    ($re:expr) => {
        LazyLock::new(|| Regex::new($re).ok())
    };
}

pub(super) static ANSI: Pattern = pattern!(r"\x1b\[[0-9;?]*[ -/]*[@-~]");
/// `TypeError: …`, `Uncaught ReferenceError: …`, `Error [ERR_MODULE_NOT_FOUND]: …`.
pub(super) static ERROR_LINE: Pattern = pattern!(
    r"^(?:Uncaught\s+)?(?P<name>[A-Z][A-Za-z]*(?:Error|Exception)|Error|UnhandledPromiseRejection)(?:\s*\[(?P<code>[A-Z0-9_]+)\])?:\s*(?P<body>.*)$"
);
/// Messages printed without an error name: assertion diffs, jest, module resolvers.
pub(super) static BARE_LINE: Pattern = pattern!(
    r#"^(?:✘\s*)?(?:\[ERROR\]\s*)?(?P<body>(?:Expected (?:values|"actual") to be |The expression evaluated to a falsy value|The input did not match the regular expression|Missing expected (?:exception|rejection)|Got unwanted (?:exception|rejection)|expect\(|Cannot find (?:module|package) |Could not resolve |Module not found: |Failed to resolve (?:module specifier|import) ).*)$"#
);
/// `at fn (/abs/app.js:12:5)`, `at /abs/app.js:12:5`, `at file:///abs/app.mjs:3:1`.
pub(super) static FRAME: Pattern =
    pattern!(r"^at\s+(?:.*?\()?(?P<loc>[^()\s]+?):(?P<line>\d+)(?::(?P<col>\d+))?\)?\s*\{?$");
/// The same inside a TAP YAML `stack:` block, where node leaves out the `at`.
pub(super) static YAML_FRAME: Pattern = pattern!(r"^(?:.*?\()?(?P<loc>[^()\s]+?):(?P<line>\d+)(?::(?P<col>\d+))?\)?$");
/// Node's syntax/uncaught header, alone on its line: `/abs/app.js:7` or `file:///abs/app.mjs:5`.
pub(super) static HEADER: Pattern =
    pattern!(r"^(?:file://)?(?P<path>(?:[A-Za-z]:)?[^\s:()]*\.[A-Za-z0-9]{1,8}):(?P<line>\d+)(?::(?P<col>\d+))?$");
/// `path:line[:col]`, as in TAP's `location:` and wright's `(at …)`.
pub(super) static LOCATION: Pattern = pattern!(r"^(?P<path>.+?):(?P<line>\d+)(?::(?P<col>\d+))?$");
pub(super) static NPM_LINE: Pattern = pattern!(r"^npm (?:error|ERR!)(?:\s+(?P<body>.*))?$");
/// Babel/jest: `/abs/x.test.js: Unexpected token (2:12)`.
pub(super) static PATH_PREFIXED: Pattern =
    pattern!(r"^(?P<path>(?:[A-Za-z]:)?[^\s:]+\.[A-Za-z0-9]{1,8}): (?P<rest>.*?)(?: \((?P<line>\d+):(?P<col>\d+)\))?$");
pub(super) static IMPORTED_FROM: Pattern = pattern!(r"imported from (?P<path>\S+)");
/// Whatever precedes the first `/node_modules/` of an absolute path: the project root.
pub(super) static NODE_MODULES_ROOT: Pattern =
    pattern!(r#"(?:^|[\s'"(=])(?:file://)?(?P<root>(?:[A-Za-z]:)?[/\\][^\s'"()<>]*?)[/\\]node_modules[/\\]"#);
pub(super) static MISSING_MODULE_NAME: Pattern = pattern!(
    r#"(?:Cannot find (?:module|package)|Could not resolve|Can't resolve|Failed to resolve (?:module specifier|import))\s+['"`](?P<name>[^'"`]+)['"`]"#
);
pub(super) static NPM_NOT_IN_REGISTRY: Pattern = pattern!(r"'(?P<name>@?[^'@\s]+)@[^'\s]*' is not in this registry");

pub(super) static MODULE_MISSING: Pattern = pattern!(
    r"Cannot find (?:module|package) |Could not resolve |Can't resolve |Module not found|Failed to resolve (?:module specifier|import) |ERR_MODULE_NOT_FOUND"
);
pub(super) static ASSERTION: Pattern = pattern!(
    r#"^(?:Expected (?:values|"actual") to be |The expression evaluated to a falsy value|The input did not match|Missing expected (?:exception|rejection)|Got unwanted (?:exception|rejection)|expect\()"#
);
pub(super) static SYNTAX: Pattern = pattern!(
    r"Unexpected token|Unexpected end of input|Invalid or unexpected token|missing \) after argument list|Unexpected identifier|Unexpected string|Unexpected number|Unterminated (?:string|template|regular)|Invalid regular expression|Cannot use import statement outside a module|await is only valid"
);
pub(super) static TYPE: Pattern = pattern!(
    r"is not a function|Cannot read propert(?:y|ies) of|Cannot set propert(?:y|ies) of|is not a constructor|is not iterable|Cannot destructure|Cannot convert undefined or null"
);
pub(super) static RUNTIME: Pattern = pattern!(r"is not defined|Maximum call stack|EADDRINUSE|ECONNREFUSED");

pub(super) static QUOTED: Pattern = pattern!(r#"(^|[^\w])(?:'[^'\n]*'|"[^"\n]*"|`[^`\n]*`)"#);
pub(super) static PATH_TOKEN: Pattern =
    pattern!(r"(?:file://)?(?:[A-Za-z]:)?(?:\.{1,2}/|/)?(?:[\w.@%+~-]+[/\\])+[\w.@%+~-]*(?::\d+)*");
pub(super) static SUBJECT_IS_NOT: Pattern = pattern!(r"^(?:\(intermediate value\)\S*|\S+) is not\b");
pub(super) static NUMBER: Pattern = pattern!(r"(^|[^\w])\d+(?:\.\d+)*");
pub(super) static SPACES: Pattern = pattern!(r"\s+");
pub(super) static PACKAGE_NAME: Pattern = pattern!(r"^(?i)(?:@[a-z0-9_][a-z0-9._~-]*/)?[a-z0-9_][a-z0-9._~-]*$");

pub(super) static REQUIRE: Pattern = pattern!(r#"\brequire\s*\(\s*(?:'([^'\n]+)'|"([^"\n]+)"|`([^`\n$]+)`)\s*\)"#);
pub(super) static IMPORT_FROM: Pattern =
    pattern!(r#"\b(?:import|export)\s+(?:type\s+)?(?:[\w$*{}\s,]+?\s+from\s+)?(?:'([^'\n]+)'|"([^"\n]+)")"#);
pub(super) static DYNAMIC_IMPORT: Pattern =
    pattern!(r#"\bimport\s*\(\s*(?:'([^'\n]+)'|"([^"\n]+)"|`([^`\n$]+)`)\s*\)"#);

pub(super) fn caps<'t>(p: &Pattern, s: &'t str) -> Option<Captures<'t>> {
    p.as_ref()?.captures(s)
}

pub(super) fn is_match(p: &Pattern, s: &str) -> bool {
    p.as_ref().is_some_and(|r| r.is_match(s))
}

pub(super) fn replace(p: &Pattern, s: &str, with: &str) -> String {
    match p.as_ref() {
        Some(r) => r.replace_all(s, with).into_owned(),
        None => s.to_string(),
    }
}

pub(super) fn group<'t>(c: &Captures<'t>, name: &str) -> Option<&'t str> {
    c.name(name).map(|m| m.as_str())
}

pub(super) fn number(c: &Captures<'_>, name: &str) -> Option<u32> {
    group(c, name).and_then(|s| s.parse().ok())
}

/// The first `max_chars` characters of `s`, unmarked: a message or pattern kept for matching.
pub(super) fn clip(s: &str, max_chars: usize) -> String {
    wright_text::head(s, max_chars, wright_text::Unit::Chars).to_string()
}

/// Kind from the error's name, its code and its message, most specific first.
pub(super) fn classify(name: Option<&str>, code: Option<&str>, body: &str) -> ErrorKind {
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

/// The message reduced to what stays the same between occurrences of one mistake.
pub(super) fn generalise(body: &str, kind: ErrorKind) -> String {
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
