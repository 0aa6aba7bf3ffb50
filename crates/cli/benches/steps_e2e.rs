//! What one agent step costs end to end, measured from outside: the real `wright run` binary,
//! through the OpenAI wire (streamed), against the local scripted server of the tests.
//!
//! A step is one model turn that calls `announceStatus` ("step k") and `createFile` (a new
//! 1 KiB file; the first step writes `index.html`). Builds of 20 and of 200 steps are timed
//! whole (process start to exit); ms per extra step = (t200 - t20) / 180. Then the 200-step
//! build's steps are taken apart with the mock's clock (when each request arrived, how long
//! the mock took over it) and the events' `ts` (`--events jsonl`):
//!
//! - request leg: last `tool_result` of step k-1 → `usage` of step k; of which wright building
//!   and sending the request (→ the mock has it), the mock's own work, and the response's way
//!   back until `usage` is stored and printed;
//! - each tool: its `tool_call` → its `tool_result`;
//! - the rest between events: `usage` → first `tool_call`, and between the two tools.
//!
//! `ts` has millisecond resolution (truncated); per-step figures are means over 199 steps,
//! and 0.5 ms is added to a `ts` compared with the mock's µs clock.
//!
//! Run: `cargo bench -p wright-cli --bench steps_e2e`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a panic is the report
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

#[path = "../tests/support/mod.rs"]
mod support;

use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Instant;
use support::server::PAGE;
use support::{MockLlm, Run, Timing, Turn, assert_contract, wright_with};

const SMALL: usize = 20;
const LARGE: usize = 200;
const ROUNDS: usize = 3;

fn script(steps: usize) -> Vec<Turn> {
    let body = "x".repeat(1024);
    (0..steps)
        .map(|k| {
            let (path, content) = if k == 0 {
                ("index.html".to_string(), PAGE.to_string())
            } else {
                (format!("src/f{k}.js"), body.clone())
            };
            Turn::calls(&[
                ("announceStatus", json!({"message": format!("step {k}"), "type": "info"})),
                ("createFile", json!({"path": path, "content": content})),
            ])
        })
        .chain(std::iter::once(Turn::text("Done: the page is ready.")))
        .collect()
}

/// One build of `steps` steps: wall time (ms), the run, and the mock's timings.
async fn build(steps: usize) -> (f64, Run, Vec<Timing>) {
    let llm = MockLlm::start_sized(script(steps), Turn::text("Done.")).await;
    let max_turns = (steps + 50).to_string();
    let extra = [
        "--template",
        "static",
        "--browser-check",
        "off",
        "--sandbox",
        "none",
        "--note-budget",
        "0",
        "--max-turns",
        &max_turns,
    ];
    let t = Instant::now();
    let run = wright_with("openai", &llm.base_url, "a landing page for a dog walker", &extra, &[]).await;
    let wall = t.elapsed().as_secs_f64() * 1000.0;
    assert_contract(&run);
    assert_eq!(run.code, 0, "the build must publish; stderr: {}", run.stderr);
    let timings = llm.timings();
    assert_eq!(timings.len(), steps + 1, "one request per step and the last answer: no retries");
    assert!(
        !run.stderr.contains("truncated") && !run.stderr.contains("compacted"),
        "the conversation must not be compacted: {}",
        run.stderr
    );
    (wall, run, timings)
}

fn ts_ms(e: &Value) -> f64 {
    chrono::DateTime::parse_from_rfc3339(e["ts"].as_str().unwrap()).unwrap().timestamp_millis() as f64
}

/// One step as the events tell it: `usage` time, each call's (name, call ts, result ts).
#[derive(Default)]
struct Step {
    usage: f64,
    calls: Vec<(String, f64, f64)>,
}

fn steps_of(run: &Run) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut open: HashMap<String, (String, f64)> = HashMap::new();
    for e in &run.events {
        match e["type"].as_str().unwrap() {
            "usage" => steps.push(Step { usage: ts_ms(e), calls: vec![] }),
            "tool_call" => {
                open.insert(e["id"].as_str().unwrap().into(), (e["name"].as_str().unwrap().into(), ts_ms(e)));
            }
            "tool_result" => {
                let (name, at) = open.remove(e["id"].as_str().unwrap()).unwrap();
                steps.last_mut().unwrap().calls.push((name, at, ts_ms(e)));
            }
            _ => {}
        }
    }
    steps
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Where the time of the 200-step build's steps 1..n went (ms per step, means).
fn breakdown(run: &Run, timings: &[Timing]) {
    let steps = steps_of(run);
    assert_eq!(steps.len(), timings.len(), "one usage event per request");
    let mut rows: Vec<(&str, Vec<f64>)> = [
        "step (last tool_result → next)",
        "  request leg (last tool_result → usage)",
        "    wright builds and sends the request",
        "    the mock's own work",
        "    response back, parsed, usage stored",
        "  announceStatus (tool_call → tool_result)",
        "  createFile (tool_call → tool_result)",
        "  rest between events",
        "mock: arrival k → arrival k+1",
        "mock: arrival k → arrival k+1, minus tool time",
    ]
    .into_iter()
    .map(|l| (l, vec![]))
    .collect();
    let tool = |s: &Step, name: &str| s.calls.iter().filter(|c| c.0 == name).map(|c| c.2 - c.1).sum::<f64>();
    // The last model answer has no tools; steps 1..LARGE-1 each follow a step with tools.
    for k in 1..steps.len() - 1 {
        let (prev, s, t) = (&steps[k - 1], &steps[k], &timings[k]);
        let prev_end = prev.calls.last().unwrap().2;
        let end = s.calls.last().unwrap().2;
        let (announce, create) = (tool(s, "announceStatus"), tool(s, "createFile"));
        let leg = s.usage - prev_end;
        let cycle = end - prev_end;
        let tools: f64 = s.calls.iter().map(|c| c.2 - c.1).sum();
        let values = [
            cycle,
            leg,
            t.arrived_ms - (prev_end + 0.5),
            t.work_ms,
            (s.usage + 0.5) - (t.arrived_ms + t.work_ms),
            announce,
            create,
            cycle - leg - announce - create,
            timings[k + 1].arrived_ms - t.arrived_ms,
            timings[k + 1].arrived_ms - t.arrived_ms - tools,
        ];
        for (row, v) in rows.iter_mut().zip(values) {
            row.1.push(v);
        }
    }
    let n = rows[0].1.len();
    let q = n / 4;
    println!("\n## Where a step goes ({LARGE}-step build, steps 1..{n}; ms, mean · first quarter · last quarter)");
    for (label, v) in &rows {
        println!("{label:<50} {:>6.2} · {:>6.2} · {:>6.2}", mean(v), mean(&v[..q]), mean(&v[n - q..]));
    }
    let bytes: Vec<f64> = timings.iter().map(|t| t.bytes as f64 / 1024.0).collect();
    println!(
        "request body: {:.0} KiB first, {:.0} KiB last; {} events in the build",
        bytes[0],
        bytes[bytes.len() - 1],
        run.events.len()
    );
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    println!("machine: {} cores", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0));
    build(5).await; // warm the binary and the file cache
    let mut last = None;
    println!("\n## Whole builds (wall time of `wright run`, ms)");
    for round in 1..=ROUNDS {
        let (small, ..) = build(SMALL).await;
        let (large, run, timings) = build(LARGE).await;
        println!(
            "round {round}: {SMALL} steps {small:.0} ms, {LARGE} steps {large:.0} ms → {:.2} ms per extra step",
            (large - small) / (LARGE - SMALL) as f64
        );
        last = Some((run, timings));
    }
    let (run, timings) = last.unwrap();
    breakdown(&run, &timings);
}
