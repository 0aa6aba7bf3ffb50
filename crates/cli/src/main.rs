//! `wright`: describe a program in plain words; wright has an AI write it, runs its tests,
//! fixes what fails, and shows every step.
#![allow(clippy::print_stdout, clippy::print_stderr)] // the CLI is a front end: printing is its job

mod apps;
mod args;
mod chat;
mod classes;
mod endpoint;
mod eval;
mod eval_report;
mod experiments;
mod explain;
mod history;
mod mcp;
mod notices;
mod rate;
mod render;
mod sandbox;
mod serve;
mod spend;
mod starters;
mod task;
mod users;

use anyhow::{Result, anyhow};
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use wright_agent::BuildEnd;
use wright_engine::config::FileConfig;
use wright_engine::{Engine, Job, Overrides};
use wright_events::EventSink;

pub use args::{
    DbArgs, EventsFormat, Exit, ModelArgs, artifacts_of, done, open_store, parse_lang, stop_on_ctrl_c, usage,
};
pub use sandbox::where_and_how;

const AFTER_HELP: &str = "\
Examples:
  # Offline, with the built-in model (no key, no server; fetched once with pip):
  wright run \"a landing page for a dog walking business\"

  # Any OpenAI-compatible server (llama.cpp, Ollama, vLLM, OpenRouter):
  wright run \"make a counter app with a + button\" --provider openai --base-url http://127.0.0.1:8080/v1

  # Hosted models: the name picks the wire (keys from OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY):
  wright run \"a countdown timer\" --model gpt-4o-mini --check \"node --check app.js\"
  wright run \"a countdown timer\" --model claude-sonnet-4-5 --max-cost 0.50

  # Machine-readable events, one JSON object per line:
  wright run \"a tip calculator\" --events jsonl > events.jsonl

  # Work on an existing project from a task file (see `wright task schema`):
  wright task run plan.json --workspace ./my-app

Exit codes: 0 built and verified · 1 gave up within its limits · 2 usage or configuration error · 3 the AI provider could not be used.";

#[derive(Parser)]
#[command(name = "wright", version, about = "Describe a program in plain words; wright has an AI write it, tests it, fixes it, and shows you every step.", after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Read settings from this file instead of ./wright.toml.
    #[arg(long, global = true, env = "WRIGHT_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Build a project from a description, verify it, and fix it until it works.
    Run(Box<RunArgs>),
    /// Work on an existing project from a task file: run, check, schema, types, list, show.
    Task {
        #[command(subcommand)]
        command: task::TaskCommand,
    },
    /// Manage the offline model (downloaded once, used when no API key is set).
    Models {
        #[command(subcommand)]
        command: ModelsCommand,
    },
    /// The lessons wright learned from its fixes: list, show, edit, deprecate, export, import.
    Notes {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        command: history::NotesCommand,
    },
    /// Past builds: list them, show one with what was tried, replay its events.
    Builds {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        command: history::BuildsCommand,
    },
    /// How builds are going: success rates, fix attempts, note hit rate, tokens, cost, durations.
    Stats {
        #[command(flatten)]
        db: DbArgs,
        #[command(flatten)]
        args: history::StatsArgs,
    },
    /// Compare two variants (model, prompt version, note budget, starters) on a suite of
    /// requests, paired, with exact tests and intervals (docs/eval.md).
    Eval(Box<eval::EvalArgs>),
    /// Explain the code of a build to a beginner, with everyday analogies.
    Explain(Box<explain::ExplainArgs>),
    /// Talk to the tutoring chat agent: diagrams, quizzes, flashcards, videos and code on request.
    Chat(Box<chat::ChatArgs>),
    /// Which sandbox generated code runs in on this machine and why, which tools builds need are
    /// here, and (with --provider openai --base-url URL) what that model server can do.
    Doctor(Box<sandbox::DoctorArgs>),
    /// Serve builds to many users over HTTP: a queue, workers, resumable event streams, previews.
    Serve(Box<serve::ServeArgs>),
    /// Run builds from a shared queue without serving HTTP: start any number, on any machines,
    /// beside `wright serve --no-workers` on the same PostgreSQL database (`--db postgres://…`).
    Worker(Box<serve::WorkerArgs>),
    /// The tested starter apps new builds begin from: list, show, add your own, remove.
    Starters {
        #[command(subcommand)]
        command: starters::StartersCommand,
    },
    /// Published apps: list, show (with related apps), rename, unpublish (docs/apps.md).
    Apps {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        command: apps::AppsCommand,
    },
    /// wright and MCP (docs/mcp.md): `serve` offers wright's builds, tasks, apps and chat as MCP
    /// tools on stdin/stdout; `list` and `approve` manage the MCP servers' tools builds may use.
    Mcp {
        #[command(subcommand)]
        command: mcp::McpCommand,
    },
    /// The people who may use `wright serve`: add (prints a token once), list, remove.
    Users {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        command: users::UsersCommand,
    },
    /// Classes of `wright serve` (docs/classes.md): add one with its teachers, change its
    /// members, list them.
    Classes {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        command: classes::ClassesCommand,
    },
    /// Online experiments of `wright serve` (docs/experiments.md): create one, start it, show
    /// its arms, stop it.
    Experiments {
        #[command(flatten)]
        db: DbArgs,
        #[command(subcommand)]
        command: experiments::ExperimentsCommand,
    },
}

#[derive(Subcommand)]
enum ModelsCommand {
    /// Download and verify the built-in offline model (SmolLM2-135M-Instruct, ~93 MB) now.
    Pull {
        /// Download again even if a verified copy is present.
        #[arg(long)]
        force: bool,
        /// Data folder [default: $XDG_DATA_HOME/wright].
        #[arg(long, env = "WRIGHT_DATA_DIR", value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Show where the offline model lives and whether it is downloaded.
    List {
        #[arg(long, env = "WRIGHT_DATA_DIR", value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// What to build, in plain words ("make a counter app with a + button").
    prompt: String,
    /// Where the project is built (created if missing; may already hold files). Default: a new folder under the data dir.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Kind of project: static, interactive, fullstack, react (TypeScript + Tailwind, bundled), or auto (picked from the prompt).
    #[arg(long, value_name = "NAME")]
    template: Option<String>,
    #[command(flatten)]
    llm: ModelArgs,
    #[command(flatten)]
    sandbox: sandbox::SandboxArgs,
    #[command(flatten)]
    browser: sandbox::BrowserArgs,
    /// An extra acceptance command run in the workspace during verification; must exit 0. Repeatable.
    #[arg(long = "check", value_name = "CMD")]
    checks: Vec<String>,
    /// An outside host (`host` or `host:port`) or API name this build may reach; repeatable.
    /// Only what wright.toml's [egress] allows is kept [default: all of [egress]].
    #[arg(long = "allow-host", value_name = "HOST")]
    allow_hosts: Vec<String>,
    /// Fix attempts after the first verification [default: 3].
    #[arg(long, value_name = "N")]
    max_fix_attempts: Option<u32>,
    /// Begin from a tested starter app when the request matches one: auto (the built-in model
    /// fills its slots, other models follow it), fill, reference, or off [default: auto].
    #[arg(long, env = "WRIGHT_STARTER", value_name = "USE")]
    starter: Option<String>,
    /// Model calls per phase before giving up on that phase [default: 100].
    #[arg(long, value_name = "N")]
    max_turns: Option<u32>,
    /// Time limit for the whole build, in seconds [default: 600].
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// How to show progress: human (narration) or jsonl (one JSON event per line) [default: human on a terminal, else jsonl].
    #[arg(long, value_enum, value_name = "FORMAT")]
    events: Option<EventsFormat>,
    /// Narration language: en or pt [default: en].
    #[arg(long, value_name = "CODE")]
    lang: Option<String>,
    #[command(flatten)]
    db: DbArgs,
    /// Longest wait for a model response to start, and between streamed pieces, in seconds [default: 45].
    #[arg(long, value_name = "SECS")]
    call_timeout: Option<u64>,
    /// Longest wait for a whole answer with --no-stream (a local server on a CPU may take minutes);
    /// such an answer is not asked for again while the server may still be writing it [default: 600].
    #[arg(long, value_name = "SECS")]
    generation_timeout: Option<u64>,
    /// Retries of a failed model call (server errors, resets, timeouts) [default: 4]; a rate limit (429)
    /// waits as told and does not count.
    #[arg(long, value_name = "N")]
    max_retries: Option<u32>,
    /// Ask for whole responses instead of streaming them.
    #[arg(long)]
    no_stream: bool,
    /// Time limit for one command the model runs, in seconds [default: 120].
    #[arg(long, value_name = "SECS")]
    command_timeout: Option<u64>,
    /// Sampling temperature for the model.
    #[arg(long, value_name = "T")]
    temperature: Option<f32>,
    /// End the build once its model calls have cost this much (USD, from the price table).
    #[arg(long, value_name = "USD")]
    max_cost: Option<f64>,
    /// A different (cheaper) model for fix attempts [default: the --model].
    #[arg(long, value_name = "NAME")]
    fix_model: Option<String>,
    /// Extra price table (TOML, same form as the built-in one) for cost accounting.
    #[arg(long, env = "WRIGHT_PRICES", value_name = "FILE")]
    prices: Option<PathBuf>,
    /// In human mode, also print every command's output.
    #[arg(long, short)]
    verbose: bool,
    /// Keep working on an earlier build (its folder and conversation): `--continue ID "make the button blue"`.
    #[arg(long = "continue", value_name = "ID")]
    continue_from: Option<String>,
    /// Tokens of lessons from earlier builds the prompt may carry [default: 800]; 0 turns them off.
    #[arg(long, value_name = "N")]
    note_budget: Option<u32>,
    /// Model that writes a lesson after a successful fix [default: the --fix-model, else the --model].
    #[arg(long, value_name = "NAME")]
    note_model: Option<String>,
}

fn main() -> ExitCode {
    // The Landlock sandbox starts commands through wright itself; this never returns when
    // the command starts.
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if raw.get(1).is_some_and(|a| a == wright_sandbox::CONFINE_ARG) {
        let e = wright_sandbox::confine_and_exec(&raw[2..]);
        eprintln!("wright sandbox: {e}");
        return ExitCode::from(125);
    }
    // A run's commands start through wright itself too: the leash that kills them when their
    // worker stops renewing its lease, even while the worker is frozen.
    if raw.get(1).is_some_and(|a| a == wright_sandbox::LEASH_ARG) {
        let e = wright_sandbox::leash_and_run(&raw[2..]);
        eprintln!("{e}");
        return ExitCode::from(125);
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("WRIGHT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off")),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("wright: could not start: {e}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => run(*args, cli.config).await,
            Command::Task { command } => task::task(command, cli.config).await,
            Command::Models { command } => models(command, cli.config).await,
            Command::Notes { db, command } => {
                let store = open_store(db, cli.config.as_deref()).await?;
                done(history::notes(command, store.as_ref(), &mut std::io::stdout()).await)
            }
            Command::Builds { db, command } => {
                let artifacts = artifacts_of(&db, cli.config.as_deref())?;
                let store = open_store(db, cli.config.as_deref()).await?;
                done(history::builds(command, store.as_ref(), &artifacts, &mut std::io::stdout()).await)
            }
            Command::Stats { db, args } => {
                let store = open_store(db, cli.config.as_deref()).await?;
                done(history::stats(args, store.as_ref(), &mut std::io::stdout()).await)
            }
            Command::Eval(args) => eval::eval(*args, cli.config).await,
            Command::Explain(args) => explain::explain(*args, cli.config).await,
            Command::Chat(args) => chat::chat(*args, cli.config).await,
            Command::Doctor(args) => sandbox::doctor(*args, cli.config).await,
            Command::Serve(args) => serve::serve(*args, cli.config).await,
            Command::Worker(args) => serve::worker(*args, cli.config).await,
            Command::Starters { command } => starters::starters(command, cli.config, &mut std::io::stdout()).await,
            Command::Mcp { command } => mcp::mcp(command, cli.config, &mut std::io::stdout()).await,
            Command::Apps { db, command } => {
                let store = open_store(db, cli.config.as_deref()).await?;
                done(apps::apps(command, store.as_ref(), &mut std::io::stdout()).await)
            }
            Command::Users { db, command } => {
                let store = open_store(db, cli.config.as_deref()).await?;
                done(users::users(command, store.as_ref(), &mut std::io::stdout()).await)
            }
            Command::Classes { db, command } => {
                let store = open_store(db, cli.config.as_deref()).await?;
                done(classes::classes(command, store.as_ref(), &mut std::io::stdout()).await)
            }
            Command::Experiments { db, command } => {
                let (file, _) = FileConfig::load(cli.config.as_deref())?;
                let data_dir = file.data_dir(db.data_dir.clone());
                let check = |v: &[wright_experiments::Variant]| {
                    let starters = wright_engine::starter_library(&data_dir)?;
                    wright_engine::variants::check_variants(&file.prompt_versions, &starters, v)
                };
                let store = open_store(db, cli.config.as_deref()).await?;
                let out = &mut std::io::stdout();
                done(experiments::experiments(command, store.as_ref(), &check, out).await)
            }
        }
    });
    // Work left on the blocking pool (an embedding half done, a file copy) does not hold the
    // exit: a stopped server is stopped, whatever the background was doing.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Exit(code, e)) => {
            eprintln!("wright: {e:#}");
            ExitCode::from(code)
        }
    }
}

async fn models(cmd: ModelsCommand, config_path: Option<PathBuf>) -> Result<u8, Exit> {
    let (file, _) = FileConfig::load(config_path.as_deref())?;
    let dir = |d: Option<PathBuf>| file.data_dir(d);
    match cmd {
        ModelsCommand::Pull { force, data_dir } => {
            let path = wright_engine::local::ensure_default_model(&dir(data_dir), force, notices::terminal().0).await?;
            println!("{}", path.display());
        }
        ModelsCommand::List { data_dir } => {
            let d = dir(data_dir);
            let m = wright_local::DEFAULT_MODEL;
            let state = if m.is_present(&d) { "downloaded" } else { "not downloaded (wright models pull)" };
            println!("{}  {}  {}  sha256:{}", m.name, m.path_in(&d).display(), state, m.gguf_sha256);
        }
    }
    Ok(0)
}

impl RunArgs {
    /// The flags that override wright.toml, as the engine takes them.
    fn overrides(&self) -> Overrides {
        Overrides {
            max_fix_attempts: self.max_fix_attempts,
            max_turns: self.max_turns,
            timeout: self.timeout,
            call_timeout: self.call_timeout,
            generation_timeout: self.generation_timeout,
            max_retries: self.max_retries,
            no_stream: self.no_stream,
            command_timeout: self.command_timeout,
            temperature: self.temperature,
            max_cost: self.max_cost,
            fix_model: self.fix_model.clone(),
            prices: self.prices.clone(),
            note_budget: self.note_budget,
            note_model: self.note_model.clone(),
            browser_check: self.browser.browser_check.clone(),
            chromium: self.browser.chromium.clone(),
            starter: self.starter.clone(),
            ..where_and_how(&self.llm, &self.sandbox, &self.db)
        }
    }
}

async fn run(args: RunArgs, config_path: Option<PathBuf>) -> Result<u8, Exit> {
    let (file, _) = FileConfig::load(config_path.as_deref())?;
    if args.prompt.trim().is_empty() {
        return Err(usage(anyhow!("the prompt is empty; say what to build, e.g. wright run \"a counter app\"")));
    }
    if args.continue_from.is_some() && args.workspace.is_some() {
        return Err(usage(anyhow!("--continue works in the earlier build's folder; leave out --workspace")));
    }
    // Names the user typed are checked before anything is opened or created.
    let template = args.template.as_deref().map(wright_engine::parse_template).transpose()?;
    let lang = args.lang.as_deref().map(parse_lang).transpose()?;
    let engine = Engine::new(file, args.overrides()).await?;
    let job = Job {
        id: wright_engine::new_build_id().into(),
        prompt: args.prompt,
        template,
        lang,
        checks: args.checks,
        continue_from: args.continue_from,
        workspace: args.workspace,
        model: None,
        holder: None,
        allow_hosts: (!args.allow_hosts.is_empty()).then_some(args.allow_hosts),
        leash: None,
        variant: None,
        hidden_removed: 0,
    };
    let build = engine.prepare(job).await?;
    for w in &build.warnings {
        eprintln!("wright: {w}");
    }
    let build_id = build.id.clone();
    let root = build.workspace.root().to_path_buf();
    let format =
        args.events.unwrap_or(if std::io::stdout().is_terminal() { EventsFormat::Human } else { EventsFormat::Jsonl });
    let sink: Arc<dyn EventSink> = match format {
        EventsFormat::Jsonl => Arc::new(render::JsonlSink),
        EventsFormat::Human => {
            println!(
                "wright · {} · {} · {} · build {build_id}\n  commands: {}",
                build.provider_kind,
                build.model,
                root.display(),
                build.sandbox
            );
            Arc::new(render::HumanSink::new(
                build.lang,
                build.max_fix_attempts,
                args.verbose,
                std::io::stderr().is_terminal(),
            ))
        }
    };
    let cancel = stop_on_ctrl_c();
    let finished = build.run(vec![sink], cancel).await;
    let report = finished.report;
    if finished.unsaved_events > 0 {
        eprintln!("wright: {} event(s) could not be saved to {}", finished.unsaved_events, engine.db_url());
    }
    if matches!(format, EventsFormat::Human) {
        println!(
            "{} {}",
            if report.success() { "Your project is in" } else { "The files are kept in" },
            root.display()
        );
        if report.success() {
            // A bundled app opens from its bundle; others from their page.
            let page = ["dist/index.html", "index.html", "client/index.html"]
                .into_iter()
                .filter(|p| *p != "dist/index.html" || report.template.has_build_step())
                .map(|p| root.join(p))
                .find(|p| p.exists());
            if let Some(p) = page {
                println!("Open it in your browser: file://{}", p.display());
            }
            let example = if report.template.is_code() { "add a --verbose option" } else { "make the button blue" };
            println!("Change it later: wright run --continue {build_id} \"{example}\"");
        } else {
            println!("What was tried: wright builds show {build_id}");
        }
    }
    Ok(match report.end {
        BuildEnd::Published => 0,
        BuildEnd::ProviderUnusable(e) => {
            // The narration said it kindly; the reason is for whoever asks (or a script).
            if matches!(format, EventsFormat::Human) && !args.verbose {
                eprintln!("wright: the AI provider could not be used (run again with --verbose for the reason)");
            } else {
                eprintln!("wright: the AI provider could not be used: {e}");
            }
            3
        }
        BuildEnd::VerificationFailed
        | BuildEnd::ContextFull(_)
        | BuildEnd::TimedOut(_)
        | BuildEnd::Cancelled
        | BuildEnd::BudgetSpent(_)
        | BuildEnd::NoFittingStarter
        | BuildEnd::ToolServerFailed(_) => 1,
    })
}
