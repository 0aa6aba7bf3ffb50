//! The sandbox: every generated project lives in a [`Workspace`] whose paths cannot escape
//! its root, and every command runs through a [`CommandRunner`] with a cleared environment,
//! closed stdin, a timeout that kills the whole process group, and capped output.
//!
//! Isolation (namespaces, seccomp, rlimits) plugs in as an [`Isolation`] that rewrites the
//! command line before it is spawned, so callers never change when it gets stricter.

mod bwrap;
mod cgroup;
mod confine;
mod egress;
mod leash;
pub mod memwatch;
mod output;
mod piped;
mod redact;
mod runner;
pub mod seccomp;
mod socket;
mod spec;
mod workspace;

pub use bwrap::{Bwrap, Limits, Policy, SANDBOX_UID, Unavailable, give_back, running_as_root, shared_folder};
pub use cgroup::Cgroups;
pub use confine::{CONFINE_ARG, ConfineError, Landlock, confine_and_exec};
pub use egress::{EgressBridge, SCRIPT_INSIDE, SOCKET_INSIDE};
pub use leash::{LEASH_ARG, LEASH_POLL, Leash, LeashError, leash_and_run};
pub use memwatch::{ProcessMemory, TreeMemory};
pub use output::CappedOutput;
pub use piped::Piped;
pub use redact::{HOME_MARK, MIN_SECRET_LEN, REDACTED, RedactStream, Redactor};
pub use runner::{CommandOutcome, CommandRunner, MEMORY_POLL, OutputSink, ProcessRunner, StreamKind};
pub use socket::{SocketDir, loopback_ports};
pub use spec::{CommandSpec, Held, Isolation, NoIsolation, Refuse, RunError};
pub use workspace::{PathError, Workspace, WorkspaceLimits, WriteOutcome};
pub use wright_beneath::{
    CopyReport, Dir, Entry as DirEntry, Error as DirError, Kind as EntryKind, Links, Meta as EntryMeta, WalkEntry,
    normalize as normalize_path,
};
