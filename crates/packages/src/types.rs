//! The crate's vocabulary: the ecosystems, how packages are fetched ([`Settings`]), what is
//! refused and why, and what the sandbox is given ([`Prepared`]). A leaf every other module
//! uses.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The package ecosystems wright installs for, beside npm (which `wright-tools` handles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ecosystem {
    Python,
    Rust,
    Go,
}

impl Ecosystem {
    pub const ALL: [Ecosystem; 3] = [Ecosystem::Python, Ecosystem::Rust, Ecosystem::Go];

    /// The name used in cache folders, events and messages.
    pub fn name(self) -> &'static str {
        match self {
            Ecosystem::Python => "python",
            Ecosystem::Rust => "rust",
            Ecosystem::Go => "go",
        }
    }

    /// The manifest files that declare this ecosystem's dependencies, most specific first.
    pub fn manifests(self) -> &'static [&'static str] {
        match self {
            Ecosystem::Python => &["requirements.txt", "pyproject.toml"],
            Ecosystem::Rust => &["Cargo.toml"],
            Ecosystem::Go => &["go.mod"],
        }
    }

    /// The ecosystem of the project at `root`, from its manifest at the top (`Cargo.toml`,
    /// `go.mod`, then Python's) or, with none, Python when a `.py` file is at the top (a
    /// script with no packages still runs in its own environment). Read without following
    /// links.
    pub fn of_project(root: &Path) -> Option<Ecosystem> {
        let dir = wright_beneath::Dir::open(root).ok()?;
        let declared = [Ecosystem::Rust, Ecosystem::Go, Ecosystem::Python]
            .into_iter()
            .find(|e| e.manifests().iter().any(|m| dir.is_file(m)));
        declared.or_else(|| {
            let entries = dir.entries().ok()?;
            let python = entries
                .iter()
                .any(|e| e.kind == wright_beneath::Kind::File && e.name_str().is_some_and(|n| n.ends_with(".py")));
            python.then_some(Ecosystem::Python)
        })
    }
}

/// How packages are fetched and kept.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Root of the package cache (each ecosystem has a folder under it). The sandbox mounts it
    /// read-only at the same path.
    pub cache_root: PathBuf,
    /// The cache is trimmed (least recently used entries first) to stay under this size.
    pub max_cache_bytes: u64,
    /// Allow Python source distributions. Building one runs its `setup.py` or build backend on
    /// the host, outside the sandbox, so it is off unless the admin allows it.
    pub allow_sdists: bool,
    /// Longest a host fetch may take.
    pub fetch_timeout: Duration,
    /// The environment the HOST's tools run with (wright's own: whatever registry, proxy or
    /// mirror the host is configured for).
    pub host_env: Vec<(String, String)>,
}

impl Settings {
    /// Defaults for a cache at `cache_root`: 2 GiB, wheels only, 10 minutes per fetch, the
    /// environment wright itself runs with.
    pub fn new(cache_root: PathBuf) -> Self {
        Self {
            cache_root,
            max_cache_bytes: 2 << 30,
            allow_sdists: false,
            fetch_timeout: Duration::from_secs(600),
            host_env: std::env::vars().collect(),
        }
    }
}

/// One declared dependency that will not be fetched, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The manifest it was declared in (`requirements.txt`).
    pub file: String,
    /// The spec as written (`requests @ https://…`).
    pub spec: String,
    /// Why, in words the model and a person can act on.
    pub reason: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: `{}` {}", self.file, self.spec, self.reason)
    }
}

/// Why a project's packages are not ready; the text is what the model reads.
#[derive(Debug, thiserror::Error)]
pub enum PackagesError {
    #[error("dependencies refused before anything was fetched:\n{}", list(.0))]
    Refused(Vec<Refusal>),
    #[error("`{0}` is not installed on this machine, so wright cannot fetch these packages")]
    Missing(&'static str),
    #[error("{file} could not be read: {message}")]
    BadManifest { file: String, message: String },
    #[error("the package registry could not be reached from this machine ({0}); packages cannot be fetched right now")]
    Unreachable(String),
    #[error("{tool} could not fetch the packages:\n{output}")]
    Fetch { tool: &'static str, output: String },
    #[error("{0} did not finish within {1}s")]
    Timeout(&'static str, u64),
    #[error("the build was stopped while packages were being fetched")]
    Cancelled,
    #[error("{op} {path}: {message}")]
    Io { op: &'static str, path: String, message: String },
    #[error(transparent)]
    Path(#[from] wright_beneath::Error),
}

fn list(refusals: &[Refusal]) -> String {
    refusals.iter().map(|r| format!("- {r}")).collect::<Vec<_>>().join("\n")
}

pub(crate) fn io_err(op: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> PackagesError + use<> {
    let path = path.display().to_string();
    move |e| PackagesError::Io { op, path, message: e.to_string() }
}

/// What the sandbox needs to use a project's fetched packages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prepared {
    /// Identifies the fetched set; the same key needs its [`setup`](Self::setup) run once.
    pub key: String,
    /// The packages that were declared (`requests==2.32.3`), for people.
    pub packages: Vec<String>,
    /// Whether the host fetched them now (a cache miss).
    pub fetched: bool,
    /// Size of the cache entry.
    pub bytes: u64,
    /// Added to the environment of every command the project runs in the sandbox
    /// (`PATH` entries are prepended to the sandbox's `PATH`).
    pub env: Vec<(String, String)>,
    /// Commands run once, in order, inside the sandbox at the project's root before its first
    /// command, that install from the cache offline (`python3 -m venv …`, `pip install
    /// --no-index …`). Each is the program and its arguments.
    pub setup: Vec<Vec<String>>,
}

impl Prepared {
    /// `base` (the sandbox's environment) with this set's environment over it: a `PATH` here
    /// goes before the base's, anything else replaces the base's value.
    pub fn env_over(&self, base: &[(String, String)]) -> Vec<(String, String)> {
        let mut env = base.to_vec();
        for (k, v) in &self.env {
            match env.iter_mut().find(|(name, _)| name == k) {
                Some((_, old)) if k == "PATH" && !old.is_empty() => *old = format!("{v}:{old}"),
                Some((_, old)) => *old = v.clone(),
                None => env.push((k.clone(), v.clone())),
            }
        }
        env
    }
}

/// The build's private, writable home inside the sandbox (the last `HOME` of its environment,
/// as a shell would take it): where venvs, cargo's and Go's caches go.
pub(crate) fn sandbox_home(sandbox_env: &[(String, String)]) -> Result<PathBuf, PackagesError> {
    sandbox_env.iter().rev().find(|(k, _)| k == "HOME").map(|(_, v)| PathBuf::from(v)).ok_or_else(|| {
        PackagesError::Io {
            op: "finding",
            path: "HOME".into(),
            message: "the build's environment has no HOME for its packages and caches".into(),
        }
    })
}
