//! Helpers for the browser tests (`webui`, `chat_ui`): Debian's Chromium, headless, driven over
//! DevTools by chromiumoxide; page evaluation and waiting; screenshots to
//! `target/tmp/ui-screenshots/`.

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::page::ScreenshotParams;
use futures::StreamExt;
use serde_json::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Where the screenshots go.
pub fn shots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ui-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub async fn js(page: &chromiumoxide::Page, expr: &str) -> Value {
    page.evaluate(expr).await.unwrap_or_else(|e| panic!("{expr}: {e}")).into_value().unwrap_or(Value::Null)
}

/// Wait until `expr` is true in the page (a scripted build takes seconds, not minutes).
pub async fn until(page: &chromiumoxide::Page, expr: &str, what: &str) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if js(page, expr).await == Value::Bool(true) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let text = js(page, "document.body.innerText").await;
    panic!("waited 60 s for {what}; the page says: {text}");
}

pub async fn shot(page: &chromiumoxide::Page, name: &str) {
    let png = page.screenshot(ScreenshotParams::builder().full_page(true).build()).await.unwrap();
    std::fs::write(shots().join(name), png).unwrap();
}

/// Debian's Chromium, headless, with a profile of its own; the task that drives its events.
pub async fn launch() -> (Browser, tokio::task::JoinHandle<()>, tempfile::TempDir) {
    let path = std::env::var("PATH").unwrap_or_default();
    let chromium = wright_browser::find_chromium(None, &[("PATH".into(), path)])
        .expect("the UI tests need Debian's chromium (cargo xtask setup installs it)");
    let profile = tempfile::tempdir().unwrap();
    let config = BrowserConfig::builder()
        .chrome_executable(chromium)
        .no_sandbox()
        .new_headless_mode()
        .window_size(1280, 1000)
        .viewport(None)
        .user_data_dir(profile.path())
        .build()
        .unwrap();
    let (browser, mut handler) = Browser::launch(config).await.unwrap();
    let events = tokio::spawn(async move { while handler.next().await.is_some() {} });
    (browser, events, profile)
}
