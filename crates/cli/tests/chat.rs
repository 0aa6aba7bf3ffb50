//! The chat agent through its interfaces: `POST /api/chat/{id}/messages` streaming the
//! contract's events from a real `wright serve`, resuming a turn, history, quiz scoring,
//! feedback, flashcard reviews, another user's conversation (404), `/metrics`; and
//! `wright chat` in a terminal. The model is scripted over the OpenAI wire, answering by the
//! tool each request offers (tools call it concurrently).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use support::server::{Server, client, get_json, read_sse};
use support::{MockLlm, Turn};

const MERMAID: &str = "flowchart TD\n  Sun[Light] --> Leaf\n  Water --> Leaf\n  Leaf --> Glucose";

fn model() -> Turn {
    let diagram = Turn::calls(&[("drawDiagram", json!({"title": "Photosynthesis", "mermaid": MERMAID}))]);
    let quiz = Turn::calls(&[(
        "makeQuiz",
        json!({"title": "Photosynthesis", "questions": [
            {"question": "What gas do plants take in?", "options": ["Oxygen", "Carbon dioxide", "Helium"],
             "answer": 1, "explanation": "They take in CO2."},
            {"question": "Where does it happen?", "options": ["Chloroplasts", "Nucleus"],
             "answer": 0, "explanation": "Chloroplasts hold chlorophyll."}
        ]}),
    )]);
    let card = Turn::calls(&[(
        "addFlashcard",
        json!({"cards": [{"front": "Osmosis", "back": "Water crossing a membrane."}]}),
    )]);
    Turn::when(
        "drawDiagram",
        diagram,
        Turn::when(
            "makeQuiz",
            quiz,
            Turn::when(
                "addFlashcard",
                card,
                Turn::text("Look at the diagram, then try the quiz. Osmosis is water crossing a membrane."),
            ),
        ),
    )
}

async fn start() -> (MockLlm, Server, tempfile::TempDir, String, String) {
    let llm = MockLlm::start_with_fallback(vec![], model()).await;
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &llm.base_url, &[]).await;
    let alice = server.add_user("alice", false).await;
    let bob = server.add_user("bob", false).await;
    (llm, server, data, alice, bob)
}

/// `POST path` with a JSON body as the holder of `token`.
async fn post_json(c: &reqwest::Client, s: &Server, token: &str, path: &str, body: Value) -> reqwest::Response {
    c.post(s.url(path)).bearer_auth(token).json(&body).send().await.unwrap()
}

/// The follow-up message background tools of turn `run` stored, once it is there.
async fn follow_up(c: &reqwest::Client, s: &Server, token: &str, id: &str, run: &str) -> Value {
    for _ in 0..100 {
        let history = get_json(c, s, token, &format!("/api/chat/{id}/messages")).await;
        let found = history.as_array().unwrap().iter().find(|m| {
            m["role"] == "assistant" && m["run"] == run && m["parts"].to_string().contains("background_process")
        });
        if let Some(m) = found {
            return m.clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    panic!("no background parts for {run} in the history");
}

async fn new_chat(c: &reqwest::Client, s: &Server, token: &str) -> String {
    let res = c.post(s.url("/api/chat")).bearer_auth(token).send().await.unwrap();
    assert_eq!(res.status(), 201);
    res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_message_streams_the_contract_events_and_everything_around_it_works() {
    let (_llm, s, _data, alice, bob) = start().await;
    let c = client();
    let id = new_chat(&c, &s, &alice).await;
    let res = post_json(
        &c,
        &s,
        &alice,
        &format!("/api/chat/{id}/messages"),
        json!({"content": "make me a diagram and a quiz about photosynthesis"}),
    )
    .await;
    let run = res.headers()["x-wright-run"].to_str().unwrap().to_string();
    let (events, _) = read_sse(res).await;
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    for want in ["tool_selected", "tool_result", "text_delta", "message", "done"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    assert_eq!(names.last(), Some(&"done"));
    let selected: Vec<&str> =
        events.iter().filter(|e| e.event == "tool_selected").map(|e| e.data["tool"].as_str().unwrap()).collect();
    assert_eq!(selected, ["diagram", "quiz"]);
    let results: Vec<&support::server::Sse> = events.iter().filter(|e| e.event == "tool_result").collect();
    assert_eq!(results.iter().map(|e| e.data["execution_order"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2]);
    assert!(results.iter().all(|e| e.data["success"] == json!(true) && e.data.get("type").is_none()));
    let reply = events.iter().rev().find(|e| e.event == "message").unwrap();
    assert_eq!(reply.data["role"], "assistant");
    assert_eq!(reply.data["has_diagram"], json!(true));
    assert!(!reply.data.to_string().contains("CO2"), "quiz answers stay on the server");
    let ids: Vec<u64> = events.iter().map(|e| e.id).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids are the events' seq, increasing");

    // Resume from the middle: the rest, exactly.
    let mid = events[events.len() / 2].id;
    let again = c
        .get(s.url(&format!("/api/chat/{id}/turns/{run}/events")))
        .bearer_auth(&alice)
        .header("Last-Event-ID", mid.to_string())
        .send()
        .await
        .unwrap();
    let (rest, _) = read_sse(again).await;
    assert_eq!(rest, events.iter().filter(|e| e.id > mid).cloned().collect::<Vec<_>>());
    // A `Last-Event-ID` that is not a seq is refused (as on a build's stream), not read as "from
    // the start".
    let bad = c
        .get(s.url(&format!("/api/chat/{id}/turns/{run}/events")))
        .bearer_auth(&alice)
        .header("Last-Event-ID", "the middle")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 422);
    let body: Value = bad.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_fields");
    assert!(body["error"]["message"].as_str().unwrap().contains("Last-Event-ID"), "{body}");

    // History, quiz scored on the server, feedback.
    let history = get_json(&c, &s, &alice, &format!("/api/chat/{id}/messages")).await;
    let msgs = history.as_array().unwrap();
    assert_eq!(msgs.len(), 2);
    let reply_id = msgs[1]["id"].as_str().unwrap();
    let scored: Value =
        post_json(&c, &s, &alice, &format!("/api/chat/{id}/messages/{reply_id}/quiz"), json!({"answers": [1, 1]}))
            .await
            .json()
            .await
            .unwrap();
    assert_eq!((scored["score"].as_u64(), scored["total"].as_u64()), (Some(1), Some(2)));
    assert_eq!(scored["results"][1]["explanation"], "Chloroplasts hold chlorophyll.");
    let bad =
        post_json(&c, &s, &alice, &format!("/api/chat/{id}/messages/{reply_id}/quiz"), json!({"answers": [1]})).await;
    assert_eq!(bad.status(), 422);
    let fb = post_json(&c, &s, &alice, &format!("/api/chat/{id}/messages/{reply_id}/feedback"), json!({"value": "up"}))
        .await;
    assert_eq!(fb.status(), 204);

    // Bob cannot see, send to, or clear Alice's conversation.
    for res in [
        c.get(s.url(&format!("/api/chat/{id}/messages"))).bearer_auth(&bob).send().await.unwrap(),
        c.post(s.url(&format!("/api/chat/{id}/messages")))
            .bearer_auth(&bob)
            .json(&json!({"content": "hi"}))
            .send()
            .await
            .unwrap(),
        c.delete(s.url(&format!("/api/chat/{id}/messages"))).bearer_auth(&bob).send().await.unwrap(),
        c.get(s.url(&format!("/api/chat/{id}/turns/{run}/events"))).bearer_auth(&bob).send().await.unwrap(),
    ] {
        assert_eq!(res.status(), 404);
    }
    assert_eq!(get_json(&c, &s, &bob, "/api/chat").await, json!([]));
    // Not through the builds routes either, not even for an admin.
    let admin = s.add_user("carol", true).await;
    for path in [format!("/api/builds/{run}"), format!("/api/builds/{run}/events")] {
        let res = c.get(s.url(&path)).bearer_auth(&admin).send().await.unwrap();
        assert_eq!(res.status(), 404, "{path}");
    }
    let mine = get_json(&c, &s, &alice, "/api/chat").await;
    assert!(mine[0]["title"].as_str().unwrap().starts_with("make me a diagram"), "{mine}");

    // Metrics count the tools and the 👍.
    let metrics = c.get(s.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("wright_chat_tool_selected_total{tool=\"quiz\"} 1"), "{metrics}");
    assert!(metrics.contains("wright_chat_tool_feedback{tool=\"diagram\",value=\"up\"} 1"), "{metrics}");
    assert!(metrics.contains("wright_chat_tool_duration_seconds_count{tool=\"diagram\"} 1"), "{metrics}");

    // Clear.
    let cleared = c.delete(s.url(&format!("/api/chat/{id}/messages"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(cleared.json::<Value>().await.unwrap()["deleted"], 2);
    assert_eq!(get_json(&c, &s, &alice, &format!("/api/chat/{id}/messages")).await, json!([]));
}

#[tokio::test]
async fn a_slow_background_tool_finishes_after_done_and_holds_no_turn() {
    // Writing the card takes the model 4 s; the reply comes at once.
    let card = Turn::calls(&[(
        "addFlashcard",
        json!({"cards": [{"front": "Osmosis", "back": "Water crossing a membrane."}]}),
    )]);
    let model = Turn::when("addFlashcard", Turn::slow(4000, card), Turn::text("Osmosis is water crossing a membrane."));
    let llm = MockLlm::start_with_fallback(vec![], model).await;
    let data = tempfile::tempdir().unwrap();
    let s = Server::start(data.path(), &llm.base_url, &[]).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let id = new_chat(&c, &s, &alice).await;

    let res = post_json(
        &c,
        &s,
        &alice,
        &format!("/api/chat/{id}/messages"),
        json!({"content": "what is osmosis? I need to remember it"}),
    )
    .await;
    let run = res.headers()["x-wright-run"].to_str().unwrap().to_string();
    let (events, _) = read_sse(res).await;
    let at_done = std::time::Instant::now();
    // At `done` the card is still being written: nothing of it in the history or the deck.
    let history = get_json(&c, &s, &alice, &format!("/api/chat/{id}/messages")).await;
    assert!(!history.to_string().contains("background_process"), "{history}");
    assert_eq!(get_json(&c, &s, &alice, "/api/flashcards").await, json!([]));
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(names.last(), Some(&"done"), "{names:?}");
    assert!(
        events.iter().any(|e| e.event == "tool_selected" && e.data["tool"] == "flashcard_update"),
        "the background tool was chosen: {names:?}"
    );
    let reply = events.iter().rev().find(|e| e.event == "message").unwrap();
    assert!(!reply.data["parts"].to_string().contains("background_process"), "{}", reply.data);

    // The same user's next message is taken at once: the turn no longer holds their slot.
    let next = post_json(&c, &s, &alice, &format!("/api/chat/{id}/messages"), json!({"content": "thanks!"})).await;
    assert_eq!(next.status(), 200, "{:?}", next.text().await);
    let (next_events, _) = read_sse(next).await;
    assert_eq!(next_events.last().map(|e| e.event.as_str()), Some("done"));

    // The card's part comes into the history as a follow-up of the first turn.
    let later = follow_up(&c, &s, &alice, &id, &run).await;
    assert!(later["parts"].to_string().contains("Osmosis"), "{later}");
    assert!(at_done.elapsed() > std::time::Duration::from_millis(500), "the card came well after `done`");
    let cards = get_json(&c, &s, &alice, "/api/flashcards").await;
    assert_eq!(cards.as_array().map(Vec::len), Some(1), "{cards}");
}

#[tokio::test]
async fn bad_requests_get_clear_errors_and_flashcards_are_reviewed() {
    let (_llm, s, _data, alice, _bob) = start().await;
    let c = client();
    let id = new_chat(&c, &s, &alice).await;
    let post = |body: Value| c.post(s.url(&format!("/api/chat/{id}/messages"))).bearer_auth(&alice).json(&body).send();
    let unknown_field = post(json!({"content": "hi", "nope": 1})).await.unwrap();
    assert_eq!(unknown_field.status(), 422);
    let bad_mode = post(json!({"content": "hi", "modes": {"telepathy": "on"}})).await.unwrap();
    assert_eq!(bad_mode.status(), 422);
    assert!(bad_mode.text().await.unwrap().contains("no tool is called `telepathy`"));
    let empty = post(json!({"content": "   "})).await.unwrap();
    assert_eq!(empty.status(), 422);
    let garbage = c
        .post(s.url(&format!("/api/chat/{id}/messages")))
        .bearer_auth(&alice)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(garbage.status(), 422);
    assert!(garbage.text().await.unwrap().contains("\"error\""));

    // Studying a term: the card is added in the background (after `done`); review it.
    let res = post(json!({"content": "what is osmosis? I need to remember it"})).await.unwrap();
    let run = res.headers()["x-wright-run"].to_str().unwrap().to_string();
    let (_events, _) = read_sse(res).await;
    let later = follow_up(&c, &s, &alice, &id, &run).await;
    assert!(later["parts"].to_string().contains("background_process"), "{later}");
    let cards = get_json(&c, &s, &alice, "/api/flashcards").await;
    let card = cards[0]["id"].as_str().unwrap().to_string();
    let reviewed: Value =
        post_json(&c, &s, &alice, &format!("/api/flashcards/{card}/review"), json!({"rating": "good"}))
            .await
            .json()
            .await
            .unwrap();
    assert_eq!(reviewed["reps"], 1);
    assert!(reviewed["due"].as_str().unwrap() > cards[0]["due"].as_str().unwrap());
    let wrong = post_json(&c, &s, &alice, &format!("/api/flashcards/{card}/review"), json!({"rating": "meh"})).await;
    assert_eq!(wrong.status(), 422);
}

#[tokio::test]
async fn wright_chat_in_a_terminal_shows_both_and_keeps_the_session() {
    let llm = MockLlm::start_with_fallback(vec![], model()).await;
    let data = tempfile::tempdir().unwrap();
    support::server::link_models(data.path());
    // The mock answers on this test's runtime, so the CLI runs as a child it awaits.
    let run = |args: &[&str]| {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
        cmd.arg("chat").args(args);
        cmd.args(["--provider", "openai", "--base-url", &llm.base_url, "--model", "mock-model", "--data-dir"]);
        cmd.arg(data.path()).env("OPENAI_API_KEY", "sk-test").env_remove("YOUTUBE_API_KEY");
        cmd.stdin(std::process::Stdio::null());
        async move { cmd.output().await.unwrap() }
    };
    let out = run(&["make me a diagram and a quiz about photosynthesis"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("```mermaid") && stdout.contains("Sun[Light] --> Leaf"), "{stdout}");
    assert!(stdout.contains("📝 Photosynthesis") && stdout.contains("b) Carbon dioxide"), "{stdout}");
    assert!(stdout.contains("Look at the diagram"), "{stdout}");
    let session = stderr.split("--session ").nth(1).unwrap().trim_end_matches([')', '\n']).to_string();
    let history = run(&["--session", &session, "--history"]).await;
    let text = String::from_utf8_lossy(&history.stdout);
    assert!(text.contains("── user ──") && text.contains("make me a diagram"), "{text}");
    // Studying a term: `wright chat` waits for the card made after the reply and shows it.
    let defined = run(&["--session", &session, "what is osmosis? I need to remember it"]).await;
    let stdout = String::from_utf8_lossy(&defined.stdout);
    assert!(defined.status.success(), "{stdout}");
    assert!(stdout.contains("flashcard to your deck: Osmosis"), "the background card is shown before exit: {stdout}");
    let missing = run(&["--session", "c-nope", "hello"]).await;
    assert_eq!(missing.status.code(), Some(1));
}

#[tokio::test]
async fn a_quiz_is_answered_at_the_prompt_of_a_terminal() {
    let llm = MockLlm::start_with_fallback(vec![], model()).await;
    let data = tempfile::tempdir().unwrap();
    support::server::link_models(data.path());
    let q = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let command = [
        env!("CARGO_BIN_EXE_wright"),
        "chat",
        "quiz me on photosynthesis",
        "--provider",
        "openai",
        "--base-url",
        &llm.base_url,
        "--model",
        "mock-model",
        "--data-dir",
        data.path().to_str().unwrap(),
    ]
    .iter()
    .map(|a| q(a))
    .collect::<Vec<_>>()
    .join(" ");
    // `script` gives the command a terminal; each answer is typed when its prompt shows: b
    // (right), then z (not an option: asked again), then b (wrong: the answer is a).
    let mut child = tokio::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("OPENAI_API_KEY", "sk-test")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let talk = async {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut seen, mut buf) = (String::new(), [0u8; 4096]);
        let mut answers = ["b\n", "z\n", "b\n"].into_iter();
        let mut prompts = 0;
        loop {
            let n = stdout.read(&mut buf).await.unwrap();
            if n == 0 {
                return seen;
            }
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
            while seen.matches("Your answer to").count() > prompts {
                prompts += 1;
                if let Some(a) = answers.next() {
                    stdin.write_all(a.as_bytes()).await.unwrap();
                }
            }
        }
    };
    let text = tokio::time::timeout(std::time::Duration::from_secs(240), talk).await.unwrap();
    let _ = child.wait().await;
    assert!(text.contains("Your answer to 1"), "{text}");
    assert!(text.contains("Score: 1/2"), "{text}");
    assert!(text.contains("Chloroplasts hold chlorophyll."), "{text}");
}

#[tokio::test]
async fn a_turn_cut_by_a_crash_ends_when_the_server_is_back() {
    let llm = MockLlm::start_with_fallback(vec![], Turn::slow(60_000, Turn::text("too late"))).await;
    let data = tempfile::tempdir().unwrap();
    let mut s = Server::start(data.path(), &llm.base_url, &[]).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let id = new_chat(&c, &s, &alice).await;
    let res = post_json(&c, &s, &alice, &format!("/api/chat/{id}/messages"), json!({"content": "hello there"})).await;
    let run = res.headers()["x-wright-run"].to_str().unwrap().to_string();
    // The model is still thinking when the server dies.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    s.kill9().await;
    let s = Server::start(data.path(), &llm.base_url, &[]).await;
    let again = c.get(s.url(&format!("/api/chat/{id}/turns/{run}/events"))).bearer_auth(&alice).send().await.unwrap();
    let (events, _) = tokio::time::timeout(std::time::Duration::from_secs(30), read_sse(again)).await.unwrap();
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(&names[names.len() - 2..], ["error", "done"], "{names:?}");
    assert!(events[events.len() - 2].data["message"].as_str().unwrap().contains("send it again"));
    // The message itself was kept: it was stored as the turn was recorded.
    let history = get_json(&c, &s, &alice, &format!("/api/chat/{id}/messages")).await;
    assert_eq!(history[0]["parts"][0]["text"], "hello there");
}

/// Two servers on one PostgreSQL database. A turn is being answered by the first when it dies;
/// the second, which was running all along (so no start of its own looks at the turn), ends
/// it once its lease runs out: `error` and `done` with `server_stopped`, the record agreeing.
#[tokio::test]
async fn a_turn_whose_server_died_is_ended_by_another_servers_sweep() {
    let llm = MockLlm::start_with_fallback(vec![], Turn::slow(120_000, Turn::text("too late"))).await;
    let pg = wright_pgtemp::PgServer::shared().expect("a throwaway PostgreSQL (Debian's `postgresql` package)");
    let db = pg.database().expect("a fresh database");
    let (one_dir, two_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut one = Server::start_db(one_dir.path(), &llm.base_url, &db, &[]).await;
    let two = Server::start_db(two_dir.path(), &llm.base_url, &db, &[]).await;
    let alice = one.add_user("alice", false).await;
    let c = client();
    let id = new_chat(&c, &one, &alice).await;
    let res = post_json(&c, &one, &alice, &format!("/api/chat/{id}/messages"), json!({"content": "hello there"})).await;
    let run = res.headers()["x-wright-run"].to_str().unwrap().to_string();
    // The model is still thinking when the first server dies.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let killed = std::time::Instant::now();
    one.kill9().await;
    let follow =
        c.get(two.url(&format!("/api/chat/{id}/turns/{run}/events"))).bearer_auth(&alice).send().await.unwrap();
    let (events, _) = tokio::time::timeout(std::time::Duration::from_secs(90), read_sse(follow))
        .await
        .expect("the turn was never ended");
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(&names[names.len() - 2..], ["error", "done"], "{names:?}");
    assert!(events[events.len() - 2].data["message"].as_str().unwrap().contains("send it again"));
    let done = &events.last().unwrap().data;
    assert_eq!((&done["finish_reason"], &done["end_reason"]), (&json!("error"), &json!("server_stopped")), "{done}");
    let within = killed.elapsed();
    assert!(within < std::time::Duration::from_secs(60), "ended {within:?} after the kill");
    // The record says what the stream says.
    let record = std::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args(["builds", "show", &run, "--json", "--db", &db])
        .output()
        .unwrap();
    assert!(record.status.success(), "{}", String::from_utf8_lossy(&record.stderr));
    let record: Value = serde_json::from_slice(&record.stdout).unwrap();
    assert_eq!(
        (&record["build"]["status"], &record["build"]["end_reason"]),
        (&json!("failed"), &json!("server_stopped"))
    );
    println!("a dead server's turn ended by the other server {:.1} s after the kill", within.as_secs_f64());
}
