//! A workspace, runner and event sink for the tools' own tests.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use crate::{ExecConfig, ToolContext};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_events::Emitter;
use wright_events::MemorySink;
use wright_sandbox::Workspace;
use wright_sandbox::{ProcessRunner, WorkspaceLimits};

pub struct Fixture {
    pub _dir: tempfile::TempDir,
    pub ctx: ToolContext,
    pub sink: Arc<MemorySink>,
}

pub fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path().join("ws"), WorkspaceLimits::default()).unwrap();
    let sink = Arc::new(MemorySink::new());
    let emitter = Emitter::new("test", vec![sink.clone()]);
    let exec = ExecConfig::for_build(&dir.path().join("home"), &dir.path().join("tmp")).unwrap();
    let ctx = ToolContext {
        workspace: ws,
        runner: Arc::new(ProcessRunner::default()),
        emitter,
        cancel: CancellationToken::new(),
        exec,
    };
    Fixture { _dir: dir, ctx, sink }
}
