//! The browser check wherever wright runs: data folders of any length (spaces and non-ASCII
//! included), as root and as an ordinary user, and an honest `complete` when the check cannot
//! run. The real `wright` binary, a scripted model on the real OpenAI wire, Debian's Chromium
//! in wright's real sandbox.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::print_stdout, clippy::print_stderr)] // test code: what was measured or skipped goes to the test log

mod support;

use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use support::{HOST_ENV, MockLlm, Run, Turn, assert_contract, key_for};

const PAGE: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Counter</title></head>\n\
<body>\n  <h1>Counter</h1>\n  <p id=\"count\">0</p>\n  <button id=\"plus\">+</button>\n  <script src=\"app.js\"></script>\n</body>\n</html>\n";
/// Throws on load: the button is `#plus`, not `#plus-button` (the field report's crash).
const CRASHES: &str = "const count = document.getElementById('count');\n\
document.getElementById('plus-button').addEventListener('click', () => { count.textContent = String(Number(count.textContent) + 1); });\n";
const FIXED: &str = "const count = document.getElementById('count');\n\
document.getElementById('plus').addEventListener('click', () => { count.textContent = String(Number(count.textContent) + 1); });\n";

/// One build at a time: each starts Chromium (twice), and four at once on two cores measure
/// the machine, not the check (a check has 30 s).
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A model that writes the crashing counter, then fixes it when told.
async fn counter_model() -> MockLlm {
    MockLlm::start_with_fallback(
        vec![
            Turn::calls(&[
                ("createFile", json!({"path": "index.html", "content": PAGE})),
                ("createFile", json!({"path": "app.js", "content": CRASHES})),
            ]),
            Turn::text("A counter app."),
            Turn::calls(&[("updateFile", json!({"path": "app.js", "content": FIXED}))]),
            Turn::text("Fixed the button's id."),
        ],
        // LEARNING's note, and anything after.
        Turn::text(
            &json!({"trigger": "button id", "triggerType": "pattern", "lesson": "Look elements up by the ids the page defines.",
                    "libraries": [], "tags": ["dom"], "errorPatterns": ["Cannot read properties of null"]})
            .to_string(),
        ),
    )
    .await
}

/// A folder path of exactly `len` bytes under `base`, ending in `wright`; `fancy` puts spaces
/// and non-ASCII in it.
fn data_dir_of(base: &Path, len: usize, fancy: bool) -> PathBuf {
    // A folder name of exactly `bytes` bytes.
    let name = |bytes: usize| {
        let mut s = String::new();
        for c in (if fancy { "dados é ✓ " } else { "d" }).chars().cycle() {
            if s.len() + c.len_utf8() > bytes {
                break;
            }
            s.push(c);
        }
        while s.len() < bytes {
            s.push('x');
        }
        s
    };
    let mut p = base.to_path_buf();
    let mut tail = String::from("wright");
    let here = p.as_os_str().len() + 1 + tail.len();
    assert!(here <= len, "the base {} is too long for a {len}-byte data folder", base.display());
    let mut pad = len - here;
    while pad > 0 {
        match pad {
            1 => {
                tail.push('w');
                pad = 0;
            }
            2..=60 => {
                p.push(name(pad - 1));
                pad = 0;
            }
            _ => {
                p.push(name(39));
                pad -= 40;
            }
        }
    }
    p.push(tail);
    assert_eq!(p.as_os_str().len(), len, "{}", p.display());
    p
}

/// Who runs wright: root, or an ordinary user (`nobody` unless `WRIGHT_TEST_USER` names
/// another), whose uid and gid.
fn ordinary_user() -> (u32, u32) {
    let name = std::env::var("WRIGHT_TEST_USER").unwrap_or_else(|_| "nobody".into());
    let id = |flag: &str| {
        let out = std::process::Command::new("id").arg(flag).arg(&name).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse::<u32>().unwrap()
    };
    (id("-u"), id("-g"))
}

fn running_as_root() -> bool {
    wright_sandbox::running_as_root()
}

/// Make `dir` and its ancestors below `top` usable by `uid`.
fn hand_to(top: &Path, dir: &Path, uid: u32, gid: u32) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::set_permissions(top, std::fs::Permissions::from_mode(0o755)).unwrap();
    for d in dir.ancestors().take_while(|d| d.starts_with(top)) {
        std::os::unix::fs::chown(d, Some(uid), Some(gid)).unwrap();
    }
}

/// `wright run` of the counter with its data in `data`, as `user` (uid, gid) when given.
/// The binary is copied next to the data first, so an ordinary user can run it wherever the
/// checkout is (a clone under /root is closed to others).
async fn run_counter(top: &Path, data: &Path, user: Option<(u32, u32)>, mock: &MockLlm, extra: &[&str]) -> Run {
    run_build(top, data, user, mock, ("Make a counter app with a + button", "static"), extra).await
}

/// `wright run` of `(prompt, template)` with its data in `data`, as `user` when given (see
/// [`run_counter`]).
async fn run_build(
    top: &Path,
    data: &Path,
    user: Option<(u32, u32)>,
    mock: &MockLlm,
    (prompt, template): (&str, &str),
    extra: &[&str],
) -> Run {
    let ws = top.join("ws");
    let exe = top.join("bin").join("wright");
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    if !exe.exists() {
        std::fs::copy(env!("CARGO_BIN_EXE_wright"), &exe).unwrap();
    }
    std::fs::create_dir_all(top.join("home").join("student")).unwrap();
    let mut cmd = match user {
        Some((uid, gid)) => {
            hand_to(top, data, uid, gid);
            hand_to(top, &top.join("home").join("student"), uid, gid);
            let mut c = tokio::process::Command::new("setpriv");
            c.args([format!("--reuid={uid}"), format!("--regid={gid}"), "--clear-groups".into()]).arg(&exe);
            c
        }
        None => tokio::process::Command::new(&exe),
    };
    cmd.arg("run").arg(prompt);
    cmd.args(["--provider", "openai", "--base-url", &mock.base_url, "--model", "mock-model", "--template", template]);
    cmd.arg("--workspace").arg(&ws).args(["--events", "jsonl"]).args(extra);
    // The data folder comes the way a user's does: from HOME when it is the default, else
    // from WRIGHT_DATA_DIR (no flag).
    let default_data = top.join("home").join("student").join(".local").join("share").join("wright");
    for k in HOST_ENV {
        cmd.env_remove(k);
    }
    cmd.env_remove("XDG_DATA_HOME").env("HOME", top.join("home").join("student"));
    if data != default_data {
        cmd.env("WRIGHT_DATA_DIR", data);
    }
    let (k, v) = key_for("openai").unwrap();
    cmd.env(k, v).current_dir(top);
    let out = cmd.output().await.unwrap();
    let dir = tempfile::tempdir().unwrap(); // the Run's own folder; the caller keeps `top`
    Run::from_output(out, true, dir)
}

/// The crash is caught in the browser, fixed and the page published as checked.
fn assert_caught_and_fixed(run: &Run, what: &str) {
    assert_eq!(run.code, 0, "{what}: stderr: {}\nevents: {:#?}", run.stderr, run.events);
    assert_contract(run);
    let checks = run.of_type("browser_check");
    assert!(checks.iter().all(|c| c["outcome"] == "checked"), "{what}: {checks:#?}");
    assert_eq!(checks.len(), 2, "{what}: one check per verification: {checks:#?}");
    let runtime: Vec<&Value> = run.of_type("error_detected").into_iter().filter(|e| e["kind"] == "runtime").collect();
    assert_eq!(runtime.len(), 1, "{what}: {runtime:#?}");
    assert_eq!(runtime[0]["file"], "app.js", "{what}");
    assert!(runtime[0]["error"].as_str().unwrap().contains("null"), "{what}: {}", runtime[0]);
    let complete = run.of_type("complete")[0];
    assert_eq!((complete["success"].as_bool(), complete["fix_attempts"].as_u64()), (Some(true), Some(1)), "{what}");
    assert_eq!(complete["browser_checked"], true, "{what}: {complete}");
    assert!(complete.get("browser_reason").is_none(), "{what}: {complete}");
}

/// Data folders of 26, 27 (where Chromium's own socket used to stop fitting), 60 and 200
/// bytes, the last with spaces and non-ASCII, as whoever runs the tests (root in CI).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_crashes_on_load_is_caught_whatever_the_data_folders_length() {
    let _one = ONE_AT_A_TIME.lock().await;
    for (len, fancy) in [(26, false), (27, false), (60, false), (200, true)] {
        let top = tempfile::Builder::new().prefix("w").tempdir_in("/tmp").unwrap();
        let data = data_dir_of(top.path(), len, fancy);
        std::fs::create_dir_all(&data).unwrap();
        let mock = counter_model().await;
        let run = run_counter(top.path(), &data, None, &mock, &[]).await;
        assert_caught_and_fixed(&run, &format!("data folder of {len} bytes ({})", data.display()));
    }
}

/// An ordinary user with the default data folder under a home of the usual shape
/// (`…/home/student/.local/share/wright`), and with folders of 26, 27, 60 and 200 bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ordinary_user_with_a_long_data_folder_gets_the_browser_check() {
    let _one = ONE_AT_A_TIME.lock().await;
    if !running_as_root() {
        eprintln!("skipped: making a folder for another user needs root (run as root to try an ordinary user)");
        return;
    }
    let user = ordinary_user();
    // `/tmp/wXXXXXX/home/student/.local/share/wright`: longer than root's 25 bytes.
    let top = tempfile::Builder::new().prefix("w").tempdir_in("/tmp").unwrap();
    let data = top.path().join("home").join("student").join(".local").join("share").join("wright");
    assert!(data.as_os_str().len() > 27, "{}", data.display());
    let mock = counter_model().await;
    let run = run_counter(top.path(), &data, Some(user), &mock, &[]).await;
    assert_caught_and_fixed(&run, &format!("uid {} with {}", user.0, data.display()));

    for (len, fancy) in [(26, false), (27, false), (60, false), (200, true)] {
        let top = tempfile::Builder::new().prefix("w").tempdir_in("/tmp").unwrap();
        let data = data_dir_of(top.path(), len, fancy);
        let mock = counter_model().await;
        let run = run_counter(top.path(), &data, Some(user), &mock, &[]).await;
        assert_caught_and_fixed(&run, &format!("uid {} with {len} bytes: {}", user.0, data.display()));
    }
}

/// A "Chromium" that exits at once: the check is tried twice, then `complete`, the last
/// narration and the report say the page was not opened, and why. With `--browser-check on`
/// the same is a failed verification.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_that_cannot_start_is_reported_never_passed_off_as_checked() {
    let _one = ONE_AT_A_TIME.lock().await;
    let top = tempfile::Builder::new().prefix("w").tempdir_in("/tmp").unwrap();
    let broken = top.path().join("chromium");
    // A program, not a script (a launcher script is resolved to the real Chromium behind it).
    std::fs::copy("/bin/false", &broken).unwrap();
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = top.path().join("data");
    let chromium = broken.display().to_string();

    // auto: published, but not as checked in a browser.
    let mock = MockLlm::start_with_fallback(
        vec![Turn::calls(&[
            ("createFile", json!({"path": "index.html", "content": PAGE})),
            ("createFile", json!({"path": "app.js", "content": FIXED})),
        ])],
        Turn::text("Done."),
    )
    .await;
    let run = run_counter(top.path(), &data, None, &mock, &["--chromium", &chromium]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_contract(&run);
    let checks = run.of_type("browser_check");
    assert_eq!(checks.len(), 1, "{checks:#?}");
    assert_eq!(checks[0]["outcome"], "failed");
    let reason = checks[0]["reason"].as_str().unwrap();
    assert!(reason.contains("could not start"), "{reason}");
    let complete = run.of_type("complete")[0];
    assert_eq!(complete["success"], true);
    assert_eq!(complete["browser_checked"], false, "{complete}");
    assert_eq!(complete["browser_reason"].as_str(), Some(reason), "{complete}");
    let last_phase = run.of_type("phase").last().unwrap()["message"].as_str().unwrap().to_string();
    assert!(last_phase.contains("not opened in a browser"), "{last_phase}");
    let build = complete["build"].as_str().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args(["builds", "show", build, "--json", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    let report = record["build"]["report"].as_str().unwrap();
    assert!(report.contains("## In the browser\nThe page was not opened in a browser: "), "{report}");

    // on: the same is a failed verification, and the build ends FAILED.
    let mock = MockLlm::start_with_fallback(
        vec![Turn::calls(&[
            ("createFile", json!({"path": "index.html", "content": PAGE})),
            ("createFile", json!({"path": "app.js", "content": FIXED})),
        ])],
        Turn::text("Nothing to change in the code."),
    )
    .await;
    let extra = ["--chromium", &chromium, "--browser-check", "on", "--max-fix-attempts", "1"];
    let run = run_counter(top.path(), &data, None, &mock, &extra).await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_contract(&run);
    let detected = run.of_type("error_detected");
    assert!(detected.iter().any(|e| e["kind"] == "browser_unavailable"), "{detected:#?}");
    let complete = run.of_type("complete")[0];
    assert_eq!((complete["success"].as_bool(), complete["browser_checked"].as_bool()), (Some(false), Some(false)));
}

/// `wright doctor` tries the check in the configured data folder, the way builds run it: it
/// works in a 200-byte one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_tries_the_browser_in_the_data_folder_builds_use() {
    let _one = ONE_AT_A_TIME.lock().await;
    let top = tempfile::Builder::new().prefix("w").tempdir_in("/tmp").unwrap();
    let data = data_dir_of(top.path(), 200, true);
    std::fs::create_dir_all(&data).unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    for k in HOST_ENV {
        cmd.env_remove(k);
    }
    let out = cmd.args(["doctor", "--json"]).env("WRIGHT_DATA_DIR", &data).output().unwrap();
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let line = v["browser"].as_str().unwrap();
    assert!(line.starts_with("works"), "{line}");
    // Its trial folders are gone afterwards.
    let left: Vec<_> = std::fs::read_dir(data.join("tmp")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A page whose script allocates without end once it has loaded (big arrays pushed forever),
/// and the same page fixed.
const EATS_MEMORY: &str = "const keep = [];\n\
setTimeout(() => { for (;;) keep.push(new Float64Array(1 << 22).fill(Math.random())); }, 0);\n";

/// A full-stack app whose quote script "warms a cache" without end when the page asks for it
/// (the page waits for it, as pages do for their scripts); `/` answers at once, so the server
/// check passes and only the page's request sets it off. Fixed, it serves the script's file.
fn quotes_server(eats: bool) -> String {
    let api = if eats {
        "if (req.url === '/quote.js') { for (;;) cache.push(new Float64Array(1 << 22).fill(Math.random())); }\n  "
    } else {
        ""
    };
    format!(
        "const http = require('node:http');\nconst fs = require('node:fs');\nconst path = require('node:path');\nconst cache = [];\n\
const server = http.createServer((req, res) => {{\n  {api}\
const name = {{ '/': 'index.html', '/quote.js': 'quote.js' }}[req.url];\n  \
if (!name) {{ res.writeHead(404); return res.end('Not found'); }}\n  res.writeHead(200);\n  \
res.end(fs.readFileSync(path.join(__dirname, '..', 'client', name)));\n}});\n\
if (require.main === module) server.listen(process.env.PORT || 3000);\nmodule.exports = {{ server }};\n"
    )
}

const QUOTES_PACKAGE: &str = r#"{ "name": "quotes", "version": "1.0.0", "scripts": { "start": "node server/server.js", "test": "node --test" } }"#;
const QUOTES_HTML: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Quotes</title></head>\n\
<body>\n<h1>Quote of the day</h1>\n<p id=\"quote\">Loading…</p>\n<script src=\"quote.js\"></script>\n</body>\n</html>\n";
const QUOTES_JS: &str = "document.getElementById('quote').textContent = 'Keep going!';\n";
const QUOTES_TEST: &str = "const test = require('node:test');\nconst assert = require('node:assert');\n\
const { server } = require('../server/server.js');\n\
test('GET / answers', async () => {\n  await new Promise((done) => server.listen(0, done));\n  \
try { const res = await fetch(`http://127.0.0.1:${server.address().port}/`); assert.strictEqual(res.status, 200); }\n  \
finally { server.close(); }\n});\n";

/// A model whose first version eats memory (the page's script, or the full-stack app's
/// server), and which bounds it when told.
async fn eating_model(fullstack: bool) -> MockLlm {
    let (first, fix) = if fullstack {
        (
            Turn::calls(&[
                ("createFile", json!({"path": "package.json", "content": QUOTES_PACKAGE})),
                ("createFile", json!({"path": "server/server.js", "content": quotes_server(true)})),
                ("createFile", json!({"path": "tests/server.test.js", "content": QUOTES_TEST})),
                ("createFile", json!({"path": "client/index.html", "content": QUOTES_HTML})),
                ("createFile", json!({"path": "client/quote.js", "content": QUOTES_JS})),
            ]),
            Turn::calls(&[("updateFile", json!({"path": "server/server.js", "content": quotes_server(false)}))]),
        )
    } else {
        (
            Turn::calls(&[
                ("createFile", json!({"path": "index.html", "content": PAGE})),
                ("createFile", json!({"path": "app.js", "content": EATS_MEMORY})),
            ]),
            Turn::calls(&[("updateFile", json!({"path": "app.js", "content": FIXED}))]),
        )
    };
    MockLlm::start_with_fallback(
        vec![first, Turn::text("Done."), fix, Turn::text("Bounded it.")],
        Turn::text(
            &json!({"trigger": "memory", "triggerType": "pattern", "lesson": "Bound what grows.",
                    "libraries": [], "tags": ["memory"], "errorPatterns": ["used too much memory"]})
            .to_string(),
        ),
    )
    .await
}

/// The first check was stopped for its memory and said who used it; the fix passed.
fn assert_stopped_for_memory(run: &Run, who: &str, what: &str) {
    assert_eq!(run.code, 0, "{what}: stderr: {}\nevents: {:#?}", run.stderr, run.events);
    assert_contract(run);
    let checks = run.of_type("browser_check");
    assert_eq!(checks.len(), 2, "{what}: {checks:#?}");
    assert_eq!(checks[0]["outcome"], "failed", "{what}: {checks:#?}");
    let reason = checks[0]["reason"].as_str().unwrap();
    assert!(reason.starts_with(&format!("{who} used too much memory")), "{what}: {reason}");
    let took = checks[0]["duration_ms"].as_u64().unwrap();
    assert!(took > 0 && took < 30_000, "{what}: the check took {took} ms");
    assert_eq!(checks[1]["outcome"], "checked", "{what}: {checks:#?}");
    let detected: Vec<&Value> = run.of_type("error_detected");
    assert_eq!(detected.len(), 1, "{what}: {detected:#?}");
    assert_eq!(detected[0]["kind"], "out_of_memory", "{what}: {detected:#?}");
    let complete = run.of_type("complete")[0];
    assert_eq!((complete["success"].as_bool(), complete["fix_attempts"].as_u64()), (Some(true), Some(1)), "{what}");
    assert_eq!(complete["browser_checked"], true, "{what}: {complete}");
    eprintln!("{what}: stopped after {took} ms: {reason}");
}

/// The data folder of the issue's ordinary user: a home under `top`, a long folder name.
fn long_data_folder(top: &Path) -> PathBuf {
    top.join("nobody-home/.local/share/wright-data-folder-with-a-rather-long-name-for-users/wright")
}

/// A page that allocates without end, and a full-stack server that does: the check is stopped
/// at its memory limit with a reason naming who used it, for root and an ordinary user alike.
async fn memory_is_bounded(fullstack: bool, who: &str) {
    let _one = ONE_AT_A_TIME.lock().await;
    let (prompt, template) =
        if fullstack { ("A quote of the day with an API", "fullstack") } else { ("Make a counter app", "static") };
    let mut users = vec![None];
    if running_as_root() {
        users.push(Some(ordinary_user()));
    } else {
        eprintln!("only as this user: making a folder for another user needs root");
    }
    for user in users {
        let top = tempfile::Builder::new().prefix("w").tempdir_in("/tmp").unwrap();
        let data = long_data_folder(top.path());
        if let Some((uid, gid)) = user {
            hand_to(top.path(), &data, uid, gid);
        }
        std::fs::create_dir_all(&data).unwrap();
        let mock = eating_model(fullstack).await;
        let run = run_build(top.path(), &data, user, &mock, (prompt, template), &[]).await;
        let me = || {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata("/proc/self").unwrap().uid()
        };
        let what = format!("{template} as uid {}", user.map_or_else(me, |u| u.0));
        assert_stopped_for_memory(&run, who, &what);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_allocates_without_end_fails_the_check_saying_so() {
    memory_is_bounded(false, "the page").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fullstack_server_that_allocates_without_end_is_stopped_too() {
    memory_is_bounded(true, "the app's server").await;
}
