//! The browser check against Debian's real Chromium, confined by wright's real sandbox
//! (bubblewrap, network denied), on pages written to a real workspace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use wright_browser::{BrowserSettings, FindingKind, Launch, PageReport, PageSource, check_page, png_size};
use wright_sandbox::{Bwrap, Policy, ProcessRunner};

struct Site {
    _dir: tempfile::TempDir,
    launch: Launch,
}

fn site(files: &[(&str, &str)]) -> Site {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let scratch = dir.path().join("s");
    for d in [&ws, &scratch.join("home"), &scratch.join("tmp")] {
        std::fs::create_dir_all(d).unwrap();
    }
    for (name, body) in files {
        let p = ws.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    // The sandbox user must be able to enter the folders.
    for d in [dir.path(), &ws, &scratch, &scratch.join("home"), &scratch.join("tmp")] {
        open_up(d);
    }
    let policy = Policy { writable: vec![ws.clone(), scratch.clone()], ..Policy::default() };
    let bwrap = Bwrap::new(policy).expect("these tests need bubblewrap (cargo xtask setup installs it)");
    let env = vec![
        ("PATH".to_string(), "/usr/local/bin:/usr/bin:/bin".to_string()),
        ("HOME".to_string(), scratch.join("home").display().to_string()),
        ("TMPDIR".to_string(), scratch.join("tmp").display().to_string()),
    ];
    let launch =
        Launch { runner: Arc::new(ProcessRunner::new(Box::new(bwrap))), env, workspace: ws, scratch, confined: true };
    Site { _dir: dir, launch }
}

fn open_up(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
}

/// One Chromium at a time: five at once on two cores measure the machine, not the check.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn check(files: &[(&str, &str)]) -> PageReport {
    let _one = ONE_AT_A_TIME.lock().await;
    let s = site(files);
    let settings = BrowserSettings::default();
    check_page(&settings, &s.launch, &PageSource::Static { entry: "index.html".into() })
        .await
        .unwrap_or_else(|e| panic!("the check could not run: {e}"))
}

const HEALTHY: &str = "<!DOCTYPE html><html><head><title>Timer</title><link rel=\"stylesheet\" href=\"style.css\"></head>\
<body><h1>Countdown</h1><button id=\"go\">Start</button><p id=\"out\">10</p><script src=\"app.js\"></script></body></html>";

#[tokio::test(flavor = "multi_thread")]
async fn a_healthy_page_has_no_findings_and_a_screenshot_of_the_viewport() {
    let r = check(&[
        ("index.html", HEALTHY),
        ("style.css", "body { font-family: sans-serif; background: #fafafa; }"),
        ("app.js", "document.getElementById('go').addEventListener('click', () => {\n  document.getElementById('out').textContent = '9';\n});\n"),
    ])
    .await;
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(r.actions, 1, "the one button was clicked");
    let png = r.screenshot.expect("a screenshot");
    assert_eq!(png_size(&png), Some((1280, 800)));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_that_throws_on_load_is_found_with_its_file_and_line() {
    let r = check(&[
        ("index.html", HEALTHY.replace("app.js", "boom.js").as_str()),
        ("style.css", ""),
        ("boom.js", "const out = document.getElementById('out');\n\nout.textContent = missing.value;\n"),
    ])
    .await;
    let f = r.findings.iter().find(|f| f.kind == FindingKind::Exception).unwrap_or_else(|| panic!("{:#?}", r.findings));
    assert!(f.message.contains("missing is not defined"), "{f:?}");
    assert_eq!((f.file.as_deref(), f.line), (Some("boom.js"), Some(3)), "{f:?}");
    assert!(f.during.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_click_handler_that_throws_is_found_and_named_by_its_button() {
    let r = check(&[
        ("index.html", HEALTHY),
        ("style.css", ""),
        ("app.js", "document.getElementById('go').addEventListener('click', () => {\n  document.getElementById('nothing').textContent = 'x';\n});\n"),
    ])
    .await;
    let f = r.findings.iter().find(|f| f.kind == FindingKind::Exception).unwrap_or_else(|| panic!("{:#?}", r.findings));
    assert_eq!(f.during.as_deref(), Some("clicking the button \"Start\""), "{f:?}");
    assert_eq!((f.file.as_deref(), f.line), (Some("app.js"), Some(2)), "{f:?}");
}

/// The classic countdown bug: the first tick, a second after Start, throws.
#[tokio::test(flavor = "multi_thread")]
async fn an_error_in_a_timer_started_by_a_click_is_waited_for_and_named_by_its_button() {
    let r = check(&[
        ("index.html", HEALTHY),
        ("style.css", ""),
        (
            "app.js",
            "let left = 10;\ndocument.getElementById('go').addEventListener('click', () => {\n  setInterval(() => {\n    left -= 1;\n    document.getElementById('remaining').textContent = left;\n  }, 1000);\n});\n",
        ),
    ])
    .await;
    let f = r.findings.iter().find(|f| f.kind == FindingKind::Exception).unwrap_or_else(|| panic!("{:#?}", r.findings));
    assert_eq!(f.during.as_deref(), Some("clicking the button \"Start\""), "{f:?}");
    assert_eq!((f.file.as_deref(), f.line), (Some("app.js"), Some(5)), "{f:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_to_other_origins_are_blocked_and_reported_and_missing_files_too() {
    let page = "<!DOCTYPE html><html><head><title>x</title>\
<script src=\"https://cdn.example.com/lib.js\"></script></head><body><h1>Hi</h1>\
<img src=\"missing.png\" alt=\"\"><script>fetch('data.json').then(r => r.json()).catch(e => console.error('no data: ' + e.message));</script></body></html>";
    let r = check(&[("index.html", page)]).await;
    let blocked: Vec<_> = r.findings.iter().filter(|f| f.kind == FindingKind::BlockedRequest).collect();
    assert_eq!(blocked.len(), 1, "{:#?}", r.findings);
    assert!(blocked[0].message.contains("https://cdn.example.com/lib.js"), "{blocked:?}");
    let failed: Vec<_> =
        r.findings.iter().filter(|f| f.kind == FindingKind::FailedRequest).map(|f| f.file.clone()).collect();
    assert!(
        failed.contains(&Some("missing.png".into())) && failed.contains(&Some("data.json".into())),
        "{:#?}",
        r.findings
    );
    assert!(
        r.findings.iter().any(|f| f.kind == FindingKind::ConsoleError && f.message.starts_with("no data")),
        "{:#?}",
        r.findings
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_that_renders_nothing_is_blank() {
    let r = check(&[(
        "index.html",
        "<!DOCTYPE html><html><head><title>x</title></head><body><div id=\"app\"></div></body></html>",
    )])
    .await;
    assert_eq!(
        r.findings.iter().map(|f| f.kind).collect::<Vec<_>>(),
        vec![FindingKind::BlankPage],
        "{:#?}",
        r.findings
    );
}

/// Allocates without end, from load on: big arrays pushed on every tick, in V8's heap (plain
/// arrays) and outside it (typed arrays, which no heap limit bounds), about 1 GB a second.
const EATS_MEMORY: &str = "<!DOCTYPE html><html><head><title>Eater</title></head><body><h1>Eater</h1><script>\n\
const keep = [];\n\
function eat() {\n\
  keep.push(new Array(1e6).fill(Math.random()));\n\
  for (let i = 0; i < 4; i++) keep.push(new Float64Array(1 << 22).fill(Math.random()));\n\
  setTimeout(eat, 0);\n\
}\n\
eat();\n</script></body></html>";

#[tokio::test(flavor = "multi_thread")]
async fn a_page_that_eats_memory_is_stopped_and_fails_with_the_reason() {
    let _one = ONE_AT_A_TIME.lock().await;
    let s = site(&[("index.html", EATS_MEMORY)]);
    let settings = BrowserSettings { memory_limit: 768 << 20, ..BrowserSettings::default() };
    let started = std::time::Instant::now();
    let r = check_page(&settings, &s.launch, &PageSource::Static { entry: "index.html".into() })
        .await
        .unwrap_or_else(|e| panic!("the check must end with a finding, not an error: {e}"));
    let took = started.elapsed();
    assert_eq!(r.findings.len(), 1, "{:#?}", r.findings);
    let f = &r.findings[0];
    assert_eq!(f.kind, FindingKind::OutOfMemory, "{f:?}");
    assert!(f.message.starts_with("the page used too much memory"), "{}", f.message);
    assert!(f.message.contains("over its limit of 768 MiB"), "{}", f.message);
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
    eprintln!("stopped after {took:?}: {}", f.message);
}
