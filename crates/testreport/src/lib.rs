//! Turn a test runner's machine-readable output into a [`TestReport`], and decide
//! how to run a project's tests ([`detect`]).
//!
//! wright shows the model what failed and where, so every parser condenses the
//! runner's output into one [`TestFailure`] per failing test with a short, ANSI-free
//! error text and the most useful source location it can find.
//!
//! Parsers return [`ParseError::NoResults`] when the text holds no recognisable
//! results at all (e.g. a build error, or a script that printed something else);
//! the caller then falls back to the runner's exit code. A run that ran fine but
//! found zero tests is `Ok` with `total == 0`.

mod detect;
mod detect_go;
pub mod diagnose;
mod gotest;
mod jest;
mod junit;
mod libtest;
mod plan;
mod report;
mod tap;
mod text;

pub use detect::{DetectError, JEST_REPORT_FILE, PYTEST_REPORT_FILE, REPORT_DIR, VITEST_REPORT_FILE, detect};
pub use plan::{RunPlan, Runner};
pub use report::{Format, Location, ParseError, TestFailure, TestReport};
pub use text::{MAX_ERROR_CHARS, clean_error_text, strip_ansi};

/// Parses TAP (node's `--test-reporter=tap` in particular). See [`Format::Tap`].
pub fn parse_tap(text: &str) -> Result<TestReport, ParseError> {
    tap::parse(text).map(TestReport::normalise)
}

/// Parses `jest --json` output (the report file, or stdout with noise around the JSON).
pub fn parse_jest_json(text: &str) -> Result<TestReport, ParseError> {
    jest::parse(text).map(TestReport::normalise)
}

/// Parses a JUnit XML report (pytest's `--junitxml` in particular).
pub fn parse_junit_xml(text: &str) -> Result<TestReport, ParseError> {
    junit::parse(text).map(TestReport::normalise)
}

/// Parses the stdout of `cargo test` (libtest's human format, one or more test binaries).
///
/// A crate that does not compile prints nothing to stdout, which gives
/// [`ParseError::NoResults`]; the compiler errors are on stderr.
pub fn parse_libtest(text: &str) -> Result<TestReport, ParseError> {
    libtest::parse(text).map(TestReport::normalise)
}

/// Parses the output of `go test -json` with go's stderr merged in (the [`detect`] plan runs
/// `go test -json … 2>&1`): per-test results, the failing tests' output, and packages that did
/// not build as failures carrying the compiler's message and `file:line:column`.
pub fn parse_go_test_json(text: &str) -> Result<TestReport, ParseError> {
    gotest::parse(text).map(TestReport::normalise)
}

/// Parses `text` in the given format.
pub fn parse(format: Format, text: &str) -> Result<TestReport, ParseError> {
    match format {
        Format::Tap => parse_tap(text),
        Format::JestJson => parse_jest_json(text),
        Format::JunitXml => parse_junit_xml(text),
        Format::Libtest => parse_libtest(text),
        Format::GoTestJson => parse_go_test_json(text),
    }
}
