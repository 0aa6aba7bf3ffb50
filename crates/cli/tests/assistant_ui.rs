//! wright's own in-app assistant in a real browser (Debian's Chromium, headless, over
//! DevTools) against a real `wright serve` whose model is scripted on the OpenAI wire: asked to
//! start a build, it reads the page, fills the prompt box and clicks "Build" (its tool calls
//! run in the page); asked how to add a chat tool, it searches wright's own documents and the
//! reply shows the source. Screenshots go to `target/tmp/ui-screenshots/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use chromiumoxide::cdp::browser_protocol::input::InsertTextParams;
use serde_json::{Value, json};
use std::time::Duration;
use support::browser::{js, launch, shot, until};
use support::server::{Server, get_json, stateless_model};
use support::{MockLlm, Turn};

const PROMPT: &str = "A tip calculator for splitting bills between friends";
const ANSWER: &str = "Write one type that implements `ChatTool` and add one line to `builtin_tools` \
    (source: chat.md › Adding a tool).";

/// The assistant's side of the model (its requests offer `describe_app_ui`); builds get the
/// stateless builder. Each request carries the whole turn, so the most advanced state is
/// checked first, by markers only tool calls and results contain.
fn model() -> Turn {
    let ui = Turn::when(
        "splitting bills",
        Turn::text("I started the build of your tip calculator; you can watch it on the page."),
        Turn::when(
            "[ref=s",
            Turn::calls(&[
                (
                    "fill_form_element",
                    json!({"role": "textbox", "description": "What should wright build?", "value": PROMPT}),
                ),
                ("click_element", json!({"role": "button", "description": "Build"})),
            ]),
            Turn::calls(&[("describe_app_ui", json!({}))]),
        ),
    );
    let docs = Turn::when(
        "chat.md ›",
        Turn::text(ANSWER),
        // Specific enough to pick the built-in way out of the docs, which also tell how to give
        // the chat an MCP server's tools (docs/mcp.md).
        Turn::calls(&[("search_documents", json!({"query": "write a new built-in chat tool (ChatTool)"}))]),
    );
    Turn::when("describe_app_ui", Turn::when("How do I add a tool", docs, ui), stateless_model(0))
}

/// The assistant's shadow root, as an expression.
const ROOT: &str = "document.querySelector('[data-wright-assistant]').shadowRoot";

async fn ask(page: &chromiumoxide::Page, text: &str) {
    js(page, &format!("{ROOT}.querySelector('[data-testid=assistant-input]').focus()")).await;
    page.execute(InsertTextParams::new(text)).await.unwrap();
    js(page, &format!("{ROOT}.querySelector('[data-testid=assistant-send]').click()")).await;
}

fn log_has(text: &str) -> String {
    format!("{ROOT}.querySelector('[data-testid=assistant-log]').innerText.includes({})", json!(text))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_assistant_starts_a_build_and_answers_from_wrights_docs() {
    let mock = MockLlm::start_with_fallback(vec![], model()).await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &mock.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    let login = s.login_url.clone().expect("a first start prints a login link");
    let ann = s.add_user("ann", false).await;
    let c = support::server::client();

    // The library and its accessibility package are served to any origin.
    let lib = c.get(s.url("/assistant/assistant.js")).header("origin", "https://app.example").send().await.unwrap();
    assert_eq!(lib.status(), 200);
    assert_eq!(lib.headers()["access-control-allow-origin"], "*");
    let dom = c.get(s.url("/assistant/vendor/dom-accessibility-api/index.mjs")).send().await.unwrap();
    assert_eq!(dom.status(), 200, "dom-accessibility-api is served from the data dir");
    assert_eq!(c.get(s.url("/assistant/vendor/VERSION")).send().await.unwrap().status(), 404);
    assert_eq!(c.get(s.url("/assistant/app.js")).send().await.unwrap().status(), 404, "only the library's files");

    // wright's own docs are indexed in the background; the assistant says how far. (Up to five
    // minutes: the docs grow, and a 2-core machine running other tests embeds slowly.)
    let mut index = Value::Null;
    for _ in 0..1500 {
        index = get_json(&c, &s, &ann, "/api/assistant").await["docs_index"].clone();
        if index["chunks"].as_u64().unwrap_or(0) > 20 && index["embedded"] == index["chunks"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(index["files"].as_u64().unwrap() >= 8 && index["embedded"] == index["chunks"], "{index}");

    let (mut browser, events, _profile) = launch().await;
    let page = browser.new_page("about:blank").await.unwrap();
    page.evaluate_on_new_document(
        "window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));",
    )
    .await
    .unwrap();
    page.goto(login.as_str()).await.unwrap();
    until(&page, "!document.getElementById('ask').hidden", "the signed-in page").await;
    until(&page, &format!("!!document.querySelector('[data-wright-assistant]') && !!{ROOT}.querySelector('[data-testid=assistant-launcher]')"), "the assistant's button").await;
    js(&page, &format!("{ROOT}.querySelector('[data-testid=assistant-launcher]').click()")).await;
    until(&page, &format!("!{ROOT}.querySelector('[data-testid=assistant-panel]').hidden"), "the assistant's panel")
        .await;
    assert_eq!(js(&page, "document.getElementById('prompt').value").await, "");

    ask(&page, "start a build of a tip calculator").await;
    until(&page, &log_has("I started the build"), "the assistant's reply").await;
    // It filled the prompt box and pressed Build: the build is on the page and in the store.
    until(&page, "!document.getElementById('view').hidden", "the build's view").await;
    let builds = get_json(&c, &s, &ann, "/api/builds").await;
    assert!(builds.as_array().unwrap().is_empty(), "the build is the admin's, not ann's");
    let hash = js(&page, "location.hash").await;
    assert!(hash.as_str().unwrap().contains("build="), "{hash}");
    shot(&page, "assistant-build.png").await;
    // The model read the page before acting, and saw what its actions changed.
    let asked: Vec<String> =
        mock.requests().iter().map(Value::to_string).filter(|r| r.contains("describe_app_ui")).collect();
    assert_eq!(asked.len(), 3, "describe, then fill and click, then the answer");
    assert!(asked[1].contains("textbox") && asked[1].contains("What should wright build?"), "{}", asked[1]);
    // The build asks the model once a worker has taken it up, which may come after its view.
    let built = |m: &MockLlm| {
        m.requests().iter().map(Value::to_string).any(|r| r.contains(PROMPT) && !r.contains("describe_app_ui"))
    };
    for _ in 0..600 {
        if built(&mock) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(built(&mock), "the build ran on the prompt the assistant typed");

    ask(&page, "How do I add a tool to the chat?").await;
    until(&page, &log_has("builtin_tools"), "the answer from the docs").await;
    until(&page, &log_has("Adding a tool"), "its source").await;
    shot(&page, "assistant-docs.png").await;
    let search = mock.requests().iter().map(Value::to_string).find(|r| r.contains("chat.md ›")).unwrap();
    assert!(search.contains("Adding a tool"), "the search found the section");
    assert_eq!(js(&page, "window.__csp.length").await, 0, "{}", js(&page, "JSON.stringify(window.__csp)").await);

    browser.close().await.unwrap();
    events.abort();
}
