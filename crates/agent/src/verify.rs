//! wright's own verdict on a project: tests, template checks, acceptance commands.
//!
//! Verification never trusts what the model said about its work; it runs things itself.

use crate::prompts::Template;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};
use wright_events::EventKind;
use wright_sandbox::{CommandOutcome, RunError};
use wright_tools::testing::TestStatus;
use wright_tools::{ToolContext, run_logged, run_tests};

/// One reason the project is not done, with the detail a fix needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// `test_failure`, `no_tests`, `test_error`, `template_check`, `server_check`, `check_failed`.
    pub kind: String,
    /// One line for events and people.
    pub summary: String,
    /// Everything the model needs: failing tests with messages and locations, output tails.
    pub detail: String,
}

impl Failure {
    pub fn title(&self) -> &str {
        match self.kind.as_str() {
            "test_failure" => "Failing tests",
            "no_tests" => "No tests",
            "test_error" => "The tests could not run",
            "template_check" => "Problems in the web page",
            "server_check" => "The server does not work",
            "check_failed" => "An acceptance command failed",
            _ => "Problem",
        }
    }
}

/// The result of one verification round.
#[derive(Debug, Clone, Default)]
pub struct Verification {
    pub failures: Vec<Failure>,
}

impl Verification {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Run every check for `template` plus the user's `checks`, emitting `error_detected` for each
/// failure found (tagged with `iteration`).
pub async fn verify(ctx: &ToolContext, template: Template, checks: &[String], iteration: u32) -> Verification {
    let mut v = Verification::default();
    let files = wright_tools::project_files(ctx.workspace.root());

    // 1. The project's tests.
    let run = run_tests(ctx, None).await;
    let has_code =
        files.iter().any(|f| f.ends_with(".js") || f.ends_with(".mjs") || f.ends_with(".py") || f.ends_with(".ts"));
    let tests_required = template.requires_tests() || (template == Template::Auto && has_code);
    match run.status {
        TestStatus::Passed => {}
        TestStatus::Failed => {
            let mut d = format!("{}\n", run.summary());
            for e in &run.report.errors {
                d.push_str(&format!("- {}", e.test));
                if let Some(loc) = &e.location {
                    d.push_str(&format!(" (at {loc})"));
                }
                d.push_str(&format!(":\n{}\n", indent(&e.error)));
            }
            if run.report.errors.is_empty() && !run.output_tail.is_empty() {
                d.push_str(&format!("Output (end):\n{}\n", indent(&run.output_tail)));
            }
            v.failures.push(Failure { kind: "test_failure".into(), summary: run.summary(), detail: d });
        }
        TestStatus::NoTests if tests_required && checks.is_empty() => {
            let msg = run.message.clone().unwrap_or_default();
            v.failures.push(Failure {
                kind: "no_tests".into(),
                summary: "no tests found".into(),
                detail: format!(
                    "{msg}\nThis project has code, and wright only calls a project done when its tests pass."
                ),
            });
        }
        TestStatus::NoTests => {}
        TestStatus::Error => {
            let msg = run.message.clone().unwrap_or_default();
            let mut d = format!("{msg}\n");
            if !run.output_tail.is_empty() {
                d.push_str(&format!("Output (end):\n{}\n", indent(&run.output_tail)));
            }
            v.failures.push(Failure {
                kind: "test_error".into(),
                summary: format!("tests could not run: {}", first_line(&msg)),
                detail: d,
            });
        }
    }

    // 2. The web page, when this kind of project has one (or, for auto, when one exists).
    let entry = entry_page(template, &files);
    if let Some(entry) = entry {
        match wright_webcheck::check_site(ctx.workspace.root(), &entry) {
            Ok(report) => {
                if !report.ok() {
                    let mut d = String::new();
                    for p in &report.problems {
                        match p.line {
                            Some(l) => d.push_str(&format!("- {}:{}: {}\n", p.file, l, p.message)),
                            None => d.push_str(&format!("- {}: {}\n", p.file, p.message)),
                        }
                    }
                    let n = report.problems.iter().filter(|p| !p.message.starts_with("warning: ")).count();
                    v.failures.push(Failure {
                        kind: "template_check".into(),
                        summary: format!("{n} problem(s) in the web page"),
                        detail: d,
                    });
                }
            }
            Err(e) => v.failures.push(Failure {
                kind: "template_check".into(),
                summary: "the web page could not be checked".into(),
                detail: e.to_string(),
            }),
        }
    }

    // 3. A full-stack app's server must start and answer.
    if template == Template::Fullstack {
        if let Some(f) = check_server(ctx).await {
            v.failures.push(f);
        }
    }

    // 4. The user's acceptance commands, through a shell because the user wrote them as one line.
    for check in checks {
        let args = vec!["-c".to_string(), check.clone()];
        match run_logged(ctx, "sh", &args, &[], ctx.exec.command_timeout).await {
            Ok(o) if o.success() => {}
            Ok(o) => {
                let how = if o.timed_out {
                    "timed out".to_string()
                } else {
                    format!("exited with code {}", o.exit_code.map_or("none".into(), |c| c.to_string()))
                };
                let out = format!("{}{}", o.stdout.render(), o.stderr.render());
                v.failures.push(Failure {
                    kind: "check_failed".into(),
                    summary: format!("`{check}` {how}"),
                    detail: format!(
                        "`{check}` {how}. Output (end):\n{}\n",
                        indent(&wright_tools::clip_tail(&out, 2500))
                    ),
                });
            }
            Err(e) => v.failures.push(Failure {
                kind: "check_failed".into(),
                summary: format!("`{check}` could not run"),
                detail: e.to_string(),
            }),
        }
    }

    for f in &v.failures {
        ctx.emitter.emit(EventKind::ErrorDetected {
            iteration,
            kind: f.kind.clone(),
            error: wright_tools::clip(&f.summary, 500),
        });
    }
    v
}

/// How long a server gets to start answering.
const SERVER_STARTUP: Duration = Duration::from_secs(8);
/// How long a connected server gets to send its status line.
const SERVER_ANSWER: Duration = Duration::from_secs(3);
/// Pause between connection attempts while the server starts.
const SERVER_POLL: Duration = Duration::from_millis(150);

/// Where a full-stack project's server starts, relative to the workspace: the file named by
/// `scripts.start` when that is `node <file>`, else the first conventional entry that exists.
pub fn server_entry(ctx: &ToolContext) -> Option<String> {
    let exists = |p: &str| ctx.workspace.resolve(p).is_ok_and(|real| real.is_file());
    start_script_files(ctx)
        .into_iter()
        .chain(["server/server.js", "server/index.js", "server.js", "index.js"].map(String::from))
        .find(|p| exists(p))
}

/// The file arguments of `"start": "node [flags] <file>"` in package.json, in order.
fn start_script_files(ctx: &ToolContext) -> Vec<String> {
    let Ok(bytes) = ctx.workspace.read("package.json") else { return Vec::new() };
    let Ok(pkg) = serde_json::from_slice::<serde_json::Value>(&bytes) else { return Vec::new() };
    let Some(start) = pkg.pointer("/scripts/start").and_then(serde_json::Value::as_str) else {
        return Vec::new();
    };
    let mut words = start.split_whitespace();
    if words.next() != Some("node") {
        return Vec::new();
    }
    words.filter(|w| !w.starts_with('-')).map(|w| w.trim_start_matches("./").to_string()).collect()
}

/// Start the server the way a person would run it (`node <entry>` with `PORT` set) and ask it
/// for `/`. Any status below 500 passes. The server is always stopped before this returns, and
/// also when the build is cancelled or this future is dropped.
async fn check_server(ctx: &ToolContext) -> Option<Failure> {
    let Some(entry) = server_entry(ctx) else {
        return Some(server_failure(
            "no server file was found".into(),
            "wright starts the file named in package.json's start script (`node <file>`), or else the first of server/server.js, server/index.js, server.js, index.js. None exists.".into(),
        ));
    };
    let port = match free_port() {
        Ok(p) => p,
        Err(e) => {
            return Some(server_failure("the server could not be checked".into(), format!("no free port: {e}")));
        }
    };

    // A child token: stopping the server must not cancel the build, but cancelling the build
    // stops the server. The guard stops it if this future is dropped half-way.
    let stop = ctx.cancel.child_token();
    let _stop_on_drop = stop.clone().drop_guard();
    let mut server_ctx = ctx.clone();
    server_ctx.cancel = stop.clone();
    let args = vec![entry.clone()];
    let env = vec![("PORT".to_string(), port.to_string())];
    // Lives a little longer than the startup window, so a slow start shows up as "no answer"
    // rather than as the runner's timeout.
    let lifetime = SERVER_STARTUP + SERVER_ANSWER + Duration::from_secs(2);
    let mut server = tokio::spawn(async move { run_logged(&server_ctx, "node", &args, &env, lifetime).await });

    let deadline = Instant::now() + SERVER_STARTUP;
    let mut pause = Duration::ZERO;
    let ended = loop {
        let attempt = async move {
            tokio::time::sleep(pause).await;
            tokio::task::spawn_blocking(move || probe(port)).await.unwrap_or(Probe::Refused)
        };
        tokio::select! {
            done = &mut server => break Ended::Exited(done.map_err(|e| e.to_string())),
            p = attempt => match p {
                Probe::Refused if Instant::now() < deadline => pause = SERVER_POLL,
                p => break Ended::Probed(p),
            },
        }
    };
    let (ended, outcome) = match ended {
        Ended::Exited(r) => (None, r),
        Ended::Probed(p) => {
            stop.cancel();
            (Some(p), (&mut server).await.map_err(|e| e.to_string()))
        }
    };
    let output = match &outcome {
        Ok(Ok(o)) => output_tail(o),
        _ => String::new(),
    };
    let with_output = |mut detail: String| {
        if !output.trim().is_empty() {
            detail.push_str(&format!("\nServer output (end):\n{}\n", indent(&output)));
        }
        detail
    };
    let run = format!("`node {entry}` with PORT={port}");
    match ended {
        Some(Probe::Status(code)) if code < 500 => None,
        Some(Probe::Status(code)) => Some(server_failure(
            format!("the server answered {code}"),
            with_output(format!("wright ran {run} and asked for `/`; the server answered {code}, a server error.")),
        )),
        Some(Probe::NotHttp(line)) => Some(server_failure(
            "the server's answer is not HTTP".into(),
            with_output(format!("wright ran {run} and asked for `/`; the answer began with {line:?}.")),
        )),
        Some(Probe::Silent) => Some(server_failure(
            "the server accepted a connection but never answered".into(),
            with_output(format!(
                "wright ran {run} and asked for `/`; nothing came back within {} s. Every request needs a response (`res.end(...)`).",
                SERVER_ANSWER.as_secs()
            )),
        )),
        Some(Probe::Refused) => Some(server_failure(
            format!(
                "the server did not start: nothing answered within {} s{}",
                SERVER_STARTUP.as_secs(),
                hint(&output)
            ),
            with_output(format!(
                "wright ran {run}; nothing answered on port {port} within {} s. The server must listen on `process.env.PORT || 3000`.",
                SERVER_STARTUP.as_secs()
            )),
        )),
        None => {
            let how = match &outcome {
                Ok(Ok(o)) if o.cancelled => "it was stopped".to_string(),
                Ok(Ok(o)) if o.timed_out => "it timed out".to_string(),
                Ok(Ok(o)) => format!("it exited with code {}", o.exit_code.map_or("none".into(), |c| c.to_string())),
                Ok(Err(e)) => run_error(e),
                Err(e) => format!("the check failed: {e}"),
            };
            Some(server_failure(
                format!("the server did not start: {how}{}", hint(&output)),
                with_output(format!("wright ran {run}; {how} before answering.")),
            ))
        }
    }
}

enum Ended {
    Exited(Result<Result<CommandOutcome, RunError>, String>),
    Probed(Probe),
}

/// What one request for `/` got.
enum Probe {
    Refused,
    Status(u16),
    NotHttp(String),
    Silent,
}

/// One plain HTTP/1.1 request on loopback (IPv4, then IPv6 for servers bound to `::1`).
/// Blocking on purpose: it runs on the blocking pool, and std's sockets need no extra features.
fn probe(port: u16) -> Probe {
    let addrs = [SocketAddr::from((Ipv4Addr::LOCALHOST, port)), SocketAddr::from((Ipv6Addr::LOCALHOST, port))];
    let Some(mut stream) = addrs.iter().find_map(|a| TcpStream::connect_timeout(a, Duration::from_millis(500)).ok())
    else {
        return Probe::Refused;
    };
    let _ = stream.set_read_timeout(Some(SERVER_ANSWER));
    let _ = stream.set_write_timeout(Some(SERVER_ANSWER));
    if stream.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").is_err() {
        return Probe::Silent;
    }
    let started = Instant::now();
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.contains(&b'\n') && head.len() < 4096 && started.elapsed() < SERVER_ANSWER {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    if head.is_empty() {
        return Probe::Silent;
    }
    let text = String::from_utf8_lossy(&head);
    let line = text.lines().next().unwrap_or("").trim();
    let mut parts = line.split_whitespace();
    match (parts.next(), parts.next().and_then(|c| c.parse::<u16>().ok())) {
        (Some(v), Some(code)) if v.starts_with("HTTP/") => Probe::Status(code),
        _ => Probe::NotHttp(wright_tools::clip(line, 120)),
    }
}

/// A loopback port nobody is using right now.
fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()?.port())
}

fn server_failure(summary: String, detail: String) -> Failure {
    Failure { kind: "server_check".into(), summary, detail }
}

fn output_tail(o: &CommandOutcome) -> String {
    wright_tools::clip_tail(&format!("{}{}", o.stdout.render(), o.stderr.render()), 2500)
}

/// The line of the output that says what went wrong (Node prints the error after the source
/// excerpt), for the one-line summary.
fn hint(output: &str) -> String {
    let lines: Vec<&str> = output.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let line = lines
        .iter()
        .find(|l| l.split([':', ' ', '[']).next().is_some_and(|w| w.ends_with("Error")))
        .or_else(|| lines.iter().rev().find(|l| !l.starts_with("Node.js v")));
    match line {
        Some(l) => format!(" ({})", wright_tools::clip(l, 200)),
        None => String::new(),
    }
}

fn run_error(e: &RunError) -> String {
    match e {
        RunError::NotFound { .. } => "`node` is not installed".into(),
        other => other.to_string(),
    }
}

/// Which page to check: the template's entry, or for `auto` the one that exists.
fn entry_page(template: Template, files: &[String]) -> Option<String> {
    match template {
        Template::Static | Template::Interactive | Template::Fullstack => Some(template.entry_page().to_string()),
        Template::Auto => ["index.html", "client/index.html", "public/index.html"]
            .iter()
            .find(|p| files.iter().any(|f| f == *p))
            .map(|p| (*p).to_string()),
    }
}

fn indent(s: &str) -> String {
    s.trim_end().lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
