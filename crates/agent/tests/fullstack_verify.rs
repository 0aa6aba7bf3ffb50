//! The full-stack template's own check: wright starts the project's server and asks it for `/`.
//! Real `node` processes, real sockets; every test also checks no server is left running.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use wright_agent::{Template, verify};
use wright_events::{Emitter, MemorySink};
use wright_sandbox::{Bwrap, Policy, ProcessRunner, Workspace, WorkspaceLimits};
use wright_tools::{ExecConfig, ToolContext};

/// These tests are about the server check; the browser check has its own (tests/ of
/// wright-browser and the CLI's browser tests).
fn no_browser() -> wright_agent::verify::BrowserCheck<'static> {
    static OFF: std::sync::LazyLock<wright_browser::BrowserSettings> = std::sync::LazyLock::new(|| {
        wright_browser::BrowserSettings { mode: wright_browser::BrowserMode::Off, ..Default::default() }
    });
    wright_agent::verify::BrowserCheck { settings: &OFF, screenshot: None }
}

struct Fixture {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
}

fn fixture() -> Fixture {
    fixture_in(false)
}

/// With `sandboxed`, commands run in the bubblewrap sandbox wright uses by default (its own
/// network namespace: the server check must work from inside it).
fn fixture_in(sandboxed: bool) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path().join("ws"), WorkspaceLimits::default()).unwrap();
    let runner = if sandboxed {
        let policy = Policy {
            writable: vec![ws.root().to_path_buf(), dir.path().join("home"), dir.path().join("tmp")],
            ..Policy::default()
        };
        ProcessRunner::new(Box::new(Bwrap::new(policy).expect("bubblewrap is needed for the sandboxed tests")))
    } else {
        ProcessRunner::default()
    };
    let ctx = ToolContext {
        workspace: ws,
        runner: Arc::new(runner),
        emitter: Emitter::new("t", vec![Arc::new(MemorySink::new())]),
        cancel: CancellationToken::new(),
        exec: ExecConfig::for_build(&dir.path().join("home"), &dir.path().join("tmp")).unwrap(),
    };
    Fixture { _dir: dir, ctx }
}

const PAGE: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Quotes</title>\n\
<link rel=\"stylesheet\" href=\"styles.css\">\n</head>\n<body>\n<p id=\"quote\"></p>\n<script src=\"app.js\"></script>\n\
</body>\n</html>\n";

const PACKAGE: &str = r#"{ "name": "quotes", "version": "1.0.0", "scripts": { "start": "node server/server.js", "test": "node --test" } }"#;

const SERVER: &str = r#"const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const PAGES = { '/': 'index.html', '/styles.css': 'styles.css', '/app.js': 'app.js' };
const server = http.createServer((req, res) => {
  if (req.url === '/api/quote') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    return res.end(JSON.stringify({ quote: 'Keep going!' }));
  }
  const name = PAGES[req.url];
  if (!name) { res.writeHead(404); return res.end('Not found'); }
  res.writeHead(200);
  res.end(fs.readFileSync(path.join(__dirname, '..', 'client', name)));
});
if (require.main === module) server.listen(process.env.PORT || 3000);
module.exports = { server };
"#;

const TEST: &str = r#"const test = require('node:test');
const assert = require('node:assert');
const { server } = require('../server/server.js');
test('GET /api/quote answers JSON', async () => {
  await new Promise((done) => server.listen(0, done));
  try {
    const res = await fetch(`http://127.0.0.1:${server.address().port}/api/quote`);
    assert.strictEqual(res.status, 200);
    assert.ok((await res.json()).quote);
  } finally { server.close(); }
});
"#;

/// A passing test that does not load the server, for projects whose server is broken on purpose.
const PLAIN_TEST: &str =
    "const test = require('node:test');\nconst assert = require('node:assert');\ntest('ok', () => assert.ok(true));\n";

fn project(server: &str, test: &str) -> Vec<(&'static str, String)> {
    vec![
        ("package.json", PACKAGE.to_string()),
        ("client/index.html", PAGE.to_string()),
        ("client/styles.css", "body { margin: 0; }\n".to_string()),
        ("client/app.js", "document.getElementById('quote').textContent = 'hi';\n".to_string()),
        ("server/server.js", server.to_string()),
        ("tests/server.test.js", test.to_string()),
    ]
}

fn write(fx: &Fixture, files: &[(&'static str, String)]) {
    for (p, c) in files {
        fx.ctx.workspace.write(p, c.as_bytes()).unwrap();
    }
}

/// Processes whose command line mentions this workspace (the server runs with it as its cwd
/// and its entry path is relative, so look at /proc/<pid>/cwd too).
fn node_processes_in(root: &Path) -> Vec<String> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let cwd = std::fs::read_link(entry.path().join("cwd")).ok();
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let in_root = cwd.is_some_and(|c| c.starts_with(&root)) || cmdline.contains(&*root.to_string_lossy());
        if in_root && cmdline.contains("node") {
            found.push(format!("{pid}: {cmdline}"));
        }
    }
    found
}

async fn assert_no_server_left(fx: &Fixture) {
    // The runner kills the group before returning; allow the kernel a moment to reap.
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = node_processes_in(fx.ctx.workspace.root());
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "node processes left behind: {left:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn server_failures(v: &wright_agent::Verification) -> Vec<&wright_agent::Failure> {
    v.failures.iter().filter(|f| f.kind == wright_agent::verify::FailureKind::ServerCheck).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_working_fullstack_app_passes() {
    let fx = fixture();
    write(&fx, &project(SERVER, TEST));
    let v = verify(&fx.ctx, Template::Fullstack, &[], 0, &no_browser()).await;
    assert!(v.passed(), "{:#?}", v.failures);
    assert_no_server_left(&fx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_on_start_fails_with_its_error() {
    let fx = fixture();
    let crashing = format!("throw new Error('boom: no kitchen');\n{SERVER}");
    write(&fx, &project(&crashing, PLAIN_TEST));
    let started = Instant::now();
    let v = verify(&fx.ctx, Template::Fullstack, &[], 1, &no_browser()).await;
    let f = server_failures(&v);
    assert_eq!(f.len(), 1, "{:#?}", v.failures);
    assert!(f[0].summary.starts_with("the server did not start"), "{}", f[0].summary);
    assert!(f[0].summary.contains("boom: no kitchen"), "{}", f[0].summary);
    assert!(f[0].detail.contains("boom: no kitchen"), "{}", f[0].detail);
    // A crash is noticed at once, not after the whole startup window.
    assert!(started.elapsed() < Duration::from_secs(7), "{:?}", started.elapsed());
    assert_eq!(v.failures.len(), 1, "only the server is broken: {:#?}", v.failures);
    assert_no_server_left(&fx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_answers_500_fails() {
    let fx = fixture();
    let broken = "const http = require('node:http');\n\
        http.createServer((req, res) => { console.error('kitchen on fire'); res.writeHead(500); res.end('oops'); })\n\
        .listen(process.env.PORT || 3000);\n";
    write(&fx, &project(broken, PLAIN_TEST));
    let v = verify(&fx.ctx, Template::Fullstack, &[], 1, &no_browser()).await;
    let f = server_failures(&v);
    assert_eq!(f.len(), 1, "{:#?}", v.failures);
    assert_eq!(f[0].summary, "the server answered 500");
    assert!(f[0].detail.contains("kitchen on fire"), "{}", f[0].detail);
    assert_eq!(f[0].title(), "The server does not work");
    assert_no_server_left(&fx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_on_the_wrong_port_and_a_missing_server_fail() {
    let fx = fixture();
    // Ignores PORT: listens on a port of its own choosing and keeps running.
    let deaf = "require('node:http').createServer((q, r) => r.end('hi')).listen(0, () => console.log('listening somewhere else'));\n";
    write(&fx, &project(deaf, PLAIN_TEST));
    let v = verify(&fx.ctx, Template::Fullstack, &[], 1, &no_browser()).await;
    let f = server_failures(&v);
    assert_eq!(f.len(), 1, "{:#?}", v.failures);
    assert!(f[0].summary.starts_with("the server did not start: nothing answered within 8 s"), "{}", f[0].summary);
    assert!(f[0].detail.contains("process.env.PORT"), "{}", f[0].detail);
    assert_no_server_left(&fx).await;

    fx.ctx.workspace.delete("server/server.js").unwrap();
    let v = verify(&fx.ctx, Template::Fullstack, &[], 2, &no_browser()).await;
    let f = server_failures(&v);
    assert_eq!(f.len(), 1, "{:#?}", v.failures);
    assert_eq!(f[0].summary, "no server file was found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_script_names_the_entry_and_other_templates_skip_the_check() {
    let fx = fixture();
    let mut files = project(SERVER, PLAIN_TEST);
    files.retain(|(p, _)| *p != "server/server.js");
    files.push(("backend/main.js", SERVER.to_string()));
    files[0].1 = PACKAGE.replace("node server/server.js", "node --no-warnings ./backend/main.js");
    write(&fx, &files);
    assert_eq!(wright_agent::verify::server_entry(&fx.ctx).as_deref(), Some("backend/main.js"));
    let v = verify(&fx.ctx, Template::Fullstack, &[], 0, &no_browser()).await;
    assert!(v.passed(), "{:#?}", v.failures);

    // An interactive project is not started even if it has a server file.
    fx.ctx.workspace.write("index.html", PAGE.as_bytes()).unwrap();
    fx.ctx.workspace.write("styles.css", b"body{}").unwrap();
    fx.ctx.workspace.write("app.js", b"").unwrap();
    fx.ctx.workspace.write("server.js", b"throw new Error('never run');\n").unwrap();
    fx.ctx.workspace.delete("backend/main.js").unwrap();
    let v = verify(&fx.ctx, Template::Interactive, &[], 0, &no_browser()).await;
    assert!(server_failures(&v).is_empty(), "{:#?}", v.failures);
    assert_no_server_left(&fx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_build_stops_the_server() {
    let fx = fixture();
    // Never listens, never exits: verification would wait out the whole startup window.
    let stuck = "setInterval(() => {}, 1000);\n";
    write(&fx, &project(stuck, PLAIN_TEST));
    let cancel = fx.ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let _ = verify(&fx.ctx, Template::Fullstack, &[], 0, &no_browser()).await;
    assert!(started.elapsed() < Duration::from_secs(6), "{:?}", started.elapsed());
    assert_no_server_left(&fx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_verification_stops_the_server() {
    let fx = fixture();
    write(&fx, &project("setInterval(() => {}, 1000);\n", PLAIN_TEST));
    let r =
        tokio::time::timeout(Duration::from_secs(3), verify(&fx.ctx, Template::Fullstack, &[], 0, &no_browser())).await;
    assert!(r.is_err(), "the stuck server should still be polled after 3 s");
    assert_no_server_left(&fx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_check_works_inside_the_sandbox_network() {
    let fx = fixture_in(true);
    write(&fx, &project(SERVER, TEST));
    let v = verify(&fx.ctx, Template::Fullstack, &[], 0, &no_browser()).await;
    assert!(v.passed(), "{:#?}", v.failures);

    let broken =
        "require('node:http').createServer((q, r) => { r.writeHead(500); r.end(); }).listen(process.env.PORT);\n";
    write(&fx, &project(broken, PLAIN_TEST));
    let v = verify(&fx.ctx, Template::Fullstack, &[], 1, &no_browser()).await;
    let f = server_failures(&v);
    assert_eq!(f.len(), 1, "{:#?}", v.failures);
    assert_eq!(f[0].summary, "the server answered 500");
    assert_no_server_left(&fx).await;
}
