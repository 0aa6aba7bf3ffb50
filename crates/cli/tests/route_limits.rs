//! Each model-backed route's hourly limit (`[limits]`) on a real `wright serve` with a scripted
//! model: explanations (20 an hour by default: the 21st is refused), builds, task runs, chat
//! messages and assistant turns each refused at N+1 with 429, `Retry-After` and the limit in
//! `error.limit`; a refusal takes nothing; `GET /api/limits` shows each limit before it bites;
//! today's settings (`[serve] builds_per_hour`, `[chat] messages_per_hour`) still set them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::server::{Server, client, create_ok, get_json, read_sse, stream};
use support::{MockLlm, Turn};

const EXPLAINED: &str = "The index.html file is the page's skeleton.";

/// A response read: its status, `Retry-After` and JSON body.
struct Answer {
    status: u16,
    retry: Option<u64>,
    body: Value,
}

async fn read(res: reqwest::Response) -> Answer {
    let status = res.status().as_u16();
    let retry = res.headers().get("retry-after").map(|v| v.to_str().unwrap().parse().unwrap());
    Answer { status, retry, body: res.json().await.unwrap_or(Value::Null) }
}

/// A refusal: 429 `rate_limited` with `Retry-After` equal to `error.limit.retry_after_secs`;
/// the limit it names.
async fn refused(res: reqwest::Response, route: &str) -> Value {
    refused_as(read(res).await, route)
}

fn refused_as(a: Answer, route: &str) -> Value {
    let body = a.body;
    assert_eq!(a.status, 429, "{body}");
    assert_eq!(body["error"]["code"], "rate_limited", "{body}");
    let limit = body["error"]["limit"].clone();
    assert_eq!(limit["route"], route, "{body}");
    assert_eq!(limit["retry_after_secs"], a.retry.unwrap(), "{body}");
    assert!(limit["resets_at"].as_str().unwrap().ends_with('Z'), "{body}");
    limit
}

/// A chat message's answer once the previous turn has given its slot back (a moment after its
/// `done`: until then a message is refused as busy, which is the one-at-a-time limit, not the
/// hourly one this test is about).
async fn settled(c: &reqwest::Client, s: &Server, token: &str, id: &str, body: Value) -> Answer {
    for _ in 0..100 {
        let a = read(say(c, s, token, id, body.clone()).await).await;
        let busy = a.body["error"]["message"].as_str().is_some_and(|m| m.contains("still being answered"));
        if !busy {
            return a;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the previous turn never gave its slot back");
}

/// Within the hour and most of it left: the oldest use was moments ago.
fn about_an_hour(secs: &Value) -> bool {
    secs.as_u64().is_some_and(|s| (3500..=3600).contains(&s))
}

async fn limits(c: &reqwest::Client, s: &Server, token: &str) -> Value {
    let v = get_json(c, s, token, "/api/limits").await;
    assert_eq!(v["window_secs"], 3600, "{v}");
    v["routes"].clone()
}

async fn explain(c: &reqwest::Client, s: &Server, token: &str, id: &str) -> reqwest::Response {
    c.post(s.url(&format!("/api/builds/{id}/explain"))).bearer_auth(token).json(&json!({})).send().await.unwrap()
}

#[tokio::test]
async fn the_21st_explanation_in_an_hour_is_refused_and_takes_nothing() {
    let mock = MockLlm::start_with_fallback(
        vec![
            Turn::calls(&[(
                "createFile",
                json!({"path": "index.html", "content": "<!DOCTYPE html><html><body><h1>Hi</h1></body></html>"}),
            )]),
            Turn::text("A greeting page."),
        ],
        Turn::text(EXPLAINED),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &mock.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    let (ann, bob) = (s.add_user("ann", false).await, s.add_user("bob", false).await);
    let c = client();
    let id = create_ok(&c, &s, &ann, "a page that says hi").await;
    tokio::time::timeout(Duration::from_secs(120), stream(&c, &s, &ann, &id, None)).await.expect("the build ended");

    let before = limits(&c, &s, &ann).await;
    assert_eq!(before["explanations"], json!({"limit": 20, "used": 0, "remaining": 20}), "{before}");
    for n in 1..=20u64 {
        let res = explain(&c, &s, &ann, &id).await;
        assert_eq!(res.status(), 200, "explanation {n}");
        assert_eq!(res.json::<Value>().await.unwrap()["explanation"], EXPLAINED);
        if n == 2 {
            // Shown before it bites: 18 of 20 left, the first back in about an hour.
            let e = &limits(&c, &s, &ann).await["explanations"];
            assert_eq!((&e["limit"], &e["used"], &e["remaining"]), (&json!(20), &json!(2), &json!(18)), "{e}");
            assert!(about_an_hour(&e["frees_in_secs"]), "{e}");
        }
    }
    let calls = mock.requests().len();
    let limit = refused(explain(&c, &s, &ann, &id).await, "explanations").await;
    assert_eq!((&limit["limit"], &limit["used"], &limit["window_secs"]), (&json!(20), &json!(20), &json!(3600)));
    assert!(about_an_hour(&limit["retry_after_secs"]), "{limit}");
    assert_eq!(mock.requests().len(), calls, "a refused explanation calls no model");
    // The refusal took nothing: still 20 used, and the 22nd is refused the same way.
    let after = &limits(&c, &s, &ann).await["explanations"];
    assert_eq!((&after["used"], &after["remaining"]), (&json!(20), &json!(0)), "{after}");
    assert!(about_an_hour(&after["frees_in_secs"]), "{after}");
    assert_eq!(refused(explain(&c, &s, &ann, &id).await, "explanations").await["used"], 20);
    // Each user has their own hour (bob cannot see ann's build, so he is refused as a stranger).
    assert_eq!(limits(&c, &s, &bob).await["explanations"]["used"], 0);
    assert_eq!(explain(&c, &s, &bob, &id).await.status(), 404);
}

async fn new_chat(c: &reqwest::Client, s: &Server, token: &str) -> String {
    let res = c.post(s.url("/api/chat")).bearer_auth(token).send().await.unwrap();
    assert_eq!(res.status(), 201);
    res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string()
}

async fn say(c: &reqwest::Client, s: &Server, token: &str, id: &str, body: Value) -> reqwest::Response {
    c.post(s.url(&format!("/api/chat/{id}/messages"))).bearer_auth(token).json(&body).send().await.unwrap()
}

/// A chat message accepted once the previous turn gave its slot back (see [`settled`]).
async fn say_when_free(c: &reqwest::Client, s: &Server, token: &str, id: &str, body: Value) -> reqwest::Response {
    for _ in 0..100 {
        let res = say(c, s, token, id, body.clone()).await;
        if res.status() != 429 {
            return res;
        }
        let refusal: Value = res.json().await.unwrap();
        assert!(refusal["error"]["message"].as_str().unwrap().contains("still being answered"), "{refusal}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the previous turn never gave its slot back");
}

/// A turn accepted and answered to its end.
async fn answered(res: reqwest::Response) {
    assert_eq!(res.status(), 200);
    let (events, _) = tokio::time::timeout(Duration::from_secs(60), read_sse(res)).await.expect("the turn ended");
    assert_eq!(events.last().map(|e| e.event.as_str()), Some("done"), "{events:?}");
}

fn task_plan(goal: &str) -> Value {
    json!({"plan": {"goal": goal, "tasks": [
        {"id": "check", "type": "validation", "description": "the folder is there", "validation_criteria": ["true"]}
    ]}})
}

#[tokio::test]
async fn builds_tasks_chat_and_assistant_each_refuse_at_their_limit_plus_one() {
    let mock = MockLlm::start_with_fallback(vec![], Turn::text("Hello!")).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("wright.toml"),
        "[chat]\nembedding = \"off\"\n[limits]\nbuilds_per_hour = 2\ntasks_per_hour = 1\n\
         chat_messages_per_hour = 2\nassistant_turns_per_hour = 1\n",
    )
    .unwrap();
    let flags = ["--workers", "1", "--browser-check", "off", "--max-concurrent-builds", "50"];
    let s = Server::start(dir.path(), &mock.base_url, &flags).await;
    let ann = s.add_user("ann", false).await;
    let c = client();
    let shown = limits(&c, &s, &ann).await;
    for (route, limit) in
        [("builds", 2), ("tasks", 1), ("chat_messages", 2), ("assistant_turns", 1), ("explanations", 20)]
    {
        assert_eq!(shown[route], json!({"limit": limit, "used": 0, "remaining": limit}), "{route}: {shown}");
    }

    // Builds: two, then the third is refused and nothing of it is queued.
    create_ok(&c, &s, &ann, "a countdown timer number one").await;
    create_ok(&c, &s, &ann, "a countdown timer number two").await;
    let third =
        c.post(s.url("/api/builds")).bearer_auth(&ann).json(&json!({"prompt": "a countdown timer number three"}));
    let limit = refused(third.send().await.unwrap(), "builds").await;
    assert_eq!((&limit["limit"], &limit["used"]), (&json!(2), &json!(2)), "{limit}");
    assert!(about_an_hour(&limit["retry_after_secs"]), "{limit}");
    assert_eq!(
        get_json(&c, &s, &ann, "/api/builds").await.as_array().unwrap().len(),
        2,
        "the refused build is not there"
    );

    // Task runs have their own hour: one goes though the builds' is used up, the second not.
    let first = c.post(s.url("/api/tasks")).bearer_auth(&ann).json(&task_plan("check the folder once"));
    assert_eq!(first.send().await.unwrap().status(), 202);
    let second = c.post(s.url("/api/tasks")).bearer_auth(&ann).json(&task_plan("check the folder twice"));
    let limit = refused(second.send().await.unwrap(), "tasks").await;
    assert_eq!((&limit["limit"], &limit["used"]), (&json!(1), &json!(1)), "{limit}");

    // Chat: a message, then an assistant turn (which is a chat message's model call too), then
    // a second assistant turn over its own limit, and a chat message over the chat's.
    let chat = new_chat(&c, &s, &ann).await;
    answered(say(&c, &s, &ann, &chat, json!({"content": "hello there"})).await).await;
    let tools = json!(["describe_app_ui"]);
    answered(say_when_free(&c, &s, &ann, &chat, json!({"content": "what is on my page", "client_tools": tools})).await)
        .await;
    let again = settled(&c, &s, &ann, &chat, json!({"content": "and now?", "client_tools": tools})).await;
    let limit = refused_as(again, "assistant_turns");
    assert_eq!((&limit["limit"], &limit["used"]), (&json!(1), &json!(1)), "{limit}");
    let limit = refused_as(settled(&c, &s, &ann, &chat, json!({"content": "one more"})).await, "chat_messages");
    assert_eq!((&limit["limit"], &limit["used"]), (&json!(2), &json!(2)), "{limit}");

    // The limits route counts what was accepted and nothing of what was refused.
    let shown = limits(&c, &s, &ann).await;
    for (route, used, limit) in [("builds", 2, 2), ("tasks", 1, 1), ("chat_messages", 2, 2), ("assistant_turns", 1, 1)]
    {
        let r = &shown[route];
        assert_eq!(
            (&r["used"], &r["limit"], &r["remaining"]),
            (&json!(used), &json!(limit), &json!(0)),
            "{route}: {r}"
        );
        assert!(about_an_hour(&r["frees_in_secs"]), "{route}: {r}");
    }
    assert_eq!(c.get(s.url("/api/limits")).send().await.unwrap().status(), 401, "only for a signed-in caller");
}

#[tokio::test]
async fn todays_settings_still_set_the_limits() {
    let mock = MockLlm::start_with_fallback(vec![], Turn::text("Hello!")).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("wright.toml"),
        "[serve]\nbuilds_per_hour = 4\n[chat]\nembedding = \"off\"\nmessages_per_hour = 7\n",
    )
    .unwrap();
    let s = Server::start(dir.path(), &mock.base_url, &["--workers", "1"]).await;
    let ann = s.add_user("ann", false).await;
    let shown = limits(&client(), &s, &ann).await;
    let got: Vec<(&str, &Value)> =
        ["builds", "tasks", "chat_messages", "assistant_turns", "explanations"].map(|r| (r, &shown[r]["limit"])).into();
    assert_eq!(
        got,
        [
            ("builds", &json!(4)),
            ("tasks", &json!(4)),
            ("chat_messages", &json!(7)),
            ("assistant_turns", &json!(7)),
            ("explanations", &json!(20))
        ]
    );
}
