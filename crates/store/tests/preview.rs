//! A preview's own event log on both backends: numbered per build from 1, read back after a
//! point, kept apart from the build's run log (which ended at `complete`), and numbered
//! without a gap or a duplicate when many writers add at once.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::collections::HashSet;
use std::sync::Arc;
use wright_events::EventKind;
use wright_store::*;

mod support;

fn outside(host: &str, allowed: bool) -> EventKind {
    EventKind::OutsideRequest {
        host: host.into(),
        method: "GET".into(),
        status: if allowed { 200 } else { 403 },
        bytes: 12,
        duration_ms: 3,
        allowed,
        api: None,
        reason: (!allowed).then(|| format!("{host} is not on this build's list of allowed hosts")),
    }
}

async fn numbered_per_build_and_read_after(store: Arc<dyn Store>) {
    let a = store.add_preview_event("b1", &outside("api.example.com", true)).await.unwrap();
    let b = store.add_preview_event("b1", &outside("evil.example.com", false)).await.unwrap();
    let other = store.add_preview_event("b2", &outside("api.example.com", true)).await.unwrap();
    assert_eq!((a.seq.0, b.seq.0, other.seq.0), (1, 2, 1));
    let all = store.preview_events("b1", 0).await.unwrap();
    assert_eq!(all, vec![a.clone(), b.clone()]);
    assert_eq!(store.preview_events("b1", 1).await.unwrap(), vec![b]);
    assert!(store.preview_events("nobody", 0).await.unwrap().is_empty());
    // The build's own run log is not touched.
    assert!(store.events("b1", 0).await.unwrap().is_empty());
}

async fn many_writers_get_every_number_once(store: Arc<dyn Store>) {
    let tasks: Vec<_> = (0..24)
        .map(|i| {
            let s = store.clone();
            tokio::spawn(async move { s.add_preview_event("busy", &outside(&format!("h{i}.example"), true)).await })
        })
        .collect();
    let mut seqs = HashSet::new();
    for t in tasks {
        seqs.insert(t.await.unwrap().unwrap().seq.0);
    }
    assert_eq!(seqs, (1..=24).collect::<HashSet<u64>>());
    let stored: Vec<u64> = store.preview_events("busy", 0).await.unwrap().iter().map(|e| e.seq.0).collect();
    assert_eq!(stored, (1..=24).collect::<Vec<u64>>());
}

both!(numbered_per_build_and_read_after, many_writers_get_every_number_once);
