//! Cost per user and monthly caps, on both backends: a user pays for their builds' model calls
//! (as logged), the explanations of their builds, and the chat and assistant turns the server
//! named them payer of; caps are kept per user with a default; and the seeds' metrics of known
//! builds come out as known figures.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;
use wright_store::*;

mod support;

const SINCE: &str = "2026-11-01T00:00:00.000Z";

fn new_run(id: &str, kind: wright_events::RunKind, at: &str) -> NewBuild {
    NewBuild {
        id: id.into(),
        kind,
        parent_id: None,
        prompt: "a countdown timer".into(),
        template: (kind == wright_events::RunKind::Build).then_some(Template::Static),
        lang: Lang::En,
        provider: "openai".into(),
        model: "m".into(),
        workspace: format!("/tmp/{id}"),
        started_at: at.into(),
    }
}

fn queued(id: &str, owner: &str, at: &str) -> QueuedBuild {
    QueuedBuild {
        build: new_run(id, wright_events::RunKind::Build, at),
        owner: owner.into(),
        job: QueuedJob::Build(BuildArgs { prompt: id.into(), ..Default::default() }),
        idempotency_key: None,
        dedup_key: format!("{owner}:{id}"),
        preview_key: format!("pk-{id}"),
        first_event: None,
        limits: None,
    }
}

fn ended(status: RunStatus, cost: f64, ms: u64, at: &str) -> RunEnd {
    RunEnd::of(
        BuildFinish {
            status,
            end_reason: (status == RunStatus::Failed).then_some(EndReason::VerificationFailed),
            fix_attempts: 0,
            turns: 1,
            tokens: Tokens { input_tokens: 1000, output_tokens: 100, cached_tokens: 0, cost_usd: cost },
            duration_ms: ms,
            files: Vec::new(),
            report: None,
            finished_at: at.into(),
        },
        vec![],
    )
}

fn usage(run: &str, phase: &str, cost: f64, at: &str) -> UsageEntry {
    UsageEntry {
        build_id: run.into(),
        phase: phase.into(),
        provider: "openai".into(),
        model: "m".into(),
        tokens: Tokens { input_tokens: 200, output_tokens: 20, cached_tokens: 50, cost_usd: cost },
        ts: at.into(),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

async fn every_model_call_counts_against_its_payer(s: Arc<dyn Store>) {
    let ann = new_user("ann", Role::User);
    s.create_user(&ann, "h-ann").await.unwrap();
    let (a, b) = (ann.id.as_str(), "u-zz-bob"); // listed after ann (ids are `u-` and hex)
    // Ann's build: two generation calls on the 2nd, one fix on the 3rd; its own record's cost
    // is not counted again (its calls are).
    s.enqueue_build(&queued("b1", a, "2026-11-02T09:00:00.000Z")).await.unwrap();
    s.log_usage(&usage("b1", "GENERATING", 0.30, "2026-11-02T09:00:01.000Z")).await.unwrap();
    s.log_usage(&usage("b1", "GENERATING", 0.20, "2026-11-02T09:00:02.000Z")).await.unwrap();
    s.log_usage(&usage("b1", "FIXING", 0.10, "2026-11-03T00:00:01.000Z")).await.unwrap();
    s.finish("b1", None, ended(RunStatus::Published, 9.0, 1000, "2026-11-03T00:00:02.000Z")).await.unwrap();
    // An explanation of it, later (logged under the build, paid by its owner).
    s.log_usage(&usage("b1", "EXPLAIN", 0.05, "2026-11-03T10:00:00.000Z")).await.unwrap();
    // Last month's calls are not this month's.
    s.log_usage(&usage("b1", "GENERATING", 5.0, "2026-10-31T23:59:59.000Z")).await.unwrap();
    // Ann's chat turn (payer named by the server), with its background tools.
    s.create_build(&new_run("c1", wright_events::RunKind::Chat, "2026-11-03T11:00:00.000Z")).await.unwrap();
    s.set_payer("c1", a).await.unwrap();
    s.finish("c1", None, ended(RunStatus::Published, 0.40, 10, "2026-11-03T11:00:05.000Z")).await.unwrap();
    s.log_usage(&usage("c1", "CHAT_BACKGROUND", 0.01, "2026-11-03T11:00:09.000Z")).await.unwrap();
    // A visitor's assistant turn on Bob's app: Bob pays. A turn with no payer is nobody's.
    s.create_build(&new_run("c2", wright_events::RunKind::Chat, "2026-11-03T12:00:00.000Z")).await.unwrap();
    s.set_payer("c2", b).await.unwrap();
    s.finish("c2", None, ended(RunStatus::Failed, 0.70, 10, "2026-11-03T12:00:05.000Z")).await.unwrap();
    s.create_build(&new_run("c3", wright_events::RunKind::Chat, "2026-11-03T12:00:00.000Z")).await.unwrap();
    s.finish("c3", None, ended(RunStatus::Published, 0.99, 10, "2026-11-03T12:00:05.000Z")).await.unwrap();
    // A running turn has cost nothing yet.
    s.create_build(&new_run("c4", wright_events::RunKind::Chat, "2026-11-03T13:00:00.000Z")).await.unwrap();
    s.set_payer("c4", a).await.unwrap();

    let days = s.spend_days(SINCE, None).await.unwrap();
    let got: Vec<(&str, &str, u64)> = days.iter().map(|d| (d.user_id.as_str(), d.day.as_str(), d.calls)).collect();
    assert_eq!(got, [(a, "2026-11-02", 2), (a, "2026-11-03", 4), (b, "2026-11-03", 1)], "{days:?}");
    assert!(close(days[0].tokens.cost_usd, 0.50) && close(days[1].tokens.cost_usd, 0.56), "{days:?}");
    assert_eq!((days[0].tokens.input_tokens, days[0].tokens.output_tokens), (400, 40));
    assert_eq!((days[1].tokens.input_tokens, days[1].tokens.cached_tokens), (200 + 200 + 1000 + 200, 150));
    assert_eq!(days[0].name.as_deref(), Some("ann"));
    assert_eq!(days[2].name, None, "bob is no user of this store");
    // One user's days only.
    let anns = s.spend_days(SINCE, Some(a)).await.unwrap();
    assert_eq!(anns, days[..2].to_vec());
    assert!(s.spend_days(SINCE, Some("u-nobody")).await.unwrap().is_empty());

    // The month: so far, projected, with caps.
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-04T12:00:00Z").unwrap().with_timezone(&chrono::Utc);
    s.set_spend_cap(None, Some(10.0)).await.unwrap();
    s.set_spend_cap(Some(a), Some(1.2)).await.unwrap();
    let r = s.spending(now, None).await.unwrap();
    assert_eq!((r.month.month.as_str(), r.month.days_elapsed, r.month.days_in_month), ("2026-11", 4, 30));
    assert_eq!(r.month.resets_at, "2026-12-01T00:00:00.000Z");
    let ann_m = &r.users[0];
    assert_eq!((ann_m.user_id.as_str(), ann_m.calls, ann_m.cap_usd), (a, 6, Some(1.2)));
    assert!(close(ann_m.cost_usd, 1.06) && close(ann_m.projected_usd, 1.06 / 4.0 * 30.0), "{ann_m:?}");
    assert!(ann_m.near_cap() && !ann_m.over_cap());
    assert_eq!(r.users[1].cap_usd, Some(10.0), "bob has the default");
    assert!(close(r.cost_usd, 1.76));
    let (mine, month) = s.user_spending(now, a).await.unwrap();
    assert_eq!((&mine, month.days_elapsed), (ann_m, 4));
    // Lowering her cap puts her over it; clearing it gives her the default again.
    s.set_spend_cap(Some(a), Some(1.0)).await.unwrap();
    assert!(s.user_spending(now, a).await.unwrap().0.over_cap());
    s.set_spend_cap(Some(a), None).await.unwrap();
    let caps = s.spend_caps().await.unwrap();
    assert_eq!((caps.default_usd, caps.of(a)), (Some(10.0), Some(10.0)));
    s.set_spend_cap(None, None).await.unwrap();
    assert_eq!(s.spend_caps().await.unwrap(), Caps::default());
    assert!(matches!(s.set_spend_cap(Some(a), Some(-1.0)).await, Err(StoreError::Invalid(_))));
}

async fn the_seeds_metrics_of_known_builds(s: Arc<dyn Store>) {
    let mut strong = Note::new("n-strong", "t", "l");
    strong.confidence = 0.9;
    let mut weak = Note::new("n-weak", "t", "l");
    weak.confidence = 0.5;
    s.put_note(&strong).await.unwrap();
    s.put_note(&weak).await.unwrap();
    // (id, accepted, status, seconds to the end, duration ms, notes)
    type Row<'a> = (&'a str, &'a str, RunStatus, i64, u64, &'a [&'a str]);
    let rows: [Row; 5] = [
        ("p1", "2026-11-02T10:00:00.000Z", RunStatus::Published, 10, 8_000, &["n-strong", "n-weak"]),
        ("p2", "2026-11-02T11:00:00.000Z", RunStatus::Published, 20, 16_000, &[]),
        ("p3", "2026-11-03T10:00:00.000Z", RunStatus::Published, 30, 30_000, &[]),
        ("f1", "2026-11-03T11:00:00.000Z", RunStatus::Failed, 40, 40_000, &["n-weak"]),
        ("old", "2026-10-03T11:00:00.000Z", RunStatus::Published, 500, 1, &[]),
    ];
    for (id, at, status, secs, ms, notes) in rows {
        // Started as `wright run` starts it (PostgreSQL's queue stamps its own clock's time).
        s.create_build(&new_run(id, wright_events::RunKind::Build, at)).await.unwrap();
        let end = chrono::DateTime::parse_from_rfc3339(at).unwrap() + chrono::Duration::seconds(secs);
        let end = end.with_timezone(&chrono::Utc).format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
        s.finish(id, None, ended(status, 0.0, ms, &end)).await.unwrap();
        let notes: Vec<String> = notes.iter().map(|n| n.to_string()).collect();
        s.record_note_uses(id, &notes, "GENERATING").await.unwrap();
    }
    // A chat turn is no build.
    s.create_build(&new_run("c1", wright_events::RunKind::Chat, "2026-11-03T12:00:00.000Z")).await.unwrap();
    s.finish("c1", None, ended(RunStatus::Published, 0.0, 1, "2026-11-03T12:00:01.000Z")).await.unwrap();

    let runs = s.run_outcomes(SINCE).await.unwrap();
    assert_eq!(runs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["p1", "p2", "p3", "f1"]);
    let m = seed_metrics(&runs);
    let t = &m.time_to_publish;
    assert_eq!((t.count, t.p50_ms, t.p95_ms, t.p99_ms), (3, Some(20_000), Some(30_000), Some(30_000)));
    let n = &m.note_effectiveness;
    assert!(close(n.published_confidence.unwrap(), 0.7), "{n:?}");
    assert!(close(n.failed_confidence.unwrap(), 0.5), "{n:?}");
    assert!(close(n.confidence.unwrap(), 0.6), "{n:?}");
    assert_eq!(
        (n.builds_with_notes, n.published_with_notes, n.builds_without_notes, n.published_without_notes),
        (2, 1, 2, 2)
    );
    type Day<'a> = (&'a str, u64, u64, Option<u64>, Option<u64>);
    let days: Vec<Day> =
        m.duration_per_day.iter().map(|d| (d.day.as_str(), d.builds, d.published, d.mean_ms, d.p95_ms)).collect();
    assert_eq!(
        days,
        [("2026-11-02", 2, 2, Some(12_000), Some(16_000)), ("2026-11-03", 2, 1, Some(30_000), Some(30_000))]
    );
}

both!(every_model_call_counts_against_its_payer, the_seeds_metrics_of_known_builds);
