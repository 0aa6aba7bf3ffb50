//! Task runs over HTTP (`POST /api/tasks`): a task file queued through the builds' queue and
//! limits, followed over SSE, shown with each task's outcome, resumed on the same project,
//! cancelled, and refused with the field at fault before anything is queued. The real binary,
//! SQLite file, sandbox and HTTP; only the model is scripted.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use serde_json::{Value, json};
use support::server::{Server, Sse, client, create_ok, get_json, read_sse};
use support::{MockLlm, Turn};

const ADD_WORKS: &str = "node -e \"process.exit(require('./math.js').add(2, 3) === 5 ? 0 : 1)\"";

fn plan(notes_check: &str) -> Value {
    json!({"goal": "a math module whose add adds", "tasks": [
        {"id": "notes", "type": "validation", "description": "the project has notes",
         "depends_on": ["make-add"], "validation_criteria": [notes_check]},
        {"id": "make-add", "type": "code_generation", "description": "write math.js with an add function",
         "output_artifacts": ["math.js"], "validation_criteria": [ADD_WORKS]}
    ]})
}

async fn post(c: &reqwest::Client, s: &Server, token: &str, body: Value) -> reqwest::Response {
    c.post(s.url("/api/tasks")).bearer_auth(token).json(&body).send().await.unwrap()
}

/// Queue a task run; its id and events address.
async fn post_ok(c: &reqwest::Client, s: &Server, token: &str, body: Value) -> (String, String) {
    let r = post(c, s, token, body).await;
    assert_eq!(r.status(), 202, "{}", r.text().await.unwrap());
    let v: Value = r.json().await.unwrap();
    (v["id"].as_str().unwrap().to_string(), v["events_url"].as_str().unwrap().to_string())
}

async fn follow(c: &reqwest::Client, s: &Server, token: &str, url: &str) -> Vec<Sse> {
    read_sse(c.get(s.url(url)).bearer_auth(token).send().await.unwrap()).await.0
}

fn of<'a>(events: &'a [Sse], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e.event == kind).map(|e| &e.data).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_run_is_queued_followed_shown_and_resumed_on_its_project_over_http() {
    let llm = MockLlm::start(vec![
        Turn::calls(&[("createFile", json!({"path": "math.js", "content": "exports.add = (a, b) => a + b;\n"}))]),
        Turn::text("math.js has add."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1"]).await;
    let alice = s.add_user("alice", false).await;
    let c = client();

    // A run of its own, in a new folder: the code task passes, the notes check fails.
    let (first, url) = post_ok(&c, &s, &alice, json!({"plan": plan("test -f NOTES.md")})).await;
    assert_eq!(url, format!("/api/tasks/{first}/events"));
    let events = follow(&c, &s, &alice, &url).await;
    let ids: Vec<u64> = events.iter().map(|e| e.id).collect();
    assert_eq!(ids, (1..=events.len() as u64).collect::<Vec<_>>(), "numbered 1..n by the store");
    assert_eq!(events[0].event, "queued");
    assert_eq!(events[1].event, "started");
    let started: Vec<&str> = of(&events, "task_started").iter().map(|e| e["task"].as_str().unwrap()).collect();
    assert_eq!(started, ["make-add", "notes"], "dependencies first");
    let done = &events.last().unwrap().data;
    assert_eq!((done["type"].as_str(), done["success"].as_bool()), (Some("complete"), Some(false)), "{done}");
    assert_eq!(done["end_reason"], "tasks_failed");
    // The stream is the stored run, event for event.
    let stored = support::server::stored_events(&s, &first).await;
    assert_eq!(events.iter().map(|e| e.data.clone()).collect::<Vec<_>>(), stored);

    let shown = get_json(&c, &s, &alice, &format!("/api/tasks/{first}")).await;
    assert_eq!((shown["kind"].as_str(), shown["status"].as_str()), (Some("task"), Some("failed")), "{shown}");
    assert_eq!(shown["prompt"], "a math module whose add adds");
    let tasks = shown["tasks"].as_array().unwrap();
    let got: Vec<(&str, &str)> =
        tasks.iter().map(|t| (t["id"].as_str().unwrap(), t["status"].as_str().unwrap())).collect();
    assert_eq!(got, [("make-add", "passed"), ("notes", "failed")]);
    let cmds = &tasks[1]["result"]["validation_details"]["commands_executed"];
    assert_eq!((cmds[0]["command"].as_str(), cmds[0]["exit_code"].as_i64()), (Some("test -f NOTES.md"), Some(1)));
    // Its project is a build's: its files are there.
    let files = get_json(&c, &s, &alice, &format!("/api/builds/{first}/files")).await;
    assert!(files.as_array().unwrap().iter().any(|f| f["path"] == "math.js"), "{files}");

    // Resumed with the notes task changed: the passed task is kept (no model call), the changed
    // one runs again, on the same project.
    let calls = llm.requests().len();
    let (second, url) =
        post_ok(&c, &s, &alice, json!({"plan": plan("test -f math.js"), "resume": first.clone()})).await;
    let events = follow(&c, &s, &alice, &url).await;
    let done = &events.last().unwrap().data;
    assert_eq!(done["success"], true, "{done}");
    let started: Vec<&str> = of(&events, "task_started").iter().map(|e| e["task"].as_str().unwrap()).collect();
    assert_eq!(started, ["notes"], "the task that passed is not run again");
    assert_eq!(llm.requests().len(), calls, "no model call for a kept task");
    let shown = get_json(&c, &s, &alice, &format!("/api/tasks/{second}")).await;
    assert_eq!((shown["status"].as_str(), shown["parent_id"].as_str()), (Some("published"), Some(first.as_str())));

    // A plan given as TOML text, on that project by name.
    let toml = "[[tasks]]\nid = \"syntax\"\ntype = \"validation\"\ndescription = \"math.js parses\"\n\
                validation_criteria = [\"node --check math.js\"]\n";
    let (third, url) =
        post_ok(&c, &s, &alice, json!({"plan": toml, "format": "toml", "project": second.clone()})).await;
    assert_eq!(follow(&c, &s, &alice, &url).await.last().unwrap().data["success"], true);
    let shown = get_json(&c, &s, &alice, &format!("/api/tasks/{third}")).await;
    assert_eq!(shown["tasks"][0]["status"], "passed", "{shown}");

    // Bob sees none of it.
    let bob = s.add_user("bob", false).await;
    for path in [format!("/api/tasks/{first}"), format!("/api/tasks/{first}/events")] {
        assert_eq!(c.get(s.url(&path)).bearer_auth(&bob).send().await.unwrap().status(), 404, "{path}");
    }
    let r = post(&c, &s, &bob, json!({"plan": plan("true"), "project": first.clone()})).await;
    assert_eq!(r.status(), 404, "another user's project is not found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_run_counts_against_the_limits_and_is_cancelled_over_http() {
    let llm = MockLlm::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1", "--max-concurrent-builds", "1"]).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let slow = json!({"tasks": [{"id": "wait", "type": "validation", "description": "a long check",
        "validation_criteria": ["sleep 60"]}]});
    let (id, url) = post_ok(&c, &s, &alice, json!({"plan": slow.clone()})).await;
    let r = post(&c, &s, &alice, json!({"plan": slow})).await;
    assert_eq!(r.status(), 202, "the same request while it is active is the same run");
    assert_eq!(r.json::<Value>().await.unwrap()["id"], id.as_str());

    // One run at a time for alice: another task run, or a build, is refused while it runs.
    let other = json!({"plan": {"id": "x", "type": "no_op", "description": "nothing"}});
    let r = post(&c, &s, &alice, other.clone()).await;
    assert_eq!(r.status(), 429);
    assert!(r.headers().contains_key("retry-after"));
    let r = support::server::create(&c, &s, &alice, json!({"prompt": "a landing page for a bakery"})).await;
    assert_eq!(r.status(), 429, "builds and task runs share the limit");

    // Cancelled once its check runs: the stream ends with `complete` (`cancelled`).
    let mut stream = c.get(s.url(&url)).bearer_auth(&alice).send().await.unwrap();
    let mut seen = String::new();
    while !seen.contains("event: command_started") && !seen.contains("event: task_started") {
        seen.push_str(std::str::from_utf8(&stream.chunk().await.unwrap().unwrap()).unwrap());
    }
    let r = c.post(s.url(&format!("/api/tasks/{id}/cancel"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["status"], "cancelling");
    let events = follow(&c, &s, &alice, &url).await;
    let done = &events.last().unwrap().data;
    assert_eq!((done["success"].as_bool(), done["end_reason"].as_str()), (Some(false), Some("cancelled")), "{done}");
    let shown = get_json(&c, &s, &alice, &format!("/api/tasks/{id}")).await;
    assert_eq!((shown["status"].as_str(), shown["end_reason"].as_str()), (Some("failed"), Some("cancelled")));

    // Room again: the next one runs.
    let (_, url) = post_ok(&c, &s, &alice, other).await;
    assert_eq!(follow(&c, &s, &alice, &url).await.last().unwrap().data["type"], "complete");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_task_runs_are_refused_with_the_field_before_anything_is_queued() {
    let llm = MockLlm::start(vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1"]).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let task = |extra: Value| {
        let mut t =
            json!({"id": "a", "type": "validation", "description": "it parses", "validation_criteria": ["true"]});
        t.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        t
    };
    let cases = [
        (json!({"plan": {"tasks": [task(json!({"type": "painting"}))]}}), "painting"),
        (
            json!({"plan": {"tasks": [task(json!({})), task(json!({"id": "b", "depends_on": ["nope"]}))]}}),
            "tasks[1].depends_on",
        ),
        (json!({"plan": {"tasks": []}}), "at least one task"),
        (json!({"plan": "tasks = 3", "format": "toml"}), "plan:"),
        (json!({"plan": 7}), "JSON object or list"),
        (json!({"plan": {"tasks": [task(json!({}))]}, "rerun": ["a"]}), "rerun needs resume"),
        (json!({"plan": {"tasks": [task(json!({}))]}, "model": "gpt-9"}), "not offered here"),
        (json!({"plan": {"tasks": [task(json!({}))]}, "typo": 1}), "typo"),
        (
            json!({"plan": {"tasks": [task(json!({"description": "use sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"}))]}}),
            "secret",
        ),
    ];
    for (body, says) in cases {
        let r = post(&c, &s, &alice, body.clone()).await;
        assert_eq!(r.status(), 422, "{body}");
        let e: Value = r.json().await.unwrap();
        assert!(e["error"]["message"].as_str().unwrap().contains(says), "{body}: {e}");
    }
    let r =
        post(&c, &s, &alice, json!({"plan": {"tasks": [task(json!({}))]}, "project": "20990101-000000-0000"})).await;
    assert_eq!(r.status(), 404);
    assert_eq!(get_json(&c, &s, &alice, "/api/builds").await.as_array().unwrap().len(), 0, "nothing was queued");

    // A build is not a task run.
    let build = create_ok(&c, &s, &alice, "a landing page for a bakery").await;
    assert_eq!(c.get(s.url(&format!("/api/tasks/{build}"))).bearer_auth(&alice).send().await.unwrap().status(), 404);
    let r = c.post(s.url(&format!("/api/tasks/{build}/cancel"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(r.status(), 404);
}

/// A task run on a project is interrupted by kill -9 after it changed the project: it runs again
/// from the project as it was, in a folder of its own (`DATA/builds/ID.2`), and the project's
/// own folder is put back as it was, as for a follow-up build.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_interrupted_task_run_runs_again_from_the_project_as_it_was() {
    use std::time::Duration;
    const ADD: &str = "exports.add = (a, b) => a + b;\n";
    let llm = MockLlm::start(vec![
        // The project: a task run in a new folder writes math.js.
        Turn::calls(&[("createFile", json!({"path": "math.js", "content": ADD}))]),
        Turn::text("math.js has add."),
        // The second run's first try: it breaks math.js, then is killed mid-command.
        Turn::calls(&[
            ("createFile", json!({"path": "half.js", "content": "// half done\n"})),
            ("updateFile", json!({"path": "math.js", "content": "this is not javascript (\n"})),
            ("runCommand", json!({"command": "sleep", "args": ["60"]})),
        ]),
        // Its re-run.
        Turn::calls(&[("createFile", json!({"path": "extra.js", "content": "exports.two = 2;\n"}))]),
        Turn::text("extra.js is there."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--workers", "1", "--browser-check", "off"];
    let mut s = Server::start(dir.path(), &llm.base_url, &flags).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let make = json!({"tasks": [{"id": "make", "type": "code_generation", "description": "write math.js",
        "output_artifacts": ["math.js"], "validation_criteria": ["node --check math.js"]}]});
    let (project, url) = post_ok(&c, &s, &alice, json!({"plan": make})).await;
    assert_eq!(follow(&c, &s, &alice, &url).await.last().unwrap().data["success"], true);

    let extra = json!({"tasks": [{"id": "extra", "type": "code_generation", "description": "add extra.js",
        "output_artifacts": ["extra.js"], "validation_criteria": ["node --check math.js", "node --check extra.js"]}]});
    let (run, url) = post_ok(&c, &s, &alice, json!({"plan": extra, "project": project.clone()})).await;
    let folder = dir.path().join("builds").join(&project);
    let busy = async {
        while !support::server::stored_events(&s, &run).await.iter().any(|e| e["type"] == "command_started") {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), busy).await.expect("the run's command never started");
    assert!(folder.join("half.js").exists(), "{}", folder.display());
    s.kill9().await;

    let s = Server::start(dir.path(), &llm.base_url, &flags).await;
    let events = tokio::time::timeout(Duration::from_secs(120), follow(&c, &s, &alice, &url))
        .await
        .expect("the task run did not end");
    let data: Vec<Value> = events.iter().map(|e| e.data.clone()).collect();
    assert_eq!(data.iter().filter(|e| e["type"] == "restarted").count(), 1, "{data:#?}");
    assert_eq!(events.last().unwrap().data["success"], true, "{data:#?}");
    assert_eq!(data.iter().filter(|e| e["type"] == "complete").count(), 1);
    let shown = get_json(&c, &s, &alice, &format!("/api/tasks/{run}")).await;
    assert_eq!((shown["attempt"].as_u64(), shown["tasks"][0]["status"].as_str()), (Some(2), Some("passed")), "{shown}");
    // The re-run worked on the project as it was, in its own folder; the project is back.
    let own = dir.path().join("builds").join(format!("{run}.2"));
    assert_eq!(std::fs::read_to_string(own.join("math.js")).unwrap(), ADD);
    assert!(!own.join("half.js").exists() && own.join("extra.js").exists());
    assert_eq!(std::fs::read_to_string(folder.join("math.js")).unwrap(), ADD);
    assert!(!folder.join("half.js").exists() && !folder.join("extra.js").exists());
}
