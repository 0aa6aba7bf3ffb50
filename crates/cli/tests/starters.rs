//! Starters end to end with the real binary: the library is listed and shown; a build whose
//! request matches one begins from it (the scripted model, the only scripted part, fills its
//! slots through `fillStarter`; the files are rendered, verified for real and published); a
//! user's own starter is checked in the sandbox before it is added, a broken one is refused
//! with the reason, and one of yours can be removed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use std::path::Path;
use support::{MockLlm, Turn};

async fn wright(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.args(args).arg("--data-dir").arg(dir.join("data")).current_dir(dir);
    for k in support::HOST_ENV {
        cmd.env_remove(k);
    }
    cmd.output().await.unwrap()
}

fn text(out: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[tokio::test]
async fn the_library_is_listed_shown_and_yours_is_checked_before_it_is_added() {
    let dir = tempfile::tempdir().unwrap();
    let list = wright(dir.path(), &["starters", "list"]).await;
    let shown = text(&list);
    assert!(list.status.success(), "{shown}");
    for id in ["landing-page", "countdown-timer", "todo-list", "notes-api"] {
        assert!(shown.contains(id), "{id} missing: {shown}");
    }
    assert!(shown.lines().filter(|l| l.contains("built-in")).count() >= 12, "{shown}");
    let show = text(&wright(dir.path(), &["starters", "show", "countdown-timer"]).await);
    assert!(show.contains("slots:") && show.contains("timer.js"), "{show}");
    let json: Value =
        serde_json::from_slice(&wright(dir.path(), &["starters", "show", "menu", "--json"]).await.stdout).unwrap();
    assert_eq!(json["template"], "static");

    // Yours: a copy of the landing page under another id passes and is added.
    let mine = dir.path().join("my-page");
    copy(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../starters/library/landing-page"), &mine);
    let manifest = mine.join("starter.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["id"] = json!("my-page");
    std::fs::write(&manifest, m.to_string()).unwrap();
    let add = wright(dir.path(), &["starters", "add", mine.to_str().unwrap()]).await;
    assert!(add.status.success(), "{}", text(&add));
    assert!(text(&wright(dir.path(), &["starters", "list"]).await).contains("my-page"));

    // A broken one is refused with the reason: its folder's name is not its id.
    let broken = dir.path().join("other-name");
    copy(&mine, &broken);
    let refused = wright(dir.path(), &["starters", "add", broken.to_str().unwrap()]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("folder"), "{}", text(&refused));
    // One whose page breaks in the browser is refused after the check.
    let failing = dir.path().join("my-broken");
    copy(&mine, &failing);
    m["id"] = json!("my-broken");
    std::fs::write(failing.join("starter.json"), m.to_string()).unwrap();
    let page = failing.join("files/index.html");
    let html = std::fs::read_to_string(&page).unwrap().replace("</body>", "<script>nosuchfunction();</script></body>");
    std::fs::write(&page, html).unwrap();
    let refused = wright(dir.path(), &["starters", "add", failing.to_str().unwrap()]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("does not pass verification"), "{}", text(&refused));

    let removed = wright(dir.path(), &["starters", "remove", "my-page"]).await;
    assert!(removed.status.success(), "{}", text(&removed));
    let builtin = wright(dir.path(), &["starters", "remove", "menu"]).await;
    assert_eq!(builtin.status.code(), Some(2));
    assert!(text(&builtin).contains("built in"), "{}", text(&builtin));
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A build asked for "a countdown timer" begins from the countdown starter: the model fills its
/// slots (a markup-laden title among them), wright writes the files, and the real verification
/// (node's tests, the browser) passes; the page shows the title as text.
#[tokio::test]
async fn a_matching_request_begins_from_the_starter_and_publishes() {
    let fill =
        json!({"values": {"title": "<b>Tea</b> timer", "default_minutes": 4, "done_message": "Your tea is ready!"}});
    let llm = MockLlm::start_with_fallback(vec![], Turn::calls(&[("fillStarter", fill)])).await;
    let dir = tempfile::tempdir().unwrap();
    // Filling picks by meaning: the embedding model the tests fetched once.
    support::server::link_models(&dir.path().join("data"));
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.args(["run", "a countdown timer for my tea", "--events", "jsonl", "--starter", "fill"])
        .args(["--provider", "openai", "--base-url", &llm.base_url, "--model", "mock-model"])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--workspace")
        .arg(dir.path().join("ws"))
        .env("OPENAI_API_KEY", support::OPENAI_KEY);
    for k in support::HOST_ENV {
        cmd.env_remove(k);
    }
    let out = cmd.output().await.unwrap();
    let events: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let of = |t: &str| events.iter().filter(|e| e["type"] == t).collect::<Vec<_>>();
    assert!(out.status.success(), "{}\n{events:#?}", text(&out));
    let starter = of("starter");
    assert_eq!((starter[0]["id"].as_str(), starter[0]["mode"].as_str()), (Some("countdown-timer"), Some("fill")));
    assert_eq!(of("tool_call")[0]["name"], "fillStarter");
    let done = of("complete");
    assert_eq!((done[0]["success"].as_bool(), done[0]["fix_attempts"].as_u64()), (Some(true), Some(0)), "{events:#?}");
    let page = std::fs::read_to_string(dir.path().join("ws/index.html")).unwrap();
    assert!(page.contains("&lt;b&gt;Tea&lt;&#x2f;b&gt; timer") && !page.contains("<b>Tea"), "{page}");
    let script = std::fs::read_to_string(dir.path().join("ws/app.js")).unwrap()
        + &std::fs::read_to_string(dir.path().join("ws/timer.js")).unwrap_or_default();
    assert!(script.contains("Your tea is ready!"), "the filled message is in the app");
}

/// The built-in model's folder, fetched once for the tests (one fetch at a time: two tests
/// pulling into one folder would move each other's files).
async fn built_in_model() -> std::path::PathBuf {
    static PULL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let _one = PULL.lock().await;
    let models = std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"));
    let pulled = models.clone();
    tokio::task::spawn_blocking(move || {
        wright_local::pull::pull(&wright_local::DEFAULT_MODEL, &pulled, "python3", false, &|_| {})
    })
    .await
    .unwrap()
    .expect("pull the default model");
    models
}

/// The built-in model, for real (no script): eight requests of seven starters, in English
/// and Portuguese, each PUBLISHED with the browser check clean, each from its starter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_model_makes_real_apps_from_starters() {
    let models = built_in_model().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::os::unix::fs::symlink(models.join("models").canonicalize().unwrap(), dir.path().join("data/models")).unwrap();
    for (ask, lang, want) in [
        ("a landing page for a dog walking business", "en", "landing-page"),
        ("a countdown timer", "en", "countdown-timer"),
        ("uma lista de tarefas para a escola", "pt", "todo-list"),
        ("a calculator", "en", "calculator"),
        ("um quiz sobre animais", "pt", "quiz-game"),
        ("a memory game", "en", "memory-game"),
        ("a BMI calculator that tells me if my weight is healthy", "en", "bmi-calculator"),
        ("uma calculadora de IMC", "pt", "bmi-calculator"),
    ] {
        let out = wright(dir.path(), &["run", ask, "--events", "jsonl", "--lang", lang]).await;
        let events: Vec<Value> =
            String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let starter = events.iter().find(|e| e["type"] == "starter").map(|e| e["id"].clone());
        let done = events.iter().rev().find(|e| e["type"] == "complete").cloned().unwrap_or_default();
        println!("{ask}: {:?}, success {}, browser {}", starter, done["success"], done["browser_checked"]);
        assert_eq!(starter.as_ref().and_then(Value::as_str), Some(want), "{ask}");
        assert_eq!(
            (done["success"].as_bool(), done["browser_checked"].as_bool()),
            (Some(true), Some(true)),
            "{ask}: {}",
            text(&out)
        );
    }
}

/// The built-in model, for real, asked for apps no starter fits (a scientific calculator with
/// graphs is not the calculator): nothing is built, the build ends `no_fitting_starter` (exit 1), and the
/// narration says so in the request's language, with the closest starters and a ready
/// `--starter` command; that command builds the calculator the user chose.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_model_says_when_no_starter_fits_and_starter_forces_one() {
    built_in_model().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    support::server::link_models(&dir.path().join("data"));
    for (ask, lang, says) in [
        ("a scientific calculator with sin cos and graphs", "en", "none of them is what you asked for"),
        ("uma calculadora científica com seno, cosseno e gráficos", "pt", "nenhum deles é o que você pediu"),
    ] {
        let out = wright(dir.path(), &["run", ask, "--events", "jsonl", "--lang", lang]).await;
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let events: Vec<Value> =
            String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        assert!(!events.iter().any(|e| e["type"] == "starter" || e["type"] == "file_written"), "{events:#?}");
        let narration: String =
            events.iter().filter(|e| e["type"] == "status").map(|e| e["message"].as_str().unwrap_or("")).collect();
        assert!(narration.contains(says) && narration.contains("--starter calculator"), "{narration}");
        assert!(narration.contains("OPENAI_API_KEY") && narration.contains("--base-url"), "{narration}");
        let done = events.iter().rev().find(|e| e["type"] == "complete").cloned().unwrap_or_default();
        assert_eq!((done["success"].as_bool(), done["end_reason"].as_str()), (Some(false), Some("no_fitting_starter")));
    }
    // The user picks the closest one themselves.
    let out = wright(
        dir.path(),
        &["run", "a scientific calculator with sin cos and graphs", "--events", "jsonl", "--starter", "calculator"],
    )
    .await;
    let events: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let starter = events.iter().find(|e| e["type"] == "starter").cloned().unwrap_or_default();
    assert_eq!(
        (starter["id"].as_str(), starter["mode"].as_str()),
        (Some("calculator"), Some("fill")),
        "{}",
        text(&out)
    );
    assert!(out.status.success(), "{}", text(&out));
}

/// A capable model follows the starter: its files open the first message as a tested pattern
/// (the scripted model, the only scripted part, then writes the project itself), and with
/// `--starter off` the request goes out without it.
#[tokio::test]
async fn a_capable_model_gets_the_starter_as_a_reference_and_off_means_off() {
    let page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Menu</title>\n</head>\n<body>\n<h1>Pizza Roma</h1>\n<p>Margherita 9</p>\n</body>\n</html>\n";
    for (use_, expect_reference) in [("reference", true), ("off", false)] {
        let llm = MockLlm::start(vec![
            Turn::calls(&[("createFile", json!({"path": "index.html", "content": page}))]),
            Turn::text("Done: the menu page is ready."),
        ])
        .await;
        let run = support::wright(
            &llm.base_url,
            "a page with the menu of my pizza place",
            &["--starter", use_, "--template", "static", "--browser-check", "off"],
        )
        .await;
        let first = llm.requests()[0].to_string();
        assert_eq!(first.contains("A tested starter for this kind of app"), expect_reference, "{use_}");
        assert_eq!(first.contains("--- index.html"), expect_reference, "{use_}: the starter's files are shown");
        let starter = run.of_type("starter");
        assert_eq!(starter.len(), usize::from(expect_reference), "{use_}");
        if expect_reference {
            assert_eq!((starter[0]["id"].as_str(), starter[0]["mode"].as_str()), (Some("menu"), Some("reference")));
        }
        let done = run.of_type("complete");
        assert_eq!(done[0]["success"], true, "{use_}");
    }
}
