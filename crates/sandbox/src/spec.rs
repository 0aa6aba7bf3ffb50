//! What to run and how it is isolated: the command spec, the isolation seam and its refusals,
//! and how a program is found. The runner ([`crate::runner`]) and every isolation
//! ([`crate::bwrap`], [`crate::confine`], [`crate::leash`]) build on these, so none of them
//! depends on another through the runner.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What to run. `program` is looked up on the allowlisted `PATH`; no shell is involved unless
/// the program is one.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    pub program: String,
    pub args: Vec<String>,
    /// Working directory (the workspace root or a folder inside it).
    pub cwd: PathBuf,
    /// The complete environment: nothing from wright's own environment is inherited.
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
    /// Bytes of head and of tail kept per stream.
    pub capture_head: usize,
    pub capture_tail: usize,
    /// Most bytes per stream forwarded live to the [`OutputSink`]; the rest is only counted.
    pub stream_limit: u64,
    /// Live output is handed to the [`OutputSink`] at most this often (or at 16 KiB): a
    /// command printing a line every few milliseconds becomes a few events a second, not
    /// hundreds, for the store and every follower alike. Zero forwards each read at once.
    pub live_interval: Duration,
    /// Descriptors the child inherits (an isolation layer passes its seccomp program this
    /// way); closed in wright once the child has started.
    pub inherit: Vec<Arc<OwnedFd>>,
    /// What an isolation layer keeps alive until the command has ended (its cgroup, which
    /// removes itself when dropped).
    pub held: Vec<Held>,
    /// The program reserves far more address space than it uses (Chromium: V8's sandbox alone
    /// reserves a terabyte), so an address-space limit kills it at start. Such a command gets
    /// none: where no memory cgroup can be made its processes get `RLIMIT_DATA` instead (which
    /// counts only memory that can be written, not reservations), and it should be given a
    /// [`memory_watch`](Self::memory_watch).
    pub reserves_address_space: bool,
    /// Stop the command when its processes together hold more than this many bytes (resident
    /// anonymous and shared memory, read from `/proc` every [`MEMORY_POLL`]; see
    /// [`memwatch`](crate::memwatch)). The limits of a single process (rlimits) cannot bound a
    /// program made of several, like Chromium; this bounds them together, and says so in
    /// [`CommandOutcome::memory_exceeded`]. It runs in wright, outside any sandbox, so the
    /// command cannot stop it.
    pub memory_watch: Option<u64>,
}

/// A value kept alive for as long as a command runs.
#[derive(Clone)]
pub struct Held(pub Arc<dyn std::any::Any + Send + Sync>);

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Held")
    }
}

impl CommandSpec {
    /// A spec with wright's default bounds (120 s, 8 KiB head + 24 KiB tail, 1 MiB streamed,
    /// live output every 50 ms).
    pub fn new(program: impl Into<String>, args: Vec<String>, cwd: PathBuf, env: Vec<(String, String)>) -> Self {
        Self {
            program: program.into(),
            args,
            cwd,
            env,
            timeout: Duration::from_secs(120),
            capture_head: 8 * 1024,
            capture_tail: 24 * 1024,
            stream_limit: 1024 * 1024,
            live_interval: LIVE_INTERVAL,
            inherit: Vec::new(),
            held: Vec::new(),
            reserves_address_space: false,
            memory_watch: None,
        }
    }
}

/// How often live output is forwarded by default (see [`CommandSpec::live_interval`]).
pub const LIVE_INTERVAL: Duration = Duration::from_millis(50);

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("`{program}` was not found; is it installed and on the PATH?")]
    NotFound { program: String },
    #[error("could not start `{program}`: {message}")]
    Spawn { program: String, message: String },
    #[error("isolation refused the command: {0}")]
    Isolation(String),
    /// The project's declared packages could not be made ready (refused, not fetched, not
    /// installed); nothing of the command ran.
    #[error("{0}")]
    Packages(String),
}

/// Rewrites a command before it is spawned: the seam where bubblewrap, seccomp or rlimits go.
pub trait Isolation: Send + Sync {
    /// Short name for diagnostics (`none`, `bwrap`, …).
    fn name(&self) -> &str;
    fn wrap(&self, spec: CommandSpec) -> Result<CommandSpec, RunError>;
    /// Whether commands can listen and connect on loopback TCP (a page server, DevTools).
    fn loopback_tcp(&self) -> bool {
        true
    }
}

/// Runs commands as they are: process-group, environment and time confinement only.
pub struct NoIsolation;

impl Isolation for NoIsolation {
    fn name(&self) -> &str {
        "none"
    }
    fn wrap(&self, spec: CommandSpec) -> Result<CommandSpec, RunError> {
        Ok(spec)
    }
}

/// Runs nothing: every command is refused with the reason, so a build on a machine without a
/// working sandbox still writes files and reports clearly instead of running generated code
/// unconfined.
pub struct Refuse(pub String);

impl Isolation for Refuse {
    fn name(&self) -> &str {
        "refuse"
    }
    fn wrap(&self, _: CommandSpec) -> Result<CommandSpec, RunError> {
        Err(RunError::Isolation(self.0.clone()))
    }
}

/// Looks `program` up on the given PATH (the child's, not wright's).
pub(crate) fn find_program(program: &str, env: &[(String, String)]) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let path = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str()).unwrap_or("");
    std::env::split_paths(path).map(|d| d.join(program)).find(|p| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    })
}
