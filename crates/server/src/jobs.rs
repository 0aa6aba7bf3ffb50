//! What a worker runs once it holds a queued run and its folder is ready: each kind of job
//! ([`QueuedJob`]) made ready by the engine and run to its end, told back to the queue in one
//! shape, so the queue's lease, interrupt and restart handling is written once for every kind.

use crate::metrics::UsageSink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_engine::notice::Warning;
use wright_engine::{Engine, EngineError, Job, Prepared, PreparedTasks, TaskJob};
use wright_events::{EndReason, EventSink};
use wright_store::QueuedJob;

/// A claimed run, made ready by the engine.
pub(crate) enum Ready {
    Build(Box<Prepared>),
    Tasks(Box<PreparedTasks>),
}

/// How a run ended, as far as the queue cares.
pub(crate) struct Ran {
    /// The store refused this run's holder (see [`wright_engine::Finished::refused`]).
    pub refused: bool,
    /// The store took this run's ending.
    pub ended_here: bool,
    /// Why it failed; `None` when it published (every task passed).
    pub reason: Option<EndReason>,
}

/// Why a claimed run could not start: said in its stream, and its `end_reason`.
pub(crate) type NotStarted = (String, EndReason);

/// Whether the run works in a folder that was there before it (a follow-up build's parent's,
/// a task run's project): such a folder is copied first, so a run cut short can put it back.
pub(crate) fn continues(job: &QueuedJob) -> bool {
    match job {
        QueuedJob::Build(args) => args.continue_from.is_some(),
        QueuedJob::Task(args) => args.project.is_some() || args.resume.is_some(),
    }
}

impl Ready {
    /// Make `job` ready to run as run `id` in `folder`, held by `worker`.
    pub(crate) async fn prepare(
        engine: &Engine,
        id: &str,
        job: QueuedJob,
        folder: PathBuf,
        worker: &str,
        leash: Option<wright_sandbox::Leash>,
    ) -> Result<Ready, NotStarted> {
        let failed = |what: &str, e: EngineError| (format!("{what}: {e}"), engine_reason(&e));
        match job {
            QueuedJob::Build(args) => {
                let job = Job {
                    id: id.into(),
                    prompt: args.prompt,
                    template: args.template,
                    lang: args.lang,
                    checks: args.checks,
                    continue_from: args.continue_from.map(|id| id.0),
                    workspace: Some(folder),
                    model: args.model,
                    holder: Some(worker.to_string()),
                    allow_hosts: args.allow_hosts,
                    leash,
                    variant: args.variant,
                    hidden_removed: args.hidden_removed,
                };
                let prepared = engine.prepare(job).await.map_err(|e| failed("the build could not start", e))?;
                Ok(Ready::Build(Box::new(prepared)))
            }
            QueuedJob::Task(args) => {
                // Checked when it was queued; read again with the task crate's own reader.
                let plan = wright_engine::read_plan(&args.plan.to_string(), wright_engine::TaskFormat::Json)
                    .map_err(|e| (format!("the task run's plan cannot be read: {e}"), EndReason::InvalidRequest))?;
                // A run of its own starts in an empty folder of its own; a project's folder is
                // there already. Either is opened beneath the artifacts' root and never through a
                // link (a project's generated code could have planted one).
                if let Err(e) = own_folder(engine.artifacts().root(), &folder) {
                    return Err((
                        format!("the task run's folder could not be made: {e}"),
                        EndReason::WorkspaceUnusable,
                    ));
                }
                let job = TaskJob {
                    id: id.into(),
                    file: PathBuf::from("POST /api/tasks"),
                    plan,
                    workspace: folder,
                    resume: args.resume.map(|r| r.0),
                    rerun: args.rerun,
                    model: args.model,
                    holder: Some(worker.to_string()),
                    leash,
                };
                let prepared =
                    engine.prepare_tasks(job).await.map_err(|e| failed("the task run could not start", e))?;
                Ok(Ready::Tasks(Box::new(prepared)))
            }
        }
    }

    /// What the user should know before it starts (weaker sandbox, Node.js missing).
    pub(crate) fn warnings(&self) -> &[Warning] {
        match self {
            Ready::Build(p) => &p.warnings,
            Ready::Tasks(p) => &p.warnings,
        }
    }

    /// Cancelled when the store refuses this run's holder.
    pub(crate) fn refusal(&self) -> CancellationToken {
        match self {
            Ready::Build(p) => p.refusal(),
            Ready::Tasks(p) => p.refusal(),
        }
    }

    /// The `template` label of the run in the server's metrics: a build's template, or `task`.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Ready::Build(p) => p.template().as_str(),
            Ready::Tasks(_) => wright_events::RunKind::Task.as_str(),
        }
    }

    /// Run it to its end; `cancel` is the stop button.
    pub(crate) async fn run(self, usage: Arc<UsageSink>, cancel: CancellationToken) -> Ran {
        let sinks: Vec<Arc<dyn EventSink>> = vec![usage];
        match self {
            Ready::Build(p) => {
                let f = p.run(sinks, cancel).await;
                Ran { refused: f.refused, ended_here: f.report.ended_here, reason: f.report.end.reason() }
            }
            Ready::Tasks(p) => {
                let f = p.run(sinks, cancel).await;
                Ran { refused: f.refused, ended_here: f.ended_here, reason: f.end_reason }
            }
        }
    }
}

/// Make (or open) `folder` beneath `root`, through the no-follow capability: a link anywhere
/// on the way is refused rather than followed. A folder outside the root is refused too.
fn own_folder(root: &Path, folder: &Path) -> Result<(), String> {
    let rel = folder
        .strip_prefix(root)
        .map_err(|_| format!("{} is not beneath {}", folder.display(), root.display()))?
        .to_str()
        .ok_or_else(|| format!("{} is not a UTF-8 path", folder.display()))?;
    let root = wright_sandbox::Dir::create(root).map_err(|e| e.to_string())?;
    root.create_dir_all(rel).map(|_| ()).map_err(|e| e.to_string())
}

/// Why a run could not be made ready, as its `end_reason`.
fn engine_reason(e: &EngineError) -> EndReason {
    match e {
        EngineError::Usage(_) => EndReason::InvalidRequest,
        EngineError::Provider(_) => EndReason::ProviderUnusable,
    }
}

#[cfg(test)]
mod tests {
    use super::own_folder;

    #[test]
    fn a_task_runs_folder_is_made_beneath_the_root_and_never_through_a_link() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        own_folder(root.path(), &root.path().join("builds/r1")).unwrap();
        assert!(root.path().join("builds/r1").is_dir());
        // A project whose folder is a link (to the user's home, say) is refused, and nothing
        // is made where the link points.
        std::os::unix::fs::symlink(outside.path(), root.path().join("builds/r2")).unwrap();
        assert!(own_folder(root.path(), &root.path().join("builds/r2/sub")).is_err());
        assert!(!outside.path().join("sub").exists());
        assert!(own_folder(root.path(), outside.path()).is_err(), "outside the root");
    }
}
