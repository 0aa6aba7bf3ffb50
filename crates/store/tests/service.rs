//! The service's part of the store (queue, leases, limits, dedup, cancel, users, sessions),
//! through the `Store` trait only, on both backends: SQLite and PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::sync::Arc;
use std::time::Duration;
use wright_events::{EventKind, Level};
use wright_store::*;

fn queued(id: &str, owner: &str, key: Option<&str>, request: &str, at: &str) -> QueuedBuild {
    QueuedBuild {
        build: NewBuild {
            id: id.into(),
            kind: wright_events::RunKind::Build,
            parent_id: None,
            prompt: "a countdown timer".into(),
            template: Some(Template::Auto),
            lang: Lang::En,
            provider: "openai".into(),
            model: "m".into(),
            workspace: format!("/tmp/{id}"),
            started_at: at.into(),
        },
        owner: owner.into(),
        job: QueuedJob::Build(BuildArgs { prompt: request.into(), ..Default::default() }),
        idempotency_key: key.map(String::from),
        dedup_key: format!("{owner}:{request}"),
        preview_key: format!("pk-{id}"),
        first_event: Some(EventKind::Status { message: "Queued".into(), level: Level::Info }),
        limits: None,
    }
}

/// How the service ends a build cancelled while it waits.
fn cancelled(at: &str) -> RunEnd {
    let record = BuildFinish {
        status: RunStatus::Failed,
        end_reason: Some(EndReason::Cancelled),
        fix_attempts: 0,
        turns: 0,
        tokens: Tokens::default(),
        duration_ms: 0,
        files: vec![],
        report: None,
        finished_at: at.into(),
    };
    RunEnd::of(
        record,
        vec![EventKind::Status { message: "Cancelled before it started.".into(), level: Level::Warning }],
    )
}

const T0: &str = "2026-11-24T10:00:00.000Z";
const T1: &str = "2026-11-24T10:00:01.000Z";
const T2: &str = "2026-11-24T10:00:02.000Z";
const LATER: &str = "2099-01-01T00:00:00.000Z";

/// A lease that lasts the whole test.
const HOUR: Duration = Duration::from_secs(3600);

/// A lease that has run out by the time anyone looks (after [`tick`]).
const GONE: Duration = Duration::ZERO;

/// Let the store's clock move past a lease that ended just now.
async fn tick() {
    tokio::time::sleep(Duration::from_millis(20)).await;
}

async fn the_queue_runs_in_order_and_each_build_is_claimed_once(s: Arc<dyn Store>) {
    assert_eq!(s.enqueue_build(&queued("b1", "u1", None, "{\"p\":1}", T0)).await.unwrap(), Enqueued::New);
    assert_eq!(s.enqueue_build(&queued("b2", "u1", None, "{\"p\":2}", T1)).await.unwrap(), Enqueued::New);
    assert_eq!(s.enqueue_build(&queued("b3", "u2", None, "{\"p\":1}", T2)).await.unwrap(), Enqueued::New);
    assert_eq!((s.queue_depth().await.unwrap(), s.queue_position("b3").await.unwrap()), (3, 2));
    // The queue notice was stored with the build.
    assert_eq!(s.events("b1", 0).await.unwrap().len(), 1);
    let b = s.build("b1").await.unwrap();
    assert_eq!(
        (b.status, b.owner.as_deref(), b.preview_key.as_deref()),
        (RunStatus::Queued, Some("u1"), Some("pk-b1"))
    );

    // Many workers at once: every build is claimed by exactly one, oldest first.
    let claims = futures_all(&s, 6).await;
    let mut ids: Vec<_> = claims.iter().flatten().cloned().collect();
    assert_eq!(ids.len(), 3, "{claims:?}");
    ids.sort();
    assert_eq!(ids, ["b1", "b2", "b3"]);
    assert_eq!(s.queue_depth().await.unwrap(), 0);
    assert_eq!(s.build("b1").await.unwrap().status, RunStatus::Running);
    // run_build's create_build on a claimed build keeps it (an upsert), with its owner.
    s.create_build(&queued("b1", "u1", None, "{}", T0).build).await.unwrap();
    assert_eq!(s.build("b1").await.unwrap().owner.as_deref(), Some("u1"));
}

async fn futures_all(s: &Arc<dyn Store>, n: usize) -> Vec<Option<String>> {
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move { s.claim_build(&format!("w{i}"), HOUR).await.unwrap().map(|b| b.start.id.0) })
        })
        .collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

async fn idempotency_keys_and_identical_active_requests_are_one_build(s: Arc<dyn Store>) {
    assert_eq!(s.enqueue_build(&queued("b1", "u1", Some("k"), "{\"a\":1}", T0)).await.unwrap(), Enqueued::New);
    // Same key, even with another body: the same build.
    match s.enqueue_build(&queued("b2", "u1", Some("k"), "{\"a\":2}", T1)).await.unwrap() {
        Enqueued::Existing(b) => assert_eq!(b.start.id, "b1"),
        other => panic!("{other:?}"),
    }
    // Identical body, no key, while b1 is active: b1.
    match s.enqueue_build(&queued("b3", "u1", None, "{\"a\":1}", T1)).await.unwrap() {
        Enqueued::Existing(b) => assert_eq!(b.start.id, "b1"),
        other => panic!("{other:?}"),
    }
    // Another user's identical request and key are theirs.
    assert_eq!(s.enqueue_build(&queued("b4", "u2", Some("k"), "{\"a\":1}", T1)).await.unwrap(), Enqueued::New);
    // Once b1 has ended, the identical request is a new build; the key still names b1.
    assert_eq!(s.request_cancel("b1", cancelled(T2)).await.unwrap(), CancelOutcome::WasQueued);
    assert_eq!(s.enqueue_build(&queued("b5", "u1", None, "{\"a\":1}", T2)).await.unwrap(), Enqueued::New);
    match s.enqueue_build(&queued("b6", "u1", Some("k"), "{}", T2)).await.unwrap() {
        Enqueued::Existing(b) => assert_eq!((b.start.id.as_str(), b.status), ("b1", RunStatus::Failed)),
        other => panic!("{other:?}"),
    }
    assert!(s.build("b2").await.is_err() && s.build("b3").await.is_err(), "refused twins leave nothing");
    assert!(s.events("b2", 0).await.unwrap().is_empty(), "nor their events");
}

async fn cancel_leases_and_the_reaper(s: Arc<dyn Store>) {
    s.enqueue_build(&queued("b1", "u1", None, "1", T0)).await.unwrap();
    s.enqueue_build(&queued("b2", "u1", None, "2", T1)).await.unwrap();
    assert_eq!(s.active_builds("u1").await.unwrap(), 2);
    let claimed = s.claim_build("w1", HOUR).await.unwrap().unwrap();
    assert_eq!(claimed.start.id, "b1");
    assert!(!s.cancel_requested("b1").await.unwrap());
    assert_eq!(s.request_cancel("b1", cancelled(T1)).await.unwrap(), CancelOutcome::Running);
    assert!(s.cancel_requested("b1").await.unwrap());
    assert_eq!(s.request_cancel("b2", cancelled(T1)).await.unwrap(), CancelOutcome::WasQueued);
    assert_eq!(s.build("b2").await.unwrap().end_reason, Some(EndReason::Cancelled));
    assert_eq!(s.request_cancel("b2", cancelled(T1)).await.unwrap(), CancelOutcome::AlreadyEnded);
    assert!(matches!(s.request_cancel("nope", cancelled(T1)).await, Err(StoreError::NotFound(_))));
    assert!(s.claim_build("w2", HOUR).await.unwrap().is_none(), "a cancelled build is never claimed");

    // The lease: renewed by its worker only; expired ones are taken by exactly one reaper.
    assert!(s.renew_lease("b1", "w1", HOUR).await.unwrap());
    assert!(!s.renew_lease("b1", "w9", HOUR).await.unwrap());
    assert!(s.take_expired("r", HOUR, "").await.unwrap().is_empty(), "its lease has not run out");
    assert!(s.renew_lease("b1", "w1", GONE).await.unwrap());
    tick().await;
    let lost = s.take_expired("r1", HOUR, "").await.unwrap();
    assert_eq!(lost.iter().map(|b| b.start.id.as_str()).collect::<Vec<_>>(), ["b1"]);
    assert!(s.take_expired("r2", HOUR, "").await.unwrap().is_empty(), "taken once");
    assert!(!s.renew_lease("b1", "w1", HOUR).await.unwrap(), "the old worker lost it");
    assert!(s.renew_lease("b1", "r1", HOUR).await.unwrap(), "the reaper holds it");
    // A `wright run` build has no lease and is never reaped.
    s.create_build(&queued("cli", "x", None, "", T0).build).await.unwrap();
    assert!(s.renew_lease("b1", "r1", GONE).await.unwrap());
    tick().await;
    let lost = s.take_expired("r3", HOUR, "").await.unwrap();
    assert_eq!(lost.iter().map(|b| b.start.id.as_str()).collect::<Vec<_>>(), ["b1"], "not cli");
}

async fn hourly_counts_and_lists_per_owner(s: Arc<dyn Store>) {
    // Counted by when they were queued, which is now (by the store's clock).
    s.enqueue_build(&queued("b0", "u1", None, "0", &now())).await.unwrap();
    tick().await;
    let since = now();
    tick().await;
    for i in 1..3 {
        s.enqueue_build(&queued(&format!("b{i}"), "u1", None, &i.to_string(), &now())).await.unwrap();
    }
    s.enqueue_build(&queued("o", "u2", None, "x", &now())).await.unwrap();
    let (count, oldest) = s.builds_since("u1", &since).await.unwrap();
    assert_eq!(count, 2);
    let oldest = oldest.unwrap();
    assert!(oldest > since && oldest <= now(), "{oldest} after {since}");
    assert_eq!(s.builds_since("u1", LATER).await.unwrap(), (0, None));
    assert_eq!(s.builds_of(Some("u2"), 10).await.unwrap().len(), 1);
    assert_eq!(s.builds_of(None, 10).await.unwrap().len(), 4);
    assert_eq!(s.builds_of(Some("u1"), 2).await.unwrap().len(), 2);
}

async fn limits_refuse_at_once_and_per_hour(s: Arc<dyn Store>) {
    let limited = |id: &str| {
        let mut q = queued(id, "u1", None, id, &now());
        q.limits = Some(Limits { concurrent: 2, per_hour: 3 });
        q
    };
    // A chat turn is no build: it counts towards neither limit.
    let mut chat = queued("chat", "u1", None, "chat", &now());
    chat.build.kind = wright_events::RunKind::Chat;
    assert_eq!(s.enqueue_build(&chat).await.unwrap(), Enqueued::New);
    assert_eq!(s.enqueue_build(&limited("b1")).await.unwrap(), Enqueued::New);
    assert_eq!(s.enqueue_build(&limited("b2")).await.unwrap(), Enqueued::New);
    assert_eq!(
        s.enqueue_build(&limited("b3")).await.unwrap(),
        Enqueued::Limited { kind: LimitKind::Concurrent, count: 2, oldest: None }
    );
    assert!(matches!(s.build("b3").await, Err(StoreError::NotFound(_))), "nothing of it is stored");
    assert!(s.events("b3", 0).await.unwrap().is_empty());
    // Another owner has limits of their own.
    let mut theirs = limited("o1");
    theirs.owner = "u2".into();
    theirs.dedup_key = "u2:o1".into();
    assert_eq!(s.enqueue_build(&theirs).await.unwrap(), Enqueued::New);

    // An ended build frees its place at once, but still counts in the hour.
    assert_eq!(s.request_cancel("b1", cancelled(T2)).await.unwrap(), CancelOutcome::WasQueued);
    assert_eq!(s.enqueue_build(&limited("b3")).await.unwrap(), Enqueued::New);
    for id in ["b2", "b3"] {
        assert_eq!(s.request_cancel(id, cancelled(T2)).await.unwrap(), CancelOutcome::WasQueued);
    }
    assert_eq!(s.active_builds("u1").await.unwrap(), 0);
    match s.enqueue_build(&limited("b4")).await.unwrap() {
        Enqueued::Limited { kind: LimitKind::Hourly, count: 3, oldest: Some(oldest) } => {
            assert!(oldest <= now(), "{oldest}")
        }
        other => panic!("{other:?}"),
    }
    // A retry of a queued build is found before any limit.
    match s.enqueue_build(&limited("chat")).await.unwrap() {
        Enqueued::Existing(b) => assert_eq!(b.start.id, "chat"),
        other => panic!("{other:?}"),
    }
    // Without limits (a local run) nothing is refused.
    assert_eq!(s.enqueue_build(&queued("b5", "u1", None, "b5", &now())).await.unwrap(), Enqueued::New);
}

async fn forty_requests_at_once_queue_no_more_than_the_limit(s: Arc<dyn Store>) {
    let handles: Vec<_> = (0..40)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                let id = format!("b{i:02}");
                let mut q = queued(&id, "u1", None, &id, &now());
                q.limits = Some(Limits { concurrent: 5, per_hour: 100 });
                s.enqueue_build(&q).await.unwrap()
            })
        })
        .collect();
    let mut new = 0;
    for h in handles {
        match h.await.unwrap() {
            Enqueued::New => new += 1,
            Enqueued::Limited { kind: LimitKind::Concurrent, count: 5, oldest: None } => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(new, 5);
    assert_eq!((s.active_builds("u1").await.unwrap(), s.queue_depth().await.unwrap()), (5, 5));
}

async fn twenty_workers_claim_ten_builds_once_each(s: Arc<dyn Store>) {
    for i in 0..10 {
        let id = format!("b{i}");
        assert_eq!(s.enqueue_build(&queued(&id, &format!("u{i}"), None, &id, &now())).await.unwrap(), Enqueued::New);
    }
    let handles: Vec<_> = (0..20)
        .map(|w| {
            let s = s.clone();
            tokio::spawn(async move {
                let mut got = Vec::new();
                while let Some(b) = s.claim_build(&format!("w{w}"), HOUR).await.unwrap() {
                    assert_eq!(b.status, RunStatus::Running);
                    got.push(b.start.id.0);
                }
                got
            })
        })
        .collect();
    let mut claimed = Vec::new();
    for h in handles {
        claimed.extend(h.await.unwrap());
    }
    claimed.sort();
    let all: Vec<String> = (0..10).map(|i| format!("b{i}")).collect();
    assert_eq!(claimed, all, "each build claimed exactly once");
    assert_eq!(s.queue_depth().await.unwrap(), 0);
}

async fn reapers_at_once_take_each_lost_build_once(s: Arc<dyn Store>) {
    for i in 0..10 {
        let id = format!("b{i}");
        s.enqueue_build(&queued(&id, &format!("u{i}"), None, &id, &now())).await.unwrap();
        s.claim_build(&format!("w{i}"), GONE).await.unwrap().unwrap();
    }
    tick().await;
    let handles: Vec<_> = (0..5)
        .map(|r| {
            let s = s.clone();
            tokio::spawn(async move { s.take_expired(&format!("r{r}"), HOUR, "").await.unwrap() })
        })
        .collect();
    let mut taken = Vec::new();
    for h in handles {
        taken.extend(h.await.unwrap().into_iter().map(|b| b.start.id.0));
    }
    taken.sort();
    let all: Vec<String> = (0..10).map(|i| format!("b{i}")).collect();
    assert_eq!(taken, all, "each lost build taken by exactly one reaper");
}

async fn users_tokens_sessions_and_login_links(s: Arc<dyn Store>) {
    let alice = new_user("alice", Role::User);
    s.create_user(&alice, "hash-a").await.unwrap();
    assert!(matches!(s.create_user(&new_user("alice", Role::Admin), "hash-b").await, Err(StoreError::Invalid(_))));
    assert_eq!(s.user_by_token("hash-a").await.unwrap().unwrap().name, "alice");
    assert!(s.user_by_token("hash-x").await.unwrap().is_none());

    s.put_session("login-1", &alice.id, SessionKind::Login, LATER).await.unwrap();
    assert!(s.session_user("login-1", SessionKind::Session, T0).await.unwrap().is_none(), "kinds do not mix");
    assert_eq!(s.session_user("login-1", SessionKind::Login, T0).await.unwrap().unwrap().id, alice.id);
    assert!(s.session_user("login-1", SessionKind::Login, T0).await.unwrap().is_none(), "a login link works once");
    s.put_session("sess-1", &alice.id, SessionKind::Session, T1).await.unwrap();
    assert!(s.session_user("sess-1", SessionKind::Session, T0).await.unwrap().is_some());
    assert!(s.session_user("sess-1", SessionKind::Session, T2).await.unwrap().is_none(), "expired");
    s.put_session("sess-2", &alice.id, SessionKind::Session, LATER).await.unwrap();
    s.end_session("sess-2").await.unwrap();
    assert!(s.session_user("sess-2", SessionKind::Session, T0).await.unwrap().is_none());

    s.put_session("sess-3", &alice.id, SessionKind::Session, LATER).await.unwrap();
    assert!(s.remove_user("alice").await.unwrap());
    assert!(!s.remove_user("alice").await.unwrap());
    assert!(s.user_by_token("hash-a").await.unwrap().is_none());
    assert!(s.session_user("sess-3", SessionKind::Session, T0).await.unwrap().is_none(), "sessions go with the user");
    s.log_refusal("u1", "hourly").await.unwrap();
}

async fn a_build_whose_lease_ran_out_runs_again_until_its_limit(s: Arc<dyn Store>) {
    s.enqueue_build(&queued("b1", "u1", None, "1", T0)).await.unwrap();
    s.enqueue_build(&queued("b2", "u1", None, "2", T1)).await.unwrap();
    let claim = |w: &'static str| {
        let s = s.clone();
        async move { s.claim_build(w, HOUR).await.unwrap().unwrap() }
    };
    // Its server is killed: the lease it last renewed runs out.
    let lapse = |w: &'static str| {
        let s = s.clone();
        async move {
            assert!(s.renew_lease("b1", w, GONE).await.unwrap());
            tick().await;
        }
    };
    let first = claim("w1").await;
    assert_eq!((first.start.id.as_str(), first.attempt), ("b1", 1));
    // The run wrote some of its conversation and events, then its server was killed.
    let turn = |idx| Turn {
        build_id: "b1".into(),
        idx,
        phase: "GENERATING".into(),
        role: "assistant".into(),
        message: serde_json::json!({"role": "assistant", "content": "x"}),
        ts: T1.into(),
        tokens: Tokens::default(),
    };
    s.append_turn(&turn(0), Some("w1")).await.unwrap();
    assert!(matches!(s.append_turn(&turn(1), Some("w9")).await, Err(StoreError::NotHolder(_))), "fenced");
    s.append("b1", Some("w1"), vec![Draft::now(EventKind::Started { worker: "w1".into() })]).await.unwrap();
    lapse("w1").await;
    // Past its lease, w1 holds nothing, though no one has taken the build and its name is
    // still on it: a frozen worker that wakes up writes nothing.
    let late = Draft::now(EventKind::Status { message: "late".into(), level: Level::Info });
    assert!(matches!(s.append("b1", Some("w1"), vec![late]).await, Err(StoreError::NotHolder(_))));
    assert!(matches!(s.append_turn(&turn(1), Some("w1")).await, Err(StoreError::NotHolder(_))));
    assert_eq!(s.build("b1").await.unwrap().status, RunStatus::Running, "nobody took it yet");

    // A reaper spares its own process's workers (alive, their renewals held up).
    assert!(s.take_expired("r0", HOUR, "w").await.unwrap().is_empty());

    let max_runs = 3;
    for attempt in 2..=max_runs {
        tick().await;
        let lost = s.take_expired("r1", HOUR, "").await.unwrap();
        assert_eq!(lost.iter().map(|b| b.start.id.as_str()).collect::<Vec<_>>(), ["b1"]);
        assert_eq!(
            s.restart_build("b1", "someone-else", max_runs, RestartReason::WorkerLost).await.unwrap(),
            Restart::NotHeld
        );
        let Restart::Requeued(event) = s.restart_build("b1", "r1", max_runs, RestartReason::WorkerLost).await.unwrap()
        else {
            panic!("not re-queued")
        };
        // Stored with the build, right after the last event: the stream stays gapless.
        let last = s.events("b1", 0).await.unwrap().last().unwrap().seq;
        assert_eq!(event.seq, last);
        assert_eq!(event.kind, EventKind::Restarted { attempt, reason: RestartReason::WorkerLost });
        assert_eq!(s.events("b1", last.0 - 1).await.unwrap(), vec![*event]);
        let b = s.build("b1").await.unwrap();
        assert_eq!((b.status, b.attempt), (RunStatus::Queued, attempt));
        assert!(s.turns("b1").await.unwrap().is_empty(), "the re-run writes its conversation anew");
        assert_eq!(
            s.restart_build("b1", "r1", max_runs, RestartReason::WorkerLost).await.unwrap(),
            Restart::NotHeld,
            "once"
        );
        // It keeps its place: ahead of b2, which was queued after it.
        assert_eq!(s.queue_position("b1").await.unwrap(), 0);
        let again = claim("w2").await;
        assert_eq!((again.start.id.as_str(), again.attempt), ("b1", attempt));
        // The re-run's conversation starts at turn 0 again; the dropped run's late turns are refused.
        assert!(matches!(s.append_turn(&turn(5), Some("w1")).await, Err(StoreError::NotHolder(_))));
        s.append_turn(&turn(0), Some("w2")).await.unwrap();
        lapse("w2").await;
    }
    // Past the limit: the caller ends it.
    tick().await;
    s.take_expired("r1", HOUR, "").await.unwrap();
    assert_eq!(
        s.restart_build("b1", "r1", max_runs, RestartReason::WorkerLost).await.unwrap(),
        Restart::Exhausted { attempts: max_runs }
    );
    assert_eq!(s.build("b1").await.unwrap().status, RunStatus::Running, "until the caller ends it");

    // A build someone asked to cancel is not run again.
    let b2 = claim("w3").await;
    assert_eq!(b2.start.id, "b2");
    assert_eq!(s.request_cancel("b2", cancelled(T2)).await.unwrap(), CancelOutcome::Running);
    assert_eq!(s.restart_build("b2", "w3", max_runs, RestartReason::Shutdown).await.unwrap(), Restart::Cancelled);
}

async fn a_retry_is_found_before_it_is_queued(s: Arc<dyn Store>) {
    s.enqueue_build(&queued("b1", "u1", Some("k"), "{\"a\":1}", T0)).await.unwrap();
    let found = |key: Option<&'static str>, dedup: &'static str| {
        let s = s.clone();
        async move { s.existing_build("u1", key, dedup).await.unwrap().map(|b| b.start.id.0) }
    };
    assert_eq!(found(Some("k"), "other").await.as_deref(), Some("b1"), "by its key");
    assert_eq!(found(None, "u1:{\"a\":1}").await.as_deref(), Some("b1"), "an identical active request");
    assert_eq!(found(Some("k2"), "other").await, None);
    assert_eq!(s.existing_build("u2", Some("k"), "u1:{\"a\":1}").await.unwrap(), None, "another user's");

    // b1 ends: its record and its `complete` together.
    let finish = BuildFinish {
        status: RunStatus::Published,
        end_reason: None,
        fix_attempts: 0,
        turns: 2,
        tokens: Tokens::default(),
        duration_ms: 10,
        files: vec!["index.html".into()],
        report: None,
        finished_at: T1.into(),
    };
    s.finish("b1", None, RunEnd::of(finish, vec![])).await.unwrap();
    assert_eq!(found(None, "u1:{\"a\":1}").await, None, "an ended build is no twin");
    assert_eq!(found(Some("k"), "x").await.as_deref(), Some("b1"), "its key still names it");
    let events = s.events("b1", 0).await.unwrap();
    assert_eq!(events.iter().map(|e| e.kind.type_name()).collect::<Vec<_>>(), ["status", "complete"]);
}

async fn lent_projects_are_remembered_until_given_back(s: Arc<dyn Store>) {
    let p = LentProject {
        run_id: "r1".into(),
        path: "/srv/project".into(),
        uid: 1000,
        gid: 1000,
        pid: 42,
        pid_start: "12345".into(),
        lent_at: T0.into(),
    };
    s.lend_project(&p).await.unwrap();
    assert_eq!(s.lent_projects().await.unwrap(), vec![p]);
    s.project_returned("r1").await.unwrap();
    assert!(s.lent_projects().await.unwrap().is_empty());
}

async fn a_worker_that_lost_its_build_cannot_finish_it(s: Arc<dyn Store>) {
    s.enqueue_build(&queued("b1", "u1", None, "1", T0)).await.unwrap();
    s.claim_build("w1", GONE).await.unwrap().unwrap();
    // w1's lease runs out; the reaper puts the build back and w2 runs it again.
    tick().await;
    assert_eq!(s.take_expired("r1", HOUR, "").await.unwrap().len(), 1);
    assert!(matches!(s.restart_build("b1", "r1", 3, RestartReason::WorkerLost).await.unwrap(), Restart::Requeued(_)));
    s.claim_build("w2", HOUR).await.unwrap().unwrap();
    let finish = |status: RunStatus, reason: Option<EndReason>| BuildFinish {
        status,
        end_reason: reason,
        fix_attempts: 1,
        turns: 3,
        tokens: Tokens::default(),
        duration_ms: 10,
        files: vec![],
        report: Some("ended".into()),
        finished_at: T2.into(),
    };

    let late = finish(RunStatus::Failed, Some(EndReason::Cancelled));
    let end = |f: BuildFinish| RunEnd::of(f, vec![]);
    assert!(
        matches!(s.finish("b1", Some("w1"), end(late.clone())).await, Err(StoreError::NotHolder(_))),
        "w1 no longer holds it"
    );
    assert!(
        matches!(s.finish("b1", None, end(late.clone())).await, Err(StoreError::NotHolder(_))),
        "nor does a caller that holds nothing"
    );
    let b = s.build("b1").await.unwrap();
    assert_eq!((b.status, b.end_reason, b.finished_at), (RunStatus::Running, None, None));

    assert!(matches!(
        s.finish("b1", Some("w2"), end(finish(RunStatus::Published, None))).await.unwrap(),
        Finished::Now(_)
    ));
    assert_eq!(s.build("b1").await.unwrap().status, RunStatus::Published);
    // Once ended, even its holder cannot change it again.
    assert!(matches!(s.finish("b1", Some("w2"), end(late)).await.unwrap(), Finished::Already { .. }));
    assert_eq!(s.build("b1").await.unwrap().status, RunStatus::Published);
}

async fn a_follow_up_is_refused_while_another_build_works_in_its_folder(s: Arc<dyn Store>) {
    let follow_up = |id: &str, at: &str| {
        let mut q = queued(id, "u1", None, id, at);
        q.build.parent_id = Some("p".into());
        q.build.workspace = "/tmp/p".into();
        q
    };
    assert_eq!(s.enqueue_build(&follow_up("c1", T0)).await.unwrap(), Enqueued::New);
    assert_eq!(s.enqueue_build(&follow_up("c2", T1)).await.unwrap(), Enqueued::FolderBusy("c1".into()));
    assert!(matches!(s.build("c2").await, Err(StoreError::NotFound(_))), "nothing of it is stored");
    s.claim_build("w1", HOUR).await.unwrap().unwrap();
    assert_eq!(s.enqueue_build(&follow_up("c2", T1)).await.unwrap(), Enqueued::FolderBusy("c1".into()), "running");
    let done = BuildFinish {
        status: RunStatus::Published,
        end_reason: None,
        fix_attempts: 0,
        turns: 1,
        tokens: Tokens::default(),
        duration_ms: 10,
        files: vec![],
        report: None,
        finished_at: T2.into(),
    };
    assert!(matches!(s.finish("c1", Some("w1"), RunEnd::of(done, vec![])).await.unwrap(), Finished::Now(_)));
    assert_eq!(s.enqueue_build(&follow_up("c2", T2)).await.unwrap(), Enqueued::New, "free once it ended");
}

/// A claim records its own folder while it holds the build; a stale run (its record written
/// again as its run starts) never moves the build back to its folder.
async fn a_claim_records_its_folder_and_a_stale_run_cannot_move_it(s: Arc<dyn Store>) {
    let q = queued("f1", "u1", None, "1", T0);
    s.enqueue_build(&q).await.unwrap();
    s.claim_build("w1.1", HOUR).await.unwrap().unwrap();
    s.renew_lease("f1", "w1.1", GONE).await.unwrap();
    tick().await;
    assert_eq!(s.take_expired("r", HOUR, "").await.unwrap().len(), 1);
    assert!(matches!(s.restart_build("f1", "r", 5, RestartReason::WorkerLost).await.unwrap(), Restart::Requeued(_)));
    let again = s.claim_build("w2.1", HOUR).await.unwrap().unwrap();
    assert_eq!(again.attempt, 2);
    assert!(!s.set_claim_folder("f1", "w1.1", "/tmp/f1.9").await.unwrap(), "not the holder");
    assert!(s.set_claim_folder("f1", "w2.1", "/tmp/f1.2").await.unwrap());
    // The stale run writes its record as its run starts: the folder stays the holder's.
    s.create_build(&q.build).await.unwrap();
    assert_eq!(s.build("f1").await.unwrap().start.workspace, "/tmp/f1.2");
}

both!(
    a_claim_records_its_folder_and_a_stale_run_cannot_move_it,
    the_queue_runs_in_order_and_each_build_is_claimed_once,
    idempotency_keys_and_identical_active_requests_are_one_build,
    cancel_leases_and_the_reaper,
    hourly_counts_and_lists_per_owner,
    limits_refuse_at_once_and_per_hour,
    forty_requests_at_once_queue_no_more_than_the_limit,
    twenty_workers_claim_ten_builds_once_each,
    reapers_at_once_take_each_lost_build_once,
    users_tokens_sessions_and_login_links,
    a_build_whose_lease_ran_out_runs_again_until_its_limit,
    a_retry_is_found_before_it_is_queued,
    lent_projects_are_remembered_until_given_back,
    a_worker_that_lost_its_build_cannot_finish_it,
    a_follow_up_is_refused_while_another_build_works_in_its_folder,
);
