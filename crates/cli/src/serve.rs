//! `wright serve`: flags and `[serve]` into a [`wright_server::ServeConfig`], the engine from
//! the same settings `wright run` reads, and a clean stop on Ctrl-C or SIGTERM.

use crate::{DbArgs, Exit, ModelArgs, usage};
use anyhow::anyhow;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_engine::config::FileConfig;
use wright_engine::{Engine, Overrides};
use wright_server::{Cidr, IpLimit, MaintenanceConfig, MetricsConfig, Moderation, ServeConfig};

/// `wright serve`: the API and previews, and (unless `--no-workers`) workers.
#[derive(clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    http: HttpArgs,
    #[command(flatten)]
    runner: RunnerArgs,
}

/// `wright worker`: runs builds from the shared queue, serves no HTTP.
#[derive(clap::Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    runner: RunnerArgs,
}

/// `wright mcp serve`: runs builds as `wright worker` does, and answers MCP on stdin/stdout.
#[derive(clap::Args)]
pub struct McpServeArgs {
    #[command(flatten)]
    runner: RunnerArgs,
}

/// What only a process that serves HTTP takes.
#[derive(clap::Args, Default)]
struct HttpArgs {
    /// Address of the API [default: 127.0.0.1:8787].
    #[arg(long, env = "WRIGHT_BIND", value_name = "ADDR")]
    bind: Option<SocketAddr>,
    /// Address of the preview origin, which serves builds' pages apart from the API [default: 127.0.0.1:8788].
    #[arg(long, env = "WRIGHT_PREVIEW_BIND", value_name = "ADDR")]
    preview_bind: Option<SocketAddr>,
    /// Serve the API and previews only: builds wait in the shared database for `wright worker`
    /// processes (on this machine or others) to run them.
    #[arg(long, conflicts_with = "workers")]
    no_workers: bool,
    /// Builds one user may start per hour [default: 10].
    #[arg(long, value_name = "N")]
    builds_per_hour: Option<u32>,
    /// Builds one user may have queued or running at once [default: 2].
    #[arg(long, value_name = "N")]
    max_concurrent_builds: Option<u32>,
    /// The API's address as browsers reach it (behind a proxy), for login links and the preview's CSP.
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// The preview origin's address as browsers reach it.
    #[arg(long, value_name = "URL")]
    preview_url: Option<String>,
    /// Markdown or HTML documents the in-app assistant searches [default: wright's own docs].
    #[arg(long, value_name = "DIR")]
    docs: Option<std::path::PathBuf>,
    /// Requests without valid credentials one client address may make per minute (login
    /// links, health checks, guessed tokens); 0 turns the limit off [default: 120].
    #[arg(long, value_name = "N")]
    unauthenticated_per_minute: Option<u32>,
    /// A proxy (address or range such as 10.0.0.0/8) whose X-Forwarded-For names the client;
    /// repeatable. Without one the header is ignored.
    #[arg(long = "trusted-proxy", value_name = "ADDR")]
    trusted_proxies: Vec<String>,
    /// Seconds a full-stack preview's app (and a preview's outside-access proxy) may sit unused
    /// before it is stopped [default: 300].
    #[arg(long, value_name = "SECS")]
    preview_idle: Option<u64>,
    /// Seconds between SSE heartbeat comments, at most 30 (the web UI takes 40 s of silence for a
    /// dropped connection) [default: 15].
    #[arg(long, value_name = "SECS")]
    heartbeat: Option<u64>,
}

/// What every process that runs builds takes (`wright serve` and `wright worker`).
#[derive(clap::Args)]
struct RunnerArgs {
    /// Builds this process runs at once [default: the number of CPU cores].
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// Seconds a claimed build stays claimed without its worker renewing it: a worker that
    /// dies (crash, kill -9) has its builds rescued within about this time [default: 10].
    #[arg(long, value_name = "SECS")]
    lease: Option<u64>,
    /// Seconds running builds may finish after a shutdown signal; those still running then go
    /// back to the queue and run again (here after a restart, or on another worker) [default: 30].
    #[arg(long, value_name = "SECS")]
    grace: Option<u64>,
    /// Times a build interrupted by a crash, kill -9 or shutdown runs again before it ends
    /// failed (`server_stopped`) [default: 2].
    #[arg(long, value_name = "N")]
    max_restarts: Option<u32>,
    /// Time limit for each build, in seconds [default: 600].
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    #[command(flatten)]
    llm: ModelArgs,
    #[command(flatten)]
    sandbox: crate::sandbox::SandboxArgs,
    #[command(flatten)]
    browser: crate::sandbox::BrowserArgs,
    #[command(flatten)]
    db: DbArgs,
}

/// What a process serves besides running builds.
#[derive(Clone, Copy, PartialEq)]
enum Front {
    /// The API and previews (`wright serve`).
    Http,
    /// Nothing (`wright worker`).
    None,
    /// MCP on stdin/stdout (`wright mcp serve`): stdout carries MCP only.
    McpStdio,
}

pub async fn worker(args: WorkerArgs, config_path: Option<PathBuf>) -> Result<u8, Exit> {
    run(ServeArgs { http: HttpArgs::default(), runner: args.runner }, config_path, Front::None).await
}

pub async fn serve(args: ServeArgs, config_path: Option<PathBuf>) -> Result<u8, Exit> {
    run(args, config_path, Front::Http).await
}

pub async fn mcp_serve(args: McpServeArgs, config_path: Option<PathBuf>) -> Result<u8, Exit> {
    run(ServeArgs { http: HttpArgs::default(), runner: args.runner }, config_path, Front::McpStdio).await
}

async fn run(mut args: ServeArgs, config_path: Option<PathBuf>, front: Front) -> Result<u8, Exit> {
    let http = front == Front::Http;
    let (mut file, _) = FileConfig::load(config_path.as_deref())?;
    if let Some(dir) = args.http.docs.take() {
        if !dir.is_dir() {
            return Err(usage(anyhow!("--docs {}: not a folder", dir.display())));
        }
        file.assistant.docs = Some(dir);
    }
    let s = file.serve.clone();
    let addr = |flag: Option<SocketAddr>, file: &Option<String>, default: &str| -> Result<SocketAddr, Exit> {
        match flag {
            Some(a) => Ok(a),
            None => {
                let text = file.as_deref().unwrap_or(default);
                text.parse().map_err(|e| usage(anyhow!("[serve] address `{text}`: {e}")))
            }
        }
    };
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
    let (min_chars, max_chars) = (s.prompt_min_chars.unwrap_or(10), s.prompt_max_chars.unwrap_or(2000));
    if min_chars > max_chars {
        return Err(usage(anyhow!("[serve] prompt_min_chars is above prompt_max_chars")));
    }
    let per_minute = args.http.unauthenticated_per_minute.or(s.unauthenticated_per_minute).unwrap_or(120);
    let proxies = if args.http.trusted_proxies.is_empty() { &s.trusted_proxies } else { &args.http.trusted_proxies };
    let ip_limit = IpLimit {
        per_minute,
        burst: s.unauthenticated_burst.unwrap_or(per_minute / 2).max(1),
        trusted_proxies: proxies
            .iter()
            .map(|p| p.parse::<Cidr>().map_err(|e| usage(anyhow!("trusted proxy: {e}"))))
            .collect::<Result<_, _>>()?,
    };
    let m = &file.maintenance;
    let half_life = m.decay_half_life_days.unwrap_or(90.0);
    if !(half_life.is_finite() && half_life >= 0.0) {
        return Err(usage(anyhow!("[maintenance] decay_half_life_days must be 0 (no decay) or more")));
    }
    let retention = match m.retention_days {
        None => None,
        Some(days) if days.is_finite() && (0.0..=365.0 * 1000.0).contains(&days) => {
            Some(Duration::from_secs_f64(days * 86_400.0))
        }
        Some(_) => return Err(usage(anyhow!("[maintenance] retention_days must be a number of days, 0 or more"))),
    };
    let maintenance = MaintenanceConfig {
        every: Duration::from_secs(m.every_secs.unwrap_or(3600).max(1)),
        decay_half_life_days: half_life,
        retention,
    };
    let metrics = MetricsConfig {
        token: match file.metrics.token.as_deref().map(str::trim) {
            None => None,
            Some(t) if !t.is_empty() && !t.contains(char::is_whitespace) => Some(t.to_string()),
            Some(_) => return Err(usage(anyhow!("[metrics] token must be one word, not empty (or leave it out)"))),
        },
        host_labels: file.metrics.host_labels.unwrap_or(false),
    };
    let cfg = ServeConfig {
        bind: addr(args.http.bind, &s.bind, "127.0.0.1:8787")?,
        preview_bind: addr(args.http.preview_bind, &s.preview_bind, "127.0.0.1:8788")?,
        workers: if args.http.no_workers { 0 } else { args.runner.workers.or(s.workers).unwrap_or(cores).max(1) },
        http,
        mcp_stdio: front == Front::McpStdio,
        limits: file.route_limits(args.http.builds_per_hour),
        max_concurrent_builds: args.http.max_concurrent_builds.or(s.max_concurrent_builds).unwrap_or(2).max(1),
        prompt_chars: (min_chars, max_chars),
        allowed_models: s.models.clone(),
        moderation: s
            .moderation_command
            .clone()
            .map(|command| Moderation { command, timeout: Duration::from_secs(10) }),
        heartbeat: Duration::from_secs(args.http.heartbeat.or(s.heartbeat_secs).unwrap_or(15).clamp(1, 30)),
        grace: Duration::from_secs(args.runner.grace.or(s.grace_secs).unwrap_or(30)),
        lease: Duration::from_secs(args.runner.lease.unwrap_or(10).max(1)),
        public_url: args.http.public_url,
        preview_url: args.http.preview_url,
        preview_idle: Duration::from_secs(args.http.preview_idle.unwrap_or(300).max(1)),
        max_restarts: args.runner.max_restarts.or(s.max_restarts).unwrap_or(2),
        ip_limit,
        maintenance,
        metrics,
    };
    let overrides = Overrides {
        timeout: args.runner.timeout,
        browser_check: args.runner.browser.browser_check.clone(),
        chromium: args.runner.browser.chromium.clone(),
        // A server says it in its log.
        notices: Default::default(),
        ..crate::where_and_how(&args.runner.llm, &args.runner.sandbox, &args.runner.db)
    };
    let engine = Arc::new(Engine::new(file, overrides).await?);
    let shutdown = CancellationToken::new();
    {
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            eprintln!(
                "wright serve: stopping: no new builds; running ones get the grace time (signal again to quit at once)"
            );
            shutdown.cancel();
            wait_for_signal().await;
            std::process::exit(130);
        });
    }
    let kind = engine.provider_kind().as_str();
    let workers = cfg.workers;
    let store = engine.store_kind();
    wright_server::serve(engine, cfg, shutdown, |s| {
        if front == Front::McpStdio {
            // stdout is the MCP channel.
            eprintln!("wright mcp serve · {workers} workers · provider {kind} · store {store} · MCP on stdin/stdout");
            return;
        }
        let mut out = std::io::stdout();
        let _ = if !s.http {
            writeln!(out, "wright worker · {workers} workers · provider {kind} · store {store}")
        } else if workers == 0 {
            writeln!(
                out,
                "wright serve · API http://{} · previews http://{} · no workers: builds wait for `wright worker` · store {store}",
                s.api, s.preview
            )
        } else {
            writeln!(
                out,
                "wright serve · API http://{} · previews http://{} · {workers} workers · provider {kind}",
                s.api, s.preview
            )
        };
        if let Some(link) = &s.login_url {
            let _ = writeln!(out, "First start: an admin was created. Sign in (the link works once): {link}");
        }
        let _ = out.flush();
    })
    .await
    .map_err(|e| Exit(2, anyhow!(e)))?;
    Ok(0)
}

async fn wait_for_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}
