//! Cost per user and monthly spending caps through a real `wright serve` (SQLite file, sandboxed
//! builds, a scripted model with prices): a student's build, explanation and chat turn all
//! count toward their month; at their cap every model-backed route answers 429 with the spend,
//! the cap and when the month resets; an admin raising the cap lets them through at once, past
//! 80 % of it with a warning in the build's stream; the dashboard, `wright stats` and
//! `/metrics` show the figures.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::server::{Server, client, create, get_json, read_sse, stateless_model, stream};
use support::{MockLlm, Turn};

async fn spent(c: &reqwest::Client, s: &Server, token: &str) -> Value {
    get_json(c, s, token, "/api/spend").await
}

/// The student's month once it has grown past `before` (usage is stored as calls are made).
async fn spent_past(c: &reqwest::Client, s: &Server, token: &str, before: f64) -> Value {
    for _ in 0..100 {
        let now = spent(c, s, token).await;
        if now["cost_usd"].as_f64().unwrap() > before + 1e-9 {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the spend never grew past {before}: {}", spent(c, s, token).await);
}

/// A 429 for the spending cap: its body, after checking the header and figures.
async fn capped(res: reqwest::Response, spent: f64, cap: f64) -> Value {
    assert_eq!(res.status(), 429);
    let retry: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    let body: Value = res.json().await.unwrap();
    let e = &body["error"];
    assert_eq!(e["code"], "spending_cap", "{body}");
    assert!((e["spent_usd"].as_f64().unwrap() - spent).abs() < 1e-6, "{body}");
    assert!((e["cap_usd"].as_f64().unwrap() - cap).abs() < 1e-6, "{body}");
    // Retry-After is the time until the month resets, which the body names.
    let resets = chrono::DateTime::parse_from_rfc3339(e["resets_at"].as_str().unwrap()).unwrap();
    let until = (resets.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_seconds();
    assert!((until - retry as i64).abs() <= 5, "Retry-After {retry} s, reset in {until} s: {body}");
    assert!(resets.format("%d %H:%M:%S").to_string() == "01 00:00:00", "{body}");
    assert!(e["message"].as_str().unwrap().contains("monthly spending cap"), "{body}");
    body
}

async fn put_cap(c: &reqwest::Client, s: &Server, token: &str, path: &str, cap: Value) -> reqwest::Response {
    c.put(s.url(path)).bearer_auth(token).json(&json!({"cap_usd": cap})).send().await.unwrap()
}

async fn explain(c: &reqwest::Client, s: &Server, token: &str, id: &str) -> reqwest::Response {
    c.post(s.url(&format!("/api/builds/{id}/explain"))).bearer_auth(token).json(&json!({})).send().await.unwrap()
}

async fn chat(c: &reqwest::Client, s: &Server, token: &str, id: &str) -> reqwest::Response {
    let body = json!({"content": "what is a variable?"});
    c.post(s.url(&format!("/api/chat/{id}/messages"))).bearer_auth(token).json(&body).send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_students_builds_explanations_and_chats_count_against_their_monthly_cap() {
    let model = Turn::when(
        "You explain a small software project",
        Turn::text("index.html is the skeleton of the page."),
        Turn::when("BUILDME", stateless_model(0), Turn::text("A variable is a labelled box.")),
    );
    let llm = MockLlm::start_with_fallback(vec![], model).await;
    let dir = tempfile::tempdir().unwrap();
    // About $1 a call: the mock reports ~1,000 input and 100 output tokens.
    std::fs::write(dir.path().join("prices.toml"), "[\"mock-model\"]\ninput = 1000.0\noutput = 1000.0\n").unwrap();
    std::fs::write(dir.path().join("wright.toml"), "prices_file = \"prices.toml\"\n\n[chat]\nembedding = \"off\"\n")
        .unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1"]).await;
    let (admin, stu) = (s.add_user("teacher", true).await, s.add_user("stu", false).await);
    let c = client();

    // A default cap for everyone, from the command line (kept in the store).
    assert!(s.cli(&["users", "cap", "--default", "500"]).await.contains("$500.00"));
    let fresh = spent(&c, &s, &stu).await;
    assert_eq!((fresh["cost_usd"].as_f64(), fresh["cap_usd"].as_f64()), (Some(0.0), Some(500.0)), "{fresh}");

    // A build counts...
    let res = create(&c, &s, &stu, json!({"prompt": "BUILDME a page for my dog walking", "template": "static"})).await;
    assert_eq!(res.status(), 202);
    let id = res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let events = stream(&c, &s, &stu, &id, None).await;
    assert_eq!(events.last().unwrap().data["success"], true, "{events:?}");
    let after_build = spent_past(&c, &s, &stu, 0.0).await;
    let build_cost = after_build["cost_usd"].as_f64().unwrap();
    assert!(after_build["calls"].as_u64().unwrap() >= 2 && build_cost > 1.0, "{after_build}");
    // ...an explanation of it counts...
    let res = explain(&c, &s, &stu, &id).await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let after_explain = spent_past(&c, &s, &stu, build_cost).await;
    let explain_cost = after_explain["cost_usd"].as_f64().unwrap();
    // ...and a chat turn counts.
    let res = c.post(s.url("/api/chat")).bearer_auth(&stu).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let conv = res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let res = chat(&c, &s, &stu, &conv).await;
    assert_eq!(res.status(), 200);
    let (turn, _) = tokio::time::timeout(Duration::from_secs(60), read_sse(res)).await.unwrap();
    assert_eq!(turn.last().unwrap().event, "done", "{turn:?}");
    let after_chat = spent_past(&c, &s, &stu, explain_cost).await;
    let total = after_chat["cost_usd"].as_f64().unwrap();
    assert_eq!(after_chat["days"].as_array().unwrap().len(), 1, "{after_chat}");
    assert!(after_chat["projected_usd"].as_f64().unwrap() >= total, "{after_chat}");
    assert!(after_chat["warning"].is_null(), "far below the default cap: {after_chat}");

    // Her class's teacher sees the same month on the class view: builds, explanation and chat.
    let tess = s.cli(&["users", "add", "tess", "--teacher"]).await.trim().to_string();
    s.cli(&["classes", "add", "lab-1", "--teacher", "tess"]).await;
    s.cli(&["classes", "members", "lab-1", "--add", "stu"]).await;
    let class = get_json(&c, &s, &tess, "/api/classes/lab-1").await;
    let row = &class["members"][0];
    assert_eq!(row["name"], "stu", "{class}");
    assert!((row["cost_usd"].as_f64().unwrap() - total).abs() < 1e-9, "the cap's own figure: {row}");
    assert!(total > build_cost, "more than her builds: {row}");
    assert_eq!(
        (row["cap_usd"].as_f64(), row["limits"]["routes"]["explanations"]["used"].as_u64()),
        (Some(500.0), Some(1))
    );
    assert!((class["cost_usd"].as_f64().unwrap() - total).abs() < 1e-9, "{class}");

    // The admin caps her at what she has spent: every model-backed route says 429 with the figures.
    let res = put_cap(&c, &s, &admin, "/api/admin/users/stu/cap", json!(total)).await;
    assert_eq!(res.status(), 200);
    let res = create(&c, &s, &stu, json!({"prompt": "BUILDME another page", "template": "static"})).await;
    capped(res, total, total).await;
    capped(explain(&c, &s, &stu, &id).await, total, total).await;
    capped(chat(&c, &s, &stu, &conv).await, total, total).await;
    let plan = json!({"goal": "check", "tasks": [{"id": "v", "type": "validation", "description": "a check",
                                                   "validation_criteria": ["true"]}]});
    let res = c.post(s.url("/api/tasks")).bearer_auth(&stu).json(&json!({"plan": plan})).send().await.unwrap();
    capped(res, total, total).await;
    let mine = spent(&c, &s, &stu).await;
    assert_eq!(mine["over_cap"], true, "{mine}");
    // Only admins set caps or see everyone's spend.
    assert_eq!(put_cap(&c, &s, &stu, "/api/admin/users/stu/cap", json!(1000)).await.status(), 403);
    assert_eq!(c.get(s.url("/api/admin/spend")).bearer_auth(&stu).send().await.unwrap().status(), 403);
    assert_eq!(put_cap(&c, &s, &admin, "/api/admin/users/stu/cap", json!(-2)).await.status(), 422);
    assert_eq!(put_cap(&c, &s, &admin, "/api/admin/users/nobody/cap", json!(2)).await.status(), 404);

    // Raising the cap lets her through at once; at 85 % of it her build's stream warns her.
    let cap = total / 0.85;
    let res = put_cap(&c, &s, &admin, "/api/admin/users/stu/cap", json!(cap)).await;
    assert!((res.json::<Value>().await.unwrap()["cap_usd"].as_f64().unwrap() - cap).abs() < 1e-9);
    let res = create(&c, &s, &stu, json!({"prompt": "BUILDME another page", "template": "static"})).await;
    assert_eq!(res.status(), 202);
    let second = res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let events = stream(&c, &s, &stu, &second, None).await;
    let warning = events
        .iter()
        .find(|e| e.event == "status" && e.data["level"] == "warning")
        .unwrap_or_else(|| panic!("no warning in {events:?}"));
    assert!(warning.data["message"].as_str().unwrap().contains("85 %"), "{:?}", warning.data);
    assert_eq!(events.last().unwrap().data["success"], true);
    let month = spent_past(&c, &s, &stu, total).await;
    assert!(month["warning"].as_str().is_some_and(|w| w.contains("spending cap")), "{month}");

    // The dashboard: per user, with the student's figures as she sees them, and the seeds' metrics.
    let month = spent(&c, &s, &stu).await;
    let dash = get_json(&c, &s, &admin, "/api/admin/dashboard").await;
    let users = dash["spend"]["users"].as_array().unwrap();
    let row = users.iter().find(|u| u["name"] == "stu").unwrap_or_else(|| panic!("{dash}"));
    assert!((row["cost_usd"].as_f64().unwrap() - month["cost_usd"].as_f64().unwrap()).abs() < 1e-9, "{row}");
    assert_eq!(row["calls"], month["calls"]);
    assert!((row["cap_usd"].as_f64().unwrap() - cap).abs() < 1e-9);
    assert!(!users.iter().any(|u| u["name"] == "teacher"), "the admin made no model call: {users:?}");
    assert_eq!(dash["spend"]["default_cap_usd"], 500.0);
    assert_eq!(dash["seeds"]["time_to_publish"]["count"], 2, "{}", dash["seeds"]);
    assert!(dash["seeds"]["time_to_publish"]["p99_ms"].as_u64().unwrap() > 0);
    assert_eq!(dash["seeds"]["duration_per_day"][0]["published"], 2);

    // `wright stats` (text and JSON) shows the same month per user.
    let text = s.cli(&["stats"]).await;
    assert!(text.contains("stu") && text.contains("Time to publish") && text.contains("projected"), "{text}");
    let stats: Value = serde_json::from_str(&s.cli(&["stats", "--json"]).await).unwrap();
    let row = stats["spend"]["users"].as_array().unwrap().iter().find(|u| u["name"] == "stu").unwrap().clone();
    assert_eq!(row["calls"], month["calls"], "{row}");
    assert_eq!(stats["seeds"]["time_to_publish"]["count"], 2);
    assert!(stats["builds"].as_u64().unwrap() >= 2, "the statistics' own fields stay: {stats}");
    // And the caps from the command line.
    let caps = s.cli(&["users", "cap"]).await;
    assert!(caps.contains("(default)") && caps.contains("stu"), "{caps}");

    // Prometheus: the seeds' metrics.
    let metrics = c.get(s.url("/metrics")).send().await.unwrap().text().await.unwrap();
    for name in ["wright_time_to_publish_seconds{quantile=\"0.99\"}", "wright_publish_rate{notes=\"none\"}"] {
        assert!(metrics.contains(name), "{name} in {metrics}");
    }
    assert!(metrics.lines().any(|l| l.starts_with("wright_build_duration_day_seconds{")), "{metrics}");
    assert!(
        metrics.lines().any(|l| l.starts_with("wright_refused_requests_total{kind=\"spending_cap\"}")),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_apps_visitors_are_paid_for_by_the_embed_keys_owner() {
    let llm = MockLlm::start_with_fallback(vec![], Turn::text("The opening hours are 9 to 5.")).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prices.toml"), "[\"mock-model\"]\ninput = 1000.0\noutput = 1000.0\n").unwrap();
    std::fs::write(dir.path().join("wright.toml"), "prices_file = \"prices.toml\"\n\n[chat]\nembedding = \"off\"\n")
        .unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1"]).await;
    let (admin, owner) = (s.add_user("admin2", true).await, s.add_user("shopkeeper", false).await);
    let c = client();
    let origin = "http://shop.example";
    let res = c
        .post(s.url("/api/embed-keys"))
        .bearer_auth(&owner)
        .json(&json!({"name": "Shop", "origins": [origin], "tools": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let key = res.json::<Value>().await.unwrap()["key"].as_str().unwrap().to_string();
    let res = c.post(s.url("/api/embed/visitors")).header("x-wright-embed-key", &key).header("origin", origin);
    let res = res.send().await.unwrap();
    assert_eq!(res.status(), 201);
    let visitor = res.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_string();
    let res = c.post(s.url("/api/chat")).bearer_auth(&visitor).header("origin", origin).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let conv = res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let ask = || {
        c.post(s.url(&format!("/api/chat/{conv}/messages")))
            .bearer_auth(&visitor)
            .header("origin", origin)
            .json(&json!({"content": "when are you open?"}))
    };

    // The visitor's turn is the key owner's spend.
    let res = ask().send().await.unwrap();
    assert_eq!(res.status(), 200);
    let (turn, _) = tokio::time::timeout(Duration::from_secs(60), read_sse(res)).await.unwrap();
    assert_eq!(turn.last().unwrap().event, "done", "{turn:?}");
    let mine = spent_past(&c, &s, &owner, 0.0).await;
    let cost = mine["cost_usd"].as_f64().unwrap();
    assert_eq!(mine["calls"], 1, "{mine}");
    let dash = get_json(&c, &s, &admin, "/api/admin/spend").await;
    let names: Vec<&str> = dash["users"].as_array().unwrap().iter().map(|u| u["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["shopkeeper"], "{dash}");

    // With the owner at the default cap, the app's visitors are refused too.
    assert_eq!(put_cap(&c, &s, &admin, "/api/admin/cap", json!(cost)).await.status(), 200);
    let body = capped(ask().send().await.unwrap(), cost, cost).await;
    assert!(body["error"]["message"].as_str().unwrap().contains("spending cap"), "{body}");
    assert_eq!(put_cap(&c, &s, &admin, "/api/admin/cap", Value::Null).await.status(), 200);
    let res = ask().send().await.unwrap();
    assert_eq!(res.status(), 200, "no cap any more");
}
