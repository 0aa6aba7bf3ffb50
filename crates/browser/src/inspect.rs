//! The DevTools side of a check: listen, load, look, click, photograph.

use crate::host::Host;
use crate::{BrowserError, BrowserSettings, Finding, FindingKind, PageReport};
use chromiumoxide::Page;
use chromiumoxide::browser::Browser;
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams as FetchEnable, EventRequestPaused, FailRequestParams, RequestPattern,
};
use chromiumoxide::cdp::browser_protocol::network::{
    ErrorReason, EventLoadingFailed, EventRequestWillBeSent, EventResponseReceived,
};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use chromiumoxide::cdp::js_protocol::runtime::{
    ConsoleApiCalledType, EventConsoleApiCalled, EventExceptionThrown, RemoteObject, StackTrace,
};
use chromiumoxide::page::ScreenshotParams;
use futures::StreamExt;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// How long errors get to show after load (start-up timers, promise callbacks, late scripts).
const SETTLE: Duration = Duration::from_millis(250);
/// And after each action: a handler's own errors arrive at once; timers it starts are waited
/// for by [`settle`].
const ACTION_SETTLE: Duration = Duration::from_millis(100);
/// How long a full-stack app gets to start answering.
const APP_STARTUP: Duration = Duration::from_secs(10);

/// Findings gathered by the listeners, each tagged with the action under way.
#[derive(Default)]
struct Collector {
    findings: Vec<Finding>,
    seen: HashSet<String>,
    /// Each action and when it ran, so an error is named by when the page threw it rather
    /// than by when its event was read (a loaded machine reads events late).
    actions: Vec<Action>,
    blocked: HashSet<String>,
}

/// One click or submission, from just before it was sent until its timers had fired.
struct Action {
    what: String,
    from: f64,
    to: Option<f64>,
}

impl Collector {
    /// The action under way now.
    fn current(&self) -> Option<String> {
        self.actions.last().filter(|a| a.to.is_none()).map(|a| a.what.clone())
    }

    /// The action under way at `at` (milliseconds since the epoch, the browser's clock).
    /// A time far from ours is not trusted, and the action under way now is used instead.
    fn at(&self, at: f64) -> Option<String> {
        if (at - now_ms()).abs() > 60_000.0 {
            return self.current();
        }
        self.actions.iter().rev().find(|a| a.from <= at && a.to.is_none_or(|to| at <= to)).map(|a| a.what.clone())
    }
}

/// Milliseconds since the epoch, as DevTools stamps its events.
fn now_ms() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0)
}

type Shared = Arc<Mutex<Collector>>;

fn with<R>(c: &Shared, f: impl FnOnce(&mut Collector) -> R) -> R {
    let mut g = match c.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    f(&mut g)
}

/// Record a finding that happened just now.
fn push(c: &Shared, f: Finding) {
    push_during(c, f, |c| c.current())
}

/// Record a finding the browser stamped with the time it happened.
fn push_at(c: &Shared, f: Finding, at: f64) {
    push_during(c, f, |c| c.at(at))
}

fn push_during(c: &Shared, mut f: Finding, during: impl FnOnce(&Collector) -> Option<String>) {
    with(c, |c| {
        f.during = during(c);
        let key = format!("{:?}|{}|{}|{:?}", f.kind, f.message, f.location(), f.during);
        if c.seen.insert(key) && c.findings.len() < 50 {
            c.findings.push(f);
        }
    })
}

/// `http://127.0.0.1:PORT/js/app.js?v=1` → `js/app.js` when it is the page's own.
fn own_file(origin: &str, url: &str) -> Option<String> {
    let rest = url.strip_prefix(origin)?.strip_prefix('/')?;
    let path = rest.split(['?', '#']).next().unwrap_or(rest);
    Some(if path.is_empty() { "index.html".to_string() } else { path.to_string() })
}

/// The first frame of `stack` in one of the page's own files, as (file, line, column), 1-based.
fn place(origin: &str, stack: Option<&StackTrace>, url: Option<&str>, line: i64, col: i64) -> Location {
    if let Some(st) = stack {
        for fr in &st.call_frames {
            if let Some(file) = own_file(origin, &fr.url) {
                return (Some(file), Some(one_based(fr.line_number)), Some(one_based(fr.column_number)));
            }
        }
    }
    match url.and_then(|u| own_file(origin, u)) {
        Some(file) => (Some(file), Some(one_based(line)), Some(one_based(col))),
        None => (None, None, None),
    }
}

type Location = (Option<String>, Option<u32>, Option<u32>);

fn one_based(n: i64) -> u32 {
    u32::try_from(n.max(0) + 1).unwrap_or(u32::MAX)
}

fn text_of(o: &RemoteObject) -> String {
    match (&o.value, &o.description) {
        (Some(serde_json::Value::String(s)), _) => s.clone(),
        (Some(v), _) => v.to_string(),
        (None, Some(d)) => d.clone(),
        _ => String::new(),
    }
}

fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("").trim();
    l.chars().take(300).collect()
}

fn protocol(e: impl std::fmt::Display) -> BrowserError {
    BrowserError::Protocol(e.to_string())
}

/// A request for one of the page's own files that did not succeed.
fn failed_request(file: String, message: String) -> Finding {
    Finding { kind: FindingKind::FailedRequest, message, file: Some(file), line: None, column: None, during: None }
}

/// Spawn one listener task per DevTools event the check cares about.
async fn listen(
    page: &Page,
    c: &Shared,
    origin: &str,
    outside: Option<&crate::OutsideAccess>,
) -> Result<Vec<JoinHandle<()>>, BrowserError> {
    let mut tasks = Vec::new();
    let origin = origin.to_string();

    let mut exceptions = page.event_listener::<EventExceptionThrown>().await.map_err(protocol)?;
    let (c1, o1) = (c.clone(), origin.clone());
    tasks.push(tokio::spawn(async move {
        while let Some(e) = exceptions.next().await {
            let d = &e.exception_details;
            let described = d.exception.as_ref().map(text_of).unwrap_or_default();
            let message = if described.is_empty() { first_line(&d.text) } else { first_line(&described) };
            let kind =
                if d.text.contains("(in promise)") { FindingKind::UnhandledRejection } else { FindingKind::Exception };
            let (file, line, column) =
                place(&o1, d.stack_trace.as_ref(), d.url.as_deref(), d.line_number, d.column_number);
            push_at(&c1, Finding { kind, message, file, line, column, during: None }, *e.timestamp.inner());
        }
    }));

    let mut console = page.event_listener::<EventConsoleApiCalled>().await.map_err(protocol)?;
    let (c2, o2) = (c.clone(), origin.clone());
    tasks.push(tokio::spawn(async move {
        while let Some(e) = console.next().await {
            if !matches!(e.r#type, ConsoleApiCalledType::Error | ConsoleApiCalledType::Assert) {
                continue;
            }
            let message = first_line(&e.args.iter().map(text_of).collect::<Vec<_>>().join(" "));
            let (file, line, column) = place(&o2, e.stack_trace.as_ref(), None, 0, 0);
            let f = Finding { kind: FindingKind::ConsoleError, message, file, line, column, during: None };
            push_at(&c2, f, *e.timestamp.inner());
        }
    }));

    // Requests: remember URLs by id, report the page's own that fail.
    let urls: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let mut sent = page.event_listener::<EventRequestWillBeSent>().await.map_err(protocol)?;
    let u1 = urls.clone();
    tasks.push(tokio::spawn(async move {
        while let Some(e) = sent.next().await {
            if let Ok(mut m) = u1.lock() {
                m.insert(e.request_id.inner().clone(), e.request.url.clone());
            }
        }
    }));
    let mut responses = page.event_listener::<EventResponseReceived>().await.map_err(protocol)?;
    let (c3, o3) = (c.clone(), origin.clone());
    tasks.push(tokio::spawn(async move {
        while let Some(e) = responses.next().await {
            let r = &e.response;
            let Some(file) = own_file(&o3, &r.url) else { continue };
            // Chromium asks for the icon by itself; a page that never named one is not broken.
            if r.status >= 400 && file != "favicon.ico" {
                let message = format!("GET /{file} answered {} {}", r.status, r.status_text).trim_end().to_string();
                push(&c3, failed_request(file, message));
            }
        }
    }));
    let mut failures = page.event_listener::<EventLoadingFailed>().await.map_err(protocol)?;
    let (c4, o4, u2) = (c.clone(), origin.clone(), urls.clone());
    tasks.push(tokio::spawn(async move {
        while let Some(e) = failures.next().await {
            if e.canceled == Some(true) {
                continue;
            }
            let url = u2.lock().ok().and_then(|m| m.get(e.request_id.inner()).cloned()).unwrap_or_default();
            if with(&c4, |c| c.blocked.contains(&url)) {
                continue;
            }
            if let Some(file) = own_file(&o4, &url) {
                let message = format!("GET /{file} failed: {}", e.error_text);
                push(&c4, failed_request(file, message));
            }
        }
    }));

    // Every request pauses here: the page's own go on, anything else is refused and reported.
    let mut paused = page.event_listener::<EventRequestPaused>().await.map_err(protocol)?;
    let (c5, o5, p5) = (c.clone(), origin.clone(), page.clone());
    let outside = outside.and_then(crate::outside::Outside::new).map(Arc::new);
    tasks.push(tokio::spawn(async move {
        while let Some(e) = paused.next().await {
            let url = e.request.url.clone();
            let own = url == o5 || url.starts_with(&format!("{o5}/"));
            let inline = ["data:", "blob:", "about:"].iter().any(|s| url.starts_with(s));
            if own || inline {
                let _ = p5.execute(ContinueRequestParams::new(e.request_id.clone())).await;
                continue;
            }
            // An allowed outside host: asked through the proxy, on its own task so a slow
            // answer holds up nothing else.
            if let Some(out) = outside.as_ref().filter(|o| o.allows(&url)) {
                let (out, page) = (out.clone(), p5.clone());
                tokio::spawn(async move { out.fulfil(&page, &e).await });
                continue;
            }
            with(&c5, |c| c.blocked.insert(url.clone()));
            let shown: String = url.chars().take(200).collect();
            push(
                &c5,
                Finding {
                    kind: FindingKind::BlockedRequest,
                    message: format!(
                        "{} {shown} was blocked: the page may use only its own files and the outside hosts this build allows (no CDNs, fonts or APIs on other origins)",
                        e.request.method
                    ),
                    file: None,
                    line: None,
                    column: None,
                    during: None,
                },
            );
            let _ = p5.execute(FailRequestParams::new(e.request_id.clone(), ErrorReason::BlockedByClient)).await;
        }
    }));

    // alert(), confirm() and prompt() would stop the page; they are answered at once.
    let mut dialogs = page.event_listener::<EventJavascriptDialogOpening>().await.map_err(protocol)?;
    let p6 = page.clone();
    tasks.push(tokio::spawn(async move {
        while dialogs.next().await.is_some() {
            let _ = p6.execute(HandleJavaScriptDialogParams::new(true)).await;
        }
    }));

    page.execute(FetchEnable::builder().pattern(RequestPattern::builder().url_pattern("*").build()).build())
        .await
        .map_err(protocol)?;
    Ok(tasks)
}

const BLANK_JS: &str = r#"(() => {
  const b = document.body;
  if (!b) return true;
  if ((b.innerText || '').trim().length > 0) return false;
  const shown = (e) => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none' && s.opacity !== '0'; };
  return !Array.from(b.querySelectorAll('img,svg,canvas,video,iframe,input,button,select,textarea,object,embed'))
    .some(shown) && !Array.from(b.querySelectorAll('*')).some((e) => shown(e) && getComputedStyle(e).backgroundImage !== 'none');
})()"#;

/// Runs before the page's own scripts: remembers each short timer until its callback first
/// runs, so the check waits for a countdown's first tick (a common place for errors) and no
/// longer. A timer is waited for until it has really fired, not until it was due: a loaded
/// machine runs timers late. The page's callback is called from a thin wrapper, so the page's
/// own frame still tops every stack.
const TIMERS_JS: &str = r#"(() => {
  const due = new Map(), token = new Map();
  let next = 0;
  const [st, si, ct, ci] = [window.setTimeout, window.setInterval, window.clearTimeout, window.clearInterval];
  const track = (orig, a) => {
    const ms = Number(a[1]) || 0, f = a[0];
    if (typeof f !== 'function' || ms > 1500) return orig.apply(window, a);
    const t = ++next;
    let id;
    a[0] = function (...x) { due.delete(t); if (orig === st) token.delete(id); return f.apply(this, x); };
    due.set(t, performance.now() + ms);
    id = orig.apply(window, a);
    token.set(id, t);
    return id;
  };
  const drop = (orig, id) => { due.delete(token.get(id)); token.delete(id); return orig.call(window, id); };
  window.setTimeout = function (...a) { return track(st, a); };
  window.setInterval = function (...a) { return track(si, a); };
  window.clearTimeout = function (id) { return drop(ct, id); };
  window.clearInterval = function (id) { return drop(ci, id); };
  Object.defineProperty(window, '__wrightTimerWait', { value: (upTo) => {
    const now = performance.now(), last = upTo || next; let w = 0;
    for (const [t, at] of due) if (t <= last) w = Math.max(w, at > now ? at - now : 20);
    return [Math.ceil(w), last];
  } });
})()"#;

/// What [`TAG_JS`] marked: a button to click, or a form to fill and submit. Anything else the
/// page's script returns (the page may have changed the tagging script's globals) is a button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Target {
    Form,
    #[serde(other)]
    Button,
}

/// Marks each visible button (outside forms' submit buttons) and each form with an index and
/// returns `[kind, label]` pairs.
const TAG_JS: &str = r#"(() => {
  const shown = (e) => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none' && !e.disabled; };
  document.querySelectorAll('[data-wright-action]').forEach((e) => e.removeAttribute('data-wright-action'));
  const out = [];
  const mark = (e, kind, label) => { e.setAttribute('data-wright-action', String(out.length)); out.push([kind, label.trim().replace(/\s+/g, ' ').slice(0, 40)]); };
  document.querySelectorAll('button, input[type=button], input[type=reset], [role=button]').forEach((b) => {
    const submits = b.form && (b.type === 'submit');
    if (shown(b) && !submits) mark(b, 'button', b.innerText || b.value || b.getAttribute('aria-label') || b.id || '');
  });
  document.querySelectorAll('form').forEach((f) => mark(f, 'form', f.id || f.getAttribute('name') || f.getAttribute('aria-label') || ''));
  return out;
})()"#;

/// Fills what a form requires with plausible values, then submits it the way a person would.
const SUBMIT_JS: &str = r#"((i) => {
  const f = document.querySelector(`[data-wright-action="${i}"]`);
  if (!f) return false;
  const sample = { email: 'ada@example.com', number: '3', url: 'http://127.0.0.1/', tel: '5551234', date: '2026-01-02',
    time: '10:30', 'datetime-local': '2026-01-02T10:30', month: '2026-01', week: '2026-W02', color: '#336699', range: '' };
  f.querySelectorAll('input, textarea, select').forEach((e) => {
    if (e.tagName === 'SELECT') { if (!e.value && e.options.length) e.selectedIndex = e.options.length - 1; return; }
    if (e.type === 'checkbox' || e.type === 'radio') { if (e.required) e.checked = true; return; }
    if (['hidden', 'submit', 'button', 'reset', 'file', 'image'].includes(e.type)) return;
    if (!e.value) e.value = sample[e.type] ?? 'test';
    e.dispatchEvent(new Event('input', { bubbles: true }));
  });
  if (f.requestSubmit) f.requestSubmit(); else f.submit();
  return true;
})"#;

pub(crate) async fn inspect(host: &Host, settings: &BrowserSettings) -> Result<PageReport, BrowserError> {
    let (mut browser, mut handler) = Browser::connect(host.ws_url.clone()).await.map_err(protocol)?;
    let driver = tokio::spawn(async move {
        while let Some(r) = handler.next().await {
            if let Err(e) = r {
                tracing::debug!("DevTools: {e}");
            }
        }
    });
    let result = run(&browser, host, settings).await;
    let _ = tokio::time::timeout(Duration::from_secs(2), browser.close()).await;
    driver.abort();
    result
}

async fn run(browser: &Browser, host: &Host, settings: &BrowserSettings) -> Result<PageReport, BrowserError> {
    let deadline = Instant::now() + settings.time_limit.mul_f32(0.7);
    let page = browser.new_page("about:blank").await.map_err(protocol)?;
    page.execute(SetDeviceMetricsOverrideParams::new(settings.width, settings.height, 1.0, false))
        .await
        .map_err(protocol)?;
    let c: Shared = Arc::default();
    let tasks = listen(&page, &c, &host.origin, settings.outside.as_ref()).await?;
    page.evaluate_on_new_document(TIMERS_JS).await.map_err(protocol)?;
    let outcome = drive(&page, &c, host, settings, deadline).await;
    for t in tasks {
        t.abort();
    }
    let (actions, screenshot) = outcome?;
    let findings = with(&c, |c| std::mem::take(&mut c.findings));
    Ok(PageReport { findings, screenshot: Some(screenshot), actions, elapsed: Duration::ZERO })
}

/// Load until the app answers (a full-stack app may still be starting).
async fn load(page: &Page, url: &str) -> Result<(), BrowserError> {
    let until = Instant::now() + APP_STARTUP;
    loop {
        match page.goto(url).await {
            Ok(_) => return Ok(()),
            Err(e) if e.to_string().contains("ERR_CONNECTION_REFUSED") && Instant::now() < until => {
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            Err(e) => return Err(BrowserError::Load(e.to_string())),
        }
    }
}

/// Most time one check spends waiting for timers to fire, in all.
const TIMER_BUDGET: Duration = Duration::from_millis(2000);

/// Wait `base`, then until the short timers the page set have fired once (within `budget`).
/// The page is asked again after each wait, as a timer due now may run late; timers set after
/// the first asking (a clock that sets its next tick) are not waited for.
async fn settle(page: &Page, base: Duration, budget: &mut Duration) {
    tokio::time::sleep(base).await;
    let mut last = 0u64;
    while !budget.is_zero() {
        let ask = format!("window.__wrightTimerWait ? window.__wrightTimerWait({last}) : [0, 0]");
        let (ms, upto): (u64, u64) = match page.evaluate(ask).await {
            Ok(r) => r.into_value().unwrap_or((0, 0)),
            Err(_) => (0, 0),
        };
        if ms == 0 {
            return;
        }
        last = upto;
        let wait = Duration::from_millis(ms + 30).min(*budget);
        *budget = budget.saturating_sub(wait);
        tokio::time::sleep(wait).await;
    }
}

async fn drive(
    page: &Page,
    c: &Shared,
    host: &Host,
    settings: &BrowserSettings,
    deadline: Instant,
) -> Result<(u32, Vec<u8>), BrowserError> {
    load(page, &host.page_url).await?;
    let mut budget = TIMER_BUDGET;
    settle(page, SETTLE, &mut budget).await;
    let blank: bool = page.evaluate(BLANK_JS).await.map_err(protocol)?.into_value().unwrap_or(false);
    if blank {
        push(
            c,
            Finding {
                kind: FindingKind::BlankPage,
                message: "nothing is visible in the page's body after it loaded (no text, images or controls)".into(),
                file: own_file(&host.origin, &host.page_url),
                line: None,
                column: None,
                during: None,
            },
        );
    }
    let mut actions = 0u32;
    let mut targets: Vec<(Target, String)> =
        page.evaluate(TAG_JS).await.map_err(protocol)?.into_value().unwrap_or_default();
    let mut i = 0usize;
    while i < targets.len() && actions < settings.max_actions && Instant::now() < deadline {
        let (kind, label) = targets[i].clone();
        let what = match (kind, label.is_empty()) {
            (Target::Form, true) => "submitting a form".to_string(),
            (Target::Form, false) => format!("submitting the form \"{label}\""),
            (_, true) => "clicking a button".to_string(),
            _ => format!("clicking the button \"{label}\""),
        };
        with(c, |c| c.actions.push(Action { what, from: now_ms(), to: None }));
        let selector = format!("[data-wright-action=\"{i}\"]");
        if kind == Target::Form {
            let _ = page.evaluate(format!("{SUBMIT_JS}({i})")).await;
        } else if let Ok(el) = page.find_element(selector.clone()).await {
            if el.click().await.is_err() {
                let _ = page.evaluate(format!("document.querySelector('{selector}')?.click()")).await;
            }
        }
        actions += 1;
        settle(page, ACTION_SETTLE, &mut budget).await;
        with(c, |c| {
            if let Some(a) = c.actions.last_mut() {
                a.to = Some(now_ms());
            }
        });
        // A submission or a link may have replaced the page: load it again and go on.
        let still: bool = page
            .evaluate("!!document.querySelector('[data-wright-action]')")
            .await
            .ok()
            .and_then(|r| r.into_value().ok())
            .unwrap_or(false);
        if !still {
            load(page, &host.page_url).await?;
            settle(page, SETTLE, &mut budget).await;
            targets = page.evaluate(TAG_JS).await.map_err(protocol)?.into_value().unwrap_or_default();
        }
        i += 1;
    }
    let png = page
        .screenshot(ScreenshotParams::builder().format(CaptureScreenshotFormat::Png).build())
        .await
        .map_err(protocol)?;
    Ok((actions, png))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_files_are_named_relative_to_the_project() {
        let o = "http://127.0.0.1:4000";
        assert_eq!(own_file(o, "http://127.0.0.1:4000/js/app.js?v=2").as_deref(), Some("js/app.js"));
        assert_eq!(own_file(o, "http://127.0.0.1:4000/").as_deref(), Some("index.html"));
        assert_eq!(own_file(o, "http://127.0.0.1:40001/x.js"), None);
        assert_eq!(own_file(o, "https://cdn.example.com/x.js"), None);
    }

    #[test]
    fn an_error_is_named_by_the_action_under_way_when_it_was_thrown_not_when_it_was_read() {
        let now = now_ms();
        let mut c = Collector::default();
        c.actions.push(Action {
            what: "clicking the button \"Start\"".into(),
            from: now - 3000.0,
            to: Some(now - 1000.0),
        });
        c.actions.push(Action { what: "clicking the button \"Reset\"".into(), from: now - 500.0, to: None });
        assert_eq!(c.at(now - 1500.0).as_deref(), Some("clicking the button \"Start\""));
        assert_eq!(c.at(now - 800.0), None, "between actions");
        assert_eq!(c.at(now - 100.0).as_deref(), Some("clicking the button \"Reset\""));
        assert_eq!(c.at(now - 4000.0), None, "before any action");
        // A clock that cannot be ours is not believed: the action under way now is used.
        assert_eq!(c.at(0.0).as_deref(), Some("clicking the button \"Reset\""));
    }

    #[test]
    fn lines_and_columns_become_one_based() {
        assert_eq!(one_based(0), 1);
        assert_eq!(one_based(-1), 1);
        assert_eq!(one_based(41), 42);
    }
}
