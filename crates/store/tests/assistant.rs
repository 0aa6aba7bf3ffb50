//! The in-app assistant's part of the store through the `Store` trait only, on SQLite and on
//! PostgreSQL: a round's calls wait, results are accepted all-or-none for pending calls of the
//! right conversation, exactly one post resumes the turn (also from two servers at once, on
//! PostgreSQL), closing and expiring end waiting turns, and embed keys and visitors.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::sync::Arc;
use wright_events::RunKind;
use wright_events::chat::ClientToolDef;
use wright_store::*;

/// The chat run of a turn (its record names the server that answers for it).
async fn chat_run(s: &dyn Store, run: &str) {
    s.create_build(&NewBuild {
        id: run.into(),
        kind: RunKind::Chat,
        parent_id: None,
        prompt: "start a build".into(),
        template: None,
        lang: Lang::En,
        provider: "openai".into(),
        model: "m".into(),
        workspace: "answerer here 1 1".into(),
        started_at: now(),
    })
    .await
    .unwrap();
}

/// A running turn (of a new conversation unless it exists), without its run's record: the
/// assistant's records stand on their own.
async fn turn(s: &dyn Store, run: &str, conversation: &str) -> AssistantTurn {
    if s.conversation(conversation).await.is_err() {
        s.create_conversation(conversation, "ann", "").await.unwrap();
    }
    let t = AssistantTurn {
        run: run.into(),
        conversation: conversation.into(),
        user: "ann".into(),
        assistant: "wright".into(),
        lang: Lang::En,
        client_tools: vec!["describe_app_ui".into(), "click_element".into()],
        transcript: serde_json::json!([]),
        parts: Vec::new(),
        round: 0,
        state: TurnState::Running,
    };
    s.begin_assistant_turn(&t).await.unwrap();
    t
}

fn call(t: &AssistantTurn, id: &str, pos: u32, side: Side, deadline: &str) -> CallRow {
    CallRow {
        id: id.into(),
        provider_id: id.into(),
        run: t.run.clone(),
        conversation: t.conversation.clone(),
        round: t.round,
        pos,
        name: if side == Side::Server { "search_documents".into() } else { "click_element".into() },
        arguments: "{}".into(),
        args_hash: "h".into(),
        side,
        read_only: side == Side::Server,
        deadline: deadline.into(),
        status: if side == Side::Server { CallStatus::Answered } else { CallStatus::Pending },
        output: (side == Side::Server).then(|| "found".into()),
        error: None,
    }
}

const LATER: &str = "2999-01-01T00:00:00.000Z";

async fn a_round_waits_and_one_post_resumes_it(s: Arc<dyn Store>) {
    let mut t = turn(s.as_ref(), "r1", "c1").await;
    t.round = 1;
    t.transcript = serde_json::json!([{"role": "assistant"}]);
    let calls = vec![
        call(&t, "a", 0, Side::Server, LATER),
        call(&t, "b", 1, Side::Client, LATER),
        call(&t, "c", 2, Side::Client, LATER),
    ];
    s.wait_for_page(&t, &calls).await.unwrap();
    let stored = s.assistant_turn("r1").await.unwrap();
    assert_eq!((stored.state, stored.round), (TurnState::Waiting, 1));
    assert_eq!(stored.transcript, t.transcript);
    let pending: Vec<_> = s.pending_calls("c1").await.unwrap().into_iter().map(|c| c.id).collect();
    assert_eq!(pending, ["b", "c"], "the server's call is not the page's to answer");

    let out = |id: &str| (id.to_string(), Answer::Output(format!("did {id}")));
    // Unknown ids, the server's call, another conversation's id and repeats refuse the batch.
    for (conv, batch) in [
        ("c1", vec![out("b"), out("nope")]),
        ("c1", vec![out("a")]),
        ("other", vec![out("b")]),
        ("c1", vec![out("b"), out("b")]),
        ("c1", vec![]),
    ] {
        let e = s.answer_calls(conv, &batch, "me").await.unwrap_err();
        assert!(matches!(e, StoreError::Invalid(_)), "{e}");
    }
    assert_eq!(s.pending_calls("c1").await.unwrap().len(), 2, "a refused batch answers nothing");

    match s.answer_calls("c1", &[out("b")], "me").await.unwrap() {
        Answered::Waiting { run, left } => assert_eq!((run.as_str(), left), ("r1", 1)),
        other => panic!("{other:?}"),
    }
    let e = s.answer_calls("c1", &[out("b")], "me").await.unwrap_err();
    assert!(e.to_string().contains("not waiting"), "a second answer to one call is refused: {e}");
    let done = s.answer_calls("c1", &[("c".into(), Answer::Error("timed out".into()))], "server-2").await.unwrap();
    assert_eq!(done, Answered::RoundComplete { run: "r1".into() });
    assert_eq!(s.assistant_turn("r1").await.unwrap().state, TurnState::Running);
    let round = s.round_calls("r1", 1).await.unwrap();
    let got: Vec<_> = round.iter().map(|c| (c.id.as_str(), c.output.as_deref(), c.error.as_deref())).collect();
    assert_eq!(got, [("a", Some("found"), None), ("b", Some("did b"), None), ("c", None, Some("timed out"))]);
}

async fn the_resuming_server_answers_for_the_run(s: Arc<dyn Store>) {
    chat_run(s.as_ref(), "r5").await;
    let mut t = turn(s.as_ref(), "r5", "c5").await;
    assert_eq!(s.open_chat_runs().await.unwrap(), [("r5".to_string(), "answerer here 1 1".to_string())]);
    t.round = 1;
    s.wait_for_page(&t, &[call(&t, "p", 0, Side::Client, LATER), call(&t, "q", 1, Side::Client, LATER)]).await.unwrap();
    // Waiting turns are not "open" for the crash sweep: nothing runs them.
    assert!(s.open_chat_runs().await.unwrap().is_empty());
    let out = |id: &str| (id.to_string(), Answer::Output(format!("did {id}")));
    assert!(matches!(s.answer_calls("c5", &[out("p")], "server-1").await.unwrap(), Answered::Waiting { .. }));
    assert_eq!(s.build("r5").await.unwrap().start.workspace, "answerer here 1 1", "not resumed yet");
    let done = s.answer_calls("c5", &[out("q")], "server-2").await.unwrap();
    assert_eq!(done, Answered::RoundComplete { run: "r5".into() });
    assert_eq!(s.build("r5").await.unwrap().start.workspace, "server-2", "the resuming server answers for it now");
    assert_eq!(s.open_chat_runs().await.unwrap(), [("r5".to_string(), "server-2".to_string())]);
}

async fn concurrent_posts_resume_the_turn_once(s: Arc<dyn Store>) {
    let mut t = turn(s.as_ref(), "r2", "c2").await;
    t.round = 1;
    let calls: Vec<_> = (0..8).map(|i| call(&t, &format!("k{i}"), i, Side::Client, LATER)).collect();
    s.wait_for_page(&t, &calls).await.unwrap();
    let posts = (0..8).map(|i| {
        let s = s.clone();
        tokio::spawn(async move {
            s.answer_calls("c2", &[(format!("k{i}"), Answer::Output("ok".into()))], "me").await.unwrap()
        })
    });
    let mut resumed = 0;
    for p in posts {
        if matches!(p.await.unwrap(), Answered::RoundComplete { .. }) {
            resumed += 1;
        }
    }
    assert_eq!(resumed, 1);
}

async fn a_new_message_closes_and_a_deadline_expires_waiting_turns(s: Arc<dyn Store>) {
    let mut t = turn(s.as_ref(), "r3", "c3").await;
    t.round = 1;
    s.wait_for_page(&t, &[call(&t, "x", 0, Side::Client, LATER)]).await.unwrap();
    assert_eq!(s.close_pending("c3", "cancelled: a new message").await.unwrap(), ["r3"]);
    assert!(s.pending_calls("c3").await.unwrap().is_empty());
    assert_eq!(s.assistant_turn("r3").await.unwrap().state, TurnState::Ended);
    let x = &s.round_calls("r3", 1).await.unwrap()[0];
    assert_eq!((x.status, x.error.as_deref()), (CallStatus::Cancelled, Some("cancelled: a new message")));
    assert!(s.close_pending("c3", "again").await.unwrap().is_empty());

    let mut t = turn(s.as_ref(), "r4", "c3").await;
    t.round = 1;
    s.wait_for_page(&t, &[call(&t, "y", 0, Side::Client, "2000-01-01T00:00:00.000Z")]).await.unwrap();
    assert_eq!(s.expire_calls(&now()).await.unwrap(), [("r4".to_string(), "c3".to_string())]);
    assert_eq!(s.round_calls("r4", 1).await.unwrap()[0].status, CallStatus::Expired);
    let e = s.answer_calls("c3", &[("y".into(), Answer::Output("late".into()))], "me").await.unwrap_err();
    assert!(e.to_string().contains("expired"), "{e}");
}

/// Providers reuse call ids (Gemini before 3 and parsers without ids say `call_0` in every
/// answer): the store keys calls by the server's ids, keeps the provider's beside them, and a
/// page still answers only its own conversation's calls, by the server's id.
async fn provider_ids_repeat_across_rounds_and_turns(s: Arc<dyn Store>) {
    let page_call = |t: &AssistantTurn, pos: u32| CallRow {
        id: new_call_id(),
        provider_id: format!("call_{pos}"),
        ..call(t, "unused", pos, Side::Client, LATER)
    };
    let (mut a, mut b) = (turn(s.as_ref(), "ra", "ca").await, turn(s.as_ref(), "rb", "cb").await);
    a.round = 1;
    b.round = 1;
    let (a1, b1) = ([page_call(&a, 0), page_call(&a, 1)], [page_call(&b, 0), page_call(&b, 1)]);
    s.wait_for_page(&a, &a1).await.unwrap();
    s.wait_for_page(&b, &b1).await.unwrap();
    let stored = s.round_calls("rb", 1).await.unwrap();
    let ids: Vec<(&str, &str)> = stored.iter().map(|c| (c.id.as_str(), c.provider_id.as_str())).collect();
    assert_eq!(ids, [(b1[0].id.as_str(), "call_0"), (b1[1].id.as_str(), "call_1")]);
    assert!(a1.iter().chain(&b1).all(|c| c.id.starts_with("ac-") && c.id.len() == 35), "{a1:?}");

    let out = |id: &str| (id.to_string(), Answer::Output(format!("did {id}")));
    // Another conversation's call, and the provider's id, are not this page's to answer.
    for batch in [vec![out(&b1[0].id)], vec![out("call_0")], vec![out(&a1[0].id), out(&b1[1].id)]] {
        let e = s.answer_calls("ca", &batch, "me").await.unwrap_err();
        assert!(matches!(e, StoreError::Invalid(_)), "{e}");
    }
    assert_eq!(s.pending_calls("cb").await.unwrap().len(), 2, "a forged result answers nothing");
    let done = s.answer_calls("ca", &[out(&a1[0].id), out(&a1[1].id)], "me").await.unwrap();
    assert_eq!(done, Answered::RoundComplete { run: "ra".into() });

    // The next round of the same turn: the provider says `call_0` again.
    a.round = 2;
    let a2 = [page_call(&a, 0)];
    s.wait_for_page(&a, &a2).await.unwrap();
    let round2 = s.round_calls("ra", 2).await.unwrap();
    assert_eq!((round2[0].id.as_str(), round2[0].provider_id.as_str()), (a2[0].id.as_str(), "call_0"));
    let round1 = s.round_calls("ra", 1).await.unwrap();
    assert_eq!(round1[0].output.as_deref(), Some(format!("did {}", a1[0].id).as_str()), "round 1 kept its answers");
    // A server id recorded twice is still refused (its uniqueness is the store's).
    let mut b2 = b.clone();
    b2.round = 2;
    s.answer_calls("cb", &[out(&b1[0].id), out(&b1[1].id)], "me").await.unwrap();
    let e = s.wait_for_page(&b2, &[CallRow { round: 2, ..a2[0].clone() }]).await.unwrap_err();
    assert!(e.to_string().contains("recorded already"), "{e}");
}

async fn embed_keys_and_their_visitors(s: Arc<dyn Store>) {
    let key = EmbedKey {
        id: "ek-1".into(),
        owner_id: "ann".into(),
        name: "Tip calculator".into(),
        origins: vec!["https://tips.example".into()],
        tools: vec![ClientToolDef {
            name: "describe_app_ui".into(),
            description: "d".into(),
            parameters: serde_json::json!({"type": "object"}),
            read_only: true,
        }],
        docs_dir: None,
        per_hour: 50,
        created_at: now(),
        revoked_at: None,
    };
    s.create_embed_key(&key, "hash-1").await.unwrap();
    assert_eq!(s.embed_key_by_hash("hash-1").await.unwrap().as_ref(), Some(&key));
    assert_eq!(s.embed_keys("ann").await.unwrap(), std::slice::from_ref(&key));
    assert!(s.embed_keys("bob").await.unwrap().is_empty());
    let day = std::time::Duration::from_secs(86_400);
    assert!(s.create_visitor("v-1", "vhash-1", "ek-1", day, 2).await.unwrap());
    let (visitor, of) = s.visitor_by_hash("vhash-1").await.unwrap().unwrap();
    assert_eq!((visitor.as_str(), of.id.as_str()), ("v-1", "ek-1"));
    assert!(!s.revoke_embed_key("bob", "ek-1").await.unwrap(), "only its owner revokes it");
    assert!(s.revoke_embed_key("ann", "ek-1").await.unwrap());
    assert!(s.embed_key_by_hash("hash-1").await.unwrap().is_none());
    assert!(s.visitor_by_hash("vhash-1").await.unwrap().is_none(), "a revoked key's visitors are out");
    assert!(s.embed_key("ek-1").await.unwrap().unwrap().revoked_at.is_some());
}

both!(
    a_round_waits_and_one_post_resumes_it,
    the_resuming_server_answers_for_the_run,
    concurrent_posts_resume_the_turn_once,
    a_new_message_closes_and_a_deadline_expires_waiting_turns,
    provider_ids_repeat_across_rounds_and_turns,
    embed_keys_and_their_visitors,
);

/// What only a shared store has: two servers (two stores, each with its own connections) on one
/// database, posting results for the same round at the same moment.
mod two_servers {
    use super::*;
    use tokio::sync::Barrier;
    use wright_store::PgStore;

    /// Rounds tried, half of them with each server answering one call. Without the turn's lock
    /// a good share of those rounds let both posts see the other's call still pending (so
    /// neither resumes the turn): a broken store fails this test on nearly every run.
    const ROUNDS: usize = 80;

    /// Each server posts its batch for `t` once both are ready; how each post ended.
    async fn at_once(
        servers: [&Arc<PgStore>; 2],
        t: &AssistantTurn,
        batches: [Vec<(String, Answer)>; 2],
    ) -> Vec<Result<Answered>> {
        let start = Arc::new(Barrier::new(2));
        let posts: Vec<_> = servers
            .into_iter()
            .zip(batches)
            .enumerate()
            .map(|(i, (s, batch))| {
                let (s, start, conversation) = (s.clone(), start.clone(), t.conversation.clone());
                tokio::spawn(async move {
                    start.wait().await;
                    s.answer_calls(&conversation, &batch, &format!("server-{i}")).await
                })
            })
            .collect();
        let mut ended = Vec::new();
        for p in posts {
            ended.push(p.await.unwrap());
        }
        ended
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn posts_of_two_servers_for_the_last_calls_resume_the_turn_once() {
        let url = support::postgres_url();
        let a = Arc::new(PgStore::open_with(&url, 4).await.unwrap());
        let b = Arc::new(PgStore::open_with(&url, 4).await.unwrap());
        let out = |id: &str| (id.to_string(), Answer::Output(format!("did {id}")));
        for i in 0..ROUNDS {
            let mut t = turn(a.as_ref(), &format!("r{i}"), &format!("c{i}")).await;
            t.round = 1;
            let (x, y) = (format!("x{i}"), format!("y{i}"));
            a.wait_for_page(&t, &[call(&t, &x, 0, Side::Client, LATER), call(&t, &y, 1, Side::Client, LATER)])
                .await
                .unwrap();
            let resumed = |ended: &[Result<Answered>]| {
                ended.iter().filter(|e| matches!(e, Ok(Answered::RoundComplete { .. }))).count()
            };
            if i % 2 == 0 {
                // Each server answers one of the round's two pending calls: the later post resumes.
                let ended = at_once([&a, &b], &t, [vec![out(&x)], vec![out(&y)]]).await;
                let waiting = ended.iter().filter(|e| matches!(e, Ok(Answered::Waiting { left: 1, .. }))).count();
                assert_eq!((resumed(&ended), waiting), (1, 1), "round {i}: {ended:?}");
            } else {
                // Both post both calls (a page's retry): one resumes, the other is refused whole.
                let ended = at_once([&a, &b], &t, [vec![out(&x), out(&y)], vec![out(&y), out(&x)]]).await;
                let refused = ended
                    .iter()
                    .filter(|e| matches!(e, Err(StoreError::Invalid(m)) if m.contains("not waiting")))
                    .count();
                assert_eq!((resumed(&ended), refused), (1, 1), "round {i}: {ended:?}");
            }
            assert_eq!(b.assistant_turn(&t.run).await.unwrap().state, TurnState::Running);
            assert!(b.pending_calls(&t.conversation).await.unwrap().is_empty());
        }
    }
}
