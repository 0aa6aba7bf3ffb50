//! Experiments through the `Store` trait only, on SQLite and on PostgreSQL: drafts checked as
//! `assign` checks them, one running at a time, frozen once started, and the outcomes of each
//! arm's finished builds with their ratings.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::sync::Arc;
use wright_experiments::{Metric, Unit, Variant};
use wright_store::*;

fn new(name: &str, variants: &[(&str, f64)]) -> NewExperiment {
    NewExperiment {
        name: name.into(),
        unit: Unit::User,
        variants: variants.iter().map(|(n, w)| Variant::named(*n, *w)).collect(),
        primary: Metric::Published,
        guardrails: vec![Metric::Cost],
        horizon: 100,
    }
}

/// A build of `owner` through the queue, ended `status` after `fixes` fix attempts.
async fn build(store: &Arc<dyn Store>, id: &str, owner: &str, status: RunStatus, fixes: u32) {
    let q = QueuedBuild {
        build: NewBuild {
            id: id.into(),
            kind: wright_events::RunKind::Build,
            parent_id: None,
            prompt: format!("request of {id}"),
            template: Some(Template::Static),
            lang: Lang::En,
            provider: "openai".into(),
            model: "m".into(),
            workspace: format!("/tmp/{id}"),
            started_at: now(),
        },
        owner: owner.into(),
        job: QueuedJob::Build(BuildArgs { prompt: id.into(), ..Default::default() }),
        idempotency_key: None,
        dedup_key: format!("{owner}:{id}"),
        preview_key: format!("pk-{id}"),
        first_event: None,
        limits: None,
    };
    store.enqueue_build(&q).await.unwrap();
    if status == RunStatus::Queued {
        return;
    }
    let tokens = Tokens { input_tokens: 100, output_tokens: 10, cached_tokens: 0, cost_usd: 0.25 };
    let record = BuildFinish {
        status,
        end_reason: None,
        fix_attempts: fixes,
        turns: 1,
        tokens,
        duration_ms: 1500,
        files: vec![],
        report: None,
        finished_at: now(),
    };
    store.finish(id, None, RunEnd::of(record, vec![])).await.unwrap();
}

async fn drafts_are_checked_and_one_runs_at_a_time(store: Arc<dyn Store>) {
    let too_few = store.create_experiment(&new("solo", &[("a", 1.0)])).await.unwrap_err();
    assert!(too_few.to_string().contains("two"), "{too_few}");
    let zero = store.create_experiment(&new("zero", &[("a", 1.0), ("b", 0.0)])).await.unwrap_err();
    assert!(zero.to_string().contains('b'), "{zero}");
    let twice = store.create_experiment(&new("twice", &[("a", 1.0), ("a", 2.0)])).await.unwrap_err();
    assert!(twice.to_string().contains('a'), "{twice}");
    assert!(store.experiments().await.unwrap().is_empty(), "nothing refused was stored");

    let one = store.create_experiment(&new("one", &[("control", 1.0), ("fast", 3.0)])).await.unwrap();
    assert_eq!(one.state, ExperimentState::Draft);
    assert_eq!(one.variants[1].weight, 3.0);
    assert_eq!(one.guardrails, vec![Metric::Cost]);
    assert!(store.create_experiment(&new("one", &[("a", 1.0), ("b", 1.0)])).await.is_err(), "names are unique");
    let two = store.create_experiment(&new("two", &[("a", 1.0), ("b", 1.0)])).await.unwrap();
    assert_eq!(store.experiment("one").await.unwrap().id, one.id, "found by name");
    assert_eq!(store.experiment(&two.id).await.unwrap().name, "two", "found by id");
    assert!(matches!(store.experiment("nope").await, Err(StoreError::NotFound(_))));
    assert_eq!(store.experiments().await.unwrap().len(), 2);

    assert!(store.running_experiment().await.unwrap().is_none());
    let started = store.start_experiment(&one.id).await.unwrap();
    assert_eq!(started.state, ExperimentState::Running);
    assert!(started.started_at.is_some());
    assert_eq!(started.salt, one.salt, "frozen: the salt stays");
    let second = store.start_experiment(&two.id).await.unwrap_err();
    assert!(second.to_string().contains("`one` is running"), "{second}");
    assert_eq!(store.running_experiment().await.unwrap().unwrap().id, one.id);
    assert!(store.start_experiment(&one.id).await.is_err(), "already running");

    let bad = store.stop_experiment(&one.id, Some("slow")).await.unwrap_err();
    assert!(bad.to_string().contains("control, fast"), "{bad}");
    let stopped = store.stop_experiment(&one.id, Some("fast")).await.unwrap();
    assert_eq!((stopped.state, stopped.promoted.as_deref()), (ExperimentState::Stopped, Some("fast")));
    assert!(store.start_experiment(&one.id).await.is_err(), "a stopped one does not start again");
    assert!(store.stop_experiment(&two.id, None).await.is_err(), "a draft is not stopped");
    store.start_experiment(&two.id).await.unwrap();
    assert_eq!(store.running_experiment().await.unwrap().unwrap().name, "two");
}

async fn arms_hold_finished_builds_with_ratings(store: Arc<dyn Store>) {
    let u = new_user("ana", Role::User);
    store.create_user(&u, "hash").await.unwrap();
    let exp = store.create_experiment(&new("arms", &[("a", 1.0), ("b", 1.0), ("c", 1.0)])).await.unwrap();
    store.start_experiment(&exp.id).await.unwrap();
    build(&store, "b1", &u.id, RunStatus::Published, 0).await;
    build(&store, "b2", &u.id, RunStatus::Published, 2).await;
    build(&store, "b3", &u.id, RunStatus::Failed, 3).await;
    build(&store, "b4", &u.id, RunStatus::Queued, 0).await;
    build(&store, "b5", &u.id, RunStatus::Published, 0).await;
    for (b, v) in [("b1", "a"), ("b2", "a"), ("b3", "b"), ("b4", "b")] {
        store.set_build_variant(b, &exp.id, v).await.unwrap();
    }
    assert!(matches!(store.set_build_variant("nope", &exp.id, "a").await, Err(StoreError::NotFound(_))));
    assert_eq!(store.build_variant("b3").await.unwrap(), Some((exp.id.clone(), "b".to_string())));
    assert_eq!(store.build_variant("b5").await.unwrap(), None, "in no experiment");
    assert!(matches!(store.build_variant("nope").await, Err(StoreError::NotFound(_))));
    let arms = store.arm_outcomes(&exp.id).await.unwrap();
    let names: Vec<&str> = arms.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"], "every arm, in order, even without builds");
    assert_eq!(arms[0].1.len(), 2);
    assert_eq!(arms[1].1.len(), 1, "the queued build is not an outcome yet");
    assert!(arms[2].1.is_empty(), "b5 is in no experiment");
    assert!(arms[0].1[0].published && arms[0].1[0].fix_attempts == 0);
    assert_eq!(arms[0].1[1].fix_attempts, 2);
    assert!(!arms[1].1[0].published);
    assert!((arms[0].1[0].duration_secs - 1.5).abs() < 1e-9);
    assert!((arms[0].1[0].cost_usd - 0.25).abs() < 1e-9);
    assert_eq!(arms[0].1[0].rating, None, "not rated");
    // A person's rating is the arm's thumbs-up value, and a changed one replaces it.
    store.rate_build("b1", Some(&u.id), 1, None).await.unwrap();
    store.rate_build("b3", Some(&u.id), -1, Some("not what I asked for")).await.unwrap();
    let arms = store.arm_outcomes(&exp.id).await.unwrap();
    assert_eq!(arms[0].1[0].rating, Some(true));
    assert_eq!(arms[0].1[1].rating, None);
    assert_eq!(arms[1].1[0].rating, Some(false));
    store.rate_build("b1", Some(&u.id), -1, None).await.unwrap();
    assert_eq!(store.arm_outcomes(&exp.id).await.unwrap()[0].1[0].rating, Some(false));
    let report = wright_experiments::arms_report(
        &exp.variants,
        &store.arm_outcomes(&exp.id).await.unwrap(),
        wright_experiments::Metric::ThumbsUp,
        exp.horizon,
    );
    // Only rated builds count: arm a has one (now 👎) of its two builds rated.
    assert_eq!((report.arms[0].thumbs_up.successes, report.arms[0].thumbs_up.n), (0, 1));
    assert_eq!((report.arms[1].thumbs_up.successes, report.arms[1].thumbs_up.n), (0, 1));
    assert_eq!(report.arms[2].thumbs_up.n, 0);
}

both!(drafts_are_checked_and_one_runs_at_a_time, arms_hold_finished_builds_with_ratings);
