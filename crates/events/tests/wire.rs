//! The typed fields keep the JSON the contract shows (CONTRACT.md): the strings and numbers on
//! the wire are the ones they were when these fields were plain strings and integers.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use serde_json::json;
use wright_events::{BrowserOutcome, Event, EventKind, Lang, RestartReason, Seq, Template};

fn event(seq: u64, kind: EventKind) -> serde_json::Value {
    serde_json::to_value(Event { seq: Seq(seq), build: "b1".into(), ts: "2026-11-28T00:00:00.000Z".into(), kind })
        .unwrap()
}

#[test]
fn browser_check_outcome_is_the_contracts_word() {
    for (outcome, word) in
        [(BrowserOutcome::Checked, "checked"), (BrowserOutcome::Skipped, "skipped"), (BrowserOutcome::Failed, "failed")]
    {
        let kind = EventKind::BrowserCheck {
            iteration: 1,
            outcome,
            reason: None,
            console_errors: 0,
            exceptions: 0,
            failed_requests: 0,
            blocked_requests: 0,
            blank: false,
            actions: 2,
            screenshot: None,
            duration_ms: 5,
        };
        let v = event(3, kind.clone());
        assert_eq!(v["type"], "browser_check");
        assert_eq!(v["outcome"], word);
        // A line an earlier version stored reads back as the same event.
        let back: Event = serde_json::from_value(v).unwrap();
        assert_eq!(back.kind, kind);
    }
}

#[test]
fn restarted_reason_is_the_contracts_word() {
    let v = event(7, EventKind::Restarted { attempt: 2, reason: RestartReason::WorkerLost });
    assert_eq!(
        v,
        json!({"seq": 7, "build": "b1", "ts": "2026-11-28T00:00:00.000Z", "type": "restarted", "attempt": 2, "reason": "worker_lost"})
    );
    let stored = r#"{"seq":9,"build":"b1","ts":"t","type":"restarted","attempt":3,"reason":"shutdown"}"#;
    let back: Event = serde_json::from_str(stored).unwrap();
    assert_eq!(back.kind, EventKind::Restarted { attempt: 3, reason: RestartReason::Shutdown });
    // An unknown word is a clear error, not a panic nor a silent default.
    let odd = r#"{"seq":9,"build":"b1","ts":"t","type":"restarted","attempt":3,"reason":"sunspots"}"#;
    assert!(serde_json::from_str::<Event>(odd).is_err());
}

#[test]
fn seq_is_a_plain_number_on_the_wire() {
    assert_eq!(serde_json::to_value(Seq(42)).unwrap(), json!(42));
    assert_eq!(serde_json::from_value::<Seq>(json!(42)).unwrap(), Seq(42));
    assert_eq!(Seq(41).next(), Seq(42));
    assert_eq!(Seq(42).to_string(), "42");
}

#[test]
fn template_and_lang_are_their_old_strings() {
    assert_eq!(serde_json::to_value(Template::Fullstack).unwrap(), json!("fullstack"));
    assert_eq!(serde_json::to_value(Template::React).unwrap(), json!("react"));
    assert_eq!(serde_json::to_value(Lang::Pt).unwrap(), json!("pt"));
    assert_eq!(serde_json::from_value::<Template>(json!("auto")).unwrap(), Template::Auto);
}
