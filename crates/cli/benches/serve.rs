//! `wright serve` under load, on this machine, with a scripted model (the only scripted part):
//!
//! 1. SSE fan-out: 1,000 followers of one build that prints 2,000 lines: events delivered per
//!    second, publish→receive latency (event `ts` to arrival), the server's RSS.
//! 2. `GET /api/builds/{id}` with wrk: requests per second and p99.
//! 3. 100 builds submitted at once: none lost, queue wait p50/p95.
//!
//! Run: `cargo bench -p wright-cli --bench serve` (needs `wrk` for part 2; it is skipped without).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench: a panic is the report
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

#[path = "../tests/support/mod.rs"]
mod support;

use futures::StreamExt;
use serde_json::{Value, json};
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use support::server::{PAGE, Server, client, create_ok, stored_events};
use support::{MockLlm, Turn};

const FOLLOWERS: usize = 1000;
const LINES: u32 = 2000;

fn model() -> Turn {
    let write = ("createFile", json!({"path": "index.html", "content": PAGE}));
    let chatty = format!("i=0; while [ $i -lt {LINES} ]; do echo \"line $i\"; i=$((i+1)); sleep 0.004; done");
    Turn::when(
        "\"role\":\"tool\"",
        Turn::text("Done."),
        Turn::when(
            "chatty",
            Turn::calls(&[("runCommand", json!({"command": "sh", "args": ["-c", chatty]})), write.clone()]),
            Turn::when(
                "slowly",
                Turn::calls(&[("runCommand", json!({"command": "sleep", "args": ["4"]})), write.clone()]),
                Turn::calls(&[write]),
            ),
        ),
    )
}

fn now_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64() * 1000.0
}

fn ts_ms(ts: &str) -> f64 {
    chrono::DateTime::parse_from_rfc3339(ts).unwrap().timestamp_millis() as f64
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((p / 100.0) * (sorted.len() - 1) as f64).round() as usize]
}

fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Follow a build's SSE stream; per event: (seq, type, latency ms) where latency is arrival
/// minus the event's `ts` (stamped when the build emitted it).
async fn follow(c: reqwest::Client, url: String, token: String) -> Vec<(u64, String, f64)> {
    let res = c.get(url).bearer_auth(token).send().await.unwrap();
    let mut body = res.bytes_stream();
    let (mut buf, mut out) = (String::new(), Vec::new());
    while let Some(chunk) = body.next().await {
        let Ok(chunk) = chunk else { break };
        buf.push_str(std::str::from_utf8(&chunk).unwrap());
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data: ")) {
                let v: Value = serde_json::from_str(data).unwrap();
                let lat = now_ms() - ts_ms(v["ts"].as_str().unwrap());
                out.push((v["seq"].as_u64().unwrap(), v["type"].as_str().unwrap().to_string(), lat));
            }
        }
    }
    out
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let llm = MockLlm::start_with_fallback(vec![], model()).await;
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--lease", "15", "--workers", "2", "--builds-per-hour", "100000", "--max-concurrent-builds", "100000"];
    let mut s = Server::start(dir.path(), &llm.base_url, &flags).await;
    let pid = s.child.id().unwrap();
    let token = s.add_user("bench", true).await;
    let c = client();
    println!("machine: {} cores", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0));

    // 1. Fan-out. Two slow builds hold both workers while the followers connect to the
    // chatty one, queued behind them, so every follower is live before its events exist.
    let _a = create_ok(&c, &s, &token, "a landing page, built slowly please").await;
    let _b = create_ok(&c, &s, &token, "a second landing page, built slowly please").await;
    let chatty = create_ok(&c, &s, &token, "a landing page, built chatty please").await;
    let url = s.url(&format!("/api/builds/{chatty}/events"));
    let started = Instant::now();
    let followers: Vec<_> =
        (0..FOLLOWERS).map(|_| tokio::spawn(follow(client(), url.clone(), token.clone()))).collect();
    let (rss_idle, _) = rss_kib(pid);
    let mut received = Vec::new();
    for f in followers {
        received.push(f.await.unwrap());
    }
    let took = started.elapsed();
    let stored = stored_events(&s, &chatty).await;
    let complete = received.iter().filter(|r| r.len() == stored.len()).count();
    let deliveries: usize = received.iter().map(Vec::len).sum();
    let mut lat: Vec<f64> =
        received.iter().flatten().filter(|(_, t, _)| t == "command_output").map(|(_, _, l)| *l).collect();
    lat.sort_by(|a, b| a.total_cmp(b));
    let (rss, hwm) = rss_kib(pid);
    let outputs = stored.iter().filter(|e| e["type"] == "command_output").count();
    println!(
        "\n## SSE fan-out: {FOLLOWERS} followers, one build of {} events ({outputs} command_output)",
        stored.len()
    );
    println!("followers with every event: {complete}/{FOLLOWERS}");
    println!(
        "delivered: {deliveries} events in {:.1} s = {:.0} events/s",
        took.as_secs_f64(),
        deliveries as f64 / took.as_secs_f64()
    );
    println!(
        "publish→receive latency (command_output, ms): p50 {:.0} · p95 {:.0} · p99 {:.0} · max {:.0}",
        pct(&lat, 50.0),
        pct(&lat, 95.0),
        pct(&lat, 99.0),
        pct(&lat, 100.0)
    );
    println!(
        "server RSS: {:.1} MiB with followers connected, {:.1} MiB after, peak {:.1} MiB",
        rss_idle as f64 / 1024.0,
        rss as f64 / 1024.0,
        hwm as f64 / 1024.0
    );

    // 2. The status route under wrk.
    let status_url = s.url(&format!("/api/builds/{chatty}"));
    match std::process::Command::new("wrk")
        .args(["-t2", "-c64", "-d10s", "--latency", "-H"])
        .arg(format!("Authorization: Bearer {token}"))
        .arg(&status_url)
        .output()
    {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            println!("\n## GET /api/builds/{{id}} (wrk -t2 -c64 -d10s)");
            for line in text.lines().filter(|l| {
                l.contains("Requests/sec")
                    || l.trim_start().starts_with("50%")
                    || l.trim_start().starts_with("99%")
                    || l.contains("Non-2xx")
            }) {
                println!("{}", line.trim());
            }
        }
        Err(e) => println!("\n## GET /api/builds/{{id}}: skipped (wrk: {e}; apt-get install wrk)"),
    }

    // 3. 100 builds at once.
    let started = Instant::now();
    let creates: Vec<_> = (0..100)
        .map(|i| {
            let (c, s_api, token) = (c.clone(), s.api.clone(), token.clone());
            tokio::spawn(async move {
                let body = json!({"prompt": format!("landing page number {i} for a dog walker"), "template": "static"});
                let sent = Instant::now();
                let r = c.post(format!("{s_api}/api/builds")).bearer_auth(token).json(&body).send().await.unwrap();
                let status = r.status();
                let took = sent.elapsed();
                assert_eq!(status, 202, "after {took:?}: {}", r.text().await.unwrap_or_default());
                r.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string()
            })
        })
        .collect();
    let mut ids = Vec::new();
    for h in creates {
        ids.push(h.await.unwrap());
    }
    let accepted = started.elapsed();
    let mut waits = Vec::new();
    let mut published = 0;
    for id in &ids {
        let events = follow(client(), s.url(&format!("/api/builds/{id}/events")), token.clone()).await;
        assert_eq!(events.last().map(|e| e.1.as_str()), Some("complete"), "{id}");
        let stored = stored_events(&s, id).await;
        let queued = ts_ms(stored[0]["ts"].as_str().unwrap());
        let start = stored.iter().find(|e| e["type"] == "started").unwrap();
        waits.push((ts_ms(start["ts"].as_str().unwrap()) - queued) / 1000.0);
        if stored.last().unwrap()["success"] == true {
            published += 1;
        }
    }
    let all = started.elapsed();
    waits.sort_by(|a, b| a.total_cmp(b));
    let distinct: std::collections::HashSet<_> = ids.iter().collect();
    println!("\n## 100 builds submitted at once (2 workers)");
    println!("accepted: 100 in {:.2} s; distinct ids {}", accepted.as_secs_f64(), distinct.len());
    println!(
        "ended with complete: {}/100, published {published}/100, all done in {:.1} s",
        ids.len(),
        all.as_secs_f64()
    );
    println!(
        "queue wait (s): p50 {:.1} · p95 {:.1} · max {:.1}",
        pct(&waits, 50.0),
        pct(&waits, 95.0),
        pct(&waits, 100.0)
    );
    s.kill9().await;
}
