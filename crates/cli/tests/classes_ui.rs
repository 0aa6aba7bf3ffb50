//! Classes in a real browser (Debian's Chromium against a real `wright serve`): the owner's
//! Share toggle, a classmate's read-only view of the shared build with "Make a copy", and a
//! teacher's "My classes" page. Screenshots go to `target/tmp/ui-screenshots/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::json;
use support::MockLlm;
use support::browser::{js, launch, shot, until};
use support::server::{Server, client, create_ok, stateless_model, stream};

/// A page signed in as `name` (through a one-time link), on `hash`.
async fn sign_in(browser: &chromiumoxide::Browser, s: &Server, name: &str, hash: &str) -> chromiumoxide::Page {
    let link = s.cli(&["users", "login", name, "--url", &s.api]).await;
    let page = browser.new_page(link.as_str()).await.unwrap();
    until(&page, &format!("document.getElementById('who').textContent === '{name}'"), "signed in").await;
    js(&page, &format!("location.hash = '{hash}'")).await;
    page
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_shares_a_classmate_copies_and_a_teacher_sees_the_class() {
    let llm = MockLlm::start_with_fallback(vec![], stateless_model(0)).await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    let ana = s.add_user("ana", false).await;
    s.add_user("ben", false).await;
    s.cli(&["users", "add", "tess", "--teacher"]).await;
    s.cli(&["classes", "add", "lab-1", "--teacher", "tess"]).await;
    s.cli(&["classes", "members", "lab-1", "--add", "ana", "ben"]).await;
    let c = client();
    let id = create_ok(&c, &s, &ana, "a landing page for a dog walker").await;
    assert_eq!(stream(&c, &s, &ana, &id, None).await.last().unwrap().data["success"], true);

    let (mut browser, events, _profile) = launch().await;
    // The owner: a Share toggle, off, then on.
    let page = sign_in(&browser, &s, "ana", &format!("#build={id}")).await;
    until(&page, "!document.getElementById('share').hidden", "the Share toggle").await;
    assert_eq!(js(&page, "document.getElementById('share').getAttribute('aria-pressed')").await, "false");
    // Clicked by the page's own event, not at coordinates: the hints below the buttons ("… left
    // this hour") arrive on their own and may move them between aiming and clicking.
    js(&page, "document.getElementById('share').click()").await;
    until(&page, "document.getElementById('share').getAttribute('aria-pressed') === 'true'", "shared").await;
    shot(&page, "classes-shared.png").await;

    // A classmate: listed under "Shared with me", read-only, with "Make a copy".
    page.close().await.unwrap();
    let page = sign_in(&browser, &s, "ben", "").await;
    until(&page, &format!("!!document.querySelector('#shared-list a[href=\"#build={id}\"]')"), "the shared build")
        .await;
    js(&page, &format!("location.hash = '#build={id}'")).await;
    until(&page, "/Shared by ana/.test(document.getElementById('shared-by').textContent)", "who shared it").await;
    until(&page, "!document.getElementById('more').hidden", "the copy box").await;
    assert_eq!(js(&page, "document.getElementById('more-go').textContent").await, "Make a copy");
    for hidden in ["share", "cancel", "explain"] {
        assert_eq!(js(&page, &format!("document.getElementById('{hidden}').hidden")).await, true, "{hidden}");
    }
    shot(&page, "classes-classmate.png").await;
    js(&page, "document.getElementById('more-prompt').value = 'add a footer to the page'").await;
    js(&page, "document.getElementById('more-go').click()").await;
    until(&page, &format!("location.hash.startsWith('#build=') && location.hash !== '#build={id}'"), "the copy").await;
    // The copy is his: his own Share toggle, his words on the box again.
    until(&page, "!document.getElementById('share').hidden", "the copy's Share toggle").await;
    until(&page, "document.getElementById('phase').dataset.phase === 'PUBLISHED'", "the copy published").await;
    assert_eq!(js(&page, "document.getElementById('more-go').textContent").await, "Keep working");

    // The teacher: "My classes" with both members and ana's build.
    page.close().await.unwrap();
    let page = sign_in(&browser, &s, "tess", "#classes").await;
    until(&page, "!document.getElementById('nav-classes').hidden", "the My classes link").await;
    until(&page, "document.querySelectorAll('.class-members tbody tr').length === 2", "the members").await;
    let text = js(&page, "document.getElementById('classes-body').innerText").await;
    let text = text.as_str().unwrap();
    assert!(text.contains("lab-1") && text.contains("ana") && text.contains("ben"), "{text}");
    assert!(text.contains("published"), "{text}");
    let recent = js(&page, &format!("!!document.querySelector('.class-members a[href=\"#build={id}\"]')")).await;
    assert_eq!(recent, json!(true));
    shot(&page, "classes-teacher.png").await;

    browser.close().await.unwrap();
    events.abort();
}
