//! What the parsers make: one report per run with a failure per failing test, the formats
//! they read, and why a text could not be read. Every parser and the root's entry points use
//! these; they use no parser.

use std::path::Path;

/// One failing test as the model sees it. Serialises to `{"test":..,"error":..,"location":..}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TestFailure {
    /// Full test name, with enclosing suites joined by `" > "` where the runner nests them.
    pub test: String,
    /// Condensed error text: ANSI-free, capped at [`MAX_ERROR_CHARS`].
    pub error: String,
    /// `file:line[:column]` (or just a file) pointing at the test or the failing line.
    pub location: Option<String>,
}

impl TestFailure {
    /// Where the failure is, typed: [`TestFailure::location`] read as `file[:line[:column]]`.
    pub fn place(&self) -> Option<Location> {
        self.location.as_deref().and_then(Location::parse)
    }
}

/// A place in a project's source: a file, and the line and column when known.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Location {
    pub file: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

impl Location {
    /// Reads `file`, `file:line` or `file:line:column` (a `file://` prefix dropped); `None`
    /// for an empty text. A path with colons of its own keeps them when no number follows.
    pub fn parse(text: &str) -> Option<Location> {
        let text = text.trim();
        let text = text.strip_prefix("file://").unwrap_or(text);
        if text.is_empty() {
            return None;
        }
        let number = |s: &str| s.parse::<u32>().ok().filter(|_| s.bytes().all(|b| b.is_ascii_digit()));
        let mut parts = text.rsplitn(3, ':');
        let last = parts.next().and_then(number);
        let mid = parts.next();
        let rest = parts.next();
        let (file, line, column) = match (last, mid, rest) {
            (Some(c), Some(m), Some(f)) if number(m).is_some() => (f, number(m), Some(c)),
            (Some(l), Some(m), Some(f)) => (text.get(..f.len() + 1 + m.len()).unwrap_or(text), Some(l), None),
            (Some(l), Some(f), None) => (f, Some(l), None),
            _ => (text, None, None),
        };
        (!file.is_empty()).then(|| Location { file: file.to_string(), line, column })
    }
}

/// `file:line:column`, leaving out what is unknown.
impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        Ok(())
    }
}

/// Counts and failures of one test run.
///
/// `skipped` includes todo/pending tests. Every entry of `errors` is counted in `failed`,
/// which may therefore also count file- or suite-level failures that are not tests.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TestReport {
    pub passed: u32,
    pub failed: u32,
    pub skipped: u32,
    pub total: u32,
    pub errors: Vec<TestFailure>,
}

impl TestReport {
    /// Rewrites absolute paths under `root` in locations and error texts to project-relative
    /// ones, because runners print absolute paths that mean nothing to the model.
    pub fn relativize_paths(&mut self, root: &Path) {
        let root = root.to_string_lossy();
        let root = root.trim_end_matches('/');
        if root.is_empty() {
            return;
        }
        let prefixes = [format!("file://{root}/"), format!("{root}/")];
        let strip = |s: &str| -> String {
            let mut out = s.to_string();
            for prefix in &prefixes {
                out = out.replace(prefix.as_str(), "");
            }
            out
        };
        for failure in &mut self.errors {
            failure.test = strip(&failure.test);
            failure.error = strip(&failure.error);
            failure.location = failure.location.as_deref().map(strip);
        }
    }

    /// Keeps the counters consistent with the failure list whatever the source said.
    pub(crate) fn normalise(mut self) -> Self {
        let listed = u32::try_from(self.errors.len()).unwrap_or(u32::MAX);
        self.failed = self.failed.max(listed);
        let sum = self.passed.saturating_add(self.failed).saturating_add(self.skipped);
        self.total = self.total.max(sum);
        self
    }
}

/// The machine-readable output formats wright knows how to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Format {
    /// TAP 13/14, as written by `node --test --test-reporter=tap` (and tape, etc.).
    Tap,
    /// The JSON written by `jest --json`.
    JestJson,
    /// JUnit XML, as written by `pytest --junitxml`.
    JunitXml,
    /// The human text output of Rust's libtest (`cargo test`).
    Libtest,
    /// The JSON event stream of `go test -json`, go's stderr merged in.
    GoTestJson,
}

/// Why a runner's output could not be turned into a report.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// The text looks like the format but is broken (invalid JSON/XML, wrong shape).
    #[error("malformed test output: {0}")]
    Malformed(String),
    /// The text contains no test results at all (build error, wrong tool, empty output).
    #[error("no test results found in the output")]
    NoResults,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(file: &str, line: Option<u32>, column: Option<u32>) -> Option<Location> {
        Some(Location { file: file.into(), line, column })
    }

    #[test]
    fn locations_read_file_line_and_column() {
        assert_eq!(Location::parse("tests/a.test.js:5:3"), loc("tests/a.test.js", Some(5), Some(3)));
        assert_eq!(Location::parse("src/app.js:12"), loc("src/app.js", Some(12), None));
        assert_eq!(Location::parse("src/app.js"), loc("src/app.js", None, None));
        assert_eq!(Location::parse("file:///p/a.mjs:3:1"), loc("/p/a.mjs", Some(3), Some(1)));
        assert_eq!(Location::parse("C:x:7"), loc("C:x", Some(7), None));
        assert_eq!(Location::parse("  "), None);
        assert_eq!(Location::parse(":4"), None);
        for text in ["tests/a.test.js:5:3", "src/app.js:12", "src/app.js"] {
            assert_eq!(Location::parse(text).map(|l| l.to_string()).as_deref(), Some(text));
        }
    }

    #[test]
    fn a_failure_names_its_place() {
        let f =
            TestFailure { test: "adds".into(), error: "boom".into(), location: Some("tests/sum.test.js:7:5".into()) };
        assert_eq!(f.place(), loc("tests/sum.test.js", Some(7), Some(5)));
        assert_eq!(TestFailure { location: None, ..f }.place(), None);
    }
}
