//! The flywheel, end to end with the real binary and one SQLite file: a build that needed a fix
//! learns a lesson; the next related build gets it in its prompt and succeeds first try; note
//! counts and lifecycle follow the formula; everything survives across processes; notes
//! export and import; `--continue` and `explain` work on stored builds.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use support::counter::{COUNTER_FIXED, counter_app_calls, counter_turns, fixed_app_calls};
use support::{HOST_ENV, MockLlm, Turn, assert_contract};

const LESSON_TEXT: &str =
    "An increment function must return count + 1; check the sign of the arithmetic before running the tests.";

fn lesson_json() -> String {
    json!({
        "trigger": "counter increment",
        "triggerType": "pattern",
        "lesson": LESSON_TEXT,
        "libraries": [],
        "tags": ["counter", "button"],
        "errorPatterns": ["Expected values to be strictly equal"]
    })
    .to_string()
}

/// A model that writes the counter right only when its prompt carries the lesson.
fn lesson_aware_turns() -> Vec<Turn> {
    vec![
        Turn::when("must return count + 1", Turn::calls(&fixed_app_calls()), Turn::calls(&counter_app_calls())),
        Turn::text("I made a counter app."),
    ]
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn events(&self) -> Vec<Value> {
        self.stdout.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
    }
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }
}

/// Run the `wright` binary with `args`, its data dir `data`, and a clean environment.
async fn wright(data: &Path, args: &[&str]) -> Out {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.args(args).arg("--data-dir").arg(data).current_dir(data.parent().unwrap());
    for k in HOST_ENV {
        cmd.env_remove(k);
    }
    let out = cmd.output().await.unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `wright run PROMPT` against `mock` in the workspace `ws`, events as JSON lines.
async fn build(data: &Path, ws: &Path, mock: &MockLlm, prompt: &str, extra: &[&str]) -> (Out, Vec<Value>) {
    let ws = ws.to_str().unwrap();
    let mut args = vec!["run", prompt, "--provider", "openai", "--base-url", &mock.base_url, "--model", "mock-model"];
    args.extend(["--events", "jsonl", "--workspace", ws]);
    args.extend(extra);
    let out = wright(data, &args).await;
    let events = out.events();
    (out, events)
}

fn phases(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "phase")
        .map(|e| format!("{}:{}", e["phase"].as_str().unwrap(), e["iteration"]))
        .collect()
}

fn of_type<'a>(events: &'a [Value], t: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == t).collect()
}

fn first_user_message(req: &Value) -> String {
    req["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn notes(data: &Path) -> Vec<Value> {
    let out = wright(data, &["notes", "list", "--json"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.json().as_array().unwrap().clone()
}

fn check_contract(out: &Out, events: &[Value]) {
    let run = support::Run {
        code: out.code,
        events: events.to_vec(),
        stdout: out.stdout.clone(),
        stderr: out.stderr.clone(),
        dir: tempfile::tempdir().unwrap(),
    };
    assert_contract(&run);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lesson_learned_once_makes_the_next_related_build_succeed_first_try() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let ws = |n: u32| -> PathBuf { dir.path().join(format!("ws{n}")) };

    // 1. The model makes the mistake, wright finds it, the fix turns it green, a lesson is learned.
    let mut turns = counter_turns();
    turns.push(Turn::text(&format!("Here is the lesson:\n```json\n{}\n```", lesson_json())));
    let mock = MockLlm::start(turns).await;
    let (out, ev1) = build(&data, &ws(1), &mock, "make a counter app with a + button", &[]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    check_contract(&out, &ev1);
    assert_eq!(
        phases(&ev1),
        ["PLANNING:0", "GENERATING:0", "VERIFYING:0", "FIXING:1", "VERIFYING:1", "LEARNING:1", "PUBLISHED:1"]
    );
    let learned = of_type(&ev1, "learning");
    assert_eq!(learned.len(), 1);
    assert_eq!(learned[0]["lesson"], LESSON_TEXT);
    assert_eq!(learned[0]["trigger"], "counter increment");
    let note_id = learned[0]["note_id"].as_str().unwrap().to_string();
    // The lesson request showed the error and the fix that solved it.
    let lesson_req = mock.requests().last().unwrap().clone();
    let asked = lesson_req["messages"][1]["content"].as_str().unwrap();
    assert!(asked.contains("the + button adds one") && asked.contains("+  return count + 1;"), "{asked}");
    let build1 = ev1[0]["build"].as_str().unwrap().to_string();

    // The note is stored as a fresh candidate that knows where it came from.
    let stored = notes(&data).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["id"], note_id.as_str());
    assert_eq!((stored[0]["status"].as_str(), stored[0]["helpCount"].as_u64()), (Some("CANDIDATE"), Some(0)));
    assert_eq!(stored[0]["sourceBuild"], build1.as_str());
    assert!(stored[0]["sourceFix"].as_str().unwrap().contains("count + 1"));

    // 2. A related request: the note is in the prompt, and the model gets it right first time.
    let mock = MockLlm::start(lesson_aware_turns()).await;
    let (out, ev2) = build(&data, &ws(2), &mock, "a click counter for my cafe", &[]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    check_contract(&out, &ev2);
    assert_eq!(phases(&ev2), ["PLANNING:0", "GENERATING:0", "VERIFYING:0", "PUBLISHED:0"]);
    let opening = first_user_message(&mock.requests()[0]);
    assert!(opening.contains(LESSON_TEXT), "the lesson must be in the prompt: {opening}");
    assert!(opening.find(LESSON_TEXT).unwrap() < opening.find("a click counter for my cafe").unwrap());
    let system = mock.requests()[0]["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(!system.contains(LESSON_TEXT), "notes stay out of the cacheable system prompt");
    assert!(of_type(&ev2, "status").iter().any(|e| e["message"].as_str().unwrap().contains("1 lesson")));
    let build2 = ev2[0]["build"].as_str().unwrap().to_string();

    // An unrelated request does not get it.
    let mock = MockLlm::start(vec![Turn::text("Nothing to do.")]).await;
    let (_, _) =
        build(&data, &ws(3), &mock, "a weather dashboard with a backend API", &["--max-fix-attempts", "0"]).await;
    assert!(!first_user_message(&mock.requests()[0]).contains(LESSON_TEXT));

    // The second build counted as help: (1+1)/(1+0+2).
    let n = &notes(&data).await[0];
    assert_eq!((n["helpCount"].as_u64(), n["failCount"].as_u64()), (Some(1), Some(0)));
    assert!((n["confidence"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!(n["status"], "CANDIDATE");

    // `wright stats` shows the flywheel: the related build needed no fix.
    let stats = wright(&data, &["stats", "--json"]).await.json();
    assert_eq!(stats["builds"], 3);
    assert_eq!(stats["published"], 2);
    assert_eq!(stats["first_try"], 1);
    assert_eq!(stats["builds_with_notes"], 1);
    assert_eq!(stats["published_with_notes"], 1);
    assert_eq!(stats["fix_histogram"], json!([2, 1]));
    assert_eq!(stats["notes_candidate"], 1);
    let human = wright(&data, &["stats"]).await;
    assert_eq!(human.code, 0, "{}", human.stderr);
    assert!(human.stdout.contains("interactive"), "{}", human.stdout);

    // The stored build knows which notes it used; its events are exactly what was printed.
    let show = wright(&data, &["builds", "show", &build2, "--json"]).await.json();
    assert_eq!(show["notes_applied"], json!([note_id]));
    assert_eq!(show["build"]["status"], "published");
    let replay = wright(&data, &["builds", "events", &build1]).await;
    assert_eq!(replay.events(), ev1, "the store holds every event as it was emitted");
    let report = wright(&data, &["builds", "show", &build1]).await.stdout;
    assert!(report.contains("Learned note") && report.contains("Fix attempt 1"), "{report}");

    // 3. Two more successes make the candidate ACTIVE (help ≥ 3, score 0.8 > 0.6).
    for i in 4..=5 {
        let mock = MockLlm::start(lesson_aware_turns()).await;
        let (out, ev) = build(&data, &ws(i), &mock, "a counter with a big + button", &[]).await;
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(phases(&ev).len(), 4, "first try");
    }
    let n = &notes(&data).await[0];
    assert_eq!((n["helpCount"].as_u64(), n["status"].as_str()), (Some(3), Some("ACTIVE")));
    assert!((n["confidence"].as_f64().unwrap() - 0.8).abs() < 1e-9);

    // 4. A related build that fails anyway counts against the note: (3+1)/(3+1+2).
    let mock = MockLlm::start_with_fallback(vec![Turn::calls(&counter_app_calls())], Turn::text("Done.")).await;
    let (out, _) = build(&data, &ws(6), &mock, "a counter for my knitting rows", &["--max-fix-attempts", "1"]).await;
    assert_eq!(out.code, 1);
    let n = &notes(&data).await[0];
    assert_eq!((n["helpCount"].as_u64(), n["failCount"].as_u64()), (Some(3), Some(1)));
    assert!((n["confidence"].as_f64().unwrap() - 4.0 / 6.0).abs() < 1e-9);
    assert_eq!(n["status"], "ACTIVE");
    let failed = wright(&data, &["builds", "list", "--json"]).await.json();
    let last = &failed[0];
    assert_eq!((last["status"].as_str(), last["end_reason"].as_str()), (Some("failed"), Some("verification_failed")));
    assert!(last["report"].as_str().unwrap().contains("Still failing"), "{last}");

    // 4b. A person's 👎 on a published build that used the note counts against it as a
    // failure would, once; changed to 👍 it counts for it (docs/feedback.md).
    let liked = failed[1]["id"].as_str().unwrap().to_string();
    let out = wright(&data, &["builds", "rate", &liked, "down", "--comment", "the + button is tiny"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let said = format!("1 note used by this build lost confidence: {note_id} 0.67 → 0.57");
    assert!(out.stdout.contains(&said), "{}", out.stdout);
    let n = &notes(&data).await[0];
    assert_eq!((n["helpCount"].as_u64(), n["failCount"].as_u64()), (Some(3), Some(2)));
    assert!((n["confidence"].as_f64().unwrap() - 4.0 / 7.0).abs() < 1e-9);
    let again = wright(&data, &["builds", "rate", &liked, "down"]).await;
    assert!(again.stdout.contains("No note's confidence moved"), "{}", again.stdout);
    assert_eq!(notes(&data).await[0]["failCount"].as_u64(), Some(2), "the same rating moves them once");
    let up = wright(&data, &["builds", "rate", &liked, "up", "--json"]).await.json();
    assert_eq!(up["feedback"]["value"], 1);
    assert_eq!(up["moved"][0]["id"], note_id.as_str());
    assert!((up["moved"][0]["after"].as_f64().unwrap() - 5.0 / 8.0).abs() < 1e-9, "{up}");
    let unknown = wright(&data, &["builds", "rate", "no-such-build", "up"]).await;
    assert_ne!(unknown.code, 0, "an unknown build is an error");

    // 5. Export, then import into another database: the same notes.
    let file = dir.path().join("notes.jsonl");
    let out = wright(&data, &["notes", "export", file.to_str().unwrap()]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let other = dir.path().join("other-data");
    let out = wright(&other, &["notes", "import", file.to_str().unwrap()]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(notes(&other).await, notes(&data).await);

    // 6. Deprecated by hand, it is no longer retrieved.
    let out = wright(&data, &["notes", "deprecate", &note_id]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mock = MockLlm::start(lesson_aware_turns()).await;
    let (_, _) = build(&data, &ws(7), &mock, "a click counter", &["--max-fix-attempts", "0"]).await;
    assert!(!first_user_message(&mock.requests()[0]).contains(LESSON_TEXT));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_and_explain_work_on_a_stored_build() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let ws = dir.path().join("ws");
    let mock = MockLlm::start(vec![Turn::calls(&fixed_app_calls()), Turn::text("I made a counter app.")]).await;
    let (out, ev) = build(&data, &ws, &mock, "make a counter app with a + button", &[]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let first = ev[0]["build"].as_str().unwrap().to_string();

    // The change request carries the earlier conversation and edits the same folder.
    let blue = "button { background: blue; color: white; }\n";
    let mock = MockLlm::start(vec![
        Turn::when(
            "I made a counter app.",
            Turn::calls(&[("updateFile", json!({"path": "styles.css", "content": blue}))]),
            Turn::text("I do not know this project."),
        ),
        Turn::text("The button is blue now."),
    ])
    .await;
    let args = ["run", "make the button blue", "--continue", &first[..12], "--provider", "openai"];
    let mut args = args.to_vec();
    args.extend(["--base-url", &mock.base_url, "--model", "mock-model", "--events", "jsonl"]);
    let out = wright(&data, &args).await;
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, out.stdout);
    assert_eq!(std::fs::read_to_string(ws.join("styles.css")).unwrap(), blue);
    let req = &mock.requests()[0];
    let msgs = req["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "system");
    assert!(msgs.iter().any(|m| m["content"] == "I made a counter app."), "history carried over");
    assert!(msgs.last().unwrap()["content"].as_str().unwrap().contains("make the button blue"));
    let second = out.events()[0]["build"].as_str().unwrap().to_string();
    let show = wright(&data, &["builds", "show", &second, "--json"]).await.json();
    assert_eq!(show["build"]["parent_id"], first.as_str());
    assert_eq!(show["build"]["workspace"], ws.to_str().unwrap());
    // The change keeps the app's address: the first build's app now shows the second.
    let app_of = |events: &[serde_json::Value]| {
        events.iter().find(|e| e["type"] == "complete").map(|e| e["app"]["slug"].clone()).unwrap_or_default()
    };
    assert!(app_of(&ev).is_string(), "the first build published an app");
    assert_eq!(app_of(&out.events()), app_of(&ev));

    // Unknown builds are a clear usage error.
    let out =
        wright(&data, &["run", "x", "--continue", "nope", "--provider", "openai", "--base-url", &mock.base_url]).await;
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("wright builds list"), "{}", out.stderr);

    // `explain` reads the project and streams the model's explanation.
    let explanation = "Think of index.html as the skeleton of your page and app.js as its muscles.";
    let mock = MockLlm::start(vec![Turn::text(explanation)]).await;
    let out = wright(
        &data,
        &["explain", &first, "--provider", "openai", "--base-url", &mock.base_url, "--model", "mock-model"],
    )
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains(explanation), "{}", out.stdout);
    let asked = mock.requests()[0]["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(asked.contains("### counter.js") && asked.contains(COUNTER_FIXED.trim_end()), "{asked}");
    assert!(mock.requests()[0]["messages"][0]["content"].as_str().unwrap().contains("analogies"));
}

/// The note a countdown build finds (`tags` match the prompt's words).
fn countdown_note() -> String {
    json!({
        "id": "n-countdown",
        "trigger": "countdown timer",
        "triggerType": "pattern",
        "lesson": "A countdown stops at zero; never show negative seconds.",
        "libraries": [],
        "tags": ["countdown", "timer"],
        "errorPatterns": []
    })
    .to_string()
}

/// The countdown note as `wright notes list --json` shows it on the server's store.
async fn countdown(s: &support::server::Server) -> Value {
    let list: Value = serde_json::from_str(&s.cli(&["notes", "list", "--json"]).await).unwrap();
    list.as_array().unwrap().iter().find(|n| n["id"] == "n-countdown").cloned().expect("the countdown note")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thumbs_down_in_the_web_ui_lowers_the_confidence_of_the_notes_the_build_used() {
    use support::browser::{js, launch, shot, until};
    let page_of = |title: &str| {
        format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head><body><h1>{title}</h1></body></html>"
        )
    };
    let mock = MockLlm::start_with_fallback(
        vec![
            Turn::calls(&[("createFile", json!({"path": "index.html", "content": page_of("Countdown")}))]),
            Turn::text("A countdown page."),
            Turn::calls(&[("updateFile", json!({"path": "index.html", "content": page_of("Countdown 10")}))]),
            Turn::text("It starts at 10 now."),
        ],
        Turn::text("Done."),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let s =
        support::server::Server::start(dir.path(), &mock.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    let notes_file = dir.path().join("note.jsonl");
    std::fs::write(&notes_file, countdown_note()).unwrap();
    s.cli(&["notes", "import", notes_file.to_str().unwrap()]).await;
    let login = s.login_url.clone().expect("a first start prints a login link");

    let (mut browser, events, _profile) = launch().await;
    let page = browser.new_page(login.as_str()).await.unwrap();
    until(&page, "!document.getElementById('ask').hidden", "the prompt form").await;
    js(&page, "document.getElementById('prompt').value = 'a countdown timer page'").await;
    js(&page, "document.getElementById('template').value = 'static'").await;
    page.find_element("button#build").await.unwrap().click().await.unwrap();
    until(&page, "location.hash.startsWith('#build=')", "the build").await;
    until(&page, "document.getElementById('phase').dataset.phase === 'PUBLISHED'", "PUBLISHED").await;
    let id = js(&page, "location.hash.replace('#build=', '')").await.as_str().unwrap().to_string();
    let shown: Value = serde_json::from_str(&s.cli(&["builds", "show", &id, "--json"]).await).unwrap();
    assert_eq!(shown["notes_applied"], json!(["n-countdown"]), "the build used the note");
    // Published with the note: verification counted it as helping.
    let before = countdown(&s).await;
    assert_eq!((before["helpCount"].as_u64(), before["failCount"].as_u64()), (Some(1), Some(0)), "{before}");

    // 👎 with a comment: the note used loses confidence, and a follow-up is offered.
    until(&page, "!document.getElementById('rate').hidden", "the rating buttons").await;
    let comment = "start the countdown at 10, not 60";
    js(&page, &format!("document.getElementById('rate-comment').value = {}", json!(comment))).await;
    page.find_element("button#rate-down").await.unwrap().click().await.unwrap();
    until(&page, "!document.getElementById('rate-keep').hidden", "Keep working on it").await;
    let said = js(&page, "document.getElementById('rate-said').textContent").await;
    assert!(said.as_str().unwrap().contains("1 note(s) this build used lost confidence"), "{said}");
    assert_eq!(js(&page, "document.getElementById('rate-down').getAttribute('aria-pressed')").await, "true");
    shot(&page, "feedback.png").await;
    let after = countdown(&s).await;
    assert_eq!(after["failCount"], 1, "{after}");
    assert!(after["confidence"].as_f64().unwrap() < before["confidence"].as_f64().unwrap(), "{before} → {after}");

    // "Keep working on it": a follow-up of this build whose prompt is the comment.
    page.find_element("button#rate-keep").await.unwrap().click().await.unwrap();
    until(&page, &format!("location.hash.startsWith('#build=') && location.hash !== '#build={id}'"), "the follow-up")
        .await;
    let next = js(&page, "location.hash.replace('#build=', '')").await.as_str().unwrap().to_string();
    let shown: Value = serde_json::from_str(&s.cli(&["builds", "show", &next, "--json"]).await).unwrap();
    assert_eq!(shown["build"]["prompt"], comment, "{shown}");
    assert_eq!(shown["build"]["parent_id"], id.as_str(), "{shown}");
    until(&page, "document.getElementById('phase').dataset.phase === 'PUBLISHED'", "the follow-up published").await;

    // The dashboard counts the 👎.
    js(&page, "location.hash = '#admin'").await;
    until(&page, "!!document.querySelector('#dashboard-body table.ratings')", "the ratings table").await;
    let row = js(
        &page,
        "[...document.querySelector('#dashboard-body table.ratings tbody tr').cells].map(c => c.textContent)",
    )
    .await;
    assert_eq!(row, json!(["Builds", "", "0", "1"]), "{row}");
    shot(&page, "feedback-dashboard.png").await;
    browser.close().await.unwrap();
    let _ = browser.wait().await;
    events.abort();
}
