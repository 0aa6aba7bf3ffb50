//! What a verification found: the failures a fix needs and whether the page was opened in a
//! browser. The checks ([`crate::verify`], [`crate::verify_browser`]) make these and the
//! prompts ([`crate::prompts`]) and the build read them, so they live below all of them.

use wright_testreport::{Location, TestFailure};
use wright_webcheck::Problem;

/// What sort of failure a verification found. The serde names are the `kind` of
/// `error_detected` events and of stored attempt errors, so they never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// Tests ran and some failed.
    TestFailure,
    /// The project has code but no tests.
    NoTests,
    /// The tests could not run at all.
    TestError,
    /// The web page has problems (webcheck).
    TemplateCheck,
    /// A full-stack app's server (or a Python, Rust or Go API) does not start or answer.
    ServerCheck,
    /// A Python, Rust or Go command-line program does not start: its `--help` run failed.
    ProgramCheck,
    /// One of the user's acceptance commands failed.
    CheckFailed,
    /// Errors in the browser.
    Runtime,
    /// The browser check was stopped for using too much memory.
    OutOfMemory,
    /// A required browser check could not open the page.
    BrowserUnavailable,
    /// TRANSPILING: the code does not compile.
    Transpile,
    /// TRANSPILING: type errors.
    Type,
    /// TRANSPILING: imports that cannot be found.
    Import,
}

impl FailureKind {
    /// The serde name, for events and stored attempts.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TestFailure => "test_failure",
            Self::NoTests => "no_tests",
            Self::TestError => "test_error",
            Self::TemplateCheck => "template_check",
            Self::ServerCheck => "server_check",
            Self::ProgramCheck => "program_check",
            Self::CheckFailed => "check_failed",
            Self::Runtime => "runtime",
            Self::OutOfMemory => "out_of_memory",
            Self::BrowserUnavailable => "browser_unavailable",
            Self::Transpile => "transpile",
            Self::Type => "type",
            Self::Import => "import",
        }
    }

    /// The heading of this kind's section in a fix message.
    pub fn title(self) -> &'static str {
        match self {
            Self::TestFailure => "Failing tests",
            Self::NoTests => "No tests",
            Self::TestError => "The tests could not run",
            Self::TemplateCheck => "Problems in the web page",
            Self::ServerCheck => "The server does not work",
            Self::ProgramCheck => "The program does not start",
            Self::CheckFailed => "An acceptance command failed",
            Self::Runtime => "Errors in the browser",
            Self::OutOfMemory => "Too much memory",
            Self::BrowserUnavailable => "The page could not be opened in a browser",
            Self::Transpile => "The code does not compile",
            Self::Type => "Type errors",
            Self::Import => "Imports that cannot be found",
        }
    }
}

impl From<wright_transpile::Kind> for FailureKind {
    fn from(kind: wright_transpile::Kind) -> Self {
        match kind {
            wright_transpile::Kind::Transpile => Self::Transpile,
            wright_transpile::Kind::Type => Self::Type,
            wright_transpile::Kind::Import => Self::Import,
        }
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One reason the project is not done, with what a fix needs, kept typed: the failing tests
/// and the page's problems with their files and lines, so diagnosis reads values, not text
/// wright wrote itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    /// One line for events and people.
    pub summary: String,
    /// What the model needs beyond the typed items below: a header, output tails.
    pub detail: String,
    /// The failing tests (kind `test_failure`), each with its message and location.
    pub tests: Vec<TestFailure>,
    /// The web page's problems (kind `template_check`), warnings included.
    pub problems: Vec<Problem>,
    /// The tools' own output behind this failure (a test runner's tail, the server's or a
    /// command's output, the browser's error message), which diagnosis reads; never wright's
    /// wording around it. Empty when there is none.
    pub output: String,
    /// Where in the project it went wrong, when known (runtime errors in the browser).
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

impl Failure {
    /// A failure with no typed items and no location.
    pub fn new(kind: FailureKind, summary: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            kind,
            summary: summary.into(),
            detail: detail.into(),
            tests: Vec::new(),
            problems: Vec::new(),
            output: String::new(),
            file: None,
            line: None,
            column: None,
        }
    }

    /// The same failure, with the tool output it came from.
    pub fn with_output(self, output: impl Into<String>) -> Self {
        Self { output: output.into(), ..self }
    }

    /// Where it went wrong, when verification knows (the browser's errors, compile errors).
    pub fn place(&self) -> Option<Location> {
        let file = self.file.clone().filter(|f| !f.is_empty())?;
        Some(Location { file, line: self.line, column: self.column })
    }

    pub fn title(&self) -> &str {
        self.kind.title()
    }

    /// Everything the model reads about this failure: the detail, then each failing test
    /// (`- name (at file:line):` and its indented message) and each page problem
    /// (`- file:line: message`).
    pub fn text(&self) -> String {
        let mut d = self.detail.clone();
        for t in &self.tests {
            d.push_str(&format!("- {}", t.test));
            if let Some(loc) = &t.location {
                d.push_str(&format!(" (at {loc})"));
            }
            d.push_str(&format!(":\n{}\n", indent(&t.error)));
        }
        for p in &self.problems {
            d.push_str(&format!("- {p}\n"));
        }
        d
    }
}

/// Every line of `s` indented by four spaces, trailing blank space dropped.
pub(crate) fn indent(s: &str) -> String {
    s.trim_end().lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

/// Whether a round opened the page in a browser, and if not, why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum BrowserStatus {
    /// Not a web project: there is no page to open.
    #[default]
    NotWeb,
    /// Opened, clicked through, looked at.
    Checked,
    /// Switched off by the user (`--browser-check off`).
    Off,
    /// A web project whose page could not be opened (no Chromium, or it would not start).
    NotRun(String),
}

impl BrowserStatus {
    /// Why a web page the check was meant to open was not, for `complete`, the report and the
    /// last narration line. None when the user switched the check off: that was their choice.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Self::NotRun(why) => Some(why),
            Self::Off | Self::NotWeb | Self::Checked => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wright_webcheck::Severity;

    #[test]
    fn kinds_keep_their_serde_names() {
        for kind in [
            FailureKind::TestFailure,
            FailureKind::NoTests,
            FailureKind::TestError,
            FailureKind::TemplateCheck,
            FailureKind::ServerCheck,
            FailureKind::CheckFailed,
            FailureKind::Runtime,
            FailureKind::OutOfMemory,
            FailureKind::BrowserUnavailable,
            FailureKind::Transpile,
            FailureKind::Type,
            FailureKind::Import,
        ] {
            assert_eq!(serde_json::to_value(kind).ok(), Some(serde_json::Value::from(kind.as_str())));
            assert_eq!(serde_json::from_value::<FailureKind>(kind.as_str().into()).ok(), Some(kind));
        }
        assert_eq!(FailureKind::from(wright_transpile::Kind::Type).as_str(), wright_transpile::Kind::Type.as_str());
    }

    #[test]
    fn typed_tests_and_problems_are_worded_for_the_model() {
        let mut f = Failure::new(FailureKind::TestFailure, "1 of 2 tests failed", "1 of 2 tests failed\n");
        f.tests = vec![TestFailure {
            test: "adds".into(),
            error: "expected 3\nreceived 4".into(),
            location: Some("tests/sum.test.js:7:5".into()),
        }];
        f.problems = vec![Problem {
            file: "index.html".into(),
            line: Some(1),
            severity: Severity::Warning,
            message: "missing doctype".into(),
        }];
        assert_eq!(
            f.text(),
            "1 of 2 tests failed\n- adds (at tests/sum.test.js:7:5):\n    expected 3\n    received 4\n- index.html:1: warning: missing doctype\n"
        );
    }
}
