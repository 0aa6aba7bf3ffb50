//! Showing a build: `jsonl` (one event per line, for scripts) or `human` (plain-words
//! narration for beginners, with a spinner while the model thinks).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;
use wright_agent::Lang;
use wright_events::words::{Said, say};
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

    fn t<'a>(&self, en: &'a str, pt: &'a str) -> &'a str {
        match self.lang {
            Lang::En => en,
            Lang::Pt => pt,
        }
    }

    /// The line(s) to print for an event, and what the spinner should say next.
    fn describe(&self, e: &Event, st: &mut HumanState) -> (Vec<String>, Option<String>) {
        let thinking = || Some(self.t("The AI is thinking…", "A IA está pensando…").to_string());
        match &e.kind {
            EventKind::Phase { phase, iteration, message } => match phase {
                Phase::Planning => (vec![format!("📋 {message}")], None),
                Phase::Generating => {
                    (vec![format!("✍️  {}", self.t("Writing the code…", "Escrevendo o código…"))], thinking())
                }
                Phase::Transpiling => (
                    vec![format!(
                        "🧱 {}",
                        self.t("Building the page and checking the types…", "Montando a página e conferindo os tipos…")
                    )],
                    Some(self.t("Transpiling…", "Transpilando…").to_string()),
                ),
                Phase::Verifying => (
                    vec![format!("🔎 {}", self.t("Checking that everything works…", "Verificando se tudo funciona…"))],
                    Some(self.t("Running checks…", "Rodando verificações…").to_string()),
                ),
                Phase::Fixing => (
                    vec![format!(
                        "🔧 {} ({}/{})…",
                        self.t("Fixing what went wrong", "Corrigindo o que deu errado"),
                        iteration,
                        self.max_fix_attempts
                    )],
                    thinking(),
                ),
                Phase::Learning => (vec![format!("🧠 {message}")], None),
                // The ending says what was made (a starter's app is said to be one).
                Phase::Published => (vec![format!("✅ {} {message}", self.t("Done!", "Pronto!"))], None),
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
                    (vec![format!("   ↳ {name} {}: {summary}", self.t("did not work", "não funcionou"))], thinking())
                }
            }
            EventKind::FileWritten { path, bytes, created } => {
                let verb = if *created { self.t("wrote", "criei") } else { self.t("updated", "atualizei") };
                (vec![format!("   📄 {verb} {path} ({})", human_bytes(*bytes))], None)
            }
            EventKind::FileDeleted { path } => (vec![format!("   🗑  {} {path}", self.t("removed", "removi"))], None),
            EventKind::CommandStarted { command, args } => {
                st.last_output_line.clear();
                let line = std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ");
                (vec![format!("   $ {line}")], Some(format!("{} {line}", self.t("Running", "Rodando"))))
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
                    Some(format!("   ↳ {} ({secs:.1}s)", self.t("stopped: it took too long", "parado: demorou demais")))
                } else if *exit_code != Some(0) {
                    Some(format!(
                        "   ↳ {} {} ({secs:.1}s)",
                        self.t("ended with code", "terminou com código"),
                        exit_code.map_or("?".into(), |c| c.to_string())
                    ))
                } else {
                    None
                };
                (line.into_iter().collect(), None)
            }
            EventKind::TestsFinished { passed, failed, total, errors } => {
                let mut v = vec![if *failed == 0 {
                    format!("   🧪 {}: {passed}/{total} {}", self.t("Tests", "Testes"), self.t("passed", "passaram"))
                } else {
                    format!(
                        "   🧪 {}: {passed} {}, {failed} {} ({total})",
                        self.t("Tests", "Testes"),
                        self.t("passed", "passaram"),
                        self.t("failed", "falharam")
                    )
                }];
                for err in errors.iter().take(5) {
                    let first = err.error.lines().next().unwrap_or("").chars().take(120).collect::<String>();
                    v.push(format!("      ✗ {}: {first}", err.test));
                }
                (v, None)
            }
            EventKind::ErrorDetected { error, .. } => (
                vec![format!(
                    "   ⚠️  {}: {}",
                    self.t("Problem found", "Problema encontrado"),
                    error.lines().next().unwrap_or("")
                )],
                None,
            ),
            EventKind::ErrorFixed { .. } => (vec![format!("   ✔ {}", self.t("Fixed!", "Corrigido!"))], None),
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
                        self.t("no errors", "nenhum erro").to_string()
                    } else {
                        format!("{problems} {}", self.t("problem(s)", "problema(s)"))
                    };
                    format!(
                        "   🌐 {}: {verdict}, {actions} {} ({:.1} s){}",
                        self.t("In the browser", "No navegador"),
                        self.t("click(s)", "clique(s)"),
                        *duration_ms as f64 / 1000.0,
                        screenshot.as_deref().map(|p| format!(" · {p}")).unwrap_or_default()
                    )
                } else {
                    format!(
                        "   🌐 {}: {}",
                        self.t("Browser check not run", "Verificação no navegador não executada"),
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
                    format!("   🌍 {} {what}: {method} → {status}", self.t("Outside call to", "Chamada externa a"))
                } else {
                    format!(
                        "   🚫 {} {what}: {}",
                        if *allowed {
                            self.t("Outside call cut short to", "Chamada externa interrompida a")
                        } else {
                            self.t("Outside call refused to", "Chamada externa recusada a")
                        },
                        reason.as_deref().unwrap_or("")
                    )
                };
                (vec![line], None)
            }
            EventKind::Learning { lesson, .. } => {
                (vec![format!("🧠 {} {lesson}", self.t("Learned:", "Aprendi:"))], None)
            }
            EventKind::Usage { input_tokens, output_tokens, cached_tokens, cost_usd } => {
                st.usage.0 += input_tokens;
                st.usage.1 += output_tokens;
                st.usage.2 += cached_tokens;
                st.usage.3 += cost_usd;
                (vec![], None)
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
            EventKind::LinkRefused { path, .. } => (
                vec![format!(
                    "🔗 {} `{path}`",
                    self.t(
                        "Refused to follow a link the generated code made:",
                        "Recusei seguir um link que o código gerado criou:"
                    )
                )],
                None,
            ),
            EventKind::Restarted { attempt, reason } => {
                (vec![format!("🔁 {}", say(self.lang, Said::Restarted { attempt: *attempt, reason: *reason }))], None)
            }
            EventKind::TaskStarted { task, kind, description, position, total } => (
                vec![String::new(), format!("▶ [{position}/{total}] {task} ({kind}): {description}")],
                Some(self.t("Working on the task…", "Trabalhando na tarefa…").to_string()),
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
                    v.push(format!(
                        "⚠️  {} {why}",
                        self.t(
                            "The page was not opened in a browser, so errors a visitor would meet may remain:",
                            "A página não foi aberta num navegador; erros que um visitante veria podem continuar:"
                        )
                    ));
                }
                if !files.is_empty() {
                    v.push(format!("{} ({}):", self.t("Files", "Arquivos"), files.len()));
                    for f in files.iter().take(25) {
                        v.push(format!("  {f}"));
                    }
                    if files.len() > 25 {
                        v.push(format!("  … {} {}", files.len() - 25, self.t("more", "mais")));
                    }
                }
                if let Some(app) = app {
                    v.push(format!(
                        "🌐 {} {} — {}: http://127.0.0.1:8787{}",
                        self.t("Published as", "Publicado como"),
                        app.url_path,
                        self.t("open it while `wright serve` runs", "abra-o com `wright serve` rodando"),
                        app.url_path
                    ));
                }
                let (i, o, c, cost) = st.usage;
                v.push(format!(
                    "{} {:.1}s · {} {} · {fix_attempts} {} · {} {i} ({c} {}) / {o} {}{}",
                    if *success {
                        self.t("Finished in", "Terminado em")
                    } else {
                        self.t("Stopped after", "Parou depois de")
                    },
                    *duration_ms as f64 / 1000.0,
                    iterations,
                    self.t("model calls", "chamadas ao modelo"),
                    self.t("fix attempt(s)", "tentativa(s) de correção"),
                    self.t("tokens in", "tokens de entrada"),
                    self.t("cached", "em cache"),
                    self.t("out", "de saída"),
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
