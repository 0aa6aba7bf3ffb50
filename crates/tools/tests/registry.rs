//! The registry with the ten contract tools, through the crate's public API: malformed calls
//! become readable failures, a run past its lease runs nothing, and the specs carry the
//! contract's arguments.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_events::{Emitter, MemorySink};
use wright_provider::ToolCall;
use wright_sandbox::{ProcessRunner, Workspace, WorkspaceLimits};
use wright_tools::{ExecConfig, ToolContext, builtin_registry};

struct Fixture {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
    sink: Arc<MemorySink>,
}

/// A project folder, a plain runner and an event sink, as a build gives its tools.
fn fixture() -> Fixture {
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

fn call(name: &str, args: &str) -> ToolCall {
    ToolCall { id: "c1".into(), name: name.into(), arguments: args.into() }
}

#[tokio::test]
async fn malformed_calls_become_readable_failures() {
    let f = fixture();
    let r = builtin_registry();
    assert_eq!(r.names().len(), 10);
    let o = r.dispatch(&call("createFile", "{\"path\": \"a.txt\", \"content\": "), &f.ctx).await;
    assert!(!o.ok);
    assert!(o.value["error"].as_str().unwrap().contains("not valid JSON"));
    let o = r.dispatch(&call("makeCoffee", "{}"), &f.ctx).await;
    assert!(o.value["error"].as_str().unwrap().starts_with("unknown tool `makeCoffee`"));
    let o = r.dispatch(&call("createFile", "{\"path\": 7, \"content\": \"x\"}"), &f.ctx).await;
    assert_eq!(o.value["error"], "invalid arguments for createFile: `path` must be a string, but got an integer");
    let o = r.dispatch(&call("readFile", "{\"path\": \"nope.txt\"}"), &f.ctx).await;
    assert_eq!(o.value["error"], "`nope.txt` does not exist");
    let o = r.dispatch(&call("readFile", "{\"path\": \"../../etc/passwd\"}"), &f.ctx).await;
    assert_eq!(o.value["error"], "`../../etc/passwd` points outside the project folder");
    let evs = f.sink.events();
    assert_eq!(evs.iter().filter(|e| e.kind.type_name() == "tool_call").count(), 5);
    assert_eq!(evs.iter().filter(|e| e.kind.type_name() == "tool_result").count(), 5);
}

/// A run past its lease (its worker froze and woke, or lost the database) writes nothing
/// and runs nothing more, whether or not anything told it yet.
#[tokio::test]
async fn a_run_past_its_lease_runs_no_tool() {
    let mut f = fixture();
    let leash = wright_sandbox::Leash::new("/proc/self/exe".into(), std::time::Duration::from_millis(50)).unwrap();
    f.ctx.runner = std::sync::Arc::new(wright_sandbox::ProcessRunner::default().with_leash(Some(leash)));
    let r = builtin_registry();
    let o = r.dispatch(&call("createFile", "{\"path\": \"a.txt\", \"content\": \"in time\"}"), &f.ctx).await;
    assert!(o.ok, "{}", o.value);
    std::thread::sleep(std::time::Duration::from_millis(80));
    let o = r.dispatch(&call("createFile", "{\"path\": \"b.txt\", \"content\": \"late\"}"), &f.ctx).await;
    assert!(!o.ok && o.value["error"].as_str().unwrap().contains("lease ran out"), "{}", o.value);
    assert!(f.ctx.workspace.root().join("a.txt").exists() && !f.ctx.workspace.root().join("b.txt").exists());
}

#[tokio::test]
async fn specs_expose_contract_arguments() {
    let r = builtin_registry();
    let specs = r.specs();
    let get = |n: &str| specs.iter().find(|s| s.name == n).unwrap().parameters.clone();
    assert_eq!(get("createFile")["required"], serde_json::json!(["path", "content"]));
    assert!(get("runCommand")["properties"]["args"].is_object());
    assert!(get("runTests")["properties"]["testFile"].is_object());
    assert!(get("announceStatus")["properties"]["type"].to_string().contains("warning"));
    assert!(get("applyPatch")["properties"]["patch"].is_object());
    assert!(get("searchFiles")["properties"]["pattern"].is_object());
}
