//! One ending, on SQLite and on PostgreSQL: a run's `complete` is made from its record, the
//! store refuses one that says otherwise, and a chat or assistant turn whose server died (its
//! lease ran out) is ended by another server's sweep with a `complete` that matches its record.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::sync::Arc;
use std::time::Duration;
use wright_events::{EndReason, EventKind, RunKind};
use wright_store::*;

fn new_run(id: &str, kind: RunKind) -> NewBuild {
    NewBuild {
        id: id.into(),
        kind,
        parent_id: None,
        prompt: "make add add".into(),
        template: None,
        lang: Lang::En,
        provider: "openai".into(),
        model: "m".into(),
        workspace: "answerer elsewhere 1 1".into(),
        started_at: now(),
    }
}

fn failed(reason: EndReason) -> BuildFinish {
    BuildFinish {
        status: RunStatus::Failed,
        end_reason: Some(reason),
        fix_attempts: 0,
        turns: 2,
        tokens: Tokens { input_tokens: 100, output_tokens: 20, cached_tokens: 0, cost_usd: 0.001 },
        duration_ms: 1234,
        files: vec!["math.js".into()],
        report: Some("1 passed, 1 failed".into()),
        finished_at: now(),
    }
}

/// The run's stored `complete` and the record it must agree with.
async fn complete_and_record(s: &dyn Store, run: &str) -> (EventKind, BuildRecord) {
    let events = s.events(run, 0).await.unwrap();
    let completes: Vec<&EventKind> =
        events.iter().map(|e| &e.kind).filter(|k| matches!(k, EventKind::Complete { .. })).collect();
    assert_eq!(completes.len(), 1, "exactly one `complete`: {events:?}");
    assert_eq!(events.last().map(|e| e.kind.type_name()), Some("complete"), "`complete` is last");
    (completes[0].clone(), s.build(run).await.unwrap())
}

/// What a stored `complete` says against what the run's record says.
fn assert_agree(complete: &EventKind, record: &BuildRecord) {
    let EventKind::Complete { success, files, iterations, duration_ms, end_reason, input_tokens, cost_usd, .. } =
        complete
    else {
        panic!("not a complete: {complete:?}")
    };
    assert_eq!(*success, record.status == RunStatus::Published);
    assert_eq!(*end_reason, record.end_reason, "the stream's end_reason is the record's");
    assert_eq!(files, &record.files);
    assert_eq!(*iterations, record.turns);
    assert_eq!(Some(*duration_ms), record.duration_ms);
    assert_eq!((*input_tokens, *cost_usd), (record.tokens.input_tokens, record.tokens.cost_usd));
}

/// A task run that failed, ended as they used to be: its `complete` written by hand with no
/// `end_reason` beside a record that says `tasks_failed`. The store refuses it, says which
/// field disagrees, and leaves the run open; the end made from the record is stored.
async fn a_complete_that_disagrees_with_its_record_is_refused(s: Arc<dyn Store>) {
    for (run, reason) in [("t-failed", EndReason::TasksFailed), ("t-cancelled", EndReason::Cancelled)] {
        s.create_build(&new_run(run, RunKind::Task)).await.unwrap();
        let mut by_hand = RunEnd::of(failed(reason), vec![]);
        let EventKind::Complete { end_reason, .. } = &mut by_hand.complete else { unreachable!() };
        *end_reason = None;
        let refused = s.finish(run, None, by_hand).await;
        let Err(StoreError::Invalid(why)) = refused else { panic!("a disagreeing `complete` is refused: {refused:?}") };
        assert!(why.contains("end_reason") && why.contains("disagrees with the run's record"), "{why}");
        assert!(!s.has_ended(run).await.unwrap(), "nothing was stored");
        assert!(s.events(run, 0).await.unwrap().is_empty());

        // Any other field that disagrees is refused too, success first among them.
        let mut lying = RunEnd::of(failed(reason), vec![]);
        let EventKind::Complete { success, files, .. } = &mut lying.complete else { unreachable!() };
        (*success, *files) = (true, vec![]);
        let Err(StoreError::Invalid(why)) = s.finish(run, None, lying).await else { panic!("refused") };
        assert!(why.contains("success") && why.contains("files"), "{why}");

        let ended = s.finish(run, None, RunEnd::of(failed(reason), vec![])).await.unwrap();
        assert!(matches!(ended, Finished::Now(_)));
        let (complete, record) = complete_and_record(s.as_ref(), run).await;
        assert_eq!(record.end_reason, Some(reason));
        assert_agree(&complete, &record);
    }
    // What only the build knows (its browser check) rides along and is not a disagreement.
    s.create_build(&new_run("b-checked", RunKind::Build)).await.unwrap();
    let checked = RunEnd::of(failed(EndReason::VerificationFailed), vec![]).checked(false, Some("no page".into()));
    s.finish("b-checked", None, checked).await.unwrap();
    let (complete, record) = complete_and_record(s.as_ref(), "b-checked").await;
    assert_agree(&complete, &record);
    assert!(matches!(complete, EventKind::Complete { browser_reason: Some(ref r), .. } if r == "no page"));
}

/// What a server's sweep does with the turns whose lease ran out (the engine's
/// `end_lapsed_turns`, as the store sees it): end each with an `error` and the `complete` made
/// from its record.
async fn sweep(s: &dyn Store) -> Vec<String> {
    let mut ended = Vec::new();
    for run in s.lapsed_turns().await.unwrap() {
        let record = BuildFinish {
            status: RunStatus::Failed,
            end_reason: Some(EndReason::ServerStopped),
            fix_attempts: 0,
            turns: 0,
            tokens: Tokens::default(),
            duration_ms: 0,
            files: vec![],
            report: Some("the server stopped".into()),
            finished_at: now(),
        };
        let words = vec![EventKind::Error { message: "the server stopped; send it again".into(), detail: None }];
        if let Finished::Now(_) = s.finish(&run, None, RunEnd::of(record, words)).await.unwrap() {
            ended.push(run);
        }
    }
    ended
}

/// Server `a` answers three turns and dies: one chat turn and one assistant turn mid-answer
/// (their leases run out), one assistant turn waiting for its page (it holds no server). A
/// live turn of `b` keeps its lease. `b`'s sweep ends exactly the two lapsed turns, once, each
/// with a `complete` that agrees with its record; the waiting and the live turn stay open, and
/// the waiting one, once resumed, is not swept before its new server holds it.
async fn a_turn_whose_server_died_is_ended_by_another_servers_sweep(a: Arc<dyn Store>, b: Arc<dyn Store>) {
    for run in ["chat-dead", "asst-dead", "asst-waiting", "chat-live", "chat-never-held"] {
        a.create_build(&new_run(run, RunKind::Chat)).await.unwrap();
    }
    a.create_conversation("c1", "ann", "").await.unwrap();
    for (run, state) in [("asst-dead", TurnState::Running), ("asst-waiting", TurnState::Running)] {
        let t = AssistantTurn {
            run: run.into(),
            conversation: "c1".into(),
            user: "ann".into(),
            assistant: "wright".into(),
            lang: Lang::En,
            client_tools: vec!["click_element".into()],
            transcript: serde_json::json!([]),
            parts: vec![],
            round: 0,
            state,
        };
        a.begin_assistant_turn(&t).await.unwrap();
        if run == "asst-waiting" {
            let call = CallRow {
                id: format!("{run}-call"),
                provider_id: "call_0".into(),
                run: run.into(),
                conversation: "c1".into(),
                round: 0,
                pos: 0,
                name: "click_element".into(),
                arguments: "{}".into(),
                args_hash: "h".into(),
                side: Side::Client,
                read_only: false,
                deadline: "2999-01-01T00:00:00.000Z".into(),
                status: CallStatus::Pending,
                output: None,
                error: None,
            };
            a.wait_for_page(&AssistantTurn { state: TurnState::Waiting, ..t }, &[call]).await.unwrap();
        }
    }
    let short = Duration::from_millis(300);
    for run in ["chat-dead", "asst-dead", "asst-waiting"] {
        assert!(a.hold_turn(run, short).await.unwrap(), "{run} is open and takes a lease");
    }
    assert!(b.hold_turn("chat-live", Duration::from_secs(600)).await.unwrap());
    // Before the leases run out nothing is swept.
    assert!(b.lapsed_turns().await.unwrap().is_empty());
    // `a` dies: nobody renews its turns' leases.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let mut lapsed = b.lapsed_turns().await.unwrap();
    lapsed.sort();
    assert_eq!(lapsed, ["asst-dead", "chat-dead"]);

    // Two sweeps at once (two servers): each turn is ended exactly once between them.
    let (one, two) = tokio::join!(sweep(b.as_ref()), sweep(a.as_ref()));
    let mut ended: Vec<String> = one.into_iter().chain(two).collect();
    ended.sort();
    assert_eq!(ended, ["asst-dead", "chat-dead"]);
    for run in ["asst-dead", "chat-dead"] {
        let (complete, record) = complete_and_record(b.as_ref(), run).await;
        assert_eq!((record.status, record.end_reason), (RunStatus::Failed, Some(EndReason::ServerStopped)));
        assert_agree(&complete, &record);
        assert!(!b.hold_turn(run, short).await.unwrap(), "an ended turn takes no lease");
        assert!(matches!(
            a.append(run, None, vec![Draft::now(EventKind::Error { message: "late".into(), detail: None })]).await,
            Err(StoreError::Ended(_))
        ));
    }
    for run in ["asst-waiting", "chat-live", "chat-never-held"] {
        assert!(!b.has_ended(run).await.unwrap(), "{run} stays open");
    }
    assert!(b.lapsed_turns().await.unwrap().is_empty());
    // The waiting turn gave its lease back when it began to wait; the page answers, the turn
    // runs again, and until the resuming server holds it the sweep leaves it alone.
    a.release_turn("asst-waiting").await.unwrap();
    let answered = b.answer_calls("c1", &[("asst-waiting-call".into(), Answer::Output("ok".into()))], "two").await;
    assert!(matches!(answered.unwrap(), Answered::RoundComplete { .. }));
    assert!(b.lapsed_turns().await.unwrap().is_empty(), "a resumed turn not yet held is not swept");
    assert!(b.hold_turn("asst-waiting", Duration::from_secs(600)).await.unwrap());
    assert!(b.lapsed_turns().await.unwrap().is_empty());
    // A build's lease is the build reaper's business, and a turn's is not: the reaper of builds
    // never takes a turn.
    assert!(b.take_expired("reaper", Duration::from_secs(60), "").await.unwrap().is_empty());
}

both!(a_complete_that_disagrees_with_its_record_is_refused);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_turn_whose_server_died_is_ended_by_another_servers_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("w.db").display());
    let (a, b) = (open(&url).await.unwrap(), open(&url).await.unwrap());
    a_turn_whose_server_died_is_ended_by_another_servers_sweep(a, b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_turn_whose_server_died_is_ended_by_another_servers_sweep() {
    let url = support::postgres_url();
    let a: Arc<dyn Store> = Arc::new(PgStore::open_with(&url, 4).await.unwrap());
    let b: Arc<dyn Store> = Arc::new(PgStore::open_with(&url, 4).await.unwrap());
    a_turn_whose_server_died_is_ended_by_another_servers_sweep(a, b).await;
}
