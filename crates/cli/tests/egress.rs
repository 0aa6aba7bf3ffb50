//! Outside access end to end: a scripted model writes a full-stack app whose server orders a
//! forecast from a named API (`process.env.WRIGHT_API_WEATHER`) and also tries a host that is
//! not allowed, through the proxy. The app's own tests call its endpoint during VERIFYING, in
//! the real sandbox. The allowed call works and is an `outside_request` event, the other is
//! refused and reported, and the API key is nowhere: not in the files, the events or the
//! prompts the model was sent.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use axum::Router;
use axum::extract::Request;
use axum::routing::any;
use serde_json::json;
use std::sync::{Arc, Mutex};
use support::server::{Server, client, get_json, preview_client, stream};
use support::{MockLlm, Turn, assert_contract, wright_in};

const KEY: &str = "wx-e2e-4f1c9a7730b2";

/// A server on loopback that records what it was asked (path and query) and answers JSON.
async fn recording(answer: &'static str) -> (u16, Arc<Mutex<Vec<String>>>) {
    serve_recording(answer, false).await
}

async fn serve_recording(answer: &'static str, cors: bool) -> (u16, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let s = seen.clone();
    let app = Router::new().fallback(any(move |req: Request| {
        let s = s.clone();
        async move {
            s.lock().unwrap().push(req.uri().to_string());
            let allow = if cors { "*" } else { "null" };
            ([("content-type", "application/json"), ("access-control-allow-origin", allow)], answer)
        }
    }));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    (port, seen)
}

fn server_js(blocked: u16) -> String {
    format!(
        r#"const http = require('node:http');
// The kitchen orders from its supplier; the page only ever asks /api/weather.
async function forecast() {{
  const base = process.env.WRIGHT_API_WEATHER;
  if (!base) return {{ error: 'no weather supplier configured' }};
  const res = await fetch(base + '/forecast?city=Lisboa');
  return res.json();
}}
// A host that is not allowed, asked through the proxy: the answer is its status.
function elsewhere() {{
  return new Promise((resolve) => {{
    const proxy = new URL(process.env.HTTP_PROXY);
    const req = http.request({{ host: proxy.hostname, port: proxy.port, path: 'http://127.0.0.1:{blocked}/secret' }}, (res) => {{
      res.resume();
      resolve(res.statusCode);
    }});
    req.on('error', (e) => resolve(e.code));
    req.end();
  }});
}}
const server = http.createServer(async (req, res) => {{
  if (req.url === '/api/weather') {{
    const body = {{ forecast: await forecast(), elsewhere: await elsewhere() }};
    res.writeHead(200, {{ 'Content-Type': 'application/json' }});
    return res.end(JSON.stringify(body));
  }}
  res.writeHead(200, {{ 'Content-Type': 'text/html' }});
  res.end('<!doctype html><html><head><title>Weather</title></head><body><h1>Weather</h1></body></html>');
}});
if (require.main === module) server.listen(process.env.PORT || 3000);
module.exports = {{ server }};
"#
    )
}

const TEST_JS: &str = r#"const test = require('node:test');
const assert = require('node:assert');
const { server } = require('../server/server.js');
test('the kitchen gets the forecast from its supplier and nothing from elsewhere', async () => {
  await new Promise((done) => server.listen(0, done));
  try {
    const res = await fetch(`http://127.0.0.1:${server.address().port}/api/weather`);
    const body = await res.json();
    assert.strictEqual(body.forecast.today, 'sunny');
    assert.strictEqual(body.elsewhere, 403);
  } finally { server.close(); }
});
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fullstack_app_orders_from_its_supplier_through_the_proxy_and_the_key_stays_outside() {
    let (weather, weather_seen) = recording(r#"{"today":"sunny"}"#).await;
    let (blocked, blocked_seen) = recording(r#"{"secret":true}"#).await;
    let files = [
        (
            "createFile",
            json!({"path": "package.json", "content": r#"{ "name": "weather", "version": "1.0.0", "scripts": { "start": "node server/server.js", "test": "node --test" } }"#}),
        ),
        ("createFile", json!({"path": "server/server.js", "content": server_js(blocked)})),
        ("createFile", json!({"path": "tests/server.test.js", "content": TEST_JS})),
        (
            "createFile",
            json!({"path": "client/index.html", "content": "<!doctype html><html><body><h1>Weather</h1></body></html>"}),
        ),
    ];
    let mock = MockLlm::start(vec![Turn::calls(&files), Turn::text("Done.")]).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("wright.toml"),
        format!(
            "[egress]\nallow = []\nmax_requests = 50\n\n[egress.apis.weather]\nbase_url = \"http://127.0.0.1:{weather}/v1\"\nkey_env = \"WEATHER_KEY\"\nquery = \"appid\"\n"
        ),
    )
    .unwrap();
    let run = wright_in(
        dir,
        "openai",
        &mock.base_url,
        "a weather dashboard for Lisboa",
        &["--template", "fullstack", "--browser-check", "off", "--sandbox", "bwrap"],
        &[("WEATHER_KEY", KEY)],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}\nstdout: {}", run.stderr, run.stdout);
    assert_contract(&run);

    // The supplier got the key, added outside the sandbox; the other host heard nothing.
    let seen = weather_seen.lock().unwrap().clone();
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|u| u == &format!("/v1/forecast?city=Lisboa&appid={KEY}")), "{seen:?}");
    assert!(blocked_seen.lock().unwrap().is_empty());

    let outside = run.of_type("outside_request");
    let api_call = outside.iter().find(|e| e["api"] == "weather").expect("the API call is an event");
    assert_eq!(api_call["allowed"], true);
    assert_eq!(api_call["status"], 200);
    assert_eq!(api_call["method"], "GET");
    assert_eq!(api_call["host"], format!("127.0.0.1:{weather}"));
    let refused = outside.iter().find(|e| e["allowed"] == false).expect("the refused call is an event");
    assert_eq!(refused["host"], format!("127.0.0.1:{blocked}"));
    assert_eq!(refused["status"], 403);
    assert!(refused["reason"].as_str().unwrap().contains("not on this build's list"));

    // The model was told about its supplier, by name, without the key.
    let prompts = serde_json::to_string(&mock.requests()).unwrap();
    assert!(prompts.contains("process.env.WRIGHT_API_WEATHER"), "the prompt names the API");
    assert!(!prompts.contains(KEY), "the key reached the model");
    assert!(!run.stdout.contains(KEY), "the key is in the events");
    assert!(!run.stderr.contains(KEY));
    for entry in walk(&run.workspace()) {
        let text = std::fs::read(&entry).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&text).contains(KEY), "the key is in {}", entry.display());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_for_a_host_the_admin_did_not_allow_is_said_and_stays_closed() {
    let mock = MockLlm::start(vec![Turn::text("Nothing to do.")]).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wright.toml"), "[egress]\nallow = [\"api.example.com\"]\n").unwrap();
    let run = wright_in(
        dir,
        "openai",
        &mock.base_url,
        "a static page",
        &[
            "--template",
            "static",
            "--browser-check",
            "off",
            "--allow-host",
            "evil.example.com",
            "--allow-host",
            "api.example.com",
        ],
        &[],
    )
    .await;
    assert!(
        run.stderr.contains("outside access to evil.example.com was asked for but is not allowed here"),
        "{}",
        run.stderr
    );
    let open = run.stderr.lines().find(|l| l.contains("outside access through a filtering proxy")).unwrap_or_default();
    assert!(open.contains("api.example.com") && !open.contains("evil"), "{}", run.stderr);

    // Without any [egress], asking is a usage error.
    let mock = MockLlm::start(vec![Turn::text("Nothing to do.")]).await;
    let run = wright_in(
        tempfile::tempdir().unwrap(),
        "openai",
        &mock.base_url,
        "a static page",
        &["--allow-host", "a.com"],
        &[],
    )
    .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("allows none"), "{}", run.stderr);
}

/// [`recording`], readable by a page on another origin (CORS).
async fn readable_by_pages(answer: &'static str) -> (u16, Arc<Mutex<Vec<String>>>) {
    serve_recording(answer, true).await
}

/// A page that shows what `url` answers.
fn quote_page(url: &str) -> Vec<(&'static str, serde_json::Value)> {
    let page = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Quote</title></head>\n<body><h1>Quote of the day</h1><p id=\"quote\">…</p><script src=\"app.js\"></script></body></html>\n";
    let js = format!(
        "fetch('{url}').then((r) => r.json()).then((q) => {{ document.getElementById('quote').textContent = q.text; }});\n"
    );
    vec![
        ("createFile", json!({"path": "index.html", "content": page})),
        ("createFile", json!({"path": "app.js", "content": js})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_in_the_browser_check_reaches_an_allowed_host_through_the_proxy_and_no_other() {
    let (allowed, allowed_seen) = readable_by_pages(r#"{"text":"Less is more."}"#).await;
    let (other, other_seen) = readable_by_pages(r#"{"text":"Nobody should read this."}"#).await;
    let toml = format!("[egress]\nallow = [\"127.0.0.1:{allowed}\"]\n");
    let args = ["--template", "static", "--browser-check", "on", "--sandbox", "bwrap", "--max-fix-attempts", "0"];

    // The allowed host: the page reads it in Chromium, through the proxy, and it is an event.
    let files = quote_page(&format!("http://127.0.0.1:{allowed}/quote.json"));
    let mock = MockLlm::start(vec![Turn::calls(&files), Turn::text("Done.")]).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wright.toml"), &toml).unwrap();
    let run = wright_in(dir, "openai", &mock.base_url, "a quote of the day page", &args, &[]).await;
    assert_eq!(run.code, 0, "stderr: {}\nstdout: {}", run.stderr, run.stdout);
    assert_contract(&run);
    assert_eq!(allowed_seen.lock().unwrap().as_slice(), ["/quote.json"], "the page asked once");
    let check = &run.of_type("browser_check")[0];
    assert_eq!((check["blocked_requests"].as_u64(), check["exceptions"].as_u64()), (Some(0), Some(0)), "{check}");
    let outside = run.of_type("outside_request");
    assert_eq!(outside.len(), 1, "only the page's request, none of Chromium's own: {outside:#?}");
    assert_eq!(outside[0]["host"], format!("127.0.0.1:{allowed}"));
    assert_eq!((outside[0]["allowed"].as_bool(), outside[0]["status"].as_u64()), (Some(true), Some(200)));

    // Another host: blocked in the browser, never reached, and the check says so.
    let files = quote_page(&format!("http://127.0.0.1:{other}/quote.json"));
    let mock = MockLlm::start(vec![Turn::calls(&files), Turn::text("Done.")]).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wright.toml"), &toml).unwrap();
    let run = wright_in(dir, "openai", &mock.base_url, "a quote of the day page", &args, &[]).await;
    assert_eq!(run.code, 1, "stderr: {}\nstdout: {}", run.stderr, run.stdout);
    assert!(other_seen.lock().unwrap().is_empty(), "a host that is not allowed was reached");
    let check = &run.of_type("browser_check")[0];
    assert_eq!(check["blocked_requests"].as_u64(), Some(1), "{check}");
    assert!(run.of_type("outside_request").is_empty());
}

/// A page that calls two outside hosts and shows what each answered (or the status).
fn two_calls_page(allowed: u16, narrowed: u16) -> Vec<(&'static str, serde_json::Value)> {
    let page = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Quotes</title></head>\n<body><h1>Quotes</h1><p id=\"a\">…</p><p id=\"b\">…</p><script src=\"app.js\"></script></body></html>\n";
    let js = format!(
        "const show = (id, url) => fetch(url).then(async (r) => {{ document.getElementById(id).textContent = r.ok ? (await r.json()).text : 'refused ' + r.status; }}).catch((e) => {{ document.getElementById(id).textContent = 'failed ' + e; }});\n\
         show('a', 'http://127.0.0.1:{allowed}/quote.json');\n\
         const x = new XMLHttpRequest();\n\
         x.onload = () => {{ document.getElementById('b').textContent = 'refused ' + x.status; }};\n\
         x.onerror = () => {{ document.getElementById('b').textContent = 'failed'; }};\n\
         x.open('GET', 'http://127.0.0.1:{narrowed}/quote.json');\n\
         x.send();\n"
    );
    vec![
        ("createFile", json!({"path": "index.html", "content": page})),
        ("createFile", json!({"path": "app.js", "content": js})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_page_reaches_only_its_builds_narrowed_hosts_through_the_preview_origin() {
    // The admin allows two hosts; the build narrows to one. Neither answers with CORS headers,
    // so a page could read them only through its own origin.
    let (allowed, allowed_seen) = recording(r#"{"text":"Less is more."}"#).await;
    let (narrowed, narrowed_seen) = recording(r#"{"text":"Nobody should read this."}"#).await;
    let llm = MockLlm::start(vec![Turn::calls(&two_calls_page(allowed, narrowed)), Turn::text("Done.")]).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("wright.toml");
    std::fs::write(&config, format!("[egress]\nallow = [\"127.0.0.1:{allowed}\", \"127.0.0.1:{narrowed}\"]\n"))
        .unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let config = config.display().to_string();
    let s =
        Server::start(&data, &llm.base_url, &["--workers", "1", "--browser-check", "off", "--config", &config]).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let body = json!({"prompt": "two quotes", "template": "static", "allow_hosts": [format!("127.0.0.1:{allowed}")]});
    let res = support::server::create(&c, &s, &alice, body).await;
    assert_eq!(res.status(), 202);
    let id = res.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let events = stream(&c, &s, &alice, &id, None).await;
    assert_eq!(events.last().unwrap().data["success"], true);
    let b = get_json(&c, &s, &alice, &format!("/api/builds/{id}")).await;
    let preview_url = b["preview_url"].as_str().unwrap().to_string();

    // The CSP names no outside host: the visitor's browser calls only the preview's origin.
    let (pc, _) = preview_client(&s, &preview_url);
    let page = pc.get(&preview_url).send().await.unwrap();
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_string();
    let connect = csp.split(';').map(str::trim).find(|d| d.starts_with("connect-src")).unwrap();
    assert_eq!(connect, "connect-src 'self'", "{csp}");

    // In Chromium: the allowed host answers through the relay, the narrowed-away one is refused.
    let (mut browser, browser_events, _profile) = support::browser::launch().await;
    let tab = browser.new_page(preview_url.as_str()).await.unwrap();
    let done = "!['…', ''].includes(document.getElementById('a').textContent) && document.getElementById('b').textContent !== '…'";
    support::browser::until(&tab, done, "both calls to finish").await;
    let a = support::browser::js(&tab, "document.getElementById('a').textContent").await;
    let b_text = support::browser::js(&tab, "document.getElementById('b').textContent").await;
    browser.close().await.unwrap();
    browser_events.await.unwrap();
    assert_eq!(a, "Less is more.");
    assert_eq!(b_text, "refused 403");
    assert_eq!(allowed_seen.lock().unwrap().as_slice(), ["/quote.json"], "asked once, through the proxy");
    assert!(narrowed_seen.lock().unwrap().is_empty(), "a host the build narrowed away was reached");

    // Both are counted and reported in the build's preview log, as outside_request events.
    let mut log = serde_json::Value::Null;
    for _ in 0..50 {
        log = get_json(&c, &s, &alice, &format!("/api/builds/{id}/preview-events")).await;
        if log.as_array().map_or(0, Vec::len) >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let log = log.as_array().unwrap().clone();
    assert_eq!(log.len(), 2, "{log:#?}");
    assert!(log.iter().all(|e| e["type"] == "outside_request" && e["build"] == id.as_str()), "{log:#?}");
    let ok = log.iter().find(|e| e["allowed"] == true).expect("the allowed call is an event");
    assert_eq!(ok["host"], format!("127.0.0.1:{allowed}"));
    assert_eq!((ok["status"].as_u64(), ok["method"].as_str()), (Some(200), Some("GET")));
    assert!(ok["bytes"].as_u64().unwrap() > 0);
    let refused = log.iter().find(|e| e["allowed"] == false).expect("the refused call is an event");
    assert_eq!(refused["host"], format!("127.0.0.1:{narrowed}"));
    assert_eq!(refused["status"], 403);
    assert!(refused["reason"].as_str().unwrap().contains("not on this build's list"), "{refused}");
    let seqs: Vec<u64> = log.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2]);
    // The preview log is the build's: another user does not see it.
    let bob = s.add_user("bob", false).await;
    let res = c.get(s.url(&format!("/api/builds/{id}/preview-events"))).bearer_auth(&bob).send().await.unwrap();
    assert_eq!(res.status(), 404);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_symlink() {
            continue;
        }
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}
