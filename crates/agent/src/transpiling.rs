//! The TRANSPILING phase of templates with a build step: the project wright sets up before the
//! model writes (its packages installed from the cache), and before each verification the
//! type-check and bundle whose errors go to FIXING like failing tests.

use crate::prompts::{self, Lang, Narration};
use crate::verify::{BrowserStatus, Failure, Verification};
use std::time::Duration;
use wright_events::{EventKind, Level};
use wright_tools::ToolContext;
use wright_transpile::Diagnostic;

/// Most errors handed on per pass: the first ones matter, later ones often follow from them.
const MAX_ERRORS: usize = 10;

/// Write the template's project and install its packages, saying so. Failures are narrated
/// and left for TRANSPILING to report: the model cannot fix a missing package cache.
pub(crate) async fn prepare(ctx: &ToolContext, lang: Lang) -> Vec<String> {
    ctx.emitter.status(Level::Info, prompts::narrate(lang, Narration::Preparing));
    let written = match wright_transpile::scaffold::write(&ctx.workspace) {
        Ok(w) => w,
        Err(e) => {
            ctx.emitter.status(Level::Warning, format!("The React project could not be set up: {e}"));
            return Vec::new();
        }
    };
    for path in &written {
        let bytes = ctx.workspace.meta(path).map_or(0, |m| m.len);
        ctx.emitter.emit(EventKind::FileWritten { path: path.clone(), bytes, created: true });
    }
    if let Err(e) = wright_tools::install_declared(ctx).await {
        ctx.emitter.status(Level::Warning, format!("The React packages could not be installed: {e}"));
    }
    written
}

/// One TRANSPILING pass. `None` when the page was bundled (VERIFYING follows); otherwise the
/// round's failures, already announced as `error_detected`.
pub(crate) async fn transpile(ctx: &ToolContext, limit: Duration, iteration: u32) -> Option<Verification> {
    let t = wright_transpile::transpile(ctx, limit).await;
    tracing::debug!(
        ms = t.duration.as_millis() as u64,
        installed = t.installed,
        errors = t.diagnostics.len(),
        "transpiled"
    );
    if t.ok() {
        return None;
    }
    let failures: Vec<Failure> = t.diagnostics.iter().take(MAX_ERRORS).map(|d| failure(ctx, d)).collect();
    crate::verify::announce(ctx, &failures, iteration);
    let why = match t.diagnostics.len() {
        1 => "the app does not compile (1 error)".to_string(),
        n => format!("the app does not compile ({n} errors)"),
    };
    Some(Verification { failures, browser: BrowserStatus::NotRun(why) })
}

/// A diagnostic as a failure, with the offending source line for the model.
fn failure(ctx: &ToolContext, d: &Diagnostic) -> Failure {
    let mut detail = d.render();
    if let Some(text) = (!d.file.is_empty()).then(|| ctx.workspace.read(&d.file).ok()).flatten() {
        let text = String::from_utf8_lossy(&text);
        if let Some(src) = text.lines().nth(d.line.saturating_sub(1) as usize) {
            let col = d.column.saturating_sub(1) as usize;
            detail.push_str(&format!("\n  {:>4} | {}\n       | {}^", d.line, src, " ".repeat(col.min(200))));
        }
    }
    let (file, line, column) =
        if d.file.is_empty() { (None, None, None) } else { (Some(d.file.clone()), Some(d.line), Some(d.column)) };
    Failure { file, line, column, ..Failure::new(d.kind.into(), d.render(), detail) }
}
