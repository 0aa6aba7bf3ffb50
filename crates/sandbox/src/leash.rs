//! The leash: a run's commands die when its worker stops renewing its lease, even when the
//! worker itself runs no code at all (SIGSTOP, a paused machine).
//!
//! A frozen worker's own timers cannot fire, and a parent-death signal never comes (the worker
//! is alive, only stopped), so the watch has to live outside it. Each command of a leashed run
//! is started through `wright __leash FD -- PROGRAM ARGS…`, a small process that starts the
//! command in its own process group and watches the run's **deadline**: eight bytes in a
//! memory file (`memfd`) that the worker moves forward at every lease renewal that gets
//! through ([`Leash::hold_for`]). The deadline is a time on the system's monotonic clock, which
//! every process reads alike, so the watch needs no message from the worker: when the clock
//! passes the deadline (the worker froze, or could not renew), or the worker is gone, the leash
//! kills the command's whole process group, itself included. bubblewrap's sandbox dies with it
//! (`--die-with-parent`), and so does the Landlock helper's command (its parent-death signal).
//!
//! The command never sees the memory file: it is closed in the command before it starts, so
//! generated code cannot move its own deadline.

use crate::spec::{CommandSpec, RunError, find_program};
use std::ffi::OsString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The hidden first argument that makes `wright` a leash (see the module's documentation).
pub const LEASH_ARG: &str = "__leash";

/// How often a leash looks at its deadline (and at its command, and at the worker): a frozen
/// worker's commands are gone at most this long after the deadline.
pub const LEASH_POLL: Duration = Duration::from_millis(100);

/// A run's leash, held by its worker: the deadline its commands live to, and the executable
/// that watches it. Cloning shares the deadline.
#[derive(Clone, Debug)]
pub struct Leash {
    deadline: Arc<File>,
    helper: PathBuf,
}

/// Now on the system's monotonic clock, in nanoseconds (the same clock in every process).
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    u64::try_from(ts.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(ts.tv_nsec).unwrap_or(0))
}

impl Leash {
    /// A leash whose commands may run for `first` from now, watched by `helper` (wright's own
    /// executable, which answers [`LEASH_ARG`]).
    pub fn new(helper: PathBuf, first: Duration) -> std::io::Result<Self> {
        // SAFETY: a NUL-terminated name and valid flags; the result is checked before use.
        let fd = unsafe { libc::memfd_create(c"wright-leash".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by memfd_create and is owned by nothing else.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let leash = Self { deadline: Arc::new(file), helper };
        leash.hold_for(first)?;
        Ok(leash)
    }

    /// Let the commands run for `lease` from now (called after each lease renewal).
    pub fn hold_for(&self, lease: Duration) -> std::io::Result<()> {
        let ns = u64::try_from(lease.as_nanos()).unwrap_or(u64::MAX);
        self.deadline.write_all_at(&monotonic_ns().saturating_add(ns).to_le_bytes(), 0)
    }

    /// Whether the deadline has passed: the run's lease is gone by its worker's own clock.
    pub fn expired(&self) -> bool {
        let mut b = [0u8; 8];
        match self.deadline.read_exact_at(&mut b, 0) {
            Ok(()) => monotonic_ns() > u64::from_le_bytes(b),
            Err(_) => true,
        }
    }

    /// `spec` (already confined) started through the leash. Refused once the deadline passed.
    pub(crate) fn wrap(&self, mut spec: CommandSpec) -> Result<CommandSpec, RunError> {
        if self.expired() {
            return Err(RunError::Isolation("the build's lease ran out; this run is over".into()));
        }
        let program = find_program(&spec.program, &spec.env)
            .ok_or_else(|| RunError::NotFound { program: spec.program.clone() })?;
        let io = |e: std::io::Error| RunError::Isolation(format!("the command's leash: {e}"));
        let fd = OwnedFd::from(self.deadline.try_clone().map_err(io)?);
        nix::fcntl::fcntl(&fd, nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()))
            .map_err(|e| io(std::io::Error::from(e)))?;
        let mut args = vec![LEASH_ARG.to_string(), fd.as_raw_fd().to_string(), "--".into()];
        args.push(program.to_string_lossy().into_owned());
        args.append(&mut spec.args);
        spec.args = args;
        spec.program = self.helper.to_string_lossy().into_owned();
        spec.inherit.push(Arc::new(fd));
        Ok(spec)
    }
}

/// Why a leash could not start its command.
#[derive(Debug, thiserror::Error)]
#[error("wright leash: {0}")]
pub struct LeashError(String);

/// `wright __leash FD -- PROGRAM ARGS…`: start the command and watch it (see the module's
/// documentation). Returns only when the leash could not start; otherwise it exits as the
/// command did, or is killed with it.
pub fn leash_and_run(args: &[OsString]) -> LeashError {
    match watch(args) {
        Ok(never) => match never {},
        Err(e) => e,
    }
}

fn watch(args: &[OsString]) -> Result<std::convert::Infallible, LeashError> {
    use nix::sys::signal::{SigSet, SigmaskHow, Signal, sigprocmask};
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    use nix::unistd::{ForkResult, fork, getpgrp, getppid};
    let fail = |what: &'static str| move |e: nix::Error| LeashError(format!("{what}: {e}"));
    let worker = getppid();
    // A command running as the same user (the Landlock fallback without root) must not reach
    // the deadline through `/proc/<leash>/fd`: a process that is not dumpable has its `/proc`
    // entries owned by root. (The command, after its exec, is dumpable again.)
    nix::sys::prctl::set_dumpable(false).map_err(fail("prctl"))?;
    let (fd, command) = match args {
        [fd, dashes, program, rest @ ..] if dashes == "--" => {
            let fd: i32 =
                fd.to_str().and_then(|f| f.parse().ok()).ok_or_else(|| LeashError("bad descriptor".into()))?;
            (fd, (program, rest))
        }
        _ => return Err(LeashError("usage: wright __leash FD -- PROGRAM ARGS…".into())),
    };
    // SAFETY: the runner passed this descriptor (the run's deadline) for this process alone.
    let deadline = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let expired = || {
        let mut b = [0u8; 8];
        deadline.read_exact_at(&mut b, 0).is_err() || monotonic_ns() > u64::from_le_bytes(b)
    };
    if expired() {
        return Err(LeashError("the build's lease ran out before the command started".into()));
    }
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&chld), None).map_err(fail("sigprocmask"))?;
    // SAFETY: the leash is single-threaded (`wright __leash` runs before any runtime starts),
    // so the child may do anything after the fork.
    let child = match unsafe { fork() }.map_err(fail("fork"))? {
        ForkResult::Child => {
            // The command never holds the deadline, so it cannot move it.
            drop(deadline);
            let _ = sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&chld), None);
            use std::os::unix::process::CommandExt;
            let e = std::process::Command::new(command.0).args(command.1).exec();
            // The forked child's only channel left: its stderr is the sandbox command's.
            #[allow(clippy::print_stderr)]
            {
                eprintln!("wright leash: could not start {}: {e}", command.0.to_string_lossy());
            }
            std::process::exit(127);
        }
        ForkResult::Parent { child } => child,
    };
    let poll = libc::timespec { tv_sec: 0, tv_nsec: i64::try_from(LEASH_POLL.as_nanos()).unwrap_or(100_000_000) };
    loop {
        // SAFETY: a valid signal set and timespec; the signal's details are not needed.
        unsafe { libc::sigtimedwait(chld.as_ref(), std::ptr::null_mut(), &poll) };
        match waitpid(child, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => std::process::exit(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => crate::confine::die_like(signal),
            _ => {}
        }
        if getppid() != worker || expired() {
            // The runner made the leash the leader of the command's own group; anything else
            // (a leash started by hand) kills only its command.
            if getpgrp() == nix::unistd::getpid() {
                let _ = nix::sys::signal::killpg(getpgrp(), Signal::SIGKILL);
            }
            let _ = nix::sys::signal::kill(child, Signal::SIGKILL);
            std::process::exit(137);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_deadline_moves_with_each_renewal_and_passes_when_none_comes() {
        let leash = Leash::new(PathBuf::from("/proc/self/exe"), Duration::from_millis(200)).unwrap();
        assert!(!leash.expired());
        std::thread::sleep(Duration::from_millis(120));
        leash.hold_for(Duration::from_millis(200)).unwrap();
        std::thread::sleep(Duration::from_millis(120));
        assert!(!leash.expired(), "renewed in time");
        std::thread::sleep(Duration::from_millis(150));
        assert!(leash.expired(), "no renewal for a whole lease");
        let spec = CommandSpec::new("true", vec![], "/".into(), vec![("PATH".into(), "/usr/bin:/bin".into())]);
        assert!(matches!(leash.wrap(spec), Err(RunError::Isolation(_))), "no command starts after it");
    }
}
