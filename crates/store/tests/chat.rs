//! The chat's part of the store (conversations, messages with typed parts, feedback, the
//! flashcard deck) through the `Store` trait only, on SQLite and on PostgreSQL; and chat turns
//! kept out of the lists of builds.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::collections::HashSet;
use std::sync::Arc;
use wright_events::RunKind;
use wright_events::chat::{Card, ChatMessage, ContentFlags, Part, Question, Quiz, Role};
use wright_store::*;

fn msg(id: &str, role: Role, parts: Vec<Part>) -> ChatMessage {
    ChatMessage {
        id: id.into(),
        role,
        parts,
        // Deliberately wrong: the store computes flags from the parts.
        flags: ContentFlags::default(),
        run: (role == Role::Assistant).then(|| format!("run-{id}")),
        created_at: now(),
        feedback: None,
    }
}

fn text(t: &str) -> Part {
    Part::Text { text: t.into() }
}

fn rich_reply() -> Vec<Part> {
    vec![
        text("Here is how it works."),
        Part::Diagram { title: "Cycle".into(), mermaid: "graph TD; A-->B; B-->A".into() },
        Part::Quiz {
            quiz: Quiz {
                title: "Check".into(),
                questions: vec![
                    Question {
                        question: "What is made?".into(),
                        options: vec!["Glucose".into(), "Salt".into()],
                        answer: Some(0),
                        explanation: Some("Plants make sugar.".into()),
                    },
                    Question {
                        question: "Needs light?".into(),
                        options: vec!["No".into(), "Yes".into()],
                        answer: Some(1),
                        explanation: None,
                    },
                ],
            },
        },
        Part::Code { language: "python".into(), code: "print('6CO2 + 6H2O')\n".into() },
    ]
}

fn card(id: &str, user: &str, front: &str, due: &str) -> StoredCard {
    StoredCard {
        id: id.into(),
        user_id: user.into(),
        front: front.into(),
        back: format!("back of {front}"),
        created_at: now(),
        due: due.into(),
        stability: 0.0,
        difficulty: 0.0,
        elapsed_days: 0,
        scheduled_days: 0,
        reps: 0,
        lapses: 0,
        state: "new".into(),
        last_review: None,
    }
}

async fn tick() {
    // Timestamps have millisecond precision; keep "newer" strictly newer.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
}

async fn conversations_are_listed_per_user_most_recently_active_first(s: Arc<dyn Store>) {
    s.create_conversation("c1", "ann", "").await.unwrap();
    tick().await;
    s.create_conversation("c2", "ann", "Named").await.unwrap();
    tick().await;
    s.create_conversation("c3", "bob", "").await.unwrap();
    assert!(matches!(s.create_conversation("c1", "ann", "").await, Err(StoreError::Invalid(_))));
    assert!(matches!(s.conversation("nope").await, Err(StoreError::NotFound(_))));

    let ids = |l: Vec<Conversation>| l.into_iter().map(|c| c.id).collect::<Vec<_>>();
    assert_eq!(ids(s.conversations("ann", 10).await.unwrap()), ["c2", "c1"]);
    tick().await;
    s.add_message("c1", &msg("m1", Role::User, vec![text("hi")]), &[]).await.unwrap();
    assert_eq!(ids(s.conversations("ann", 10).await.unwrap()), ["c1", "c2"]);
    assert_eq!(ids(s.conversations("ann", 1).await.unwrap()), ["c1"]);
    assert_eq!(ids(s.conversations("bob", 10).await.unwrap()), ["c3"]);
    assert!(s.conversations("carl", 10).await.unwrap().is_empty());

    let c1 = s.conversation("c1").await.unwrap();
    assert_eq!((c1.user_id.as_str(), c1.messages), ("ann", 1));
    assert!(c1.updated_at > c1.created_at, "{c1:?}");
    // A named conversation keeps its name.
    s.add_message("c2", &msg("m2", Role::User, vec![text("other words")]), &[]).await.unwrap();
    assert_eq!(s.conversation("c2").await.unwrap().title, "Named");
}

async fn messages_round_trip_with_flags_and_name_the_conversation(s: Arc<dyn Store>) {
    s.create_conversation("c", "ann", "").await.unwrap();
    assert!(matches!(
        s.add_message("missing", &msg("x", Role::User, vec![text("hi")]), &[]).await,
        Err(StoreError::NotFound(_))
    ));
    // An assistant's message never names it; the first user message does.
    s.add_message("c", &msg("a0", Role::Assistant, vec![text("Welcome!")]), &[]).await.unwrap();
    assert_eq!(s.conversation("c").await.unwrap().title, "");
    // Cut inside the run of two-byte characters: at a character, never inside one.
    let question = format!("Explain   photosynthesis\nto me — {}", "ü".repeat(40));
    let user = msg("u1", Role::User, vec![text(&question)]);
    s.add_message("c", &user, &[]).await.unwrap();
    let reply = msg("a1", Role::Assistant, rich_reply());
    s.add_message("c", &reply, &["diagram".into(), "quiz".into()]).await.unwrap();
    assert!(matches!(s.add_message("c", &reply, &[]).await, Err(StoreError::Invalid(_))));

    let title = s.conversation("c").await.unwrap().title;
    assert_eq!(title.chars().count(), 60);
    assert!(title.starts_with("Explain photosynthesis to me — ü"), "{title}");
    assert!(question.split_whitespace().collect::<Vec<_>>().join(" ").starts_with(&title));
    s.add_message("c", &msg("u2", Role::User, vec![text("Another question")]), &[]).await.unwrap();
    assert_eq!(s.conversation("c").await.unwrap().title, title, "the first user message names it");

    let all = s.messages("c", None).await.unwrap();
    assert_eq!(all.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["a0", "u1", "a1", "u2"]);
    let back = &all[2];
    assert_eq!(back.parts, reply.parts, "parts, quiz answers included, round-trip exactly");
    assert_eq!(back.role, Role::Assistant);
    assert_eq!(back.run.as_deref(), Some("run-a1"));
    assert_eq!(
        back.flags,
        ContentFlags { has_diagram: true, has_quiz: true, has_code: true, has_flashcards: false, has_videos: false }
    );
    assert_eq!(all[1].flags, ContentFlags::default());
    assert_eq!(all[1], ChatMessage { flags: ContentFlags::default(), ..user });
    assert_eq!(&s.message("c", "a1").await.unwrap(), back);

    // The last N, still in order.
    let last = s.messages("c", Some(2)).await.unwrap();
    assert_eq!(last.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["a1", "u2"]);
    assert_eq!(s.messages("c", Some(10)).await.unwrap().len(), 4);
    assert!(s.messages("c", Some(0)).await.unwrap().is_empty());

    // Parts replaced: flags follow.
    let cards =
        vec![Card { id: "k1".into(), front: "f".into(), back: "b".into(), due: now(), state: "new".into(), reps: 0 }];
    let parts = vec![text("Cards made."), Part::Flashcards { cards }];
    s.replace_parts("c", "a1", &parts).await.unwrap();
    let replaced = s.message("c", "a1").await.unwrap();
    assert_eq!(replaced.parts, parts);
    assert_eq!(replaced.flags, ContentFlags { has_flashcards: true, ..ContentFlags::default() });
    assert!(matches!(s.replace_parts("c", "nope", &parts).await, Err(StoreError::NotFound(_))));
}

async fn writers_at_once_each_get_their_own_place(s: Arc<dyn Store>) {
    s.create_conversation("c", "ann", "").await.unwrap();
    let writers = (0..16).map(|i| {
        let s = s.clone();
        tokio::spawn(async move {
            let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
            s.add_message("c", &msg(&format!("m{i}"), role, vec![text(&format!("message {i}"))]), &[]).await
        })
    });
    for w in writers {
        w.await.unwrap().unwrap();
    }
    let all = s.messages("c", None).await.unwrap();
    assert_eq!(all.len(), 16);
    assert_eq!(all.iter().map(|m| m.id.as_str()).collect::<HashSet<_>>().len(), 16);
    let c = s.conversation("c").await.unwrap();
    assert_eq!(c.messages, 16);
    assert!(c.title.starts_with("message "), "the first user message stored names it: {c:?}");
}

async fn a_message_is_found_only_in_its_own_conversation_and_clear_empties_it(s: Arc<dyn Store>) {
    s.create_conversation("c1", "ann", "").await.unwrap();
    s.create_conversation("c2", "ann", "").await.unwrap();
    s.add_message("c1", &msg("m1", Role::User, vec![text("one")]), &[]).await.unwrap();
    s.add_message("c1", &msg("m2", Role::Assistant, vec![text("two")]), &[]).await.unwrap();
    s.add_message("c2", &msg("m3", Role::User, vec![text("three")]), &[]).await.unwrap();

    assert!(matches!(s.message("c2", "m1").await, Err(StoreError::NotFound(_))));
    assert!(matches!(s.message("c1", "nope").await, Err(StoreError::NotFound(_))));
    assert!(matches!(s.replace_parts("c2", "m1", &[text("x")]).await, Err(StoreError::NotFound(_))));
    assert!(matches!(s.set_feedback("c2", "m2", Some(1)).await, Err(StoreError::NotFound(_))));

    assert_eq!(s.clear_messages("c1").await.unwrap(), 2);
    assert!(s.messages("c1", None).await.unwrap().is_empty());
    assert_eq!(s.conversation("c1").await.unwrap().messages, 0);
    assert_eq!(s.messages("c2", None).await.unwrap().len(), 1, "another conversation keeps its messages");
    // Numbering starts again after a clear.
    s.add_message("c1", &msg("m4", Role::User, vec![text("again")]), &[]).await.unwrap();
    assert_eq!(s.messages("c1", None).await.unwrap().len(), 1);
    assert_eq!(s.clear_messages("unknown").await.unwrap(), 0);
}

async fn feedback_goes_on_replies_only_and_is_counted_per_tool(s: Arc<dyn Store>) {
    s.create_conversation("c", "ann", "").await.unwrap();
    s.add_message("c", &msg("u", Role::User, vec![text("q")]), &[]).await.unwrap();
    let tools = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    s.add_message("c", &msg("a1", Role::Assistant, rich_reply()), &tools(&["diagram", "quiz"])).await.unwrap();
    s.add_message("c", &msg("a2", Role::Assistant, rich_reply()), &tools(&["quiz", "quiz"])).await.unwrap();
    s.add_message("c", &msg("a3", Role::Assistant, rich_reply()), &tools(&["video_search"])).await.unwrap();
    s.add_message("c", &msg("a4", Role::Assistant, vec![text("plain")]), &[]).await.unwrap();

    assert!(matches!(s.set_feedback("c", "u", Some(1)).await, Err(StoreError::Invalid(_))));
    assert!(matches!(s.set_feedback("c", "u", None).await, Err(StoreError::Invalid(_))));
    assert!(matches!(s.set_feedback("c", "a1", Some(3)).await, Err(StoreError::Invalid(_))));
    assert!(matches!(s.set_feedback("c", "nope", Some(1)).await, Err(StoreError::NotFound(_))));
    let mut rated_user = msg("u2", Role::User, vec![text("q")]);
    rated_user.feedback = Some(1);
    assert!(matches!(s.add_message("c", &rated_user, &[]).await, Err(StoreError::Invalid(_))));

    assert!(s.feedback_by_tool().await.unwrap().is_empty(), "nothing rated yet");
    s.set_feedback("c", "a1", Some(1)).await.unwrap();
    s.set_feedback("c", "a2", Some(-1)).await.unwrap();
    s.set_feedback("c", "a3", Some(1)).await.unwrap();
    s.set_feedback("c", "a4", Some(-1)).await.unwrap();
    assert_eq!(s.message("c", "a1").await.unwrap().feedback, Some(1));
    assert_eq!(s.message("c", "a2").await.unwrap().feedback, Some(-1));
    let by_tool = s.feedback_by_tool().await.unwrap();
    assert_eq!(
        by_tool,
        vec![("diagram".to_string(), 1, 0), ("quiz".to_string(), 1, 1), ("video_search".to_string(), 1, 0)]
    );

    // Taken back, it no longer counts.
    s.set_feedback("c", "a3", None).await.unwrap();
    assert_eq!(s.message("c", "a3").await.unwrap().feedback, None);
    s.set_feedback("c", "a1", Some(-1)).await.unwrap();
    assert_eq!(s.feedback_by_tool().await.unwrap(), vec![("diagram".to_string(), 0, 1), ("quiz".to_string(), 0, 2)]);
}

async fn cards_are_added_once_listed_by_due_and_saved_per_user(s: Arc<dyn Store>) {
    let batch = vec![
        card("k1", "ann", "What is ATP?", "2030-01-03T00:00:00.000Z"),
        card("k2", "ann", "What is a chloroplast?", "2030-01-01T00:00:00.000Z"),
        card("k3", "ann", "What is ATP?", "2030-01-02T00:00:00.000Z"),
        card("k4", "bob", "What is ATP?", "2030-01-01T00:00:00.000Z"),
    ];
    assert_eq!(s.add_cards(&batch).await.unwrap(), 3, "ann's second `What is ATP?` is skipped");
    assert_eq!(s.add_cards(&batch[..2]).await.unwrap(), 0, "nothing new the second time");
    assert_eq!(s.add_cards(&[card("k5", "ann", "Why is the sky blue?", "2030-01-05T00:00:00.000Z")]).await.unwrap(), 1);
    assert!(matches!(
        s.add_cards(&[card("k6", "ann", " ", "2030-01-01T00:00:00.000Z")]).await,
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(s.card("ann", "k3").await, Err(StoreError::NotFound(_))));

    let ids = |l: Vec<StoredCard>| l.into_iter().map(|c| c.id).collect::<Vec<_>>();
    assert_eq!(ids(s.cards("ann", None, 10).await.unwrap()), ["k2", "k1", "k5"]);
    assert_eq!(ids(s.cards("ann", None, 2).await.unwrap()), ["k2", "k1"]);
    assert_eq!(ids(s.cards("ann", Some("2030-01-03T00:00:00.000Z"), 10).await.unwrap()), ["k2", "k1"]);
    assert_eq!(ids(s.cards("ann", Some("2029-12-31T00:00:00.000Z"), 10).await.unwrap()), Vec::<String>::new());
    assert_eq!(ids(s.cards("bob", None, 10).await.unwrap()), ["k4"]);

    assert_eq!(s.card("ann", "k1").await.unwrap(), batch[0]);
    assert!(matches!(s.card("bob", "k1").await, Err(StoreError::NotFound(_))), "another user's card");

    let mut reviewed = s.card("ann", "k2").await.unwrap();
    reviewed.due = "2030-02-01T00:00:00.000Z".into();
    reviewed.stability = 3.17;
    reviewed.difficulty = 5.5;
    reviewed.elapsed_days = 1;
    reviewed.scheduled_days = 31;
    reviewed.reps = 1;
    reviewed.lapses = 0;
    reviewed.state = "review".into();
    reviewed.last_review = Some("2030-01-01T00:00:00.000Z".into());
    s.save_card(&reviewed).await.unwrap();
    assert_eq!(s.card("ann", "k2").await.unwrap(), reviewed);
    assert_eq!(ids(s.cards("ann", None, 10).await.unwrap()), ["k1", "k5", "k2"], "reviewed, it is due later");

    // Scheduling only: front and back stay as added.
    let mut edited = reviewed.clone();
    edited.front = "changed".into();
    s.save_card(&edited).await.unwrap();
    assert_eq!(s.card("ann", "k2").await.unwrap().front, "What is a chloroplast?");

    let mut theirs = reviewed.clone();
    theirs.user_id = "bob".into();
    assert!(matches!(s.save_card(&theirs).await, Err(StoreError::NotFound(_))), "not bob's card");
    assert!(matches!(s.save_card(&card("nope", "ann", "x", "2030-01-01")).await, Err(StoreError::NotFound(_))));
}

fn run(id: &str, kind: RunKind) -> NewBuild {
    NewBuild {
        id: id.into(),
        kind,
        parent_id: None,
        prompt: "explain photosynthesis".into(),
        template: None,
        lang: Lang::En,
        provider: "openai".into(),
        model: "m".into(),
        workspace: format!("/tmp/{id}"),
        started_at: now(),
    }
}

fn queued(id: &str, kind: RunKind) -> QueuedBuild {
    QueuedBuild {
        build: run(id, kind),
        owner: "ann".into(),
        job: QueuedJob::Build(BuildArgs { prompt: format!("request {id}"), ..Default::default() }),
        idempotency_key: None,
        dedup_key: format!("ann:{id}"),
        preview_key: format!("pk-{id}"),
        first_event: None,
        limits: None,
    }
}

/// A run that ended well.
fn published() -> RunEnd {
    RunEnd::of(
        BuildFinish {
            status: RunStatus::Published,
            end_reason: None,
            fix_attempts: 0,
            turns: 1,
            tokens: Tokens::default(),
            duration_ms: 10,
            files: vec![],
            report: None,
            finished_at: now(),
        },
        vec![],
    )
}

async fn chat_runs_are_not_listed_or_counted_as_builds(s: Arc<dyn Store>) {
    let since = now();
    s.create_build(&run("b1", RunKind::Build)).await.unwrap();
    s.create_build(&run("t1", RunKind::Task)).await.unwrap();
    s.create_build(&run("chat1", RunKind::Chat)).await.unwrap();
    assert!(matches!(s.enqueue_build(&queued("b2", RunKind::Build)).await.unwrap(), Enqueued::New));
    assert!(matches!(s.enqueue_build(&queued("chat2", RunKind::Chat)).await.unwrap(), Enqueued::New));

    let ids = |l: Vec<BuildRecord>| {
        let mut v = l.into_iter().map(|b| b.start.id.0).collect::<Vec<_>>();
        v.sort();
        v
    };
    assert_eq!(ids(s.list_builds(50).await.unwrap()), ["b1", "b2", "t1"]);
    assert_eq!(ids(s.builds_of(None, 50).await.unwrap()), ["b1", "b2", "t1"]);
    assert_eq!(ids(s.builds_of(Some("ann"), 50).await.unwrap()), ["b2"]);
    assert_eq!(s.active_builds("ann").await.unwrap(), 1);
    assert_eq!(s.builds_since("ann", &since).await.unwrap().0, 1);
    // The chat run itself is still there for its own stream.
    assert_eq!(s.build("chat1").await.unwrap().start.kind, RunKind::Chat);
    assert_eq!(s.build("chat2").await.unwrap().start.kind, RunKind::Chat);

    // Nor in the success figures once they end.
    s.finish("b1", None, published()).await.unwrap();
    s.finish("chat1", None, published()).await.unwrap();
    let stats = s.stats().await.unwrap();
    assert_eq!((stats.builds, stats.published), (1, 1), "{stats:?}");
    let days = s.daily_stats(1).await.unwrap();
    assert_eq!(days.iter().map(|d| d.builds).sum::<u64>(), 1, "{days:?}");
}

both!(
    conversations_are_listed_per_user_most_recently_active_first,
    messages_round_trip_with_flags_and_name_the_conversation,
    writers_at_once_each_get_their_own_place,
    a_message_is_found_only_in_its_own_conversation_and_clear_empties_it,
    feedback_goes_on_replies_only_and_is_counted_per_tool,
    cards_are_added_once_listed_by_due_and_saved_per_user,
    chat_runs_are_not_listed_or_counted_as_builds,
);
