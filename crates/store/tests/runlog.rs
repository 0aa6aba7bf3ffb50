//! The run log's contract, through the `Store` trait only, so every backend runs this one
//! suite: numbering under concurrent writers, fencing, finishing exactly once, and following
//! with no gap and no duplicate.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use futures::StreamExt;
use std::collections::HashSet;
use std::sync::Arc;
use wright_events::{EventKind, EventSink, Level, RunKind};
use wright_store::*;

mod support;

async fn sqlite() -> (tempfile::TempDir, Arc<dyn Store>) {
    let dir = tempfile::tempdir().unwrap();
    let s = open(&format!("sqlite://{}", dir.path().join("w.db").display())).await.unwrap();
    (dir, s)
}

fn new_run(id: &str) -> NewBuild {
    NewBuild {
        id: id.into(),
        kind: RunKind::Build,
        parent_id: None,
        prompt: "a countdown timer".into(),
        template: Some(Template::Static),
        lang: Lang::En,
        provider: "openai".into(),
        model: "m".into(),
        workspace: format!("/tmp/{id}"),
        started_at: now(),
    }
}

fn say(text: impl Into<String>) -> Draft {
    Draft::now(EventKind::Status { message: text.into(), level: Level::Info })
}

fn end(status: RunStatus) -> RunEnd {
    let record = BuildFinish {
        status,
        end_reason: (status == RunStatus::Failed).then_some(EndReason::Cancelled),
        fix_attempts: 1,
        turns: 3,
        tokens: Tokens::default(),
        duration_ms: 42,
        files: vec!["index.html".into()],
        report: Some("done".into()),
        finished_at: now(),
    };
    RunEnd::of(record, vec![EventKind::Error { message: "it ended".into(), detail: None }]).checked(true, None)
}

fn message(e: &wright_events::Event) -> String {
    match &e.kind {
        EventKind::Status { message, .. } => message.clone(),
        other => other.type_name().to_string(),
    }
}

/// Eight writers append to one run at once; the store numbers every event 1..n exactly once.
async fn concurrent_appenders_get_gapless_unique_seqs(s: Arc<dyn Store>) {
    s.create_build(&new_run("r8")).await.unwrap();
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let s = s.clone();
            tokio::spawn(async move {
                for i in 0..25 {
                    // Groups of one to three events, like a log writer's.
                    let group: Vec<Draft> = (0..=(i % 3)).map(|k| say(format!("w{w}-{i}-{k}"))).collect();
                    s.append("r8", None, group).await.unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    let events = s.events("r8", 0).await.unwrap();
    let expected = 8 * (0..25).map(|i| i % 3 + 1).sum::<usize>();
    assert_eq!(events.len(), expected);
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64 + 1, "seq {} at position {i}", e.seq);
    }
    let distinct: HashSet<String> = events.iter().map(message).collect();
    assert_eq!(distinct.len(), expected, "an event was stored twice");
    // Each writer's groups stay together and in its order.
    for w in 0..8 {
        let mine: Vec<String> = events.iter().map(message).filter(|m| m.starts_with(&format!("w{w}-"))).collect();
        let mut sorted = mine.clone();
        sorted.sort_by_key(|m| {
            let parts: Vec<u32> = m[1..].split('-').map(|p| p.parse().unwrap()).collect();
            (parts[1], parts[2])
        });
        assert_eq!(mine, sorted);
    }
}

/// A refused write leaves no lock behind: the claim right after it finds the build. (sqlx
/// rolls back a dropped transaction only later, in a task of its own; until then a claim's
/// `SKIP LOCKED` would pass the locked build by.)
async fn a_refused_writer_leaves_the_build_claimable(s: Arc<dyn Store>) {
    for i in 0..40 {
        let id = format!("rc{i}");
        let queued = QueuedBuild {
            build: new_run(&id),
            owner: "u1".into(),
            job: QueuedJob::Build(BuildArgs { prompt: "{}".into(), ..Default::default() }),
            idempotency_key: None,
            dedup_key: format!("u1:{id}"),
            preview_key: format!("pk{i}"),
            first_event: None,
            limits: None,
        };
        assert_eq!(s.enqueue_build(&queued).await.unwrap(), Enqueued::New);
        assert!(matches!(s.append(&id, Some("w1"), vec![say("no")]).await, Err(StoreError::NotHolder(_))));
        assert!(matches!(s.finish(&id, Some("w1"), end(RunStatus::Failed)).await, Err(StoreError::NotHolder(_))));
        let claimed = s.claim_build("w1", std::time::Duration::from_secs(3600)).await.unwrap();
        assert_eq!(claimed.map(|b| b.start.id.to_string()), Some(id.clone()), "round {i}");
        s.finish(&id, Some("w1"), end(RunStatus::Failed)).await.unwrap();
    }
}

/// A worker whose lease ran out and whose run a reaper took over is refused, in the same
/// transaction that would have stored its events; so is anyone after the end.
async fn a_stale_writer_is_refused(s: Arc<dyn Store>) {
    let queued = QueuedBuild {
        build: new_run("rq"),
        owner: "u1".into(),
        job: QueuedJob::Build(BuildArgs { prompt: "{}".into(), ..Default::default() }),
        idempotency_key: None,
        dedup_key: "u1:rq".into(),
        preview_key: "pk".into(),
        first_event: None,
        limits: None,
    };
    assert_eq!(s.enqueue_build(&queued).await.unwrap(), Enqueued::New);
    // Nobody holds a queued build: the service may write its notices, a worker may not.
    s.append("rq", None, vec![say("queued")]).await.unwrap();
    assert!(matches!(s.append("rq", Some("w1"), vec![say("no")]).await, Err(StoreError::NotHolder(_))));
    assert!(s.claim_build("w1", std::time::Duration::from_secs(3600)).await.unwrap().is_some());
    s.append("rq", Some("w1"), vec![say("w1 runs it")]).await.unwrap();
    assert!(matches!(s.append("rq", None, vec![say("no")]).await, Err(StoreError::NotHolder(_))));
    assert!(matches!(s.append("rq", Some("w2"), vec![say("no")]).await, Err(StoreError::NotHolder(_))));
    // w1's lease runs out (its last renewal asked for none): by the database's clock it holds
    // nothing, before anyone takes the build over.
    assert!(s.renew_lease("rq", "w1", std::time::Duration::ZERO).await.unwrap());
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert!(matches!(s.append("rq", Some("w1"), vec![say("frozen")]).await, Err(StoreError::NotHolder(_))));
    assert!(matches!(s.finish("rq", Some("w1"), end(RunStatus::Failed)).await, Err(StoreError::NotHolder(_))));
    // A lease that ran out is gone: its holder cannot renew it either.
    assert!(!s.renew_lease("rq", "w1", std::time::Duration::from_secs(3600)).await.unwrap());
    // The reaper takes the build.
    let taken = s.take_expired("reaper", std::time::Duration::from_secs(3600), "spare-").await.unwrap();
    assert_eq!(taken.len(), 1);
    assert!(matches!(s.append("rq", Some("w1"), vec![say("stale")]).await, Err(StoreError::NotHolder(_))));
    assert!(matches!(s.finish("rq", Some("w1"), end(RunStatus::Failed)).await, Err(StoreError::NotHolder(_))));
    let done = s.finish("rq", Some("reaper"), end(RunStatus::Failed)).await.unwrap();
    assert!(matches!(done, Finished::Now(_)));
    assert!(matches!(s.append("rq", Some("reaper"), vec![say("after")]).await, Err(StoreError::Ended(_))));
    let said: Vec<String> = s.events("rq", 0).await.unwrap().iter().map(message).collect();
    assert_eq!(said, ["queued", "w1 runs it", "error", "complete"]);
    let record = s.build("rq").await.unwrap();
    assert_eq!((record.status, record.end_reason), (RunStatus::Failed, Some(EndReason::Cancelled)));
}

/// A run ends once: the second `finish` changes nothing and answers with the first outcome.
async fn finish_twice_stores_one_complete(s: Arc<dyn Store>) {
    s.create_build(&new_run("rf")).await.unwrap();
    s.append("rf", None, vec![say("working")]).await.unwrap();
    // A `complete` that is appended, or an end that is not one, is refused.
    let forged = Draft::now(end(RunStatus::Published).complete);
    assert!(matches!(s.append("rf", None, vec![forged]).await, Err(StoreError::Invalid(_))));
    let mut not_an_end = end(RunStatus::Published);
    not_an_end.complete = EventKind::Status { message: "x".into(), level: Level::Info };
    assert!(matches!(s.finish("rf", None, not_an_end).await, Err(StoreError::Invalid(_))));

    let first = s.finish("rf", None, end(RunStatus::Published)).await.unwrap();
    let Finished::Now(stored) = &first else { panic!("the first finish ends the run") };
    assert_eq!(stored.iter().map(|l| l.event.seq.0).collect::<Vec<_>>(), [2, 3]);
    let second = s.finish("rf", None, end(RunStatus::Failed)).await.unwrap();
    match &second {
        Finished::Already { complete, status } => {
            assert_eq!(*status, RunStatus::Published);
            assert_eq!(complete.as_ref(), first.complete());
        }
        Finished::Now(_) => panic!("a second finish must not end the run again"),
    }
    let events = s.events("rf", 0).await.unwrap();
    assert_eq!(events.iter().filter(|e| e.kind.type_name() == "complete").count(), 1);
    assert_eq!(events.last().unwrap().kind.type_name(), "complete");
    let record = s.build("rf").await.unwrap();
    assert_eq!((record.status, record.duration_ms, record.files.len()), (RunStatus::Published, Some(42), 1));
    assert!(s.has_ended("rf").await.unwrap());
}

/// Following from any `after` yields exactly the stored tail, through `complete`, whether the
/// events were stored before the follower came or arrive while it follows.
async fn subscribe_from_every_after_equals_the_stored_tail(s: Arc<dyn Store>) {
    s.create_build(&new_run("rs")).await.unwrap();
    for i in 0..10 {
        s.append("rs", None, vec![say(format!("before {i}"))]).await.unwrap();
    }
    // Followers that join before the rest is written: from every point of what exists.
    let followers: Vec<_> = (0..=10u64)
        .map(|after| {
            let stream = s.subscribe("rs", after);
            tokio::spawn(async move { stream.map(|r| r.unwrap().event.seq.0).collect::<Vec<u64>>().await })
        })
        .collect();
    let writer = {
        let s = s.clone();
        tokio::spawn(async move {
            for i in 0..40 {
                s.append("rs", None, vec![say(format!("live {i}")), say(format!("live {i}b"))]).await.unwrap();
                if i % 8 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            s.finish("rs", None, end(RunStatus::Published)).await.unwrap();
        })
    };
    writer.await.unwrap();
    let stored = s.events("rs", 0).await.unwrap();
    let last = stored.last().unwrap().seq.0;
    assert_eq!(last, 10 + 80 + 2);
    for (after, f) in followers.into_iter().enumerate() {
        let got = tokio::time::timeout(std::time::Duration::from_secs(20), f).await.unwrap().unwrap();
        assert_eq!(got, ((after as u64 + 1)..=last).collect::<Vec<_>>(), "follower after {after}");
    }
    // Afterwards, from every point of the finished stream, including past its end.
    for after in 0..=last {
        let got: Vec<u64> = s.subscribe("rs", after).map(|r| r.unwrap().event.seq.0).collect().await;
        assert_eq!(got, ((after + 1)..=last).collect::<Vec<_>>(), "late follower after {after}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_concurrent_appenders_get_gapless_unique_seqs() {
    let (_d, s) = sqlite().await;
    concurrent_appenders_get_gapless_unique_seqs(s).await;
}

#[tokio::test]
async fn sqlite_a_refused_writer_leaves_the_build_claimable() {
    let (_d, s) = sqlite().await;
    a_refused_writer_leaves_the_build_claimable(s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_stale_writer_is_refused() {
    let (_d, s) = sqlite().await;
    a_stale_writer_is_refused(s).await;
}

#[tokio::test]
async fn sqlite_finish_twice_stores_one_complete() {
    let (_d, s) = sqlite().await;
    finish_twice_stores_one_complete(s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_subscribe_from_every_after_equals_the_stored_tail() {
    let (_d, s) = sqlite().await;
    subscribe_from_every_after_equals_the_stored_tail(s).await;
}

/// A run's writer whose holder the store refuses (its lease ran out by the database's clock,
/// its name still on the build) tells the run's owner through its token, for an append and for
/// the run's end: the run is dropped and put back, never left running with its ending refused.
async fn a_refused_writer_tells_its_owner(s: Arc<dyn Store>) {
    let queued = |id: &str| QueuedBuild {
        build: new_run(id),
        owner: "u1".into(),
        job: QueuedJob::Build(BuildArgs { prompt: "{}".into(), ..Default::default() }),
        idempotency_key: None,
        dedup_key: format!("u1:{id}"),
        preview_key: format!("pk-{id}"),
        first_event: None,
        limits: None,
    };
    let hour = std::time::Duration::from_secs(3600);
    for (id, by_finish) in [("ra", false), ("rf", true)] {
        assert_eq!(s.enqueue_build(&queued(id)).await.unwrap(), Enqueued::New);
        assert_eq!(s.claim_build("w1", hour).await.unwrap().unwrap().start.id, id);
        let refused = tokio_util::sync::CancellationToken::new();
        let writer = LogWriter::fenced(s.clone(), id, Some("w1"), vec![], refused.clone());
        writer.accept(&wright_events::Event {
            seq: wright_events::Seq(0),
            build: id.into(),
            ts: now(),
            kind: EventKind::Status { message: "while held".into(), level: Level::Info },
        });
        writer.flush().await;
        assert!(!refused.is_cancelled(), "held: nothing refused");
        assert!(s.renew_lease(id, "w1", std::time::Duration::ZERO).await.unwrap());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        if by_finish {
            assert!(matches!(writer.finish(end(RunStatus::Published)).await, Err(StoreError::NotHolder(_))));
        } else {
            writer.accept(&wright_events::Event {
                seq: wright_events::Seq(0),
                build: id.into(),
                ts: now(),
                kind: EventKind::Status { message: "past the lease".into(), level: Level::Info },
            });
            writer.flush().await;
            assert_eq!(writer.failures(), 1);
        }
        assert!(refused.is_cancelled(), "{id}: the owner is told");
        let said: Vec<String> = s.events(id, 0).await.unwrap().iter().map(message).collect();
        assert_eq!(said, ["while held"], "{id}");
    }
    // The holder, though past its lease, may still give its builds back to the queue.
    for id in ["ra", "rf"] {
        assert!(matches!(s.restart_build(id, "w1", 3, RestartReason::WorkerLost).await.unwrap(), Restart::Requeued(_)));
    }
}

#[tokio::test]
async fn sqlite_a_refused_writer_tells_its_owner() {
    let (_d, s) = sqlite().await;
    a_refused_writer_tells_its_owner(s).await;
}

mod postgres {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_refused_writer_tells_its_owner() {
        super::a_refused_writer_tells_its_owner(support::postgres().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_appenders_get_gapless_unique_seqs() {
        super::concurrent_appenders_get_gapless_unique_seqs(support::postgres().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_refused_writer_leaves_the_build_claimable() {
        super::a_refused_writer_leaves_the_build_claimable(support::postgres().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stale_writer_is_refused() {
        super::a_stale_writer_is_refused(support::postgres().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn finish_twice_stores_one_complete() {
        super::finish_twice_stores_one_complete(support::postgres().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn subscribe_from_every_after_equals_the_stored_tail() {
        super::subscribe_from_every_after_equals_the_stored_tail(support::postgres().await).await;
    }

    /// Two stores on one database are two servers: writers on both share one numbering, and a
    /// follower on one sees the other's events live, through LISTEN/NOTIFY, well before its
    /// safety-net read would.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn two_servers_share_the_numbering_and_follow_each_other_live() {
        let url = support::postgres_url();
        let a: Arc<dyn Store> = Arc::new(PgStore::open_with(&url, 4).await.unwrap());
        let b: Arc<dyn Store> = Arc::new(PgStore::open_with(&url, 4).await.unwrap());
        a.create_build(&new_run("r2")).await.unwrap();
        let follower = tokio::spawn(b.subscribe("r2", 0).map(|r| r.unwrap().event.seq.0).collect::<Vec<u64>>());
        let tasks: Vec<_> = [a.clone(), b.clone()]
            .into_iter()
            .enumerate()
            .map(|(n, s)| {
                tokio::spawn(async move {
                    for i in 0..50 {
                        s.append("r2", None, vec![say(format!("{n}-{i}"))]).await.unwrap();
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        a.finish("r2", None, end(RunStatus::Published)).await.unwrap();
        let seqs: Vec<u64> = b.events("r2", 0).await.unwrap().iter().map(|e| e.seq.0).collect();
        assert_eq!(seqs, (1..=102).collect::<Vec<_>>());
        let got = tokio::time::timeout(SAFETY_NET * 4, follower).await.expect("followed to the end").unwrap();
        assert_eq!(got, (1..=102).collect::<Vec<_>>());
    }

    /// A follower on another server gets each event live: no safety-net wait between them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_follower_elsewhere_hears_each_event_without_waiting_for_the_safety_net() {
        let url = support::postgres_url();
        let writer = PgStore::open_with(&url, 4).await.unwrap();
        let reader = PgStore::open_with(&url, 4).await.unwrap();
        writer.create_build(&new_run("live")).await.unwrap();
        let mut stream = reader.subscribe("live", 0);
        // Let the follower finish its first read and wait on its channel.
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        for i in 0..5u64 {
            writer.append("live", None, vec![say(format!("e{i}"))]).await.unwrap();
            let got = tokio::time::timeout(SAFETY_NET / 2, stream.next())
                .await
                .expect("heard through NOTIFY, not the safety net")
                .unwrap()
                .unwrap();
            assert_eq!(got.event.seq, i + 1);
        }
        // Signals cross too: a queued build wakes a worker on the other server.
        let mut signals = reader.notifier().signals();
        let queued = QueuedBuild {
            build: new_run("sig"),
            owner: "u".into(),
            job: QueuedJob::Build(BuildArgs { prompt: "{}".into(), ..Default::default() }),
            idempotency_key: None,
            dedup_key: "u:sig".into(),
            preview_key: "pk".into(),
            first_event: None,
            limits: None,
        };
        writer.enqueue_build(&queued).await.unwrap();
        let s = tokio::time::timeout(SAFETY_NET, signals.recv()).await.expect("signal crossed").unwrap();
        assert_eq!(s, Signal::Queued);
    }

    /// The database restarts under a follower: its store's listening connection is cut, comes
    /// back with backoff, and the follower still gets every event, in order, once, to the end.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_follower_survives_a_database_restart() {
        let pg = wright_pgtemp::PgServer::start().unwrap();
        let url = pg.database().unwrap();
        let writer = PgStore::open_with(&url, 2).await.unwrap();
        let reader = PgStore::open_with(&url, 2).await.unwrap();
        writer.create_build(&new_run("rs")).await.unwrap();
        let follower = tokio::spawn(reader.subscribe("rs", 0).map(|r| r.map(|l| l.event.seq.0)).collect::<Vec<_>>());
        writer.append("rs", None, vec![say("before")]).await.unwrap();
        pg.restart().unwrap();
        // The pools reconnect on their next use; a write may meet a connection the restart cut.
        for i in 0..5 {
            let mut tries = 0;
            while let Err(e) = writer.append("rs", None, vec![say(format!("after {i}"))]).await {
                tries += 1;
                assert!(tries < 50, "the store never came back: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
        let mut tries = 0;
        while writer.finish("rs", None, end(RunStatus::Published)).await.is_err() {
            tries += 1;
            assert!(tries < 50);
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let got = tokio::time::timeout(SAFETY_NET * 10, follower).await.expect("followed to the end").unwrap();
        // A read the restart cut may surface as an error item; the events themselves are all
        // there, once each, in order.
        let seqs: Vec<u64> = got.into_iter().filter_map(|r| r.ok()).collect();
        let stored: Vec<u64> = writer.events("rs", 0).await.unwrap().iter().map(|e| e.seq.0).collect();
        assert_eq!(stored.len(), 8, "before, 5 after, the error and complete of the end");
        assert_eq!(seqs, stored);
    }

    /// A process frozen inside a transaction cannot keep its row locks (and so a build from
    /// every reaper) for long: its sessions end after a few seconds idle in a transaction.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sessions_idle_in_a_transaction_are_ended_by_the_server() {
        let store = support::pg().await;
        let setting: String =
            sqlx::query_scalar("SHOW idle_in_transaction_session_timeout").fetch_one(store.pool()).await.unwrap();
        assert_eq!(setting, "5s");
        let keepalive: String = sqlx::query_scalar("SHOW tcp_keepalives_idle").fetch_one(store.pool()).await.unwrap();
        assert_eq!(keepalive, "10");
    }

    /// A statement that waits (on a lock a frozen process holds, say) is ended by the server
    /// after the statement timeout, with an error, rather than holding its pooled connection
    /// for as long as it waits; migrations run without it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn statements_are_bounded_by_the_server() {
        let store = support::pg().await;
        let setting: String = sqlx::query_scalar("SHOW statement_timeout").fetch_one(store.pool()).await.unwrap();
        assert_eq!(setting, wright_store::PG_STATEMENT_TIMEOUT);
    }

    /// A worker frozen past its lease (SIGSTOP, a long GC pause) whose build moved on can add
    /// nothing to it when it wakes: the fence is checked in the appending transaction.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_frozen_worker_cannot_write_after_its_build_moved_on() {
        let url = support::postgres_url();
        let frozen = PgStore::open_with(&url, 2).await.unwrap();
        let other = PgStore::open_with(&url, 2).await.unwrap();
        let queued = QueuedBuild {
            build: new_run("fz"),
            owner: "u".into(),
            job: QueuedJob::Build(BuildArgs { prompt: "{}".into(), ..Default::default() }),
            idempotency_key: None,
            dedup_key: "u:fz".into(),
            preview_key: "pk".into(),
            first_event: None,
            limits: None,
        };
        frozen.enqueue_build(&queued).await.unwrap();
        let lease = std::time::Duration::from_millis(300);
        assert!(frozen.claim_build("a-w0", lease).await.unwrap().is_some());
        frozen.append("fz", Some("a-w0"), vec![say("before")]).await.unwrap();
        tokio::time::sleep(lease * 2).await;
        let taken = other.take_expired("b-reaper", std::time::Duration::from_secs(60), "b-w").await.unwrap();
        assert_eq!(taken.len(), 1);
        assert!(matches!(
            other.restart_build("fz", "b-reaper", 3, RestartReason::WorkerLost).await.unwrap(),
            Restart::Requeued(_)
        ));
        assert!(other.claim_build("b-w0", std::time::Duration::from_secs(60)).await.unwrap().is_some());
        other.append("fz", Some("b-w0"), vec![say("after")]).await.unwrap();
        assert!(!frozen.renew_lease("fz", "a-w0", lease).await.unwrap(), "the renewal tells it");
        assert!(matches!(frozen.append("fz", Some("a-w0"), vec![say("late")]).await, Err(StoreError::NotHolder(_))));
        let said: Vec<String> = other.events("fz", 0).await.unwrap().iter().map(message).collect();
        assert!(!said.iter().any(|m| m == "late"), "{said:?}");
        let seqs: Vec<u64> = other.events("fz", 0).await.unwrap().iter().map(|e| e.seq.0).collect();
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    }
}

/// Two stores on one file are two processes' worth of writers: the numbering still holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_two_handles_on_one_file_share_the_numbering() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("w.db").display());
    let a = open(&url).await.unwrap();
    let b = open(&url).await.unwrap();
    a.create_build(&new_run("r2")).await.unwrap();
    let tasks: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .enumerate()
        .map(|(n, s)| {
            tokio::spawn(async move {
                for i in 0..50 {
                    s.append("r2", None, vec![say(format!("{n}-{i}"))]).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let seqs: Vec<u64> = b.events("r2", 0).await.unwrap().iter().map(|e| e.seq.0).collect();
    assert_eq!(seqs, (1..=100).collect::<Vec<_>>());
}

/// The log writer: emits return at once, events reach the sinks behind it numbered by the
/// store and in order, and `finish` comes after everything emitted before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_writer_stores_in_groups_then_shows_in_order() {
    let (_d, s) = sqlite().await;
    s.create_build(&new_run("rw")).await.unwrap();
    let shown = Arc::new(wright_events::MemorySink::new());
    let log: Arc<dyn RunLog> = s.clone();
    let writer = LogWriter::start(log, "rw", None, vec![shown.clone()]);
    let emitter = wright_events::Emitter::new("rw", vec![writer.clone()]);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let em = emitter.clone();
            std::thread::spawn(move || {
                for i in 0..250 {
                    em.status(Level::Info, format!("t{t}-{i}"));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let finished = writer.finish(end(RunStatus::Published)).await.unwrap();
    assert_eq!(finished.complete().unwrap().seq, 1002);
    assert_eq!(writer.failures(), 0);
    let stored = s.events("rw", 0).await.unwrap();
    assert_eq!(shown.events(), stored, "the sinks saw exactly what was stored, in order");
    // Emitted order is kept: each thread's lines in its order.
    let lines: Vec<String> = stored.iter().map(message).filter(|m| m.starts_with("t0-")).collect();
    assert_eq!(lines, (0..250).map(|i| format!("t0-{i}")).collect::<Vec<_>>());
    // After the end the store refuses more, and the writer counts them without stopping.
    emitter.status(Level::Info, "too late");
    writer.flush().await;
    assert_eq!(writer.failures(), 1);
    assert_eq!(s.events("rw", 1002).await.unwrap().len(), 0);
}

/// Data from before the run log is carried over by migration 0006: task runs become runs of
/// kind `task`, and a run that ended without a stored `complete` (a kill between the two old
/// writes) gets the one its record says, so every ended run has one.
#[tokio::test]
async fn the_migration_carries_old_runs_over() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("w.db").display());
    let s = open(&url).await.unwrap();
    // Rows as the previous version wrote them, straight into the file.
    let raw = sqlx::SqlitePool::connect(&url).await.unwrap();
    for (id, template, status, finished) in [
        ("old-task", "task", "published", Some("2026-11-20T10:00:05.000Z")),
        ("old-build", "static", "failed", Some("2026-11-20T10:00:09.000Z")),
        ("old-running", "static", "running", None),
    ] {
        sqlx::query(
            "INSERT INTO builds (id, prompt, template, lang, provider, model, workspace, status, started_at, finished_at, \
             files, turns, duration_ms, end_reason) VALUES (?, 'p', ?, 'en', 'openai', 'm', '/tmp/x', ?, \
             '2026-11-20T10:00:00.000Z', ?, '[\"index.html\"]', 4, 900, ?)",
        )
        .bind(id)
        .bind(template)
        .bind(status)
        .bind(finished)
        .bind((status == "failed").then_some("verification_failed"))
        .execute(&raw)
        .await
        .unwrap();
    }
    sqlx::query("UPDATE builds SET kind = 'build'").execute(&raw).await.unwrap();
    let said = serde_json::json!({"seq": 1, "build": "old-build", "ts": "2026-11-20T10:00:01.000Z",
        "type": "status", "message": "working", "level": "info"});
    sqlx::query("INSERT INTO events (build_id, seq, ts, type, data) VALUES ('old-build', 1, 't', 'status', ?)")
        .bind(said.to_string())
        .execute(&raw)
        .await
        .unwrap();
    // The migration's data steps, as an upgrade runs them (the column exists already here).
    let migration = include_str!("../migrations/0006_run_log.sql");
    let steps: String = migration.lines().filter(|l| !l.starts_with("ALTER TABLE")).collect::<Vec<_>>().join("\n");
    sqlx::raw_sql(&steps).execute(&raw).await.unwrap();

    let task = s.build("old-task").await.unwrap();
    assert_eq!((task.start.kind, task.start.template, task.shown_template()), (RunKind::Task, None, "task"));
    let events = s.events("old-build", 0).await.unwrap();
    assert_eq!(events.iter().map(|e| e.seq.0).collect::<Vec<_>>(), [1, 2]);
    match &events[1].kind {
        EventKind::Complete { success, files, iterations, duration_ms, .. } => {
            assert_eq!(
                (*success, files.as_slice(), *iterations, *duration_ms),
                (false, &["index.html".to_string()][..], 4, 900)
            );
        }
        other => panic!("not a complete: {other:?}"),
    }
    assert_eq!(s.events("old-task", 0).await.unwrap().len(), 1, "its complete");
    assert!(s.events("old-running", 0).await.unwrap().is_empty(), "a running one is left to run");
    // Run again, the migration adds nothing twice.
    sqlx::raw_sql(&steps).execute(&raw).await.unwrap();
    assert_eq!(s.events("old-build", 0).await.unwrap().len(), 2);
}

/// A run written by another process on the same file (here: another store handle, which shares
/// no notifier) is still followed to its end, through the follower's safety-net reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_written_elsewhere_is_followed_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("w.db").display());
    let (writer, reader) = (open(&url).await.unwrap(), open(&url).await.unwrap());
    writer.create_build(&new_run("far")).await.unwrap();
    let follower = tokio::spawn(reader.subscribe("far", 0).map(|r| r.unwrap().event.seq.0).collect::<Vec<u64>>());
    for i in 0..5 {
        writer.append("far", None, vec![say(format!("far {i}"))]).await.unwrap();
    }
    writer.finish("far", None, end(RunStatus::Published)).await.unwrap();
    let got = tokio::time::timeout(SAFETY_NET * 4, follower).await.expect("followed to the end").unwrap();
    assert_eq!(got, (1..=7).collect::<Vec<_>>());
}
