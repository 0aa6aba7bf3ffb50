//! wright against the two real llama.cpp OpenAI-compatible servers: llama-cpp-python's
//! `llama_cpp.server` (chat format `chatml-function-calling`) and `llama-server` (`--jinja`), both
//! built from the llama-cpp-python 0.3.36 registry package by `scripts/real-servers.sh` into a
//! cache outside the repository (`$WRIGHT_SERVERS_CACHE`, default `~/.cache/wright-real-servers`),
//! with SmolLM2-135M-Instruct (Q4_1). Ignored by default: the first run compiles llama.cpp twice.
//!
//! cargo test -p wright-cli --test real_servers -- --ignored --test-threads=1
//!
//! The wire traffic of these servers is recorded under crates/provider/tests/fixtures/real/ and
//! replayed by the normal suite; this suite checks that the recordings still tell the truth.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::print_stdout, clippy::print_stderr)] // test code: what was measured or skipped goes to the test log

mod support;

use serde_json::Value;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::{HOST_ENV, Run, assert_contract};

const PROMPT: &str = "make a static page that says hello";
/// The name both servers are told to give the model (as in the recorded fixtures).
const MODEL_ALIAS: &str = "SmolLM2-135M-Instruct";

#[derive(Clone, Copy, Debug)]
enum Server {
    LlamaCppPython,
    LlamaServer,
}

/// `scripts/real-servers.sh build` (once per test binary), then its `paths`.
fn built() -> &'static HashMap<String, String> {
    static PATHS: OnceLock<HashMap<String, String>> = OnceLock::new();
    PATHS.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/real-servers.sh");
        let status = Command::new("bash").arg(&script).arg("build").status().expect("bash runs");
        assert!(status.success(), "{} build failed: {status}", script.display());
        let out = Command::new("bash").arg(&script).arg("paths").output().expect("bash runs");
        assert!(out.status.success(), "{} paths failed", script.display());
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
            .collect()
    })
}

/// A server child process on a loopback port; killed when dropped.
struct Running {
    child: Child,
    port: u16,
    log: PathBuf,
    model_id: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `GET /v1/models` over plain HTTP/1.1; the JSON body when the answer is 200.
fn get_models(port: u16) -> Option<Value> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n")?;
    if !head.lines().next()?.contains(" 200") {
        return None;
    }
    // Either a Content-Length body or one chunk: the JSON object is between the outer braces.
    let json = &body[body.find('{')?..=body.rfind('}')?];
    serde_json::from_str(json).ok()
}

async fn start(server: Server, dir: &Path) -> Running {
    let paths = built();
    let port = free_port();
    let (model, port_arg) = (paths["MODEL"].as_str(), port.to_string());
    let log = dir.join(format!("{server:?}.log"));
    let mut cmd = match server {
        Server::LlamaCppPython => {
            let mut c = Command::new(&paths["PYTHON"]);
            c.args(["-m", "llama_cpp.server", "--model", model, "--model_alias", MODEL_ALIAS]);
            c.args(["--chat_format", "chatml-function-calling", "--n_ctx", "8192"]);
            c.args(["--host", "127.0.0.1", "--port", port_arg.as_str()]);
            c
        }
        Server::LlamaServer => {
            let mut c = Command::new(&paths["LLAMA_SERVER"]);
            c.args(["-m", model, "--alias", MODEL_ALIAS, "--jinja", "-c", "8192"]);
            c.args(["--host", "127.0.0.1", "--port", port_arg.as_str()]);
            c
        }
    };
    let out = std::fs::File::create(&log).unwrap();
    cmd.stdin(Stdio::null()).stdout(out.try_clone().unwrap()).stderr(out);
    let child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {server:?}: {e}"));
    let mut running = Running { child, port, log, model_id: String::new() };
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Some(models) = get_models(port) {
            running.model_id = models["data"][0]["id"].as_str().expect("a model id in /v1/models").to_string();
            return running;
        }
        if let Ok(Some(status)) = running.child.try_wait() {
            panic!("{server:?} exited ({status}) before answering; its log:\n{}", running.log_text());
        }
        assert!(
            Instant::now() < deadline,
            "{server:?} did not answer GET /v1/models within 300 s; its log:\n{}",
            running.log_text()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The real binary against the server, with no key and no WRIGHT_* settings from the host.
async fn run_wright(server: &Running, stream: bool) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.arg("run").arg(PROMPT);
    let base_url = format!("http://127.0.0.1:{}/v1", server.port);
    cmd.args(["--provider", "openai", "--base-url", base_url.as_str()]);
    cmd.args(["--model", server.model_id.as_str(), "--events", "jsonl"]);
    cmd.arg("--workspace").arg(dir.path().join("ws")).arg("--data-dir").arg(dir.path().join("data"));
    // wright's own timeouts (45 s to a first streamed byte, 600 s for a whole answer): they
    // must fit a local CPU server as they are.
    cmd.args(["--max-fix-attempts", "1", "--timeout", "600"]);
    if !stream {
        cmd.arg("--no-stream");
    }
    cmd.current_dir(dir.path()).stdin(Stdio::null()).kill_on_drop(true);
    for k in HOST_ENV {
        cmd.env_remove(k);
    }
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("WRIGHT_") {
            cmd.env_remove(&k);
        }
    }
    let out = tokio::time::timeout(Duration::from_secs(900), cmd.output())
        .await
        .expect("wright ended within 900 s (its --timeout is 600)")
        .unwrap();
    Run::from_output(out, true, dir)
}

async fn check(server: Server, stream: bool) {
    let scratch = tempfile::tempdir().unwrap();
    let running = start(server, scratch.path()).await;
    let started = Instant::now();
    let run = run_wright(&running, stream).await;
    // One line per run for the record (shown with --nocapture).
    let statuses: Vec<&str> = run.of_type("status").iter().filter_map(|e| e["message"].as_str()).collect();
    eprintln!(
        "{server:?} {}: exit {} in {:.0} s; {} model calls, {} tool calls run; phases {:?}; wire notices {:?}",
        if stream { "streamed" } else { "whole" },
        run.code,
        started.elapsed().as_secs_f64(),
        run.of_type("usage").len(),
        run.of_type("tool_result").len(),
        run.phases(),
        statuses
            .iter()
            .filter(|m| m.contains("cannot stream") || m.contains("too long") || m.contains("trying again"))
            .collect::<Vec<_>>()
    );
    let context = || format!("exit {}\nstderr:\n{}\nserver log:\n{}", run.code, run.stderr, running.log_text());
    // 0 built, 1 the build failed (a 135M model rarely passes); never 3 (provider unusable) nor a crash.
    assert!(run.code == 0 || run.code == 1, "{}", context());
    assert_contract(&run);
    assert_eq!(run.events.last().unwrap()["type"], "complete", "{}", context());
    if let Server::LlamaCppPython = server {
        // chatml-function-calling lets the model pick a tool for tool_choice "auto"; SmolLM2 does.
        assert!(
            !run.of_type("tool_result").is_empty(),
            "no tool call was executed; events:\n{}\n{}",
            run.stdout,
            context()
        );
        if stream {
            // It cannot stream tool calls: wright says so once and asks for whole answers.
            let said = run
                .of_type("status")
                .iter()
                .filter(|e| e["message"].as_str().unwrap_or("").contains("cannot stream tool calls"))
                .count();
            assert_eq!(said, 1, "{}", context());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "builds and starts real llama.cpp servers; run: cargo test -p wright-cli --test real_servers -- --ignored --test-threads=1"]
async fn llama_cpp_python_streamed() {
    check(Server::LlamaCppPython, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "builds and starts real llama.cpp servers; run: cargo test -p wright-cli --test real_servers -- --ignored --test-threads=1"]
async fn llama_cpp_python_whole() {
    check(Server::LlamaCppPython, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "builds and starts real llama.cpp servers; run: cargo test -p wright-cli --test real_servers -- --ignored --test-threads=1"]
async fn llama_server_streamed() {
    check(Server::LlamaServer, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "builds and starts real llama.cpp servers; run: cargo test -p wright-cli --test real_servers -- --ignored --test-threads=1"]
async fn llama_server_whole() {
    check(Server::LlamaServer, false).await;
}
