//! The settings a build runs with, from flags, wright.toml and defaults, and the confinement
//! of its commands: sandbox, package cache, and outside access through the egress proxy.

use super::{Engine, host_redactor};
use crate::EngineError;
use crate::sandbox;
use crate::scratch::scratch_in;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wright_provider::RetryPolicy;
use wright_sandbox::{Workspace, WorkspaceLimits};
use wright_tools::ExecConfig;

impl Engine {
    /// A fresh scratch folder for one build (its HOME and TMPDIR), removed when dropped.
    pub fn scratch(&self, name: &str) -> Result<tempfile::TempDir, EngineError> {
        scratch_in(&self.data_dir, name)
    }

    /// The browser check's settings: flags, then `[browser]`, then the defaults. `on` without a
    /// Chromium is refused here, before a build starts, rather than found out in VERIFYING.
    pub fn browser_settings(&self, env: &[(String, String)]) -> Result<wright_browser::BrowserSettings, EngineError> {
        let (file, o) = (&self.file.browser, &self.o);
        let mut s = wright_browser::BrowserSettings::default();
        if let Some(mode) = o.browser_check.as_deref().or(file.check.as_deref()) {
            s.mode = wright_browser::BrowserMode::parse(mode)
                .ok_or_else(|| EngineError::Usage(format!("--browser-check takes on, off or auto, not `{mode}`")))?;
        }
        s.chromium = o.chromium.clone().or(file.chromium.clone());
        // Below the sandbox's own memory limit (a cgroup's, where there is one), so the check's
        // watchdog, which names who used the memory, always speaks first.
        s.memory_limit = crate::sandbox::limits(&self.file).memory / 4 * 3;
        if let Some(n) = file.max_actions {
            s.max_actions = n;
        }
        if let Some(secs) = file.time_limit_secs {
            s.time_limit = Duration::from_secs(secs.max(1));
        }
        if s.mode == wright_browser::BrowserMode::On {
            wright_browser::find_chromium(s.chromium.as_deref(), env)
                .map_err(|e| EngineError::Usage(format!("--browser-check on: {e}")))?;
        }
        Ok(s)
    }

    /// The workspace's size limits (wright.toml, else the defaults); builds and task runs alike.
    pub(crate) fn workspace_limits(&self) -> WorkspaceLimits {
        let defaults = WorkspaceLimits::default();
        WorkspaceLimits {
            max_file_bytes: self.file.max_file_bytes.unwrap_or(defaults.max_file_bytes),
            max_total_bytes: self.file.max_workspace_bytes.unwrap_or(defaults.max_total_bytes),
        }
    }

    /// `--max-tokens`, then wright.toml's `max_tokens`; `Some(0)` means no cap at all.
    pub(crate) fn max_tokens_setting(&self) -> Option<u32> {
        self.o.max_tokens.or(self.file.max_tokens)
    }

    /// The answer cap model calls carry: the user's (0: none); without one, OpenAI-compatible
    /// servers that say their context size get a quarter of it from the provider.
    pub(crate) fn max_tokens(&self) -> Option<u32> {
        self.max_tokens_setting().filter(|n| *n > 0)
    }

    /// The temperature `phase`'s model calls send: `--temperature` (or wright.toml's top-level
    /// `temperature`) for every phase, then `[sampling.PHASE]`, then the phase's default.
    pub(crate) fn temperature(&self, phase: crate::sampling::Phase) -> f32 {
        self.file.sampling.temperature(phase, self.o.temperature.or(self.file.temperature))
    }

    /// Model turns allowed per agent loop: flag, then wright.toml, then 100.
    pub(crate) fn max_turns(&self) -> u32 {
        self.o.max_turns.or(self.file.max_turns).unwrap_or(100).max(1)
    }

    /// The whole run's time limit in seconds: flag, then wright.toml, then 600.
    pub(crate) fn timeout_secs(&self) -> u64 {
        self.o.timeout.or(self.file.timeout).unwrap_or(600).max(1)
    }

    /// How model calls are retried: flag, then wright.toml, then [`RetryPolicy::default`] (whose
    /// count the provider's fail-over tests hold to).
    pub(crate) fn retry_policy(&self) -> RetryPolicy {
        let default = RetryPolicy::default();
        RetryPolicy {
            max_retries: self.o.max_retries.or(self.file.max_retries).unwrap_or(default.max_retries),
            ..default
        }
    }

    /// Where a build's browser screenshot is kept (outside its workspace, so it is never part
    /// of the project or its archive): the file [`LocalArtifacts`](crate::LocalArtifacts) over
    /// the data directory reads back.
    pub fn screenshot_path(&self, build_id: &str) -> PathBuf {
        self.artifacts.screenshot_path(build_id)
    }

    /// How commands run for a workspace: their environment (HOME and TMPDIR in `scratch`,
    /// redaction, the package cache) and the sandbox that confines them, which may write only
    /// the workspace and `scratch`. Builds use it, and so do previews of full-stack apps.
    pub fn sandbox(&self, workspace: &Workspace, scratch: &Path) -> Result<(ExecConfig, sandbox::Choice), EngineError> {
        self.sandbox_with(workspace, scratch, None)
    }

    /// The origins of the admin's allowed hosts (`https://api.example.com`,
    /// `http://127.0.0.1:38123`): the most a page may reach through its build's proxy (a
    /// preview gets its build's own part of it; empty: pages reach nothing outside).
    pub fn outside_origins(&self) -> Vec<String> {
        self.egress.as_ref().map(|p| p.allow.rules().iter().flat_map(|r| r.origins()).collect()).unwrap_or_default()
    }

    /// A proxy for one build's (or preview's) outside access: the admin's `[egress]` narrowed
    /// to `asked`, or `None` when nothing outside is allowed or the network is simply open.
    /// The second value says what was asked but stays closed.
    pub fn egress(
        &self,
        name: &str,
        asked: Option<&[String]>,
    ) -> Result<(Option<crate::egress::BuildEgress>, Vec<crate::notice::Warning>), EngineError> {
        let (policy, notes) = crate::egress::for_job(self.egress.as_ref(), asked)?;
        let Some(policy) = policy.filter(|_| !self.network) else { return Ok((None, notes)) };
        Ok((Some(crate::egress::BuildEgress::start(policy, &self.data_dir, name)?), notes))
    }

    /// [`Engine::sandbox`] with a way out through `egress`'s proxy (bubblewrap only: the
    /// Landlock fallback has no network namespace to put the bridge in).
    pub fn sandbox_with(
        &self,
        workspace: &Workspace,
        scratch: &Path,
        egress: Option<&crate::egress::BuildEgress>,
    ) -> Result<(ExecConfig, sandbox::Choice), EngineError> {
        let io = |what: &str, e: std::io::Error| EngineError::Usage(format!("{what}: {e}"));
        let (file, o) = (&self.file, &self.o);
        let mut exec = ExecConfig::for_build(&scratch.join("home"), &scratch.join("tmp"))
            .map_err(|e| io("preparing the build's home", e))?;
        if let Some(secs) = o.command_timeout.or(file.command_timeout) {
            exec.command_timeout = Duration::from_secs(secs.max(1));
        }
        // What the model and the user see hides the values of secret-looking host variables and
        // the host's home folder (builds get a private HOME, so only wright knows the real one).
        exec.redactor = host_redactor(true);
        // npm installs are served from this cache, filled outside the sandbox and mounted read-only.
        let cache = file.package_cache.clone().unwrap_or_else(|| self.artifacts.root().join("deps"));
        let deps_cache = std::path::absolute(cache)
            .and_then(|p| std::fs::create_dir_all(&p).map(|_| p))
            .map_err(|e| io("creating the package cache", e))?;
        exec.packages = Some(wright_tools::PackagesConfig::new(file.packages.settings(deps_cache.clone())));
        exec.deps_cache = Some(deps_cache);
        // Commands see the workspace and the build's scratch folder (HOME, TMPDIR) read-write and
        // the dependency cache read-only; nothing else of the data dir. The host's Rust toolchain
        // (its sysroot, under a home the sandbox hides when rustup installed it) is read-only too,
        // so cargo and rustc run in a Rust build.
        let mut read_only: Vec<PathBuf> = exec.deps_cache.iter().cloned().collect();
        read_only.extend(
            exec.packages.as_ref().map(|p| wright_packages::toolchain_dirs(&p.settings.host_env)).unwrap_or_default(),
        );
        let policy = wright_sandbox::Policy {
            network: self.network,
            limits: sandbox::limits(file),
            writable: vec![workspace.root().to_path_buf(), scratch.to_path_buf()],
            read_only,
            egress: egress.map(|e| e.bridge()),
        };
        let mut confinement = sandbox::choose(self.sandbox_mode, policy)?;
        if let Some(e) = egress {
            if confinement.isolation.name() == "bwrap" {
                exec.env.extend(e.env());
            } else {
                confinement.warnings.push(crate::notice::Warning::new(
                    crate::notice::WarningKind::NoWayOut,
                    "outside access needs the bubblewrap sandbox; without it the build has no way out",
                ));
            }
        }
        Ok((exec, confinement))
    }
}
