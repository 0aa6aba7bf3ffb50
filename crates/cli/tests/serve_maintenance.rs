//! `wright serve`'s periodic jobs over a real server: with `[maintenance]` every second and a
//! retention of two seconds, a finished build's folder and its browser check's screenshot go
//! while its record and events stay, its published app is taken down with it, and the jobs and
//! this server show in the admin dashboard and in `/metrics` (which names no host unless
//! `[metrics] host_labels` asks, and wants `[metrics] token` when one is set).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use serde_json::Value;
use std::time::{Duration, Instant};
use support::MockLlm;
use support::server::{Server, client, create_ok, get_json, stateless_model, stream};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn old_builds_lose_their_files_and_the_jobs_show() {
    let llm = MockLlm::start_with_fallback(vec![], stateless_model(1)).await;
    let dir = tempfile::tempdir().unwrap();
    // The server reads ./wright.toml (it runs in its data folder).
    std::fs::write(
        dir.path().join("wright.toml"),
        "[maintenance]\nevery_secs = 1\ndecay_half_life_days = 30\nretention_days = 0.000025\n",
    )
    .unwrap();
    // The browser check (Debian's Chromium) leaves a screenshot that retention must remove too.
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1", "--browser-check", "on"]).await;
    let admin = s.add_user("root", true).await;
    let alice = s.add_user("alice", false).await;
    let c = client();

    let id = create_ok(&c, &s, &alice, "a landing page for a dog walking business").await;
    let events = stream(&c, &s, &alice, &id, None).await;
    assert_eq!(events.last().unwrap().data["success"], true);
    let slug = events.last().unwrap().data["app"]["slug"].as_str().expect("the build published an app").to_string();
    assert_eq!(c.get(s.url(&format!("/apps/{slug}"))).send().await.unwrap().status(), 307, "its address leads to it");
    let folder = dir.path().join("builds").join(&id);
    assert!(folder.join("index.html").exists(), "kept for two seconds after the build ended");
    let check = events.iter().rfind(|e| e.event == "browser_check").expect("the build was checked in a browser");
    assert_eq!(check.data["outcome"], "checked", "{:?}", check.data);
    assert!(check.data["screenshot"].is_string(), "the check took a screenshot: {:?}", check.data);
    let shot = dir.path().join("screenshots").join(format!("{id}.png"));

    // Within a few passes (retention ≈ 2 s, a pass every quarter second) the folder is gone.
    let deadline = Instant::now() + Duration::from_secs(30);
    while folder.exists() {
        assert!(Instant::now() < deadline, "{} is still there", folder.display());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Its screenshot goes in the same pass (by the time the build is marked pruned).
    while shot.exists() {
        assert!(Instant::now() < deadline, "{} is still there", shot.display());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let gone = c.get(s.url(&format!("/api/builds/{id}/screenshot"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(gone.status(), 404);
    // History stays: the record and the stream, which still ends with `complete`.
    let b: Value = get_json(&c, &s, &alice, &format!("/api/builds/{id}")).await;
    assert_eq!(b["status"], "published");
    let again = stream(&c, &s, &alice, &id, None).await;
    assert_eq!(again.len(), events.len());
    let files: Value = get_json(&c, &s, &alice, &format!("/api/builds/{id}/files")).await;
    assert_eq!(files, serde_json::json!([]), "no files left");
    let page = c.get(s.url(&format!("/api/builds/{id}/files/index.html"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(page.status(), 404);
    // Its app goes with its files (in the same pass, a moment after the folder): the address
    // says gone, the slug stays reserved, and the owner still sees it, unpublished.
    while c.get(s.url(&format!("/apps/{slug}"))).send().await.unwrap().status() != 410 {
        assert!(Instant::now() < deadline, "/apps/{slug} is still published");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let app: Value = get_json(&c, &s, &alice, &format!("/api/apps/{slug}")).await;
    assert_eq!((app["published"].as_bool(), app["build_id"].as_str()), (Some(false), Some(id.as_str())), "{app}");

    // The dashboard (admins only) lists both jobs and this server.
    let denied = c.get(s.url("/api/admin/dashboard")).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(denied.status(), 403);
    let d: Value = get_json(&c, &s, &admin, "/api/admin/dashboard").await;
    let jobs = d["maintenance"].as_array().unwrap();
    let job = |name: &str| jobs.iter().find(|j| j["name"] == name).unwrap_or_else(|| panic!("{name}: {jobs:?}"));
    assert_eq!(job("confidence")["last_ok"], true, "{jobs:?}");
    assert!(job("confidence")["last_detail"].as_str().unwrap().contains("lessons"), "{jobs:?}");
    assert_eq!(job("retention")["last_ok"], true, "{jobs:?}");
    let workers = d["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 1, "{workers:?}");
    assert_eq!((workers[0]["alive"].as_bool(), workers[0]["slots"].as_u64()), (Some(true), Some(1)));

    // /metrics: the jobs' last runs and the live servers.
    let m = c.get(s.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(m.contains("wright_job_last_ok{job=\"retention\"} 1"), "{m}");
    assert!(m.contains("wright_job_last_finished_timestamp_seconds{job=\"confidence\"}"), "{m}");
    assert!(m.lines().any(|l| l == "wright_workers_alive 1"), "{m}");
    assert!(m.lines().any(|l| l.starts_with("wright_worker_slots{") && l.ends_with(" 1")), "{m}");
    // Without `[metrics] host_labels` a server is an opaque id: no host, no process.
    let slots = m.lines().find(|l| l.starts_with("wright_worker_slots{")).unwrap();
    let label = slots.strip_prefix("wright_worker_slots{worker=\"w-").and_then(|l| l.strip_suffix("\"} 1"));
    assert!(label.is_some_and(|h| h.len() == 12 && h.chars().all(|c| c.is_ascii_hexdigit())), "{slots}");
    assert!(!m.contains("host=") && !m.contains(&format!("\"{}-", hostname())), "{m}");
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname").unwrap().trim().to_string()
}

/// The Prometheus text of `s`'s `/metrics` once this server shows as alive in it.
async fn scrape(c: &reqwest::Client, s: &Server, token: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = c.get(s.url("/metrics")).bearer_auth(token).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let m = r.text().await.unwrap();
        if m.lines().any(|l| l == "wright_workers_alive 1") {
            return m;
        }
        assert!(Instant::now() < deadline, "no server alive in {m}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_want_their_token_and_name_hosts_only_when_asked() {
    let llm = MockLlm::start_with_fallback(vec![], stateless_model(1)).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wright.toml"), "[metrics]\ntoken = \"scrape-7f3a9c\"\nhost_labels = true\n")
        .unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1"]).await;
    let admin = s.add_user("root", true).await;
    let c = client();
    // No token, a wrong one, and even an admin's API token: 401 with a clear error.
    for token in [None, Some("scrape-7f3a9"), Some(admin.as_str())] {
        let mut r = c.get(s.url("/metrics"));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), 401, "{token:?}");
        assert_eq!(r.headers()["www-authenticate"], "Bearer");
        let v: Value = r.json().await.unwrap();
        assert!(v["error"]["message"].as_str().unwrap().contains("[metrics] token"), "{v}");
    }
    // The token opens it; asked for, the servers' series name their host.
    let m = scrape(&c, &s, "scrape-7f3a9c").await;
    let host = format!("host=\"{}\"", hostname());
    assert!(m.lines().any(|l| l.starts_with("wright_worker_slots{") && l.contains(&host)), "{m}");
    // The rest of the API is not opened by the metrics token.
    assert_eq!(c.get(s.url("/api/builds")).bearer_auth("scrape-7f3a9c").send().await.unwrap().status(), 401);
}
