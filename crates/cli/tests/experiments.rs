//! Online experiments on a real `wright serve` (docs/experiments.md): an experiment made and
//! started with the CLI puts each new build in the variant `assign` gives its owner, the build
//! says so in its events, and the admin API counts it in that arm; a non-admin sees none of
//! it, and a second experiment cannot start beside it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::MockLlm;
use support::browser::{js, launch, shot, until};
use support::server::{Server, client, create_ok, get_json, stateless_model, stream};
use wright_experiments::{Variant, assign};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn builds_join_the_running_experiment_by_their_owner() {
    let llm = MockLlm::start_with_fallback(vec![], stateless_model(0)).await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &llm.base_url, &["--workers", "2", "--browser-check", "off"]).await;
    let admin = s.add_user("root", true).await;
    let (ana, ben) = (s.add_user("ana", false).await, s.add_user("ben", false).await);
    let c = client();

    let made = s
        .cli(&[
            "experiments",
            "create",
            "--name",
            "split",
            "--variant",
            "control",
            "--variant",
            "treat:1",
            "--horizon",
            "2",
        ])
        .await;
    assert!(made.contains("a draft"), "{made}");
    let started = s.cli(&["experiments", "start", "split"]).await;
    assert!(started.contains("Started experiment split"), "{started}");
    let second = c
        .post(s.url("/api/admin/experiments"))
        .bearer_auth(&admin)
        .json(&json!({"name": "other", "variants": [{"name": "a"}, {"name": "b"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(second.status(), 201);
    let other_id = second.json::<Value>().await.unwrap()["experiment"]["id"].as_str().unwrap().to_string();
    let refused =
        c.post(s.url(&format!("/api/admin/experiments/{other_id}/start"))).bearer_auth(&admin).send().await.unwrap();
    assert_eq!(refused.status(), 409);
    assert!(refused.text().await.unwrap().contains("`split` is running"));
    // A variant naming a prompt version or a starter this machine does not have is refused when
    // the experiment is made, by the API and by the CLI, rather than failing each build it gets.
    let typo = json!({"name": "typo", "variants": [{"name": "a"}, {"name": "b", "prompt_version": "shorter"}]});
    let typo = c.post(s.url("/api/admin/experiments")).bearer_auth(&admin).json(&typo).send().await.unwrap();
    assert_eq!(typo.status(), 422);
    let said = typo.text().await.unwrap();
    assert!(said.contains("variant `b`: unknown prompt version `shorter`"), "{said}");
    let file = dir.path().join("variants.toml");
    std::fs::write(
        &file,
        "[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nstarter_policy = \"no-such-starter\"\n",
    )
    .unwrap();
    let said = s.cli_fails(&["experiments", "create", "--name", "typo", "--file", file.to_str().unwrap()]).await;
    assert!(said.contains("variant `b`: no starter `no-such-starter`; the starters are "), "{said}");
    let not_admin = c.get(s.url("/api/admin/experiments")).bearer_auth(&ana).send().await.unwrap();
    assert_eq!(not_admin.status(), 403);

    let doc: Value = c.get(s.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    for (path, method) in [
        ("/api/admin/experiments", "get"),
        ("/api/admin/experiments", "post"),
        ("/api/admin/experiments/{id}/start", "post"),
        ("/api/admin/experiments/{id}/stop", "post"),
    ] {
        assert!(doc["paths"][path][method].is_object(), "{method} {path} is missing from the OpenAPI document");
    }

    let list = get_json(&c, &s, &admin, "/api/admin/experiments").await;
    let exp =
        list.as_array().unwrap().iter().find(|e| e["experiment"]["name"] == "split").unwrap()["experiment"].clone();
    let (id, salt) = (exp["id"].as_str().unwrap().to_string(), exp["salt"].as_str().unwrap().to_string());
    let variants = vec![Variant::named("control", 1.0), Variant::named("treat", 1.0)];

    let mut expected = std::collections::HashMap::<String, u64>::new();
    let mut firsts = vec![];
    for token in [&ana, &ben] {
        let me = get_json(&c, &s, token, "/api/me").await;
        let want = &variants[assign(&id, &salt, me["id"].as_str().unwrap(), &variants).unwrap()].name;
        for n in 0..2 {
            let build = create_ok(&c, &s, token, &format!("a page number {n}")).await;
            let events =
                tokio::time::timeout(Duration::from_secs(120), stream(&c, &s, token, &build, None)).await.unwrap();
            let assigned: Vec<&Value> =
                events.iter().filter(|e| e.event == "experiment_assigned").map(|e| &e.data).collect();
            assert_eq!(assigned.len(), 1, "{events:?}");
            assert_eq!(assigned[0]["experiment"], id.as_str());
            assert_eq!(assigned[0]["variant"], want.as_str(), "the owner's variant, every build");
            *expected.entry(want.clone()).or_default() += 1;
            if n == 0 {
                firsts.push((token.clone(), build, want.clone()));
            }
        }
    }
    let list = get_json(&c, &s, &admin, "/api/admin/experiments").await;
    let split = list.as_array().unwrap().iter().find(|e| e["experiment"]["name"] == "split").unwrap();
    let arms = split["report"]["arms"].as_array().unwrap();
    for arm in arms {
        let name = arm["name"].as_str().unwrap();
        assert_eq!(arm["n"], expected.get(name).copied().unwrap_or(0), "arm {name}: {split}");
    }
    assert_eq!(arms.iter().map(|a| a["n"].as_u64().unwrap()).sum::<u64>(), 4, "the four builds before the retried one");
    let shown = s.cli(&["experiments", "show", "split"]).await;
    assert!(shown.contains("Verdict:"), "{shown}");

    // A follow-up keeps the variant of the build it continues, says so, and is not counted.
    let (token, parent, variant) = &firsts[0];
    let body = json!({"prompt": "and a footer", "continue": parent});
    let res = support::server::create(&c, &s, token, body).await;
    assert_eq!(res.status(), 202);
    let follow = res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let events = tokio::time::timeout(Duration::from_secs(120), stream(&c, &s, token, &follow, None)).await.unwrap();
    let joined: Vec<&Value> = events.iter().filter(|e| e.event == "experiment_assigned").map(|e| &e.data).collect();
    assert_eq!(joined.len(), 1, "{events:?}");
    assert_eq!(joined[0]["experiment"], "split (follow-up)");
    assert_eq!(joined[0]["variant"], variant.as_str());
    let list = get_json(&c, &s, &admin, "/api/admin/experiments").await;
    let split = list.as_array().unwrap().iter().find(|e| e["experiment"]["name"] == "split").unwrap();
    let n: u64 = split["report"]["arms"].as_array().unwrap().iter().map(|a| a["n"].as_u64().unwrap()).sum();
    assert_eq!(n, 4, "the follow-up is not counted");

    // A retry with the same Idempotency-Key gets its build back, variant and all.
    let body = json!({"prompt": "a retried page", "template": "static"});
    let mut ids = vec![];
    for _ in 0..2 {
        let res = c
            .post(s.url("/api/builds"))
            .bearer_auth(&ana)
            .header("Idempotency-Key", "k-1")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 202);
        ids.push(res.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_string());
    }
    assert_eq!(ids[0], ids[1], "the retry names the same build");
    let events = tokio::time::timeout(Duration::from_secs(120), stream(&c, &s, &ana, &ids[0], None)).await.unwrap();
    assert_eq!(events.iter().filter(|e| e.event == "experiment_assigned").count(), 1);

    // The admin dashboard shows the experiment, its arms and verdict, with Stop.
    let login = s.login_url.clone().expect("a first start prints an admin's login link");
    let (mut browser, events, _profile) = launch().await;
    let page = browser.new_page(login.as_str()).await.unwrap();
    until(&page, "!document.getElementById('ask').hidden", "the prompt form").await;
    js(&page, "location.hash = '#admin'").await;
    until(&page, "document.querySelectorAll('#experiments article.experiment').length === 2", "the experiments").await;
    let card = js(&page, "[...document.querySelectorAll('#experiments article')].find(a => a.querySelector('h4').textContent.startsWith('split')).innerText").await;
    let card = card.as_str().unwrap().to_string();
    assert!(card.contains("split · running") && card.contains("control (1)") && card.contains("treat (1)"), "{card}");
    assert!(card.contains("Sample ratio check: p = ") && card.contains("Verdict: "), "{card}");
    assert!(card.contains("Stop"), "{card}");
    assert_eq!(js(&page, "document.querySelectorAll('#experiments .exp-bar').length").await, 4);
    shot(&page, "experiments.png").await;
    browser.close().await.unwrap();
    events.abort();

    let stop = c
        .post(s.url(&format!("/api/admin/experiments/{id}/stop")))
        .bearer_auth(&admin)
        .json(&json!({"promote": "treat"}))
        .send()
        .await
        .unwrap();
    assert_eq!(stop.status(), 200);
    assert_eq!(stop.json::<Value>().await.unwrap()["experiment"]["promoted"], "treat");
    // Stopped with a winner: a new build gets the promoted variant as the default, said so,
    // and the stopped experiment's arms do not count it.
    let counted =
        |v: &Value| v["report"]["arms"].as_array().unwrap().iter().map(|a| a["n"].as_u64().unwrap()).sum::<u64>();
    let before = c.get(s.url("/api/admin/experiments")).bearer_auth(&admin).send().await.unwrap();
    let before: Value = before.json().await.unwrap();
    let after = create_ok(&c, &s, &ben, "a last page").await;
    let events = tokio::time::timeout(Duration::from_secs(120), stream(&c, &s, &ben, &after, None)).await.unwrap();
    let joined: Vec<Value> =
        events.iter().filter(|e| e.event == "experiment_assigned").map(|e| e.data.clone()).collect();
    assert_eq!(joined.len(), 1, "{joined:?}");
    assert_eq!(joined[0]["variant"], "treat");
    assert!(joined[0]["experiment"].as_str().unwrap().ends_with("(promoted)"), "{joined:?}");
    let now: Value =
        c.get(s.url("/api/admin/experiments")).bearer_auth(&admin).send().await.unwrap().json().await.unwrap();
    assert_eq!(counted(&now[0]), counted(&before[0]));
}
