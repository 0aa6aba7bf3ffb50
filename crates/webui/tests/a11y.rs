//! The in-app assistant's browser side in a real browser: Debian's Chromium (headless, driven
//! over DevTools by chromiumoxide) on a test page served with a strict CSP by a tiny local
//! server, beside the assistant's assets and the vendored `dom-accessibility-api` (fetched once
//! with npm into the target dir, checked). It covers the page tools (`a11y.js`: describe, click,
//! fill, and every refusal), the panel (`assistant.js`: mounted by its script tag, left out of
//! the description, a textarea that grows, a whole turn with the page's tools run here and
//! their results posted back, Retry, a reload that answers the calls it left), and prints what
//! describing a page of 2,000 elements costs. Screenshots go to `target/tmp/ui-screenshots/`
//! (of this target dir).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::emulation::{
    ClearDeviceMetricsOverrideParams, SetDeviceMetricsOverrideParams,
};
use chromiumoxide::cdp::browser_protocol::input::{DispatchKeyEventParams, DispatchKeyEventType, InsertTextParams};
use chromiumoxide::page::ScreenshotParams;
use futures::StreamExt;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PAGE: &str = include_str!("a11y/page.html");
const PAGE_JS: &str = include_str!("a11y/page.js");
const PAGE_CSS: &str = include_str!("a11y/page.css");
/// The page's policy: its own scripts, styles and API only (no inline anything).
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; \
                   object-src 'none'; base-uri 'none'";

/// The pinned dom-accessibility-api, fetched once for this target dir with npm (and verified).
fn vendor_cache() -> PathBuf {
    static ONCE: Mutex<()> = Mutex::new(());
    let _one = ONCE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("vendor-cache");
    wright_webui::vendor::ensure_dom_accessibility_api(&cache)
        .unwrap_or_else(|e| panic!("these tests need dom-accessibility-api, fetched with npm: {e}"));
    cache
}

fn shots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ui-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// ---- a stand-in for the wright server: static files and the assistant's protocol ------------

#[derive(Default)]
struct Fake {
    /// `METHOD path bearer-token` of every API call, in order.
    calls: Vec<String>,
    tokens: u32,
    /// POST /messages answers 500 this many more times.
    fail_messages: u32,
    messages: Vec<Value>,
    results: Vec<Value>,
    stored: Vec<Value>,
    pending: Value,
}

type Shared = Arc<Mutex<Fake>>;

#[derive(Clone)]
struct App {
    fake: Shared,
    vendor: PathBuf,
    big: Arc<String>,
}

fn sse(events: &[(&str, Value)]) -> Response {
    let body: String = events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect();
    ([(header::CONTENT_TYPE, "text/event-stream"), (header::HeaderName::from_static("x-wright-run"), "run-1")], body)
        .into_response()
}

/// The 401 to answer unless the bearer is the latest visitor token handed out.
fn refuse(app: &App, method: &str, path: &str, headers: &HeaderMap) -> Option<Response> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("-")
        .to_string();
    let mut f = app.fake.lock().unwrap();
    f.calls.push(format!("{method} {path} {token}"));
    if f.tokens == 0 || token != format!("vt_{}", f.tokens) {
        return Some(
            (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": {"message": "who are you?"}}))).into_response(),
        );
    }
    None
}

async fn visitors(State(app): State<App>, headers: HeaderMap) -> Response {
    let mut f = app.fake.lock().unwrap();
    let key = headers.get("x-wright-embed-key").and_then(|v| v.to_str().ok()).unwrap_or("");
    f.calls.push(format!("POST /api/embed/visitors key={key}"));
    if key != "ek_test" {
        return (StatusCode::FORBIDDEN, axum::Json(json!({"error": {"message": "bad key"}}))).into_response();
    }
    f.tokens += 1;
    (StatusCode::CREATED, axum::Json(json!({"token": format!("vt_{}", f.tokens)}))).into_response()
}

async fn assistant_view(State(app): State<App>, headers: HeaderMap) -> Response {
    if let Some(r) = refuse(&app, "GET", "/api/assistant", &headers) {
        return r;
    }
    let tool = |name: &str, read_only: bool| json!({"name": name, "description": name, "parameters": {"type": "object"}, "read_only": read_only});
    axum::Json(json!({
        "tools": [tool("describe_app_ui", true), tool("click_element", false), tool("fill_form_element", false), tool("export_csv", false)],
        "max_rounds": 10,
        "docs": true
    }))
    .into_response()
}

async fn chats(State(app): State<App>, headers: HeaderMap) -> Response {
    if let Some(r) = refuse(&app, "GET", "/api/chat", &headers) {
        return r;
    }
    axum::Json(json!([{"id": "c1", "title": "Order help", "created_at": "2025-01-02T10:00:00Z", "updated_at": "2025-01-02T10:05:00Z", "messages": 2}]))
        .into_response()
}

async fn new_chat(State(app): State<App>, headers: HeaderMap) -> Response {
    if let Some(r) = refuse(&app, "POST", "/api/chat", &headers) {
        return r;
    }
    (StatusCode::CREATED, axum::Json(json!({"id": "c1"}))).into_response()
}

async fn stored(State(app): State<App>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if let Some(r) = refuse(&app, "GET", &format!("/api/chat/{id}/messages"), &headers) {
        return r;
    }
    axum::Json(Value::Array(app.fake.lock().unwrap().stored.clone())).into_response()
}

async fn forget(State(app): State<App>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if let Some(r) = refuse(&app, "DELETE", &format!("/api/chat/{id}/messages"), &headers) {
        return r;
    }
    let mut f = app.fake.lock().unwrap();
    let deleted = f.stored.len();
    f.stored.clear();
    axum::Json(json!({"deleted": deleted})).into_response()
}

async fn pending(State(app): State<App>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if let Some(r) = refuse(&app, "GET", &format!("/api/chat/{id}/pending"), &headers) {
        return r;
    }
    let p = app.fake.lock().unwrap().pending.clone();
    axum::Json(if p.is_null() { json!({"calls": []}) } else { p }).into_response()
}

async fn message(State(app): State<App>, Path(id): Path<String>, headers: HeaderMap, body: String) -> Response {
    if let Some(r) = refuse(&app, "POST", &format!("/api/chat/{id}/messages"), &headers) {
        return r;
    }
    let mut f = app.fake.lock().unwrap();
    let body: Value = serde_json::from_str(&body).unwrap();
    f.messages
        .push(json!({"body": body, "accept_language": headers.get("accept-language").and_then(|v| v.to_str().ok())}));
    if f.fail_messages > 0 {
        f.fail_messages -= 1;
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(json!({"error": {"message": "the model is out to lunch"}})),
        )
            .into_response();
    }
    let content = body["content"].clone();
    f.stored = vec![json!({"id": "u1", "role": "user", "parts": [{"type": "text", "text": content}]})];
    sse(&[
        ("message", json!({"message": {"id": "u1", "role": "user", "parts": [{"type": "text", "text": content}]}})),
        ("text_delta", json!({"text": "Let me look at the page."})),
        (
            "client_tool_calls",
            json!({"round": 1, "calls": [
                {"id": "k1", "name": "describe_app_ui", "arguments": {}},
                {"id": "k2", "name": "fill_form_element", "arguments": {"role": "textbox", "description": "Name", "value": "Ana"}},
                {"id": "k3", "name": "click_element", "arguments": {"role": "button", "description": "Save"}},
                {"id": "k4", "name": "export_csv", "arguments": {}}
            ]}),
        ),
    ])
}

async fn tool_results(State(app): State<App>, Path(id): Path<String>, headers: HeaderMap, body: String) -> Response {
    if let Some(r) = refuse(&app, "POST", &format!("/api/chat/{id}/tool-results"), &headers) {
        return r;
    }
    let mut f = app.fake.lock().unwrap();
    let body: Value = serde_json::from_str(&body).unwrap();
    let after_reload = body["results"][0]["id"] == "p1";
    f.results.push(body);
    if after_reload {
        f.pending = Value::Null;
        return sse(&[
            ("text_delta", json!({"text": "The page reloaded; I read it again."})),
            ("done", json!({"finish_reason": "stop"})),
        ]);
    }
    let reply = json!({"id": "a1", "role": "assistant", "parts": [
        {"type": "text", "text": "Saved the order for **Ana**."},
        {"type": "documents", "query": "save order", "hits": [
            {"source": "guide.md", "heading": "Orders › Saving", "anchor": "saving", "snippet": "Press Save."}
        ]}
    ]});
    f.stored.push(reply.clone());
    sse(&[
        (
            "tool_result",
            json!({"tool": "search_documents", "success": true, "structured_data": {"type": "documents", "query": "save order",
            "hits": [{"source": "guide.md", "heading": "Orders › Saving", "snippet": "Press Save."}]}}),
        ),
        ("text_delta", json!({"text": "Saved the order for **Ana**."})),
        ("message", json!({"message": reply})),
        ("done", json!({"finish_reason": "stop"})),
    ])
}

async fn assistant_file(Path(name): Path<String>) -> Response {
    match wright_webui::assistant_asset(&name) {
        Some(a) => ([(header::CONTENT_TYPE, a.content_type)], a.body).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn vendor_file(State(app): State<App>, Path(file): Path<String>) -> Response {
    match wright_webui::vendor::served_assistant(&app.vendor, &file) {
        Some((path, kind)) => ([(header::CONTENT_TYPE, kind)], std::fs::read(path).unwrap()).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

fn page(body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CONTENT_SECURITY_POLICY, CSP)], body).into_response()
}

/// The test server; its address.
async fn serve(fake: Shared) -> String {
    let big = Arc::new(big_page(400));
    let app = App { fake, vendor: vendor_cache(), big };
    let router = Router::new()
        .route("/page.html", get(|| async { page(PAGE) }))
        .route("/page.js", get(|| async { ([(header::CONTENT_TYPE, "text/javascript")], PAGE_JS) }))
        .route("/page.css", get(|| async { ([(header::CONTENT_TYPE, "text/css")], PAGE_CSS) }))
        .route(
            "/big.html",
            get(|State(app): State<App>| async move {
                ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], app.big.to_string()).into_response()
            }),
        )
        .route("/assistant/{name}", get(assistant_file))
        .route("/assistant/vendor/{*file}", get(vendor_file))
        .route("/api/embed/visitors", post(visitors))
        .route("/api/assistant", get(assistant_view))
        .route("/api/chat", get(chats).post(new_chat))
        .route("/api/chat/{id}/messages", get(stored).post(message).delete(forget))
        .route("/api/chat/{id}/pending", get(pending))
        .route("/api/chat/{id}/tool-results", post(tool_results))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

/// A page of `rows` table rows, each with a cell, a link, a button, a checkbox and a field:
/// 5 named elements a row.
fn big_page(rows: usize) -> String {
    let mut html = String::from(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Big</title>\
         <script type=\"module\" src=\"/big.js\"></script></head><body><main><h1>Inventory</h1><table aria-label=\"Items\"><tbody>",
    );
    for i in 0..rows {
        html.push_str(&format!(
            "<tr><td>Item {i}</td><td><a href=\"#i{i}\">Open item {i}</a></td><td><button type=\"button\">Edit {i}</button></td>\
             <td><label><input type=\"checkbox\"> Pick {i}</label></td><td><input aria-label=\"Quantity {i}\" value=\"{i}\"></td></tr>"
        ));
    }
    html.push_str("</tbody></table></main><script type=\"module\">import * as a11y from '/assistant/a11y.js'; window.a11y = a11y;</script></body></html>");
    html
}

// ---- the browser --------------------------------------------------------------------------

async fn launch() -> (Browser, tokio::task::JoinHandle<()>, tempfile::TempDir) {
    let path = std::env::var("PATH").unwrap_or_default();
    let chromium = wright_browser::find_chromium(None, &[("PATH".into(), path)])
        .expect("the UI tests need Debian's chromium (cargo xtask setup installs it)");
    let profile = tempfile::tempdir().unwrap();
    let config = BrowserConfig::builder()
        .chrome_executable(chromium)
        .no_sandbox()
        .new_headless_mode()
        .window_size(1280, 900)
        .viewport(None)
        .user_data_dir(profile.path())
        .build()
        .unwrap();
    let (browser, mut handler) = Browser::launch(config).await.unwrap();
    let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
    (browser, events, profile)
}

async fn js(page: &chromiumoxide::Page, expr: &str) -> Value {
    page.evaluate(expr).await.unwrap_or_else(|e| panic!("{expr}: {e}")).into_value().unwrap_or(Value::Null)
}

async fn until(page: &chromiumoxide::Page, expr: &str, what: &str) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if js(page, expr).await == Value::Bool(true) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let panel = js(page, &format!("{SHADOW}?.textContent")).await;
    let errors = js(page, "(window.errors || []).join(' | ')").await;
    panic!("waited 20 s for {what}; the panel says: {panel}; the page's errors: {errors}");
}

async fn open(browser: &Browser, url: &str) -> chromiumoxide::Page {
    let page = browser.new_page(url).await.unwrap();
    until(&page, "window.pageReady === true || !!window.a11y", "the page's modules").await;
    page
}

/// An a11y.js call in the page: its answer.
async fn call(page: &chromiumoxide::Page, f: &str, args: Value) -> Value {
    if args.is_null() { js(page, &format!("a11y.{f}()")).await } else { js(page, &format!("a11y.{f}({args})")).await }
}

fn ok(v: &Value) -> &Vec<Value> {
    assert_eq!(v["ok"], true, "{v}");
    v["changed"].as_array().unwrap()
}

fn refused(v: &Value) -> String {
    assert_eq!(v["ok"], false, "{v}");
    v["error"].as_str().unwrap().to_string()
}

/// The ref the description gives the line that starts with `line` (after its indent).
fn ref_of(text: &str, line: &str) -> String {
    let l = text
        .lines()
        .map(str::trim_start)
        .find(|l| l.starts_with(line))
        .unwrap_or_else(|| panic!("no {line} in\n{text}"));
    let at = l.find("[ref=").unwrap() + 5;
    l[at..].split(']').next().unwrap().to_string()
}

const SHADOW: &str = "document.querySelector('[data-wright-assistant]').shadowRoot";

fn in_panel(testid: &str) -> String {
    format!("{SHADOW}.querySelector('[data-testid={testid}]')")
}

// ---- the page tools -----------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_tools_describe_click_and_fill_as_a_person_would_and_refuse_what_a_person_could_not() {
    let base = serve(Arc::default()).await;
    let (mut browser, events, _profile) = launch().await;
    let page = open(&browser, &format!("{base}/page.html")).await;
    until(
        &page,
        &format!("!!document.querySelector('[data-wright-assistant]') && !!{}", in_panel("assistant-launcher")),
        "the panel",
    )
    .await;

    // ---- describe
    let d = call(&page, "describeAppUi", json!(null)).await;
    let text = d["text"].as_str().unwrap().to_string();
    println!("--- the test page described ({} chars, {} elements):\n{text}", text.len(), d["count"]);
    for line in [
        "- banner",
        "- navigation \"Main\" [ref=s1e",
        "- link \"Home\" [ref=",
        "- heading \"New order\" [level=1] [ref=",
        "- form \"Order\"",
        "- textbox \"Name\" [required] [ref=",
        "- textbox \"Password\" value=\"••••••\" [ref=",
        "- checkbox \"Gift wrap\" [unchecked] [ref=",
        "- checkbox \"Accept terms\" [checked] [ref=",
        "- group \"Shipping\"",
        "- radio \"Standard\" [checked] [ref=",
        "- radio \"Express\" [unchecked] [ref=",
        "- combobox \"Country\" value=\"Choose…\" [ref=",
        "- listbox \"Toppings\" [ref=",
        "- combobox \"Fruit\" [collapsed] [ref=",
        "- spinbutton \"Quantity\" value=\"1\" [ref=",
        "- slider \"Volume\" value=\"50\" [ref=",
        "- textbox \"Message body\" [ref=",
        "- switch \"Dark mode\" [unchecked] [ref=",
        "- button \"More options\" [collapsed] [ref=",
        "- button \"Save\" [ref=",
        "- button \"Delete\" [disabled] [ref=",
        "- button \"Archive\" [disabled] [ref=",
        "- button \"Covered\" [ref=",
        "- table \"People\"",
        "- navigation \"Desktop\"",
    ] {
        assert!(text.lines().any(|l| l.trim_start().starts_with(line)), "no line {line:?} in\n{text}");
    }
    // Nested under their landmarks.
    assert!(text.contains("- navigation \"Main\"") && text.contains("\n    - link \"Home\""), "{text}");
    for absent in ["Secret", "Ghost", "Far away", "Mobile", "\"Assistant\"", "Fruits", "Apple", "Nothing here yet"] {
        assert!(!text.contains(absent), "{absent} is described:\n{text}");
    }
    assert_eq!(d["snapshot"], 1);
    assert_eq!(d["truncated"], false);
    assert!(d["refs"].as_array().unwrap().len() > 25, "{}", d["refs"]);
    let small = call(&page, "describeAppUi", json!(null)).await;
    assert_eq!(small["snapshot"], 2);
    let capped = js(&page, "a11y.describeAppUi(document.body, {maxChars: 600})").await;
    let capped_text = capped["text"].as_str().unwrap();
    assert!(capped["truncated"] == true && capped_text.len() <= 600, "{capped_text}");
    assert!(capped_text.lines().last().unwrap().contains("more elements left out"), "{capped_text}");

    // ---- fill: a text field, by role and name, with the events a framework hears
    let r = call(&page, "fillFormElement", json!({"role": "textbox", "description": "Name", "value": "Ana"})).await;
    let changed = ok(&r);
    assert!(changed.iter().any(|c| c.as_str().unwrap().starts_with("textbox \"Name\": value \"\" → \"Ana\"")), "{r}");
    assert!(r["settled_ms"].as_u64().unwrap() >= 150, "{r}");
    assert_eq!(js(&page, "document.getElementById('name').value").await, "Ana");
    let heard = js(&page, "heard.filter(h => h.startsWith('name:')).join(' ')").await;
    assert_eq!(heard, "name:focus name:input name:change name:blur");
    // Case does not matter when only one matches.
    ok(&call(&page, "fillFormElement", json!({"role": "textbox", "description": "notes", "value": "Ring twice"}))
        .await);
    assert_eq!(js(&page, "document.getElementById('notes').value").await, "Ring twice");

    // A React-like controlled input hears a person's edit (not a script's).
    js(&page, "(() => { const r = document.getElementById('react'); r.value = 'script'; r.dispatchEvent(new Event('input', {bubbles: true})); })()").await;
    assert_eq!(
        js(&page, "document.getElementById('react-state').textContent").await,
        "state: ",
        "the stand-in is React-like"
    );
    ok(&call(&page, "fillFormElement", json!({"role": "textbox", "description": "Nickname", "value": "Rex"})).await);
    assert_eq!(js(&page, "document.getElementById('react-state').textContent").await, "state: Rex");
    assert_eq!(js(&page, "document.getElementById('react').value").await, "Rex");

    // ---- checkboxes and switches: "true"/"false"; a visually hidden one through its label
    let r =
        call(&page, "fillFormElement", json!({"role": "checkbox", "description": "Gift wrap", "value": "true"})).await;
    assert!(ok(&r).iter().any(|c| c.as_str().unwrap().contains("checkbox \"Gift wrap\": unchecked → checked")), "{r}");
    assert_eq!(js(&page, "document.getElementById('gift').checked").await, true);
    assert!(js(&page, "heard.includes('gift:change')").await == true);
    ok(&call(&page, "fillFormElement", json!({"role": "checkbox", "description": "Gift wrap", "value": "true"})).await);
    assert_eq!(js(&page, "document.getElementById('gift').checked").await, true, "true stays true");
    ok(&call(&page, "fillFormElement", json!({"role": "checkbox", "description": "Accept terms", "value": "false"}))
        .await);
    assert_eq!(js(&page, "document.getElementById('terms').checked").await, false);
    let e = refused(
        &call(&page, "fillFormElement", json!({"role": "checkbox", "description": "Gift wrap", "value": "maybe"}))
            .await,
    );
    assert!(e.contains("\"true\" or \"false\""), "{e}");
    ok(&call(&page, "fillFormElement", json!({"role": "switch", "description": "Dark mode", "value": "true"})).await);
    assert_eq!(js(&page, "document.getElementById('dark').getAttribute('aria-checked')").await, "true");

    // ---- radios: the radio itself, a sibling by name, the group's option
    ok(&call(&page, "fillFormElement", json!({"role": "radio", "description": "Express", "value": "true"})).await);
    assert_eq!(js(&page, "document.querySelector('input[name=ship]:checked').value").await, "exp");
    ok(&call(&page, "fillFormElement", json!({"role": "group", "description": "Shipping", "value": "Pick up"})).await);
    assert_eq!(js(&page, "document.querySelector('input[name=ship]:checked').value").await, "pick");
    ok(&call(&page, "fillFormElement", json!({"role": "radio", "description": "Pick up", "value": "Standard"})).await);
    assert_eq!(js(&page, "document.querySelector('input[name=ship]:checked').value").await, "std");
    ok(&call(&page, "fillFormElement", json!({"role": "radio", "description": "Shipping", "value": "Express"})).await);
    assert_eq!(
        js(&page, "document.querySelector('input[name=ship]:checked').value").await,
        "exp",
        "the group by its name"
    );
    let e = refused(
        &call(&page, "fillFormElement", json!({"role": "group", "description": "Shipping", "value": "Teleport"})).await,
    );
    assert!(e.contains("no option named \"Teleport\"") && e.contains("\"Express\""), "{e}");

    // ---- selects: by text, by value, several; a missing option lists them
    let r = call(&page, "fillFormElement", json!({"role": "combobox", "description": "Country", "value": "Portugal"}))
        .await;
    assert!(ok(&r).iter().any(|c| c.as_str().unwrap().contains("value \"Choose…\" → \"Portugal\"")), "{r}");
    assert_eq!(js(&page, "document.getElementById('country').value").await, "pt");
    ok(&call(&page, "fillFormElement", json!({"role": "combobox", "description": "Country", "value": "br"})).await);
    assert_eq!(js(&page, "document.getElementById('country').value").await, "br");
    assert!(js(&page, "heard.includes('country:change') && heard.includes('country:input')").await == true);
    let e = refused(
        &call(&page, "fillFormElement", json!({"role": "combobox", "description": "Country", "value": "Spain"})).await,
    );
    assert!(e.contains("no option \"Spain\"") && e.contains("\"Brazil\", \"Portugal\""), "{e}");
    ok(&call(
        &page,
        "fillFormElement",
        json!({"role": "listbox", "description": "Toppings", "value": "Cheese, basil"}),
    )
    .await);
    assert_eq!(
        js(&page, "[...document.getElementById('toppings').selectedOptions].map(o => o.text).join('+')").await,
        "Cheese+Basil"
    );

    // ---- an ARIA combobox: opened, typed in, the option picked from the listbox it controls
    let r =
        call(&page, "fillFormElement", json!({"role": "combobox", "description": "Fruit", "value": "Banana"})).await;
    ok(&r);
    assert_eq!(js(&page, "document.getElementById('fruit').value").await, "Banana");
    assert_eq!(
        js(&page, "document.getElementById('status').textContent").await,
        "Fruit: Banana",
        "the option was clicked"
    );
    assert_eq!(js(&page, "document.getElementById('fruit-list').hidden").await, true);
    // A value with no option stays typed (a free-text combobox).
    ok(&call(&page, "fillFormElement", json!({"role": "combobox", "description": "Fruit", "value": "Kiwi"})).await);
    assert_eq!(js(&page, "document.getElementById('fruit').value").await, "Kiwi");

    // ---- numbers, ranges, contenteditable
    ok(&call(&page, "fillFormElement", json!({"role": "spinbutton", "description": "Quantity", "value": "7"})).await);
    assert_eq!(js(&page, "document.getElementById('qty').value").await, "7");
    let e = refused(
        &call(&page, "fillFormElement", json!({"role": "spinbutton", "description": "Quantity", "value": "lots"}))
            .await,
    );
    assert!(e.contains("takes a number"), "{e}");
    ok(&call(&page, "fillFormElement", json!({"role": "slider", "description": "Volume", "value": 80})).await);
    assert_eq!(js(&page, "document.getElementById('vol').value").await, "80");
    ok(&call(
        &page,
        "fillFormElement",
        json!({"role": "textbox", "description": "Message body", "value": "Hello there"}),
    )
    .await);
    assert_eq!(js(&page, "document.getElementById('editor').textContent").await, "Hello there");
    let e =
        refused(&call(&page, "fillFormElement", json!({"role": "button", "description": "Save", "value": "x"})).await);
    assert!(e.contains("cannot be filled in; click it instead"), "{e}");

    // ---- click: what appeared, and by ref what went
    let r = call(&page, "clickElement", json!({"role": "button", "description": "Save"})).await;
    let changed = ok(&r);
    assert!(changed.iter().any(|c| c.as_str().unwrap().starts_with("appeared: dialog \"Saved\" [ref=s")), "{r}");
    assert!(changed.iter().any(|c| c.as_str().unwrap().starts_with("appeared: button \"Close\" [ref=")), "{r}");
    let close = changed.iter().map(|c| c.as_str().unwrap()).find(|c| c.contains("button \"Close\"")).unwrap();
    let close_ref = close[close.find("[ref=").unwrap() + 5..].split(']').next().unwrap().to_string();
    let r = call(&page, "clickElement", json!({"ref": close_ref})).await;
    assert!(ok(&r).iter().any(|c| c.as_str().unwrap().starts_with("gone: dialog \"Saved\"")), "{r}");
    assert_eq!(js(&page, "document.querySelectorAll('[role=dialog]').length").await, 0);
    let r = call(&page, "clickElement", json!({"role": "button", "description": "More options"})).await;
    assert!(
        ok(&r).iter().any(|c| c.as_str().unwrap().contains("button \"More options\": collapsed → expanded")),
        "{r}"
    );

    // Actions wait for each other: the second finds the dialog the first opened.
    let both = js(&page, "Promise.all([a11y.clickElement({role: 'button', description: 'Save'}), a11y.clickElement({role: 'button', description: 'Close'})])").await;
    assert!(both[0]["ok"] == true && both[1]["ok"] == true, "{both}");
    assert_eq!(js(&page, "document.querySelectorAll('[role=dialog]').length").await, 0);

    // ---- refs: a stale snapshot is refused; a fresh ref works
    let d = call(&page, "describeAppUi", json!(null)).await;
    let old = ref_of(d["text"].as_str().unwrap(), "- button \"Save\"");
    let d = call(&page, "describeAppUi", json!(null)).await;
    let e = refused(&call(&page, "clickElement", json!({"ref": old})).await);
    assert!(e.contains("snapshot is stale; describe again"), "{e}");
    let e = refused(&call(&page, "clickElement", json!({"ref": "nonsense"})).await);
    assert!(e.contains("not a ref"), "{e}");
    let fresh = ref_of(d["text"].as_str().unwrap(), "- checkbox \"Gift wrap\"");
    ok(&call(&page, "fillFormElement", json!({"ref": fresh, "value": "false"})).await);
    assert_eq!(js(&page, "document.getElementById('gift').checked").await, false);

    // ---- ambiguity: the candidates, never the first
    let e = refused(&call(&page, "clickElement", json!({"role": "button", "description": "Remove"})).await);
    println!("--- an ambiguous name:\n{e}");
    assert!(e.starts_with("2 elements match button \"Remove\"; none was chosen"), "{e}");
    assert!(e.contains("(in row \"Alice Remove\")") && e.contains("(in row \"Bob Remove\")"), "{e}");
    assert_eq!(js(&page, "document.querySelectorAll('.remove').length").await, 2, "nothing was removed");
    let alice = e.lines().find(|l| l.contains("Alice")).unwrap();
    let alice_ref = alice[alice.find("[ref=").unwrap() + 5..].split(']').next().unwrap().to_string();
    let r = call(&page, "clickElement", json!({"ref": alice_ref})).await;
    assert!(ok(&r).iter().any(|c| c.as_str().unwrap() == "gone: cell \"Alice\""), "{r}");
    assert_eq!(js(&page, "document.querySelector('table').textContent.includes('Alice')").await, false);
    // A hidden namesake does not make a name ambiguous: the visible "Help" is the one.
    let r = call(&page, "clickElement", json!({"role": "link", "description": "Help"})).await;
    assert!(ok(&r).iter().any(|c| c.as_str().unwrap() == "the address changed: /page.html → /page.html#help"), "{r}");

    // ---- a modal dialog: the rest of the page is out of reach while it is open
    js(&page, "document.getElementById('confirm').showModal()").await;
    let d = call(&page, "describeAppUi", json!(null)).await;
    let text = d["text"].as_str().unwrap();
    assert!(text.contains("- dialog \"Confirm\" [ref=") && text.contains("- button \"Yes\" [ref="), "{text}");
    assert!(!text.contains("\"Save\"") && !text.contains("\"Main\""), "behind the dialog:\n{text}");
    let e = refused(&call(&page, "clickElement", json!({"role": "button", "description": "Save"})).await);
    assert_eq!(e, "button \"Save\" is inert: dialog \"Confirm\" is open in front of it");
    let r = call(&page, "clickElement", json!({"role": "button", "description": "Yes"})).await;
    assert!(ok(&r).iter().any(|c| c.as_str().unwrap().starts_with("gone: dialog \"Confirm\"")), "{r}");

    // ---- refusals, each with its reason
    for (name, why) in [
        ("Delete", "button \"Delete\" is disabled"),
        ("Archive", "button \"Archive\" is disabled (aria-disabled)"),
        ("Secret", "button \"Secret\" is hidden"),
        ("Ghost", "button \"Ghost\" is hidden"),
        ("Far away", "button \"Far away\" is inert"),
        ("Covered", "button \"Covered\" is covered by span#overlay.overlay at its center"),
    ] {
        let e = refused(&call(&page, "clickElement", json!({"role": "button", "description": name})).await);
        assert!(e.starts_with(why), "{name}: {e}");
    }
    assert!(js(&page, "document.getElementById('status').textContent.includes('Archived')").await == false);
    let e = refused(&call(&page, "clickElement", json!({"role": "button", "description": "Publish"})).await);
    assert!(
        e.starts_with("No button \"Publish\" is on the page. The button elements are: ") && e.contains("\"Save\""),
        "{e}"
    );
    let e = refused(&call(&page, "clickElement", json!({})).await);
    assert!(e.contains("name the element"), "{e}");
    let e = refused(
        &call(&page, "fillFormElement", json!({"role": "textbox", "description": "Name", "value": "x", "ref": "s1e1"}))
            .await,
    );
    assert!(e.contains("stale"), "{e}");

    assert_eq!(js(&page, "violations.join(', ')").await, "", "the strict CSP was respected");
    assert_eq!(js(&page, "errors.join(' | ')").await, "", "no errors in the page");
    browser.close().await.unwrap();
    events.await.ok();
}

// ---- the panel ----------------------------------------------------------------------------

/// A person's click (the mouse, through DevTools) on the panel's control `testid`.
async fn press(page: &chromiumoxide::Page, testid: &str) {
    // A person clicks what they see: wait until nothing (a closing dialog, a re-render) covers
    // the control's middle, so the click lands on it, however slow the machine is.
    let el = in_panel(testid);
    let clickable = format!(
        "(() => {{ const e = {el}; if (!e) return false; const r = e.getBoundingClientRect(); \
         if (!r.width || !r.height) return false; \
         const hit = e.getRootNode().elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); \
         return !!hit && (hit === e || e.contains(hit)); }})()"
    );
    until(page, &clickable, &format!("{testid} to be clickable")).await;
    let at = js(
        page,
        &format!(
            "(() => {{ const r = {}.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
            in_panel(testid)
        ),
    )
    .await;
    let point = chromiumoxide::layout::Point { x: at[0].as_f64().unwrap(), y: at[1].as_f64().unwrap() };
    page.click(point).await.unwrap();
}

/// Type `text` in the panel's textarea as a keyboard would, and press Enter.
async fn type_and_enter(page: &chromiumoxide::Page, text: &str) {
    js(page, &format!("{}.focus()", in_panel("assistant-input"))).await;
    page.execute(InsertTextParams::new(text)).await.unwrap();
    let key = |kind| {
        DispatchKeyEventParams::builder()
            .r#type(kind)
            .key("Enter")
            .code("Enter")
            .windows_virtual_key_code(13)
            .native_virtual_key_code(13)
            .build()
            .unwrap()
    };
    let mut down = key(DispatchKeyEventType::KeyDown);
    down.text = Some("\r".into());
    page.execute(down).await.unwrap();
    page.execute(key(DispatchKeyEventType::KeyUp)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panel_runs_a_turn_with_the_pages_tools_retries_and_answers_what_a_reload_left() {
    let fake: Shared = Arc::default();
    fake.lock().unwrap().fail_messages = 1;
    let base = serve(fake.clone()).await;
    let (mut browser, events, _profile) = launch().await;
    let page = open(&browser, &format!("{base}/page.html")).await;
    // A visitor token from an earlier visit that the server no longer knows.
    js(&page, "localStorage.setItem('wright-assistant:ek_test', 'vt_old'); true").await;
    let launcher = in_panel("assistant-launcher");
    until(&page, &format!("!!{launcher} && getComputedStyle({launcher}).display !== 'none'"), "the launcher").await;

    // Mounted by its script tag, on a host of its own, with its styles: and never described.
    assert_eq!(js(&page, &format!("{launcher}.textContent")).await, "✦Assistant");
    let d = call(&page, "describeAppUi", json!(null)).await;
    assert!(!d["text"].as_str().unwrap().contains("Assistant"), "{}", d["text"]);
    assert_eq!(js(&page, &format!("{}.hidden", in_panel("assistant-panel"))).await, true);
    press(&page, "assistant-launcher").await;
    until(&page, &format!("!{}.hidden", in_panel("assistant-panel")), "the panel to open").await;
    assert_eq!(js(&page, &format!("{SHADOW}.activeElement === {}", in_panel("assistant-input"))).await, true);
    let d = call(&page, "describeAppUi", json!(null)).await;
    let described = d["text"].as_str().unwrap();
    for word in ["Assistant", "New conversation", "Message", "Send", "Close"] {
        assert!(!described.contains(&format!("\"{word}\"")), "the open panel is described ({word}):\n{described}");
    }
    assert_eq!(js(&page, &format!("getComputedStyle({}).position", in_panel("assistant-panel"))).await, "static");
    assert_eq!(js(&page, &format!("getComputedStyle({SHADOW}.host).position")).await, "fixed");

    // The textarea grows with what is typed (and Shift+Enter would make a new line).
    let input = in_panel("assistant-input");
    let h0 = js(&page, &format!("{input}.getBoundingClientRect().height")).await.as_f64().unwrap();
    js(&page, &format!("{input}.focus()")).await;
    page.execute(InsertTextParams::new("one\ntwo\nthree\nfour")).await.unwrap();
    let h1 = js(&page, &format!("{input}.getBoundingClientRect().height")).await.as_f64().unwrap();
    assert!(h1 > h0 + 30.0, "the textarea grows: {h0} → {h1}");
    js(&page, &format!("(() => {{ {input}.value = ''; {input}.dispatchEvent(new Event('input')); }})()")).await;
    let h2 = js(&page, &format!("{input}.getBoundingClientRect().height")).await.as_f64().unwrap();
    assert!((h2 - h0).abs() < 2.0, "and shrinks: {h0} → {h2}");

    // ---- a message: the server fails once; Retry sends it again
    type_and_enter(&page, "Put my name, Ana, on the order and save it").await;
    until(&page, &format!("!!{}", in_panel("assistant-retry")), "the error and its Retry").await;
    let error = js(&page, &format!("{SHADOW}.querySelector('.msg.error').textContent")).await;
    assert!(error.as_str().unwrap().contains("the model is out to lunch"), "{error}");
    assert_eq!(js(&page, &format!("{input}.value")).await, "", "sent (the bubble holds it)");
    let png = page.screenshot(ScreenshotParams::builder().build()).await.unwrap();
    std::fs::write(shots().join("assistant-retry.png"), png).unwrap();
    press(&page, "assistant-retry").await;
    until(
        &page,
        &format!("{SHADOW}.querySelector('.log').textContent.includes('Saved the order for Ana.')"),
        "the reply",
    )
    .await;
    until(&page, &format!("!{}.disabled", in_panel("assistant-send")), "the turn to end").await;

    // The page's tools ran here, in order, as one batch: described, filled, clicked.
    let (results, messages, calls) = {
        let f = fake.lock().unwrap();
        (f.results.clone(), f.messages.clone(), f.calls.clone())
    };
    assert_eq!(messages.len(), 2, "sent twice (once more by Retry): {messages:?}");
    assert_eq!(messages[1]["body"]["content"], "Put my name, Ana, on the order and save it");
    assert_eq!(messages[1]["body"]["client_tools"], json!(["describe_app_ui", "click_element", "fill_form_element"]));
    assert_eq!(messages[1]["accept_language"], "en");
    assert_eq!(results.len(), 1, "{results:?}");
    let r = results[0]["results"].as_array().unwrap();
    assert_eq!(r.iter().map(|x| x["id"].as_str().unwrap()).collect::<Vec<_>>(), ["k1", "k2", "k3", "k4"]);
    let described = r[0]["output"].as_str().unwrap();
    assert!(
        described.starts_with("Page \"Orders\" at /page.html\n")
            && described.contains("- textbox \"Name\" [required] [ref="),
        "{described}"
    );
    assert!(!described.contains("Assistant"), "{described}");
    let filled = r[1]["output"]["changed"].as_array().unwrap();
    assert!(filled.iter().any(|c| c.as_str().unwrap().starts_with("textbox \"Name\": value \"\" → \"Ana\"")), "{r:?}");
    let clicked = r[2]["output"]["changed"].as_array().unwrap();
    assert!(clicked.iter().any(|c| c.as_str().unwrap().starts_with("appeared: dialog \"Saved\"")), "{r:?}");
    assert_eq!(r[3]["error"], "unknown tool \"export_csv\": this page does not offer it");
    assert_eq!(js(&page, "document.querySelector('[role=dialog] p').textContent").await, "Saved the order for Ana.");
    // The visitor: the stale token was refused once, a fresh one got with the embed key.
    assert_eq!(calls[0], "GET /api/assistant vt_old", "{calls:?}");
    assert_eq!(calls[1], "POST /api/embed/visitors key=ek_test", "{calls:?}");
    assert!(calls[2..].iter().all(|c| c.ends_with(" vt_1") || c.contains("visitors")), "{calls:?}");
    assert_eq!(js(&page, "localStorage.getItem('wright-assistant:ek_test')").await, "vt_1");

    // The reply as the panel shows it: Markdown, the tool chips, the sources.
    let log = format!("{SHADOW}.querySelector('.log')");
    assert_eq!(js(&page, &format!("{log}.querySelector('.msg.assistant:last-child strong').textContent")).await, "Ana");
    let chips = js(&page, &format!("[...{log}.querySelectorAll('.chip')].map(c => c.textContent).join(' | ')")).await;
    assert_eq!(
        chips,
        "Read the page | Filled in \"Name\" | Clicked \"Save\" | Running export_csv failed: unknown tool \"export_csv\": \
         this page does not offer it | Searched the docs",
        "the chips of the turn"
    );
    let sources =
        js(&page, &format!("[...{log}.querySelectorAll('.sources li')].map(c => c.textContent).join(' | ')")).await;
    assert_eq!(sources, "guide.md › Orders › Saving");
    assert_eq!(js(&page, &format!("{}.textContent", in_panel("assistant-status"))).await, "");
    assert_eq!(js(&page, "sessionStorage.getItem('wright-assistant:open:ek_test')").await, "c1");
    js(&page, "document.querySelector('[role=dialog] button').click()").await;

    // History lists the conversations.
    press(&page, "assistant-history").await;
    until(&page, &format!("{}.textContent.includes('Order help')", in_panel("assistant-history-list")), "the history")
        .await;
    press(&page, "assistant-history").await;

    tokio::time::sleep(Duration::from_millis(300)).await;
    let png = page.screenshot(ScreenshotParams::builder().build()).await.unwrap();
    std::fs::write(shots().join("assistant-panel.png"), png).unwrap();

    // ---- a reload while the turn waited on two calls: the read-only one runs again, the
    // click is answered (never re-run).
    fake.lock().unwrap().pending = json!({"run": "run-1", "round": 2, "calls": [
        {"id": "p1", "name": "describe_app_ui", "arguments": {}, "read_only": true, "round": 2, "deadline": "2099-01-01T00:00:00Z"},
        {"id": "p2", "name": "click_element", "arguments": {"role": "button", "description": "Save"}, "read_only": false, "round": 2, "deadline": "2099-01-01T00:00:00Z"}
    ]});
    page.reload().await.unwrap();
    until(&page, "!!window.a11y", "the page again").await;
    until(
        &page,
        &format!("!!{launcher} && {SHADOW}.querySelector('.log').textContent.includes('I read it again')"),
        "the resumed turn",
    )
    .await;
    let results = fake.lock().unwrap().results.clone();
    assert_eq!(results.len(), 2, "{results:?}");
    let r = results[1]["results"].as_array().unwrap();
    assert_eq!(r[0]["id"], "p1");
    assert!(r[0]["output"].as_str().unwrap().contains("- button \"Save\""), "{r:?}");
    assert_eq!(r[1], json!({"id": "p2", "error": "cancelled: the page was reloaded before this action ran"}));
    assert_eq!(js(&page, "document.querySelectorAll('[role=dialog]').length").await, 0, "Save was not clicked again");
    // The conversation came back with the reload.
    let log_text = js(&page, &format!("{log}.textContent")).await;
    assert!(
        log_text.as_str().unwrap().contains("Put my name, Ana")
            && log_text.as_str().unwrap().contains("Saved the order"),
        "{log_text}"
    );

    // The panel came back open, as the user left it.
    until(&page, &format!("!{}.hidden", in_panel("assistant-panel")), "the panel to reopen").await;
    // Narrow screens: the panel takes the width.
    page.execute(SetDeviceMetricsOverrideParams::new(375, 740, 2.0, true)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let width =
        js(&page, &format!("{}.getBoundingClientRect().width", in_panel("assistant-panel"))).await.as_f64().unwrap();
    assert!((350.0..=375.0).contains(&width), "{width}");
    let png = page.screenshot(ScreenshotParams::builder().build()).await.unwrap();
    std::fs::write(shots().join("assistant-panel-375.png"), png).unwrap();
    page.execute(ClearDeviceMetricsOverrideParams::default()).await.unwrap();

    // Clear history empties the conversation; New conversation starts another.
    press(&page, "assistant-history").await;
    until(&page, &format!("{}.textContent.includes('Order help')", in_panel("assistant-history-list")), "the history")
        .await;
    press(&page, "assistant-clear").await;
    until(
        &page,
        &format!("{}.textContent === 'History cleared.'", in_panel("assistant-status")),
        "the history cleared",
    )
    .await;
    assert!(fake.lock().unwrap().calls.iter().any(|c| c.starts_with("DELETE /api/chat/c1/messages")));
    assert_eq!(js(&page, &format!("{log}.querySelectorAll('.msg').length")).await, 0);
    press(&page, "assistant-new").await;
    assert_eq!(js(&page, "sessionStorage.getItem('wright-assistant:open:ek_test')").await, Value::Null);

    // Close.
    press(&page, "assistant-close").await;
    until(&page, &format!("{}.hidden", in_panel("assistant-panel")), "the panel to close").await;
    assert_eq!(js(&page, &format!("{launcher}.getAttribute('aria-expanded')")).await, "false");
    assert_eq!(js(&page, "violations.join(', ')").await, "", "the strict CSP was respected");
    assert_eq!(js(&page, "errors.join(' | ')").await, "", "no errors in the page");
    browser.close().await.unwrap();
    events.await.ok();
}

// ---- what it costs ------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describing_a_page_of_2000_elements_is_measured() {
    let base = serve(Arc::default()).await;
    let (mut browser, events, _profile) = launch().await;
    let page = open(&browser, &format!("{base}/big.html")).await;
    let m = js(
        &page,
        "(async () => {
            const times = [];
            let d;
            for (let i = 0; i < 5; i += 1) {
              const t = performance.now();
              d = a11y.describeAppUi();
              times.push(performance.now() - t);
            }
            times.sort((a, b) => a - b);
            const all = a11y.describeAppUi(document.body, {maxChars: 10000000});
            const t = performance.now();
            const click = await a11y.clickElement({role: 'button', description: 'Edit 399'});
            const clickMs = performance.now() - t;
            const f = performance.now();
            const fill = await a11y.fillFormElement({role: 'textbox', description: 'Quantity 7', value: '70'});
            const fillMs = performance.now() - f;
            return {head: d.text.split('\\n').slice(0, 12).join('\\n'), tail: d.text.split('\\n').slice(-2).join('\\n'),
                    elements: document.querySelectorAll('*').length, count: d.count, chars: d.text.length, truncated: d.truncated,
                    refs: d.refs.length, fullChars: all.text.length, median: times[2], min: times[0], max: times[4],
                    clickMs, clickOk: click.ok, settled: click.settled_ms, fillMs, fillOk: fill.ok};
        })()",
    )
    .await;
    println!(
        "describe_app_ui on a page of {} DOM elements ({} described): median {:.1} ms (min {:.1}, max {:.1}); \
         {} chars at the default cap (truncated: {}, {} refs); {} chars uncapped; \
         click by name {:.0} ms (settled {} ms), fill by name {:.0} ms",
        m["elements"],
        m["count"],
        m["median"].as_f64().unwrap(),
        m["min"].as_f64().unwrap(),
        m["max"].as_f64().unwrap(),
        m["chars"],
        m["truncated"],
        m["refs"],
        m["fullChars"],
        m["clickMs"].as_f64().unwrap(),
        m["settled"],
        m["fillMs"].as_f64().unwrap(),
    );
    println!("its start:\n{}\n…\n{}", m["head"].as_str().unwrap(), m["tail"].as_str().unwrap());
    assert!(m["count"].as_u64().unwrap() >= 2000, "{m}");
    assert!(m["clickOk"] == true && m["fillOk"] == true, "{m}");
    browser.close().await.unwrap();
    events.await.ok();
}

/// The vendored modules import one another by relative paths that are all served.
#[test]
fn the_vendored_modules_import_only_what_is_served() {
    let cache = vendor_cache();
    let dir = wright_webui::vendor::dom_accessibility_api_dir(&cache);
    for s in wright_webui::vendor::ASSISTANT_SERVED {
        if !s.file.ends_with(".mjs") {
            continue;
        }
        let body = std::fs::read_to_string(dir.join(s.file)).unwrap();
        let base = std::path::Path::new(s.name).parent().unwrap();
        for (i, _) in body.match_indices(" from \"") {
            let spec: String = body[i + 7..].chars().take_while(|c| *c != '"').collect();
            assert!(spec.starts_with("./") || spec.starts_with("../"), "{}: a bare import {spec}", s.name);
            let mut path = base.to_path_buf();
            for part in spec.split('/') {
                match part {
                    "." => {}
                    ".." => {
                        path.pop();
                    }
                    p => path.push(p),
                }
            }
            let name = path.to_string_lossy().to_string();
            assert!(
                wright_webui::vendor::ASSISTANT_SERVED.iter().any(|s| s.name == name),
                "{} imports {name}, not served",
                s.name
            );
        }
    }
}
