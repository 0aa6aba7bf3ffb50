//! What a browser check runs with (its settings, the outside APIs it may reach, how the
//! browser is launched) and what it reports: the crate root's check and every module below it
//! share these, and they depend on none of them.

use crate::find::BrowserMissing;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use wright_sandbox::CommandRunner;

/// Whether VERIFYING opens the page in a browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BrowserMode {
    /// Always; a missing browser is a failure of the check, not a silent skip.
    On,
    Off,
    /// When a Chromium is installed (the default).
    #[default]
    Auto,
}

impl BrowserMode {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" => Some(Self::On),
            "off" | "false" | "no" => Some(Self::Off),
            "auto" => Some(Self::Auto),
            _ => None,
        }
    }
}

/// How the check runs. Configuration, passed in: nothing is read from the environment here.
#[derive(Debug, Clone)]
pub struct BrowserSettings {
    pub mode: BrowserMode,
    /// The Chromium to run; `None` looks on `PATH`.
    pub chromium: Option<PathBuf>,
    /// Most clicks and form submissions after load.
    pub max_actions: u32,
    /// The whole check, start to screenshot.
    pub time_limit: Duration,
    /// Viewport and screenshot size, in CSS pixels.
    pub width: u32,
    pub height: u32,
    /// Outside hosts the page may reach, through the build's filtering proxy; `None`: only the
    /// page's own origin, as without `[egress]`.
    pub outside: Option<OutsideAccess>,
    /// Most memory the check's processes may hold together (Chromium's, the host's and a
    /// full-stack app's server), measured by wright from `/proc`; past it the check stops and
    /// the page fails with [`FindingKind::OutOfMemory`]. Chromium's JavaScript heap is held
    /// to it too (`--max-old-space-size`). wright sets it to three quarters of the sandbox's
    /// memory limit (1.5 GiB by default), below the memory cgroup where there is one.
    pub memory_limit: u64,
}

/// The part of a build's outside access the page gets ([egress], docs/egress.md). wright makes
/// such requests itself, through the proxy, and hands Chromium the answers: the proxy checks,
/// counts and reports them as it does the sandbox's, and Chromium needs no proxy of its own
/// (its background requests stay unanswered, as without outside access).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutsideAccess {
    /// The proxy on this machine's loopback with the build's token as credentials,
    /// `http://wright:<token>@127.0.0.1:PORT` (its port refuses requests without them).
    pub proxy: String,
    /// The hosts the build may reach: the proxy's own list, matched the proxy's way.
    pub allow: wright_egress::AllowList,
}

impl OutsideAccess {
    /// Whether the page may ask `url` (an `http`/`https` URL, without credentials, to an
    /// allowed host and port).
    pub fn allows(&self, url: &str) -> bool {
        let Ok(url) = reqwest::Url::parse(url) else { return false };
        let web = matches!(url.scheme(), "http" | "https") && url.username().is_empty() && url.password().is_none();
        let host = url.host_str().and_then(wright_egress::normalize_host);
        match (web, host, url.port_or_known_default()) {
            (true, Some(host), Some(port)) => self.allow.allows(&host, port),
            _ => false,
        }
    }
}

impl Default for BrowserSettings {
    fn default() -> Self {
        Self {
            mode: BrowserMode::Auto,
            chromium: None,
            max_actions: 12,
            time_limit: Duration::from_secs(30),
            width: 1280,
            height: 800,
            outside: None,
            memory_limit: 1536 << 20,
        }
    }
}

/// What kind of thing went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// `console.error(...)`.
    ConsoleError,
    /// An uncaught exception.
    Exception,
    /// A promise rejected with nobody handling it.
    UnhandledRejection,
    /// A request for one of the build's own files or routes failed or answered 4xx/5xx.
    FailedRequest,
    /// A request to another origin, refused: the page must work with its own files only.
    BlockedRequest,
    /// Nothing visible in the body after load.
    BlankPage,
    /// The page (or a full-stack app's server) used more memory than the check allows; the
    /// check was stopped there.
    OutOfMemory,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ConsoleError => "console_error",
            Self::Exception => "exception",
            Self::UnhandledRejection => "unhandled_rejection",
            Self::FailedRequest => "failed_request",
            Self::BlockedRequest => "blocked_request",
            Self::BlankPage => "blank_page",
            Self::OutOfMemory => "out_of_memory",
        }
    }
}

/// One problem, located as precisely as the browser can say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub message: String,
    /// Relative to the project root (`app.js`, `index.html`), when the stack names one of its files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// The interaction that caused it (`clicking the button "Start"`); `None` during load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub during: Option<String>,
}

impl Finding {
    /// `app.js:12:5` or the empty string.
    pub fn location(&self) -> String {
        match (&self.file, self.line, self.column) {
            (Some(f), Some(l), Some(c)) => format!("{f}:{l}:{c}"),
            (Some(f), Some(l), None) => format!("{f}:{l}"),
            (Some(f), None, _) => f.clone(),
            _ => String::new(),
        }
    }

    /// One line for people and for the fix prompt.
    pub fn describe(&self) -> String {
        let mut s = String::from(match self.kind {
            FindingKind::ConsoleError => "console error",
            FindingKind::Exception => "uncaught exception",
            FindingKind::UnhandledRejection => "unhandled promise rejection",
            FindingKind::FailedRequest => "failed request",
            FindingKind::BlockedRequest => "blocked request to another origin",
            FindingKind::BlankPage => "blank page",
            FindingKind::OutOfMemory => "too much memory",
        });
        if let Some(d) = &self.during {
            s.push_str(&format!(" after {d}"));
        }
        let at = self.location();
        if !at.is_empty() {
            s.push_str(&format!(" at {at}"));
        }
        s.push_str(": ");
        s.push_str(&self.message);
        s
    }
}

/// What one check found.
#[derive(Debug, Clone, Default)]
pub struct PageReport {
    pub findings: Vec<Finding>,
    /// PNG bytes of the page after the interactions, `width` × `height`.
    pub screenshot: Option<Vec<u8>>,
    /// Clicks and submissions made.
    pub actions: u32,
    pub elapsed: Duration,
}

impl PageReport {
    pub fn count(&self, kind: FindingKind) -> usize {
        self.findings.iter().filter(|f| f.kind == kind).count()
    }
}

/// Why the check could not run at all (as opposed to what it found).
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(transparent)]
    Missing(#[from] BrowserMissing),
    #[error(
        "Chromium would have to run as root with its own sandbox off and no other confinement; \
         run wright with its sandbox on (the default) or as an ordinary user"
    )]
    Unconfined,
    #[error(
        "the browser check needs loopback TCP (its page server and DevTools), which the Landlock \
         sandbox denies with the network off; install bubblewrap (apt-get install bubblewrap)"
    )]
    NoLoopback,
    #[error("the browser could not start: {0}")]
    Start(String),
    #[error("talking to the browser: {0}")]
    Protocol(String),
    #[error("the page did not load: {0}")]
    Load(String),
    #[error("the browser check took longer than {0:?}")]
    Timeout(Duration),
    /// Its processes held more than [`BrowserSettings::memory_limit`]; wright stopped them.
    /// [`check_page`] turns it into a report with a [`FindingKind::OutOfMemory`] finding.
    #[error("the browser check was stopped: {0}")]
    OutOfMemory(String),
}

/// Where and how Chromium runs: the build's sandbox runner, its environment, a scratch folder
/// (writable inside the sandbox) for the profile and the socket, and whether the runner confines
/// what it runs (Chromium's own sandbox is switched off only inside that confinement).
pub struct Launch {
    pub runner: Arc<dyn CommandRunner>,
    pub env: Vec<(String, String)>,
    pub workspace: PathBuf,
    pub scratch: PathBuf,
    pub confined: bool,
}
