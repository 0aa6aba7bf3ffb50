//! Links that generated code plants in its workspace are never followed by wright's own process:
//! the real `wright serve` with real sandboxed builds, where a scripted model's command makes
//! links to a folder outside the project (and, through a follow-up build, beyond), then every
//! host-side step (the model's file tools, file views, the archive, previews, the follow-up
//! snapshot and retention) is checked to have read, written and served nothing through them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use serde_json::{Value, json};
use std::io::Read;
use std::path::Path;
use support::MockLlm;
use support::Turn;
use support::server::{PAGE, Server, client, create, get_json, stream};

const SECRET: &str = "the-secret-outside-the-project";

/// The model's first turn: the page, then a command that plants links to `outside`: a folder
/// link, a file link under a page's name, and a link deeper in a real folder.
fn planting_turn(outside: &Path) -> Turn {
    let o = outside.display();
    let script = format!(
        "ln -s {o} out && ln -s {o}/secret.txt secret.html && mkdir -p docs && ln -s {o} docs/deeper && ln -s {o}/secret.txt docs/index.html"
    );
    Turn::calls(&[
        ("createFile", json!({"path": "index.html", "content": PAGE})),
        ("runCommand", json!({"command": "sh", "args": ["-c", script]})),
    ])
}

/// Everything in `outside` is as the test left it: the secret, nothing else.
fn untouched(outside: &Path) {
    let names: Vec<String> =
        std::fs::read_dir(outside).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names, vec!["secret.txt".to_string()], "nothing was written outside the project");
    assert_eq!(std::fs::read_to_string(outside.join("secret.txt")).unwrap(), SECRET);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn links_planted_by_generated_code_are_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("home-of-the-user");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();

    let llm = MockLlm::start_with_fallback(
        vec![
            planting_turn(&outside),
            // The model then writes through each link: every write is refused.
            Turn::calls(&[
                ("createFile", json!({"path": "out/planted.html", "content": "<p>planted</p>"})),
                ("updateFile", json!({"path": "secret.html", "content": "<p>overwritten</p>"})),
                ("createFile", json!({"path": "docs/deeper/x.html", "content": "<p>x</p>"})),
                ("readFile", json!({"path": "out/secret.txt"})),
            ]),
            Turn::text("Done: the page is ready."),
        ],
        Turn::text("Done."),
    )
    .await;
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let s = Server::start(&data, &llm.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    let alice = s.add_user("alice", false).await;
    let c = client();

    let res = create(&c, &s, &alice, json!({"prompt": "a landing page for a dog walker", "template": "static"})).await;
    assert_eq!(res.status(), 202);
    let id = res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let events = stream(&c, &s, &alice, &id, None).await;
    assert_eq!(events.last().unwrap().event, "complete");

    // Each refused tool call is a `link_refused` event naming the path, and the model read
    // nothing of the secret.
    let refused: Vec<(String, String)> = events
        .iter()
        .filter(|e| e.event == "link_refused")
        .map(|e| (e.data["path"].as_str().unwrap().to_string(), e.data["step"].as_str().unwrap().to_string()))
        .collect();
    for path in ["out/planted.html", "secret.html", "docs/deeper/x.html", "out/secret.txt"] {
        assert!(refused.contains(&(path.to_string(), "tool".to_string())), "{path}: {refused:?}");
    }
    let seen: String = llm.requests().iter().map(|r| r.to_string()).collect();
    assert!(!seen.contains(SECRET), "the model was shown the secret");
    untouched(&outside);

    // File views list no link and read nothing through one.
    let files: Value = get_json(&c, &s, &alice, &format!("/api/builds/{id}/files")).await;
    let paths: Vec<&str> = files.as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, vec!["index.html"], "links are not files of the project");
    for path in ["secret.html", "out/secret.txt", "docs/deeper/secret.txt", "docs/index.html"] {
        let r = c.get(s.url(&format!("/api/builds/{id}/files/{path}"))).bearer_auth(&alice).send().await.unwrap();
        assert!(r.status() == 400 || r.status() == 404, "{path}: {}", r.status());
        let body = r.text().await.unwrap();
        assert!(!body.contains(SECRET), "{path}: {body}");
    }
    // The archive holds the page only.
    let zip = c.get(s.url(&format!("/api/builds/{id}/archive"))).bearer_auth(&alice).send().await.unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(zip.bytes().await.unwrap().to_vec())).unwrap();
    assert_eq!((zip.len(), zip.by_index(0).unwrap().name().unwrap().to_string()), (1, "index.html".to_string()));
    let mut page = String::new();
    zip.by_name("index.html").unwrap().read_to_string(&mut page).unwrap();
    assert_eq!(page, PAGE);

    // The preview serves the page, and nothing through a link (a folder's index.html included).
    let b: Value = get_json(&c, &s, &alice, &format!("/api/builds/{id}")).await;
    let preview_url = b["preview_url"].as_str().unwrap().to_string();
    let (pc, _) = support::server::preview_client(&s, &preview_url);
    assert_eq!(pc.get(&preview_url).send().await.unwrap().text().await.unwrap(), PAGE);
    for path in ["secret.html", "out/secret.txt", "docs/", "docs/deeper/secret.txt"] {
        let r = pc.get(format!("{preview_url}{path}")).send().await.unwrap();
        assert!(r.status() == 400 || r.status() == 404, "{path}: {}", r.status());
        assert!(!r.text().await.unwrap().contains(SECRET), "{path}");
    }
    untouched(&outside);
}
