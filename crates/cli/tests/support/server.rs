//! A real `wright serve` process for tests: started on free ports against a scripted model,
//! with helpers that speak its HTTP API and read its event streams as a browser would.
#![allow(clippy::print_stdout, clippy::print_stderr)] // test code: what was measured or skipped goes to the test log

use super::{HOST_ENV, OPENAI_KEY, Turn};
use futures::StreamExt;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};

/// A page the static template accepts.
pub const PAGE: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n  <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n  <title>Happy Paws</title>\n</head>\n<body>\n  <h1>Happy Paws dog walking</h1>\n  <p>We walk your dog every day.</p>\n</body>\n</html>\n";

/// A model with no memory between requests, so any number of builds can share it: the first
/// call of a build writes the page (and, when the prompt says "slowly", first runs
/// `sleep SECS` in the sandbox); once it has seen a tool result it says it is done.
pub fn stateless_model(sleep_secs: u32) -> Turn {
    stateless_model_sleeping(&sleep_secs.to_string())
}

/// [`stateless_model`] whose slow builds run `sleep SLEEP` (`sleep` takes fractions: a test can
/// give it a number no other process uses, to find its sandbox's processes on the host).
pub fn stateless_model_sleeping(sleep: &str) -> Turn {
    let write = ("createFile", json!({"path": "index.html", "content": PAGE}));
    Turn::when(
        "\"role\":\"tool\"",
        Turn::text("Done: the page is ready."),
        Turn::when(
            "slowly",
            Turn::calls(&[("runCommand", json!({"command": "sleep", "args": [sleep]})), write.clone()]),
            Turn::when("showing a quote", Turn::calls(&quote_app()), Turn::calls(&[write])),
        ),
    )
}

/// `wright serve` flags for the crash tests: two workers, a one-second lease (a kill is noticed
/// at once), no browser, no limits in the way; then `extra`.
pub fn crash_flags(extra: &[&'static str]) -> Vec<&'static str> {
    let mut flags = vec![
        "--workers",
        "2",
        "--lease",
        "1",
        "--heartbeat",
        "1",
        "--browser-check",
        "off",
        "--max-concurrent-builds",
        "1000",
        "--builds-per-hour",
        "1000",
    ];
    flags.extend_from_slice(extra);
    flags
}

/// A full-stack app: a page that fetches `/api/quote` from its own Node server.
pub fn quote_app() -> Vec<(&'static str, Value)> {
    let server = r#"const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const server = http.createServer((req, res) => {
  const url = req.url.split('?')[0];
  if (url === '/api/quote') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    return res.end(JSON.stringify({ quote: 'Keep going!', method: req.method }));
  }
  if (url !== '/') { res.writeHead(404); return res.end('Not found'); }
  res.writeHead(200, { 'Content-Type': 'text/html' });
  res.end(fs.readFileSync(path.join(__dirname, '..', 'client', 'index.html')));
});
if (require.main === module) server.listen(process.env.PORT || 3000);
module.exports = { server };
"#;
    let test = r#"const test = require('node:test');
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
    let page = r#"<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Quotes</title>
</head>
<body>
  <h1 id="quote">Loading</h1>
  <script>fetch('/api/quote').then((r) => r.json()).then((q) => { document.getElementById('quote').textContent = q.quote; });</script>
</body>
</html>
"#;
    let package = r#"{ "name": "quotes", "version": "1.0.0", "scripts": { "start": "node server/server.js", "test": "node --test" } }
"#;
    vec![
        ("createFile", json!({"path": "package.json", "content": package})),
        ("createFile", json!({"path": "server/server.js", "content": server})),
        ("createFile", json!({"path": "tests/server.test.js", "content": test})),
        ("createFile", json!({"path": "client/index.html", "content": page})),
    ]
}

/// The models, the diagram renderer and the assistant's accessibility library the tests fetched once, linked into a test's data folder
/// so a server or `wright chat` there does not fetch them again.
pub fn link_models(data: &Path) {
    // Mermaid, fetched once for all the tests: every server would otherwise fetch and unpack
    // it in the background (a debug build takes minutes of CPU for that, starving the tests).
    static FETCH: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("vendor-cache");
    {
        let _one_at_a_time = FETCH.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !wright_webui::vendor::mermaid_present(&cache)
            && let Err(e) = wright_webui::vendor::ensure_mermaid(&cache)
        {
            eprintln!("the diagram renderer could not be fetched for the tests: {e}");
        }
        if !wright_webui::vendor::dom_accessibility_api_present(&cache)
            && let Err(e) = wright_webui::vendor::ensure_dom_accessibility_api(&cache)
        {
            eprintln!("the assistant's accessibility library could not be fetched for the tests: {e}");
        }
    }
    let vendor = cache.join("vendor");
    if vendor.is_dir() && !data.join("vendor").exists() {
        let _ = std::os::unix::fs::symlink(&vendor, data.join("vendor"));
    }
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data/models");
    let Ok(entries) = std::fs::read_dir(&shared) else { return };
    let _ = std::fs::create_dir_all(data.join("models"));
    for e in entries.flatten() {
        let name = e.file_name();
        if name.to_string_lossy().ends_with(".gguf") && !data.join("models").join(&name).exists() {
            let _ = std::os::unix::fs::symlink(e.path(), data.join("models").join(&name));
        }
    }
}

pub struct Server {
    pub child: tokio::process::Child,
    pub api: String,
    pub preview: String,
    pub login_url: Option<String>,
    pub data: PathBuf,
    /// The database URL it was given (`--db`); none for the data folder's SQLite file.
    pub db: Option<String>,
}

impl Server {
    /// `wright serve` with its data in `data`, the model at `base_url`, and `extra` flags.
    pub async fn start(data: &Path, base_url: &str, extra: &[&str]) -> Server {
        Self::start_with(data, base_url, None, extra).await
    }

    /// `wright serve` on the database `db` (`postgres://…`, shared with other servers and
    /// `wright worker`s), its build files in `data`. With `--no-workers` in `extra` it serves the
    /// API and previews only; its first line still names both addresses.
    pub async fn start_db(data: &Path, base_url: &str, db: &str, extra: &[&str]) -> Server {
        Self::start_with(data, base_url, Some(db), extra).await
    }

    async fn start_with(data: &Path, base_url: &str, db: Option<&str>, extra: &[&str]) -> Server {
        link_models(data);
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
        cmd.arg("serve").args(["--bind", "127.0.0.1:0", "--preview-bind", "127.0.0.1:0"]);
        cmd.args(["--provider", "openai", "--base-url", base_url, "--model", "mock-model"]);
        cmd.arg("--data-dir").arg(data);
        if let Some(db) = db {
            cmd.args(["--db", db]);
        }
        if !extra.contains(&"--lease") {
            // Short leases so the crash tests do not wait; a bench passes the default.
            cmd.args(["--lease", "2", "--heartbeat", "1"]);
        }
        cmd.args(extra);
        cmd.current_dir(data);
        for k in HOST_ENV {
            cmd.env_remove(k);
        }
        cmd.env("OPENAI_API_KEY", OPENAI_KEY).env("WRIGHT_LOG", "wright_server=info,sqlx=warn");
        cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
            .await
            .expect("wright serve printed nothing within 60 s")
            .unwrap()
            .expect("wright serve exited before listening");
        // "wright serve · API http://A · previews http://B · …"
        let url_after = |label: &str| {
            let i = first.find(label).unwrap() + label.len();
            first[i..].split_whitespace().next().unwrap().to_string()
        };
        let (api, preview) = (url_after("API "), url_after("previews "));
        let mut login_url = None;
        if let Ok(Ok(Some(line))) = tokio::time::timeout(std::time::Duration::from_millis(300), lines.next_line()).await
            && let Some(i) = line.find("http")
        {
            login_url = Some(line[i..].trim().to_string());
        }
        // Keep reading so the pipe never fills.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Server { child, api, preview, login_url, data: data.to_path_buf(), db: db.map(str::to_string) }
    }

    /// `wright ARGS… --data-dir DATA [--db URL]`: a command on the server's database.
    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
        cmd.args(args).arg("--data-dir").arg(&self.data);
        if let Some(db) = &self.db {
            cmd.args(["--db", db]);
        }
        cmd
    }

    /// `wright ARGS…` on the server's data folder and database, which must succeed: what it
    /// printed, trimmed.
    pub async fn cli(&self, args: &[&str]) -> String {
        let mut cmd = self.command(args);
        for k in HOST_ENV {
            cmd.env_remove(k);
        }
        let out = cmd.output().await.unwrap();
        assert!(out.status.success(), "wright {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// `wright ARGS…` on the server's data folder and database, which must fail: what it said
    /// on standard error.
    #[allow(dead_code)] // not every test binary that includes the support module refuses a command
    pub async fn cli_fails(&self, args: &[&str]) -> String {
        let mut cmd = self.command(args);
        for k in HOST_ENV {
            cmd.env_remove(k);
        }
        let out = cmd.output().await.unwrap();
        assert!(!out.status.success(), "wright {args:?} succeeded: {}", String::from_utf8_lossy(&out.stdout));
        String::from_utf8_lossy(&out.stderr).trim().to_string()
    }

    /// `wright users add NAME` on the server's database; the token it prints.
    pub async fn add_user(&self, name: &str, admin: bool) -> String {
        let mut cmd = self.command(&["users", "add", name]);
        if admin {
            cmd.arg("--admin");
        }
        for k in HOST_ENV {
            cmd.env_remove(k);
        }
        let out = cmd.output().await.unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.api)
    }

    /// Kill it the hard way.
    pub async fn kill9(&mut self) {
        let pid = self.child.id().unwrap();
        signal(pid, "KILL");
        let _ = self.child.wait().await;
    }
}

/// Send `sig` (a name: `KILL`, `STOP`, `CONT`, `TERM`) to a process.
pub fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("kill").arg(format!("-{sig}")).arg(pid.to_string()).status().unwrap();
    assert!(status.success(), "kill -{sig} {pid}");
}

/// Send SIGTERM.
pub fn term(server: &Server) {
    signal(server.child.id().unwrap(), "TERM");
}

/// A real `wright worker` process: runs builds from the shared database, serves no HTTP. What
/// it logs goes to a file the test can read ([`Worker::log`]).
pub struct Worker {
    pub child: tokio::process::Child,
    pub pid: u32,
    /// `wright worker · N workers · provider … · store …`
    pub first_line: String,
    pub log_path: PathBuf,
}

impl Worker {
    /// `wright worker --db DB --data-dir DATA` against the model at `base_url`, with `extra`
    /// flags (`--workers`, `--lease`…); its log in `log_path`.
    pub async fn start(data: &Path, base_url: &str, db: &str, log_path: &Path, extra: &[&str]) -> Worker {
        link_models(data);
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
        cmd.arg("worker").args(["--provider", "openai", "--base-url", base_url, "--model", "mock-model"]);
        cmd.arg("--data-dir").arg(data).args(["--db", db]);
        cmd.args(extra);
        cmd.current_dir(data);
        for k in HOST_ENV {
            cmd.env_remove(k);
        }
        cmd.env("OPENAI_API_KEY", OPENAI_KEY)
            .env("WRIGHT_LOG", "wright_server=info,wright_store=info,wright_engine=warn,wright_agent=warn,sqlx=warn");
        let log = std::fs::File::create(log_path).unwrap();
        cmd.stdout(Stdio::piped()).stderr(log).kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        let pid = child.id().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first_line = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
            .await
            .expect("wright worker printed nothing within 60 s")
            .unwrap()
            .unwrap_or_else(|| {
                panic!(
                    "wright worker exited before starting: {}",
                    std::fs::read_to_string(log_path).unwrap_or_default()
                )
            });
        assert!(first_line.starts_with("wright worker · "), "{first_line}");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Worker { child, pid, first_line, log_path: log_path.to_path_buf() }
    }

    /// What it has logged so far (its stderr).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// Whether a worker name (`{host}-{pid}-{tag}-w{n}`, as in `started{worker}`) is one of
    /// this process's workers.
    pub fn owns(&self, worker_name: &str) -> bool {
        worker_name.contains(&format!("-{}-", self.pid))
    }

    /// Kill it the hard way, and reap it.
    pub async fn kill9(&mut self) {
        signal(self.pid, "KILL");
        let _ = self.child.wait().await;
    }

    /// SIGSTOP: frozen, its connections open, its leases left to run out.
    pub fn stop(&self) {
        signal(self.pid, "STOP");
    }

    /// SIGCONT after [`Worker::stop`].
    pub fn resume(&self) {
        signal(self.pid, "CONT");
    }
}

/// A client that does not follow redirects (so a login's cookie can be seen).
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

pub async fn create(c: &reqwest::Client, s: &Server, token: &str, body: Value) -> reqwest::Response {
    c.post(s.url("/api/builds")).bearer_auth(token).json(&body).send().await.unwrap()
}

/// `GET path` as the holder of `token`, read as JSON.
pub async fn get_json(c: &reqwest::Client, s: &Server, token: &str, path: &str) -> Value {
    c.get(s.url(path)).bearer_auth(token).send().await.unwrap().json().await.unwrap()
}

/// Queue a build and return its id.
pub async fn create_ok(c: &reqwest::Client, s: &Server, token: &str, prompt: &str) -> String {
    let res = create(c, s, token, json!({"prompt": prompt, "template": "static"})).await;
    assert_eq!(res.status(), 202);
    let v: Value = res.json().await.unwrap();
    v["id"].as_str().unwrap().to_string()
}

/// One SSE message.
#[derive(Debug, Clone, PartialEq)]
pub struct Sse {
    pub id: u64,
    pub event: String,
    pub data: Value,
}

/// Read an SSE stream to its end: its messages, and how many heartbeat comments came.
pub async fn read_sse(res: reqwest::Response) -> (Vec<Sse>, usize) {
    read_sse_upto(res, usize::MAX).await
}

/// Read an SSE stream until it ends or `most` messages came (then the connection is dropped,
/// as a client whose network fails): its messages, and how many heartbeat comments came.
pub async fn read_sse_upto(res: reqwest::Response, most: usize) -> (Vec<Sse>, usize) {
    assert_eq!(res.status(), 200, "{:?}", res.headers());
    assert!(res.headers()[reqwest::header::CONTENT_TYPE].to_str().unwrap().starts_with("text/event-stream"));
    let mut body = res.bytes_stream();
    let mut buf = String::new();
    let (mut out, mut beats) = (Vec::new(), 0);
    while out.len() < most
        && let Some(chunk) = body.next().await
    {
        buf.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let (mut id, mut event, mut data) = (None, None, None);
            for line in block.lines() {
                if line.starts_with(':') {
                    beats += 1;
                } else if let Some(v) = line.strip_prefix("id: ") {
                    id = Some(v.parse().unwrap());
                } else if let Some(v) = line.strip_prefix("event: ") {
                    event = Some(v.to_string());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data = Some(serde_json::from_str(v).unwrap());
                }
            }
            if let (Some(id), Some(event), Some(data)) = (id, event, data) {
                out.push(Sse { id, event, data });
                if out.len() == most {
                    break;
                }
            }
        }
    }
    (out, beats)
}

/// The events of a build as SSE, after `after` (through `Last-Event-ID` when `header`).
pub async fn stream(c: &reqwest::Client, s: &Server, token: &str, id: &str, after: Option<(u64, bool)>) -> Vec<Sse> {
    let mut req = c.get(s.url(&format!("/api/builds/{id}/events"))).bearer_auth(token);
    match after {
        Some((n, true)) => req = req.header("Last-Event-ID", n.to_string()),
        Some((n, false)) => req = req.query(&[("after", n)]),
        None => {}
    }
    read_sse(req.send().await.unwrap()).await.0
}

/// `wright builds events ID` on the server's database, as JSON values.
pub async fn stored_events(s: &Server, id: &str) -> Vec<Value> {
    let mut cmd = s.command(&["builds", "events", id]);
    for k in HOST_ENV {
        cmd.env_remove(k);
    }
    let out = cmd.output().await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A client that reaches a build's preview host (`{id}-{key}.localhost:PORT`) on this machine,
/// as browsers do for any `*.localhost`, and that host.
pub fn preview_client(s: &Server, preview_url: &str) -> (reqwest::Client, String) {
    let host = preview_url.split("://").nth(1).unwrap().split('/').next().unwrap().to_string();
    let name = host.split(':').next().unwrap().to_string();
    let port: u16 = s.preview.rsplit(':').next().unwrap().parse().unwrap();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let c =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).resolve(&name, addr).build().unwrap();
    (c, host)
}
