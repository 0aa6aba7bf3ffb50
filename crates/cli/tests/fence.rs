//! A worker cut off from PostgreSQL fences itself: a real `wright worker` reaches a real
//! (throwaway) PostgreSQL through a TCP relay that the test black-holes mid-build (connections
//! left open, no byte forwarded, as a network partition looks) and later heals. The cut-off
//! worker must stop its run within its lease by its own clock: its sandbox gone, and no model
//! call from it after the lease, before or after the partition heals; another worker takes the
//! build over and publishes it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::MockLlm;
use support::server::{Server, Worker, client, create_ok, stateless_model_sleeping, stream};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const LEASE_SECS: u64 = 3;

/// A TCP relay to `upstream` on a free loopback port. While `cut` is set it forwards nothing
/// and closes nothing: both sides wait, as across a partition.
struct Relay {
    port: u16,
    cut: Arc<AtomicBool>,
}

impl Relay {
    async fn start(upstream: u16) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let flag = cut.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await else { continue };
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                tokio::spawn(pump(cr, sw, flag.clone()));
                tokio::spawn(pump(sr, cw, flag.clone()));
            }
        });
        Relay { port, cut }
    }
}

/// Copy one direction; while the relay is cut, hold what was read and wait.
async fn pump(mut from: tokio::net::tcp::OwnedReadHalf, mut to: tokio::net::tcp::OwnedWriteHalf, cut: Arc<AtomicBool>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        while cut.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        while cut.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// Host processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").contains(needle))
        })
        .filter(|pid| *pid != std::process::id())
        .collect()
}

async fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_cut_off_from_postgres_stops_its_run_within_its_lease() {
    let pg = wright_pgtemp::PgServer::shared().expect("a throwaway PostgreSQL (Debian's `postgresql` package)");
    let db = pg.database().unwrap();
    let relay = Relay::start(pg.port()).await;
    let db_via_relay = db.replace(&format!(":{}/", pg.port()), &format!(":{}/", relay.port));
    assert_ne!(db, db_via_relay);

    // The cut-off worker's model: its build runs a long sleep no other process runs.
    let marker = format!("30.0{}", std::process::id());
    let needle = format!("sleep {marker}");
    let llm_a = MockLlm::start_with_fallback(vec![], stateless_model_sleeping(&marker)).await;
    let llm_b = MockLlm::start_with_fallback(vec![], stateless_model_sleeping("1")).await;
    let dir = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let lease = LEASE_SECS.to_string();
    let api = Server::start_db(
        dir.path(),
        &llm_b.base_url,
        &db,
        &["--no-workers", "--lease", &lease, "--heartbeat", "1", "--browser-check", "off"],
    )
    .await;
    let alice = api.add_user("alice", false).await;
    let flags = ["--workers", "1", "--lease", &lease, "--browser-check", "off", "--max-restarts", "5"];
    let a = Worker::start(dir.path(), &llm_a.base_url, &db_via_relay, &logs.path().join("a.log"), &flags).await;

    let c = client();
    let id = create_ok(&c, &api, &alice, "a landing page for a dog walker, built slowly please").await;
    wait_for("worker A's sandbox runs the sleep", Duration::from_secs(60), || !processes_with(&needle).is_empty())
        .await;
    let calls_before = llm_a.requests().len();
    assert_eq!(calls_before, 1, "the call that started the sleep");

    // The partition: worker A's database connections go silent.
    relay.cut.store(true, Ordering::SeqCst);
    let gone = wait_for(
        "the cut-off worker's sandbox ends within its lease (and a renewal period)",
        Duration::from_secs(LEASE_SECS * 2 + 2),
        || processes_with(&needle).is_empty(),
    )
    .await;
    eprintln!("measured: the stale sandbox was gone {:.2} s after the database went silent", gone.as_secs_f64());

    // Another worker, reaching the database directly, takes the build over and publishes it.
    let b = Worker::start(dir.path(), &llm_b.base_url, &db, &logs.path().join("b.log"), &flags).await;
    let events = stream(&c, &api, &alice, &id, None).await;
    let last = events.last().unwrap();
    assert_eq!((last.event.as_str(), last.data["success"].as_bool()), ("complete", Some(true)), "{}", b.log());
    assert!(events.iter().any(|e| e.event == "restarted"), "the build was run again");

    // The partition heals: the stale run is gone for good and calls the model no more.
    relay.cut.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(LEASE_SECS * 2)).await;
    assert_eq!(
        llm_a.requests().len(),
        calls_before,
        "the cut-off worker called the model after its lease\n{}",
        a.log()
    );
    assert!(a.log().contains("dropping this run"), "{}", a.log());
}
