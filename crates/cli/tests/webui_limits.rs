//! Each route's hourly limit shown in the web UI before it bites, in a real Chromium against a
//! real `wright serve` (scripted model): "N of M questions left this hour" by the Explain
//! button, the builds left by Build and the messages left by Send; at 0 the Explain button is
//! disabled and says when it comes back. A screenshot goes to `target/tmp/ui-screenshots/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::json;
use support::browser::{js, launch, shot, until};
use support::server::Server;
use support::{MockLlm, Turn};

const PAGE: &str = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Hi</title></head>\
<body><h1>Hello</h1></body></html>\n";

fn text_of(id: &str) -> String {
    format!("document.getElementById('{id}').textContent")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limits_show_by_their_buttons_before_they_bite() {
    let mock = MockLlm::start_with_fallback(
        vec![Turn::calls(&[("createFile", json!({"path": "index.html", "content": PAGE}))]), Turn::text("A page.")],
        Turn::text("The index.html file is the page's skeleton."),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("wright.toml"),
        "[chat]\nembedding = \"off\"\n[limits]\nexplanations_per_hour = 2\nbuilds_per_hour = 5\nchat_messages_per_hour = 30\n",
    )
    .unwrap();
    let s = Server::start(dir.path(), &mock.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    let login = s.login_url.clone().expect("a first start prints a login link");
    let (mut browser, events, _profile) = launch().await;
    let page = browser.new_page(login.as_str()).await.unwrap();

    until(&page, "!document.getElementById('ask').hidden", "the prompt form").await;
    until(&page, &format!("{} === '5 of 5 builds left this hour'", text_of("build-left")), "the builds left").await;
    let textbox = page.find_element("textarea[aria-label='What should wright build?']").await.unwrap();
    textbox.click().await.unwrap();
    textbox.type_str("a page that says hello").await.unwrap();
    js(&page, "document.getElementById('template').value = 'static'").await;
    page.find_element("button#build").await.unwrap().click().await.unwrap();
    until(&page, &format!("{} === '4 of 5 builds left this hour'", text_of("build-left")), "a build counted").await;
    until(&page, "!document.getElementById('explain').hidden", "the Explain button").await;
    until(&page, &format!("{} === '2 of 2 questions left this hour'", text_of("explain-left")), "questions left").await;

    for left in ["1 of 2 questions left this hour", ""] {
        page.find_element("button#explain").await.unwrap().click().await.unwrap();
        until(&page, "!document.getElementById('explain-box').hidden", "the explanation").await;
        if !left.is_empty() {
            until(&page, &format!("{} === '{left}'", text_of("explain-left")), left).await;
        }
    }
    // Used up: the button says when it comes back, and cannot be pressed meanwhile.
    let back = "/^Explain again at \\d\\d:\\d\\d$/";
    until(&page, &format!("{back}.test({})", text_of("explain")), "the button's time").await;
    assert_eq!(js(&page, "document.getElementById('explain').disabled").await, true);
    let hint = js(&page, &text_of("explain-left")).await;
    assert!(hint.as_str().unwrap().starts_with("No questions left this hour (at most 2): more at "), "{hint}");
    shot(&page, "limits-explain.png").await;

    // The chat's Send button has its own.
    js(&page, "location.hash = 'chat'").await;
    until(&page, &format!("{} === '30 of 30 messages left this hour'", text_of("chat-left")), "messages left").await;
    shot(&page, "limits-chat.png").await;
    browser.close().await.unwrap();
    events.abort();
}
