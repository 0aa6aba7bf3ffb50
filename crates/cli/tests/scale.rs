//! The shared store at scale, on a real PostgreSQL (a throwaway one, no Docker): two API
//! servers (`wright serve --no-workers`) and three `wright worker` processes on one database
//! and one data folder, thirty builds from a few users spread over both servers. While builds
//! run, one worker is killed with SIGKILL, and the two others in turn are frozen (SIGSTOP) for
//! longer than their lease, then let go on (SIGCONT): one two leases on, one after its sleeps
//! would have ended (so it wakes with a finished command to report). The leash kills a frozen
//! worker's sandboxes within its lease, so none still runs at SIGCONT. Every build must end published; every
//! stream, read from either server (one of them cut and resumed with `Last-Event-ID`), must be
//! exactly what is stored; a frozen worker must get nothing in once its builds were handed on;
//! and no process of a killed or dropped run's sandbox may be left.
//!
//! And the limits: forty requests at once from one user over both servers admit exactly the
//! user's concurrent limit, however the requests interleave (the store decides in the
//! transaction that queues).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use support::MockLlm;
use support::server::{Server, Sse, Worker, client, create, create_ok, read_sse_upto, stateless_model_sleeping};
use wright_store::Store;

/// Seconds the model's `sleep` runs in each build's sandbox: long enough that builds are mid-
/// command when a worker is killed or frozen, and that a sleep the kill left behind would
/// still be running when the test looks for it.
const SLEEP_SECS: u32 = 10;
/// The workers' lease, seconds.
const LEASE_SECS: u64 = 3;
const BUILDS: usize = 30;

fn database() -> String {
    let pg = wright_pgtemp::PgServer::shared().expect("a throwaway PostgreSQL (Debian's `postgresql` package)");
    pg.database().expect("a fresh database")
}

/// Flags of an API-only server for these tests, then `extra`.
fn api_flags(extra: &[&'static str]) -> Vec<&'static str> {
    let mut flags =
        vec!["--no-workers", "--lease", "3", "--heartbeat", "1", "--browser-check", "off", "--max-restarts", "5"];
    flags.extend_from_slice(extra);
    flags
}

/// Host processes whose command line contains `needle`, with their pids.
fn processes_with(needle: &str) -> Vec<(u32, String)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let c = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            c.contains(needle).then_some((pid, c))
        })
        .filter(|(pid, _)| *pid != std::process::id())
        .collect()
}

fn parent_of(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("PPid:")).and_then(|p| p.trim().parse().ok())
}

fn descends_from(mut pid: u32, ancestor: u32) -> bool {
    for _ in 0..64 {
        match parent_of(pid) {
            Some(p) if p == ancestor => return true,
            Some(p) if p > 1 => pid = p,
            _ => return false,
        }
    }
    false
}

/// The sandbox processes (`bwrap` and the `sleep` in it) of `worker`'s builds.
fn sandbox_of(worker: &Worker, needle: &str) -> Vec<(u32, String)> {
    processes_with(needle).into_iter().filter(|(pid, _)| descends_from(*pid, worker.pid)).collect()
}

/// Which of `procs` still run (the same pid with the same command line).
fn still_running(procs: &[(u32, String)]) -> Vec<(u32, String)> {
    procs
        .iter()
        .filter(|(pid, cmd)| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ") == *cmd)
        })
        .cloned()
        .collect()
}

/// A build's events as stored, as the JSON the streams carry (the same line, read back: a
/// float goes through text the same way).
async fn stored(store: &dyn Store, id: &str) -> Vec<Value> {
    store.events(id, 0).await.unwrap().iter().map(|e| serde_json::from_str(&e.to_json_line()).unwrap()).collect()
}

/// A run in progress: the build, the worker that runs it (its `started{worker}`), and whether
/// its `sleep` is under way.
#[derive(Debug, Clone)]
struct Running {
    build: String,
    worker: String,
    /// Its `started` event's seq.
    seq: u64,
    sleeping: bool,
    /// When its `sleep` began (its `command_started`), while it runs.
    sleep_since: Option<chrono::DateTime<chrono::Utc>>,
}

/// The runs in progress among `ids`, from the stored events.
async fn running(store: &dyn Store, ids: &[String]) -> Vec<Running> {
    let mut out = Vec::new();
    for id in ids {
        let events = stored(store, id).await;
        if events.iter().any(|e| e["type"] == "complete") {
            continue;
        }
        let Some(at) = events.iter().rposition(|e| e["type"] == "started") else { continue };
        let after = &events[at + 1..];
        if after.iter().any(|e| e["type"] == "restarted") {
            continue;
        }
        let started = after.iter().rposition(|e| e["type"] == "command_started");
        let finished = after.iter().rposition(|e| e["type"] == "command_finished");
        let sleeping = matches!((started, finished), (Some(s), f) if f.is_none_or(|f| f < s));
        out.push(Running {
            build: id.clone(),
            worker: events[at]["worker"].as_str().unwrap().to_string(),
            seq: events[at]["seq"].as_u64().unwrap(),
            sleeping,
            sleep_since: started.filter(|_| sleeping).map(|s| ts(&after[s])),
        });
    }
    out
}

async fn wait_for<F: AsyncFnMut() -> bool>(what: &str, limit: Duration, mut ready: F) {
    let until = Instant::now() + limit;
    while !ready().await {
        assert!(Instant::now() < until, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The whole SSE stream of a build from the server at `api`, after `after` through
/// `Last-Event-ID`; at most `most` messages (the connection is then dropped).
async fn sse(c: &reqwest::Client, api: &str, token: &str, id: &str, after: Option<u64>, most: usize) -> Vec<Sse> {
    let mut req = c.get(format!("{api}/api/builds/{id}/events")).bearer_auth(token);
    if let Some(n) = after {
        req = req.header("Last-Event-ID", n.to_string());
    }
    read_sse_upto(req.send().await.unwrap(), most).await.0
}

fn ts(e: &Value) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(e["ts"].as_str().unwrap()).unwrap().with_timezone(&chrono::Utc)
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

/// A build's events cut into runs: each from its `started` to the `restarted` that handed the
/// build on (an interrupted run) or to `complete`. Outside a run only the queue's notices may
/// come, and `restarted` alone (a worker that claimed the build and was lost before its run
/// began); inside one, no second `started`. So nothing a lost worker still wrote after its
/// build was handed on can sit between runs, and a run's events are its own script's.
fn runs_of(id: &str, events: &[Value]) -> Vec<Vec<Value>> {
    let mut runs: Vec<Vec<Value>> = Vec::new();
    let mut open = false;
    for e in events {
        let t = e["type"].as_str().unwrap();
        if open {
            assert_ne!(t, "started", "{id}: a run began inside another: {:?}", types(events));
            runs.last_mut().unwrap().push(e.clone());
            open = t != "restarted" && t != "complete";
        } else if t == "started" {
            runs.push(vec![e.clone()]);
            open = true;
        } else {
            assert!(t == "queued" || t == "restarted", "{id}: `{t}` outside any run: {:?}", types(events));
        }
    }
    assert!(!runs.is_empty(), "{id}: never started");
    runs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_three_workers_one_killed_two_frozen_and_every_build_publishes_once() {
    let clock = Instant::now();
    let db = database();
    // A sleep no other process on this host runs, to find this test's sandboxes.
    let marker = format!("{SLEEP_SECS}.0{}", std::process::id());
    let needle = format!("sleep {marker}");
    let llm = MockLlm::start_with_fallback(vec![], stateless_model_sleeping(&marker)).await;
    let dir = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let flags = api_flags(&["--max-concurrent-builds", "1000", "--builds-per-hour", "1000"]);
    let a = Server::start_db(dir.path(), &llm.base_url, &db, &flags).await;
    let b = Server::start_db(dir.path(), &llm.base_url, &db, &flags).await;
    let users = [a.add_user("alice", false).await, a.add_user("bob", false).await, b.add_user("carol", false).await];
    let worker_flags =
        ["--workers", "3", "--lease", "3", "--browser-check", "off", "--max-restarts", "5", "--timeout", "300"];
    let mut workers = Vec::new();
    for n in 0..3 {
        let log = logs.path().join(format!("worker{n}.log"));
        let w = Worker::start(dir.path(), &llm.base_url, &db, &log, &worker_flags).await;
        assert!(w.first_line.contains("3 workers"), "{}", w.first_line);
        workers.push(w);
    }
    let store = wright_store::open(&db).await.unwrap();
    let store = store.as_ref();

    // Thirty builds from three users, every other one through the other server.
    let c = client();
    let mut builds: Vec<(String, String)> = Vec::new();
    for i in 0..BUILDS {
        let (server, token) = ([&a, &b][i % 2], &users[i % 3]);
        let id = create_ok(&c, server, token, &format!("landing page {i} for a dog walker, built slowly please")).await;
        builds.push((id, token.clone()));
    }
    let ids: Vec<String> = builds.iter().map(|(id, _)| id.clone()).collect();

    // Each build followed from both servers from the start: whole from A; from B cut after a
    // couple of events (mid-run: the second comes live) and resumed with `Last-Event-ID`.
    let mut readers = Vec::new();
    for (i, (id, token)) in builds.iter().enumerate() {
        let (c, id, token, a_api, b_api) = (c.clone(), id.clone(), token.clone(), a.api.clone(), b.api.clone());
        readers.push(tokio::spawn(async move {
            let whole = sse(&c, &a_api, &token, &id, None, usize::MAX);
            let resumed = async {
                let mut got = sse(&c, &b_api, &token, &id, None, 1 + i % 3).await;
                let mut reconnects = 0;
                while got.last().is_none_or(|e| e.event != "complete") {
                    let after = got.last().map(|e| e.id);
                    got.extend(sse(&c, &b_api, &token, &id, after, usize::MAX).await);
                    reconnects += 1;
                }
                (got, reconnects)
            };
            let (whole, (resumed, reconnects)) = tokio::join!(whole, resumed);
            (id, whole, resumed, reconnects)
        }));
    }

    // Kill -9 the worker running the most builds once every worker is busy in its sandboxes.
    let mut snapshot = Vec::new();
    wait_for("every worker running builds", Duration::from_secs(120), async || {
        snapshot = running(store, &ids).await;
        workers.iter().all(|w| snapshot.iter().any(|r| r.sleeping && w.owns(&r.worker)))
    })
    .await;
    let k = (0..workers.len())
        .max_by_key(|&n| snapshot.iter().filter(|r| r.sleeping && workers[n].owns(&r.worker)).count())
        .unwrap();
    let killed_sandbox = sandbox_of(&workers[k], &needle);
    assert!(!killed_sandbox.is_empty(), "the worker to kill runs no sleep: {:?}", processes_with(&needle));
    let killed_at = chrono::Utc::now();
    let kill_clock = Instant::now();
    workers[k].kill9().await;
    // Its sandboxes die with it (bubblewrap's --die-with-parent), long before their sleep ends.
    wait_for("the killed worker's sandboxes gone", Duration::from_secs(3), async || {
        still_running(&killed_sandbox).is_empty()
    })
    .await;
    let sandbox_gone = kill_clock.elapsed();
    // What it ran, now that it cannot change it (a commit it had sent still lands).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let killed_builds: Vec<Running> =
        running(store, &ids).await.into_iter().filter(|r| workers[k].owns(&r.worker)).collect();
    assert!(!killed_builds.is_empty());
    eprintln!(
        "killed worker {} ({} builds: {:?}); its {} sandbox processes gone within {:?}",
        workers[k].pid,
        killed_builds.len(),
        killed_builds.iter().map(|r| &r.build).collect::<Vec<_>>(),
        killed_sandbox.len(),
        sandbox_gone
    );

    // Freeze the two others in turn, each once it is mid-sleep: its builds are handed on (a
    // reaper puts them back in the queue) while it cannot say a word. The first is let go
    // after two leases (the leash killed its sandboxes at the lease; none may be left). The
    // second only once its sleeps have ended: awake, its runs have a finished command to
    // report before it learns that it lost them, and the store must refuse every word.
    let mut frozen: Vec<(usize, Vec<Running>)> = Vec::new();
    let mut frozen_for = Vec::new();
    let mut refusals = 0;
    for past_sleeps in [false, true] {
        let mut s = 0;
        wait_for("a worker mid-sleep to freeze", Duration::from_secs(120), async || {
            let now = running(store, &ids).await;
            let pick = (0..workers.len()).find(|&n| {
                n != k
                    && frozen.iter().all(|(f, _)| *f != n)
                    && now.iter().any(|r| r.sleeping && workers[n].owns(&r.worker))
            });
            pick.inspect(|&n| s = n).is_some()
        })
        .await;
        let w = &workers[s];
        let stopped_at = Instant::now();
        w.stop();
        // What it runs, once it can no longer change it (a commit it had sent still lands).
        tokio::time::sleep(Duration::from_millis(300)).await;
        let held: Vec<Running> = running(store, &ids).await.into_iter().filter(|r| w.owns(&r.worker)).collect();
        let sandbox = sandbox_of(w, &needle);
        assert!(!held.is_empty() && !sandbox.is_empty(), "the frozen worker runs nothing");
        let wake = if past_sleeps {
            let last = held.iter().filter_map(|r| r.sleep_since).max().unwrap_or_else(chrono::Utc::now);
            let end = last + chrono::Duration::milliseconds(i64::from(SLEEP_SECS) * 1000 + 1500);
            let sleeps_end = stopped_at + (end - chrono::Utc::now()).to_std().unwrap_or_default();
            sleeps_end.max(stopped_at + Duration::from_secs(LEASE_SECS + 1))
        } else {
            stopped_at + Duration::from_secs(2 * LEASE_SECS)
        };
        wait_for("the frozen worker's builds handed on", Duration::from_secs(60), async || {
            let mut all = true;
            for r in &held {
                let events = stored(store, &r.build).await;
                all &= events.iter().skip(r.seq as usize).any(|e| e["type"] == "restarted");
            }
            all && Instant::now() >= wake
        })
        .await;
        let took = stopped_at.elapsed();
        assert!(took > Duration::from_secs(LEASE_SECS), "frozen for {took:?}, not past its lease");
        let sleeping_at_resume = still_running(&sandbox).len();
        w.resume();
        // Awake, it finds its lease's deadline passed on its own clock (or, at its next
        // renewal or write, that others hold its builds), and drops each run.
        let woke = Instant::now();
        wait_for("the frozen worker dropping its runs", Duration::from_secs(30), async || {
            let log = w.log();
            held.iter().all(|r| {
                log.lines().any(|l| {
                    l.contains(r.build.as_str()) && (l.contains("dropping this run") || l.contains("events not stored"))
                })
            })
        })
        .await;
        let dropped_after = woke.elapsed();
        wait_for("the frozen worker's dropped sandboxes gone", Duration::from_secs(3), async || {
            still_running(&sandbox).is_empty()
        })
        .await;
        // Give what it still had to say the time to be refused, then count the refusals.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let log = w.log();
        let refused: Vec<&str> = log.lines().filter(|l| l.contains("not stored")).collect();
        for l in &refused {
            assert!(l.contains("held by another worker"), "a refusal for another reason: {l}");
        }
        refusals += refused.len();
        if let Some(l) = refused.first() {
            eprintln!("a refused write: {l}");
        }
        eprintln!(
            "froze worker {} for {took:?} ({} builds: {:?}); it dropped them {:?} after SIGCONT; {} sandbox \
             processes ({sleeping_at_resume} still running at SIGCONT), all gone; {} writes refused",
            w.pid,
            held.len(),
            held.iter().map(|r| &r.build).collect::<Vec<_>>(),
            dropped_after,
            sandbox.len(),
            refused.len()
        );
        frozen.push((s, held));
        frozen_for.push(took);
    }

    // Every build ends; both streams of each are what is stored.
    let mut reconnected = 0;
    let mut all_events = Vec::new();
    for r in readers {
        let (id, whole, resumed, reconnects) =
            tokio::time::timeout(Duration::from_secs(240), r).await.expect("a build did not end").unwrap();
        let data = stored(store, &id).await;
        let n = data.len() as u64;
        for (name, got) in [("A", &whole), ("B, resumed", &resumed)] {
            let seqs: Vec<u64> = got.iter().map(|e| e.id).collect();
            assert_eq!(seqs, (1..=n).collect::<Vec<_>>(), "{id}: stream from {name}: every seq once, in order");
            let kinds: Vec<&str> = got.iter().map(|e| e.event.as_str()).collect();
            assert_eq!(kinds, types(&data), "{id}: stream from {name}: SSE event names");
            let got: Vec<Value> = got.iter().map(|e| e.data.clone()).collect();
            assert_eq!(got, data, "{id}: the stream from {name} is what is stored");
        }
        reconnected += usize::from(reconnects > 0);
        all_events.push((id, data));
    }
    assert!(reconnected > 0, "some stream was resumed with Last-Event-ID");

    let (mut restarts, mut rescues) = (0, Vec::new());
    let mut final_shape: Option<Vec<String>> = None;
    for (id, data) in &all_events {
        for (i, e) in data.iter().enumerate() {
            assert_eq!(e["seq"].as_u64(), Some(i as u64 + 1), "{id}: gapless");
        }
        assert_eq!(data.iter().filter(|e| e["type"] == "complete").count(), 1, "{id}: one complete");
        let last = data.last().unwrap();
        assert_eq!((last["type"].as_str(), last["success"].as_bool()), (Some("complete"), Some(true)), "{id}");
        let record = store.build(id).await.unwrap();
        assert_eq!(record.status, wright_store::RunStatus::Published, "{id}");
        assert!(record.finished_at.is_some(), "{id}: the record is final");
        let api: Value = c
            .get(b.url(&format!("/api/builds/{id}")))
            .bearer_auth(&builds.iter().find(|(b, _)| b == id).unwrap().1)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(api["status"], "published", "{id}");

        // Each run: `started` by one worker, then that run's own events. An interrupted run
        // ends with the `restarted` that handed the build on, and nothing comes between it and
        // the next run's `started`: nothing the lost worker still wrote got in. Every run is
        // the same script, so an interrupted run is a beginning of the final run's events; an
        // event of a dropped run stored after its `restarted` would break that.
        let runs = runs_of(id, data);
        let restarted: Vec<&Value> = data.iter().filter(|e| e["type"] == "restarted").collect();
        for (n, r) in restarted.iter().enumerate() {
            assert_eq!(
                (r["attempt"].as_u64(), r["reason"].as_str()),
                (Some(n as u64 + 2), Some("worker_lost")),
                "{id}"
            );
        }
        assert_eq!(record.attempt as usize, restarted.len() + 1, "{id}: attempts");
        restarts += restarted.len();
        let (last_run, interrupted) = runs.split_last().unwrap();
        let shape = |run: &[Value]| -> Vec<String> {
            run.iter().skip(1).map(|e| e["type"].as_str().unwrap().to_string()).collect::<Vec<_>>()
        };
        let done = shape(last_run);
        assert_eq!(done.last().map(String::as_str), Some("complete"), "{id}");
        match &final_shape {
            None => final_shape = Some(done.clone()),
            Some(f) => assert_eq!(&done, f, "{id}: every finished run does the same"),
        }
        for (n, run) in interrupted.iter().enumerate() {
            let body = shape(run);
            let (restarted, before) = body.split_last().unwrap();
            assert_eq!(restarted, "restarted", "{id}: run {} ends handed on: {body:?}", n + 1);
            assert!(done.starts_with(before), "{id}: run {} is a beginning of a run: {body:?} vs {done:?}", n + 1);
        }

        // The builds the killed and the frozen workers ran went on elsewhere (or, for a frozen
        // one, maybe on itself once awake, under a new claim).
        let mut disrupted = vec![("killed", &killed_builds, &workers[k])];
        disrupted.extend(frozen.iter().map(|(s, held)| ("frozen", held, &workers[*s])));
        for (who, held, w) in disrupted {
            if let Some(h) = held.iter().find(|h| &h.build == id) {
                let at = runs.iter().position(|r| r[0]["seq"].as_u64() == Some(h.seq)).unwrap();
                let handed = runs[at].last().unwrap();
                assert_eq!(handed["type"], "restarted", "{id}: the {who} worker's run was handed on");
                assert!(runs.len() > at + 1, "{id}: ran again after the {who} worker");
                if who == "killed" {
                    assert!(!w.owns(runs[at + 1][0]["worker"].as_str().unwrap()), "{id}: a dead worker ran it");
                    rescues.push((ts(handed) - killed_at).num_milliseconds());
                }
            }
        }
    }
    let disrupted = killed_builds.len() + frozen.iter().map(|(_, held)| held.len()).sum::<usize>();
    assert!(restarts >= disrupted, "{restarts} restarts for {disrupted} runs lost");

    // No sandbox left anywhere: every run ended or was dropped with its processes.
    let left = processes_with(&needle);
    assert!(left.is_empty(), "sandbox processes left behind: {left:#?}");

    rescues.sort_unstable();
    eprintln!(
        "scale: {BUILDS} builds, 2 API servers, 3 workers (one killed, two frozen for {frozen_for:.1?}), {restarts} \
         restarts, {reconnected} streams resumed, {refusals} writes of frozen workers refused; rescue after kill -9 \
         (kill → `restarted`): {rescues:?} ms; {:.1} s in all",
        clock.elapsed().as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forty_requests_at_once_over_two_servers_admit_exactly_the_concurrent_limit() {
    let db = database();
    // No worker: the admitted builds stay queued, so the limit stays reached.
    let llm = MockLlm::start_with_fallback(vec![], stateless_model_sleeping("1")).await;
    let dir = tempfile::tempdir().unwrap();
    let flags = api_flags(&["--max-concurrent-builds", "5", "--builds-per-hour", "1000"]);
    let a = Server::start_db(dir.path(), &llm.base_url, &db, &flags).await;
    let b = Server::start_db(dir.path(), &llm.base_url, &db, &flags).await;
    let alice = a.add_user("alice", false).await;
    let c = client();
    let asks = (0..40).map(|i| {
        let (c, alice, server) = (c.clone(), alice.clone(), [&a, &b][i % 2]);
        async move {
            let body = json!({"prompt": format!("landing page number {i} for a dog walker"), "template": "static"});
            let res = create(&c, server, &alice, body).await;
            let status = res.status().as_u16();
            (status, res.json::<Value>().await.unwrap())
        }
    });
    let answers = futures::future::join_all(asks).await;
    let admitted: Vec<&Value> = answers.iter().filter(|(s, _)| *s == 202).map(|(_, v)| v).collect();
    let refused: Vec<&Value> = answers.iter().filter(|(s, _)| *s == 429).map(|(_, v)| v).collect();
    assert_eq!(
        (admitted.len(), refused.len()),
        (5, 35),
        "{:?}",
        answers.iter().map(|(s, v)| format!("{s} {v}")).collect::<Vec<_>>()
    );
    for r in &refused {
        assert_eq!(r["error"]["code"], "rate_limited", "{r}");
        assert!(r["error"]["message"].as_str().unwrap().contains("at once"), "{r}");
    }
    let ids: BTreeSet<&str> = admitted.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 5);
    for s in [&a, &b] {
        let list: Vec<Value> =
            c.get(s.url("/api/builds?limit=100")).bearer_auth(&alice).send().await.unwrap().json().await.unwrap();
        let listed: BTreeSet<&str> = list.iter().map(|v| v["id"].as_str().unwrap()).collect();
        assert_eq!(listed, ids, "what each server lists is what was admitted");
    }
}
