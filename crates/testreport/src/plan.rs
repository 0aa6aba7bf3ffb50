//! A plan for running a project's tests: which runner, the command, and where its
//! machine-readable report is read. [`crate::detect`] makes them, per ecosystem.

use std::path::PathBuf;

use crate::Format;

/// Which test runner a [`RunPlan`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Runner {
    /// `node --test` (node's built-in runner), TAP on stdout.
    NodeTest,
    /// jest with `--json --outputFile`.
    Jest,
    /// Vitest (`vitest run`) with its jest-compatible JSON reporter.
    Vitest,
    /// The project's own `npm test` script; TAP only if it uses node's runner.
    NpmScript,
    /// `python3 -m pytest` with `--junitxml`.
    Pytest,
    /// `cargo test`, libtest's text on stdout.
    Cargo,
    /// `go test -json`, its stderr merged into stdout.
    GoTest,
}

/// How to run the tests of a project directory. wright executes it itself (no shell)
/// with its own runner, in the project directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunPlan {
    pub runner: Runner,
    pub program: String,
    pub args: Vec<String>,
    /// Extra environment variables. `NODE_OPTIONS` here should be appended to any
    /// inherited value rather than replace it.
    pub env: Vec<(String, String)>,
    pub format: Format,
    /// Relative to the project dir: the file the runner writes its report into.
    /// When `None`, parse stdout.
    pub report_file: Option<PathBuf>,
    /// Human words for logs and for the model, e.g. "node's built-in test runner (node --test)".
    pub description: String,
}
