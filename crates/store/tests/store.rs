//! The store's records on both backends (SQLite and PostgreSQL, through the `Store` trait),
//! and what only a SQLite file does (a reopen).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::sync::{Arc, Mutex};
use wright_events::{Emitter, Event, EventKind, EventSink, Level};
use wright_store::*;

fn new_build(id: &str, template: &str) -> NewBuild {
    NewBuild {
        id: id.into(),
        kind: wright_events::RunKind::Build,
        parent_id: None,
        prompt: "a countdown timer".into(),
        template: Template::parse(template),
        lang: Lang::En,
        provider: "openai".into(),
        model: "gpt-4o-mini".into(),
        workspace: "/tmp/ws".into(),
        started_at: now(),
    }
}

fn finish(status: RunStatus, fixes: u32, ms: u64) -> BuildFinish {
    BuildFinish {
        status,
        end_reason: (status == RunStatus::Failed).then_some(EndReason::VerificationFailed),
        fix_attempts: fixes,
        turns: 4,
        tokens: Tokens { input_tokens: 100, output_tokens: 50, cached_tokens: 10, cost_usd: 0.25 },
        duration_ms: ms,
        files: vec!["index.html".into()],
        report: Some("what was tried".into()),
        finished_at: now(),
    }
}

fn note(id: &str, tags: &[&str], libs: &[&str], patterns: &[&str]) -> Note {
    Note {
        libraries: libs.iter().map(|s| s.to_string()).collect(),
        error_patterns: patterns.iter().map(|s| s.to_string()).collect(),
        tags: tags.iter().map(|s| s.to_string()).collect(),
        ..Note::new(id, format!("trigger of {id}"), format!("lesson of {id}"))
    }
}

/// A finished build, a note and a turn, as [`check_records`] expects them.
async fn write_records(s: &Arc<dyn Store>) {
    s.create_build(&new_build("20261121-100000-aaaa", "interactive")).await.unwrap();
    s.finish("20261121-100000-aaaa", None, RunEnd::of(finish(RunStatus::Published, 1, 1200), vec![])).await.unwrap();
    s.put_note(&note("n-1", &["timer"], &[], &[])).await.unwrap();
    s.append_turn(
        &Turn {
            build_id: "20261121-100000-aaaa".into(),
            idx: 0,
            phase: "GENERATING".into(),
            role: "user".into(),
            message: serde_json::json!({"role": "user", "content": "hi"}),
            ts: now(),
            tokens: Tokens::default(),
        },
        None,
    )
    .await
    .unwrap();
}

async fn check_records(s: &Arc<dyn Store>) {
    let b = s.build("20261121-100000-aaaa").await.unwrap();
    assert_eq!(b.status, RunStatus::Published);
    assert_eq!((b.fix_attempts, b.duration_ms, b.files.len()), (1, Some(1200), 1));
    assert_eq!(b.tokens.cost_usd, 0.25);
    assert_eq!(s.resolve_build("20261121-1000").await.unwrap().start.id, b.start.id, "prefix lookup");
    assert_eq!(s.resolve_note("n-").await.unwrap().id, "n-1", "prefix lookup");
    assert_eq!(s.resolve_note("N-").await.unwrap().id, "n-1", "a prefix ignores the case of ASCII letters");
    assert!(matches!(s.resolve_build("2026_").await, Err(StoreError::NotFound(_))), "`_` is no wildcard");
    assert!(matches!(s.resolve_build("%").await, Err(StoreError::NotFound(_))), "nor is `%`");
    assert_eq!(s.note("n-1").await.unwrap().lesson, "lesson of n-1");
    assert_eq!(s.turns(&b.start.id).await.unwrap()[0].message["content"], "hi");
    assert!(matches!(s.build("nope").await, Err(StoreError::NotFound(_))));
    assert!(matches!(
        s.finish("nope", None, RunEnd::of(finish(RunStatus::Failed, 0, 1), vec![])).await,
        Err(StoreError::NotFound(_))
    ));
}

async fn builds_turns_and_notes_round_trip(s: Arc<dyn Store>) {
    write_records(&s).await;
    check_records(&s).await;
    // Two builds share the prefix now: it names neither.
    s.create_build(&new_build("20261121-100000-bbbb", "interactive")).await.unwrap();
    assert!(matches!(s.resolve_build("20261121-1000").await, Err(StoreError::Invalid(_))));
}

#[tokio::test]
async fn everything_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("nested/wright.db").display());
    {
        let s = open(&url).await.unwrap();
        write_records(&s).await;
        s.create_build(&new_build("run-1", "task")).await.unwrap();
        s.put_task_result(&task_record("run-1", "setup", 0, "passed")).await.unwrap();
    }
    let s = open(&url).await.unwrap();
    check_records(&s).await;
    assert_eq!(s.task_results("run-1").await.unwrap().len(), 1);
}

#[tokio::test]
async fn unknown_database_urls_are_refused() {
    let e = open("mysql://x").await.err().unwrap();
    assert!(e.to_string().contains("postgres://"), "{e}");
}

async fn retrieval_ranks_by_matched_keys_then_score_and_skips_deprecated(s: Arc<dyn Store>) {
    s.put_note(&note("n-timer", &["timer", "countdown"], &[], &[])).await.unwrap();
    s.put_note(&note("n-express", &["server"], &["express"], &["Cannot find module"])).await.unwrap();
    let mut strong = note("n-timer-strong", &["timer"], &[], &[]);
    strong.confidence = 0.9;
    s.put_note(&strong).await.unwrap();
    let mut gone = note("n-gone", &["timer"], &[], &[]);
    gone.status = NoteStatus::Deprecated;
    s.put_note(&gone).await.unwrap();

    let keys = vec!["tag:timer".to_string(), "tag:countdown".to_string()];
    let hits = s.find_notes(&keys, 10).await.unwrap();
    let ids: Vec<_> = hits.iter().map(|h| h.note.id.as_str()).collect();
    assert_eq!(ids, ["n-timer", "n-timer-strong"], "two keys beat one; deprecated is skipped");
    assert_eq!(hits[0].matched, 2);

    let hits = s.find_notes(&["lib:express".into(), "err:module".into()], 10).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].note.id, "n-express");
    assert!(s.find_notes(&[], 10).await.unwrap().is_empty());
    assert!(s.find_notes(&["tag:unrelated".into()], 10).await.unwrap().is_empty());

    // Editing a note rewrites its keys.
    let mut edited = s.note("n-timer").await.unwrap();
    edited.tags = vec!["clock".into()];
    s.put_note(&edited).await.unwrap();
    let ids: Vec<_> = s.find_notes(&keys, 10).await.unwrap().into_iter().map(|h| h.note.id).collect();
    assert_eq!(ids, ["n-timer-strong"]);
}

async fn outcomes_move_notes_through_their_lifecycle(s: Arc<dyn Store>) {
    s.put_note(&note("n-a", &["x"], &[], &[])).await.unwrap();
    s.put_note(&note("n-b", &["x"], &[], &[])).await.unwrap();
    let ids = vec!["n-a".to_string()];
    for _ in 0..3 {
        s.record_note_outcome(&ids, true).await.unwrap();
    }
    let a = s.note("n-a").await.unwrap();
    assert_eq!((a.help_count, a.status, a.confidence), (3, NoteStatus::Active, 0.8));
    let ids = vec!["n-b".to_string(), "missing".to_string()];
    let mut last = Vec::new();
    for _ in 0..5 {
        last = s.record_note_outcome(&ids, false).await.unwrap();
    }
    assert_eq!(last.len(), 1, "unknown ids are skipped");
    assert_eq!((last[0].fail_count, last[0].status), (5, NoteStatus::Deprecated));
    let filter = NoteFilter { status: Some(NoteStatus::Deprecated), limit: None };
    assert_eq!(s.list_notes(&filter).await.unwrap().len(), 1);
    assert_eq!(s.list_notes(&NoteFilter::default()).await.unwrap()[0].id, "n-a", "best score first");
}

async fn a_common_key_yields_its_best_notes_and_outcomes_rerank_them(s: Arc<dyn Store>) {
    // 300 notes share "tag:app"; only the best ranked per key are read, so the winners must be
    // the high-confidence ones however many weaker notes share the word.
    for i in 0..300 {
        let mut n = note(&format!("n-{i:03}"), &["app"], &[], &[]);
        n.confidence = f64::from(i) / 1000.0;
        s.put_note(&n).await.unwrap();
    }
    let keys = vec!["tag:app".to_string()];
    let ids: Vec<_> = s.find_notes(&keys, 3).await.unwrap().into_iter().map(|h| h.note.id).collect();
    assert_eq!(ids, ["n-299", "n-298", "n-297"]);

    // A weak note that keeps helping climbs into the lookup.
    let weak = vec!["n-000".to_string()];
    for _ in 0..4 {
        s.record_note_outcome(&weak, true).await.unwrap();
    }
    let ids: Vec<_> = s.find_notes(&keys, 1).await.unwrap().into_iter().map(|h| h.note.id).collect();
    assert_eq!(ids, ["n-000"], "confidence 5/6 now beats 0.299");

    // One that keeps failing drops out of lookups once deprecated, yet stays listed.
    for _ in 0..11 {
        s.record_note_outcome(&weak, false).await.unwrap();
    }
    assert_eq!(s.note("n-000").await.unwrap().status, NoteStatus::Deprecated);
    let hits = s.find_notes(&keys, 400).await.unwrap();
    assert!(hits.iter().all(|h| h.note.id != "n-000"));
    assert_eq!(hits.len(), 128, "at most 128 notes are read per key");
}

async fn stats_follow_the_builds(s: Arc<dyn Store>) {
    let rows = [
        ("b1", "interactive", RunStatus::Published, 0, 1000),
        ("b2", "interactive", RunStatus::Published, 1, 3000),
        ("b3", "static", RunStatus::Failed, 3, 9000),
        ("b4", "static", RunStatus::Published, 0, 2000),
    ];
    for (id, t, st, fixes, ms) in rows {
        s.create_build(&new_build(id, t)).await.unwrap();
        s.finish(id, None, RunEnd::of(finish(st, fixes, ms), vec![])).await.unwrap();
    }
    s.create_build(&new_build("b5", "static")).await.unwrap(); // still running: not counted
    s.put_note(&note("n-1", &["x"], &[], &[])).await.unwrap();
    s.record_note_uses("b2", &["n-1".into()], "GENERATING").await.unwrap();
    s.record_note_uses("b2", &["n-1".into()], "FIXING").await.unwrap(); // once per build
    assert_eq!(s.note_uses("b2").await.unwrap(), ["n-1"]);
    let st = s.stats().await.unwrap();
    assert_eq!((st.builds, st.published, st.first_try), (4, 3, 2));
    assert_eq!(st.fix_histogram, vec![2, 1, 0, 1]);
    assert_eq!((st.builds_with_notes, st.published_with_notes, st.published_without_notes), (1, 1, 2));
    assert_eq!(
        st.per_template.iter().map(|t| (t.template.as_str(), t.builds)).collect::<Vec<_>>(),
        [("interactive", 2), ("static", 2)]
    );
    assert_eq!((st.duration_p50_ms, st.duration_p95_ms), (Some(2000), Some(9000)));
    assert_eq!(st.tokens.input_tokens, 400);
    assert_eq!((st.notes_total, st.notes_candidate), (1, 1));
}

async fn the_dashboard_counts_builds_per_day_and_the_problems_found(s: Arc<dyn Store>) {
    let mut old = new_build("old", "static");
    old.started_at = "2001-01-01T00:00:00.000Z".into(); // outside any window
    s.create_build(&old).await.unwrap();
    s.finish("old", None, RunEnd::of(finish(RunStatus::Published, 0, 10), vec![])).await.unwrap();
    for (id, t, st, fixes) in [
        ("b1", "static", RunStatus::Published, 0),
        ("b2", "static", RunStatus::Failed, 3),
        ("b3", "interactive", RunStatus::Published, 1),
    ] {
        s.create_build(&new_build(id, t)).await.unwrap();
        if id == "b2" {
            for kind in ["test_failure", "runtime", "test_failure"] {
                let kind = EventKind::ErrorDetected {
                    iteration: 0,
                    kind: kind.into(),
                    error: "x".into(),
                    file: None,
                    line: None,
                    column: None,
                };
                s.append("b2", None, vec![Draft::now(kind)]).await.unwrap();
            }
        }
        s.finish(id, None, RunEnd::of(finish(st, fixes, 100), vec![])).await.unwrap();
    }
    s.create_build(&new_build("running", "static")).await.unwrap();
    let days = s.daily_stats(30).await.unwrap();
    let today = now()[..10].to_string();
    let per: Vec<_> =
        days.iter().map(|d| (d.day.as_str(), d.template.as_str(), d.builds, d.published, d.first_try)).collect();
    assert_eq!(per, [(today.as_str(), "interactive", 1, 1, 0), (today.as_str(), "static", 2, 1, 1)]);
    assert_eq!(days[1].input_tokens, 200, "tokens summed per day and template");

    let kinds = s.error_kinds(30, 10).await.unwrap();
    let kinds: Vec<_> = kinds.iter().map(|k| (k.kind.as_str(), k.count)).collect();
    assert_eq!(kinds, [("test_failure", 2), ("runtime", 1)]);
    assert_eq!(s.error_kinds(30, 1).await.unwrap().len(), 1);
}

async fn an_admin_edit_keeps_the_notes_record(s: Arc<dyn Store>) {
    s.put_note(&note("n-1", &["x"], &[], &[])).await.unwrap();
    s.record_note_outcome(&["n-1".into()], true).await.unwrap();
    let edited = s.edit_note("n-1", Some("Say it better."), Some(NoteStatus::Deprecated)).await.unwrap();
    assert_eq!(
        (edited.lesson.as_str(), edited.status, edited.help_count),
        ("Say it better.", NoteStatus::Deprecated, 1)
    );
    let kept = s.edit_note("n-1", None, Some(NoteStatus::Active)).await.unwrap();
    assert_eq!((kept.lesson.as_str(), kept.status), ("Say it better.", NoteStatus::Active));
    assert!(matches!(s.edit_note("nope", None, None).await, Err(StoreError::NotFound(_))));
    assert!(matches!(s.edit_note("n-1", Some("  "), None).await, Err(StoreError::Invalid(_))));
}

async fn attempts_and_usage_round_trip(s: Arc<dyn Store>) {
    let a = Attempt {
        id: new_id("a"),
        build_id: "b1".into(),
        template: Template::Interactive,
        success: true,
        iterations: 1,
        duration_ms: 1500,
        notes_applied: vec!["n-1".into()],
        errors: vec![AttemptError { iteration: 0, kind: "test_failure".into(), error: "1 failed".into(), fixed: true }],
        model: "m".into(),
        tokens: Tokens { input_tokens: 1, output_tokens: 2, cached_tokens: 0, cost_usd: 0.5 },
        created_at: now(),
    };
    s.record_attempt(&a).await.unwrap();
    assert_eq!(s.attempts("b1").await.unwrap(), vec![a]);
    let u = UsageEntry {
        build_id: "b1".into(),
        phase: "FIXING".into(),
        provider: "openai".into(),
        model: "m".into(),
        tokens: Tokens { input_tokens: 10, output_tokens: 5, cached_tokens: 2, cost_usd: 0.01 },
        ts: now(),
    };
    s.log_usage(&u).await.unwrap();
    assert_eq!(s.usage("b1").await.unwrap(), vec![u]);
}

/// A sink that records, at the moment it is called, whether the store already has the event.
struct Witness {
    /// The store's URL: the witness reads through a store of its own.
    url: String,
    seen: Mutex<Vec<(u64, bool)>>,
}

impl EventSink for Witness {
    fn accept(&self, e: &Event) {
        let url = self.url.clone();
        let (build, seq) = (e.build.clone(), e.seq.0);
        // Look from a separate thread, runtime and connection, as another reader (an SSE
        // client) would.
        let stored = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                let store = open(&url).await.unwrap();
                store.events(&build, seq - 1).await.unwrap().first().map(|e| e.seq.0) == Some(seq)
            })
        })
        .join()
        .unwrap();
        self.seen.lock().unwrap().push((e.seq.0, stored));
    }
}

async fn events_are_stored_before_later_sinks_see_them(url: String) {
    let store = open(&url).await.unwrap();
    store.create_build(&new_build("b-sink", "static")).await.unwrap();
    let witness = Arc::new(Witness { url, seen: Mutex::new(Vec::new()) });
    let log: Arc<dyn RunLog> = store.clone();
    let writer = LogWriter::start(log, "b-sink", None, vec![witness.clone()]);
    let em = Emitter::new("b-sink", vec![writer.clone()]);
    em.status(Level::Info, "one");
    em.emit(EventKind::ErrorFixed { iteration: 1 });
    em.status(Level::Warning, "three");
    writer.flush().await;
    assert_eq!(*witness.seen.lock().unwrap(), vec![(1, true), (2, true), (3, true)]);
    let stored = store.events("b-sink", 1).await.unwrap();
    assert_eq!(stored.iter().map(|e| e.seq.0).collect::<Vec<_>>(), [2, 3], "resume after seq 1");
    assert_eq!(stored[0].kind, EventKind::ErrorFixed { iteration: 1 });
    assert_eq!(writer.failures(), 0);
}

#[tokio::test(flavor = "current_thread")]
async fn events_are_stored_before_later_sinks_see_them_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    events_are_stored_before_later_sinks_see_them(format!("sqlite://{}", dir.path().join("w.db").display())).await;
}

#[tokio::test(flavor = "current_thread")]
async fn events_are_stored_before_later_sinks_see_them_on_postgres() {
    events_are_stored_before_later_sinks_see_them(support::postgres_url()).await;
}

fn task_record(run: &str, task: &str, position: u32, status: &str) -> TaskRecord {
    TaskRecord {
        run_id: run.into(),
        task_id: task.into(),
        position,
        kind: "validation".into(),
        status: TaskStatus::parse(status).unwrap(),
        message: format!("{task} {status}"),
        result: serde_json::json!({"message": format!("{task} {status}"), "ai_result": null,
            "validation_details": {"commands_executed": [], "overall_status": status}}),
        task_hash: "ab".repeat(32),
        started_at: now(),
        finished_at: now(),
    }
}

async fn task_results_are_kept_in_run_order_and_replaced_when_a_task_runs_again(s: Arc<dyn Store>) {
    s.create_build(&new_build("run-1", "task")).await.unwrap();
    s.put_task_result(&task_record("run-1", "tests", 1, "failed")).await.unwrap();
    s.put_task_result(&task_record("run-1", "setup", 0, "passed")).await.unwrap();
    // A task of a run that does not exist is refused (the run is a build).
    assert!(s.put_task_result(&task_record("no-such-run", "x", 0, "passed")).await.is_err());
    let ids: Vec<String> = s.task_results("run-1").await.unwrap().into_iter().map(|t| t.task_id).collect();
    assert_eq!(ids, ["setup", "tests"], "run order, not insert order");
    s.put_task_result(&task_record("run-1", "tests", 1, "passed")).await.unwrap();
    let tasks = s.task_results("run-1").await.unwrap();
    assert_eq!(tasks.len(), 2, "a task run again replaces its row");
    assert_eq!(tasks[1].status, TaskStatus::Passed);
    assert_eq!(tasks[1].result["validation_details"]["overall_status"], "passed");
    assert!(s.task_results("run-2").await.unwrap().is_empty());
}

both!(
    builds_turns_and_notes_round_trip,
    retrieval_ranks_by_matched_keys_then_score_and_skips_deprecated,
    outcomes_move_notes_through_their_lifecycle,
    a_common_key_yields_its_best_notes_and_outcomes_rerank_them,
    stats_follow_the_builds,
    the_dashboard_counts_builds_per_day_and_the_problems_found,
    an_admin_edit_keeps_the_notes_record,
    attempts_and_usage_round_trip,
    task_results_are_kept_in_run_order_and_replaced_when_a_task_runs_again,
);
