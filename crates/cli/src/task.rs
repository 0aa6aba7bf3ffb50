//! `wright task`: run a task file (one task, or a plan of tasks with `depends_on`) against an
//! existing project; check a file without running it; print the schema and the types; list
//! and show past runs.

use crate::{DbArgs, EventsFormat, Exit, ModelArgs, render, sandbox::SandboxArgs, usage};
use anyhow::anyhow;
use clap::Subcommand;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use wright_engine::config::FileConfig;
use wright_engine::{Engine, Overrides, TaskJob};
use wright_events::EventSink;
use wright_store::Store;
use wright_tasks::Handlers;

#[derive(Subcommand)]
pub enum TaskCommand {
    /// Run a task file against a project: each task in dependency order, validated, fixed by
    /// the model when its checks fail (at most 3 times), its outcome stored.
    Run(Box<TaskRunArgs>),
    /// Check a task file without running it: its fields, ids, dependencies and types, and the
    /// order its tasks would run in.
    Check {
        /// The task file (JSON, or TOML by its .toml extension).
        file: PathBuf,
    },
    /// Print the JSON Schema of task files.
    Schema,
    /// The task types and what each does.
    Types,
    /// Past task runs, newest first.
    List {
        #[command(flatten)]
        db: DbArgs,
        /// How many.
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One run: how each task ended, with its result.
    Show {
        /// The run's id, or the start of it.
        id: String,
        #[command(flatten)]
        db: DbArgs,
        /// Print JSON: the run and each task's result in the seed's shape.
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::Args)]
pub struct TaskRunArgs {
    /// The task file (JSON, or TOML by its .toml extension).
    file: PathBuf,
    /// The project to work on [default: the current folder].
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Resume an earlier run of this file (id or prefix): its tasks that passed, unchanged, are kept.
    #[arg(long, value_name = "RUN")]
    resume: Option<String>,
    /// With --resume: run this task again although it passed there. Repeatable.
    #[arg(long, value_name = "TASK")]
    rerun: Vec<String>,
    /// Print one JSON document with every task's result at the end (and no narration).
    #[arg(long)]
    json: bool,
    /// How to show progress: human or jsonl [default: human on a terminal, else jsonl].
    #[arg(long, value_enum, value_name = "FORMAT")]
    events: Option<EventsFormat>,
    #[command(flatten)]
    llm: ModelArgs,
    #[command(flatten)]
    sandbox: SandboxArgs,
    #[command(flatten)]
    db: DbArgs,
    /// Model calls per task (and per fix) before giving up [default: 100].
    #[arg(long, value_name = "N")]
    max_turns: Option<u32>,
    /// Time limit for each task that sets none, in seconds [default: 600].
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// Time limit for one command, in seconds [default: 120].
    #[arg(long, value_name = "SECS")]
    command_timeout: Option<u64>,
    /// End the run once its model calls have cost this much (USD).
    #[arg(long, value_name = "USD")]
    max_cost: Option<f64>,
    /// Sampling temperature for the model.
    #[arg(long, value_name = "T")]
    temperature: Option<f32>,
    /// Retries of a failed model call [default: 4].
    #[arg(long, value_name = "N")]
    max_retries: Option<u32>,
    /// Longest wait for a model response to start, in seconds [default: 45].
    #[arg(long, value_name = "SECS")]
    call_timeout: Option<u64>,
    /// Ask for whole responses instead of streaming them.
    #[arg(long)]
    no_stream: bool,
    /// In human mode, also print every command's output.
    #[arg(long, short)]
    verbose: bool,
}

impl TaskRunArgs {
    fn overrides(&self) -> Overrides {
        Overrides {
            max_turns: self.max_turns,
            timeout: self.timeout,
            call_timeout: self.call_timeout,
            max_retries: self.max_retries,
            no_stream: self.no_stream,
            command_timeout: self.command_timeout,
            temperature: self.temperature,
            max_cost: self.max_cost,
            ..crate::where_and_how(&self.llm, &self.sandbox, &self.db)
        }
    }
}

pub async fn task(cmd: TaskCommand, config_path: Option<PathBuf>) -> Result<u8, Exit> {
    let mut out = std::io::stdout();
    match cmd {
        TaskCommand::Run(args) => run(*args, config_path).await,
        TaskCommand::Check { file } => {
            let checked = wright_engine::load_task_file(&file).and_then(|plan| {
                Handlers::builtin()
                    .check(&plan)
                    .map_err(|e| wright_engine::EngineError::Usage(format!("task file {}: {e}", file.display())))?;
                Ok(plan)
            });
            match checked {
                Ok(plan) => {
                    let order = wright_tasks::order(&plan).map_err(|e| Exit(1, anyhow!(e)))?;
                    let _ = writeln!(out, "{}: {} task(s), in this order:", file.display(), plan.tasks.len());
                    for (n, i) in order.into_iter().enumerate() {
                        let t = &plan.tasks[i];
                        let _ = writeln!(out, "  {}. {} ({}): {}", n + 1, t.id, t.kind, t.description);
                    }
                    Ok(0)
                }
                Err(e) => Err(Exit(1, anyhow!(e))),
            }
        }
        TaskCommand::Schema => {
            let schema = serde_json::to_string_pretty(&wright_tasks::schema()).map_err(|e| Exit(1, anyhow!(e)))?;
            let _ = writeln!(out, "{schema}");
            Ok(0)
        }
        TaskCommand::Types => {
            for (kind, about) in Handlers::builtin().describe() {
                let _ = writeln!(out, "{kind:<16} {about}");
            }
            Ok(0)
        }
        TaskCommand::List { db, limit, json } => {
            let store = crate::open_store(db, config_path.as_deref()).await?;
            crate::done(list(store.as_ref(), limit, json, &mut out).await)
        }
        TaskCommand::Show { id, db, json } => {
            let store = crate::open_store(db, config_path.as_deref()).await?;
            crate::done(show(store.as_ref(), &id, json, &mut out).await)
        }
    }
}

async fn run(args: TaskRunArgs, config_path: Option<PathBuf>) -> Result<u8, Exit> {
    let (file, _) = FileConfig::load(config_path.as_deref())?;
    let plan = wright_engine::load_task_file(&args.file)?;
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir().map_err(|e| usage(anyhow!("the current folder: {e}")))?,
    };
    let engine = Engine::new(file, args.overrides()).await?;
    let job = TaskJob {
        id: wright_engine::new_build_id().into(),
        file: args.file.clone(),
        plan,
        workspace,
        resume: args.resume.clone(),
        rerun: args.rerun.clone(),
        model: None,
        holder: None,
        leash: None,
    };
    let prepared = engine.prepare_tasks(job).await?;
    for w in &prepared.warnings {
        eprintln!("wright: {w}");
    }
    let run_id = prepared.id.clone();
    let format =
        args.events.unwrap_or(if std::io::stdout().is_terminal() { EventsFormat::Human } else { EventsFormat::Jsonl });
    let sinks: Vec<Arc<dyn EventSink>> = match (args.json, format) {
        (true, _) => Vec::new(),
        (false, EventsFormat::Jsonl) => vec![Arc::new(render::JsonlSink)],
        (false, EventsFormat::Human) => {
            println!(
                "wright · {} · {} · {} · task run {run_id}\n  commands: {}",
                prepared.provider_kind,
                prepared.model,
                prepared.workspace.root().display(),
                prepared.sandbox
            );
            vec![Arc::new(render::HumanSink::new(
                wright_agent::Lang::En,
                3,
                args.verbose,
                std::io::stderr().is_terminal(),
            ))]
        }
    };
    let finished = prepared.run(sinks, crate::stop_on_ctrl_c()).await;
    if finished.unsaved_events > 0 {
        eprintln!("wright: {} event(s) could not be saved to {}", finished.unsaved_events, engine.db_url());
    }
    let summary = finished.summary;
    if args.json {
        let store = engine.store().clone();
        show(store.as_ref(), &run_id, true, &mut std::io::stdout()).await.map_err(|e| Exit(1, e))?;
    } else if matches!(format, EventsFormat::Human) {
        let [passed, failed, skipped, not_run] = summary.counts();
        println!(
            "\n{passed} passed · {failed} failed · {skipped} with nothing to check · {not_run} not run\nDetails: wright task show {run_id}"
        );
        if !summary.success() {
            println!("After fixing the file or the project: wright task run {} --resume {run_id}", args.file.display());
        }
    }
    Ok(if summary.success() { 0 } else { 1 })
}

/// Task runs, newest first.
async fn list(store: &dyn Store, limit: u32, json: bool, out: &mut impl Write) -> anyhow::Result<()> {
    // Builds and task runs share one table; read enough to find `limit` runs among builds.
    let runs: Vec<_> = store
        .list_builds(limit.saturating_mul(10).max(200))
        .await?
        .into_iter()
        .filter(|b| b.start.kind == wright_events::RunKind::Task)
        .take(limit as usize)
        .collect();
    if json {
        writeln!(out, "{}", serde_json::to_string(&runs)?)?;
        return Ok(());
    }
    if runs.is_empty() {
        writeln!(out, "No task runs yet: wright task run FILE --workspace DIR")?;
    }
    for r in runs {
        writeln!(
            out,
            "{}  {:<9}  {}  {}",
            r.start.id,
            r.status.as_str(),
            r.start.workspace,
            r.start.prompt.chars().take(60).collect::<String>()
        )?;
    }
    Ok(())
}

/// One run with each task's outcome.
async fn show(store: &dyn Store, id: &str, json: bool, out: &mut impl Write) -> anyhow::Result<()> {
    let run = store.resolve_build(id).await?;
    if run.start.kind != wright_events::RunKind::Task {
        anyhow::bail!("{} is a build, not a task run: wright builds show {}", run.start.id, run.start.id);
    }
    let tasks = store.task_results(&run.start.id).await?;
    if json {
        let doc = serde_json::json!({
            "run": run.start.id,
            "status": run.status.as_str(),
            "workspace": run.start.workspace,
            "resumed_from": run.start.parent_id,
            "started_at": run.start.started_at,
            "finished_at": run.finished_at,
            "cost_usd": run.tokens.cost_usd,
            "tasks": tasks.iter().map(|t| serde_json::json!({
                "id": t.task_id,
                "type": t.kind,
                "status": t.status,
                "result": t.result,
            })).collect::<Vec<_>>(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    writeln!(out, "task run {} · {} · {}", run.start.id, run.status.as_str(), run.start.workspace)?;
    if let Some(p) = &run.start.parent_id {
        writeln!(out, "  resumed from {p}")?;
    }
    for t in &tasks {
        let icon = render::task_icon(t.status);
        writeln!(out, "{icon} {} ({}): {}", t.task_id, t.kind, t.message)?;
        let commands = t.result["validation_details"]["commands_executed"].as_array().cloned().unwrap_or_default();
        for c in commands {
            let code = c["exit_code"].as_i64().map_or("did not finish".to_string(), |n| format!("exit {n}"));
            writeln!(out, "     $ {} ({code})", c["command"].as_str().unwrap_or(""))?;
        }
        for j in t.result["validation_details"]["judged"].as_array().cloned().unwrap_or_default() {
            let met = if j["met"].as_bool() == Some(true) { "met" } else { "not met" };
            writeln!(
                out,
                "     ? {} ({met}): {}",
                j["criterion"].as_str().unwrap_or(""),
                j["reasoning"].as_str().unwrap_or("")
            )?;
        }
    }
    if tasks.is_empty() {
        writeln!(out, "  (no task has ended yet)")?;
    }
    Ok(())
}
