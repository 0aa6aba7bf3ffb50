//! The fallback when bubblewrap is missing: the command is started through wright itself
//! (`wright __confine …`), which limits resources, drops root, restricts the filesystem with
//! Landlock (read-only system, read-write workspace, nothing else), denies TCP with Landlock's
//! network rules (Linux 6.7+), installs the seccomp filter and then becomes the command.
//!
//! Weaker than bubblewrap, and `wright doctor` says so: there is no PID or network namespace,
//! so loopback servers cannot run with the network denied, and a detached daemon is only
//! caught when wright may make a cgroup for the command.
//!
//! Without a PID namespace nothing ends the command when wright itself dies (`kill -9`, a
//! crashed worker): its process group would live on, reparented to init. So the helper does
//! not become the command: it stays as its parent ([`tie_to_wright`]), with a parent-death
//! signal on itself and on the command, and kills the whole group when wright goes.

use crate::bwrap::{
    ETC_FILES, ETC_NETWORK, GroupNames, Policy, SANDBOX_UID, SYSTEM_DIRS, address_space, data_limit,
    hand_over_writable, launch, node_takes_wasm_flag, probe_with, process_limit, running_as_root,
};
use crate::cgroup::Cgroups;
use crate::spec::{CommandSpec, Isolation, RunError, find_program};
use landlock::{
    ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The subcommand of the helper binary that confines and execs.
pub const CONFINE_ARG: &str = "__confine";

/// The newest Landlock ABI wright knows; older kernels get what they support.
const TARGET_ABI: ABI = ABI::V5;

/// Devices a command may read and write.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];

/// The Landlock [`Isolation`].
#[derive(Debug, Clone)]
pub struct Landlock {
    /// The executable that understands [`CONFINE_ARG`] (wright itself).
    helper: PathBuf,
    policy: Policy,
    cgroups: Option<Cgroups>,
    names: GroupNames,
    /// Whether Node is told to check WebAssembly bounds itself (see `node_takes_wasm_flag`).
    wasm_flag: bool,
}

/// Why the helper could not confine a command.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    #[error("bad confinement arguments: {0}")]
    Usage(String),
    #[error("{what}: {message}")]
    Setup { what: &'static str, message: String },
    #[error("Landlock is not enforced by this kernel (it needs Linux 5.13+ with Landlock enabled)")]
    NotEnforced,
    #[error("could not start `{program}`: {message}")]
    Exec { program: String, message: String },
}

fn setup(what: &'static str) -> impl Fn(String) -> ConfineError {
    move |message| ConfineError::Setup { what, message }
}

impl Landlock {
    pub fn new(helper: PathBuf, policy: Policy) -> Self {
        let cgroups = Cgroups::detect();
        let wasm_flag = node_takes_wasm_flag(cgroups.as_ref());
        Self { helper, policy, cgroups, names: GroupNames::new(), wasm_flag }
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn cgroups(&self) -> Option<&Cgroups> {
        self.cgroups.as_ref()
    }

    /// Runs `true` confined; returns how long that took, or why it cannot work here.
    pub fn probe(&self) -> Result<Duration, String> {
        let probe = Self { policy: Policy { writable: Vec::new(), ..self.policy.clone() }, ..self.clone() };
        probe_with(&probe)
    }

    fn args(&self, spec: &CommandSpec, program: &Path) -> Vec<String> {
        let l = self.policy.limits;
        let mut a = vec![CONFINE_ARG.to_string()];
        let mut flag = |k: &str, v: String| {
            a.push(k.to_string());
            a.push(v);
        };
        for p in &self.policy.writable {
            flag("--rw", p.to_string_lossy().into_owned());
        }
        for p in &self.policy.read_only {
            flag("--ro", p.to_string_lossy().into_owned());
        }
        if let Some(dir) = program.parent() {
            flag("--ro", dir.to_string_lossy().into_owned());
        }
        // 0 is "unlimited" to the helper.
        let address_space = address_space(&self.policy, self.cgroups.as_ref()).filter(|_| !spec.reserves_address_space);
        flag("--as", address_space.unwrap_or(0).to_string());
        flag("--data", data_limit(&self.policy, self.cgroups.as_ref(), spec).unwrap_or(0).to_string());
        flag("--fsize", l.file_size.to_string());
        flag("--nofile", l.open_files.to_string());
        flag("--nproc", process_limit(&self.policy).to_string());
        flag("--cpu", l.cpu_seconds.to_string());
        if running_as_root() {
            flag("--uid", SANDBOX_UID.to_string());
        }
        if self.policy.network {
            a.push("--network".into());
        }
        a.push("--".into());
        a.push(program.to_string_lossy().into_owned());
        a.extend(spec.args.iter().cloned());
        a
    }
}

impl Isolation for Landlock {
    fn name(&self) -> &str {
        "landlock"
    }

    /// Landlock's network rules deny TCP as a whole, loopback included, when the network is off.
    fn loopback_tcp(&self) -> bool {
        self.policy.network
    }

    fn wrap(&self, spec: CommandSpec) -> Result<CommandSpec, RunError> {
        let program = find_program(&spec.program, &spec.env)
            .ok_or_else(|| RunError::NotFound { program: spec.program.clone() })?;
        hand_over_writable(&self.policy)?;
        let args = self.args(&spec, &program);
        let helper = self.helper.to_string_lossy().into_owned();
        launch(spec, &self.policy, self.cgroups.as_ref(), &self.names, self.wasm_flag, helper, args)
    }
}

/// What `wright __confine` was asked to do.
#[derive(Debug, Default, PartialEq)]
struct Request {
    rw: Vec<PathBuf>,
    ro: Vec<PathBuf>,
    address_space: u64,
    data: u64,
    file_size: u64,
    open_files: u64,
    processes: u64,
    cpu: u64,
    uid: Option<u32>,
    network: bool,
    command: Vec<OsString>,
}

fn parse(args: &[OsString]) -> Result<Request, ConfineError> {
    let mut r = Request::default();
    let mut it = args.iter();
    let num = |v: Option<&OsString>, k: &str| -> Result<u64, ConfineError> {
        v.and_then(|v| v.to_str())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| ConfineError::Usage(format!("{k} needs a number")))
    };
    while let Some(a) = it.next() {
        match a.to_str().unwrap_or("") {
            "--rw" => r.rw.push(it.next().ok_or_else(|| ConfineError::Usage("--rw needs a path".into()))?.into()),
            "--ro" => r.ro.push(it.next().ok_or_else(|| ConfineError::Usage("--ro needs a path".into()))?.into()),
            "--as" => r.address_space = num(it.next(), "--as")?,
            "--data" => r.data = num(it.next(), "--data")?,
            "--fsize" => r.file_size = num(it.next(), "--fsize")?,
            "--nofile" => r.open_files = num(it.next(), "--nofile")?,
            "--nproc" => r.processes = num(it.next(), "--nproc")?,
            "--cpu" => r.cpu = num(it.next(), "--cpu")?,
            "--uid" => {
                r.uid = Some(u32::try_from(num(it.next(), "--uid")?).map_err(|e| ConfineError::Usage(e.to_string()))?)
            }
            "--network" => r.network = true,
            "--" => {
                r.command = it.cloned().collect();
                break;
            }
            other => return Err(ConfineError::Usage(format!("unknown argument `{other}`"))),
        }
    }
    if r.command.is_empty() {
        return Err(ConfineError::Usage("no command after --".into()));
    }
    Ok(r)
}

fn limit(resource: nix::sys::resource::Resource, value: u64) -> Result<(), ConfineError> {
    let v = if value == 0 { nix::sys::resource::RLIM_INFINITY } else { value };
    nix::sys::resource::setrlimit(resource, v, v)
        .map_err(|e| ConfineError::Setup { what: "setrlimit", message: e.to_string() })
}

fn rules(paths: &[PathBuf], access: landlock::BitFlags<AccessFs>) -> Vec<PathBeneath<PathFd>> {
    // Paths that do not exist here (an optional /etc file) are simply not granted.
    paths.iter().filter_map(|p| PathFd::new(p).ok()).map(|fd| PathBeneath::new(fd, access)).collect()
}

/// `wright __confine [--rw P]… [--ro P]… --as N --data N --fsize N --nofile N --nproc N --cpu N
/// [--uid N] [--network] -- PROGRAM ARGS…`: confine this process, then become the command.
/// Returns only on failure.
pub fn confine_and_exec(args: &[OsString]) -> ConfineError {
    match confine(args) {
        Ok(e) | Err(e) => e,
    }
}

fn confine(args: &[OsString]) -> Result<ConfineError, ConfineError> {
    use nix::sys::resource::Resource;
    // Who started us: if it is gone by the time the parent-death signal is armed, the signal
    // will never come.
    let wright = nix::unistd::getppid();
    let r = parse(args)?;
    limit(Resource::RLIMIT_AS, r.address_space)?;
    limit(Resource::RLIMIT_DATA, r.data)?;
    limit(Resource::RLIMIT_FSIZE, r.file_size)?;
    limit(Resource::RLIMIT_NOFILE, r.open_files)?;
    limit(Resource::RLIMIT_CPU, r.cpu)?;
    limit(Resource::RLIMIT_CORE, 1)?;
    if let Some(uid) = r.uid {
        let id = nix::unistd::Uid::from_raw(uid);
        let gid = nix::unistd::Gid::from_raw(uid);
        nix::unistd::setgroups(&[]).map_err(|e| setup("setgroups")(e.to_string()))?;
        nix::unistd::setresgid(gid, gid, gid).map_err(|e| setup("setresgid")(e.to_string()))?;
        nix::unistd::setresuid(id, id, id).map_err(|e| setup("setresuid")(e.to_string()))?;
    }
    // After the identity change, so the count is the sandbox user's.
    limit(Resource::RLIMIT_NPROC, r.processes)?;

    let read = AccessFs::from_read(TARGET_ABI);
    let all = AccessFs::from_all(TARGET_ABI);
    let system: Vec<PathBuf> = SYSTEM_DIRS.iter().map(PathBuf::from).collect();
    let mut etc: Vec<PathBuf> = ETC_FILES.iter().map(PathBuf::from).collect();
    if r.network {
        etc.extend(ETC_NETWORK.iter().map(PathBuf::from));
    }
    let devices: Vec<PathBuf> = DEVICES.iter().map(PathBuf::from).collect();
    let file_rw = AccessFs::ReadFile | AccessFs::WriteFile;
    let mut ruleset = Ruleset::default().handle_access(all).map_err(|e| setup("landlock")(e.to_string()))?;
    if !r.network {
        ruleset =
            ruleset.handle_access(AccessNet::from_all(TARGET_ABI)).map_err(|e| setup("landlock")(e.to_string()))?;
    }
    let status = ruleset
        .create()
        .map_err(|e| setup("landlock")(e.to_string()))?
        .add_rules(rules(&system, read).into_iter().map(Ok::<_, landlock::RulesetError>))
        .and_then(|rs| rs.add_rules(rules(&etc, read).into_iter().map(Ok::<_, landlock::RulesetError>)))
        .and_then(|rs| {
            rs.add_rules(rules(&[PathBuf::from("/proc")], read).into_iter().map(Ok::<_, landlock::RulesetError>))
        })
        .and_then(|rs| rs.add_rules(rules(&devices, file_rw).into_iter().map(Ok::<_, landlock::RulesetError>)))
        .and_then(|rs| rs.add_rules(rules(&r.ro, read).into_iter().map(Ok::<_, landlock::RulesetError>)))
        .and_then(|rs| rs.add_rules(rules(&r.rw, all).into_iter().map(Ok::<_, landlock::RulesetError>)))
        .map_err(|e| setup("landlock rules")(e.to_string()))?
        .restrict_self()
        .map_err(|e| setup("landlock")(e.to_string()))?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(ConfineError::NotEnforced);
    }
    let program = crate::seccomp::program().map_err(|e| setup("seccomp")(e.to_string()))?;
    seccompiler::apply_filter(&program).map_err(|e| setup("seccomp")(e.to_string()))?;
    // After the identity change: changing credentials clears a parent-death signal.
    tie_to_wright(wright)?;

    use std::os::unix::process::CommandExt;
    let err = std::process::Command::new(&r.command[0]).args(&r.command[1..]).exec();
    Ok(ConfineError::Exec { program: r.command[0].to_string_lossy().into_owned(), message: err.to_string() })
}

/// Makes the command die with wright. The helper forks: the child returns (and becomes the
/// command) with `PR_SET_PDEATHSIG(SIGKILL)` tied to the helper; the helper never returns. It
/// waits for the command and exits as it did, and when wright dies it gets `SIGTERM` (its own
/// parent-death signal) and kills its process group (the runner gave the command a group of
/// its own, led by the helper), so the command's background children go too. What left the
/// group (`setsid`) is caught only by a cgroup, as before.
///
/// A parent-death signal follows the thread that forked, not the process: the runner spawns
/// from tokio's worker threads, which live as long as wright's runtime.
fn tie_to_wright(wright: nix::unistd::Pid) -> Result<(), ConfineError> {
    use nix::sys::signal::{SigSet, SigmaskHow, Signal, sigprocmask};
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    use nix::unistd::{ForkResult, fork, getpgrp, getpid, getppid};
    let err = |what: &'static str| move |e: nix::Error| setup(what)(e.to_string());
    let kill_group = || {
        let _ = nix::sys::signal::killpg(getpgrp(), Signal::SIGKILL);
    };
    let mut mask = SigSet::empty();
    mask.add(Signal::SIGTERM);
    mask.add(Signal::SIGCHLD);
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&mask), None).map_err(err("sigprocmask"))?;
    nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(err("prctl"))?;
    if getppid() != wright {
        kill_group();
        return Err(setup("start")("wright stopped before the command started".into()));
    }
    let helper = getpid();
    // SAFETY: the helper is single-threaded (`wright __confine` runs before any runtime
    // starts), so the child may do anything after the fork.
    match unsafe { fork() }.map_err(err("fork"))? {
        ForkResult::Child => {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(err("prctl"))?;
            if getppid() != helper {
                std::process::exit(125);
            }
            sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&mask), None).map_err(err("sigprocmask"))?;
            Ok(())
        }
        ForkResult::Parent { child } => loop {
            match mask.wait() {
                Ok(Signal::SIGCHLD) => match waitpid(child, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::Exited(_, code)) => std::process::exit(code),
                    Ok(WaitStatus::Signaled(_, signal, _)) => die_like(signal),
                    _ => {}
                },
                Ok(_) => {
                    // wright is gone (or someone asked the helper to stop): the group goes.
                    kill_group();
                    std::process::exit(137);
                }
                Err(_) => {}
            }
        },
    }
}

/// End this process by `signal`, as the child it waited for ended, so whoever runs it sees a
/// signal rather than an exit code.
pub(crate) fn die_like(signal: nix::sys::signal::Signal) -> ! {
    use nix::sys::signal::{SigHandler, SigSet, SigmaskHow, sigprocmask};
    // SAFETY: restoring the default action; no handler is involved.
    let _ = unsafe { nix::sys::signal::signal(signal, SigHandler::SigDfl) };
    let mut only = SigSet::empty();
    only.add(signal);
    let _ = sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&only), None);
    let _ = nix::sys::signal::raise(signal);
    std::process::exit(128 + signal as i32);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn arguments_round_trip() {
        let l = Landlock {
            helper: "/usr/bin/wright".into(),
            policy: Policy { writable: vec!["/w".into()], ..Policy::default() },
            cgroups: None,
            names: GroupNames::new(),
            wasm_flag: false,
        };
        let spec = CommandSpec::new("node", vec!["--test".into()], "/w".into(), vec![]);
        let args = l.args(&spec, Path::new("/usr/bin/node"));
        assert_eq!(args[0], CONFINE_ARG);
        let r = parse(&os(&args.iter().skip(1).map(String::as_str).collect::<Vec<_>>())).unwrap();
        assert_eq!(r.rw, vec![PathBuf::from("/w")]);
        assert!(!r.network);
        assert_eq!(r.command, os(&["/usr/bin/node", "--test"]));
        assert!(r.file_size > 0 && r.processes > 0);
    }

    #[test]
    fn bad_arguments_are_errors_not_panics() {
        assert!(parse(&os(&["--rw"])).is_err());
        assert!(parse(&os(&["--as", "lots", "--", "x"])).is_err());
        assert!(parse(&os(&["--what", "--", "x"])).is_err());
        assert!(parse(&os(&["--rw", "/w"])).is_err(), "no command");
    }
}
