//! Reading a limit without taking it (what the limits route shows before a limit bites), and
//! the hourly limits of builds and task runs counted apart, on both backends.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::sync::Arc;
use std::time::Duration;
use wright_events::{EventKind, Level, RunKind};
use wright_store::*;

fn run(id: &str, kind: RunKind, per_hour: u32) -> QueuedBuild {
    QueuedBuild {
        build: NewBuild {
            id: id.into(),
            kind,
            parent_id: None,
            prompt: "a countdown timer".into(),
            template: Some(Template::Auto),
            lang: Lang::En,
            provider: "openai".into(),
            model: "m".into(),
            workspace: format!("/tmp/{id}"),
            started_at: now(),
        },
        owner: "ann".into(),
        job: QueuedJob::Build(BuildArgs { prompt: id.into(), ..Default::default() }),
        idempotency_key: None,
        dedup_key: format!("ann:{id}"),
        preview_key: format!("pk-{id}"),
        first_event: Some(EventKind::Status { message: "Queued".into(), level: Level::Info }),
        limits: Some(Limits { concurrent: 100, per_hour }),
    }
}

/// Within the hour, and more than a few seconds of it left.
fn near_an_hour(d: Option<Duration>) -> bool {
    d.is_some_and(|d| d > Duration::from_secs(3500) && d <= Duration::from_secs(3600))
}

async fn usage_is_read_without_taking_a_use(store: Arc<dyn Store>) {
    let q = [Quota::per_hour("explanations:ann", 3), Quota::per_hour("chat:ann", 5)];
    assert_eq!(store.quota_usage(&q).await.unwrap(), vec![Usage { count: 0, frees_in: None }; 2], "nothing used yet");
    for _ in 0..2 {
        assert_eq!(store.admit(None, &q[..1]).await.unwrap(), Admit::Admitted);
    }
    for _ in 0..3 {
        let read = store.quota_usage(&q).await.unwrap();
        assert_eq!(read[0].count, 2, "reading takes nothing: {read:?}");
        assert!(near_an_hour(read[0].frees_in), "{read:?}");
        assert_eq!(read[1], Usage { count: 0, frees_in: None });
    }
    // The third use still fits (the reads took none), the fourth does not and takes nothing.
    assert_eq!(store.admit(None, &q[..1]).await.unwrap(), Admit::Admitted);
    assert!(matches!(store.admit(None, &q[..1]).await.unwrap(), Admit::Over { count: 3, max: 3, .. }));
    assert_eq!(store.quota_usage(&q[..1]).await.unwrap()[0].count, 3, "a refusal takes nothing");
    // Another user's key is their own; a short window empties once it has passed.
    assert_eq!(store.quota_usage(&[Quota::per_hour("explanations:bob", 3)]).await.unwrap()[0].count, 0);
    let short = [Quota { key: "burst:ann".into(), max: 5, window: Duration::from_millis(300) }];
    store.admit(None, &short).await.unwrap();
    let read = store.quota_usage(&short).await.unwrap()[0];
    assert_eq!(read.count, 1);
    assert!(read.frees_in.is_some_and(|d| d <= Duration::from_secs(1)), "{read:?}");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(store.quota_usage(&short).await.unwrap()[0], Usage { count: 0, frees_in: None });
}

async fn builds_and_task_runs_have_an_hourly_limit_each(store: Arc<dyn Store>) {
    assert_eq!(store.runs_used("ann", RunKind::Build, HOUR).await.unwrap(), Usage { count: 0, frees_in: None });
    assert_eq!(store.enqueue_build(&run("b1", RunKind::Build, 2)).await.unwrap(), Enqueued::New);
    assert_eq!(store.enqueue_build(&run("b2", RunKind::Build, 2)).await.unwrap(), Enqueued::New);
    let refused = store.enqueue_build(&run("b3", RunKind::Build, 2)).await.unwrap();
    assert!(matches!(refused, Enqueued::Limited { kind: LimitKind::Hourly, count: 2, .. }), "{refused:?}");
    // Builds at their limit leave task runs their own.
    assert_eq!(store.enqueue_build(&run("t1", RunKind::Task, 1)).await.unwrap(), Enqueued::New);
    let refused = store.enqueue_build(&run("t2", RunKind::Task, 1)).await.unwrap();
    assert!(matches!(refused, Enqueued::Limited { kind: LimitKind::Hourly, count: 1, .. }), "{refused:?}");
    // Read back: what was accepted, nothing of what was refused.
    let builds = store.runs_used("ann", RunKind::Build, HOUR).await.unwrap();
    assert_eq!(builds.count, 2, "{builds:?}");
    assert!(near_an_hour(builds.frees_in), "{builds:?}");
    assert_eq!(store.runs_used("ann", RunKind::Task, HOUR).await.unwrap().count, 1);
    assert_eq!(store.runs_used("bob", RunKind::Build, HOUR).await.unwrap().count, 0);
}

const HOUR: Duration = Duration::from_secs(3600);

both!(usage_is_read_without_taking_a_use, builds_and_task_runs_have_an_hourly_limit_each);
