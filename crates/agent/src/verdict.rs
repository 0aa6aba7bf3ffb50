//! What a verification found: the failures a fix needs and whether the page was opened in a
//! browser. The checks ([`crate::verify`], [`crate::verify_browser`]) make these and the
//! prompts ([`crate::prompts`]) and the build read them, so they live below all of them.

/// One reason the project is not done, with the detail a fix needs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Failure {
    /// `test_failure`, `no_tests`, `test_error`, `template_check`, `server_check`, `runtime`,
    /// `out_of_memory` (the browser check was stopped), `check_failed`; from TRANSPILING `transpile`, `type`, `import`.
    pub kind: String,
    /// One line for events and people.
    pub summary: String,
    /// Everything the model needs: failing tests with messages and locations, output tails.
    pub detail: String,
    /// Where in the project it went wrong, when known (runtime errors in the browser).
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

impl Failure {
    pub fn title(&self) -> &str {
        match self.kind.as_str() {
            "test_failure" => "Failing tests",
            "no_tests" => "No tests",
            "test_error" => "The tests could not run",
            "template_check" => "Problems in the web page",
            "server_check" => "The server does not work",
            "check_failed" => "An acceptance command failed",
            "runtime" => "Errors in the browser",
            "out_of_memory" => "Too much memory",
            "browser_unavailable" => "The page could not be opened in a browser",
            "transpile" => "The code does not compile",
            "type" => "Type errors",
            "import" => "Imports that cannot be found",
            _ => "Problem",
        }
    }
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
