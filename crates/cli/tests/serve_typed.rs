//! A build's template and language are read once, where the request comes in, and travel typed
//! from there: a request that spells them as people type them (`Full-Stack`, `PT-br`) is a
//! full-stack build in Portuguese everywhere, from the queue's job to the preview, and the same
//! request spelled otherwise is the same build. Real HTTP, SQLite file, sandboxed build and
//! preview; a scripted model.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use serde_json::{Value, json};
use support::MockLlm;
use support::server::{Server, client, create, get_json, stateless_model, stream};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_spelled_as_people_type_it_is_that_template_end_to_end() {
    let llm = MockLlm::start_with_fallback(vec![], stateless_model(2)).await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1"]).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let prompt = "a page showing a quote from a server";
    let r = create(&c, &s, &alice, json!({"prompt": prompt, "template": "Full-Stack", "lang": "PT-br"})).await;
    assert_eq!(r.status(), 202);
    let id = r.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();

    // The same request in other words, while the first is active, is the first build.
    let twin = create(&c, &s, &alice, json!({"lang": "pt", "prompt": prompt, "template": "fullstack"})).await;
    assert_eq!(twin.status(), 202);
    let twin: Value = twin.json().await.unwrap();
    assert_eq!((twin["id"].as_str(), twin["deduplicated"].as_bool()), (Some(id.as_str()), Some(true)));

    let events = stream(&c, &s, &alice, &id, None).await;
    assert_eq!(events.last().unwrap().data["success"], true, "{:#?}", events.last().unwrap().data);
    let b: Value = get_json(&c, &s, &alice, &format!("/api/builds/{id}")).await;
    assert_eq!((b["template"].as_str(), b["lang"].as_str()), (Some("fullstack"), Some("pt")), "{b}");

    // Its preview runs the app's own server: the page and its API come from it.
    let preview_url = b["preview_url"].as_str().unwrap().to_string();
    let (pc, _) = support::server::preview_client(&s, &preview_url);
    let q: Value = pc.get(format!("{preview_url}api/quote")).send().await.unwrap().json().await.unwrap();
    assert_eq!(q["quote"], "Keep going!");
}
