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
