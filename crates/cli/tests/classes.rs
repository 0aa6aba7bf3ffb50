//! Teachers, classes and shared builds on a real `wright serve` (docs/classes.md): a teacher
//! reads their class's builds and not another class's, and changes none; a build shared by its
//! owner is readable by a classmate and by nobody else, and not writable; a classmate's copy
//! starts from the shared build's files in a folder of its own and is theirs; removing a member
//! ends their view at once.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::server::{PAGE, Server, client, create, create_ok, stream};
use support::{MockLlm, Turn};

/// `GET path` as `token`: status and body.
async fn get(c: &reqwest::Client, s: &Server, token: &str, path: &str) -> (u16, Value) {
    let res = c.get(s.url(path)).bearer_auth(token).send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

async fn post(c: &reqwest::Client, s: &Server, token: &str, path: &str, body: Value) -> (u16, Value) {
    let res = c.post(s.url(path)).bearer_auth(token).json(&body).send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// Wait for build `id` to end; whether it published.
async fn finished(c: &reqwest::Client, s: &Server, token: &str, id: &str) -> bool {
    let events = tokio::time::timeout(Duration::from_secs(120), stream(c, s, token, id, None)).await.expect("no end");
    events.last().unwrap().data["success"] == true
}

/// What `token` gets for each of a build's read routes.
async fn reads(c: &reqwest::Client, s: &Server, token: &str, id: &str) -> Vec<u16> {
    let mut out = vec![];
    for path in ["", "/files", "/files/index.html", "/archive", "/events"] {
        let res = c.get(s.url(&format!("/api/builds/{id}{path}"))).bearer_auth(token).send().await.unwrap();
        out.push(res.status().as_u16());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn teachers_see_their_class_and_classmates_follow_and_copy_shared_builds() {
    let notes = ("createFile", json!({"path": "notes.txt", "content": "walks at 9"}));
    let page = ("createFile", json!({"path": "index.html", "content": PAGE}));
    let llm = MockLlm::start(vec![
        // ana's build: a page and her notes.
        Turn::calls(&[page.clone(), notes]),
        Turn::text("The page is ready."),
        // cy's build, in the other class.
        Turn::calls(&[page]),
        Turn::text("The page is ready."),
        // ben's copy of ana's build: a footer, beside what her build left.
        Turn::calls(&[("createFile", json!({"path": "footer.html", "content": PAGE}))]),
        Turn::text("The footer is ready."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    let admin = s.add_user("root", true).await;
    let (ana, ben, cy, dee) = (
        s.add_user("ana", false).await,
        s.add_user("ben", false).await,
        s.add_user("cy", false).await,
        s.add_user("dee", false).await,
    );
    let tess = s.cli(&["users", "add", "tess", "--teacher"]).await.trim().to_string();
    let tom = s.cli(&["users", "add", "tom", "--teacher"]).await.trim().to_string();
    assert!(s.cli(&["users", "list"]).await.contains("teacher"));
    let c = client();

    // lab-1 from the command line; lab-2 over HTTP, which only an admin may do.
    s.cli(&["classes", "add", "lab-1", "--teacher", "tess"]).await;
    let members = s.cli(&["classes", "members", "lab-1", "--add", "ana", "ben"]).await;
    assert!(members.contains("ana") && members.contains("ben") && members.contains("tess"), "{members}");
    let (status, _) = post(&c, &s, &tess, "/api/classes", json!({"name": "lab-x"})).await;
    assert_eq!(status, 403, "a teacher does not make classes");
    let (status, body) = post(&c, &s, &admin, "/api/classes", json!({"name": "lab-2", "teachers": ["tom"]})).await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = post(&c, &s, &admin, "/api/classes/lab-2/members", json!({"add": ["cy"]})).await;
    assert_eq!((status, body["members"].clone()), (200, json!(["cy"])), "{body}");
    assert!(s.cli(&["classes", "list"]).await.contains("lab-2"));

    let ana_build = create_ok(&c, &s, &ana, "a landing page for a dog walker").await;
    assert!(finished(&c, &s, &ana, &ana_build).await);
    let cy_build = create_ok(&c, &s, &cy, "a landing page for a cat sitter").await;
    assert!(finished(&c, &s, &cy, &cy_build).await);

    // A teacher reads their class's builds, not another class's, and changes none.
    assert_eq!(reads(&c, &s, &tess, &ana_build).await, [200; 5]);
    assert_eq!(reads(&c, &s, &tess, &cy_build).await, [404; 5]);
    assert_eq!(reads(&c, &s, &tom, &cy_build).await, [200; 5]);
    assert_eq!(reads(&c, &s, &tom, &ana_build).await, [404; 5]);
    let (status, body) = post(&c, &s, &tess, &format!("/api/builds/{ana_build}/cancel"), json!({})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (403, Some("read_only")), "{body}");
    // The class's view: members, their recent builds with outcome, what each spent.
    let (status, class) = get(&c, &s, &tess, "/api/classes/lab-1").await;
    assert_eq!(status, 200, "{class}");
    let names: Vec<&str> = class["members"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ana", "ben"]);
    assert_eq!(class["members"][0]["runs"], 1, "{class}");
    assert_eq!(class["members"][0]["recent"][0]["id"], ana_build.as_str());
    assert_eq!(class["members"][0]["recent"][0]["status"], "published");
    assert!(class["members"][0]["input_tokens"].as_u64().unwrap() > 0, "{class}");
    assert_eq!(get(&c, &s, &tess, "/api/classes/lab-2").await.0, 404);
    assert_eq!(get(&c, &s, &ana, "/api/classes/lab-1").await.0, 404, "a member does not see the class's figures");
    let (_, mine) = get(&c, &s, &ana, "/api/classes").await;
    assert_eq!(mine, json!([{"name": "lab-1", "teachers": ["tess"]}]), "a member sees the class, not its members");

    // Not shared yet: a classmate sees nothing.
    assert_eq!(reads(&c, &s, &ben, &ana_build).await, [404; 5]);
    // Only its owner shares it.
    let share = format!("/api/builds/{ana_build}/share");
    assert_eq!(post(&c, &s, &ben, &share, json!({"shared": true})).await.0, 404);
    assert_eq!(post(&c, &s, &tess, &share, json!({"shared": true})).await.0, 403);
    let (status, body) = post(&c, &s, &ana, &share, json!({"shared": true})).await;
    assert_eq!((status, body["shared"].clone()), (200, json!(true)), "{body}");
    // A classmate follows it, read-only; nobody else sees it.
    assert_eq!(reads(&c, &s, &ben, &ana_build).await, [200; 5]);
    let (_, view) = get(&c, &s, &ben, &format!("/api/builds/{ana_build}")).await;
    assert_eq!(view["shared_by"], "ana", "{view}");
    let (_, shared) = get(&c, &s, &ben, "/api/builds?shared=true").await;
    assert_eq!(shared.as_array().unwrap().len(), 1, "{shared}");
    assert_eq!((shared[0]["id"].as_str(), shared[0]["shared_by"].as_str()), (Some(ana_build.as_str()), Some("ana")));
    assert_eq!(reads(&c, &s, &cy, &ana_build).await, [404; 5], "another class");
    assert_eq!(reads(&c, &s, &dee, &ana_build).await, [404; 5], "in no class");
    assert_eq!(get(&c, &s, &cy, "/api/builds?shared=true").await.1, json!([]));
    let (status, body) = post(&c, &s, &ben, &format!("/api/builds/{ana_build}/cancel"), json!({})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (403, Some("read_only")), "{body}");
    assert_eq!(post(&c, &s, &ben, &share, json!({"shared": false})).await.0, 403);

    // A rating is its owner's alone (docs/feedback.md): someone who cannot see the build gets
    // what they get for any unknown build; one who may read it, or an admin, is refused.
    let rate = format!("/api/builds/{ana_build}/feedback");
    let down = json!({"value": "down", "comment": "the walker's phone number is missing"});
    let (status, body) = post(&c, &s, &cy, &rate, down.clone()).await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("not_found")), "{body}");
    assert_eq!(body["error"]["message"], format!("build {ana_build} not found"), "as for an id never given out");
    assert_eq!(post(&c, &s, &ben, &rate, down.clone()).await.0, 403, "a classmate reads it, does not rate it");
    let (status, body) = post(&c, &s, &admin, &rate, down.clone()).await;
    assert_eq!(status, 403, "an admin does not rate for someone else: {body}");
    for bad in [json!({"value": "sideways"}), json!({}), json!({"value": "up", "comment": "x".repeat(2001)})] {
        let (status, body) = post(&c, &s, &ana, &rate, bad.clone()).await;
        assert_eq!(status, 422, "{bad}: {body}");
        assert!(body["error"]["code"].is_string() && body["error"]["message"].is_string(), "{body}");
    }
    let (status, body) = post(&c, &s, &ana, &rate, down).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!((body["feedback"]["value"].as_str(), body["moved"].clone()), (Some("down"), json!([])), "{body}");
    let (_, view) = get(&c, &s, &ana, &format!("/api/builds/{ana_build}")).await;
    assert_eq!(view["feedback"]["value"], "down", "{view}");
    assert_eq!(view["feedback"]["comment"], "the walker's phone number is missing");
    let (_, dash) = get(&c, &s, &admin, "/api/admin/dashboard").await;
    assert_eq!(dash["ratings"]["builds"], json!({"up": 0, "down": 1}), "{}", dash["ratings"]);
    let explain = format!("/api/builds/{ana_build}/explain");
    assert_eq!(post(&c, &s, &ben, &explain, json!({})).await.0, 403);
    let task = json!({"plan": {"tasks": [{"id": "footer", "type": "code_generation", "description": "add a footer",
        "output_artifacts": ["footer.html"], "validation_criteria": ["test -f footer.html"]}]}, "project": ana_build});
    assert_eq!(post(&c, &s, &ben, "/api/tasks", task).await.0, 403, "a task run would work in her folder");
    let copy_body = json!({"prompt": "add a footer", "template": "static", "continue": ana_build});
    assert_eq!(create(&c, &s, &cy, copy_body.clone()).await.status(), 404);

    // A classmate's copy: a build of their own, from the shared build's files, in its own folder.
    let res = create(&c, &s, &ben, copy_body).await;
    assert_eq!(res.status(), 202);
    let copy = res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    assert!(finished(&c, &s, &ben, &copy).await);
    let (_, me) = get(&c, &s, &ben, "/api/me").await;
    let (_, view) = get(&c, &s, &ben, &format!("/api/builds/{copy}")).await;
    assert_eq!((&view["owner"], &view["parent_id"]), (&me["id"], &json!(ana_build)), "{view}");
    let (_, files) = get(&c, &s, &ben, &format!("/api/builds/{copy}/files")).await;
    let files = files.to_string();
    assert!(files.contains("notes.txt") && files.contains("index.html") && files.contains("footer.html"), "{files}");
    let (_, hers) = get(&c, &s, &ana, &format!("/api/builds/{ana_build}/files")).await;
    assert!(!hers.to_string().contains("footer.html"), "her folder is as she left it: {hers}");
    assert!(dir.path().join("builds").join(&copy).join("notes.txt").exists());
    assert_eq!(reads(&c, &s, &ana, &copy).await, [404; 5], "his copy is his (not shared)");
    assert_eq!(reads(&c, &s, &tess, &copy).await, [200; 5], "his teacher sees it");

    // Removing a member ends their view, and their teacher's of them, at once.
    let members = s.cli(&["classes", "members", "lab-1", "--remove", "ben"]).await;
    assert!(!members.contains("ben"), "{members}");
    assert_eq!(reads(&c, &s, &ben, &ana_build).await, [404; 5]);
    assert_eq!(reads(&c, &s, &tess, &copy).await, [404; 5]);
    assert_eq!(get(&c, &s, &ben, "/api/builds?shared=true").await.1, json!([]));
    // Admins still see everything.
    assert_eq!(reads(&c, &s, &admin, &copy).await, [200; 5]);
    let out = s.cli(&["builds", "share", &ana_build, "--off"]).await;
    assert!(out.contains("no longer shared"), "{out}");
    let (_, view) = get(&c, &s, &ana, &format!("/api/builds/{ana_build}")).await;
    assert!(view.get("shared_by").is_none(), "{view}");
}
