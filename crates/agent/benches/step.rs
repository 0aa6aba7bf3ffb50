//! Orchestration overhead per agent step: an instant scripted model and a cheap tool
//! (announceStatus), so what is measured is wright's own work per turn: request assembly,
//! dispatch, validation, events, history. A second pass makes every step write a new 1 KiB
//! file (createFile), so the workspace grows by a file a step: what a write costs as the
//! project grows. Run: `cargo bench -p wright-agent --bench step`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

use serde_json::json;
use std::sync::Arc;
use std::time::Instant;
use wright_agent::AgentLoop;
use wright_events::{Emitter, Event, EventSink};
use wright_provider::scripted::{ScriptStep, ScriptedProvider};
use wright_provider::{Message, RetryPolicy};
use wright_sandbox::{ProcessRunner, Workspace, WorkspaceLimits};
use wright_tools::{ExecConfig, ToolContext, builtin_registry};

/// Serialises every event like `--events jsonl` would, without the terminal's cost.
struct JsonSink;
impl EventSink for JsonSink {
    fn accept(&self, e: &Event) {
        std::hint::black_box(e.to_json_line());
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let base = std::env::temp_dir().join(format!("wright-bench-{}", std::process::id()));
    for (pass, &steps) in [
        ("announceStatus", 50u32),
        ("announceStatus", 200),
        ("announceStatus", 1000),
        ("createFile", 200),
        ("createFile", 1000),
    ]
    .iter()
    .map(|(p, s)| (*p, s))
    {
        let dir = base.join(format!("{pass}-{steps}"));
        std::fs::create_dir_all(&dir).expect("bench folder");
        let body = "x".repeat(1024);
        let script: Vec<ScriptStep> = (0..steps)
            .map(|i| match pass {
                "createFile" => {
                    ScriptStep::calls(&[("createFile", json!({"path": format!("src/f{i}.js"), "content": body}))])
                }
                _ => ScriptStep::calls(&[("announceStatus", json!({"message": format!("step {i}"), "type": "info"}))]),
            })
            .chain(std::iter::once(ScriptStep::text("done")))
            .collect();
        let ctx = ToolContext {
            workspace: Workspace::open(&dir, WorkspaceLimits::default()).expect("ws"),
            runner: Arc::new(ProcessRunner::default()),
            emitter: Emitter::new("bench", vec![Arc::new(JsonSink)]),
            cancel: Default::default(),
            exec: ExecConfig::for_build(&dir.join(".h"), &dir.join(".t")).expect("exec"),
        };
        let agent = AgentLoop {
            provider: Arc::new(ScriptedProvider::new(script)),
            registry: Arc::new(builtin_registry()),
            ctx,
            model: "bench".into(),
            temperature: None,
            max_tokens: None,
            retry: RetryPolicy::default(),
            max_turns: steps + 10,
            pricing: Default::default(),
            max_cost_usd: None,
            journal: None,
            fit: Default::default(),
            budget: None,
        };
        let mut msgs = vec![Message::system("s".repeat(4000)), Message::user("build a counter")];
        let mut stats = Default::default();
        let t = Instant::now();
        rt.block_on(agent.run(&mut msgs, &mut stats));
        let el = t.elapsed();
        println!(
            "{pass:14} steps={steps:5}  total={:8.2} ms  per step={:7.3} ms  (history grows to {} messages)",
            el.as_secs_f64() * 1e3,
            el.as_secs_f64() * 1e3 / f64::from(steps + 1),
            msgs.len()
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}
