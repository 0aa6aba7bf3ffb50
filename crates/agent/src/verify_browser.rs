//! VERIFYING's browser check: open the page as a visitor would and turn what breaks into
//! `runtime` failures the fix loop sees like failing tests.

use crate::entry::server_entry;
use crate::prompts::Template;
use crate::verdict::{BrowserStatus, Failure, FailureKind};
use wright_browser::{
    BrowserError, BrowserMode, BrowserSettings, Finding, FindingKind, Launch, PageReport, PageSource,
};
use wright_events::{BrowserOutcome, EventKind, Level};
use wright_tools::ToolContext;

/// Most findings handed to the fix loop per round (the rest are counted in `browser_check`).
const MAX_FAILURES: usize = 8;

/// Where the browser check keeps the page's screenshot: the run's artifacts (the engine's),
/// which any server sharing them reads back, whatever path it mounts them at.
pub trait Screenshots: Send + Sync + std::fmt::Debug {
    /// Keep `png` as the build's screenshot, replacing the last one; where it is now.
    fn keep(&self, png: &[u8]) -> Result<String, String>;
    /// Where the kept screenshot is, if one was kept.
    fn kept(&self) -> Option<String>;
}

/// How the browser check runs in a build.
pub struct BrowserCheck<'a> {
    pub settings: &'a BrowserSettings,
    /// Where the screenshot goes; none is kept when `None`.
    pub screenshot: Option<&'a dyn Screenshots>,
}

/// Load the page (for full-stack, the app's server) and report what breaks, and whether the
/// page was opened at all. A check that fails to start is tried once more. In `auto` mode a
/// check that cannot run is said in a `browser_check` event and on `complete`, and never
/// fails the build (the model cannot install a browser); with `--browser-check on` it is a
/// failed verification. (`on` without a Chromium is refused before the build starts.)
pub(crate) async fn check_in_browser(
    ctx: &ToolContext,
    template: Template,
    entry: &str,
    check: &BrowserCheck<'_>,
    iteration: u32,
) -> (Vec<Failure>, BrowserStatus) {
    if check.settings.mode == BrowserMode::Off {
        return (Vec::new(), BrowserStatus::Off);
    }
    let source = if template == Template::Fullstack {
        match server_entry(ctx) {
            Some(entry) => PageSource::Server { entry, path: "/".into() },
            // The server check already said so, and failed the round.
            None => return (Vec::new(), BrowserStatus::NotRun("the app has no server file to start".into())),
        }
    } else {
        PageSource::Static { entry: entry.to_string() }
    };
    let skipped = |outcome: BrowserOutcome, reason: &str| {
        ctx.emitter.emit(EventKind::BrowserCheck {
            iteration,
            outcome,
            reason: Some(reason.to_string()),
            console_errors: 0,
            exceptions: 0,
            failed_requests: 0,
            blocked_requests: 0,
            blank: false,
            actions: 0,
            screenshot: None,
            duration_ms: 0,
        });
    };
    if let Err(e) = wright_browser::find_chromium(check.settings.chromium.as_deref(), &ctx.exec.env) {
        // Said once per build, not on every round.
        if iteration == 0 {
            skipped(BrowserOutcome::Skipped, &e.to_string());
        }
        return (Vec::new(), BrowserStatus::NotRun(e.to_string()));
    }
    let mut tries = 0;
    let report = loop {
        tries += 1;
        let report = match scratch_dir(ctx) {
            Ok(scratch) => {
                let launch = Launch {
                    runner: ctx.runner.clone(),
                    env: ctx.exec.env.clone(),
                    workspace: ctx.workspace.root().to_path_buf(),
                    scratch: scratch.path().to_path_buf(),
                    confined: ctx.runner.confines(),
                };
                tokio::select! {
                    r = wright_browser::check_page(check.settings, &launch, &source) => r,
                    _ = ctx.cancel.cancelled() => return (Vec::new(), BrowserStatus::NotRun("the build was stopped".into())),
                }
            }
            Err(e) => Err(BrowserError::Start(format!("no scratch folder for the browser: {e}"))),
        };
        match report {
            // A browser that did not come up may have lost a race for the machine; once more.
            Err(BrowserError::Start(why)) if tries == 1 => {
                tracing::warn!("the browser check did not start ({why}); trying once more");
            }
            other => break other,
        }
    };
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            let reason = e.to_string();
            ctx.emitter.status(Level::Warning, format!("The browser check could not run: {reason}"));
            skipped(BrowserOutcome::Failed, &reason);
            let failures = if check.settings.mode == BrowserMode::On { vec![unavailable(&reason)] } else { Vec::new() };
            return (failures, BrowserStatus::NotRun(reason));
        }
    };
    let shot = check.screenshot.zip(report.screenshot.as_deref()).and_then(|(keeper, png)| match keeper.keep(png) {
        Ok(at) => Some(at),
        Err(e) => {
            ctx.emitter.status(Level::Warning, format!("The screenshot could not be saved: {e}"));
            None
        }
    });
    emit_report(ctx, iteration, &report, shot);
    (report.findings.iter().take(MAX_FAILURES).map(failure).collect(), BrowserStatus::Checked)
}

/// `--browser-check on` and the browser would not run: the verification fails, saying so.
fn unavailable(reason: &str) -> Failure {
    Failure::new(
        FailureKind::BrowserUnavailable,
        wright_tools::clip(&format!("the page could not be opened in a browser: {reason}"), 300),
        format!(
            "The browser check is required (--browser-check on) but could not run: {reason}\n\
             This is a problem of the machine, not of the project's code; change nothing for it.\n"
        ),
    )
}

fn emit_report(ctx: &ToolContext, iteration: u32, r: &PageReport, screenshot: Option<String>) {
    let n = |k: FindingKind| u32::try_from(r.count(k)).unwrap_or(u32::MAX);
    // A check the watchdog stopped did not finish: `failed`, with who used the memory.
    let stopped = r.findings.iter().find(|f| f.kind == FindingKind::OutOfMemory).map(|f| f.message.clone());
    ctx.emitter.emit(EventKind::BrowserCheck {
        iteration,
        outcome: if stopped.is_some() { BrowserOutcome::Failed } else { BrowserOutcome::Checked },
        reason: stopped,
        console_errors: n(FindingKind::ConsoleError),
        exceptions: n(FindingKind::Exception) + n(FindingKind::UnhandledRejection),
        failed_requests: n(FindingKind::FailedRequest),
        blocked_requests: n(FindingKind::BlockedRequest),
        blank: r.count(FindingKind::BlankPage) > 0,
        actions: r.actions,
        screenshot,
        duration_ms: u64::try_from(r.elapsed.as_millis()).unwrap_or(u64::MAX),
    });
}

/// A finding as the fix loop reads it: what, where, and what usually causes it.
fn failure(f: &Finding) -> Failure {
    let hint = match f.kind {
        FindingKind::BlockedRequest => {
            "The page runs with no network beyond its own files: write the code or data into the project \
             instead of loading it from another site."
        }
        FindingKind::BlankPage => {
            "Nothing shows: check that the body has content, or that the script that renders it runs \
             without errors and targets elements that exist."
        }
        FindingKind::FailedRequest => "The page asks for a file or route the project does not provide.",
        FindingKind::Exception | FindingKind::UnhandledRejection | FindingKind::ConsoleError => {
            "This happens in the browser when the page is opened (or on the action named), not in the tests."
        }
        FindingKind::OutOfMemory => {
            "Something keeps allocating memory without end while the page is open: a loop or timer that keeps \
             adding to an array or the page, a cache that never forgets, a recursion with no end, or a server \
             route that builds an answer without bound. Find it and bound it."
        }
    };
    let line = f.describe();
    let kind = if f.kind == FindingKind::OutOfMemory { FailureKind::OutOfMemory } else { FailureKind::Runtime };
    Failure {
        file: f.file.clone(),
        line: f.line,
        column: f.column,
        ..Failure::new(kind, wright_tools::clip(&line, 300), format!("In the browser, {line}\n{hint}\n"))
            .with_output(f.message.clone())
    }
}

/// A folder inside the build's TMPDIR (writable in the sandbox) for Chromium's profile and
/// the DevTools socket; removed when dropped.
fn scratch_dir(ctx: &ToolContext) -> std::io::Result<tempfile::TempDir> {
    let tmp = ctx
        .exec
        .env
        .iter()
        .find(|(k, _)| k == "TMPDIR")
        .map(|(_, v)| std::path::PathBuf::from(v))
        .unwrap_or_else(std::env::temp_dir);
    wright_browser::check_folder(&tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_becomes_a_located_runtime_failure() {
        let f = Finding {
            kind: FindingKind::Exception,
            message: "ReferenceError: missing is not defined".into(),
            file: Some("app.js".into()),
            line: Some(3),
            column: Some(18),
            during: None,
        };
        let fail = failure(&f);
        assert_eq!(fail.kind.as_str(), "runtime");
        assert_eq!((fail.file.as_deref(), fail.line, fail.column), (Some("app.js"), Some(3), Some(18)));
        assert!(fail.detail.contains("uncaught exception at app.js:3:18: ReferenceError"), "{}", fail.detail);
    }

    #[test]
    fn a_page_stopped_for_its_memory_is_a_failure_of_its_own_kind() {
        let f = Finding {
            kind: FindingKind::OutOfMemory,
            message: "the page used too much memory: the check's processes held 1600 MiB together".into(),
            file: None,
            line: None,
            column: None,
            during: None,
        };
        let fail = failure(&f);
        assert_eq!(fail.kind.as_str(), "out_of_memory");
        assert_eq!(fail.title(), "Too much memory");
        assert!(fail.summary.starts_with("too much memory: the page used too much memory"), "{}", fail.summary);
    }
}
