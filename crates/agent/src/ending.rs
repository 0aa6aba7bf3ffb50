//! How a build ends: its security warnings narrated, its report written, and its records
//! made final before `complete` is emitted.

use crate::prompts::{Lang, Template};
use crate::run::{BuildEnd, BuildRequest, Progress};
use crate::scan::{Finding, ScanReport};
use std::time::Duration;
use wright_events::{Emitter, EndReason, Level};
use wright_store::{Attempt, AttemptError, BuildFinish, Finished, RunEnd, RunStatus, Store};

/// At most this many findings become events; the report lists them all.
const MAX_FINDING_EVENTS: usize = 20;

/// One `status` warning per finding (the contract's event, so every reader shows them).
pub(crate) fn narrate_findings(emitter: &wright_events::Emitter, findings: &[Finding], lang: Lang) {
    for f in findings.iter().take(MAX_FINDING_EVENTS) {
        emitter.status(Level::Warning, f.narration(lang));
    }
    let more = findings.len().saturating_sub(MAX_FINDING_EVENTS);
    if more > 0 {
        emitter.status(
            Level::Warning,
            match lang {
                Lang::En => format!("…and {more} more security warning(s); the build report lists them all."),
                Lang::Pt => format!("…e mais {more} aviso(s) de segurança; o relatório da construção lista todos."),
            },
        );
    }
}

/// The report's `## Security warnings` section; empty when no web code was scanned.
pub(crate) fn security_section(scan: &ScanReport) -> String {
    if scan.files_scanned == 0 {
        return String::new();
    }
    let mut r = String::from("\n## Security warnings\n");
    if scan.findings.is_empty() {
        r.push_str(&format!("None found in {} file(s) of web code.\n", scan.files_scanned));
        return r;
    }
    r.push_str(&format!(
        "{} risky pattern(s) in {} file(s) of web code; warnings only, they do not fail the build.\n",
        scan.findings.len(),
        scan.files_scanned
    ));
    for f in &scan.findings {
        r.push_str(&format!(
            "- {}:{} [{}, {}] {}\n  `{}`\n",
            f.file,
            f.line,
            f.rule.id(),
            f.severity().as_str(),
            f.message(Lang::En),
            f.snippet.replace('`', "'")
        ));
    }
    r
}

/// Everything known once a build has ended, for its report and its records.
pub(crate) struct Ending<'a> {
    pub(crate) req: &'a BuildRequest,
    pub(crate) template: Template,
    pub(crate) build_id: &'a str,
    pub(crate) end: &'a BuildEnd,
    pub(crate) p: &'a Progress,
    pub(crate) files: &'a [String],
    pub(crate) duration: Duration,
}

impl Ending<'_> {
    /// Note outcomes and the attempt, then end the run: its record and `complete` together.
    /// True when this call ended it (the store took its ending).
    pub(crate) async fn record(
        &self,
        store: &dyn Store,
        log: Option<&wright_store::LogWriter>,
        emitter: &Emitter,
        holder: Option<&str>,
        run_end: RunEnd,
    ) -> bool {
        let Ending { req, template, build_id, end, p, duration, .. } = *self;
        let applied: Vec<String> = p.applied.iter().map(|n| n.id.clone()).collect();
        // Only verdicts about the project count for a note; a cancel or an outage says nothing of it.
        let helped = match end {
            BuildEnd::Published => Some(true),
            BuildEnd::VerificationFailed | BuildEnd::TimedOut(_) => Some(false),
            _ => None,
        };
        if let (Some(helped), false) = (helped, applied.is_empty()) {
            if let Err(e) = store.record_note_outcome(&applied, helped).await {
                tracing::warn!(build = %build_id, "note outcomes not stored: {e}");
            }
        }
        let tokens = crate::journal::tokens(p.stats.usage, p.stats.cost_usd);
        let attempt = Attempt {
            id: wright_store::new_id("a"),
            build_id: build_id.to_string(),
            template,
            success: *end == BuildEnd::Published,
            iterations: p.fix_attempts,
            duration_ms: duration.as_millis() as u64,
            notes_applied: applied,
            errors: p.errors.clone(),
            model: req.model.clone(),
            tokens,
            created_at: wright_store::now(),
        };
        if let Err(e) = store.record_attempt(&attempt).await {
            tracing::warn!(build = %build_id, "attempt not stored: {e}");
        }
        let ended = match log {
            Some(log) => log.finish(run_end).await,
            None => {
                let complete = run_end.complete.clone();
                // Nothing persists this build's events: the store gets its end, the sinks `complete`.
                let ended = store.finish(build_id, holder, run_end).await;
                emitter.emit(complete);
                ended
            }
        };
        match ended {
            Ok(Finished::Now(_)) => return true,
            Ok(Finished::Already { .. }) => tracing::warn!(build = %build_id, "the build had ended already"),
            Err(wright_store::StoreError::NotHolder(_)) => {
                tracing::warn!(build = %build_id, "build not ended: another worker holds it now")
            }
            Err(e) => tracing::warn!(build = %build_id, "build end not stored: {e}"),
        }
        false
    }

    /// The build's final record, with `report`.
    pub(crate) fn finish(&self, report: &str) -> BuildFinish {
        let Ending { end, p, files, duration, .. } = *self;
        BuildFinish {
            status: if *end == BuildEnd::Published { RunStatus::Published } else { RunStatus::Failed },
            end_reason: end.reason(),
            fix_attempts: p.fix_attempts,
            turns: p.stats.turns,
            tokens: crate::journal::tokens(p.stats.usage, p.stats.cost_usd),
            duration_ms: duration.as_millis() as u64,
            files: files.to_vec(),
            report: Some(report.to_string()),
            finished_at: wright_store::now(),
        }
    }

    /// The build's story in Markdown: what was asked, what happened, where the files are.
    pub(crate) fn report(&self, root: &std::path::Path) -> String {
        let Ending { req, template, build_id, end, p, files, .. } = *self;
        let outcome = match end {
            BuildEnd::Published => "PUBLISHED (verification passed)".to_string(),
            other => format!("FAILED ({})", other.reason().map_or("unknown", EndReason::as_str).replace('_', " ")),
        };
        let mut r = format!(
            "# Build {build_id}\n\nRequest: {}\nTemplate: {}\nModel: {}\nOutcome: {outcome}\nFix attempts: {}\nModel calls: {}, tokens in/out: {}/{}, cost: ${:.4}\n\n## What happened\n",
            req.prompt.trim(),
            template.as_str(),
            req.model,
            p.fix_attempts,
            p.stats.turns,
            p.stats.usage.input_tokens,
            p.stats.usage.output_tokens,
            p.stats.cost_usd
        );
        for line in &p.log {
            r.push_str(&format!("- {line}\n"));
        }
        let unfixed: Vec<&AttemptError> = p.errors.iter().filter(|e| !e.fixed).collect();
        if !unfixed.is_empty() && *end != BuildEnd::Published {
            r.push_str("\n## Still failing\n");
            let last = unfixed.iter().map(|e| e.iteration).max().unwrap_or(0);
            for e in unfixed.iter().filter(|e| e.iteration == last) {
                r.push_str(&format!("- {} ({})\n", e.error, e.kind));
            }
        }
        r.push_str(&security_section(&p.security));
        // Written only by this build's browser checks (the path carries its id).
        if let crate::verdict::BrowserStatus::NotRun(why) = &p.browser {
            r.push_str(&format!("\n## In the browser\nThe page was not opened in a browser: {why}.\n"));
        } else if let Some(shot) = req.screenshot.as_ref().and_then(|s| s.kept()) {
            r.push_str(&format!("\n## In the browser\nScreenshot of the page as last checked: {shot}\n"));
        }
        if !p.applied.is_empty() {
            r.push_str("\n## Lessons used\n");
            for n in &p.applied {
                r.push_str(&format!("- {} {}\n", n.id, wright_memory::lesson_line(n)));
            }
        }
        r.push_str(&format!("\n## Files ({} in {})\n", files.len(), root.display()));
        for f in files.iter().take(100) {
            r.push_str(&format!("- {f}\n"));
        }
        if *end != BuildEnd::Published {
            r.push_str(&format!(
                "\n## Next steps\n- The files are kept; open them or keep working on them with `wright run --continue {build_id} \"describe what to change\"`.\n- Every step is stored: `wright builds events {build_id}`.\n"
            ));
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_security_section_says_when_nothing_was_found() {
        assert_eq!(security_section(&ScanReport::default()), "");
        let none = ScanReport { files_scanned: 3, findings: Vec::new() };
        assert_eq!(security_section(&none), "\n## Security warnings\nNone found in 3 file(s) of web code.\n");
        let some = ScanReport {
            files_scanned: 1,
            findings: crate::scan::scan_text("app.js", "x.innerHTML = `${a}`; // `b`\n"),
        };
        assert!(security_section(&some).ends_with("[possible-injection, low] possible injection: innerHTML is set from values that are not fixed text; if one of them comes from a user or the network it can run scripts. Use textContent, or escape the values first.\n  `x.innerHTML = '${a}'; // 'b'`\n"), "{}", security_section(&some));
    }
}
