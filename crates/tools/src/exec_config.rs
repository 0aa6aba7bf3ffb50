//! How the commands of one build run: their environment, time limits, redaction and package cache.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use wright_packages::{Ecosystem, Settings};
use wright_sandbox::Redactor;

/// How commands of one build run: their whole environment, their time limits, what is hidden
/// from their output and where packages come from.
#[derive(Debug, Clone)]
pub struct ExecConfig {
    /// The complete environment a command gets. Built from an allowlist, so provider keys and
    /// anything else in wright's own environment never reach generated code.
    pub env: Vec<(String, String)>,
    pub command_timeout: Duration,
    pub test_timeout: Duration,
    /// Applied to every command output, live or captured, and to every tool result, so a key
    /// or the user's home folder that shows up in output never reaches the model or the user.
    pub redactor: Redactor,
    /// Root of the shared package cache. When set, `npm install` is not run in the sandbox
    /// (whose network is off): wright fills the cache with the host's npm and links
    /// `node_modules` to it. `None` runs npm like any other command.
    pub deps_cache: Option<PathBuf>,
    /// How Python, Rust and Go packages are fetched into that cache and installed offline.
    /// `None`: commands run with the sandbox's environment only.
    pub packages: Option<PackagesConfig>,
}

impl ExecConfig {
    /// The default environment for a build whose private home and temp folders are given
    /// (created here): `PATH` from the host, `HOME`/`TMPDIR` inside the build, plain output.
    pub fn for_build(home: &Path, tmp: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(home)?;
        std::fs::create_dir_all(tmp)?;
        let host_path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
        // Relative PATH entries would resolve inside the workspace: drop them.
        let path = std::env::split_paths(&host_path)
            .filter(|p| p.is_absolute())
            .map(|p| p.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(":");
        let s = |p: &Path| p.to_string_lossy().into_owned();
        let env = vec![
            ("PATH".to_string(), path),
            ("HOME".to_string(), s(home)),
            ("TMPDIR".to_string(), s(tmp)),
            ("LANG".to_string(), "C.UTF-8".to_string()),
            ("TERM".to_string(), "dumb".to_string()),
            ("NO_COLOR".to_string(), "1".to_string()),
            ("FORCE_COLOR".to_string(), "0".to_string()),
            ("CI".to_string(), "1".to_string()),
            ("npm_config_update_notifier".to_string(), "false".to_string()),
            ("npm_config_fund".to_string(), "false".to_string()),
            ("npm_config_audit".to_string(), "false".to_string()),
            ("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string()),
        ];
        Ok(Self {
            env,
            command_timeout: Duration::from_secs(120),
            test_timeout: Duration::from_secs(300),
            redactor: Redactor::default(),
            deps_cache: None,
            packages: None,
        })
    }
}

/// How one build's Python, Rust and Go packages are fetched, and which sets it has installed.
#[derive(Clone)]
pub struct PackagesConfig {
    pub settings: Settings,
    /// Per ecosystem: the key of the set installed in this build's sandbox.
    pub(crate) installed: Arc<tokio::sync::Mutex<HashMap<Ecosystem, String>>>,
}

impl std::fmt::Debug for PackagesConfig {
    // Not derived: the host environment in the settings may hold secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackagesConfig").field("cache_root", &self.settings.cache_root).finish_non_exhaustive()
    }
}

impl PackagesConfig {
    pub fn new(settings: Settings) -> Self {
        Self { settings, installed: Arc::default() }
    }
}
