//! The embedding scheduler with a real embedder that does work (it sleeps per text and notes
//! each call it serves), and a bench with the real e5 model.
#![allow(clippy::print_stdout, clippy::print_stderr)] // test code: what was measured or skipped goes to the test log

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wright_chat::Embedder;
use wright_engine::embedq::{Class, EmbedError, EmbedQueue, Loader, ModelStatus, Settings};

/// Takes `per_text` per text, as a model on a busy CPU would, and writes down the first text
/// of every call it serves, in order.
struct Slow {
    per_text: Duration,
    calls: Arc<Mutex<Vec<String>>>,
}

impl Embedder for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.calls.lock().map_err(|e| e.to_string())?.push(texts.first().cloned().unwrap_or_default());
        std::thread::sleep(self.per_text * texts.len() as u32);
        Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0]).collect())
    }
}

fn slow_queue(per_text: Duration, batch: usize) -> (EmbedQueue, Arc<Mutex<Vec<String>>>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    let loader: Loader = Box::new(move || Ok(Arc::new(Slow { per_text, calls: seen.clone() }) as Arc<dyn Embedder>));
    let settings = Settings { batch, per_owner: 500, ..Settings::default() };
    (EmbedQueue::new("slow", loader, settings), calls)
}

fn texts(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i}")).collect()
}

fn calls_so_far(calls: &Mutex<Vec<String>>) -> Vec<String> {
    calls.lock().map(|c| c.clone()).unwrap_or_default()
}

#[tokio::test]
async fn an_interactive_job_waits_for_one_batch_of_a_long_bulk_queue() {
    // 10 ms a text, 4 texts a batch: alice's 400 texts are 100 batches, four seconds.
    let (q, calls) = slow_queue(Duration::from_millis(10), 4);
    q.ready().await.unwrap_or_else(|e| panic!("{e}"));
    let h = q.handle();
    let flood = tokio::spawn(async move { h.embed("alice", Class::Bulk, texts("alice", 400)).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let served_before = calls_so_far(&calls).len();
    assert!(served_before >= 1, "the flood has started");
    let t0 = Instant::now();
    let v = q.embed("bob", Class::Interactive, vec!["quiz me on cells".into()]).await.unwrap_or_else(|e| panic!("{e}"));
    let waited = t0.elapsed();
    assert_eq!(v.len(), 1);
    let log = calls_so_far(&calls);
    let at = log.iter().position(|t| t == "quiz me on cells").unwrap_or(usize::MAX);
    // At most the batch in progress ran between its arrival and its own call (one more may
    // have started between counting and sending it); in arrival order it would be call 100.
    assert!(at <= served_before + 1, "served as call {at}, {served_before} calls had started: {log:?}");
    assert!(waited < Duration::from_secs(1), "waited {waited:?} behind a 4 s flood");
    let bulk = flood.await.unwrap_or_else(|e| panic!("{e}")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(bulk.len(), 400, "the flood is still served whole, in order");
    assert_eq!(bulk[7], vec!["alice-7".len() as f32, 1.0]);
}

#[tokio::test]
async fn two_owners_bulk_jobs_take_turns() {
    let (q, calls) = slow_queue(Duration::from_millis(5), 2);
    q.ready().await.unwrap_or_else(|e| panic!("{e}"));
    let (a, b) = (q.handle(), q.handle());
    let alice = tokio::spawn(async move { a.embed("alice", Class::Bulk, texts("alice", 40)).await });
    tokio::time::sleep(Duration::from_millis(15)).await;
    let started = calls_so_far(&calls).len();
    let carol = tokio::spawn(async move { b.embed("carol", Class::Bulk, texts("carol", 6)).await });
    let (alice, carol) = (alice.await, carol.await);
    assert_eq!(alice.ok().and_then(Result::ok).map(|v| v.len()), Some(40));
    assert_eq!(carol.ok().and_then(Result::ok).map(|v| v.len()), Some(6));
    let log = calls_so_far(&calls);
    let carols: Vec<usize> = log.iter().enumerate().filter(|(_, t)| t.starts_with("carol")).map(|(i, _)| i).collect();
    assert_eq!(carols.len(), 3, "{log:?}");
    // Carol's three batches each follow one of alice's: alice's 20 batches do not go first.
    assert!(carols.windows(2).all(|w| w[1] - w[0] == 2), "carol's batches at {carols:?}: {log:?}");
    assert!(carols[0] <= started + 2, "carol came after {started} calls, served as call {}: {log:?}", carols[0]);
}

#[tokio::test]
async fn an_owner_with_too_many_batches_waiting_is_refused() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    let loader: Loader = Box::new(move || {
        Ok(Arc::new(Slow { per_text: Duration::from_millis(100), calls: seen.clone() }) as Arc<dyn Embedder>)
    });
    let q = EmbedQueue::new("slow", loader, Settings { batch: 2, per_owner: 4, ..Settings::default() });
    q.ready().await.unwrap_or_else(|e| panic!("{e}"));
    let h = q.handle();
    // Four batches of 200 ms: once the first is taken, three wait.
    let first = tokio::spawn(async move { h.embed("dave", Class::Bulk, texts("dave", 8)).await });
    while calls_so_far(&calls).is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    match q.embed("dave", Class::Bulk, texts("more", 6)).await {
        Err(EmbedError::Busy { owner, limit: 4, .. }) => assert_eq!(owner, "dave"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    // Someone else is not refused for dave's queue.
    assert_eq!(q.embed("erin", Class::Bulk, texts("erin", 3)).await.map(|v| v.len()).ok(), Some(3));
    assert_eq!(first.await.ok().and_then(Result::ok).map(|v| v.len()), Some(8));
}

#[tokio::test]
async fn a_failed_load_is_tried_again_after_the_backoff_and_concurrent_callers_share_a_load() {
    // The model file is missing at first, then present (as after `wright doctor` told them).
    let present = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let loads = Arc::new(AtomicUsize::new(0));
    let (p, l) = (present.clone(), loads.clone());
    let loader: Loader = Box::new(move || {
        l.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(100));
        if p.load(Ordering::SeqCst) {
            Ok(Arc::new(Slow { per_text: Duration::from_millis(1), calls: Default::default() }) as Arc<dyn Embedder>)
        } else {
            Err("model file /models/e5.gguf does not exist".into())
        }
    });
    let backoff = Duration::from_millis(300);
    let settings = Settings { backoff, max_backoff: Duration::from_secs(5), ..Settings::default() };
    let q = EmbedQueue::new("e5", loader, settings);

    let first = q.embed("alice", Class::Interactive, vec!["hi".into()]).await;
    assert!(matches!(&first, Err(EmbedError::Unavailable(why)) if why.contains("does not exist")), "{first:?}");
    assert_eq!(loads.load(Ordering::SeqCst), 1);
    // Within the backoff: refused at once with the reason, no second load.
    let again = q.embed("bob", Class::Bulk, vec!["hi".into()]).await;
    assert!(matches!(&again, Err(EmbedError::Unavailable(why)) if why.contains("does not exist")), "{again:?}");
    assert_eq!(loads.load(Ordering::SeqCst), 1, "refused without a load");
    match q.status() {
        ModelStatus::Failed { why, retry_in } => {
            assert!(why.contains("does not exist") && retry_in <= backoff, "{why} {retry_in:?}")
        }
        s => panic!("status {s:?}"),
    }

    // The file arrives; past the backoff, five callers at once get one load between them.
    present.store(true, Ordering::SeqCst);
    tokio::time::sleep(backoff).await;
    let all: Vec<_> = (0..5)
        .map(|i| {
            let h = q.handle();
            tokio::spawn(async move { h.embed(&format!("u{i}"), Class::Interactive, vec![format!("t{i}")]).await })
        })
        .collect();
    for j in all {
        assert_eq!(j.await.ok().and_then(Result::ok).map(|v| v.len()), Some(1));
    }
    assert_eq!(loads.load(Ordering::SeqCst), 2, "one retry, shared by all five");
    assert!(matches!(q.status(), ModelStatus::Ready(_)));
}

#[tokio::test]
async fn an_embedding_model_switched_off_refuses_with_the_reason() {
    let q = EmbedQueue::off("e5", "off in [chat] embedding");
    let r = q.embed("alice", Class::Bulk, vec!["x".into()]).await;
    assert!(matches!(&r, Err(EmbedError::Unavailable(why)) if why.contains("off in [chat]")), "{r:?}");
}

/// The real e5 model (as the chat and docs tests fetch it), or `None` where it cannot be.
fn e5() -> Option<Arc<wright_local::E5Embedder>> {
    let data = std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"));
    match wright_local::pull_embedding_model(&data, &|_| {}) {
        Ok(p) => Some(Arc::new(wright_local::E5Embedder::load(&p).unwrap_or_else(|e| panic!("{e}")))),
        Err(e) => {
            eprintln!("SKIPPED: the embedding model cannot be fetched on this machine: {e}");
            None
        }
    }
}

struct E5(Arc<wright_local::E5Embedder>);

impl Embedder for E5 {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.0.embed(texts).map_err(|e| e.to_string())
    }
}

fn p50_max(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[v.len() - 1])
}

/// Interactive latency under a flood of bulk work, before (every caller on the model directly,
/// as `spawn_blocking` did) and after (through the scheduler). Run with
/// `cargo test -p wright-engine --test embedq -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "a bench: seconds of CPU"]
async fn bench_interactive_latency_under_a_bulk_flood() {
    let Some(model) = e5() else { return };
    let flood: Vec<String> =
        (0..64).map(|i| format!("passage {i}: cells divide by mitosis and meiosis in turn")).collect();
    let probes = 8;

    // Before: two users each send /v1/embeddings of 64 texts, straight to the model.
    let mut before = Vec::new();
    for _ in 0..probes {
        let bulk: Vec<_> = (0..2)
            .map(|_| {
                let (m, f) = (model.clone(), flood.clone());
                tokio::task::spawn_blocking(move || m.embed(&f).map(|v| v.len()))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(30)).await;
        let m = model.clone();
        let t0 = Instant::now();
        let _ = tokio::task::spawn_blocking(move || m.embed(&["quiz me on cells".to_string()])).await;
        before.push(t0.elapsed());
        for b in bulk {
            let _ = b.await;
        }
    }

    // After: the same through the scheduler.
    let m = model.clone();
    let loader: Loader = Box::new(move || Ok(Arc::new(E5(m.clone())) as Arc<dyn Embedder>));
    let q = EmbedQueue::new("e5", loader, Settings::default());
    q.ready().await.unwrap_or_else(|e| panic!("{e}"));
    let mut after = Vec::new();
    for _ in 0..probes {
        let bulk: Vec<_> = ["alice", "bob"]
            .iter()
            .map(|who| {
                let (h, f, who) = (q.handle(), flood.clone(), who.to_string());
                tokio::spawn(async move { h.embed(&who, Class::Bulk, f).await.map(|v| v.len()) })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(30)).await;
        let t0 = Instant::now();
        let v = q.embed("carol", Class::Interactive, vec!["quiz me on cells".into()]).await;
        after.push(t0.elapsed());
        assert!(v.is_ok(), "{v:?}");
        for b in bulk {
            assert_eq!(b.await.ok().and_then(Result::ok), Some(64));
        }
    }
    let (b50, bmax) = p50_max(before);
    let (a50, amax) = p50_max(after);
    println!(
        "interactive latency under 2x64 bulk texts: before p50 {b50:?} max {bmax:?}; after p50 {a50:?} max {amax:?}"
    );
    assert!(a50 < b50, "the scheduler serves the interactive text sooner");
}
