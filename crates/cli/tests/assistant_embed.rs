//! The in-app assistant embedded in another app's page, end to end: a real `wright serve` (its
//! model scripted on the OpenAI wire), an embed key for a page served by a tiny static server
//! on another origin under a strict CSP, and Debian's Chromium (headless, over DevTools with
//! chromiumoxide) driving the assistant's panel as a person would. The page imports
//! `assistant.js` from wright and mounts it with a tool of its own (`wait_for_it`, registered on
//! the key). The model reads the page, clicks, fills in every kind of field in one round (and is
//! refused the disabled button), a reload in the middle of the page's own tool answers it
//! "cancelled" (never run twice) and the turn goes on, and the visitor the page became sees only
//! their own conversation. Screenshots go to `target/tmp/ui-screenshots/assistant-embed-*.png`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use chromiumoxide::cdp::browser_protocol::input::InsertTextParams;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::browser::{js, launch, shot};
use support::server::{Server, client, get_json};
use support::{MockLlm, Turn};

/// The app's page: one field of every kind, a button that works and one that is disabled.
const PAGE: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Sign up</title>
  <link rel="stylesheet" href="/page.css">
  <script type="module" src="/page.js"></script>
</head>
<body>
  <main>
    <h1>Sign up</h1>
    <form id="signup" aria-label="Sign up">
      <p><label for="name">Full name</label> <input id="name" type="text" autocomplete="off"></p>
      <p><label for="notes">Notes</label> <textarea id="notes" rows="3"></textarea></p>
      <p><label><input id="subscribe" type="checkbox"> Subscribe</label></p>
      <fieldset>
        <legend>Plan</legend>
        <label><input type="radio" name="plan" value="basic" checked> Basic</label>
        <label><input type="radio" name="plan" value="pro"> Pro</label>
      </fieldset>
      <p>
        <label for="country">Country</label>
        <select id="country">
          <option value="">Choose…</option>
          <option value="pt">Portugal</option>
          <option value="br">Brazil</option>
          <option value="es">Spain</option>
        </select>
      </p>
      <div class="combo">
        <label for="fruit">Fruit</label>
        <input id="fruit" type="text" role="combobox" aria-controls="fruit-list" aria-expanded="false"
               aria-autocomplete="list" autocomplete="off">
        <ul id="fruit-list" role="listbox" aria-label="Fruits" hidden>
          <li role="option">Apple</li>
          <li role="option">Banana</li>
          <li role="option">Cherry</li>
        </ul>
      </div>
      <p>
        <button type="button" id="go">Go</button>
        <button type="button" id="save" disabled>Save</button>
      </p>
      <p id="done" role="status" hidden>Done!</p>
    </form>
  </main>
</body>
</html>
"#;

const PAGE_CSS: &str = "body { font: 16px/1.5 system-ui, sans-serif; margin: 2rem; color: #222; }
main { max-width: 34rem; }
label { margin-right: .5rem; }
input[type=text], textarea, select { font: inherit; padding: .25rem .4rem; }
fieldset { margin: .5rem 0; }
.combo { position: relative; margin: 1rem 0; }
[role=listbox] { list-style: none; margin: 0; padding: 0; border: 1px solid #999; background: #fff;
  position: absolute; left: 3.5rem; width: 12rem; z-index: 1; }
[role=option] { padding: .2rem .5rem; cursor: pointer; }
[role=option]:hover { background: #eef; }
#done { color: #060; font-weight: bold; }
";

/// The app's script (no inline scripts under its policy): the combobox, the buttons, and the
/// assistant mounted with the page's own tool. `__API__` and `__KEY__` are filled in when served.
const PAGE_JS: &str = r#"import { mountAssistant } from '__API__/assistant/assistant.js';

const $ = (id) => document.getElementById(id);
window.saveClicks = 0;
$('signup').addEventListener('submit', (e) => e.preventDefault());
$('go').addEventListener('click', () => {
  $('done').hidden = false;
});
$('save').addEventListener('click', () => {
  window.saveClicks += 1;
});

// The combobox: clicking or typing opens the list (filtered by what is typed); an option fills it.
const fruit = $('fruit');
const list = $('fruit-list');
const open = (on) => {
  list.hidden = !on;
  fruit.setAttribute('aria-expanded', String(on));
};
const filter = () => {
  const q = fruit.value.trim().toLowerCase();
  for (const li of list.children) li.hidden = !!q && !li.textContent.toLowerCase().startsWith(q);
};
fruit.addEventListener('click', () => {
  open(true);
  filter();
});
fruit.addEventListener('input', () => {
  open(true);
  filter();
});
for (const li of list.children) {
  li.addEventListener('click', () => {
    fruit.value = li.textContent;
    open(false);
  });
}

mountAssistant({
  endpoint: '__API__',
  embedKey: '__KEY__',
  tools: {
    // The page's own tool: counts its runs in this tab, so a reload cannot hide a second one.
    wait_for_it: () => {
      const runs = Number(sessionStorage.getItem('wait_for_it runs') || '0') + 1;
      sessionStorage.setItem('wait_for_it runs', String(runs));
      return new Promise((resolve) => setTimeout(() => resolve('waited'), 3000));
    },
  },
});
window.pageReady = true;
"#;

/// Every policy violation and script error the page meets, from its first script on.
const WATCH: &str = "window.__csp = []; window.__errors = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample} at ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`));
window.addEventListener('error', (e) => window.__errors.push(String(e.message)));
window.addEventListener('unhandledrejection', (e) => window.__errors.push(String(e.reason)));";

const SHADOW: &str = "document.querySelector('[data-wright-assistant]')?.shadowRoot";

/// The panel's element `testid`, as a JS expression.
fn in_panel(testid: &str) -> String {
    format!("{SHADOW}?.querySelector('[data-testid={testid}]')")
}

/// The panel's conversation as text.
fn log_text() -> String {
    format!("({}?.textContent || '')", in_panel("assistant-log"))
}

/// The turn is over: nothing streams, Send works again.
fn idle() -> String {
    format!(
        "!!{send} && !{send}.disabled && !{SHADOW}.querySelector('.msg.streaming')",
        send = in_panel("assistant-send")
    )
}

/// Wait until `expr` is true in the page; on a timeout, say what the panel and the page show.
async fn until(page: &chromiumoxide::Page, expr: &str, what: &str) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if js(page, expr).await == Value::Bool(true) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let panel = js(page, &log_text()).await;
    let status = js(page, &format!("{}?.textContent", in_panel("assistant-status"))).await;
    let errors = js(page, "JSON.stringify([window.__errors, window.__csp])").await;
    panic!("waited 60 s for {what}; the panel says: {panel}; its status: {status}; the page's errors: {errors}");
}

/// A person's click (the mouse, through DevTools) on the panel's control `testid`.
async fn press(page: &chromiumoxide::Page, testid: &str) {
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

/// Type `text` in the open panel as a keyboard would, and press Send.
async fn say(page: &chromiumoxide::Page, text: &str) {
    js(page, &format!("{}.focus()", in_panel("assistant-input"))).await;
    page.execute(InsertTextParams::new(text)).await.unwrap();
    assert_eq!(js(page, &format!("{}.value", in_panel("assistant-input"))).await, text);
    press(page, "assistant-send").await;
}

/// Open the panel (the launcher) unless it is open.
async fn open_panel(page: &chromiumoxide::Page) {
    let launcher = in_panel("assistant-launcher");
    until(page, &format!("!!{launcher} && getComputedStyle({launcher}).display !== 'none'"), "the launcher").await;
    if js(page, &format!("{}.hidden", in_panel("assistant-panel"))).await == Value::Bool(true) {
        press(page, "assistant-launcher").await;
    }
    until(page, &format!("!{}.hidden", in_panel("assistant-panel")), "the panel to open").await;
}

/// The app's static server on `listener`: the page (with its policy), its script (naming the
/// wright server `api` and the embed key) and its styles.
fn serve_app(listener: tokio::net::TcpListener, api: &str, key: &str) {
    let csp = format!(
        "default-src 'self'; script-src 'self' {api}; style-src 'self' {api}; connect-src {api}; object-src 'none'; \
         base-uri 'none'"
    );
    let script = PAGE_JS.replace("__API__", api).replace("__KEY__", key);
    let router = Router::new()
        .route(
            "/",
            get(move || async move {
                (
                    [
                        (header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()),
                        (header::CONTENT_SECURITY_POLICY, csp),
                    ],
                    PAGE,
                )
                    .into_response()
            }),
        )
        .route(
            "/page.js",
            get(move || async move { ([(header::CONTENT_TYPE, "text/javascript")], script).into_response() }),
        )
        .route("/page.css", get(|| async { ([(header::CONTENT_TYPE, "text/css")], PAGE_CSS).into_response() }));
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
}

/// The model: keyed on what only its own calls' arguments or the page's outputs say, the most
/// advanced step first (each request carries the whole turn; later turns carry earlier messages
/// but not their tool messages).
fn model() -> Turn {
    let fill = Turn::when(
        "Ada Lovelace",
        Turn::text("All filled in."),
        Turn::when(
            "[ref=s",
            Turn::calls(&[
                ("fill_form_element", json!({"role": "textbox", "description": "Full name", "value": "Ada Lovelace"})),
                ("fill_form_element", json!({"role": "textbox", "description": "Notes", "value": "hello there"})),
                ("fill_form_element", json!({"role": "checkbox", "description": "Subscribe", "value": "true"})),
                ("fill_form_element", json!({"role": "radio", "description": "Pro", "value": "true"})),
                ("fill_form_element", json!({"role": "combobox", "description": "Country", "value": "Portugal"})),
                ("fill_form_element", json!({"role": "combobox", "description": "Fruit", "value": "Banana"})),
                ("click_element", json!({"role": "button", "description": "Save"})),
            ]),
            Turn::calls(&[
                ("describe_app_ui", json!({})),
                ("click_element", json!({"role": "button", "description": "Go"})),
            ]),
        ),
    );
    let waited = Turn::text("Done waiting.");
    let wait = Turn::when(
        "cancelled: the page was reloaded",
        waited.clone(),
        Turn::when("waited", waited, Turn::calls(&[("wait_for_it", json!({}))])),
    );
    Turn::when("thanks", Turn::text("You're welcome."), Turn::when("wait please", wait, fill))
}

/// The messages of a model request.
fn messages(req: &Value) -> &Vec<Value> {
    req["messages"].as_array().unwrap()
}

/// The tool messages that answer the last assistant message with tool calls in `req`: each
/// call's `(name, id)` and the content the model read for it.
fn answered_calls(req: &Value) -> Vec<(String, String, String)> {
    let ms = messages(req);
    let at = ms.iter().rposition(|m| m["role"] == "assistant" && m["tool_calls"].is_array()).unwrap();
    let calls = ms[at]["tool_calls"].as_array().unwrap();
    let answers = &ms[at + 1..];
    assert_eq!(answers.len(), calls.len(), "one tool message per call: {}", json!(ms));
    calls
        .iter()
        .zip(answers)
        .map(|(c, a)| {
            assert_eq!(a["role"], "tool", "{a}");
            assert_eq!(a["tool_call_id"], c["id"], "the results come back in the calls' order: {}", json!(ms));
            (
                c["function"]["name"].as_str().unwrap().to_string(),
                c["id"].as_str().unwrap().to_string(),
                a["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embedded_assistant_fills_a_form_survives_a_reload_and_keeps_visitors_apart() {
    let llm = MockLlm::start_with_fallback(vec![], model()).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wright.toml"), "[chat]\nembedding = \"off\"\n").unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    let owner = s.add_user("owner", false).await;
    let c = client();

    // The app lives on another origin: its port is known before the key is made for it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());

    // The key: the three UI tools exactly as the server defines them, and the page's own tool.
    let view = get_json(&c, &s, &owner, "/api/assistant").await;
    let mut tools = view["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["describe_app_ui", "click_element", "fill_form_element"], "{view}");
    tools.push(json!({"name": "wait_for_it", "description": "Waits three seconds.",
                      "parameters": {"type": "object", "properties": {}}, "read_only": false}));
    let res = c
        .post(s.url("/api/embed-keys"))
        .bearer_auth(&owner)
        .json(&json!({"name": "Sign-up form", "origins": [origin], "tools": tools}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let made: Value = res.json().await.unwrap();
    let key = made["key"].as_str().unwrap().to_string();
    assert_eq!(
        made["tools"],
        json!(["describe_app_ui", "click_element", "fill_form_element", "wait_for_it"]),
        "{made}"
    );
    serve_app(listener, &s.api, &key);

    let (mut browser, events, _profile) = launch().await;
    let page = browser.new_page("about:blank").await.unwrap();
    page.evaluate_on_new_document(WATCH).await.unwrap();
    page.goto(format!("{origin}/").as_str()).await.unwrap();
    until(&page, "window.pageReady === true", "the page's script").await;
    open_panel(&page).await;
    assert_eq!(js(&page, &format!("{}.textContent", in_panel("assistant-launcher"))).await, "✦Assistant");

    // ---- one message: the model reads the page and clicks Go, then fills in every field in
    // one round (and is refused Save, which is disabled), then answers.
    say(&page, "fill in the form").await;
    until(&page, &format!("{}.includes('All filled in.')", log_text()), "the answer to the form").await;
    until(&page, &idle(), "the turn to end").await;
    let form = js(
        &page,
        "[document.getElementById('name').value, document.getElementById('notes').value, \
          document.getElementById('subscribe').checked, document.querySelector('input[value=pro]').checked, \
          document.querySelector('input[value=basic]').checked, document.getElementById('country').value, \
          document.getElementById('fruit').value, document.getElementById('fruit-list').hidden, \
          !document.getElementById('done').hidden && document.getElementById('done').checkVisibility(), \
          window.saveClicks]",
    )
    .await;
    assert_eq!(
        form,
        json!(["Ada Lovelace", "hello there", true, true, false, "pt", "Banana", true, true, 0]),
        "[name, notes, subscribe, pro, basic, country, fruit, list hidden, Done! shown, Save clicks]"
    );
    let chips = js(&page, &format!("[...{SHADOW}.querySelectorAll('.chip')].map((c) => c.textContent)")).await;
    assert_eq!(
        chips,
        json!([
            "Read the page",
            "Clicked \"Go\"",
            "Filled in \"Full name\"",
            "Filled in \"Notes\"",
            "Filled in \"Subscribe\"",
            "Filled in \"Pro\"",
            "Filled in \"Country\"",
            "Filled in \"Fruit\"",
            "Clicking \"Save\" failed: button \"Save\" is disabled"
        ]),
        "the turn's chips"
    );
    assert_eq!(js(&page, &format!("{}.textContent", in_panel("assistant-status"))).await, "");
    tokio::time::sleep(Duration::from_millis(300)).await;
    shot(&page, "assistant-embed-filled.png").await;

    // What the model read: round 1 (the page, and Go's effect), then round 2's seven results,
    // in the calls' order, the refusal of Save among them.
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 3, "three requests for three steps");
    let offered: Vec<&str> =
        reqs[0]["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(offered, ["describe_app_ui", "click_element", "fill_form_element", "wait_for_it"], "no documents here");
    let round1 = answered_calls(&reqs[1]);
    assert_eq!(round1.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["describe_app_ui", "click_element"]);
    let described = &round1[0].2;
    println!("--- the page as the model read it:\n{described}\n--- Go: {}", round1[1].2);
    assert!(described.starts_with("Page \"Sign up\" at /\n"), "{described}");
    for line in [
        "textbox \"Full name\" [ref=s",
        "textbox \"Notes\" [ref=s",
        "checkbox \"Subscribe\" [unchecked] [ref=s",
        "radio \"Pro\" [unchecked] [ref=s",
        "combobox \"Country\"",
        "combobox \"Fruit\"",
        "button \"Go\" [ref=s",
        "button \"Save\" [disabled] [ref=s",
    ] {
        assert!(described.contains(line), "`{line}` not in\n{described}");
    }
    assert!(!described.contains("Assistant") && !described.contains("Done!"), "{described}");
    assert!(round1[1].2.contains("Done!"), "the click says what appeared: {}", round1[1].2);
    let round2 = answered_calls(&reqs[2]);
    let names: Vec<&str> = round2.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names, [["fill_form_element"; 6].as_slice(), &["click_element"]].concat());
    for (name, id, content) in &round2[..6] {
        assert!(!content.starts_with("error"), "{name} {id}: {content}");
        assert!(content.contains("\"changed\""), "{name} {id}: {content}");
    }
    let save = &round2[6].2;
    assert!(save.starts_with("error: ") && save.contains("button \"Save\" is disabled"), "{save}");

    // ---- the page's own tool, cut short by a reload: answered "cancelled", never run again.
    say(&page, "wait please").await;
    until(&page, "sessionStorage.getItem('wait_for_it runs') === '1'", "wait_for_it to start").await;
    let started = Instant::now();
    let status = js(&page, &format!("{}.textContent", in_panel("assistant-status"))).await;
    assert_eq!(status, "Running wait_for_it…");
    shot(&page, "assistant-embed-waiting.png").await;
    assert!(started.elapsed() < Duration::from_millis(2500), "the reload must come while wait_for_it runs");
    let conversation = js(&page, &format!("sessionStorage.getItem('wright-assistant:open:{key}')")).await;
    let conversation = conversation.as_str().unwrap().to_string();
    page.reload().await.unwrap();
    until(&page, "window.pageReady === true", "the page's script after the reload").await;
    // The panel comes back open, where the user left it.
    until(&page, &format!("!!{p} && !{p}.hidden", p = in_panel("assistant-panel")), "the panel to reopen by itself")
        .await;
    until(&page, &format!("{}.includes('Done waiting.')", log_text()), "the answer after the reload").await;
    until(&page, &idle(), "the turn to end after the reload").await;
    let log = js(&page, &log_text()).await;
    let log = log.as_str().unwrap();
    for said in [
        "fill in the form",
        "All filled in.",
        "wait please",
        "Running wait_for_it failed: cancelled: the page was reloaded",
    ] {
        assert!(log.contains(said), "`{said}` not in the reopened conversation: {log}");
    }
    assert_eq!(js(&page, &format!("{SHADOW}.querySelectorAll('.msg.user').length")).await, 2);
    tokio::time::sleep(Duration::from_millis(300)).await;
    shot(&page, "assistant-embed-resumed.png").await;

    say(&page, "thanks").await;
    until(&page, &format!("{}.includes(\"You're welcome.\")", log_text()), "the last answer").await;
    until(&page, &idle(), "the last turn to end").await;
    assert_eq!(js(&page, "sessionStorage.getItem('wait_for_it runs')").await, "1", "wait_for_it ran once");
    tokio::time::sleep(Duration::from_millis(300)).await;
    shot(&page, "assistant-embed-thanks.png").await;

    let reqs = llm.requests();
    assert_eq!(reqs.len(), 6, "three steps of the form, two of the wait, one thanks");
    let after_reload = answered_calls(&reqs[4]);
    assert_eq!(after_reload.len(), 1);
    assert_eq!(after_reload[0].0, "wait_for_it");
    println!("--- wait_for_it, as the model read it after the reload: {}", after_reload[0].2);
    assert!(after_reload[0].2.starts_with("error: cancelled: the page was reloaded"), "{}", after_reload[0].2);
    assert!(!reqs.iter().any(|r| r.to_string().contains("waited")), "the interrupted run never finished");
    assert_eq!(messages(&reqs[5]).last().unwrap()["content"], "thanks");

    // ---- the visitor: its token (kept by the page) lists its one conversation; another
    // visitor of the same key sees none and cannot read it.
    let token = js(&page, &format!("localStorage.getItem('wright-assistant:{key}')")).await;
    let token = token.as_str().unwrap().to_string();
    assert!(token.starts_with("vt_"), "{token}");
    let res = c.get(s.url("/api/chat")).bearer_auth(&token).header("origin", &origin).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["access-control-allow-origin"], origin.as_str());
    let mine: Value = res.json().await.unwrap();
    let ids: Vec<&str> = mine.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [conversation.as_str()], "{mine}");
    let pending = c
        .get(s.url(&format!("/api/chat/{conversation}/pending")))
        .bearer_auth(&token)
        .header("origin", &origin)
        .send()
        .await
        .unwrap();
    assert_eq!(pending.json::<Value>().await.unwrap()["calls"], json!([]), "nothing left waiting");
    let res = c
        .post(s.url("/api/embed/visitors"))
        .header("x-wright-embed-key", &key)
        .header("origin", &origin)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let other = res.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_string();
    assert_ne!(other, token);
    let res = c.get(s.url("/api/chat")).bearer_auth(&other).header("origin", &origin).send().await.unwrap();
    assert_eq!(res.json::<Value>().await.unwrap(), json!([]));
    for path in [format!("/api/chat/{conversation}/messages"), format!("/api/chat/{conversation}/pending")] {
        let res = c.get(s.url(&path)).bearer_auth(&other).header("origin", &origin).send().await.unwrap();
        assert_eq!(res.status(), 404, "{path}");
    }

    assert_eq!(js(&page, "window.__csp").await, json!([]), "no policy violations");
    assert_eq!(js(&page, "window.__errors").await, json!([]), "no script errors");
    // The policy is in force (and watched): the page may not even fetch from its own origin.
    let probe = js(&page, "fetch('/page.css').then(() => 'fetched', () => 'blocked')").await;
    assert_eq!(probe, "blocked");
    until(&page, "window.__csp.length === 1", "the probe's violation").await;
    let violation = js(&page, "window.__csp[0]").await;
    assert!(violation.as_str().unwrap().starts_with("connect-src "), "{violation}");
    browser.close().await.unwrap();
    let _ = browser.wait().await;
    events.abort();
}
