//! The handler table: one small type per task `type`, behind [`TaskHandler`]. A new type is
//! one more `.with(…)` in [`Handlers::builtin`]; a type no handler claims is a clear error
//! that lists the ones there are.
//!
//! `no_op` and `validation` are here; the model-driven `code_generation`, `planning` and
//! `ai_interaction` are in [`crate::codegen`], which builds on this module; the table of all
//! of them is put together in [`crate::builtin`], above both.

use crate::{CommandExecuted, Criterion, Judgement, Task, TaskResult, ValidationDetails};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use wright_tools::ToolContext;

/// Judges a descriptive criterion against the project (with a model); its reasoning is kept.
#[async_trait::async_trait]
pub trait Judge: Send + Sync {
    async fn judge(&self, task: &Task, criterion: &str, ctx: &ToolContext) -> Judgement;
}

/// What a handler gets besides its task: the workspace, sandbox and events of the run.
#[derive(Clone)]
pub struct TaskEnv {
    pub ctx: ToolContext,
    /// Longest one validation command may run.
    pub command_timeout: Duration,
    /// Judges descriptive criteria; without one they are reported as not judged (failed).
    pub judge: Option<Arc<dyn Judge>>,
    /// The model and tools, for the types that need them (its `ctx` is this one's).
    pub agent: Option<wright_agent::AgentLoop>,
}

/// Runs tasks of one `type`.
#[async_trait::async_trait]
pub trait TaskHandler: Send + Sync {
    /// The `type` it handles.
    fn kind(&self) -> &'static str;
    /// One line on what it does (listed by `wright task schema` and in errors).
    fn about(&self) -> &'static str;
    async fn run(&self, task: &Task, env: &TaskEnv) -> TaskResult;
}

/// A type no handler claims.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown task type `{kind}`; the types are: {known}")]
pub struct UnknownType {
    pub kind: String,
    pub known: String,
}

/// Handlers by `type`.
#[derive(Default)]
pub struct Handlers {
    table: BTreeMap<&'static str, Arc<dyn TaskHandler>>,
}

impl Handlers {
    /// Each type with its one line, sorted by type.
    pub fn describe(&self) -> Vec<(&'static str, &'static str)> {
        self.table.values().map(|h| (h.kind(), h.about())).collect()
    }

    /// Refuse a plan naming a type no handler claims, before anything runs.
    pub fn check(&self, plan: &crate::Plan) -> Result<(), UnknownType> {
        plan.tasks.iter().try_for_each(|t| self.get(&t.kind).map(|_| ()))
    }

    /// Add (or replace) the handler of its type.
    pub fn with(mut self, handler: Arc<dyn TaskHandler>) -> Self {
        self.table.insert(handler.kind(), handler);
        self
    }

    pub fn get(&self, kind: &str) -> Result<Arc<dyn TaskHandler>, UnknownType> {
        self.table
            .get(kind)
            .cloned()
            .ok_or_else(|| UnknownType { kind: kind.to_string(), known: self.kinds().join(", ") })
    }

    /// The types, sorted.
    pub fn kinds(&self) -> Vec<&'static str> {
        self.table.keys().copied().collect()
    }
}

/// `no_op`: does nothing and passes; for plan structure and tests.
pub struct NoOp;

#[async_trait::async_trait]
impl TaskHandler for NoOp {
    fn kind(&self) -> &'static str {
        "no_op"
    }
    fn about(&self) -> &'static str {
        "does nothing (plan structure, tests)"
    }
    async fn run(&self, _task: &Task, _env: &TaskEnv) -> TaskResult {
        TaskResult {
            message: "Nothing to do: a no_op task.".into(),
            ai_result: serde_json::Value::Null,
            validation_details: ValidationDetails::skipped(),
        }
    }
}

/// `validation`: runs the task's criteria and nothing else.
pub struct Validation;

#[async_trait::async_trait]
impl TaskHandler for Validation {
    fn kind(&self) -> &'static str {
        "validation"
    }
    fn about(&self) -> &'static str {
        "runs the validation criteria only"
    }
    async fn run(&self, task: &Task, env: &TaskEnv) -> TaskResult {
        let details = validate(task, env).await;
        let message = match details.overall_status {
            crate::OverallStatus::Passed => "Validation passed.".to_string(),
            crate::OverallStatus::Skipped => "Nothing to validate: the task has no criteria.".to_string(),
            crate::OverallStatus::Failed => failed_message(&details),
        };
        TaskResult { message, ai_result: serde_json::Value::Null, validation_details: details }
    }
}

/// Run every command criterion (in the sandbox, in order, all of them even after a failure)
/// and judge every descriptive one.
pub async fn validate(task: &Task, env: &TaskEnv) -> ValidationDetails {
    let mut commands = Vec::new();
    let mut judged = Vec::new();
    for c in &task.validation_criteria {
        if env.ctx.cancel.is_cancelled() {
            break;
        }
        match c {
            Criterion::Command(_) | Criterion::CommandObject { .. } => {
                commands.push(run_command(c.text(), env).await);
            }
            Criterion::Descriptive { description } => judged.push(match &env.judge {
                Some(j) => j.judge(task, description, &env.ctx).await,
                None => Judgement {
                    criterion: description.clone(),
                    met: false,
                    reasoning: "not judged: descriptive criteria need a model to judge them".into(),
                },
            }),
        }
    }
    ValidationDetails::from_parts(commands, judged)
}

/// One command through `sh -c`, as the seed's `execute_command` does; `exit_code` is null
/// when it was stopped (time limit, cancel) or could not start.
async fn run_command(command: &str, env: &TaskEnv) -> CommandExecuted {
    let args = vec!["-c".to_string(), command.to_string()];
    match wright_tools::run_logged(&env.ctx, "sh", &args, &[], env.command_timeout).await {
        Ok(o) => CommandExecuted {
            command: command.to_string(),
            exit_code: if o.timed_out || o.cancelled { None } else { o.exit_code },
            stdout: o.stdout.render(),
            stderr: if o.timed_out {
                format!("{}\n[stopped after {} s]", o.stderr.render(), env.command_timeout.as_secs())
            } else {
                o.stderr.render()
            },
        },
        Err(e) => CommandExecuted {
            command: command.to_string(),
            exit_code: None,
            stdout: String::new(),
            stderr: e.to_string(),
        },
    }
}

/// Which checks failed, in one sentence.
pub fn failed_message(d: &ValidationDetails) -> String {
    let mut parts: Vec<String> = d
        .commands_executed
        .iter()
        .filter(|c| c.exit_code != Some(0))
        .map(|c| match c.exit_code {
            Some(code) => format!("`{}` exited {code}", c.command),
            None => format!("`{}` did not finish", c.command),
        })
        .collect();
    parts.extend(d.judged.iter().filter(|j| !j.met).map(|j| format!("\"{}\" is not met", j.criterion)));
    format!("Validation failed: {}.", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Format, OverallStatus, parse};

    fn env(dir: &std::path::Path) -> TaskEnv {
        let ws = wright_sandbox::Workspace::open(dir.join("ws"), wright_sandbox::WorkspaceLimits::default()).unwrap();
        let exec = wright_tools::ExecConfig::for_build(&dir.join("home"), &dir.join("tmp")).unwrap();
        let ctx = ToolContext {
            workspace: ws,
            runner: Arc::new(wright_sandbox::ProcessRunner::default()),
            emitter: wright_events::Emitter::new("t", vec![]),
            cancel: tokio_util::sync::CancellationToken::new(),
            exec,
        };
        TaskEnv { ctx, command_timeout: Duration::from_secs(5), judge: None, agent: None }
    }

    #[tokio::test]
    async fn validation_runs_every_command_and_reports_each() {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path());
        std::fs::write(env.ctx.workspace.root().join("a.txt"), "hello\n").unwrap();
        let plan = parse(
            r#"{"id": "v", "type": "validation", "description": "checks",
                "validation_criteria": ["cat a.txt", {"command": "echo oops >&2; exit 3"}, "test -f a.txt"]}"#,
            Format::Json,
        )
        .unwrap();
        let handlers = Handlers::builtin();
        let r = handlers.get("validation").unwrap().run(&plan.tasks[0], &env).await;
        let d = &r.validation_details;
        assert_eq!(d.overall_status, OverallStatus::Failed);
        let seen: Vec<(&str, Option<i32>)> =
            d.commands_executed.iter().map(|c| (c.command.as_str(), c.exit_code)).collect();
        assert_eq!(seen, vec![("cat a.txt", Some(0)), ("echo oops >&2; exit 3", Some(3)), ("test -f a.txt", Some(0))]);
        assert_eq!(d.commands_executed[0].stdout, "hello\n");
        assert_eq!(d.commands_executed[1].stderr, "oops\n");
        assert_eq!(r.message, "Validation failed: `echo oops >&2; exit 3` exited 3.");
    }

    #[tokio::test]
    async fn descriptive_criteria_are_never_counted_as_commands() {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path());
        let plan = parse(
            r#"{"id": "v", "type": "validation", "description": "checks",
                "validation_criteria": ["true", {"description": "the page has a title"}]}"#,
            Format::Json,
        )
        .unwrap();
        let r = Validation.run(&plan.tasks[0], &env).await;
        assert_eq!(r.validation_details.commands_executed.len(), 1);
        assert_eq!(r.validation_details.judged.len(), 1);
        assert!(!r.validation_details.judged[0].met, "no judge, so not met");
        assert_eq!(r.validation_details.overall_status, OverallStatus::Failed);
    }

    #[tokio::test]
    async fn no_op_passes_and_unknown_types_list_the_known_ones() {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path());
        let plan = parse(r#"{"id": "n", "type": "no_op", "description": "nothing"}"#, Format::Json).unwrap();
        let handlers = Handlers::builtin();
        let r = handlers.get("no_op").unwrap().run(&plan.tasks[0], &env).await;
        assert_eq!(r.validation_details.overall_status, OverallStatus::Skipped);
        let e = handlers.get("code_review").err().unwrap();
        assert_eq!(
            e.to_string(),
            "unknown task type `code_review`; the types are: ai_interaction, code_generation, no_op, planning, validation"
        );
        assert_eq!(handlers.kinds(), vec!["ai_interaction", "code_generation", "no_op", "planning", "validation"]);
        let bad = parse(
            r#"[{"id": "a", "type": "no_op", "description": "x"}, {"id": "b", "type": "deploy", "description": "y"}]"#,
            Format::Json,
        )
        .unwrap();
        assert_eq!(handlers.check(&bad).unwrap_err().kind, "deploy");
    }
}
