//! `--sandbox`, `--network` and `wright doctor`, which says what the sandbox choice is on this
//! machine and why.

use crate::{DbArgs, Exit, ModelArgs, usage};
use anyhow::anyhow;
use serde_json::json;
use std::path::PathBuf;
use wright_engine::config::FileConfig;
use wright_engine::sandbox::{Mode, limits, mib, parse_network, probe_bwrap, probe_landlock, select};
use wright_sandbox::{Policy, SANDBOX_UID};

/// `--sandbox` and `--network`, shared by `run` and `doctor`.
#[derive(clap::Args, Clone, Default)]
pub struct SandboxArgs {
    /// How commands are confined: auto (bubblewrap, else Landlock), bwrap, landlock, or none
    /// (runs generated code unconfined; only when you trust it) [default: auto].
    #[arg(long, env = "WRIGHT_SANDBOX", value_name = "MODE")]
    pub sandbox: Option<String>,
    /// Whether sandboxed commands reach the network: deny (loopback only) or allow [default: deny].
    #[arg(long, value_name = "MODE")]
    pub network: Option<String>,
}

/// `--browser-check` and `--chromium`, shared by `run` and `serve`.
#[derive(clap::Args, Clone, Default)]
pub struct BrowserArgs {
    /// Open web pages in headless Chromium during VERIFYING and fix what breaks there: on, off,
    /// or auto (when a Chromium is installed) [default: auto].
    #[arg(long, env = "WRIGHT_BROWSER_CHECK", value_name = "MODE")]
    pub browser_check: Option<String>,
    /// The Chromium binary for the browser check [default: chromium on PATH].
    #[arg(long, env = "WRIGHT_CHROMIUM", value_name = "PATH")]
    pub chromium: Option<PathBuf>,
}

impl SandboxArgs {
    pub fn mode(&self, file: &FileConfig) -> Result<Mode, Exit> {
        Mode::parse(self.sandbox.as_deref().or(file.sandbox.as_deref()).unwrap_or("auto")).map_err(Exit::from)
    }

    pub fn network(&self, file: &FileConfig) -> Result<bool, Exit> {
        parse_network(self.network.as_deref().or(file.network.as_deref()).unwrap_or("deny")).map_err(Exit::from)
    }
}

/// A `doctor` row for a tool builds need: where it is, or what still works without it.
fn tool_line(key: &'static str, name: &str) -> (&'static str, String) {
    let host = wright_prereq::Host::from_env();
    let line = match wright_prereq::requirement(name) {
        Some(req) if host.has(req) => match req.probe {
            wright_prereq::Probe::Command(names) => {
                let path = names.iter().find_map(|n| host.find(n));
                format!("ok ({}): {}", path.map_or_else(String::new, |p| p.display().to_string()), req.why)
            }
            _ => format!("ok ({} -m pip): {}", host.python, req.why),
        },
        Some(req) => wright_prereq::explain_missing(req, &host),
        None => format!("{name}: unknown"),
    };
    (key, line)
}

#[derive(clap::Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    sandbox: SandboxArgs,
    /// With `--provider openai --base-url URL [--model M]`: also try that server for real (its
    /// model list, one tool call streamed and one whole) and say what wright will do about it.
    #[command(flatten)]
    llm: ModelArgs,
    /// Print the findings as JSON.
    #[arg(long)]
    json: bool,
    /// Data folder whose scratch space builds use [default: $XDG_DATA_HOME/wright]; the browser
    /// trial runs there, with folders named as a build's are.
    #[arg(long, env = "WRIGHT_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,
}

/// `wright doctor`: which isolation `run` would use here, and why; and, when an endpoint is
/// named, what that server can do.
pub async fn doctor(args: DoctorArgs, config_path: Option<PathBuf>) -> Result<u8, Exit> {
    let (file, _) = FileConfig::load(config_path.as_deref()).map_err(usage)?;
    let endpoint = if args.llm.provider.is_some() || args.llm.base_url.is_some() {
        let (kind, model, base_url) = args.llm.clone().resolve(&file)?;
        if kind != wright_engine::config::ProviderKind::OpenAi {
            return Err(usage(anyhow!("the endpoint check is for OpenAI-compatible servers: use --provider openai")));
        }
        let base = base_url.unwrap_or_else(|| "https://api.openai.com/v1".into());
        let key = wright_engine::env_var("OPENAI_API_KEY").filter(|k| !k.trim().is_empty());
        Some(crate::endpoint::check(&base, key, model, file.call_timeout(None)).await)
    } else {
        None
    };
    let mode = args.sandbox.mode(&file)?;
    let network = args.sandbox.network(&file)?;
    // The probes need no writable folder; the browser trial makes a policy of its own folder.
    let policy = Policy { network, limits: limits(&file), writable: vec![], read_only: vec![], egress: None };
    let root = wright_sandbox::running_as_root();
    let bwrap = probe_bwrap(&policy);
    let landlock = probe_landlock(&policy);
    let choice = select(mode, || bwrap.clone(), || landlock.clone());
    let l = policy.limits;
    let checks = vec![
        (
            "bubblewrap",
            match &bwrap {
                Ok((b, took)) => {
                    format!("works ({}; a sandbox starts in {} ms)", b.bwrap_path().display(), took.as_millis())
                }
                Err(e) => e.to_string(),
            },
        ),
        (
            "landlock",
            match &landlock {
                Ok((_, took)) => {
                    format!("works (the fallback when bubblewrap is missing; starts in {} ms)", took.as_millis())
                }
                Err(e) => format!("unusable: {e}"),
            },
        ),
        (
            "identity",
            if root {
                format!(
                    "wright runs as root, so commands drop to uid/gid {SANDBOX_UID} with setpriv and the workspace is handed to it"
                )
            } else {
                "commands run as you, in a user namespace without capabilities".to_string()
            },
        ),
        (
            "network",
            if network {
                "allowed (--network allow)".to_string()
            } else {
                "off: a private network namespace with loopback only (--network allow opens it)".to_string()
            },
        ),
        ("seccomp", format!("denies {}", wright_sandbox::seccomp::summary())),
        (
            "limits",
            format!(
                "{} memory ({}), {} per file, {} open files, {} processes, {} CPU s per process; wall time per command from --command-timeout",
                mib(l.memory),
                match bwrap
                    .as_ref()
                    .ok()
                    .and_then(|(b, _)| b.cgroups())
                    .or(landlock.as_ref().ok().and_then(|(l, _)| l.cgroups()))
                {
                    Some(c) if c.limits_memory() => format!("counted by {}", c.describe()),
                    _ => "no cgroup may be made here: per process (RLIMIT_DATA), and the browser check's processes together by wright's watchdog".to_string(),
                },
                mib(l.file_size),
                l.open_files,
                l.processes,
                l.cpu_seconds
            ),
        ),
        tool_line("node", "Node.js"),
        tool_line("npm", "npm"),
        tool_line("pip", "pip"),
        (
            "secrets",
            "commands get a fresh environment (no API keys, no host variables) and see no host files but the system's"
                .to_string(),
        ),
    ];
    let mut checks = checks;
    let browser_mode = file.browser.check.as_deref().and_then(wright_browser::BrowserMode::parse).unwrap_or_default();
    let browser = if browser_mode == wright_browser::BrowserMode::Off {
        "off in wright.toml ([browser] check = \"off\")".to_string()
    } else {
        browser_line(file.browser.chromium.as_deref(), mode, &policy, &file.data_dir(args.data_dir.clone())).await
    };
    checks.push(("browser", browser));
    checks.extend(wright_engine::chat_doctor_lines(&file, &file.data_dir(args.data_dir.clone())));
    if let Some(line) = wright_engine::mcp_doctor_line(&file, &file.data_dir(args.data_dir.clone()), mode).await {
        checks.push(("mcp", line));
    }
    let (active, warning) = match &choice {
        Ok(c) => (c.summary.clone(), c.warnings.clone()),
        Err(e) => (format!("none: {e}"), vec![]),
    };
    if args.json {
        let mut obj = serde_json::Map::new();
        obj.insert("mode".into(), json!(format!("{mode:?}").to_lowercase()));
        obj.insert("active".into(), json!(active));
        obj.insert(
            "confined".into(),
            json!(matches!(&choice, Ok(c) if c.isolation.name() != "refuse" && c.isolation.name() != "none")),
        );
        for (k, v) in &checks {
            obj.insert((*k).into(), json!(v));
        }
        if let Some(e) = &endpoint {
            obj.insert("endpoint".into(), e.to_json());
        }
        println!("{}", serde_json::Value::Object(obj));
    } else {
        println!("sandbox mode: {}", format!("{mode:?}").to_lowercase());
        println!("active: {active}");
        for (k, v) in &checks {
            println!("  {k:<11} {v}");
        }
        for w in warning {
            println!("wright: {w}");
        }
        if let Some(e) = &endpoint {
            e.print();
        }
    }
    Ok(match choice {
        Ok(c) if c.isolation.name() != "refuse" && endpoint.as_ref().is_none_or(|e| e.usable()) => 0,
        _ => 1,
    })
}

/// Whether the browser check can run here: it loads a small page for real, in the sandbox
/// builds would use, from folders laid out as a build's are (a scratch folder named like a
/// build's under the data folder's `tmp`, its HOME and TMPDIR, the check's own folder in that
/// TMPDIR), so it fails where builds would; and says how long that took, or why it cannot.
async fn browser_line(
    chromium: Option<&std::path::Path>,
    mode: wright_engine::sandbox::Mode,
    policy: &Policy,
    data_dir: &std::path::Path,
) -> String {
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    let env_path = vec![("PATH".to_string(), path.clone())];
    let binary = match wright_browser::find_chromium(chromium, &env_path) {
        Ok(b) => b,
        Err(e) => return format!("off: {e}"),
    };
    let version = std::process::Command::new(&binary)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| binary.display().to_string());
    let trial = async {
        use std::os::unix::fs::PermissionsExt;
        let dir = wright_engine::scratch_in(data_dir, &wright_engine::new_build_id()).map_err(|e| e.to_string())?;
        let (ws, home, tmp) = (dir.path().join("ws"), dir.path().join("home"), dir.path().join("tmp"));
        for d in [dir.path().to_path_buf(), ws.clone(), home.clone(), tmp.clone()] {
            std::fs::create_dir_all(&d).map_err(|e| e.to_string())?;
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).map_err(|e| e.to_string())?;
        }
        // The check's own folder in the build's TMPDIR, as VERIFYING makes it.
        let scratch = wright_browser::check_folder(&tmp).map_err(|e| e.to_string())?;
        std::fs::write(ws.join("index.html"), "<!DOCTYPE html><html><body><h1>wright</h1></body></html>")
            .map_err(|e| e.to_string())?;
        let own = Policy { writable: vec![dir.path().to_path_buf()], ..policy.clone() };
        let choice = wright_engine::sandbox::choose(mode, own).map_err(|e| format!("the sandbox is unusable ({e})"))?;
        let runner = wright_sandbox::ProcessRunner::new(choice.isolation);
        let confined = wright_sandbox::CommandRunner::confines(&runner);
        let launch = wright_browser::Launch {
            runner: std::sync::Arc::new(runner),
            env: vec![
                ("PATH".to_string(), path.clone()),
                ("HOME".to_string(), home.display().to_string()),
                ("TMPDIR".to_string(), tmp.display().to_string()),
            ],
            workspace: ws,
            scratch: scratch.path().to_path_buf(),
            confined,
        };
        let settings = wright_browser::BrowserSettings { chromium: Some(binary.clone()), ..Default::default() };
        let source = wright_browser::PageSource::Static { entry: "index.html".into() };
        wright_browser::check_page(&settings, &launch, &source).await.map_err(|e| e.to_string())
    };
    match trial.await {
        Ok(r) if r.findings.is_empty() => {
            format!("works ({version}; loaded a test page in {} ms inside the sandbox)", r.elapsed.as_millis())
        }
        Ok(r) => format!("runs ({version}) but a blank test page gave {} finding(s)", r.findings.len()),
        Err(e) => format!("cannot run ({version}): {e}"),
    }
}

/// The flags every command that runs a model shares (model, sandbox, data), as overrides.
pub fn where_and_how(llm: &ModelArgs, sandbox: &SandboxArgs, db: &DbArgs) -> wright_engine::Overrides {
    wright_engine::Overrides {
        provider: llm.provider.clone(),
        model: llm.model.clone(),
        base_url: llm.base_url.clone(),
        max_tokens: llm.max_tokens,
        sandbox: sandbox.sandbox.clone(),
        network: sandbox.network.clone(),
        db: db.db.clone(),
        data_dir: db.data_dir.clone(),
        artifacts: db.artifacts.clone(),
        notices: crate::notices::terminal(),
        ..wright_engine::Overrides::default()
    }
}
