//! Python, Rust and Go packages, made ready before a project's command runs.
//!
//! Every command of a build goes through [`run_logged`](crate::run_logged); for a project with
//! a Python, Rust or Go manifest (or loose `.py` files) it first asks
//! [`wright_packages::prepare`] for the declared set (checked, fetched on the host on a miss),
//! runs that set's offline install inside the sandbox once per build, and gives the command the
//! environment that points its toolchain at it. A refused spec becomes a `packages_refused`
//! event and an error the model reads; nothing of the command runs.

use crate::ToolContext;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use wright_events::{EventKind, PackageRefusal};
use wright_packages::{Ecosystem, PackagesError, Settings};
use wright_sandbox::RunError;

/// Per ecosystem: the key of the set installed in this build's sandbox, and its environment.
type Installed = HashMap<Ecosystem, (String, Vec<(String, String)>)>;

/// How one build's Python, Rust and Go packages are fetched, and which sets it has installed.
#[derive(Clone)]
pub struct PackagesConfig {
    pub settings: Settings,
    installed: Arc<tokio::sync::Mutex<Installed>>,
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

/// The environment the project's packages add to a command (empty for a project with none,
/// or when packages are not configured). Installs them first when the declared set changed.
pub(crate) async fn ready(ctx: &ToolContext) -> Result<Vec<(String, String)>, RunError> {
    let Some(config) = &ctx.exec.packages else { return Ok(Vec::new()) };
    let root = ctx.workspace.root();
    let Some(ecosystem) = Ecosystem::of_project(root) else { return Ok(Vec::new()) };
    // One preparation at a time per build: two commands must not install the same set twice.
    let mut installed = config.installed.lock().await;
    let started = Instant::now();
    let prepared = match wright_packages::prepare(ecosystem, root, &config.settings, &ctx.exec.env, &ctx.cancel).await {
        Ok(p) => p,
        Err(e) => {
            if let PackagesError::Refused(refusals) = &e {
                ctx.emitter.emit(EventKind::PackagesRefused {
                    ecosystem: ecosystem.name().to_string(),
                    refusals: refusals
                        .iter()
                        .map(|r| PackageRefusal {
                            file: r.file.clone(),
                            spec: r.spec.clone(),
                            reason: r.reason.clone(),
                        })
                        .collect(),
                });
            }
            return Err(RunError::Packages(ctx.exec.redactor.redact(&e.to_string()).into_owned()));
        }
    };
    let env = prepared.env_over(&ctx.exec.env);
    if installed.get(&ecosystem).is_some_and(|(key, _)| *key == prepared.key) {
        return Ok(env);
    }
    for argv in &prepared.setup {
        let Some((program, args)) = argv.split_first() else { continue };
        let o = crate::exec::run_plain(ctx, program, args, &env, ctx.exec.command_timeout).await?;
        if !o.success() {
            let out = crate::clip_tail(&format!("{}{}", o.stdout.render(), o.stderr.render()), 2000);
            return Err(RunError::Packages(format!(
                "installing the {} packages from wright's cache failed (`{}`):\n{out}",
                ecosystem.name(),
                argv.join(" ")
            )));
        }
    }
    ctx.emitter.emit(EventKind::PackagesReady {
        ecosystem: ecosystem.name().to_string(),
        packages: prepared.packages.clone(),
        fetched: prepared.fetched,
        duration_ms: started.elapsed().as_millis() as u64,
        bytes: prepared.bytes,
    });
    installed.insert(ecosystem, (prepared.key, env.clone()));
    Ok(env)
}
