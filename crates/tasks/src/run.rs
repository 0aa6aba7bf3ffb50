//! Running a plan: its tasks in dependency order, each through the handler of its type. A
//! task whose dependency did not pass is not run (and says which one stopped it); a task with a
//! time limit is stopped at it. Each outcome goes to the [`Recorder`] (the store) before the
//! next task starts, so a run stopped half-way can be resumed: a task that passed before, with
//! the same definition ([`task_hash`]), is not run again unless asked.

use crate::{Handlers, OverallStatus, Plan, Task, TaskEnv, TaskFileError, TaskResult, UnknownType, ValidationDetails};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};
use wright_events::{EventKind, Level};

pub use wright_events::TaskStatus;

/// What an earlier run of the plan left for one task.
#[derive(Debug, Clone)]
pub struct Earlier {
    pub status: TaskStatus,
    pub task_hash: String,
    pub result: TaskResult,
}

/// How to run a plan.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The run being resumed, by task id.
    pub earlier: HashMap<String, Earlier>,
    /// Tasks to run again even though they passed in the earlier run.
    pub rerun: HashSet<String>,
}

/// One task's outcome in a run.
#[derive(Debug, Clone)]
pub struct TaskOutcome {
    pub task_id: String,
    pub kind: String,
    /// Where it came in the run, from 0.
    pub position: u32,
    pub status: TaskStatus,
    pub result: TaskResult,
    pub task_hash: String,
    pub started_at: String,
    pub finished_at: String,
    pub duration_ms: u64,
    /// Taken from the earlier run rather than run again.
    pub reused: bool,
}

/// Keeps each outcome as it happens. Failing to keep one is the recorder's to report; the run
/// goes on (the work is what was asked for, the record a by-product).
#[async_trait::async_trait]
pub trait Recorder: Send + Sync {
    async fn record(&self, outcome: &TaskOutcome);
}

/// Why a plan could not start.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Plan(#[from] TaskFileError),
    #[error(transparent)]
    Type(#[from] UnknownType),
}

/// Every task's outcome, in run order.
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    pub outcomes: Vec<TaskOutcome>,
}

impl RunSummary {
    /// At least one task ran, and every task passed or had nothing to check.
    pub fn success(&self) -> bool {
        !self.outcomes.is_empty() && self.outcomes.iter().all(|o| o.status.ok())
    }

    /// How many ended each way: passed, failed, skipped, not run.
    pub fn counts(&self) -> [usize; 4] {
        let n = |s: TaskStatus| self.outcomes.iter().filter(|o| o.status == s).count();
        [n(TaskStatus::Passed), n(TaskStatus::Failed), n(TaskStatus::Skipped), n(TaskStatus::NotRun)]
    }
}

/// SHA-256 (hex) of a task as written: what tells a resumed run that a task was edited.
pub fn task_hash(task: &Task) -> String {
    let bytes = serde_json::to_vec(task).unwrap_or_default();
    Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn status_of(result: &TaskResult) -> TaskStatus {
    match result.validation_details.overall_status {
        OverallStatus::Passed => TaskStatus::Passed,
        OverallStatus::Skipped => TaskStatus::Skipped,
        OverallStatus::Failed => TaskStatus::Failed,
    }
}

fn not_run(message: String) -> TaskResult {
    TaskResult { message, ai_result: serde_json::Value::Null, validation_details: ValidationDetails::skipped() }
}

/// Run `plan` in `env` (one workspace, sandbox and event stream for all its tasks).
pub async fn run_plan(
    plan: &Plan,
    handlers: &Handlers,
    env: &TaskEnv,
    opts: &RunOptions,
    recorder: &dyn Recorder,
) -> Result<RunSummary, RunError> {
    handlers.check(plan)?;
    let order = crate::order(plan)?;
    let total = u32::try_from(order.len()).unwrap_or(u32::MAX);
    let emitter = &env.ctx.emitter;
    let names: Vec<&str> = order.iter().map(|&i| plan.tasks[i].id.as_str()).collect();
    emitter.status(Level::Info, format!("{} task(s), in this order: {}.", order.len(), names.join(", ")));
    let mut done: HashMap<&str, TaskStatus> = HashMap::new();
    let mut summary = RunSummary::default();
    for (pos, &i) in order.iter().enumerate() {
        let task = &plan.tasks[i];
        let hash = task_hash(task);
        let position = u32::try_from(pos).unwrap_or(u32::MAX);
        let started_at = wright_events::now();
        let clock = Instant::now();
        let blocked: Vec<&str> =
            task.depends_on.iter().map(String::as_str).filter(|d| !done.get(d).is_some_and(|s| s.ok())).collect();
        let earlier = opts
            .earlier
            .get(&task.id)
            .filter(|e| e.status.ok() && e.task_hash == hash && !opts.rerun.contains(&task.id));
        let (status, result, reused) = if env.ctx.cancel.is_cancelled() {
            (TaskStatus::NotRun, not_run("Not run: the run was stopped before this task.".into()), false)
        } else if !blocked.is_empty() {
            let why = format!("Not run: it depends on {}, which did not pass.", blocked.join(", "));
            (TaskStatus::NotRun, not_run(why), false)
        } else if let Some(e) = earlier {
            let mut r = e.result.clone();
            r.message =
                format!("{} (kept from the earlier run: the task is unchanged)", r.message.trim_end_matches('.'));
            (e.status, r, true)
        } else {
            emitter.emit(EventKind::TaskStarted {
                task: task.id.clone(),
                kind: task.kind.clone(),
                description: task.description.clone(),
                position: position + 1,
                total,
            });
            let result = run_one(task, handlers, env).await?;
            (status_of(&result), result, false)
        };
        let outcome = TaskOutcome {
            task_id: task.id.clone(),
            kind: task.kind.clone(),
            position,
            status,
            result,
            task_hash: hash,
            started_at,
            finished_at: wright_events::now(),
            duration_ms: u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX),
            reused,
        };
        // Kept before it is announced, as every event is.
        recorder.record(&outcome).await;
        emitter.emit(EventKind::TaskFinished {
            task: outcome.task_id.clone(),
            status,
            message: outcome.result.message.clone(),
            duration_ms: outcome.duration_ms,
            result: serde_json::to_value(&outcome.result).unwrap_or_default(),
        });
        done.insert(task.id.as_str(), status);
        summary.outcomes.push(outcome);
    }
    Ok(summary)
}

/// One task through its handler, under its own limits: a time limit cancels only this task,
/// and a cost limit replaces the run's for it.
async fn run_one(task: &Task, handlers: &Handlers, env: &TaskEnv) -> Result<TaskResult, RunError> {
    let handler = handlers.get(&task.kind)?;
    let stop = env.ctx.cancel.child_token();
    let mut own = env.clone();
    own.ctx.cancel = stop.clone();
    if let Some(agent) = own.agent.as_mut() {
        agent.ctx.cancel = stop.clone();
        if let Some(usd) = task.limits.and_then(|l| l.max_cost_usd) {
            agent.max_cost_usd = Some(usd);
        }
    }
    let limit = task.limits.and_then(|l| l.timeout_secs).map(Duration::from_secs);
    let timer = limit.map(|d| {
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(d).await;
            stop.cancel();
        })
    });
    let mut result = handler.run(task, &own).await;
    if let Some(t) = timer {
        t.abort();
    }
    if stop.is_cancelled() && !env.ctx.cancel.is_cancelled() {
        let secs = limit.map_or(0, |d| d.as_secs());
        result.message = format!("Task {} stopped: it ran past its time limit of {secs} s.", task.id);
        result.validation_details.overall_status = OverallStatus::Failed;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Format, parse};
    use std::sync::{Arc, Mutex};
    use wright_events::MemorySink;

    #[derive(Default)]
    struct Kept(Mutex<Vec<(String, TaskStatus)>>);

    #[async_trait::async_trait]
    impl Recorder for Kept {
        async fn record(&self, o: &TaskOutcome) {
            self.0.lock().unwrap().push((o.task_id.clone(), o.status));
        }
    }

    fn env(dir: &std::path::Path, sink: Arc<MemorySink>) -> TaskEnv {
        let ws = wright_sandbox::Workspace::open(dir.join("ws"), wright_sandbox::WorkspaceLimits::default()).unwrap();
        let exec = wright_tools::ExecConfig::for_build(&dir.join("home"), &dir.join("tmp")).unwrap();
        let ctx = wright_tools::ToolContext {
            workspace: ws,
            runner: Arc::new(wright_sandbox::ProcessRunner::default()),
            emitter: wright_events::Emitter::new("run", vec![sink]),
            cancel: tokio_util::sync::CancellationToken::new(),
            exec,
        };
        TaskEnv { ctx, command_timeout: Duration::from_secs(10), judge: None, agent: None }
    }

    const PLAN: &str = r#"{"goal": "g", "tasks": [
        {"id": "c", "type": "validation", "description": "after b", "depends_on": ["b"], "validation_criteria": ["true"]},
        {"id": "a", "type": "validation", "description": "first", "validation_criteria": ["echo a >> log.txt"]},
        {"id": "b", "type": "validation", "description": "fails", "depends_on": ["a"], "validation_criteria": ["exit 4"]},
        {"id": "d", "type": "no_op", "description": "nothing"}]}"#;

    fn started(sink: &MemorySink) -> Vec<String> {
        sink.events()
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::TaskStarted { task, .. } => Some(task),
                _ => None,
            })
            .collect()
    }

    #[tokio::test]
    async fn tasks_run_in_order_and_a_failed_dependency_stops_its_dependents() {
        let dir = tempfile::tempdir().unwrap();
        let sink = Arc::new(MemorySink::new());
        let env = env(dir.path(), sink.clone());
        let plan = parse(PLAN, Format::Json).unwrap();
        let kept = Kept::default();
        let summary = run_plan(&plan, &Handlers::builtin(), &env, &RunOptions::default(), &kept).await.unwrap();
        let seen: Vec<(String, TaskStatus)> = kept.0.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                ("a".to_string(), TaskStatus::Passed),
                ("b".to_string(), TaskStatus::Failed),
                ("c".to_string(), TaskStatus::NotRun),
                ("d".to_string(), TaskStatus::Skipped)
            ]
        );
        assert_eq!(summary.counts(), [1, 1, 1, 1]);
        assert!(!summary.success());
        assert_eq!(summary.outcomes[2].result.message, "Not run: it depends on b, which did not pass.");
        assert_eq!(started(&sink), ["a", "b", "d"], "a task that does not run does not start");
        let finished: Vec<serde_json::Value> = sink
            .events()
            .into_iter()
            .filter(|e| e.kind.type_name() == "task_finished")
            .map(|e| serde_json::to_value(&e).unwrap())
            .collect();
        assert_eq!(finished.len(), 4);
        assert_eq!(finished[1]["status"], "failed");
        assert_eq!(finished[1]["result"]["validation_details"]["commands_executed"][0]["exit_code"], 4);
    }

    #[tokio::test]
    async fn a_resumed_run_keeps_what_passed_unless_the_task_changed_or_is_asked_for_again() {
        let dir = tempfile::tempdir().unwrap();
        let sink = Arc::new(MemorySink::new());
        let env = env(dir.path(), sink.clone());
        let plan = parse(PLAN, Format::Json).unwrap();
        let first =
            run_plan(&plan, &Handlers::builtin(), &env, &RunOptions::default(), &Kept::default()).await.unwrap();
        let earlier: HashMap<String, Earlier> = first
            .outcomes
            .iter()
            .map(|o| {
                (
                    o.task_id.clone(),
                    Earlier { status: o.status, task_hash: o.task_hash.clone(), result: o.result.clone() },
                )
            })
            .collect();
        let log = env.ctx.workspace.root().join("log.txt");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "a\n");

        let opts = RunOptions { earlier: earlier.clone(), rerun: HashSet::new() };
        let again = run_plan(&plan, &Handlers::builtin(), &env, &opts, &Kept::default()).await.unwrap();
        assert!(again.outcomes[0].reused && again.outcomes[0].status == TaskStatus::Passed);
        assert!(!again.outcomes[1].reused, "a failed task runs again");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "a\n", "a passed task is not run again");

        let opts = RunOptions { earlier: earlier.clone(), rerun: HashSet::from(["a".to_string()]) };
        run_plan(&plan, &Handlers::builtin(), &env, &opts, &Kept::default()).await.unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "a\na\n", "--rerun a runs it");

        let edited = PLAN.replace("echo a >> log.txt", "echo A >> log.txt");
        let edited = parse(&edited, Format::Json).unwrap();
        let opts = RunOptions { earlier, rerun: HashSet::new() };
        run_plan(&edited, &Handlers::builtin(), &env, &opts, &Kept::default()).await.unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "a\na\nA\n", "an edited task runs again");
    }

    #[tokio::test]
    async fn a_task_past_its_time_limit_is_stopped_and_the_run_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path(), Arc::new(MemorySink::new()));
        let plan = parse(
            r#"[{"id": "slow", "type": "validation", "description": "hangs", "validation_criteria": ["sleep 30"],
                 "limits": {"timeout_secs": 1}},
                {"id": "next", "type": "validation", "description": "runs", "validation_criteria": ["true"]}]"#,
            Format::Json,
        )
        .unwrap();
        let s = run_plan(&plan, &Handlers::builtin(), &env, &RunOptions::default(), &Kept::default()).await.unwrap();
        assert_eq!(s.outcomes[0].status, TaskStatus::Failed);
        assert_eq!(s.outcomes[0].result.message, "Task slow stopped: it ran past its time limit of 1 s.");
        assert_eq!(s.outcomes[0].result.validation_details.commands_executed[0].exit_code, None);
        assert_eq!(s.outcomes[1].status, TaskStatus::Passed, "the time limit was the task's, not the run's");
    }

    #[tokio::test]
    async fn an_unknown_type_is_refused_before_anything_runs() {
        let dir = tempfile::tempdir().unwrap();
        let sink = Arc::new(MemorySink::new());
        let env = env(dir.path(), sink.clone());
        let plan = parse(r#"[{"id": "x", "type": "deploy", "description": "ship it"}]"#, Format::Json).unwrap();
        let e =
            run_plan(&plan, &Handlers::builtin(), &env, &RunOptions::default(), &Kept::default()).await.unwrap_err();
        assert!(e.to_string().starts_with("unknown task type `deploy`"), "{e}");
        assert!(sink.events().is_empty());
    }

    #[test]
    fn the_hash_follows_the_definition() {
        let plan = parse(PLAN, Format::Json).unwrap();
        let (a, b) = (&plan.tasks[0], &plan.tasks[1]);
        assert_eq!(task_hash(a), task_hash(&a.clone()));
        assert_ne!(task_hash(a), task_hash(b));
        assert_eq!(task_hash(a).len(), 64);
        assert_eq!(TaskStatus::parse(TaskStatus::NotRun.as_str()), Some(TaskStatus::NotRun));
    }
}
