//! The store numbers every event of a run 1..n, whoever writes it and however: the queue notice
//! stored with the build, the service's notices while it waits, a worker's batches, the
//! `restarted` event of a re-queue, and the end. Callers pass no numbers at all (a `Draft` has
//! none); this checks the store never leaves a gap or a repeat across any mix of them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use proptest::prelude::*;
use std::sync::Arc;
use std::time::Duration;
use wright_events::{EventKind, Level, RunKind};
use wright_store::*;

mod support;

const HOUR: Duration = Duration::from_secs(3600);

fn say(text: &str) -> Draft {
    Draft::now(EventKind::Status { message: text.into(), level: Level::Info })
}

/// One run's life: per round, notices while queued, a claim, a worker's batches, and a
/// re-queue; the last round ends the run instead.
#[derive(Debug, Clone)]
struct Life {
    first: bool,
    rounds: Vec<(u8, Vec<u8>)>,
}

fn lives() -> impl Strategy<Value = Life> {
    (any::<bool>(), prop::collection::vec((0u8..3, prop::collection::vec(0u8..4, 0..4)), 1..4))
        .prop_map(|(first, rounds)| Life { first, rounds })
}

/// Live `life` on `s`; the number of events it should have stored.
async fn live(s: &Arc<dyn Store>, id: &str, life: &Life) -> u64 {
    let queued = QueuedBuild {
        build: NewBuild {
            id: id.into(),
            kind: RunKind::Build,
            parent_id: None,
            prompt: "p".into(),
            template: Some(Template::Static),
            lang: Lang::En,
            provider: "openai".into(),
            model: "m".into(),
            workspace: format!("/tmp/{id}"),
            started_at: now(),
        },
        owner: "u".into(),
        job: QueuedJob::Build(BuildArgs { prompt: "{}".into(), ..Default::default() }),
        idempotency_key: None,
        dedup_key: format!("u:{id}"),
        preview_key: format!("pk-{id}"),
        first_event: life.first.then_some(EventKind::Queued { position: 0 }),
        limits: None,
    };
    assert_eq!(s.enqueue_build(&queued).await.unwrap(), Enqueued::New);
    let mut stored = u64::from(life.first);
    let last = life.rounds.len() - 1;
    for (round, (notices, batches)) in life.rounds.iter().enumerate() {
        for _ in 0..*notices {
            s.append(id, None, vec![say("waiting")]).await.unwrap();
            stored += 1;
        }
        let worker = format!("w{round}");
        assert_eq!(s.claim_build(&worker, HOUR).await.unwrap().map(|b| b.start.id.0), Some(id.to_string()));
        for n in batches {
            let drafts: Vec<Draft> = (0..*n).map(|_| say("working")).collect();
            stored += s.append(id, Some(&worker), drafts).await.unwrap().len() as u64;
        }
        if round == last {
            let record = BuildFinish {
                status: RunStatus::Published,
                end_reason: None,
                fix_attempts: 0,
                turns: 1,
                tokens: Tokens::default(),
                duration_ms: 1,
                files: vec![],
                report: None,
                finished_at: now(),
            };
            let end = RunEnd::of(record, vec![EventKind::Error { message: "last words".into(), detail: None }])
                .checked(true, None);
            let Finished::Now(logged) = s.finish(id, Some(&worker), end).await.unwrap() else { panic!("ended twice") };
            stored += logged.len() as u64;
        } else {
            let restart = s.restart_build(id, &worker, 10, RestartReason::Shutdown).await.unwrap();
            assert!(matches!(restart, Restart::Requeued(_)), "{restart:?}");
            stored += 1;
        }
    }
    stored
}

async fn check(s: Arc<dyn Store>, life: Life, id: &str) {
    let want = live(&s, id, &life).await;
    let seqs: Vec<u64> = s.events(id, 0).await.unwrap().iter().map(|e| e.seq.0).collect();
    assert_eq!(seqs, (1..=want).collect::<Vec<_>>(), "{life:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn sqlite_numbers_every_event_1_to_n(life in lives()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async { check(support::sqlite().await, life, "run").await });
    }
}

proptest! {
    // A database each case: fewer cases on PostgreSQL.
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn postgres_numbers_every_event_1_to_n(life in lives()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async { check(support::postgres().await, life, "run").await });
    }
}
