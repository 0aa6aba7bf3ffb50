//! A worker cut off from PostgreSQL fences itself: a real `wright worker` reaches a real
//! (throwaway) PostgreSQL through a TCP relay that the test black-holes mid-build (connections
//! left open, no byte forwarded, as a network partition looks) and later heals. The cut-off
//! worker must stop its run within its lease by its own clock: its sandbox gone, and no model
//! call from it after the lease, before or after the partition heals; another worker takes the
//! build over and publishes it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
#![allow(clippy::print_stdout, clippy::print_stderr)] // test code: what was measured or skipped goes to the test log

mod support;

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::server::{PAGE, Server, Worker, client, create, create_ok, get_json, stateless_model_sleeping, stream};
use support::{MockLlm, Turn};
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

/// A follow-up works in its parent's folder. When its worker freezes (SIGSTOP) with a command
/// that writes on in its sandbox, the build is rescued by another worker, which works in a
/// folder of its own (a copy of the parent's as it was): the stale run's writes never appear
/// in it, and the files API and the archive serve the rescue's files.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rescued_follow_up_never_shares_its_folder_with_the_stale_run() {
    let pg = wright_pgtemp::PgServer::shared().expect("a throwaway PostgreSQL (Debian's `postgresql` package)");
    let db = pg.database().unwrap();
    let mark = format!("stale{}", std::process::id());
    let write = |content: &str| Turn::calls(&[("createFile", json!({"path": "index.html", "content": content}))]);
    // Worker A: builds the parent, then for the follow-up starts a loop that writes a file
    // into its folder every 100 ms, for ever.
    let loop_cmd = format!("while :; do echo from-the-stale-run > {mark}.txt; sleep 0.1; done");
    let llm_a = MockLlm::start_with_fallback(
        vec![],
        Turn::when(
            "keep writing",
            Turn::calls(&[("runCommand", json!({"command": "sh", "args": ["-c", loop_cmd]}))]),
            Turn::when("\"role\":\"tool\"", Turn::text("Done: the page is ready."), write(PAGE)),
        ),
    )
    .await;
    // Worker B, the rescue: writes its own page, then is done.
    let rescued = PAGE.replace("We walk your dog every day.", "Rescued run.");
    let llm_b = MockLlm::start_with_fallback(
        vec![],
        Turn::when("Rescued run", Turn::text("Done: the page is ready."), write(&rescued)),
    )
    .await;
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
    let a = Worker::start(dir.path(), &llm_a.base_url, &db, &logs.path().join("a.log"), &flags).await;
    let c = client();

    let parent = create_ok(&c, &api, &alice, "a landing page for a dog walker").await;
    let done = stream(&c, &api, &alice, &parent, None).await;
    assert_eq!(done.last().unwrap().data["success"].as_bool(), Some(true), "{}", a.log());
    let res = create(
        &c,
        &api,
        &alice,
        json!({"prompt": "keep writing notes about the walks", "continue": parent, "template": "static"}),
    )
    .await;
    assert_eq!(res.status(), 202);
    let child = res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let parents_folder = dir.path().join("builds").join(&parent);
    let stale_file = format!("{mark}.txt");
    wait_for("the stale run's loop writing in the parent's folder", Duration::from_secs(60), || {
        parents_folder.join(&stale_file).is_file()
    })
    .await;

    // Frozen: its lease runs out, and worker B takes the follow-up over.
    a.stop();
    let b = Worker::start(dir.path(), &llm_b.base_url, &db, &logs.path().join("b.log"), &flags).await;
    let events = stream(&c, &api, &alice, &child, None).await;
    let last = events.last().unwrap();
    assert_eq!((last.event.as_str(), last.data["success"].as_bool()), ("complete", Some(true)), "{}", b.log());
    assert!(events.iter().any(|e| e.event == "restarted"), "the follow-up was run again");
    // Let the stale loop (if it still runs) write a few more times.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let files = get_json(&c, &api, &alice, &format!("/api/builds/{child}/files")).await;
    let listed = files.to_string();
    assert!(listed.contains("index.html") && !listed.contains(&mark), "{listed}");
    let page = c
        .get(api.url(&format!("/api/builds/{child}/files/index.html")))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("Rescued run."), "{page}");
    let zip = c.get(api.url(&format!("/api/builds/{child}/archive"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(zip.status(), 200);
    let zip = zip.bytes().await.unwrap();
    let name = stale_file.as_bytes();
    assert!(zip.windows(name.len()).all(|w| w != name), "the archive holds the stale run's file");
    let folder = dir.path().join("builds").join(format!("{child}.2"));
    assert!(folder.join("index.html").is_file(), "the rescue works in a folder of its own");
    let names: Vec<String> =
        std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    assert!(!names.contains(&stale_file), "the stale run wrote into the rescue's folder: {names:?}");
    a.resume();
}

/// Whether process `pid` is stopped (SIGSTOP): its state in `/proc/PID/stat` is `T`.
fn stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('T')))
}

/// A worker frozen with SIGSTOP runs no code, so its own timers cannot stop its sandbox: the
/// leash (a process of its own per command, fed the lease's deadline) kills the sandbox within
/// the lease while the worker is still frozen. Once let go on (SIGCONT), the worker drops the
/// run and calls the model no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_frozen_workers_sandbox_is_gone_within_its_lease() {
    frozen_worker("31.0", "auto").await;
}

/// The same with the Landlock fallback, whose commands stay in the leash's process group.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_frozen_workers_landlock_sandbox_is_gone_within_its_lease() {
    frozen_worker("32.0", "landlock").await;
}

async fn frozen_worker(sleep: &str, sandbox: &str) {
    let pg = wright_pgtemp::PgServer::shared().expect("a throwaway PostgreSQL (Debian's `postgresql` package)");
    let db = pg.database().unwrap();
    let marker = format!("{sleep}{}", std::process::id());
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
    let flags =
        ["--workers", "1", "--lease", &lease, "--browser-check", "off", "--max-restarts", "5", "--sandbox", sandbox];
    let a = Worker::start(dir.path(), &llm_a.base_url, &db, &logs.path().join("a.log"), &flags).await;
    eprintln!("{}", a.first_line);
    let c = client();
    let id = create_ok(&c, &api, &alice, "a landing page for a dog walker, built slowly please").await;
    wait_for("worker A's sandbox runs the sleep", Duration::from_secs(60), || !processes_with(&needle).is_empty())
        .await;
    let calls_before = llm_a.requests().len();
    let lines: Vec<String> = processes_with(&needle)
        .iter()
        .filter_map(|p| std::fs::read(format!("/proc/{p}/cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .collect();
    assert!(lines.iter().any(|l| l.contains(" __leash ")), "the command runs on a leash: {lines:?}");
    if sandbox == "landlock" {
        assert!(lines.iter().any(|l| l.contains(" __confine ")), "the Landlock helper runs it: {lines:?}");
    }

    a.stop();
    let gone = wait_for("the frozen worker's sandbox ends", Duration::from_secs(LEASE_SECS * 3), || {
        processes_with(&needle).is_empty()
    })
    .await;
    assert!(stopped(a.pid), "the worker was still frozen when its sandbox ended");
    eprintln!(
        "measured: the frozen worker's {sandbox} sandbox was gone {:.2} s after SIGSTOP (lease {LEASE_SECS} s)",
        gone.as_secs_f64()
    );
    assert!(gone <= Duration::from_millis(LEASE_SECS * 1000 + 500), "not within the lease: {gone:?}");

    // Another worker publishes the build meanwhile, so nothing is left in the queue for A.
    let b = Worker::start(dir.path(), &llm_b.base_url, &db, &logs.path().join("b.log"), &flags).await;
    let events = stream(&c, &api, &alice, &id, None).await;
    let last = events.last().unwrap();
    assert_eq!((last.event.as_str(), last.data["success"].as_bool()), ("complete", Some(true)), "{}", b.log());

    // Let go on: it finds its lease gone by its own clock, drops the run, calls no model.
    a.resume();
    wait_for("the woken worker dropping its run", Duration::from_secs(LEASE_SECS * 2), || {
        a.log().contains("dropping this run")
    })
    .await;
    tokio::time::sleep(Duration::from_secs(LEASE_SECS)).await;
    assert_eq!(llm_a.requests().len(), calls_before, "the woken worker called the model\n{}", a.log());
}
