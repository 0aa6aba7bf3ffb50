//! Published apps through a real `wright serve` (real HTTP, SQLite, sandboxed builds; only the
//! model is scripted): a build that publishes gets an address named after its page's title,
//! `complete` and the build record carry it, `/apps/{slug}` leads to the page on its own
//! origin, equal titles get distinct slugs, and only the owner (or an admin) may rename or
//! unpublish an app.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use serde_json::{Value, json};
use support::server::{Server, client, get_json, preview_client, stream};
use support::{MockLlm, Turn};

const PAGE: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n  <title>Dice Roller</title>\n  <meta name=\"description\" content=\"Roll two dice and see the sum.\">\n</head>\n<body>\n  <h1>Roll the dice</h1>\n</body>\n</html>\n";

/// Writes the page on a build's first call; says it is done once it saw a tool result.
fn model() -> Turn {
    Turn::when(
        "\"role\":\"tool\"",
        Turn::text("Done: the page is ready."),
        Turn::calls(&[("createFile", json!({"path": "index.html", "content": PAGE}))]),
    )
}

/// Queue a static build as `token` and follow it to `complete`; that event's data.
async fn build(c: &reqwest::Client, s: &Server, token: &str, prompt: &str) -> (String, Value) {
    let res = c
        .post(s.url("/api/builds"))
        .bearer_auth(token)
        .json(&json!({"prompt": prompt, "template": "static"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    let id = res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let events = stream(c, s, token, &id, None).await;
    let last = events.last().unwrap();
    assert_eq!((last.event.as_str(), &last.data["success"]), ("complete", &json!(true)), "{events:?}");
    (id, last.data.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn published_builds_get_addresses_their_owners_control() {
    let llm = MockLlm::start_with_fallback(vec![], model()).await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "2", "--browser-check", "off"]).await;
    let alice = s.add_user("alice", false).await;
    let bob = s.add_user("bob", false).await;
    let admin = s.add_user("root", true).await;
    let c = client();

    // The address is named after the page's title; `complete` and the build record carry it.
    let (id, complete) = build(&c, &s, &alice, "a dice roller").await;
    let app = &complete["app"];
    assert_eq!(app["slug"], "dice-roller", "{complete}");
    assert_eq!((app["title"].as_str(), app["url_path"].as_str()), (Some("Dice Roller"), Some("/apps/dice-roller")));
    assert_eq!(app["description"], "Roll two dice and see the sum.");
    let record = get_json(&c, &s, &alice, &format!("/api/builds/{id}")).await;
    assert_eq!(&record["app"], app);

    // `/apps/{slug}` on the API's origin sends the browser to the app's own origin, which
    // serves the page with the preview's isolation; no cookie or sign-in is needed.
    let res = c.get(s.url("/apps/dice-roller")).send().await.unwrap();
    assert_eq!(res.status(), 307);
    let to = res.headers()["location"].to_str().unwrap().to_string();
    assert!(to.starts_with("http://app-dice-roller.localhost:"), "{to}");
    let (pc, _) = preview_client(&s, &to);
    let page = pc.get(&to).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(csp.contains("sandbox") && csp.contains("frame-ancestors"), "{csp}");
    assert!(page.headers().get("set-cookie").is_none());
    assert_eq!(page.text().await.unwrap(), PAGE);
    let deep = c.get(s.url("/apps/dice-roller/index.html?x=1")).send().await.unwrap();
    assert_eq!(deep.headers()["location"].to_str().unwrap(), format!("{to}index.html?x=1"));
    assert_eq!(c.get(s.url("/apps/no-such-app")).send().await.unwrap().status(), 404);

    // The same title again: a distinct slug. Related apps come with one app.
    let (_, second) = build(&c, &s, &bob, "a dice roller for board games").await;
    assert_eq!(second["app"]["slug"], "dice-roller-2");
    let shown = get_json(&c, &s, &bob, "/api/apps/dice-roller").await;
    assert_eq!(shown["related"][0]["slug"], "dice-roller-2", "{shown}");
    let mine = get_json(&c, &s, &alice, "/api/apps").await;
    assert_eq!(
        mine.as_array().unwrap().iter().map(|a| a["slug"].as_str().unwrap()).collect::<Vec<_>>(),
        ["dice-roller"]
    );
    assert_eq!(c.get(s.url("/api/apps?all=1")).bearer_auth(&alice).send().await.unwrap().status(), 403);
    assert_eq!(get_json(&c, &s, &admin, "/api/apps?all=1").await.as_array().unwrap().len(), 2);

    // Renaming: not by someone else; not to a taken or malformed slug; yes by the owner.
    let patch = |token: &str, slug: &str, body: Value| {
        c.patch(s.url(&format!("/api/apps/{slug}"))).bearer_auth(token.to_string()).json(&body).send()
    };
    let refused = patch(&bob, "dice-roller", json!({"slug": "mine-now"})).await.unwrap();
    assert_eq!(refused.status(), 403);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "forbidden");
    assert_eq!(patch(&alice, "dice-roller", json!({"slug": "dice-roller-2"})).await.unwrap().status(), 409);
    assert_eq!(patch(&alice, "dice-roller", json!({"slug": "Bad Slug"})).await.unwrap().status(), 422);
    let renamed = patch(&alice, "dice-roller", json!({"slug": "lucky-dice", "title": "Lucky Dice"})).await.unwrap();
    assert_eq!(renamed.status(), 200);
    let renamed: Value = renamed.json().await.unwrap();
    assert_eq!((renamed["slug"].as_str(), renamed["title"].as_str()), (Some("lucky-dice"), Some("Lucky Dice")));
    assert_eq!(c.get(s.url("/apps/dice-roller")).send().await.unwrap().status(), 404, "the old address is free");
    assert_eq!(c.get(s.url("/apps/lucky-dice")).send().await.unwrap().status(), 307);

    // Unpublishing: not by someone else; by the owner, and then the address is gone (410),
    // on the API's origin and on the app's own.
    let delete =
        |token: &str, slug: &str| c.delete(s.url(&format!("/api/apps/{slug}"))).bearer_auth(token.to_string()).send();
    assert_eq!(delete(&bob, "lucky-dice").await.unwrap().status(), 403);
    let down = delete(&alice, "lucky-dice").await.unwrap();
    assert_eq!(down.status(), 200);
    assert_eq!(down.json::<Value>().await.unwrap()["published"], false);
    assert_eq!(c.get(s.url("/apps/lucky-dice")).send().await.unwrap().status(), 410);
    let own = to.replace("dice-roller", "lucky-dice");
    let (pc, _) = preview_client(&s, &own);
    assert_eq!(pc.get(&own).send().await.unwrap().status(), 410);
    // An admin may take down anyone's app.
    assert_eq!(delete(&admin, "dice-roller-2").await.unwrap().status(), 200);

    // The CLI sees the same store.
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args(["apps", "list", "--data-dir"])
        .arg(dir.path())
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("/apps/lucky-dice") && text.contains("(unpublished)"), "{text}");
}
