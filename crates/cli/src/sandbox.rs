//! Choosing how generated code is confined (`--sandbox`, `--network`) and `wright doctor`,
//! which says what that choice is on this machine and why.

use crate::config::FileConfig;
use crate::{Exit, usage};
use anyhow::anyhow;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;
use wright_sandbox::{Bwrap, Isolation, Landlock, Limits, NoIsolation, Policy, Refuse, SANDBOX_UID, Unavailable};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Auto,
    Bwrap,
    Landlock,
    None,
}

/// What was chosen, with the words to say about it.
pub struct Choice {
    pub isolation: Box<dyn Isolation>,
    /// One line for the human header and `doctor`.
    pub summary: String,
    /// Said on stderr when commands are not confined or cannot run.
    pub warning: Option<String>,
}

impl SandboxArgs {
    pub fn mode(&self, file: &FileConfig) -> Result<Mode, Exit> {
        match self.sandbox.as_deref().or(file.sandbox.as_deref()).unwrap_or("auto") {
            "auto" => Ok(Mode::Auto),
            "bwrap" | "bubblewrap" => Ok(Mode::Bwrap),
            "landlock" => Ok(Mode::Landlock),
            "none" => Ok(Mode::None),
            other => Err(usage(anyhow!("unknown sandbox `{other}`; use auto, bwrap, landlock or none"))),
        }
    }

    pub fn network(&self, file: &FileConfig) -> Result<bool, Exit> {
        match self.network.as_deref().or(file.network.as_deref()).unwrap_or("deny") {
            "deny" | "off" => Ok(false),
            "allow" | "on" => Ok(true),
            other => Err(usage(anyhow!("unknown network mode `{other}`; use deny or allow"))),
        }
    }
}

/// Limits from wright.toml over the defaults.
pub fn limits(file: &FileConfig) -> Limits {
    let d = Limits::default();
    Limits {
        memory: file.memory_limit_mb.map(|m| m << 20).unwrap_or(d.memory),
        file_size: file.file_size_limit_mb.map(|m| m << 20).unwrap_or(d.file_size),
        open_files: d.open_files,
        processes: file.process_limit.unwrap_or(d.processes),
        cpu_seconds: file.cpu_limit_secs.unwrap_or(d.cpu_seconds),
    }
}

fn mib(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

fn describe(b: &Bwrap, took: Duration) -> String {
    let p = b.policy();
    format!(
        "bubblewrap sandbox ({} ms to start): {}, {}, seccomp filter, {} memory, {} files, {} processes",
        took.as_millis(),
        if p.network { "network allowed" } else { "no network (loopback only)" },
        if b.drops_root() { format!("runs as uid {SANDBOX_UID}") } else { "no privileges".to_string() },
        mib(p.limits.memory),
        mib(p.limits.file_size),
        p.limits.processes
    )
}

fn describe_landlock(l: &Landlock, took: Duration) -> String {
    let p = l.policy();
    format!(
        "Landlock sandbox ({} ms to start; bubblewrap is not available): read-only system, {}, {}, seccomp filter, {} memory{}",
        took.as_millis(),
        if p.network { "network allowed" } else { "no TCP at all (no loopback servers)" },
        if wright_sandbox::running_as_root() {
            format!("runs as uid {SANDBOX_UID}")
        } else {
            "no privileges".to_string()
        },
        mib(p.limits.memory),
        if l.cgroups().is_some() { "" } else { ", no cgroup: detached daemons can outlive a command" }
    )
}

/// The executable that confines commands for the Landlock sandbox: wright itself.
fn helper() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("cannot find wright's own executable: {e}"))
}

fn probe_bwrap(policy: &Policy) -> Result<(Bwrap, Duration), Unavailable> {
    let b = Bwrap::new(policy.clone())?;
    let took = b.probe()?;
    Ok((b, took))
}

fn probe_landlock(policy: &Policy) -> Result<(Landlock, Duration), String> {
    let l = Landlock::new(helper()?, policy.clone());
    let took = l.probe()?;
    Ok((l, took))
}

/// The isolation for `mode`: `bwrap` and `landlock` must work or it is a configuration error;
/// `auto` takes bubblewrap, else Landlock, else refuses to run commands (with the reason);
/// `none` runs them as they are. Only the sandboxes the mode may need are probed.
pub fn choose(mode: Mode, policy: Policy) -> Result<Choice, Exit> {
    select(mode, || probe_bwrap(&policy), || probe_landlock(&policy))
}

/// [`choose`] over probes given as functions (so `doctor` can reuse the ones it made).
fn select(
    mode: Mode,
    bwrap: impl FnOnce() -> Result<(Bwrap, Duration), Unavailable>,
    landlock: impl FnOnce() -> Result<(Landlock, Duration), String>,
) -> Result<Choice, Exit> {
    if mode == Mode::None {
        return Ok(Choice {
            isolation: Box::new(NoIsolation),
            summary: "no sandbox (--sandbox none): commands run with your permissions".into(),
            warning: Some("wright: --sandbox none: generated code runs unconfined, with your files and network".into()),
        });
    }
    let mut why = Vec::new();
    let mut not_installed = false;
    if mode != Mode::Landlock {
        match bwrap() {
            Ok((b, took)) => return Ok(Choice { summary: describe(&b, took), isolation: Box::new(b), warning: None }),
            Err(e) if mode == Mode::Bwrap => return Err(usage(anyhow!("--sandbox bwrap: {e}"))),
            Err(e) => {
                not_installed = matches!(e, Unavailable::NoBwrap);
                why.push(format!("bubblewrap: {e}"));
            }
        }
    }
    match landlock() {
        Ok((l, took)) => {
            let summary = describe_landlock(&l, took);
            let warning = (mode == Mode::Auto).then(|| match wright_prereq::requirement("bubblewrap") {
                // Not installed: what still works, and the one command that fixes it.
                Some(req) if not_installed => {
                    format!("wright: {}", wright_prereq::explain_missing(req, &wright_prereq::Host::from_env()))
                }
                _ => format!("wright: bubblewrap is not usable here, so commands run in the weaker {summary}"),
            });
            Ok(Choice { summary, isolation: Box::new(l), warning })
        }
        Err(e) if mode == Mode::Landlock => Err(usage(anyhow!("--sandbox landlock: {e}"))),
        Err(e) => {
            why.push(format!("Landlock: {e}"));
            let reason = format!(
                "no sandbox works on this machine ({}), so wright does not run generated code; \
                 install bubblewrap, or pass --sandbox none to run it unconfined",
                why.join("; ")
            );
            Ok(Choice {
                isolation: Box::new(Refuse(reason.clone())),
                summary: "no sandbox available: commands are refused".into(),
                warning: Some(format!("wright: {reason}")),
            })
        }
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
        if kind != crate::config::ProviderKind::OpenAi {
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
        Err(e) => (format!("none: {}", e.1), None),
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
