//! Choosing how generated code is confined: bubblewrap, else Landlock, else refuse (or none
//! when asked), probed on this machine so the choice and its reasons can be told.

use crate::EngineError;
use crate::config::FileConfig;
use crate::notice::{Warning, WarningKind};
use std::path::PathBuf;
use std::time::Duration;
use wright_sandbox::{Bwrap, Isolation, Landlock, Limits, NoIsolation, Policy, Refuse, SANDBOX_UID, Unavailable};

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
    /// Said before a run when commands are not confined or cannot run.
    pub warnings: Vec<Warning>,
}

impl Mode {
    /// `--sandbox` / `sandbox =`: auto, bwrap, landlock or none.
    pub fn parse(name: &str) -> Result<Self, EngineError> {
        match name {
            "auto" => Ok(Mode::Auto),
            "bwrap" | "bubblewrap" => Ok(Mode::Bwrap),
            "landlock" => Ok(Mode::Landlock),
            "none" => Ok(Mode::None),
            other => Err(EngineError::Usage(format!("unknown sandbox `{other}`; use auto, bwrap, landlock or none"))),
        }
    }
}

/// `--network` / `network =`: whether sandboxed commands reach the network.
pub fn parse_network(name: &str) -> Result<bool, EngineError> {
    match name {
        "deny" | "off" => Ok(false),
        "allow" | "on" => Ok(true),
        other => Err(EngineError::Usage(format!("unknown network mode `{other}`; use deny or allow"))),
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

pub fn mib(bytes: u64) -> String {
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

pub fn probe_bwrap(policy: &Policy) -> Result<(Bwrap, Duration), Unavailable> {
    let b = Bwrap::new(policy.clone())?;
    let took = b.probe()?;
    Ok((b, took))
}

pub fn probe_landlock(policy: &Policy) -> Result<(Landlock, Duration), String> {
    let l = Landlock::new(helper()?, policy.clone());
    let took = l.probe()?;
    Ok((l, took))
}

/// The isolation for `mode`: `bwrap` and `landlock` must work or it is a configuration error;
/// `auto` takes bubblewrap, else Landlock, else refuses to run commands (with the reason);
/// `none` runs them as they are. Only the sandboxes the mode may need are probed.
pub fn choose(mode: Mode, policy: Policy) -> Result<Choice, EngineError> {
    select(mode, || probe_bwrap(&policy), || probe_landlock(&policy))
}

/// [`choose`] over probes given as functions (so `doctor` can reuse the ones it made).
pub fn select(
    mode: Mode,
    bwrap: impl FnOnce() -> Result<(Bwrap, Duration), Unavailable>,
    landlock: impl FnOnce() -> Result<(Landlock, Duration), String>,
) -> Result<Choice, EngineError> {
    if mode == Mode::None {
        return Ok(Choice {
            isolation: Box::new(NoIsolation),
            summary: "no sandbox (--sandbox none): commands run with your permissions".into(),
            warnings: vec![Warning::new(
                WarningKind::Unconfined,
                "--sandbox none: generated code runs unconfined, with your files and network",
            )],
        });
    }
    let mut why = Vec::new();
    let mut not_installed = false;
    if mode != Mode::Landlock {
        match bwrap() {
            Ok((b, took)) => {
                return Ok(Choice { summary: describe(&b, took), isolation: Box::new(b), warnings: vec![] });
            }
            Err(e) if mode == Mode::Bwrap => return Err(EngineError::Usage(format!("--sandbox bwrap: {e}"))),
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
                Some(req) if not_installed => Warning::new(
                    WarningKind::Missing,
                    wright_prereq::explain_missing(req, &wright_prereq::Host::from_env()),
                ),
                _ => Warning::new(
                    WarningKind::WeakerSandbox,
                    format!("bubblewrap is not usable here, so commands run in the weaker {summary}"),
                ),
            });
            Ok(Choice { summary, isolation: Box::new(l), warnings: warning.into_iter().collect() })
        }
        Err(e) if mode == Mode::Landlock => Err(EngineError::Usage(format!("--sandbox landlock: {e}"))),
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
                warnings: vec![Warning::new(WarningKind::NoSandbox, reason)],
            })
        }
    }
}
