//! The bridge in a real bubblewrap sandbox: a command with no network reaches an allowed host
//! and a named API through the proxy, is refused the rest, and cannot go around it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use axum::Router;
use axum::extract::Request;
use axum::routing::any;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;
use wright_egress::{AllowList, Api, BRIDGE_JS, EgressPolicy, KeyPlacement, Limits, OutsideRequest, Proxy, Secret};
use wright_sandbox::{Bwrap, CommandOutcome, CommandRunner, CommandSpec, EgressBridge, Policy, ProcessRunner};

const KEY: &str = "sandbox-test-key-0042";

async fn upstream(name: &'static str) -> u16 {
    let app = Router::new().fallback(any(move |req: Request| async move {
        let q = req.uri().query().unwrap_or("").to_string();
        let key_seen = q.contains(KEY);
        format!("{name}:{}:key={key_seen}", req.uri().path())
    }));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    port
}

fn node() -> PathBuf {
    let out = std::process::Command::new("sh").args(["-c", "command -v node"]).output().unwrap();
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// A folder path far past what a socket address holds, as data folders can be.
fn long_dir(top: &Path) -> PathBuf {
    let mut p = top.to_path_buf();
    for _ in 0..4 {
        p.push("a long data folder for wright builds 0123456789");
    }
    std::fs::create_dir_all(&p).unwrap();
    p
}

const CLIENT: &str = r#"
const http = require('http');
const net = require('net');
const proxy = new URL(process.env.HTTP_PROXY);
function viaProxy(url) {
  return new Promise((resolve) => {
    const req = http.request({ host: proxy.hostname, port: proxy.port, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = '';
      res.on('data', (c) => body += c);
      res.on('end', () => resolve(res.statusCode + ' ' + body.trim()));
    });
    req.on('error', (e) => resolve('error ' + e.code));
    req.end();
  });
}
function direct(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve('connected'); });
    s.on('error', (e) => resolve(e.code));
  });
}
(async () => {
  console.log('allowed=' + await viaProxy(`http://127.0.0.1:${process.argv[1]}/hi`));
  console.log('other=' + (await viaProxy(`http://127.0.0.1:${process.argv[2]}/hi`)).split(' ')[0]);
  const r = await fetch(process.env.WRIGHT_API_WEATHER + '/forecast?city=Porto');
  console.log('api=' + r.status + ' ' + (await r.text()));
  console.log('direct=' + await direct(Number(process.argv[1])));
})();
"#;

#[tokio::test]
async fn a_sandboxed_command_reaches_only_what_the_proxy_allows() {
    let ok = upstream("allowed").await;
    let other = upstream("other").await;
    let top = tempfile::tempdir().unwrap();
    let rt = long_dir(&top.path().join("rt"));
    let ws = top.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let api = Api::new(
        "weather",
        &format!("http://127.0.0.1:{ok}/v2"),
        Secret::new(KEY),
        KeyPlacement::query("weather", "key").unwrap(),
    )
    .unwrap();
    let allow = AllowList::parse(&[format!("127.0.0.1:{ok}")]).unwrap();
    let events: Arc<Mutex<Vec<OutsideRequest>>> = Arc::default();
    let e = events.clone();
    let proxy = Proxy::start(
        EgressPolicy::new(allow, vec![api], Limits::default()).unwrap(),
        &rt,
        Arc::new(move |r| e.lock().unwrap().push(r)),
    )
    .unwrap();
    let script = rt.join("bridge.js");
    std::fs::write(&script, BRIDGE_JS).unwrap();
    let [port] = wright_sandbox::loopback_ports::<1>().unwrap();
    let bridge = EgressBridge { socket: proxy.socket_path().to_path_buf(), script, node: node(), port };
    let policy = Policy { writable: vec![ws.clone()], egress: Some(bridge), ..Policy::default() };
    let runner = ProcessRunner::new(Box::new(Bwrap::new(policy).expect("this test needs bubblewrap")));
    let proxy_url = format!("http://127.0.0.1:{port}");
    let env = vec![
        ("PATH".to_string(), "/usr/local/bin:/usr/bin:/bin".to_string()),
        ("HOME".to_string(), ws.display().to_string()),
        ("HTTP_PROXY".to_string(), proxy_url.clone()),
        ("WRIGHT_API_WEATHER".to_string(), format!("{proxy_url}/_api/weather")),
    ];
    let run = |program: &str, args: Vec<String>| {
        let spec = CommandSpec::new(program, args, ws.clone(), env.clone());
        let runner = &runner;
        async move { runner.run(spec, &(), &CancellationToken::new()).await.unwrap() }
    };
    let o: CommandOutcome = run("node", vec!["-e".into(), CLIENT.into(), ok.to_string(), other.to_string()]).await;
    let out = o.stdout.render();
    assert!(o.success(), "{out}\n{}", o.stderr.render());
    assert!(out.contains("allowed=200 allowed:/hi:key=false"), "{out}");
    assert!(out.contains("other=403"), "{out}");
    assert!(out.contains("api=200 allowed:/v2/forecast:key=true"), "the key was added outside: {out}");
    assert!(!out.contains(KEY), "{out}");
    assert!(out.contains("direct=ECONNREFUSED"), "the host's loopback is not the sandbox's: {out}");

    let ev = events.lock().unwrap().clone();
    assert_eq!(ev.iter().filter(|e| e.allowed).count(), 2, "{ev:?}");
    assert_eq!(ev.iter().filter(|e| !e.allowed).count(), 1, "{ev:?}");

    // The bridge passes the command's exit code and output through untouched.
    let o = run("sh", vec!["-c".into(), "echo out; echo err >&2; exit 7".into()]).await;
    assert_eq!(o.exit_code, Some(7));
    assert_eq!(o.stdout.render().trim(), "out");
    assert_eq!(o.stderr.render().trim(), "err");
    let o = run("sh", vec!["-c".into(), "kill -TERM $$".into()]).await;
    assert_eq!(o.exit_code, Some(128 + 15), "a command killed by a signal exits as a shell would say it");
}
