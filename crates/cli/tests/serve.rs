//! `wright serve` over real HTTP, with a real SQLite file, real sandboxed builds and a scripted
//! model: create → stream → `complete`, exact resume, fan-out, auth, limits, bad input,
//! preview on its own origin, cancel, and a kill -9 in the middle of a build.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use serde_json::{Value, json};
use std::io::Read;
use std::time::Duration;
use support::server::{
    Server, client, create, create_ok, get_json, read_sse, stateless_model, stored_events, stream, term,
};
use support::{MockLlm, Turn};

async fn model(sleep_secs: u32) -> MockLlm {
    MockLlm::start_with_fallback(vec![], stateless_model(sleep_secs)).await
}

fn types(events: &[support::server::Sse]) -> Vec<String> {
    events.iter().map(|e| e.event.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_build_streams_resumes_exactly_and_fans_out() {
    let llm = model(3).await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "2"]).await;
    assert!(s.login_url.as_deref().is_some_and(|u| u.contains("/login?token=wr_")), "{:?}", s.login_url);
    let alice = s.add_user("alice", false).await;
    let c = client();

    // A right-to-left override and a NUL ride along: removed before anything stores or reads
    // the prompt, and said so.
    let id = create_ok(&c, &s, &alice, "a landing page for a dog\u{202E}gnikalw\u{0} walking business").await;
    // Not finished (the model takes 3 s): it cannot be rated yet.
    let res = c
        .post(s.url(&format!("/api/builds/{id}/feedback")))
        .bearer_auth(&alice)
        .json(&serde_json::json!({"value": "up"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 409);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_finished", "{body}");
    let events = stream(&c, &s, &alice, &id, None).await;
    let last = events.last().unwrap();
    assert_eq!(last.event, "complete");
    assert_eq!(last.data["success"], true, "{:?}", types(&events));
    let said = events.iter().find(|e| e.event == "status" && e.data["level"] == "warning").unwrap();
    assert!(said.data["message"].as_str().unwrap().starts_with("2 invisible characters"), "{:?}", said.data);
    let asked = llm.requests()[0].to_string();
    assert!(
        asked.contains("a doggnikalw walking") && !asked.contains('\u{202E}') && !asked.contains("\\u0000"),
        "{asked}"
    );
    assert_eq!(events[0].event, "queued", "the queue notice comes first");
    assert_eq!(events[0].data["position"], 0, "{:?}", events[0].data);
    assert_eq!(events.iter().filter(|e| e.event == "started").count(), 1);
    // Gapless ids that equal each event's seq, and the same JSON `wright builds events` prints.
    for (i, e) in events.iter().enumerate() {
        assert_eq!((e.id, e.data["seq"].as_u64().unwrap()), (i as u64 + 1, i as u64 + 1));
        assert_eq!(e.event, e.data["type"]);
    }
    let stored = stored_events(&s, &id).await;
    assert_eq!(events.iter().map(|e| e.data.clone()).collect::<Vec<_>>(), stored);

    // Resuming at several points gives exactly the rest, by header or by query.
    let n = events.len() as u64;
    for k in [1, 2, n / 2, n - 1, n] {
        let rest = stream(&c, &s, &alice, &id, Some((k, true))).await;
        assert_eq!(rest, events[k as usize..].to_vec(), "after {k} (Last-Event-ID)");
        let rest = stream(&c, &s, &alice, &id, Some((k, false))).await;
        assert_eq!(rest, events[k as usize..].to_vec(), "after {k} (?after=)");
    }
    // JSON lines: the same events.
    let nd = c
        .get(s.url(&format!("/api/builds/{id}/events")))
        .bearer_auth(&alice)
        .header("Accept", "application/x-ndjson")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let lines: Vec<Value> = nd.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines, stored);

    // The build record, files, archive.
    let b: Value = get_json(&c, &s, &alice, &format!("/api/builds/{id}")).await;
    assert_eq!((b["status"].as_str(), b["files"][0].as_str()), (Some("published"), Some("index.html")));
    let files: Value = get_json(&c, &s, &alice, &format!("/api/builds/{id}/files")).await;
    assert_eq!(files[0]["path"], "index.html");
    let page = c.get(s.url(&format!("/api/builds/{id}/files/index.html"))).bearer_auth(&alice).send().await.unwrap();
    assert!(
        page.headers()["content-type"].to_str().unwrap().starts_with("text/plain"),
        "never rendered on the API origin"
    );
    assert_eq!(page.text().await.unwrap(), support::server::PAGE);
    let zip_bytes = c
        .get(s.url(&format!("/api/builds/{id}/archive")))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(zip_bytes.to_vec())).unwrap();
    let mut text = String::new();
    zip.by_name("index.html").unwrap().read_to_string(&mut text).unwrap();
    assert_eq!(text, support::server::PAGE);

    // The browser check's screenshot (Chromium is a test requirement), as a PNG of the viewport.
    let shot = c.get(s.url(&format!("/api/builds/{id}/screenshot"))).bearer_auth(&alice).send().await.unwrap();
    let check: Vec<&Value> = stored.iter().filter(|e| e["type"] == "browser_check").collect();
    assert_eq!(shot.headers()["content-type"], "image/png", "{check:?}");
    assert_eq!(wright_browser::png_size(&shot.bytes().await.unwrap()), Some((1280, 800)));

    // Preview: on an origin of its own (`{id}-{key}.localhost`), with its CSP; nothing of it on
    // the API origin; under a path on the preview port too.
    let preview_url = b["preview_url"].as_str().unwrap().to_string();
    let (pc, host) = support::server::preview_client(&s, &preview_url);
    assert!(host.starts_with(&format!("{id}-")), "{preview_url}");
    let p = pc.get(&preview_url).send().await.unwrap();
    assert_eq!(p.status(), 200);
    let csp = p.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(
        csp.contains("sandbox allow-scripts") && csp.contains(&format!("frame-ancestors 'self' {}", s.api)),
        "{csp}"
    );
    assert!(p.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert_eq!(p.text().await.unwrap(), support::server::PAGE);
    let key = host.split('.').next().unwrap().rsplit_once('-').unwrap().1.to_string();
    let by_path = format!("{}/{id}/{key}/", s.preview);
    let p = c.get(&by_path).send().await.unwrap();
    assert_eq!(p.status(), 200);
    assert!(
        !p.headers()["content-security-policy"].to_str().unwrap().contains("allow-same-origin"),
        "a shared origin stays opaque"
    );
    assert_eq!(c.get(s.url(&format!("/{id}/{key}/"))).send().await.unwrap().status(), 404, "not on the API origin");
    let wrong_key = format!("{}/{id}/{}/", s.preview, "0".repeat(32));
    assert_eq!(c.get(wrong_key).send().await.unwrap().status(), 404);
    for bad in ["..%2F..%2F..%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", "../wright.db", "..%2Fwright.db"] {
        for url in [format!("{preview_url}{bad}"), format!("{by_path}{bad}")] {
            let r = pc.get(&url).send().await.unwrap();
            assert!(r.status() == 400 || r.status() == 404, "{url}: {}", r.status());
        }
        let r = c.get(s.url(&format!("/api/builds/{id}/files/{bad}"))).bearer_auth(&alice).send().await.unwrap();
        assert!(r.status() == 400 || r.status() == 404, "{bad}: {}", r.status());
        assert!(!r.text().await.unwrap().contains("root:"), "{bad}");
    }

    // 200 followers of one build that is still to run: every one gets every event.
    let slow = create_ok(&c, &s, &alice, "a landing page, built slowly please").await;
    let followers: Vec<_> = (0..200)
        .map(|_| {
            let (c, url, token) = (c.clone(), s.url(&format!("/api/builds/{slow}/events")), alice.clone());
            tokio::spawn(async move { read_sse(c.get(url).bearer_auth(token).send().await.unwrap()).await })
        })
        .collect();
    let mut heartbeats = 0;
    let mut seen = Vec::new();
    for f in followers {
        let (events, beats) = f.await.unwrap();
        heartbeats += beats;
        seen.push(events);
    }
    let stored: Vec<Value> = stored_events(&s, &slow).await;
    assert_eq!(stored.last().unwrap()["type"], "complete");
    for events in &seen {
        assert_eq!(events.iter().map(|e| e.data.clone()).collect::<Vec<_>>(), stored);
    }
    assert!(heartbeats > 0, "a 3 s build with 1 s heartbeats has some");

    // A worker counts a build once its run has returned, just after `complete` went out. The
    // poll is signed in: on a slow machine it may take more requests than the per-address
    // limit lets an anonymous client make (the limit is tested on its own below).
    let mut metrics = String::new();
    for _ in 0..200 {
        metrics = c.get(s.url("/metrics")).bearer_auth(&alice).send().await.unwrap().text().await.unwrap();
        if metrics.contains("wright_builds_total{outcome=\"published\",template=\"static\"} 2") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(metrics.contains("wright_builds_total{outcome=\"published\",template=\"static\"} 2"), "{metrics}");
    assert!(
        metrics.contains("wright_http_requests_total{route=\"/api/builds/{id}/events\",method=\"GET\",status=\"200\"}")
    );
    assert!(metrics.contains("wright_sse_subscribers 0"));
    assert_eq!(c.get(s.url("/healthz")).send().await.unwrap().status(), 200);
    assert_eq!(c.get(s.url("/readyz")).send().await.unwrap().status(), 200);
    let doc: Value = c.get(s.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    // The document is made by the router that serves the routes: every route is in it.
    for (path, method) in [
        ("/api/builds", "post"),
        ("/api/builds", "get"),
        ("/api/builds/{id}", "get"),
        ("/api/builds/{id}/events", "get"),
        ("/api/builds/{id}/cancel", "post"),
        ("/api/builds/{id}/feedback", "post"),
        ("/api/builds/{id}/files", "get"),
        ("/api/builds/{id}/files/{path}", "get"),
        ("/api/builds/{id}/archive", "get"),
        ("/api/builds/{id}/screenshot", "get"),
        ("/api/builds/{id}/explain", "post"),
        ("/api/tasks", "post"),
        ("/api/tasks/{id}", "get"),
        ("/api/tasks/{id}/cancel", "post"),
        ("/api/tasks/{id}/events", "get"),
        ("/api/notes", "get"),
        ("/api/notes/{id}", "patch"),
        ("/api/admin/dashboard", "get"),
        ("/api/stats", "get"),
        ("/api/me", "get"),
        ("/api/models", "get"),
        ("/api/logout", "post"),
        ("/login", "get"),
        ("/healthz", "get"),
        ("/readyz", "get"),
        ("/metrics", "get"),
    ] {
        assert!(doc["paths"][path][method].is_object(), "{method} {path} is missing from the OpenAPI document");
    }
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_limits_and_bad_input_get_clear_errors() {
    let llm = model(5).await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(
        dir.path(),
        &llm.base_url,
        &["--workers", "1", "--builds-per-hour", "3", "--max-concurrent-builds", "3"],
    )
    .await;
    let (alice, bob) = (s.add_user("alice", false).await, s.add_user("bob", false).await);
    let c = client();
    let code = |v: &Value| v["error"]["code"].as_str().unwrap().to_string();

    // No token, a wrong token.
    let r = c.get(s.url("/api/builds")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(code(&r.json().await.unwrap()), "unauthorized");
    assert_eq!(c.get(s.url("/api/builds")).bearer_auth("wr_nope").send().await.unwrap().status(), 401);

    // The login link works once and gives an HttpOnly, SameSite cookie.
    let link = s.login_url.clone().unwrap();
    let r = c.get(&link).send().await.unwrap();
    assert_eq!(r.status(), 303);
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    let session = cookie.split(';').next().unwrap().to_string();
    let me: Value = c.get(s.url("/api/me")).header("Cookie", &session).send().await.unwrap().json().await.unwrap();
    assert_eq!((me["name"].as_str(), me["role"].as_str()), (Some("admin"), Some("admin")));
    assert_eq!(c.get(&link).send().await.unwrap().status(), 401, "used up");

    // Bad bodies.
    let big = json!({"prompt": "x".repeat(1_100_000)});
    let r = create(&c, &s, &alice, big).await;
    assert_eq!(r.status(), 413);
    assert_eq!(code(&r.json().await.unwrap()), "too_large");
    let r = c
        .post(s.url("/api/builds"))
        .bearer_auth(&alice)
        .header("content-type", "application/json")
        .body("{\"prompt\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    assert_eq!(code(&r.json().await.unwrap()), "malformed_json");
    for (body, want) in [
        (json!({"prompt": "a countdown timer", "colour": "red"}), "invalid_fields"),
        (json!({"prompt": 7}), "invalid_fields"),
        (json!({"prompt": "timer"}), "prompt_length"),
        (json!({"prompt": "a countdown timer", "template": "spaceship"}), "invalid_fields"),
        (json!({"prompt": "a countdown timer", "model": "gpt-5-ultra"}), "model_not_allowed"),
        (json!({"prompt": "a todo app, my key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"}), "prompt_secret"),
        (json!({"prompt": "a login page for the admin; use my password hunter2"}), "prompt_credentials"),
    ] {
        let r = create(&c, &s, &alice, body.clone()).await;
        assert_eq!(r.status(), 422, "{body}");
        assert_eq!(code(&r.json().await.unwrap()), want, "{body}");
    }
    assert_eq!(c.get(s.url("/api/builds/nope/events")).bearer_auth(&alice).send().await.unwrap().status(), 404);

    // Idempotency: the same key is the same build; an identical request while it is active too.
    let body = json!({"prompt": "a landing page, built slowly please", "template": "static"});
    let send = |key: Option<&str>| {
        let mut r = c.post(s.url("/api/builds")).bearer_auth(&alice).json(&body);
        if let Some(k) = key {
            r = r.header("Idempotency-Key", k);
        }
        r.send()
    };
    let a: Value = send(Some("k1")).await.unwrap().json().await.unwrap();
    let b: Value = send(Some("k1")).await.unwrap().json().await.unwrap();
    let twin: Value = send(None).await.unwrap().json().await.unwrap();
    assert_eq!(a["id"], b["id"]);
    assert_eq!((b["deduplicated"].as_bool(), twin["id"].clone()), (Some(true), a["id"].clone()));
    // The key with another body is refused (a key names one request); the same body, spaced
    // and ordered differently, is still the first build.
    let other = json!({"prompt": "a landing page for a cat sitter", "template": "static"});
    let r = c.post(s.url("/api/builds")).bearer_auth(&alice).header("Idempotency-Key", "k1").json(&other);
    let r = r.send().await.unwrap();
    assert_eq!(r.status(), 422);
    let v: Value = r.json().await.unwrap();
    assert_eq!(code(&v), "idempotency_key_reused", "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains(a["id"].as_str().unwrap()), "{v}");
    let same = r#"{ "template": "static",  "prompt": "a landing page, built slowly please" }"#;
    let r = c.post(s.url("/api/builds")).bearer_auth(&alice).header("Idempotency-Key", "k1");
    let r = r.header("content-type", "application/json").body(same).send().await.unwrap();
    assert_eq!(r.status(), 202);
    assert_eq!(r.json::<Value>().await.unwrap()["id"], a["id"]);
    let running = a["id"].as_str().unwrap().to_string();
    // A key that is empty or too long, or a `Last-Event-ID` that is no seq, is refused by name.
    for key in [String::new(), "k".repeat(201)] {
        let r = c.post(s.url("/api/builds")).bearer_auth(&alice).header("Idempotency-Key", key).json(&body);
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), 422);
        let v: Value = r.json().await.unwrap();
        assert!(code(&v) == "invalid_fields" && v.to_string().contains("Idempotency-Key"), "{v}");
    }
    let r = c.get(s.url(&format!("/api/builds/{running}/events"))).bearer_auth(&alice).header("Last-Event-ID", "x");
    let r = r.send().await.unwrap();
    assert_eq!(r.status(), 422);
    let v: Value = r.json().await.unwrap();
    assert!(code(&v) == "invalid_fields" && v.to_string().contains("Last-Event-ID"), "{v}");

    // Bob sees nothing of Alice's.
    assert_eq!(c.get(s.url(&format!("/api/builds/{running}"))).bearer_auth(&bob).send().await.unwrap().status(), 404);
    assert_eq!(
        c.get(s.url(&format!("/api/builds/{running}/events"))).bearer_auth(&bob).send().await.unwrap().status(),
        404
    );
    assert_eq!(
        c.post(s.url(&format!("/api/builds/{running}/cancel"))).bearer_auth(&bob).send().await.unwrap().status(),
        404
    );
    assert_eq!(
        c.get(s.url(&format!("/api/builds/{running}/screenshot"))).bearer_auth(&bob).send().await.unwrap().status(),
        404
    );
    // Alice's running build has no screenshot yet: a clear 404, not an empty image.
    let none = c.get(s.url(&format!("/api/builds/{running}/screenshot"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(none.status(), 404);
    assert!(none.text().await.unwrap().contains("browser check"));
    let list = get_json(&c, &s, &bob, "/api/builds").await;
    assert_eq!(list.as_array().unwrap().len(), 0);
    assert_eq!(c.get(s.url("/api/stats")).bearer_auth(&bob).send().await.unwrap().status(), 403);

    // One worker: a second build waits in the queue; cancelling it ends its stream at once.
    let queued = create_ok(&c, &s, &alice, "another landing page for cats").await;
    let q: Value = get_json(&c, &s, &alice, &format!("/api/builds/{queued}")).await;
    assert_eq!((q["status"].as_str(), q["queue_position"].as_u64()), (Some("queued"), Some(0)));
    let r: Value = c
        .post(s.url(&format!("/api/builds/{queued}/cancel")))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["status"], "cancelled");
    let events = stream(&c, &s, &alice, &queued, None).await;
    assert_eq!(types(&events), ["queued", "status", "complete"]);
    assert_eq!(events[2].data["success"], false);
    // Looking at the files of a build that never ran makes no folder for it.
    let files: Value = get_json(&c, &s, &alice, &format!("/api/builds/{queued}/files")).await;
    assert_eq!(files, json!([]));
    let r = c.get(s.url(&format!("/api/builds/{queued}/archive"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert!(!dir.path().join("builds").join(&queued).exists(), "a GET made the build's folder");

    // Cancelling the running one: its stream still ends with `complete`.
    let r: Value = c
        .post(s.url(&format!("/api/builds/{running}/cancel")))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["status"], "cancelling");
    let events = stream(&c, &s, &alice, &running, None).await;
    assert_eq!(events.last().unwrap().event, "complete");
    assert_eq!(events.last().unwrap().data["success"], false);
    let b: Value = get_json(&c, &s, &alice, &format!("/api/builds/{running}")).await;
    assert_eq!(b["end_reason"], "cancelled");

    // Three builds this hour (the deduplicated ones were one): the fourth is refused with Retry-After.
    let third = create_ok(&c, &s, &alice, "a third landing page for birds").await;
    let r = create(&c, &s, &alice, json!({"prompt": "a fourth landing page for fish"})).await;
    assert_eq!(r.status(), 429);
    let retry: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=3600).contains(&retry), "{retry}");
    assert_eq!(code(&r.json().await.unwrap()), "rate_limited");
    // Bob's own hour is untouched.
    assert_eq!(create(&c, &s, &bob, json!({"prompt": "a fourth landing page for fish"})).await.status(), 202);
    let _ = stream(&c, &s, &alice, &third, None).await;
    let metrics = c.get(s.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("wright_refused_requests_total{kind=\"hourly\"} 1"), "{metrics}");
}

/// With no re-runs allowed (`--max-restarts 0`), a build interrupted by kill -9 ends failed
/// (`server_stopped`) on the next start; `serve_restart.rs` has the re-runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_nine_mid_build_past_the_restart_limit_ends_its_stream_and_runs_the_queue() {
    let llm = model(30).await;
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(dir.path(), &llm.base_url, &["--workers", "1"]).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let running = create_ok(&c, &s, &alice, "a landing page, built slowly please").await;
    let waiting = create_ok(&c, &s, &alice, "a landing page for a cat sitter").await;
    // Wait until the sandboxed `sleep` runs: the build is mid-way.
    let res = c.get(s.url(&format!("/api/builds/{running}/events"))).bearer_auth(&alice).send().await.unwrap();
    let mut body = futures::StreamExt::boxed(res.bytes_stream());
    let mut seen = String::new();
    while !seen.contains("event: command_started") {
        let chunk = tokio::time::timeout(Duration::from_secs(60), futures::StreamExt::next(&mut body))
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        seen.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    s.kill9().await;
    drop(body);

    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1", "--max-restarts", "0"]).await;
    assert!(s.login_url.is_none(), "users survive a restart");
    let events = stream(&c, &s, &alice, &running, None).await;
    let n = events.len();
    assert_eq!(types(&events[n - 2..]), ["error", "complete"]);
    assert_eq!(events[n - 2].data["message"], "the server stopped during this build");
    assert_eq!(events[n - 1].data["success"], false);
    assert_eq!(stored_events(&s, &running).await, events.iter().map(|e| e.data.clone()).collect::<Vec<_>>());
    let b: Value = get_json(&c, &s, &alice, &format!("/api/builds/{running}")).await;
    assert_eq!((b["status"].as_str(), b["end_reason"].as_str()), (Some("failed"), Some("server_stopped")));
    // The build that was queued runs on the new server.
    let events = stream(&c, &s, &alice, &waiting, None).await;
    assert_eq!(events.last().unwrap().data["success"], true);
}

/// A build still running when the grace time ends goes back to the queue and runs again on
/// the next start: its stream ends there with one `complete`, after a `restarted` event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_past_the_grace_time_puts_the_build_back_and_the_next_start_finishes_it() {
    // The first run sleeps a minute (past the grace time); its re-run only a second.
    let slow = Turn::calls(&[
        ("runCommand", json!({"command": "sleep", "args": ["60"]})),
        ("createFile", json!({"path": "index.html", "content": support::server::PAGE})),
    ]);
    let llm = MockLlm::start_with_fallback(vec![slow], stateless_model(1)).await;
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(dir.path(), &llm.base_url, &["--workers", "1", "--grace", "1"]).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let id = create_ok(&c, &s, &alice, "a landing page, built slowly please").await;
    let follower = {
        let (c, url, alice) = (c.clone(), s.url(&format!("/api/builds/{id}/events")), alice.clone());
        tokio::spawn(async move { read_sse(c.get(url).bearer_auth(alice).send().await.unwrap()).await.0 })
    };
    // Let it reach the long command, then ask the server to stop.
    wait_for_event(&c, &s, &alice, &id, "command_started").await;
    term(&s);
    let before = tokio::time::timeout(Duration::from_secs(60), follower).await.unwrap().unwrap();
    assert!(before.iter().all(|e| e.event != "complete"), "{:?}", types(&before));
    let status = tokio::time::timeout(Duration::from_secs(30), s.child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status}");

    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "1"]).await;
    // Resumed where the client was: the rest of the same stream.
    let rest = stream(&c, &s, &alice, &id, Some((before.last().unwrap().id, true))).await;
    // The `restarted` event is stored (and sent) as the old server stops, or read on the new one.
    let all: Vec<Value> = before.iter().chain(&rest).map(|e| e.data.clone()).collect();
    let restarted = all.iter().find(|e| e["type"] == "restarted").expect("a restarted event");
    assert_eq!((restarted["attempt"].as_u64(), restarted["reason"].as_str()), (Some(2), Some("shutdown")));
    assert_eq!(all, stored_events(&s, &id).await, "one gapless stream across the stop");
    assert_eq!(rest.iter().filter(|e| e.event == "complete").count(), 1);
    assert_eq!(rest.last().unwrap().data["success"], true);
    let b: Value = get_json(&c, &s, &alice, &format!("/api/builds/{id}")).await;
    assert_eq!((b["status"].as_str(), b["attempt"].as_u64()), (Some("published"), Some(2)));
}

/// Read a build's stream until an event of type `kind` arrives.
async fn wait_for_event(c: &reqwest::Client, s: &Server, token: &str, id: &str, kind: &str) {
    let res = c.get(s.url(&format!("/api/builds/{id}/events"))).bearer_auth(token).send().await.unwrap();
    let mut body = futures::StreamExt::boxed(res.bytes_stream());
    let mut seen = String::new();
    while !seen.contains(&format!("event: {kind}")) {
        let chunk = tokio::time::timeout(Duration::from_secs(60), futures::StreamExt::next(&mut body))
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        seen.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_stack_preview_runs_its_app_in_the_sandbox_and_stops_it_when_idle() {
    let llm = model(1).await;
    let dir = tempfile::tempdir().unwrap();
    // A data folder far past what a socket path holds (the app's socket lives under it).
    let data = dir.path().join("pasta de dados é longa ✓ ".repeat(3)).join("and longer still, with spaces ".repeat(2));
    std::fs::create_dir_all(&data).unwrap();
    assert!(data.as_os_str().len() > 150, "{}", data.display());
    let s = Server::start(&data, &llm.base_url, &["--workers", "1", "--preview-idle", "1"]).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let r = create(&c, &s, &alice, json!({"prompt": "a page showing a quote from a server", "template": "fullstack"}))
        .await;
    assert_eq!(r.status(), 202);
    let id = r.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let events = stream(&c, &s, &alice, &id, None).await;
    assert_eq!(
        events.last().unwrap().data["success"],
        true,
        "{:#?}",
        events.iter().filter(|e| e.event != "usage").map(|e| e.data.clone()).collect::<Vec<_>>()
    );
    let b: Value = get_json(&c, &s, &alice, &format!("/api/builds/{id}")).await;
    let preview_url = b["preview_url"].as_str().unwrap().to_string();
    let (pc, _) = support::server::preview_client(&s, &preview_url);
    // The page comes from the app's own server, and so does its API, root-relative.
    let page = pc.get(&preview_url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("allow-same-origin"));
    assert!(page.text().await.unwrap().contains("fetch('/api/quote')"));
    let q: Value = pc.post(format!("{preview_url}api/quote")).body("{}").send().await.unwrap().json().await.unwrap();
    assert_eq!((q["quote"].as_str(), q["method"].as_str()), (Some("Keep going!"), Some("POST")));
    assert_eq!(pc.get(format!("{preview_url}nothing-here")).send().await.unwrap().status(), 404, "the app's own 404");
    // Stopped after a second of idleness, and started again on the next request.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let q: Value = pc.get(format!("{preview_url}api/quote")).send().await.unwrap().json().await.unwrap();
    assert_eq!(q["quote"], "Keep going!");
}

/// A retry with the same `Idempotency-Key` at the concurrent limit gets its build back, and
/// neither it nor the limit's refusal counts toward the hourly limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotent_retry_at_the_limit_gets_its_build_back() {
    let llm = model(30).await;
    let dir = tempfile::tempdir().unwrap();
    let limits = ["--workers", "1", "--max-concurrent-builds", "2", "--builds-per-hour", "3"];
    let s = Server::start(dir.path(), &llm.base_url, &limits).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let body = json!({"prompt": "a landing page, built slowly please", "template": "static"});
    let send = |key: &'static str, body: Value| {
        c.post(s.url("/api/builds")).bearer_auth(&alice).header("Idempotency-Key", key).json(&body).send()
    };
    let first = send("k1", body.clone()).await.unwrap();
    assert_eq!(first.status(), 202);
    let first: Value = first.json().await.unwrap();
    let second = create_ok(&c, &s, &alice, "a second landing page for a cat sitter").await;
    // Two builds queued or running: the most at once. A new build is refused…
    let r = create(&c, &s, &alice, json!({"prompt": "a third landing page for birds"})).await;
    assert_eq!(r.status(), 429);
    assert!(r.headers().contains_key("retry-after"));
    // …but a retry of the first, however often, is that build.
    for _ in 0..3 {
        let r = send("k1", body.clone()).await.unwrap();
        assert_eq!(r.status(), 202);
        let again: Value = r.json().await.unwrap();
        assert_eq!((again["id"].clone(), again["deduplicated"].as_bool()), (first["id"].clone(), Some(true)));
    }
    let list = get_json(&c, &s, &alice, "/api/builds").await;
    assert_eq!(list.as_array().unwrap().len(), 2, "no build was added");
    // The hour has 2 builds, not 5: a third may start, and only a fourth is refused (hourly).
    c.post(s.url(&format!("/api/builds/{second}/cancel"))).bearer_auth(&alice).send().await.unwrap();
    let _ = stream(&c, &s, &alice, &second, None).await;
    let third = create_ok(&c, &s, &alice, "a third landing page for birds").await;
    c.post(s.url(&format!("/api/builds/{third}/cancel"))).bearer_auth(&alice).send().await.unwrap();
    let _ = stream(&c, &s, &alice, &third, None).await;
    let r = create(&c, &s, &alice, json!({"prompt": "a fourth landing page for fish"})).await;
    assert_eq!(r.status(), 429);
    let e: Value = r.json().await.unwrap();
    assert!(e["error"]["message"].as_str().unwrap().contains("3 builds in the last hour"), "{e}");
    let metrics = c.get(s.url("/metrics")).bearer_auth(&alice).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("wright_refused_requests_total{kind=\"concurrent\"} 1"), "{metrics}");
}

/// Requests without valid credentials are limited per client address (429, `Retry-After`,
/// the error shape); signed-in ones are not; `X-Forwarded-For` counts only from a trusted proxy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_credentials_are_limited_per_address() {
    let llm = model(1).await;
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--workers", "1", "--unauthenticated-per-minute", "6", "--trusted-proxy", "127.0.0.1"];
    let s = Server::start(dir.path(), &llm.base_url, &flags).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let health = |from: Option<&'static str>| {
        let mut r = c.get(s.url("/healthz"));
        if let Some(ip) = from {
            r = r.header("X-Forwarded-For", format!("198.51.100.1, {ip}"));
        }
        r.send()
    };
    // Signed-in requests spend nothing.
    for _ in 0..10 {
        assert_eq!(c.get(s.url("/api/me")).bearer_auth(&alice).send().await.unwrap().status(), 200);
    }
    // A burst of 3 (half the per-minute number), then 429 in the API's error shape.
    for _ in 0..3 {
        assert_eq!(health(Some("203.0.113.7")).await.unwrap().status(), 200);
    }
    let r = health(Some("203.0.113.7")).await.unwrap();
    assert_eq!(r.status(), 429);
    let retry: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["code"], "rate_limited");
    // Anonymous traffic from that address (a shared NAT) does not hold back its signed-in users.
    let me = c.get(s.url("/api/me")).bearer_auth(&alice).header("X-Forwarded-For", "198.51.100.1, 203.0.113.7");
    assert_eq!(me.send().await.unwrap().status(), 200);
    // Another client behind the same trusted proxy has its own allowance.
    assert_eq!(health(Some("203.0.113.8")).await.unwrap().status(), 200);
    // Guessed tokens spend the allowance too, and then even a guess is not looked at.
    let guess = || c.get(s.url("/api/builds")).bearer_auth("wr_guess").header("X-Forwarded-For", "203.0.113.9").send();
    for _ in 0..3 {
        assert_eq!(guess().await.unwrap().status(), 401);
    }
    assert_eq!(guess().await.unwrap().status(), 429);
    // The proxy's own address (no header) is one more client.
    assert_eq!(c.get(s.url("/readyz")).send().await.unwrap().status(), 200);
}
