//! wright's own verdict on a project: tests, template checks, acceptance commands.
//!
//! Verification never trusts what the model said about its work; it runs things itself.

use crate::prompts::Template;
use wright_events::EventKind;
use wright_tools::testing::TestStatus;
use wright_tools::{ToolContext, run_logged, run_tests};

/// One reason the project is not done, with the detail a fix needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// `test_failure`, `no_tests`, `test_error`, `template_check`, `check_failed`.
    pub kind: String,
    /// One line for events and people.
    pub summary: String,
    /// Everything the model needs: failing tests with messages and locations, output tails.
    pub detail: String,
}

impl Failure {
    pub fn title(&self) -> &str {
        match self.kind.as_str() {
            "test_failure" => "Failing tests",
            "no_tests" => "No tests",
            "test_error" => "The tests could not run",
            "template_check" => "Problems in the web page",
            "check_failed" => "An acceptance command failed",
            _ => "Problem",
        }
    }
}

/// The result of one verification round.
#[derive(Debug, Clone, Default)]
pub struct Verification {
    pub failures: Vec<Failure>,
}

impl Verification {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Run every check for `template` plus the user's `checks`, emitting `error_detected` for each
/// failure found (tagged with `iteration`).
pub async fn verify(ctx: &ToolContext, template: Template, checks: &[String], iteration: u32) -> Verification {
    let mut v = Verification::default();
    let files = wright_tools::project_files(ctx.workspace.root());

    // 1. The project's tests.
    let run = run_tests(ctx, None).await;
    let has_code =
        files.iter().any(|f| f.ends_with(".js") || f.ends_with(".mjs") || f.ends_with(".py") || f.ends_with(".ts"));
    let tests_required = template.requires_tests() || (template == Template::Auto && has_code);
    match run.status {
        TestStatus::Passed => {}
        TestStatus::Failed => {
            let mut d = format!("{}\n", run.summary());
            for e in &run.report.errors {
                d.push_str(&format!("- {}", e.test));
                if let Some(loc) = &e.location {
                    d.push_str(&format!(" (at {loc})"));
                }
                d.push_str(&format!(":\n{}\n", indent(&e.error)));
            }
            if run.report.errors.is_empty() && !run.output_tail.is_empty() {
                d.push_str(&format!("Output (end):\n{}\n", indent(&run.output_tail)));
            }
            v.failures.push(Failure { kind: "test_failure".into(), summary: run.summary(), detail: d });
        }
        TestStatus::NoTests if tests_required && checks.is_empty() => {
            let msg = run.message.clone().unwrap_or_default();
            v.failures.push(Failure {
                kind: "no_tests".into(),
                summary: "no tests found".into(),
                detail: format!(
                    "{msg}\nThis project has code, and wright only calls a project done when its tests pass."
                ),
            });
        }
        TestStatus::NoTests => {}
        TestStatus::Error => {
            let msg = run.message.clone().unwrap_or_default();
            let mut d = format!("{msg}\n");
            if !run.output_tail.is_empty() {
                d.push_str(&format!("Output (end):\n{}\n", indent(&run.output_tail)));
            }
            v.failures.push(Failure {
                kind: "test_error".into(),
                summary: format!("tests could not run: {}", first_line(&msg)),
                detail: d,
            });
        }
    }

    // 2. The web page, when this kind of project has one (or, for auto, when one exists).
    let entry = entry_page(template, &files);
    if let Some(entry) = entry {
        match wright_webcheck::check_site(ctx.workspace.root(), &entry) {
            Ok(report) => {
                if !report.ok() {
                    let mut d = String::new();
                    for p in &report.problems {
                        match p.line {
                            Some(l) => d.push_str(&format!("- {}:{}: {}\n", p.file, l, p.message)),
                            None => d.push_str(&format!("- {}: {}\n", p.file, p.message)),
                        }
                    }
                    let n = report.problems.iter().filter(|p| !p.message.starts_with("warning: ")).count();
                    v.failures.push(Failure {
                        kind: "template_check".into(),
                        summary: format!("{n} problem(s) in the web page"),
                        detail: d,
                    });
                }
            }
            Err(e) => v.failures.push(Failure {
                kind: "template_check".into(),
                summary: "the web page could not be checked".into(),
                detail: e.to_string(),
            }),
        }
    }

    // 3. The user's acceptance commands, through a shell because the user wrote them as one line.
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
                let out = format!("{}{}", o.stdout.render(), o.stderr.render());
                v.failures.push(Failure {
                    kind: "check_failed".into(),
                    summary: format!("`{check}` {how}"),
                    detail: format!(
                        "`{check}` {how}. Output (end):\n{}\n",
                        indent(&wright_tools::clip_tail(&out, 2500))
                    ),
                });
            }
            Err(e) => v.failures.push(Failure {
                kind: "check_failed".into(),
                summary: format!("`{check}` could not run"),
                detail: e.to_string(),
            }),
        }
    }

    for f in &v.failures {
        ctx.emitter.emit(EventKind::ErrorDetected {
            iteration,
            kind: f.kind.clone(),
            error: wright_tools::clip(&f.summary, 500),
        });
    }
    v
}

/// Which page to check: the template's entry, or for `auto` the one that exists.
fn entry_page(template: Template, files: &[String]) -> Option<String> {
    match template {
        Template::Static | Template::Interactive | Template::Fullstack => Some(template.entry_page().to_string()),
        Template::Auto => ["index.html", "client/index.html", "public/index.html"]
            .iter()
            .find(|p| files.iter().any(|f| f == *p))
            .map(|p| (*p).to_string()),
    }
}

fn indent(s: &str) -> String {
    s.trim_end().lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
