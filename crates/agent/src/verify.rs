//! wright's own verdict on a project: tests, template checks, acceptance commands.
//!
//! Verification never trusts what the model said about its work; it runs things itself.

pub use crate::entry::{server_entry, server_entry_in};
use crate::prompts::Template;
use crate::verdict::indent;
pub use crate::verdict::{BrowserStatus, Failure, FailureKind};
pub use crate::verify_browser::BrowserCheck;
use crate::verify_browser::check_in_browser;
use std::time::Duration;
use wright_events::EventKind;
use wright_sandbox::RunError;
use wright_tools::testing::TestStatus;
use wright_tools::{ToolContext, run_logged, run_tests};

/// The result of one verification round.
#[derive(Debug, Clone, Default)]
pub struct Verification {
    pub failures: Vec<Failure>,
    pub browser: BrowserStatus,
}

impl Verification {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Run every check for `template` plus the user's `checks`, emitting `error_detected` for each
/// failure found (tagged with `iteration`).
pub async fn verify(
    ctx: &ToolContext,
    template: Template,
    checks: &[String],
    iteration: u32,
    browser: &BrowserCheck<'_>,
) -> Verification {
    let mut v = Verification::default();
    let files = wright_tools::project_files(&ctx.workspace);

    // 1. The project's tests.
    let run = run_tests(ctx, None).await;
    let has_code =
        files.iter().any(|f| [".js", ".mjs", ".py", ".ts", ".tsx", ".rs", ".go"].iter().any(|ext| f.ends_with(ext)));
    let tests_required = template.requires_tests() || (template == Template::Auto && has_code);
    match run.status {
        TestStatus::Passed => {}
        TestStatus::Failed => {
            // The failing tests stay values; [`Failure::text`] words them for the model.
            let mut d = format!("{}\n", run.summary());
            if run.report.errors.is_empty() && !run.output_tail.is_empty() {
                d.push_str(&format!("Output (end):\n{}\n", indent(&run.output_tail)));
            }
            let mut f = Failure::new(FailureKind::TestFailure, run.summary(), d);
            f.tests = run.report.errors.clone();
            if f.tests.is_empty() {
                f.output = run.output_tail.clone();
            }
            v.failures.push(f);
        }
        TestStatus::NoTests if tests_required && checks.is_empty() => {
            let msg = run.message.clone().unwrap_or_default();
            v.failures.push(Failure::new(
                FailureKind::NoTests,
                "no tests found",
                format!("{msg}\nThis project has code, and wright only calls a project done when its tests pass."),
            ));
        }
        TestStatus::NoTests => {}
        TestStatus::Error => {
            let msg = run.message.clone().unwrap_or_default();
            let mut d = format!("{msg}\n");
            if !run.output_tail.is_empty() {
                d.push_str(&format!("Output (end):\n{}\n", indent(&run.output_tail)));
            }
            v.failures.push(
                Failure::new(FailureKind::TestError, format!("tests could not run: {}", first_line(&msg)), d)
                    .with_output(format!("{msg}\n{}", run.output_tail)),
            );
        }
    }

    // 2. The web page, when this kind of project has one (or, for auto, when one exists).
    let entry = entry_page(template, &files);
    if let Some(entry) = &entry {
        // A bundled page is checked where it is served from: its source page (index.html at the
        // root) names files only the bundle has.
        let checked = match entry.split_once('/') {
            // Opened beneath the project: a `dist` that the generated code made a link is not
            // followed (the check then reports the page missing).
            Some((dir, page)) if template.has_build_step() => match ctx.workspace.dir().open_dir(dir) {
                Ok(site) => wright_webcheck::check_site_in(&site, page),
                Err(e) => Err(wright_webcheck::CheckError::Io {
                    path: ctx.workspace.root().join(dir),
                    source: std::io::Error::other(e),
                }),
            },
            _ => wright_webcheck::check_site_in(ctx.workspace.dir(), entry),
        };
        match checked {
            Ok(report) => {
                if !report.ok() {
                    let n = report.problems.iter().filter(|p| !p.is_warning()).count();
                    let mut f = Failure::new(FailureKind::TemplateCheck, format!("{n} problem(s) in the web page"), "");
                    f.problems = report.problems;
                    v.failures.push(f);
                }
            }
            Err(e) => v.failures.push(Failure::new(
                FailureKind::TemplateCheck,
                "the web page could not be checked",
                e.to_string(),
            )),
        }
    }

    // 3. A full-stack app's server must start and answer.
    let mut server_ok = true;
    if template == Template::Fullstack {
        if let Some(f) = check_server(ctx).await {
            v.failures.push(f);
            server_ok = false;
        }
    }

    // A Python, Rust or Go program must start: a command-line one answers `--help`, an API
    // starts and answers `/` (after its tests passed: a program that does not compile fails
    // its tests first, with the compiler's words).
    if template.is_code() && run.status == TestStatus::Passed {
        use crate::verify_program::{Program, check_cli, program_of};
        let failure = match program_of(ctx, template) {
            Program::Library => None,
            Program::Cli(command) => check_cli(ctx, &command).await,
            Program::Api { build, run } => probe_api(ctx, build, run).await,
        };
        v.failures.extend(failure);
    }

    // 4. The page in a real browser: what a visitor would see break (web templates only).
    if let Some(entry) = entry.as_deref().filter(|_| template.is_web() && server_ok) {
        let (failures, status) = check_in_browser(ctx, template, entry, browser, iteration).await;
        v.failures.extend(failures);
        v.browser = status;
    }

    // 5. The user's acceptance commands, through a shell because the user wrote them as one line.
    for check in checks {
        let args = vec!["-c".to_string(), check.clone()];
        match run_logged(ctx, "sh", &args, &[], ctx.exec.command_timeout).await {
            Ok(o) if o.success() => {}
            Ok(o) => {
                let how = if o.timed_out {
                    "timed out".to_string()
                } else {
                    format!("exited with code {}", o.exit_code.map_or("none".into(), |c| c.to_string()))
                };
                let out = wright_tools::clip_tail(&format!("{}{}", o.stdout.render(), o.stderr.render()), 2500);
                v.failures.push(
                    Failure::new(
                        FailureKind::CheckFailed,
                        format!("`{check}` {how}"),
                        format!("`{check}` {how}. Output (end):\n{}\n", indent(&out)),
                    )
                    .with_output(out),
                );
            }
            Err(e) => v.failures.push(Failure::new(
                FailureKind::CheckFailed,
                format!("`{check}` could not run"),
                e.to_string(),
            )),
        }
    }

    announce(ctx, &v.failures, iteration);
    v
}

/// One `error_detected` per failure of a round (tagged with `iteration`).
pub(crate) fn announce(ctx: &ToolContext, failures: &[Failure], iteration: u32) {
    for f in failures {
        ctx.emitter.emit(EventKind::ErrorDetected {
            iteration,
            kind: f.kind.as_str().to_string(),
            error: wright_tools::clip(&f.summary, 500),
            file: f.file.clone(),
            line: f.line,
            column: f.column,
        });
    }
}

/// How long a server gets to start answering.
const SERVER_STARTUP: Duration = Duration::from_secs(8);
/// How long a connected server gets to send its status line.
const SERVER_ANSWER: Duration = Duration::from_secs(3);
/// Pause between connection attempts while the server starts.
const SERVER_POLL: Duration = Duration::from_millis(150);

/// The script that starts the server and asks it for `/` from inside the sandbox.
const SERVER_PROBE: &str = include_str!("server_probe.js");

/// The line the probe script reports on.
const PROBE_MARK: &str = "WRIGHT_SERVER_PROBE ";

/// Start the server the way a person would run it (`node <entry>` with `PORT` set) and ask it
/// for `/`. Any status below 500 passes. Both run in one sandboxed command, because a sandbox
/// has its own network: a request from wright could not reach a server inside it. The server
/// is always stopped before this returns, and also when the build is cancelled.
async fn check_server(ctx: &ToolContext) -> Option<Failure> {
    let Some(entry) = server_entry(ctx) else {
        return Some(server_failure(
            "no server file was found".into(),
            "wright starts the file named in package.json's start script (`node <file>`), or else the first of server/server.js, server/index.js, server.js, index.js. None exists.".into(),
        ));
    };
    let run = format!("`node {entry}`");
    probe_server(ctx, entry, run).await
}

/// A Python, Rust or Go API: compiled first when it has a build step (so the start window
/// is not spent compiling), then started like a full-stack server.
async fn probe_api(ctx: &ToolContext, build: Option<Vec<String>>, run: Vec<String>) -> Option<Failure> {
    if let Some((program, args)) = build.as_deref().and_then(<[String]>::split_first) {
        let line = build.as_deref().unwrap_or_default().join(" ");
        match run_logged(ctx, program, args, &[], ctx.exec.command_timeout).await {
            Ok(o) if o.success() => {}
            Ok(o) => {
                let out = wright_tools::clip_tail(&format!("{}{}", o.stdout.render(), o.stderr.render()), 2500);
                return Some(
                    server_failure(
                        format!("the server did not build (`{line}` failed)"),
                        format!("wright ran `{line}` before starting the server.\nOutput (end):\n{}\n", indent(&out)),
                    )
                    .with_output(out),
                );
            }
            Err(e) => return Some(server_failure("the server could not be built".into(), run_error(&e))),
        }
    }
    let label = format!("`{}`", run.join(" "));
    let command = serde_json::to_string(&run).unwrap_or_default();
    probe_server(ctx, command, label).await
}

/// Start `entry` (a file node runs, or a JSON command) inside the sandbox with `PORT` set and
/// ask it for `/`; `run` names it for people.
async fn probe_server(ctx: &ToolContext, entry: String, run: String) -> Option<Failure> {
    let port = match wright_sandbox::loopback_ports::<1>().map(|[p]| p) {
        Ok(p) => p,
        Err(e) => {
            return Some(server_failure("the server could not be checked".into(), format!("no free port: {e}")));
        }
    };
    let ms = |d: Duration| d.as_millis().to_string();
    let args = vec![
        "-e".to_string(),
        SERVER_PROBE.to_string(),
        entry.clone(),
        port.to_string(),
        ms(SERVER_STARTUP),
        ms(SERVER_ANSWER),
        ms(SERVER_POLL),
    ];
    // Lives a little longer than the startup window, so a slow start shows up as "no answer"
    // rather than as the runner's timeout.
    let lifetime = SERVER_STARTUP + SERVER_ANSWER + Duration::from_secs(2);
    let outcome = run_logged(ctx, "node", &args, &[], lifetime).await;
    let (result, output) = match &outcome {
        Ok(o) => {
            let stdout = o.stdout.render();
            let result = stdout.lines().rev().find_map(|l| l.strip_prefix(PROBE_MARK)).and_then(parse_probe);
            let kept: String = stdout.lines().filter(|l| !l.starts_with(PROBE_MARK)).collect::<Vec<_>>().join("\n");
            (result, wright_tools::clip_tail(&format!("{}{}", kept.trim_end(), o.stderr.render()), 2500))
        }
        Err(_) => (None, String::new()),
    };
    let with_output = |mut detail: String| {
        if !output.trim().is_empty() {
            detail.push_str(&format!("\nServer output (end):\n{}\n", indent(&output)));
        }
        detail
    };
    let run = format!("{run} with PORT={port}");
    let failure = match result {
        Some(Probe::Status(code)) if code < 500 => None,
        Some(Probe::Status(code)) => Some(server_failure(
            format!("the server answered {code}"),
            with_output(format!("wright ran {run} and asked for `/`; the server answered {code}, a server error.")),
        )),
        Some(Probe::NotHttp(line)) => Some(server_failure(
            "the server's answer is not HTTP".into(),
            with_output(format!("wright ran {run} and asked for `/`; the answer began with {line:?}.")),
        )),
        Some(Probe::Silent) => Some(server_failure(
            "the server accepted a connection but never answered".into(),
            with_output(format!(
                "wright ran {run} and asked for `/`; nothing came back within {} s. Every request needs a response (`res.end(...)`).",
                SERVER_ANSWER.as_secs()
            )),
        )),
        Some(Probe::Refused) => Some(server_failure(
            format!(
                "the server did not start: nothing answered within {} s{}",
                SERVER_STARTUP.as_secs(),
                hint(&output)
            ),
            with_output(format!(
                "wright ran {run}; nothing answered on port {port} within {} s. The server must listen on the port in the PORT environment variable (`process.env.PORT || 3000`, `os.environ.get(\"PORT\", 8000)`).",
                SERVER_STARTUP.as_secs()
            )),
        )),
        Some(Probe::Exited(code)) => {
            let how = format!("it exited with code {code}");
            Some(server_failure(
                format!("the server did not start: {how}{}", hint(&output)),
                with_output(format!("wright ran {run}; {how} before answering.")),
            ))
        }
        None => {
            let how = match &outcome {
                Ok(o) if o.cancelled => "it was stopped".to_string(),
                Ok(o) if o.timed_out => "it timed out".to_string(),
                Ok(o) => format!("the check ended with code {}", o.exit_code.map_or("none".into(), |c| c.to_string())),
                Err(e) => run_error(e),
            };
            Some(server_failure(
                format!("the server did not start: {how}{}", hint(&output)),
                with_output(format!("wright ran {run}; {how} before answering.")),
            ))
        }
    };
    failure.map(|f| f.with_output(output))
}

/// What the request for `/` got.
#[derive(Debug, PartialEq)]
enum Probe {
    Refused,
    Status(u16),
    NotHttp(String),
    Silent,
    /// The server exited (with this code, -1 for a signal) before answering.
    Exited(i64),
}

/// The probe script's report line (after the mark).
fn parse_probe(json: &str) -> Option<Probe> {
    let v: serde_json::Value = serde_json::from_str(json.trim()).ok()?;
    if let Some(code) = v.get("status").and_then(serde_json::Value::as_u64) {
        return u16::try_from(code).ok().map(Probe::Status);
    }
    if let Some(line) = v.get("notHttp").and_then(serde_json::Value::as_str) {
        return Some(Probe::NotHttp(wright_tools::clip(line, 120)));
    }
    if let Some(code) = v.get("exited").and_then(serde_json::Value::as_i64) {
        return Some(Probe::Exited(code));
    }
    if v.get("silent").is_some() {
        return Some(Probe::Silent);
    }
    v.get("refused").map(|_| Probe::Refused)
}

fn server_failure(summary: String, detail: String) -> Failure {
    Failure::new(FailureKind::ServerCheck, summary, detail)
}

/// The line of the output that says what went wrong (Node prints the error after the source
/// excerpt), for the one-line summary.
fn hint(output: &str) -> String {
    let lines: Vec<&str> = output.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let line = lines
        .iter()
        .find(|l| l.split([':', ' ', '[']).next().is_some_and(|w| w.ends_with("Error")))
        .or_else(|| lines.iter().rev().find(|l| !l.starts_with("Node.js v")));
    match line {
        Some(l) => format!(" ({})", wright_tools::clip(l, 200)),
        None => String::new(),
    }
}

fn run_error(e: &RunError) -> String {
    match e {
        RunError::NotFound { .. } => "`node` is not installed".into(),
        other => other.to_string(),
    }
}

/// Which page to check: the template's entry, or for `auto` the one that exists.
fn entry_page(template: Template, files: &[String]) -> Option<String> {
    match template {
        Template::Static | Template::Interactive | Template::Fullstack | Template::React => {
            Some(template.entry_page().to_string())
        }
        Template::Python | Template::Rust | Template::Go => None,
        Template::Auto => ["index.html", "client/index.html", "public/index.html"]
            .iter()
            .find(|p| files.iter().any(|f| f == *p))
            .map(|p| (*p).to_string()),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
