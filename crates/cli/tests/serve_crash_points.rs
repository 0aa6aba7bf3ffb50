//! `wright serve` killed with SIGKILL at many points of several builds, whatever they are doing
//! at that moment (queued, starting, running a command, writing files, finishing, finished),
//! and started again each time. Afterwards every build's stream is seq 1..n with exactly one
//! `complete`, last, and its record agrees with that `complete`: a run is ended by the store
//! in one step, so no kill can leave the two apart.
//!
//! `WRIGHT_CRASH_POINTS` sets how many kills (CI: 14).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use serde_json::Value;
use std::time::{Duration, Instant};
use support::MockLlm;
use support::server::{Server, client, crash_flags, create_ok, stateless_model, stored_events, stream};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_nine_at_any_point_leaves_every_stream_and_record_in_agreement() {
    let kills: u64 = std::env::var("WRIGHT_CRASH_POINTS").ok().and_then(|v| v.parse().ok()).unwrap_or(14);
    let llm = MockLlm::start_with_fallback(vec![], stateless_model(1)).await;
    let dir = tempfile::tempdir().unwrap();
    let flags = crash_flags(&["--max-restarts", "50"]);
    let clock = Instant::now();
    let mut s = Server::start(dir.path(), &llm.base_url, &flags).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let mut ids = Vec::new();
    // Quick builds (one write) and slow ones (a command that sleeps, then a write), so kills
    // land in every part of a build's life, its end included.
    for i in 0..8 {
        let prompt = if i % 2 == 0 {
            format!("landing page {i} for a bakery")
        } else {
            format!("landing page {i} for a dog walker, built slowly please")
        };
        ids.push(create_ok(&c, &s, &alice, &prompt).await);
    }
    // Kill after a spread of delays since the server came up: at once (the reaper and the
    // workers starting), and at points through builds' runs and endings.
    let delays = [0u64, 40, 120, 250, 400, 600, 850, 1100, 1400, 1800, 2300];
    for k in 0..kills {
        tokio::time::sleep(Duration::from_millis(delays[k as usize % delays.len()])).await;
        s.kill9().await;
        s = Server::start(dir.path(), &llm.base_url, &flags).await;
    }

    let mut published = 0;
    for id in &ids {
        let events = tokio::time::timeout(Duration::from_secs(300), stream(&c, &s, &alice, id, None))
            .await
            .unwrap_or_else(|_| panic!("build {id} did not end"));
        let stored = stored_events(&s, id).await;
        let data: Vec<Value> = events.iter().map(|e| e.data.clone()).collect();
        assert_eq!(data, stored, "{id}: the stream is what is stored");
        for (i, e) in stored.iter().enumerate() {
            assert_eq!(e["seq"].as_u64(), Some(i as u64 + 1), "{id}: gapless and unique");
        }
        let completes: Vec<&Value> = stored.iter().filter(|e| e["type"] == "complete").collect();
        assert_eq!(completes.len(), 1, "{id}: exactly one complete");
        let complete = completes[0];
        assert_eq!(stored.last().unwrap()["type"], "complete", "{id}: complete is last");

        // The record says what `complete` says.
        let b: Value =
            c.get(s.url(&format!("/api/builds/{id}"))).bearer_auth(&alice).send().await.unwrap().json().await.unwrap();
        let success = complete["success"].as_bool().unwrap();
        assert_eq!(b["status"], if success { "published" } else { "failed" }, "{id}: {b:#}");
        assert_eq!(b["files"], complete["files"], "{id}: files");
        assert_eq!(b["end_reason"].is_null(), success, "{id}: a failed build says why");
        if success {
            published += 1;
        }
    }
    println!(
        "crash points: {} builds, {kills} kills, {published} published, every stream and record agree, {:.1} s",
        ids.len(),
        clock.elapsed().as_secs_f64()
    );
}
