//! What the ecosystems' integration tests share: the bubblewrap sandbox a project's commands
//! run in (network off, as in a build) and how one command runs there.
#![allow(dead_code)] // each test binary uses its own part

use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_sandbox::{Bwrap, CommandOutcome, CommandRunner, CommandSpec, Policy, ProcessRunner};

/// A bubblewrap runner with the network off, `writable` read-write and `read_only` (the
/// package cache, a toolchain) mounted read-only. `cargo xtask setup` installs bubblewrap, so
/// one that cannot sandbox here fails the test with the reason.
pub fn sandbox(writable: &[&Path], read_only: &[PathBuf]) -> ProcessRunner {
    let policy = Policy {
        network: false,
        writable: writable.iter().map(|p| p.to_path_buf()).collect(),
        read_only: read_only.to_vec(),
        ..Policy::default()
    };
    let bwrap = Bwrap::new(policy).unwrap_or_else(|e| panic!("these tests need bubblewrap: {e}"));
    bwrap.probe().unwrap_or_else(|e| panic!("bubblewrap cannot sandbox here: {e}"));
    ProcessRunner::new(Box::new(bwrap))
}

/// Run `argv` in `cwd` with `env` (at most 5 minutes).
pub async fn run_in(runner: &ProcessRunner, argv: &[String], cwd: &Path, env: &[(String, String)]) -> CommandOutcome {
    let mut spec = CommandSpec::new(argv[0].clone(), argv[1..].to_vec(), cwd.to_path_buf(), env.to_vec());
    spec.timeout = Duration::from_secs(300);
    runner.run(spec, &(), &CancellationToken::new()).await.unwrap()
}

/// A command's exit code and output, for an assertion's message.
pub fn shown(o: &CommandOutcome) -> String {
    format!("exit {:?}\n{}\n{}", o.exit_code, o.stdout.render(), o.stderr.render())
}
