//! Chat's limits are the store's, so two `wright serve`s on one PostgreSQL database keep one
//! limit per user: one message answered at a time across both, and `[chat] messages_per_hour`
//! counted across both (429 with `Retry-After` in the API's error shape from either).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::server::{Server, client, read_sse};
use support::{MockLlm, Turn};

async fn new_chat(c: &reqwest::Client, s: &Server, token: &str) -> String {
    let res = c.post(s.url("/api/chat")).bearer_auth(token).send().await.unwrap();
    assert_eq!(res.status(), 201);
    res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string()
}

async fn say(c: &reqwest::Client, s: &Server, token: &str, id: &str, text: &str) -> reqwest::Response {
    c.post(s.url(&format!("/api/chat/{id}/messages")))
        .bearer_auth(token)
        .json(&json!({"content": text}))
        .send()
        .await
        .unwrap()
}

/// A refusal: 429, `rate_limited`, a `Retry-After`; its message and wait.
async fn refused(res: reqwest::Response) -> (String, u64) {
    assert_eq!(res.status(), 429);
    let retry: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limited", "{body}");
    (body["error"]["message"].as_str().unwrap().to_string(), retry)
}

/// The turn's stream to its end; the names of its events.
async fn answered(res: reqwest::Response) -> Vec<String> {
    let (events, _) = tokio::time::timeout(Duration::from_secs(60), read_sse(res)).await.expect("the turn never ended");
    events.into_iter().map(|e| e.event).collect()
}

#[tokio::test]
async fn two_servers_keep_one_chat_limit() {
    // Each answer takes a moment, so a message sent meanwhile finds the turn busy.
    let llm = MockLlm::start_with_fallback(vec![], Turn::slow(2_000, Turn::text("Hello!"))).await;
    let pg = wright_pgtemp::PgServer::shared().expect("a throwaway PostgreSQL (Debian's `postgresql` package)");
    let db = pg.database().expect("a fresh database");
    let (one_dir, two_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for dir in [&one_dir, &two_dir] {
        std::fs::write(dir.path().join("wright.toml"), "[chat]\nembedding = \"off\"\nmessages_per_hour = 3\n").unwrap();
    }
    let one = Server::start_db(one_dir.path(), &llm.base_url, &db, &[]).await;
    let two = Server::start_db(two_dir.path(), &llm.base_url, &db, &[]).await;
    let (alice, bob) = (one.add_user("alice", false).await, one.add_user("bob", false).await);
    let c = client();
    let id = new_chat(&c, &one, &alice).await;

    // While the first server answers alice, the second will not start another turn of hers.
    let first = say(&c, &one, &alice, &id, "hello there").await;
    assert_eq!(first.status(), 200);
    let (why, retry) = refused(say(&c, &two, &alice, &id, "are you there?").await).await;
    assert!(why.contains("still being answered"), "{why}");
    assert!(retry <= 30, "{retry}");
    // Bob is not held up by alice's turn.
    let bobs = new_chat(&c, &two, &bob).await;
    let other = say(&c, &two, &bob, &bobs, "hi").await;
    assert_eq!(other.status(), 200);
    assert_eq!(answered(first).await.last().map(String::as_str), Some("done"));
    assert_eq!(answered(other).await.last().map(String::as_str), Some("done"));

    // Her messages an hour are counted across both servers: 3, then a refusal from either.
    for s in [&two, &one] {
        let res = say(&c, s, &alice, &id, "and another thing").await;
        assert_eq!(res.status(), 200);
        assert_eq!(answered(res).await.last().map(String::as_str), Some("done"));
    }
    for s in [&two, &one] {
        let (why, retry) = refused(say(&c, s, &alice, &id, "one more").await).await;
        assert!(why.contains("at most 3 chat messages an hour"), "{why}");
        assert!(retry > 3000 && retry <= 3600, "{retry}");
    }
    // The refused messages were not stored: the history has her 3 and their 3 answers.
    let history: Value = c
        .get(two.url(&format!("/api/chat/{id}/messages")))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(history.as_array().unwrap().len(), 6, "{history}");
    // The refusals are counted where operators look.
    let metrics = c.get(one.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.lines().any(|l| l.contains("chat_rate") && !l.starts_with('#')), "{metrics}");
}
