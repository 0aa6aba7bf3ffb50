//! Maintenance on both backends: job leases, confidence recalculation with decay, retention's
//! listing and marking, and the worker registry.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::sync::Arc;
use std::time::Duration;
use wright_events::RunKind;
use wright_store::*;

/// `days` ago, in the stored form.
fn ago(days: f64) -> String {
    let t = chrono::Utc::now() - chrono::Duration::milliseconds((days * 86_400_000.0) as i64);
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn note(id: &str, tag: &str, help: u32, fail: u32, status: NoteStatus, updated_days_ago: f64) -> Note {
    let mut n = Note::new(id, format!("trigger of {id}"), format!("lesson of {id}"));
    n.tags = vec![tag.to_string()];
    n.help_count = help;
    n.fail_count = fail;
    n.confidence = note::score(help, fail);
    n.status = status;
    n.updated_at = ago(updated_days_ago);
    n.created_at = n.updated_at.clone();
    n
}

fn run(id: &str, kind: RunKind, workspace: &str) -> NewBuild {
    NewBuild {
        id: id.into(),
        kind,
        parent_id: None,
        prompt: "a countdown timer".into(),
        template: Some(Template::Static),
        lang: Lang::En,
        provider: "openai".into(),
        model: "m".into(),
        workspace: workspace.into(),
        started_at: ago(50.0),
    }
}

/// A run that ended `days` ago (published or failed).
async fn ended(s: &Arc<dyn Store>, id: &str, kind: RunKind, workspace: &str, days: f64, ok: bool) {
    s.create_build(&run(id, kind, workspace)).await.unwrap();
    let status = if ok { RunStatus::Published } else { RunStatus::Failed };
    let record = BuildFinish {
        status,
        end_reason: (!ok).then_some(EndReason::VerificationFailed),
        fix_attempts: 0,
        turns: 1,
        tokens: Tokens::default(),
        duration_ms: 10,
        files: vec!["index.html".into()],
        report: None,
        finished_at: ago(days),
    };
    s.finish(id, None, RunEnd::of(record, vec![])).await.unwrap();
}

fn ids(hits: &[NoteHit]) -> Vec<&str> {
    hits.iter().map(|h| h.note.id.as_str()).collect()
}

async fn job_leases_are_exclusive(s: Arc<dyn Store>) {
    let hold = Duration::from_millis(1500);
    assert!(s.try_job("confidence", "server-a", hold).await.unwrap(), "a free job is taken");
    assert!(!s.try_job("confidence", "server-b", hold).await.unwrap(), "held: nobody else takes it");
    assert!(!s.try_job("confidence", "server-a", hold).await.unwrap(), "not even its holder, before the lease ends");
    assert!(s.try_job("retention", "server-b", hold).await.unwrap(), "another job is another lease");

    assert!(!s.finish_job("confidence", "server-b", false, "not mine").await.unwrap(), "only the holder records");
    assert!(s.finish_job("confidence", "server-a", true, "12 notes, 3 changed").await.unwrap());
    let jobs = s.jobs().await.unwrap();
    assert_eq!(jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), ["confidence", "retention"]);
    let c = &jobs[0];
    assert_eq!(
        (c.holder.as_deref(), c.last_ok, c.last_detail.as_deref()),
        (Some("server-a"), Some(true), Some("12 notes, 3 changed"))
    );
    assert!(c.last_started.is_some() && c.last_finished.is_some() && !c.running());
    assert!(jobs[1].running() && jobs[1].last_ok.is_none());
    // Finishing keeps the lease: a job runs at most once per hold across every process.
    assert!(!s.try_job("confidence", "server-b", hold).await.unwrap());

    tokio::time::sleep(hold + Duration::from_millis(300)).await;
    assert!(s.try_job("confidence", "server-b", hold).await.unwrap(), "after the lease ran out, another takes it");
    assert!(!s.finish_job("confidence", "server-a", true, "late").await.unwrap(), "the old holder lost it");
    assert!(s.finish_job("confidence", "server-b", false, "the store went away").await.unwrap());
    let c = s.jobs().await.unwrap().into_iter().find(|j| j.name == "confidence").unwrap();
    assert_eq!((c.holder.as_deref(), c.last_ok), (Some("server-b"), Some(false)));

    // Many at once: exactly one wins.
    let tries = (0..8).map(|i| {
        let s = s.clone();
        tokio::spawn(async move { s.try_job("race", &format!("server-{i}"), Duration::from_secs(60)).await.unwrap() })
    });
    let won = futures::future::join_all(tries).await.into_iter().filter(|r| *r.as_ref().unwrap()).count();
    assert_eq!(won, 1);
}

async fn confidence_is_recalculated_with_decay(s: Arc<dyn Store>) {
    // Fresh and sure: stays 0.8.
    s.put_note(&note("fresh", "timer", 3, 0, NoteStatus::Active, 0.0)).await.unwrap();
    // The same record, unused for one 90-day half-life: counts half, (1.5+1)/(1.5+2).
    let stale = note("stale", "timer", 3, 0, NoteStatus::Active, 90.0);
    s.put_note(&stale).await.unwrap();
    // Two helps, used yesterday: 0.75, now above the stale note.
    s.put_note(&note("steady", "timer", 2, 0, NoteStatus::Candidate, 1.0)).await.unwrap();
    // Old, but used in a prompt just now: no decay.
    s.put_note(&note("reused", "clock", 3, 0, NoteStatus::Active, 200.0)).await.unwrap();
    s.record_note_uses("b-1", &["reused".to_string()], "GENERATING").await.unwrap();
    // Counts that say "promote" and "deprecate" (an import, say) with stale statuses.
    let mut promote = note("promote", "clock", 4, 0, NoteStatus::Candidate, 0.0);
    promote.confidence = 0.5;
    s.put_note(&promote).await.unwrap();
    s.put_note(&note("harmful", "clock", 0, 6, NoteStatus::Candidate, 0.0)).await.unwrap();

    let before = s.find_notes(&["tag:timer".to_string()], 10).await.unwrap();
    assert_eq!(ids(&before), ["fresh", "stale", "steady"], "ranked by the stored scores");

    let done = s.recalculate_confidence(Decay::half_life(90.0)).await.unwrap();
    assert_eq!(done, Recalculated { seen: 6, changed: 4, promoted: 1, deprecated: 1 });

    let stale_before = stale;
    let stale = s.note("stale").await.unwrap();
    assert_eq!(stale.updated_at, stale_before.updated_at, "recalculating is not using");
    assert!((stale.confidence - 2.5 / 3.5).abs() < 1e-3, "stale: {}", stale.confidence);
    assert_eq!((stale.help_count, stale.status), (3, NoteStatus::Active), "counts and status stay");
    assert_eq!(s.note("fresh").await.unwrap().confidence, 0.8);
    assert_eq!(s.note("reused").await.unwrap().confidence, 0.8, "a use in a prompt counts as use");
    let steady = s.note("steady").await.unwrap();
    assert!(steady.confidence < 0.75 && steady.confidence > 0.749, "one day fades a little: {}", steady.confidence);
    assert_eq!(s.note("promote").await.unwrap().status, NoteStatus::Active);
    assert!((s.note("promote").await.unwrap().confidence - note::score(4, 0)).abs() < 1e-6);
    assert_eq!(s.note("harmful").await.unwrap().status, NoteStatus::Deprecated);

    // The index follows: the faded note ranks below the steady one, the deprecated one is out.
    let after = s.find_notes(&["tag:timer".to_string()], 10).await.unwrap();
    assert_eq!(ids(&after), ["fresh", "steady", "stale"]);
    let clock = s.find_notes(&["tag:clock".to_string()], 10).await.unwrap();
    assert_eq!(ids(&clock), ["promote", "reused"]);
    let listed = s.list_notes(&NoteFilter::default()).await.unwrap();
    assert_eq!(listed.iter().map(|n| n.id.as_str()).collect::<Vec<_>>()[..4], ["promote", "fresh", "reused", "steady"]);

    // Nothing more to do a moment later (the fading is a function of time, not of passes).
    let again = s.recalculate_confidence(Decay::none()).await.unwrap();
    assert_eq!((again.seen, again.promoted, again.deprecated), (6, 0, 0));
    assert_eq!(s.note("stale").await.unwrap().confidence, 0.8, "without decay: the plain score");
    assert_eq!(ids(&s.find_notes(&["tag:timer".to_string()], 10).await.unwrap()), ["fresh", "stale", "steady"]);

    // A note brought back by hand (an edit of its status) gets its keys back.
    s.put_note(&note("back", "alarm", 1, 0, NoteStatus::Deprecated, 0.0)).await.unwrap();
    s.edit_note("back", None, Some(NoteStatus::Candidate)).await.unwrap();
    s.recalculate_confidence(Decay::half_life(90.0)).await.unwrap();
    assert_eq!(ids(&s.find_notes(&["tag:alarm".to_string()], 10).await.unwrap()), ["back"]);
}

async fn retention_lists_and_marks(s: Arc<dyn Store>) {
    ended(&s, "old-ok", RunKind::Build, "/data/builds/old-ok", 40.0, true).await;
    ended(&s, "old-failed", RunKind::Build, "/data/builds/old-failed", 35.0, false).await;
    ended(&s, "old-task", RunKind::Task, "/data/builds/old-task", 31.0, true).await;
    ended(&s, "recent", RunKind::Build, "/data/builds/recent", 2.0, true).await;
    ended(&s, "old-chat", RunKind::Chat, "", 40.0, true).await;
    // A follow-up build works in its parent's folder: the parent's files stay while it is young.
    ended(&s, "parent", RunKind::Build, "/data/builds/parent", 45.0, true).await;
    ended(&s, "child", RunKind::Build, "/data/builds/parent", 1.0, true).await;
    // Still running: never listed.
    s.create_build(&run("running", RunKind::Build, "/data/builds/running")).await.unwrap();

    let cutoff = ago(30.0);
    let old = s.ended_before(&cutoff, 100).await.unwrap();
    assert_eq!(
        old,
        [
            ("old-ok".to_string(), "/data/builds/old-ok".to_string()),
            ("old-failed".to_string(), "/data/builds/old-failed".to_string()),
            ("old-task".to_string(), "/data/builds/old-task".to_string()),
        ],
        "oldest first; not chat turns, running or recent builds, nor a folder a recent build uses"
    );
    assert_eq!(s.ended_before(&cutoff, 1).await.unwrap().len(), 1, "at most `limit`");

    s.mark_pruned("old-ok").await.unwrap();
    s.mark_pruned("old-ok").await.unwrap();
    let left = s.ended_before(&cutoff, 100).await.unwrap();
    assert_eq!(left.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["old-failed", "old-task"]);
    assert!(matches!(s.mark_pruned("nope").await, Err(StoreError::NotFound(_))));
    // History stays: the row and its events are still there.
    assert_eq!(s.build("old-ok").await.unwrap().status, RunStatus::Published);
    assert!(s.has_ended("old-ok").await.unwrap());

    // Once the follow-up is old too, the shared folder may go.
    let later = s.ended_before(&now(), 100).await.unwrap();
    let later: Vec<&str> = later.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(later, ["parent", "old-failed", "old-task", "recent", "child"]);
}

async fn workers_beat_and_are_forgotten(s: Arc<dyn Store>) {
    let beat = |name: &str, busy: u32| WorkerBeat {
        name: name.into(),
        host: "box-1".into(),
        pid: 4242,
        slots: 4,
        busy,
        version: "0.1.0".into(),
    };
    s.worker_heartbeat(&beat("box-1-4242-aaaaaa", 0)).await.unwrap();
    s.worker_heartbeat(&beat("box-2-77-bbbbbb", 1)).await.unwrap();
    let first = s.workers(Duration::from_secs(10)).await.unwrap();
    assert_eq!(first.len(), 2);
    assert!(first.iter().all(|w| w.alive));
    let a = first[0].clone();
    assert_eq!((a.name.as_str(), a.host.as_str(), a.pid, a.slots, a.busy), ("box-1-4242-aaaaaa", "box-1", 4242, 4, 0));

    tokio::time::sleep(Duration::from_millis(1200)).await;
    s.worker_heartbeat(&beat("box-2-77-bbbbbb", 3)).await.unwrap();
    let now = s.workers(Duration::from_secs(1)).await.unwrap();
    let (a, b) = (&now[0], &now[1]);
    assert!(!a.alive, "not seen for over a second");
    assert!(b.alive && b.busy == 3, "its last beat's figures");
    assert!(b.seen_at > b.started_at, "started_at is its first beat");
    assert_eq!(b.started_at, first[1].started_at);

    assert_eq!(s.forget_workers(Duration::from_secs(1)).await.unwrap(), 1);
    let left = s.workers(Duration::from_secs(10)).await.unwrap();
    assert_eq!(left.iter().map(|w| w.name.as_str()).collect::<Vec<_>>(), ["box-2-77-bbbbbb"]);
}

both!(
    job_leases_are_exclusive,
    confidence_is_recalculated_with_decay,
    retention_lists_and_marks,
    workers_beat_and_are_forgotten
);
