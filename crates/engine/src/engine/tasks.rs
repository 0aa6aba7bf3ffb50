//! Task runs (`wright task run`): a task file against an existing project, through the same
//! provider chain, sandbox and store as builds. A run is stored as a build (template `task`),
//! so its events, conversation and usage are kept, streamed and listed like a build's; each
//! task's outcome is a row of its own ([`wright_store::TaskRecord`]), which is what lets a
//! later run resume it.

use super::{Engine, RunParts};
use crate::EngineError;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use wright_agent::journal::Journal;
use wright_agent::{AgentLoop, Pricing};
use wright_events::{Emitter, EndReason, Event, EventKind, EventSink, Lang, Level, RunKind};
use wright_provider::RetryPolicy;
use wright_sandbox::Workspace;
use wright_store::{BuildFinish, LogWriter, NewBuild, RunEnd, RunId, RunStatus, Store, TaskRecord, Tokens};
use wright_tasks::{
    Earlier, Format, Handlers, ModelJudge, Plan, Recorder, RunOptions, RunSummary, TaskEnv, TaskOutcome, TaskResult,
    run_plan,
};
use wright_tools::{ToolContext, builtin_registry};

/// One task run to prepare.
#[derive(Debug, Clone)]
pub struct TaskJob {
    pub id: RunId,
    /// The task file (kept in the run's record).
    pub file: PathBuf,
    pub plan: Plan,
    /// The project to work on; it must exist.
    pub workspace: PathBuf,
    /// An earlier run of this plan (id or prefix) whose passed tasks are kept.
    pub resume: Option<String>,
    /// Tasks to run again although they passed in the resumed run.
    pub rerun: Vec<String>,
    /// A model other than the configured one.
    pub model: Option<String>,
    /// The worker that claimed the run from the queue (`wright serve`): the run's record is
    /// there already, and the store refuses its events once this holder has lost it. `None`:
    /// a run of its own (`wright task run`), recorded when it starts.
    pub holder: Option<String>,
    /// Kills the run's commands when the worker's lease runs out (see [`crate::Job::leash`]).
    pub leash: Option<wright_sandbox::Leash>,
}

/// Read a task file: TOML by its extension, else JSON. Errors name the file and the field.
pub fn load_task_file(path: &Path) -> Result<Plan, EngineError> {
    let bad = |e: String| EngineError::Usage(format!("task file {}: {e}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    read_plan(&text, Format::of(path)).map_err(bad)
}

/// A task file's text read and checked as `wright task check` does (fields, ids, dependencies,
/// known types), before anything runs. The error names the field.
pub fn read_plan(text: &str, format: Format) -> Result<Plan, String> {
    let plan = wright_tasks::parse(text, format).map_err(|e| e.to_string())?;
    Handlers::builtin().check(&plan).map_err(|e| e.to_string())?;
    Ok(plan)
}

/// A task run made ready by [`Engine::prepare_tasks`]; [`PreparedTasks::run`] runs it.
pub struct PreparedTasks {
    pub id: String,
    pub provider_kind: &'static str,
    pub model: String,
    /// One line on how commands are confined.
    pub sandbox: String,
    pub warnings: Vec<crate::notice::Warning>,
    pub workspace: Workspace,
    pub plan: Plan,
    /// Tasks of the resumed run that passed and will be kept (unless changed).
    pub kept: Vec<String>,
    file: PathBuf,
    resumed: Option<String>,
    options: RunOptions,
    parts: RunParts,
    retry: RetryPolicy,
    temperature: Option<f32>,
    /// The task run's token budget (`[budgets.task]`).
    budget: wright_agent::Budgeting,
    max_tokens: Option<u32>,
    max_turns: u32,
    max_cost_usd: Option<f64>,
    pricing: Pricing,
    holder: Option<String>,
    /// Cancelled when the store refuses this run's holder (see [`PreparedTasks::refusal`]).
    refused: CancellationToken,
}

/// How a task run ended.
pub struct TasksFinished {
    pub summary: RunSummary,
    /// Events that could not be stored (each is also logged).
    pub unsaved_events: u64,
    /// Why it failed (`tasks_failed`, `cancelled`); `None` when every task passed.
    pub end_reason: Option<EndReason>,
    /// The store refused the holder an event or the run's end (see [`crate::Finished::refused`]).
    pub refused: bool,
    /// This run's ending is the run's: the store took it.
    pub ended_here: bool,
}

impl Engine {
    /// Everything a task run needs, made ready: the project (which must exist), scratch home,
    /// confinement, model and, with `resume`, what the earlier run already did.
    pub async fn prepare_tasks(&self, job: TaskJob) -> Result<PreparedTasks, EngineError> {
        let (file, o) = (&self.file, &self.o);
        let usage = |m: String| EngineError::Usage(m);
        if !job.workspace.is_dir() {
            return Err(usage(format!(
                "the project folder {} does not exist; task runs work on an existing project (--workspace DIR)",
                job.workspace.display()
            )));
        }
        // Every task gets the configured time limit unless it sets its own.
        let mut plan = job.plan;
        let timeout = self.timeout_secs();
        for t in &mut plan.tasks {
            let mut limits = t.limits.unwrap_or_default();
            limits.timeout_secs.get_or_insert(timeout);
            t.limits = Some(limits);
        }
        Handlers::builtin().check(&plan).map_err(|e| usage(format!("task file {}: {e}", job.file.display())))?;
        let workspace = Workspace::open(&job.workspace, self.workspace_limits())
            .map_err(|e| usage(format!("workspace {}: {e}", job.workspace.display())))?;
        let (options, kept, resumed) = match &job.resume {
            Some(id) => {
                let (options, kept, run) = self.earlier_run(id, &workspace, &plan, &job.rerun).await?;
                (options, kept, Some(run))
            }
            None => {
                if let Some(t) = job.rerun.first() {
                    return Err(usage(format!("--rerun {t} needs --resume RUN: there is no earlier run to keep")));
                }
                (RunOptions::default(), Vec::new(), None)
            }
        };
        let connected = self.connect().await?;
        let (parts, confinement) = self.parts(&job.id, &workspace, connected, None, job.leash)?;
        Ok(PreparedTasks {
            id: job.id.0,
            provider_kind: self.kind.as_str(),
            model: job.model.unwrap_or_else(|| connected.model.clone()),
            sandbox: confinement.summary,
            warnings: confinement.warnings,
            workspace,
            plan,
            kept,
            file: job.file,
            resumed,
            options,
            parts,
            retry: self.retry_policy(),
            temperature: Some(self.temperature(crate::sampling::Phase::Generate)),
            budget: file.budgets.resolve()?.for_task(),
            max_tokens: self.max_tokens(),
            max_turns: self.max_turns(),
            max_cost_usd: o.max_cost.or(file.max_cost),
            pricing: self.pricing.clone(),
            holder: job.holder,
            refused: CancellationToken::new(),
        })
    }

    /// The run to resume: it must be a task run of the same project. Its tasks that passed (or
    /// had nothing to check) are kept when unchanged; `rerun` names ones to run anyway.
    async fn earlier_run(
        &self,
        id: &str,
        workspace: &Workspace,
        plan: &Plan,
        rerun: &[String],
    ) -> Result<(RunOptions, Vec<String>, String), EngineError> {
        let usage = |m: String| EngineError::Usage(m);
        let run = self
            .store
            .resolve_build(id)
            .await
            .map_err(|e| usage(format!("--resume {id}: {e}; see `wright task list`")))?;
        if run.start.kind != RunKind::Task {
            return Err(usage(format!("--resume {id}: {} is a build, not a task run", run.start.id)));
        }
        let same = self.artifacts().resolve(Path::new(&run.start.workspace)).canonicalize().ok().as_deref()
            == Some(workspace.root());
        if !same {
            return Err(usage(format!(
                "--resume {id}: that run worked on {}, not {}",
                run.start.workspace,
                workspace.root().display()
            )));
        }
        let ids: HashSet<&str> = plan.tasks.iter().map(|t| t.id.as_str()).collect();
        if let Some(t) = rerun.iter().find(|t| !ids.contains(t.as_str())) {
            return Err(usage(format!("--rerun {t}: the task file has no task with that id")));
        }
        let records = self
            .store
            .task_results(&run.start.id)
            .await
            .map_err(|e| usage(format!("--resume {id}: reading its tasks: {e}")))?;
        let mut earlier = HashMap::new();
        for r in records {
            let (status, Ok(result)) = (r.status, serde_json::from_value::<TaskResult>(r.result.clone())) else {
                tracing::warn!(run = %run.start.id, task = %r.task_id, "a stored task result could not be read; it runs again");
                continue;
            };
            earlier.insert(r.task_id.clone(), Earlier { status, task_hash: r.task_hash, result });
        }
        let rerun: HashSet<String> = rerun.iter().cloned().collect();
        let kept: Vec<String> = plan
            .tasks
            .iter()
            .filter(|t| {
                earlier.get(&t.id).is_some_and(|e: &Earlier| {
                    e.status.ok() && e.task_hash == wright_tasks::task_hash(t) && !rerun.contains(&t.id)
                })
            })
            .map(|t| t.id.clone())
            .collect();
        Ok((RunOptions { earlier, rerun }, kept, run.start.id.0))
    }
}

/// Keeps each task's outcome in the store, under its run.
struct StoreRecorder {
    store: Arc<dyn Store>,
    run_id: String,
}

#[async_trait::async_trait]
impl Recorder for StoreRecorder {
    async fn record(&self, o: &TaskOutcome) {
        let record = TaskRecord {
            run_id: self.run_id.clone(),
            task_id: o.task_id.clone(),
            position: o.position,
            kind: o.kind.clone(),
            status: o.status,
            message: o.result.message.clone(),
            result: serde_json::to_value(&o.result).unwrap_or_default(),
            task_hash: o.task_hash.clone(),
            started_at: o.started_at.clone(),
            finished_at: o.finished_at.clone(),
        };
        if let Err(e) = self.store.put_task_result(&record).await {
            tracing::warn!(run = %self.run_id, task = %o.task_id, "task result not stored: {e}");
        }
    }
}

/// The files the run wrote or deleted, for the `complete` event.
#[derive(Default)]
struct Touched(Mutex<BTreeSet<String>>);

impl EventSink for Touched {
    fn accept(&self, e: &Event) {
        if let EventKind::FileWritten { path, .. } | EventKind::FileDeleted { path } = &e.kind
            && let Ok(mut files) = self.0.lock()
        {
            files.insert(path.clone());
        }
    }
}

impl PreparedTasks {
    /// A token cancelled when the store refuses this run's holder an event or its ending (see
    /// [`crate::Prepared::refusal`]).
    pub fn refusal(&self) -> CancellationToken {
        self.refused.clone()
    }

    /// Run the plan to its end. Every event is stored first, then given to `sinks` in order;
    /// the stream ends with `complete`. `cancel` stops the run (the task running is stopped,
    /// the ones after it are not run).
    pub async fn run(self, sinks: Vec<Arc<dyn EventSink>>, cancel: CancellationToken) -> TasksFinished {
        let clock = Instant::now();
        let touched = Arc::new(Touched::default());
        let record = NewBuild {
            id: self.id.clone().into(),
            kind: RunKind::Task,
            parent_id: self.resumed.clone().map(Into::into),
            prompt: self.plan.goal.clone().unwrap_or_else(|| format!("tasks from {}", self.file.display())),
            template: None,
            lang: Lang::En,
            provider: self.parts.label.clone(),
            model: self.model.clone(),
            workspace: self.workspace.root().display().to_string(),
            started_at: wright_events::now(),
        };
        // A queued run was recorded when it was queued; its worker holds it.
        if self.holder.is_none()
            && let Err(e) = self.parts.store.create_build(&record).await
        {
            tracing::warn!(run = %self.id, "task run not recorded: {e}");
        }
        let mut behind: Vec<Arc<dyn EventSink>> = vec![touched.clone()];
        behind.extend(sinks);
        let log =
            LogWriter::fenced(self.parts.store.clone(), &self.id, self.holder.as_deref(), behind, self.refused.clone());
        let emitter = Emitter::new(self.id.clone(), vec![log.clone()]);
        // As root the sandbox user borrows the project; its owner gets it back afterwards, or,
        // if this run is killed first, on the next start of wright (the loan is in the store).
        // A shared folder is never lent (the sandbox refuses it), so it is never given back.
        let lent = super::lent::lend(self.parts.store.as_ref(), &self.id, self.workspace.root()).await;
        let ctx = ToolContext {
            workspace: self.workspace.clone(),
            runner: self.parts.runner.clone(),
            emitter: emitter.clone(),
            cancel,
            exec: self.parts.exec.clone(),
        };
        let journal = Arc::new(Journal::new(self.parts.store.clone(), self.id.clone(), self.parts.label.clone()));
        // The MCP servers of wright.toml start now that the run is recorded, as a build's do.
        let mut registry = builtin_registry();
        let mut cannot_start = None;
        if let Some(mcp) = &self.parts.mcp {
            match wright_agent::Prelude::prepare(mcp.as_ref(), &ctx).await {
                Ok(tools) => tools.into_iter().for_each(|t| registry.register(t)),
                Err(why) => cannot_start = Some(why),
            }
        }
        let agent = AgentLoop {
            provider: self.parts.provider.clone(),
            registry: Arc::new(registry),
            ctx: ctx.clone(),
            model: self.model.clone(),
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            retry: self.retry.clone(),
            max_turns: self.max_turns,
            pricing: self.pricing.clone(),
            max_cost_usd: self.max_cost_usd,
            journal: Some(journal.clone()),
            fit: Default::default(),
            budget: Some(Arc::new(self.budget.clone())),
        };
        let env = TaskEnv {
            ctx: ctx.clone(),
            command_timeout: self.parts.exec.command_timeout,
            judge: Some(Arc::new(ModelJudge { agent: agent.clone() })),
            agent: Some(agent),
        };
        if !self.kept.is_empty() {
            emitter.status(
                Level::Info,
                format!(
                    "Resuming run {}: {} task(s) passed there and are kept ({}).",
                    self.resumed.as_deref().unwrap_or("?"),
                    self.kept.len(),
                    self.kept.join(", ")
                ),
            );
        }
        let recorder = StoreRecorder { store: self.parts.store.clone(), run_id: self.id.clone() };
        let planned = match &cannot_start {
            Some(why) => {
                emitter.emit(EventKind::Error {
                    message: format!("No task ran: an MCP server this run requires did not start ({why})."),
                    detail: None,
                });
                Ok(RunSummary::default())
            }
            None => run_plan(&self.plan, &Handlers::builtin(), &env, &self.options, &recorder).await,
        };
        let summary = match planned {
            Ok(s) => s,
            Err(e) => {
                // Checked when prepared; reaching here means the plan changed under us.
                emitter.emit(EventKind::Error { message: e.to_string(), detail: None });
                RunSummary::default()
            }
        };
        if let Some(owner) = lent
            && let Err(e) = super::lent::end(self.parts.store.as_ref(), &self.id, self.workspace.root(), owner).await
        {
            emitter.status(
                Level::Warning,
                format!("The project's files could not all be given back to their owner: {e}."),
            );
        }
        // Every event is stored and seen (the files it wrote among them), and every turn and
        // model call recorded, before the end is made.
        log.flush().await;
        journal.flush().await;
        let tokens = totals(self.parts.store.as_ref(), &self.id).await;
        let success = summary.success();
        let [passed, failed, skipped, not_run] = summary.counts();
        let report = summary
            .outcomes
            .iter()
            .map(|o| format!("- {} ({}): {} — {}", o.task_id, o.kind, o.status.as_str(), o.result.message))
            .collect::<Vec<_>>()
            .join("\n");
        let files: Vec<String> = touched.0.lock().map(|f| f.iter().cloned().collect()).unwrap_or_default();
        let duration_ms = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
        let turns = self.parts.store.turns(&self.id).await.map(|t| t.len()).unwrap_or(0);
        let end_reason = if success {
            None
        } else if cannot_start.is_some() {
            Some(EndReason::ToolServerFailed)
        } else if ctx.cancel.is_cancelled() {
            Some(EndReason::Cancelled)
        } else {
            Some(EndReason::TasksFailed)
        };
        let finish = BuildFinish {
            status: if success { RunStatus::Published } else { RunStatus::Failed },
            end_reason,
            fix_attempts: 0,
            turns: u32::try_from(turns).unwrap_or(u32::MAX),
            tokens,
            duration_ms,
            files,
            report: Some(format!(
                "{passed} passed, {failed} failed, {skipped} with nothing to check, {not_run} not run\n{report}"
            )),
            finished_at: wright_events::now(),
        };
        // Its `complete` is made from that record: the stream says `tasks_failed` or
        // `cancelled` exactly as the run's row does.
        let ended_here = match log.finish(RunEnd::of(finish, vec![])).await {
            Ok(wright_store::Finished::Now(_)) => true,
            Ok(wright_store::Finished::Already { .. }) => false,
            Err(e) => {
                tracing::warn!(run = %self.id, "task run end not stored: {e}");
                false
            }
        };
        drop(self.parts.scratch);
        TasksFinished {
            summary,
            unsaved_events: log.failures(),
            end_reason,
            refused: self.refused.is_cancelled(),
            ended_here,
        }
    }
}

/// The run's model usage, summed from the usage log.
async fn totals(store: &dyn Store, run_id: &str) -> Tokens {
    let mut t = Tokens::default();
    for u in store.usage(run_id).await.unwrap_or_default() {
        t.input_tokens += u.tokens.input_tokens;
        t.output_tokens += u.tokens.output_tokens;
        t.cached_tokens += u.tokens.cached_tokens;
        t.cost_usd += u.tokens.cost_usd;
    }
    t
}
