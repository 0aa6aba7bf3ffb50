//! `--sandbox`, `--network` and `wright doctor`, which says what the sandbox choice is on this
//! machine and why.

use crate::{Exit, usage};
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
    llm: crate::ModelArgs,
    /// Print the findings as JSON.
    #[arg(long)]
    json: bool,
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
        let key = crate::env_var("OPENAI_API_KEY").filter(|k| !k.trim().is_empty());
        Some(crate::endpoint::check(&base, key, model, file.call_timeout(None)).await)
    } else {
        None
    };
    let mode = args.sandbox.mode(&file)?;
    let network = args.sandbox.network(&file)?;
    let policy = Policy { network, limits: limits(&file), writable: vec![std::env::temp_dir()], read_only: vec![] };
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
                    _ => "no cgroup may be made here: only a 16 GiB address-space limit".to_string(),
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
    let (active, warning) = match &choice {
        Ok(c) => (c.summary.clone(), c.warning.clone()),
        Err(e) => (format!("none: {e}"), None),
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
        if let Some(w) = warning {
            println!("{w}");
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
