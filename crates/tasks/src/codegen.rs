//! The model-driven task types: gather the task's context, have the model do the work with the
//! file and command tools, run the validation criteria, and hand failures back as fix attempts
//! (at most 3; the last starts from a fresh conversation: the [`FixPlan`] builds follow too).
//! Output artifacts that were not written are a failure like a failing command. `code_generation`, `planning` and
//! `ai_interaction` differ only in their system prompt and in what they check besides the
//! criteria ([`Work`]).

use crate::handlers::{TaskEnv, TaskHandler, failed_message, validate};
use crate::{Format, OverallStatus, Task, TaskResult, ValidationDetails};
use wright_agent::fixing::{DEFAULT_FIX_ATTEMPTS, FixAttempt, FixLoop, FixPlan, Round, fix_loop};
use wright_agent::{LoopStats, PhaseEnd};
use wright_events::Phase;
use wright_provider::Message;

/// The system prompts: stable, so providers can cache them.
const CODE_SYSTEM: &str = "You change an existing software project to complete one task. Read the files you \
need first (readFile, listFiles, searchFiles) and reuse what is there. Change only what the task needs; keep \
the project's style and every constraint. Write files with createFile, updateFile or applyPatch; run commands \
with runCommand. The task's validation commands will be run when you stop calling tools: run them yourself \
first when you can. When the work is done, answer with a short summary and no tool calls.";

const PLANNING_SYSTEM: &str = "You plan work on an existing software project. Read what you need first \
(readFile, listFiles, searchFiles); change no file but the plan. Write the plan with createFile as a JSON \
object {\"goal\": \"…\", \"tasks\": [...]} where each task has \"id\" (letters, digits, - _ .), \"type\" \
(code_generation, validation, ai_interaction or no_op), \"description\", and, as they help, \"instructions\" \
(a list of steps), \"input_artifacts\" and \"output_artifacts\" (paths relative to the project), \
\"constraints\", \"validation_criteria\" (shell commands that must exit 0) and \"depends_on\" (ids of earlier \
tasks). Keep tasks small, each checked by a command. When the plan is written, answer with a short summary \
and no tool calls.";

const ANSWER_SYSTEM: &str = "You answer a question about an existing software project, or do a small piece \
of work on it. Read what you need first (readFile, listFiles, searchFiles) and base the answer on what the \
files say. Write files only when the task names them as outputs. Answer in plain words, with no tool calls, \
when you are done.";

/// Most characters of one artifact's content put in the first message.
const MAX_ARTIFACT_CHARS: usize = 12_000;
/// Most entries of a folder's tree.
const MAX_TREE_ENTRIES: usize = 300;
/// Where a planning task writes its plan when it names no output.
pub const DEFAULT_PLAN: &str = "plan.json";

/// How one model-driven type works.
pub(crate) struct Work {
    system: &'static str,
    /// What the result says when the checks pass, and when there were none.
    passed: &'static str,
    unchecked: &'static str,
    /// Failures beyond the criteria, as sentences the model reads (a plan that does not parse).
    check: fn(&Task, &TaskEnv) -> Vec<String>,
}

fn no_check(_: &Task, _: &TaskEnv) -> Vec<String> {
    Vec::new()
}

/// `code_generation`: the model changes the project.
pub struct CodeGeneration;

#[async_trait::async_trait]
impl TaskHandler for CodeGeneration {
    fn kind(&self) -> &'static str {
        "code_generation"
    }
    fn about(&self) -> &'static str {
        "the model changes the project; validation commands decide, with up to 3 fix attempts"
    }
    async fn run(&self, task: &Task, env: &TaskEnv) -> TaskResult {
        let w = Work {
            system: CODE_SYSTEM,
            passed: "Code generation completed and validation passed.",
            unchecked: "Code generation completed; the task has no validation criteria.",
            check: no_check,
        };
        work(task, env, &w).await
    }
}

/// `planning`: the model writes a plan (a task file) that `wright task run` can run next.
pub struct Planning;

#[async_trait::async_trait]
impl TaskHandler for Planning {
    fn kind(&self) -> &'static str {
        "planning"
    }
    fn about(&self) -> &'static str {
        "the model writes a plan of tasks (to its output artifact, else plan.json) that must read as a task file"
    }
    async fn run(&self, task: &Task, env: &TaskEnv) -> TaskResult {
        let mut task = task.clone();
        if task.output_artifacts.is_empty() {
            task.output_artifacts.push(DEFAULT_PLAN.to_string());
        }
        let w = Work {
            system: PLANNING_SYSTEM,
            passed: "The plan is written, reads as a task file, and validation passed.",
            unchecked: "The plan is written and reads as a task file.",
            check: plan_check,
        };
        let mut r = work(&task, env, &w).await;
        if r.validation_details.overall_status != OverallStatus::Failed {
            let path = &task.output_artifacts[0];
            let tasks = read_plan(path, env).map(|p| p.tasks.len()).unwrap_or(0);
            r.ai_result = serde_json::json!({
                "content": r.ai_result.get("content").cloned().unwrap_or_default(),
                "plan": path,
                "tasks": tasks,
            });
        }
        r
    }
}

/// The plan a planning task wrote: its first output artifact, read as a task file.
fn read_plan(path: &str, env: &TaskEnv) -> Result<crate::Plan, String> {
    let bytes = env.ctx.workspace.read(path).map_err(|e| e.to_string())?;
    crate::parse(&String::from_utf8_lossy(&bytes), Format::of(std::path::Path::new(path))).map_err(|e| e.to_string())
}

fn plan_check(task: &Task, env: &TaskEnv) -> Vec<String> {
    match task.output_artifacts.first() {
        Some(path) if env.ctx.workspace.read(path).is_ok() => match read_plan(path, env) {
            Ok(_) => Vec::new(),
            Err(e) => vec![format!("`{path}` is not a usable plan: {e}")],
        },
        // A missing file is reported as an unwritten output already.
        _ => Vec::new(),
    }
}

/// `ai_interaction`: the model answers (reading the project; writing only named outputs).
pub struct AiInteraction;

#[async_trait::async_trait]
impl TaskHandler for AiInteraction {
    fn kind(&self) -> &'static str {
        "ai_interaction"
    }
    fn about(&self) -> &'static str {
        "the model answers about the project (its answer is the result); criteria, if any, are checked"
    }
    async fn run(&self, task: &Task, env: &TaskEnv) -> TaskResult {
        let w = Work {
            system: ANSWER_SYSTEM,
            passed: "The model answered and validation passed.",
            unchecked: "The model answered.",
            check: no_check,
        };
        work(task, env, &w).await
    }
}

/// The loop every model-driven type shares.
pub(crate) async fn work(task: &Task, env: &TaskEnv, w: &Work) -> TaskResult {
    let Some(agent) = &env.agent else {
        return failed(task, "this task type needs a model, and none is configured".into(), None);
    };
    let mut agent = agent.clone();
    if let Some(m) = &task.model {
        agent.model = m.clone();
    }
    if let Some(t) = task.limits.and_then(|l| l.max_turns) {
        agent.max_turns = t;
    }
    let fixes = FixPlan::new(
        task.limits.and_then(|l| l.max_fix_attempts).map_or(DEFAULT_FIX_ATTEMPTS, |m| m.min(DEFAULT_FIX_ATTEMPTS)),
    );
    let first = first_message(task, env);
    let mut messages = vec![Message::system(w.system), Message::user(first.clone())];
    let mut fixing = TaskFixing {
        task,
        env,
        w,
        agent,
        before: artifacts(task, env),
        first,
        stats: LoopStats::default(),
        said: String::new(),
    };
    // Each task is a conversation of its own in the run's record.
    journal(env, Phase::Generating, true);
    if let Some(end) = fixing.run(&mut messages).await {
        return end;
    }
    fix_loop(&mut fixing, fixes, &mut messages).await
}

/// A task between its first answer and its result: the task's validation as the fix loop's
/// verification, the failing checks as its fix message.
struct TaskFixing<'a> {
    task: &'a Task,
    env: &'a TaskEnv,
    w: &'a Work,
    agent: wright_agent::AgentLoop,
    /// The output artifacts before the task ran, to tell which were written.
    before: Vec<(String, Option<Vec<u8>>)>,
    first: String,
    stats: LoopStats,
    /// What the model last said when it stopped, the task's answer.
    said: String,
}

/// The validation that failed, the artifacts not written and the other problems.
struct Failing {
    details: ValidationDetails,
    missing: Vec<String>,
    extra: Vec<String>,
}

impl FixLoop for TaskFixing<'_> {
    type End = TaskResult;
    type Failed = Failing;

    async fn verify(&mut self, _: u32) -> Round<TaskResult, Failing> {
        let (task, env) = (self.task, self.env);
        let mut details = validate(task, env).await;
        let missing = unwritten(env, &self.before);
        let extra = (self.w.check)(task, env);
        if !missing.is_empty() || !extra.is_empty() {
            details.overall_status = OverallStatus::Failed;
        }
        if details.overall_status != OverallStatus::Failed {
            let message =
                if details.overall_status == OverallStatus::Passed { self.w.passed } else { self.w.unchecked };
            return Round::Done(TaskResult {
                message: message.to_string(),
                ai_result: serde_json::json!({ "content": self.said }),
                validation_details: details,
            });
        }
        Round::Failed(Failing { details, missing, extra })
    }

    fn may_fix(&self) -> bool {
        !self.env.ctx.cancel.is_cancelled()
    }

    fn exhausted(&mut self, f: Failing, made: u32) -> TaskResult {
        let why = reasons(&f.details, &f.missing, &f.extra);
        TaskResult {
            message: format!("{why} (after {made} fix attempt(s))"),
            ai_result: serde_json::json!({ "content": self.said }),
            validation_details: f.details,
        }
    }

    async fn fix_message(&mut self, f: &Failing, next: FixAttempt) -> String {
        let report = fix_report(&f.details, &f.missing, &f.extra);
        journal(self.env, Phase::Fixing, next.fresh);
        if next.fresh {
            // The last attempt starts over: a long failing conversation misleads more than it helps.
            format!(
                "{}\n\nAn earlier attempt at this task left it failing. The project now holds that \
                     attempt's changes. What fails:\n{report}",
                self.first
            )
        } else {
            format!(
                "The task is not done yet. What fails:\n{report}\nFix the project (not the checks) and stop \
                     calling tools when it passes."
            )
        }
    }

    fn system(&self) -> String {
        self.w.system.to_string()
    }

    async fn run(&mut self, messages: &mut Vec<Message>) -> Option<TaskResult> {
        let task = self.task;
        match self.agent.run(messages, &mut self.stats).await {
            PhaseEnd::Finished(text) => {
                self.said = text;
                None
            }
            PhaseEnd::Cancelled => Some(failed(task, "the task was cancelled".into(), None)),
            PhaseEnd::Provider(e) => Some(failed(task, format!("the model service failed: {e}"), None)),
            PhaseEnd::BudgetSpent(usd) => Some(failed(task, format!("the cost limit was reached (${usd:.4})"), None)),
            PhaseEnd::MaxTurns => Some(failed(task, "the model used all its turns".into(), None)),
            PhaseEnd::Stuck(why) => Some(failed(task, format!("the model kept repeating itself ({why})"), None)),
        }
    }
}

/// Point the run's record (when it has one) at `phase`; `new_conversation` when the messages
/// start over, so the journal stores them all.
pub(crate) fn journal(env: &TaskEnv, phase: Phase, new_conversation: bool) {
    if let Some(j) = env.agent.as_ref().and_then(|a| a.journal.as_ref()) {
        j.set_phase(phase);
        if new_conversation {
            j.restart();
        }
    }
}

pub(crate) fn failed(task: &Task, why: String, details: Option<ValidationDetails>) -> TaskResult {
    TaskResult {
        message: format!("Task {} failed: {why}.", task.id),
        ai_result: serde_json::Value::Null,
        validation_details: details.unwrap_or_else(|| ValidationDetails {
            overall_status: OverallStatus::Failed,
            ..ValidationDetails::skipped()
        }),
    }
}

/// The failing checks, the missing artifacts and the other problems, in one sentence.
fn reasons(details: &ValidationDetails, missing: &[String], extra: &[String]) -> String {
    let mut why =
        if details.commands_executed.iter().any(|c| c.exit_code != Some(0)) || details.judged.iter().any(|j| !j.met) {
            failed_message(details)
        } else {
            "Validation failed.".to_string()
        };
    if !missing.is_empty() {
        why.push_str(&format!(" Not written: {}.", missing.join(", ")));
    }
    for e in extra {
        why.push_str(&format!(" {e}."));
    }
    why
}

/// What failed, as the model reads it: each failing command with the end of its output.
fn fix_report(details: &ValidationDetails, missing: &[String], extra: &[String]) -> String {
    let mut r = String::new();
    for c in details.commands_executed.iter().filter(|c| c.exit_code != Some(0)) {
        let code = c.exit_code.map_or("did not finish".to_string(), |n| format!("exit {n}"));
        r.push_str(&format!(
            "- `{}` ({code})\n  stdout: {}\n  stderr: {}\n",
            c.command,
            wright_tools::clip_tail(c.stdout.trim(), 3000),
            wright_tools::clip_tail(c.stderr.trim(), 3000)
        ));
    }
    for j in details.judged.iter().filter(|j| !j.met) {
        r.push_str(&format!("- not met: {} ({})\n", j.criterion, j.reasoning));
    }
    for m in missing {
        r.push_str(&format!("- `{m}` is an output of this task but was not written\n"));
    }
    for e in extra {
        r.push_str(&format!("- {e}\n"));
    }
    r
}

/// The output artifacts' contents before the task ran (`None`: not there).
fn artifacts(task: &Task, env: &TaskEnv) -> Vec<(String, Option<Vec<u8>>)> {
    task.output_artifacts.iter().map(|p| (p.clone(), env.ctx.workspace.read(p).ok())).collect()
}

/// Output artifacts that are missing or unchanged.
fn unwritten(env: &TaskEnv, before: &[(String, Option<Vec<u8>>)]) -> Vec<String> {
    before
        .iter()
        .filter(|(path, old)| match env.ctx.workspace.read(path) {
            Ok(now) => old.as_deref() == Some(now.as_slice()),
            Err(_) => true,
        })
        .map(|(path, _)| path.clone())
        .collect()
}

/// The first user message: the task, its steps, its context, its constraints, how it will be
/// checked, and the task itself as written.
pub(crate) fn first_message(task: &Task, env: &TaskEnv) -> String {
    let mut m = format!("Task `{}`: {}\n", task.id, task.description.trim());
    let steps = task.instructions.lines();
    if !steps.is_empty() {
        m.push_str("\nInstructions:\n");
        for s in steps {
            m.push_str(&format!("- {}\n", s.trim()));
        }
    }
    let context = gather_context(task, env);
    if !context.is_empty() {
        m.push_str("\nContext (files and folders named by the task):\n");
        m.push_str(&context);
    }
    if !task.constraints.is_empty() {
        m.push_str("\nConstraints (keep every one):\n");
        for c in &task.constraints {
            m.push_str(&format!("- {c}\n"));
        }
    }
    if !task.output_artifacts.is_empty() {
        m.push_str(&format!("\nFiles this task must create or change: {}\n", task.output_artifacts.join(", ")));
    }
    if !task.validation_criteria.is_empty() {
        m.push_str("\nHow it will be checked:\n");
        for c in &task.validation_criteria {
            match c.command() {
                Some(cmd) => m.push_str(&format!("- the command `{cmd}` must exit 0\n")),
                None => m.push_str(&format!("- {}\n", c.text())),
            }
        }
    }
    if let Ok(raw) = serde_json::to_string_pretty(task) {
        m.push_str(&format!("\nThe task as written:\n```json\n{raw}\n```\n"));
    }
    m
}

/// Each input artifact: a file's content, or a folder's tree. One that cannot be read is
/// logged (as a warning in the event stream) and skipped.
fn gather_context(task: &Task, env: &TaskEnv) -> String {
    let mut out = String::new();
    for path in &task.input_artifacts {
        if env.ctx.workspace.is_dir(path) {
            match wright_tools::project_files_under(&env.ctx.workspace, path) {
                Ok(files) => out.push_str(&format!("\nFolder `{path}`:\n```\n{}```\n", tree(files))),
                Err(e) => skip(env, path, &e.to_string()),
            }
            continue;
        }
        match env.ctx.workspace.read(path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                out.push_str(&format!(
                    "\nFile `{path}`:\n```\n{}\n```\n",
                    wright_tools::clip(&text, MAX_ARTIFACT_CHARS)
                ));
            }
            Err(e) => skip(env, path, &e.to_string()),
        }
    }
    out
}

fn skip(env: &TaskEnv, path: &str, why: &str) {
    env.ctx.emitter.status(wright_events::Level::Warning, format!("The input artifact `{path}` was skipped: {why}."));
}

/// A folder as an ASCII tree (its project files: dependencies and hidden folders left out).
pub(crate) fn tree(files: Vec<String>) -> String {
    let total = files.len();
    let mut out = String::new();
    let mut printed: Vec<String> = Vec::new();
    for f in files.iter().take(MAX_TREE_ENTRIES) {
        let parts: Vec<&str> = f.split('/').collect();
        for (depth, part) in parts.iter().enumerate() {
            let prefix = parts[..=depth].join("/");
            if printed.contains(&prefix) {
                continue;
            }
            let name = if depth + 1 == parts.len() { (*part).to_string() } else { format!("{part}/") };
            out.push_str(&format!("{}{name}\n", "  ".repeat(depth)));
            printed.push(prefix);
        }
    }
    if total > MAX_TREE_ENTRIES {
        out.push_str(&format!("… and {} more files\n", total - MAX_TREE_ENTRIES));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Format, parse};
    use std::sync::Arc;
    use wright_provider::scripted::{ScriptStep, ScriptedProvider};

    fn env(dir: &std::path::Path, steps: Vec<ScriptStep>) -> TaskEnv {
        let ws = wright_sandbox::Workspace::open(dir.join("ws"), wright_sandbox::WorkspaceLimits::default()).unwrap();
        let exec = wright_tools::ExecConfig::for_build(&dir.join("home"), &dir.join("tmp")).unwrap();
        let ctx = wright_tools::ToolContext {
            workspace: ws,
            runner: Arc::new(wright_sandbox::ProcessRunner::default()),
            emitter: wright_events::Emitter::new("t", vec![]),
            cancel: tokio_util::sync::CancellationToken::new(),
            exec,
        };
        let agent = wright_agent::AgentLoop {
            provider: Arc::new(ScriptedProvider::new(steps)),
            registry: Arc::new(wright_tools::builtin_registry()),
            ctx: ctx.clone(),
            model: "m".into(),
            temperature: None,
            max_tokens: None,
            retry: wright_provider::RetryPolicy::default(),
            max_turns: 10,
            pricing: wright_agent::Pricing::default(),
            max_cost_usd: None,
            journal: None,
            fit: Default::default(),
            budget: None,
        };
        TaskEnv { ctx, command_timeout: std::time::Duration::from_secs(10), judge: None, agent: Some(agent) }
    }

    const TASK: &str = r#"{"id": "add", "type": "code_generation", "description": "add an add function",
        "input_artifacts": ["math.js", "missing.js", "lib"], "output_artifacts": ["math.js"],
        "constraints": ["no dependencies"], "validation_criteria": ["node -e \"require('./math.js').add(1,2)===3||process.exit(1)\""]}"#;

    #[tokio::test]
    async fn a_failed_validation_goes_back_to_the_model_and_the_fix_passes() {
        let dir = tempfile::tempdir().unwrap();
        let steps = vec![
            ScriptStep::calls(&[(
                "updateFile",
                serde_json::json!({"path": "math.js", "content": "exports.add = (a, b) => a - b;\n"}),
            )]),
            ScriptStep::text("added"),
            ScriptStep::calls(&[(
                "updateFile",
                serde_json::json!({"path": "math.js", "content": "exports.add = (a, b) => a + b;\n"}),
            )]),
            ScriptStep::text("fixed the sign"),
        ];
        let env = env(dir.path(), steps);
        let root = env.ctx.workspace.root().to_path_buf();
        std::fs::write(root.join("math.js"), "exports.sub = (a, b) => a - b;\n").unwrap();
        std::fs::create_dir_all(root.join("lib/util")).unwrap();
        std::fs::write(root.join("lib/util/x.js"), "\n").unwrap();
        let plan = parse(TASK, Format::Json).unwrap();
        let first = first_message(&plan.tasks[0], &env);
        assert!(
            first.contains("exports.sub") && first.contains("util/") && first.contains("no dependencies"),
            "{first}"
        );
        let r = CodeGeneration.run(&plan.tasks[0], &env).await;
        assert_eq!(r.message, "Code generation completed and validation passed.", "{r:?}");
        assert_eq!(r.validation_details.overall_status, OverallStatus::Passed);
        assert_eq!(r.validation_details.commands_executed.len(), 1);
        assert_eq!(r.ai_result["content"], "fixed the sign");
    }

    #[tokio::test]
    async fn an_output_artifact_left_unwritten_fails_the_task() {
        let dir = tempfile::tempdir().unwrap();
        let mut steps = vec![ScriptStep::text("nothing to do")];
        steps.extend((0..3).map(|_| ScriptStep::text("still nothing")));
        let env = env(dir.path(), steps);
        std::fs::write(env.ctx.workspace.root().join("math.js"), "exports.add = (a, b) => a + b;\n").unwrap();
        let plan = parse(TASK, Format::Json).unwrap();
        let r = CodeGeneration.run(&plan.tasks[0], &env).await;
        assert_eq!(r.validation_details.overall_status, OverallStatus::Failed);
        assert!(
            r.message.contains("Not written: math.js") && r.message.contains("after 3 fix attempt(s)"),
            "{}",
            r.message
        );
    }

    #[tokio::test]
    async fn a_planning_task_must_write_a_plan_that_reads_as_a_task_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = serde_json::json!({"goal": "g", "tasks": [
            {"id": "a", "type": "validation", "description": "tests pass", "validation_criteria": ["true"]}]});
        let steps = vec![
            ScriptStep::calls(&[(
                "createFile",
                serde_json::json!({"path": "plan.json", "content": "{\"tasks\": [{\"id\": \"a\"}]}"}),
            )]),
            ScriptStep::text("planned"),
            ScriptStep::calls(&[("updateFile", serde_json::json!({"path": "plan.json", "content": good.to_string()}))]),
            ScriptStep::text("fixed the plan"),
        ];
        let env = env(dir.path(), steps);
        let plan =
            parse(r#"{"id": "plan", "type": "planning", "description": "plan the work"}"#, Format::Json).unwrap();
        let r = Planning.run(&plan.tasks[0], &env).await;
        assert_eq!(r.validation_details.overall_status, OverallStatus::Skipped, "{r:?}");
        assert_eq!(r.message, "The plan is written and reads as a task file.");
        assert_eq!((r.ai_result["plan"].as_str(), r.ai_result["tasks"].as_u64()), (Some("plan.json"), Some(1)));
        assert_eq!(r.ai_result["content"], "fixed the plan");
    }

    #[tokio::test]
    async fn an_ai_interaction_answer_is_the_result() {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path(), vec![ScriptStep::text("The app starts in main.js.")]);
        let plan = parse(
            r#"{"id": "ask", "type": "ai_interaction", "description": "where does the app start?"}"#,
            Format::Json,
        )
        .unwrap();
        let r = AiInteraction.run(&plan.tasks[0], &env).await;
        assert_eq!(r.message, "The model answered.");
        assert_eq!(r.ai_result["content"], "The app starts in main.js.");
    }

    #[test]
    fn folders_become_trees() {
        let dir = tempfile::tempdir().unwrap();
        // A folder of its own: the temporary folder's name starts with a dot.
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("src/ui")).unwrap();
        std::fs::write(root.join("src/ui/button.js"), "x\n").unwrap();
        std::fs::write(root.join("src/main.js"), "x\n").unwrap();
        let ws = wright_sandbox::Workspace::open(&root, Default::default()).unwrap();
        let t = tree(wright_tools::project_files(&ws));
        assert!(
            t.contains("src/\n") && t.contains("  ui/\n") && t.contains("    button.js\n") && t.contains("  main.js\n"),
            "{t}"
        );
    }
}
