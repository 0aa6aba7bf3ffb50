//! Ratings of builds on both backends (through the `Store` trait): a rating moves the
//! confidence of the notes the build used once per value, a changed rating moves them again,
//! and the dashboard's summary counts them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::sync::Arc;
use wright_store::*;

fn new_build(id: &str) -> NewBuild {
    NewBuild {
        id: id.into(),
        kind: wright_events::RunKind::Build,
        parent_id: None,
        prompt: "a countdown timer".into(),
        template: Template::parse("static"),
        lang: Lang::En,
        provider: "openai".into(),
        model: "m".into(),
        workspace: "/tmp/ws".into(),
        started_at: now(),
    }
}

fn done() -> BuildFinish {
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
    }
}

/// A finished build `id` that used notes `n-1` and `n-2`.
async fn build_with_notes(s: &Arc<dyn Store>, id: &str) {
    s.create_build(&new_build(id)).await.unwrap();
    s.finish(id, None, RunEnd::of(done(), vec![])).await.unwrap();
    for n in ["n-1", "n-2"] {
        if s.note(n).await.is_err() {
            s.put_note(&Note::new(n, format!("trigger of {n}"), format!("lesson of {n}"))).await.unwrap();
        }
    }
    s.record_note_uses(id, &["n-1".into(), "n-2".into()], "GENERATING").await.unwrap();
}

async fn confidence(s: &Arc<dyn Store>, id: &str) -> f64 {
    s.note(id).await.unwrap().confidence
}

async fn a_rating_moves_the_notes_once_per_value(s: Arc<dyn Store>) {
    build_with_notes(&s, "b1").await;
    let start = confidence(&s, "n-1").await;

    let r = s.rate_build("b1", Some("u-1"), -1, Some("  the timer never starts  ")).await.unwrap();
    assert_eq!(r.feedback.value, -1);
    assert_eq!(r.feedback.comment.as_deref(), Some("the timer never starts"), "kept trimmed");
    assert_eq!(r.feedback.user_id.as_deref(), Some("u-1"));
    assert_eq!(r.moved.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["n-1", "n-2"]);
    let down = confidence(&s, "n-1").await;
    assert!(down < start, "a 👎 lowers confidence: {start} → {down}");
    assert!(r.moved.iter().all(|m| m.after < m.before));
    assert_eq!(r.moved[0].before, start);
    assert_eq!(r.moved[0].after, down);

    // The same rating again: stored, but the notes do not move twice.
    let again = s.rate_build("b1", Some("u-1"), -1, None).await.unwrap();
    assert!(again.moved.is_empty(), "{:?}", again.moved);
    assert_eq!(confidence(&s, "n-1").await, down);
    assert_eq!(again.feedback.comment, None, "a new rating replaces the old comment");

    // Changed to 👍: they move up once.
    let up = s.rate_build("b1", Some("u-1"), 1, None).await.unwrap();
    assert_eq!(up.moved.len(), 2);
    let raised = confidence(&s, "n-1").await;
    assert!(raised > down, "a 👍 raises confidence: {down} → {raised}");
    assert!(s.rate_build("b1", Some("u-1"), 1, None).await.unwrap().moved.is_empty());
    assert_eq!(s.build_feedback("b1").await.unwrap().unwrap().value, 1);
    assert_eq!(s.note("n-1").await.unwrap().fail_count, 1);
    assert_eq!(s.note("n-1").await.unwrap().help_count, 1);
}

async fn bad_ratings_are_refused(s: Arc<dyn Store>) {
    assert!(matches!(s.rate_build("nope", None, 1, None).await, Err(StoreError::NotFound(_))));
    s.create_build(&new_build("running")).await.unwrap();
    assert!(
        matches!(s.rate_build("running", None, -1, None).await, Err(StoreError::Invalid(_))),
        "a running build cannot be rated"
    );
    build_with_notes(&s, "b2").await;
    assert!(matches!(s.rate_build("b2", None, 0, None).await, Err(StoreError::Invalid(_))));
    let long = "x".repeat(feedback::MAX_COMMENT + 1);
    assert!(matches!(s.rate_build("b2", None, 1, Some(&long)).await, Err(StoreError::Invalid(_))));
    assert_eq!(s.build_feedback("b2").await.unwrap(), None, "nothing stored");
    assert_eq!(s.build_feedback("running").await.unwrap(), None);
}

async fn the_summary_counts_ratings(s: Arc<dyn Store>) {
    assert_eq!(s.rating_summary().await.unwrap(), RatingSummary::default());
    for id in ["b1", "b2", "b3"] {
        build_with_notes(&s, id).await;
    }
    s.rate_build("b1", None, 1, None).await.unwrap();
    s.rate_build("b2", None, -1, Some("wrong colours")).await.unwrap();
    s.rate_build("b3", None, -1, None).await.unwrap();
    s.rate_build("b3", None, 1, None).await.unwrap();
    let sum = s.rating_summary().await.unwrap();
    assert_eq!(sum.builds, Tally { up: 2, down: 1 });
    assert!(sum.by_variant.is_empty(), "no build ran under a variant");
}

both!(a_rating_moves_the_notes_once_per_value, bad_ratings_are_refused, the_summary_counts_ratings);
