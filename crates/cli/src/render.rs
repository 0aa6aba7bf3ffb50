//! Showing a build: `jsonl` (one event per line, for scripts) or `human` (plain-words
//! narration for beginners, with a spinner while the model thinks).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;
use wright_agent::Lang;
use wright_events::words::{Said, say, word};
use wright_events::{Event, EventKind, EventSink, Level, Phase, TaskStatus};

/// Writes each event as one JSON line on stdout. A closed stdout is ignored, never a crash.
pub struct JsonlSink;

impl EventSink for JsonlSink {
    fn accept(&self, event: &Event) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", event.to_json_line());
        let _ = out.flush();
    }
}

/// Narrates a build for a person.
pub struct HumanSink {
    lang: Lang,
    max_fix_attempts: u32,
    verbose: bool,
    state: Mutex<HumanState>,
}

struct HumanState {
    spinner: Option<ProgressBar>,
    usage: (u64, u64, u64, f64),
    last_output_line: String,
}

impl HumanSink {
    pub fn new(lang: Lang, max_fix_attempts: u32, verbose: bool, spinner: bool) -> Self {
        let spinner = spinner.then(|| {
            let pb = ProgressBar::new_spinner();
            pb.set_style(
                ProgressStyle::with_template("{spinner} {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            pb.enable_steady_tick(Duration::from_millis(120));
            pb
        });
        Self {
            lang,
            max_fix_attempts,
            verbose,
            state: Mutex::new(HumanState { spinner, usage: (0, 0, 0, 0.0), last_output_line: String::new() }),
        }
    }

    /// A word of the narration, from the shared tables (`crates/events/words/*.json`).
    fn t(&self, key: &'static str) -> &'static str {
        word(self.lang, key)
    }

    /// The line(s) to print for an event, and what the spinner should say next.
    fn describe(&self, e: &Event, st: &mut HumanState) -> (Vec<String>, Option<String>) {
        let thinking = || Some(self.t("narrate.the_ai_is_thinking").to_string());
        match &e.kind {
            EventKind::Phase { phase, iteration, message } => match phase {
                Phase::Planning => (vec![format!("📋 {message}")], None),
                Phase::Generating => (vec![format!("✍️  {}", self.t("narrate.writing_the_code"))], thinking()),
                Phase::Transpiling => (
                    vec![format!("🧱 {}", self.t("narrate.building_the_page_and_checking_the"))],
                    Some(self.t("narrate.transpiling").to_string()),
                ),
                Phase::Verifying => (
                    vec![format!("🔎 {}", self.t("narrate.checking_that_everything_works"))],
                    Some(self.t("narrate.running_checks").to_string()),
                ),
                Phase::Fixing => (
                    vec![format!(
                        "🔧 {} ({}/{})…",
                        self.t("narrate.fixing_what_went_wrong"),
                        iteration,
                        self.max_fix_attempts
                    )],
                    thinking(),
                ),
                Phase::Learning => (vec![format!("🧠 {message}")], None),
                // The ending says what was made (a starter's app is said to be one).
                Phase::Published => (vec![format!("✅ {} {message}", self.t("narrate.done"))], None),
                Phase::Failed => (vec![format!("❌ {message}")], None),
            },
            EventKind::Status { message, level } => {
                let icon = match level {
                    Level::Info => "💬",
                    Level::Success => "🎉",
                    Level::Warning => "⚠️ ",
                    Level::Error => "❗",
                };
                (vec![format!("{icon} {message}")], None)
            }
            EventKind::ToolCall { .. } => (vec![], None),
            EventKind::ToolResult { name, ok, summary, .. } => {
                if *ok || matches!(name.as_str(), "runTests" | "runCommand") {
                    (vec![], thinking())
                } else {
                    (vec![format!("   ↳ {name} {}: {summary}", self.t("narrate.did_not_work"))], thinking())
                }
            }
            EventKind::FileWritten { path, bytes, created } => {
                let verb = if *created { self.t("narrate.wrote") } else { self.t("narrate.updated") };
                (vec![format!("   📄 {verb} {path} ({})", human_bytes(*bytes))], None)
            }
            EventKind::FileDeleted { path } => (vec![format!("   🗑  {} {path}", self.t("narrate.removed"))], None),
            EventKind::CommandStarted { command, args } => {
                st.last_output_line.clear();
                let line = std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .map(shell_word)
                    .collect::<Vec<_>>()
                    .join(" ");
                (vec![format!("   $ {line}")], Some(format!("{} {line}", self.t("narrate.running"))))
            }
            EventKind::CommandOutput { chunk, .. } => {
                if let Some(l) = chunk.lines().rev().find(|l| !l.trim().is_empty()) {
                    st.last_output_line = l.trim().chars().take(100).collect();
                }
                let lines = if self.verbose { chunk.lines().map(|l| format!("     {l}")).collect() } else { vec![] };
                (lines, (!st.last_output_line.is_empty()).then(|| format!("   {}", st.last_output_line)))
            }
            EventKind::CommandFinished { exit_code, duration_ms, timed_out } => {
                let secs = *duration_ms as f64 / 1000.0;
                let line = if *timed_out {
                    Some(format!("   ↳ {} ({secs:.1}s)", self.t("narrate.stopped_it_took_too_long")))
                } else if *exit_code != Some(0) {
                    Some(format!(
                        "   ↳ {} {} ({secs:.1}s)",
                        self.t("narrate.ended_with_code"),
                        exit_code.map_or("?".into(), |c| c.to_string())
                    ))
                } else {
                    None
                };
                (line.into_iter().collect(), None)
            }
            EventKind::TestsFinished { passed, failed, total, errors } => {
                let mut v = vec![if *failed == 0 {
                    format!("   🧪 {}: {passed}/{total} {}", self.t("narrate.tests"), self.t("narrate.passed"))
                } else {
                    format!(
                        "   🧪 {}: {passed} {}, {failed} {} ({total})",
                        self.t("narrate.tests"),
                        self.t("narrate.passed"),
                        self.t("narrate.failed")
                    )
                }];
                for err in errors.iter().take(5) {
                    let first = err.error.lines().next().unwrap_or("").chars().take(120).collect::<String>();
                    v.push(format!("      ✗ {}: {first}", err.test));
                }
                (v, None)
            }
            EventKind::ErrorDetected { error, .. } => (
                vec![format!("   ⚠️  {}: {}", self.t("narrate.problem_found"), error.lines().next().unwrap_or(""))],
                None,
            ),
            EventKind::ErrorFixed { .. } => (vec![format!("   ✔ {}", self.t("narrate.fixed"))], None),
            EventKind::BrowserCheck {
                outcome,
                reason,
                console_errors,
                exceptions,
                failed_requests,
                blocked_requests,
                blank,
                actions,
                screenshot,
                duration_ms,
                ..
            } => {
                let line = if *outcome == wright_events::BrowserOutcome::Checked {
                    let problems = console_errors + exceptions + failed_requests + blocked_requests + u32::from(*blank);
                    let verdict = if problems == 0 {
                        self.t("narrate.no_errors").to_string()
                    } else {
                        format!("{problems} {}", self.t("narrate.problem_s"))
                    };
                    format!(
                        "   🌐 {}: {verdict}, {actions} {} ({:.1} s){}",
                        self.t("narrate.in_the_browser"),
                        self.t("narrate.click_s"),
                        *duration_ms as f64 / 1000.0,
                        screenshot.as_deref().map(|p| format!(" · {p}")).unwrap_or_default()
                    )
                } else {
                    format!(
                        "   🌐 {}: {}",
                        self.t("narrate.browser_check_not_run"),
                        reason.as_deref().unwrap_or(outcome.as_str())
                    )
                };
                (vec![line], None)
            }
            EventKind::OutsideRequest { host, method, status, allowed, api, reason, .. } => {
                let what = match api {
                    Some(name) => format!("API {name} ({host})"),
                    None => host.clone(),
                };
                let line = if *allowed && reason.is_none() {
                    format!("   🌍 {} {what}: {method} → {status}", self.t("narrate.outside_call_to"))
                } else {
                    format!(
                        "   🚫 {} {what}: {}",
                        if *allowed {
                            self.t("narrate.outside_call_cut_short_to")
                        } else {
                            self.t("narrate.outside_call_refused_to")
                        },
                        reason.as_deref().unwrap_or("")
                    )
                };
                (vec![line], None)
            }
            EventKind::Learning { lesson, .. } => (vec![format!("🧠 {} {lesson}", self.t("narrate.learned"))], None),
            EventKind::Usage { input_tokens, output_tokens, cached_tokens, cost_usd, .. } => {
                st.usage.0 += input_tokens;
                st.usage.1 += output_tokens;
                st.usage.2 += cached_tokens;
                st.usage.3 += cost_usd;
                (vec![], None)
            }
            // The narration said it in words; the technical reason when asked for.
            EventKind::Error { detail: Some(detail), .. } if self.verbose => {
                (vec![format!("   {}: {detail}", self.t("error.details"))], None)
            }
            EventKind::Error { .. } => (vec![], None),
            EventKind::Queued { position } => {
                (vec![format!("⏳ {}", say(self.lang, Said::Queued { position: *position }))], None)
            }
            EventKind::Started { .. } => (vec![format!("▶ {}", say(self.lang, Said::Started))], None),
            // The narration that follows says it in words; the match is worth a line when verbose.
            // Chat turns have their own renderer (`wright chat`).
            EventKind::ToolScores { .. }
            | EventKind::ToolSelected { .. }
            | EventKind::ChatToolResult { .. }
            | EventKind::TextDelta { .. }
            | EventKind::ClientToolCalls { .. }
            | EventKind::ChatMessage { .. } => (vec![], None),
            EventKind::Starter { id, score, mode, .. } => {
                (if self.verbose { vec![format!("🧩 starter {id} (match {score:.2}, {mode})")] } else { vec![] }, None)
            }
            EventKind::McpServerStarted { server, tools } => {
                let offered = if tools.is_empty() { String::new() } else { format!(": {}", tools.join(", ")) };
                (vec![format!("🧰 {} {server}{offered}", self.t("narrate.mcp_server_ready"))], None)
            }
            EventKind::McpServerFailed { server, reason, required } => {
                let mark = if *required { "✗" } else { "⚠" };
                (vec![format!("{mark} {} {server}: {reason}", self.t("narrate.mcp_server_failed"))], None)
            }
            EventKind::ExperimentAssigned { experiment, variant, changes } => (
                vec![format!("🧪 {} {experiment} → {variant} ({changes})", self.t("narrate.experiment_variant"))],
                None,
            ),
            EventKind::PackagesReady { packages, fetched, .. } => {
                let line = match (packages.is_empty(), *fetched) {
                    (true, _) => self.t("narrate.packages_none").to_string(),
                    (false, true) => format!("{} {}", self.t("narrate.packages_fetched"), packages.join(", ")),
                    (false, false) => format!("{} {}", self.t("narrate.packages_from_cache"), packages.join(", ")),
                };
                (vec![format!("📦 {line}")], None)
            }
            EventKind::PackagesRefused { refusals, .. } => (
                refusals
                    .iter()
                    .map(|r| {
                        format!("🚫 {} `{}` ({}): {}", self.t("narrate.package_refused"), r.spec, r.file, r.reason)
                    })
                    .collect(),
                None,
            ),
            EventKind::LinkRefused { path, .. } => {
                (vec![format!("🔗 {} `{path}`", self.t("narrate.refused_to_follow_a_link_the"))], None)
            }
            EventKind::Restarted { attempt, reason } => {
                (vec![format!("🔁 {}", say(self.lang, Said::Restarted { attempt: *attempt, reason: *reason }))], None)
            }
            EventKind::TaskStarted { task, kind, description, position, total } => (
                vec![String::new(), format!("▶ [{position}/{total}] {task} ({kind}): {description}")],
                Some(self.t("narrate.working_on_the_task").to_string()),
            ),
            EventKind::TaskFinished { task, status, message, duration_ms, .. } => {
                let icon = task_icon(*status);
                (vec![format!("{icon} {task}: {message} ({:.1}s)", *duration_ms as f64 / 1000.0)], None)
            }
            EventKind::Complete {
                success,
                files,
                fix_attempts,
                duration_ms,
                iterations,
                browser_checked,
                browser_reason,
                app,
                ..
            } => {
                let mut v = vec![String::new()];
                // Published, but nobody opened the page: say so where the eye lands last.
                if let Some(why) = browser_reason.as_ref().filter(|_| *success && !*browser_checked) {
                    v.push(format!("⚠️  {} {why}", self.t("narrate.the_page_was_not_opened_in")));
                }
                if !files.is_empty() {
                    v.push(format!("{} ({}):", self.t("narrate.files"), files.len()));
                    for f in files.iter().take(25) {
                        v.push(format!("  {f}"));
                    }
                    if files.len() > 25 {
                        v.push(format!("  … {} {}", files.len() - 25, self.t("narrate.more")));
                    }
                }
                if let Some(app) = app {
                    v.push(format!(
                        "🌐 {} {} — {}: http://127.0.0.1:8787{}",
                        self.t("narrate.published_as"),
                        app.url_path,
                        self.t("narrate.open_it_while_wright_serve_runs"),
                        app.url_path
                    ));
                }
                let (i, o, c, cost) = st.usage;
                v.push(format!(
                    "{} {:.1}s · {} {} · {fix_attempts} {} · {} {i} ({c} {}) / {o} {}{}",
                    if *success { self.t("narrate.finished_in") } else { self.t("narrate.stopped_after") },
                    *duration_ms as f64 / 1000.0,
                    iterations,
                    self.t("narrate.model_calls"),
                    self.t("narrate.fix_attempt_s"),
                    self.t("narrate.tokens_in"),
                    self.t("narrate.cached"),
                    self.t("narrate.out"),
                    if cost > 0.0 { format!(" · ${cost:.4}") } else { String::new() }
                ));
                (v, None)
            }
        }
    }
}

impl EventSink for HumanSink {
    fn accept(&self, event: &Event) {
        let Ok(mut st) = self.state.lock() else { return };
        let (lines, spin) = self.describe(event, &mut st);
        let print = |lines: &[String]| {
            let mut out = std::io::stdout().lock();
            for l in lines {
                let _ = writeln!(out, "{l}");
            }
            let _ = out.flush();
        };
        match &st.spinner {
            Some(pb) => {
                if !lines.is_empty() {
                    pb.suspend(|| print(&lines));
                }
                if let Some(msg) = spin {
                    pb.set_message(msg);
                }
                if matches!(event.kind, EventKind::Complete { .. }) {
                    pb.finish_and_clear();
                }
            }
            None => print(&lines),
        }
        if matches!(event.kind, EventKind::Complete { .. }) {
            st.spinner = None;
        }
    }
}

fn human_bytes(n: u64) -> String {
    if n < 1024 {
        format!("{n} B")
    } else if n < 1024 * 1024 {
        format!("{:.1} KB", n as f64 / 1024.0)
    } else {
        format!("{:.1} MB", n as f64 / 1048576.0)
    }
}

/// How a task's end looks in narration and in `wright task show`: passed, nothing to check,
/// not run, failed.
pub fn task_icon(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Passed => "✅",
        TaskStatus::Skipped => "➖",
        TaskStatus::NotRun => "⏭ ",
        TaskStatus::Failed => "❌",
    }
}

/// A command's word as a shell would need it written, so a shown line can be pasted back:
/// quoted when it holds anything beyond letters, digits and `_@%+=:,./-`.
fn shell_word(w: &str) -> std::borrow::Cow<'_, str> {
    let plain = !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain { w.into() } else { format!("'{}'", w.replace('\'', "'\\''")).into() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wright_events::TestError;

    fn narrate(lang: Lang, kind: EventKind) -> Vec<String> {
        let sink = HumanSink::new(lang, 3, false, false);
        let mut st = sink.state.lock().unwrap();
        let event = Event { seq: wright_events::Seq(1), build: "b".into(), ts: String::new(), kind };
        sink.describe(&event, &mut st).0
    }

    #[test]
    fn a_command_is_shown_as_it_could_be_pasted() {
        let args = ["-c", "exec go test -json \"$1\" 2>&1", "sh", "./...", "it's", "", "--junitxml=.wright/r.xml"];
        let lines = narrate(
            Lang::En,
            EventKind::CommandStarted { command: "sh".into(), args: args.iter().map(|a| a.to_string()).collect() },
        );
        assert_eq!(
            lines,
            vec![
                r#"   $ sh -c 'exec go test -json "$1" 2>&1' sh ./... 'it'\''s' '' --junitxml=.wright/r.xml"#
                    .to_string()
            ]
        );
    }

    /// Every narration key this file uses is in both shared tables, so no language ever shows
    /// a key instead of words.
    #[test]
    fn every_narration_word_is_in_both_tables() {
        let en: std::collections::HashMap<String, String> = serde_json::from_str(wright_events::words::EN).unwrap();
        let pt: std::collections::HashMap<String, String> = serde_json::from_str(wright_events::words::PT).unwrap();
        let source = include_str!("render.rs");
        let keys: Vec<&str> = source
            .split("self.t(\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .filter(|k| !k.is_empty())
            .collect();
        assert!(keys.len() > 40, "{keys:?}");
        for k in keys {
            assert!(en.contains_key(k) && pt.contains_key(k), "{k} is missing from a table");
        }
    }

    #[test]
    fn narration_reads_the_same_in_both_languages() {
        let tests = || EventKind::TestsFinished {
            passed: 2,
            failed: 1,
            total: 3,
            errors: vec![TestError { test: "adds".into(), error: "expected 3\nmore".into(), location: None }],
        };
        assert_eq!(narrate(Lang::En, tests()), ["   🧪 Tests: 2 passed, 1 failed (3)", "      ✗ adds: expected 3"]);
        assert_eq!(
            narrate(Lang::Pt, tests()),
            ["   🧪 Testes: 2 passaram, 1 falharam (3)", "      ✗ adds: expected 3"]
        );
        let fixing = EventKind::Phase { phase: Phase::Fixing, iteration: 2, message: String::new() };
        assert_eq!(narrate(Lang::Pt, fixing), ["🔧 Corrigindo o que deu errado (2/3)…"]);
        let wrote = EventKind::FileWritten { path: "index.html".into(), bytes: 2048, created: true };
        assert_eq!(narrate(Lang::En, wrote), ["   📄 wrote index.html (2.0 KB)"]);
    }
}
