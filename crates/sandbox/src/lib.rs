//! The sandbox: every generated project lives in a [`Workspace`] whose paths cannot escape
//! its root, and every command runs through a [`CommandRunner`] with a cleared environment,
//! closed stdin, a timeout that kills the whole process group, and capped output.
//!
//! Isolation (namespaces, seccomp, rlimits) plugs in as an [`Isolation`] that rewrites the
//! command line before it is spawned, so callers never change when it gets stricter.

mod output;
mod runner;
mod workspace;

pub use output::CappedOutput;
pub use runner::{
    CommandOutcome, CommandRunner, CommandSpec, Isolation, NoIsolation, OutputSink, ProcessRunner, RunError, StreamKind,
};
pub use workspace::{PathError, Workspace, WorkspaceLimits, WriteOutcome};
