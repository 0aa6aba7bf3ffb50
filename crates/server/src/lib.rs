//! `wright serve`: builds for many users over HTTP.
//!
//! - **Queue in the store.** `POST /api/builds` stores the request and answers at once; workers
//!   claim queued builds from the store under a lease they renew, so several servers can share
//!   one database and a build whose worker died is ended by whoever notices the lease ran out.
//! - **Streams from the store.** Every event is stored before anyone is shown it; a follower is
//!   the store's own subscription (stored events, then live ones from its notifier), so a
//!   stream resumes exactly after any disconnect (`Last-Event-ID`), for any build, finished or
//!   not ([`stream`]). Runs are numbered and ended by the store ([`wright_store::RunLog`]).
//! - **Users.** Hashed tokens, one-time login links that become `HttpOnly` cookies, per-user
//!   limits; keys and endpoints stay in the server's configuration.
//! - **MCP** ([`mcp`]): the same builds, tasks, apps and chat as tools, at `/mcp` and, for
//!   `wright mcp serve`, on stdin/stdout, through the same functions as the routes.
//! - **Preview on its own origin** with a restrictive CSP, so generated code never shares an
//!   origin with the API or its cookie.
//!
//! Everything is wired from one [`wright_engine::Engine`], the same one `wright run` uses.

// The modules import each other in one direction only (tests/module_graph.rs checks it):
// - leaves: `error`, `api` (request and response bodies), `config`, `checks`, `rerun`,
//   `stream`, `metrics` (and its `seed_metrics`), `ratelimit` (its buckets), `running`, `apps`, `files`;
// - `state` (what every handler shares), above the parts it holds;
// - `maintenance` (periodic jobs, the heartbeat), above `state`;
// - `queue` (the workers, which start the maintenance) and `auth` (who is calling), above `state`;
// - `access` (who may see and change a run), above `state` and `auth`;
// - `spend` (the monthly caps every model-backed route checks), above `state`;
// - the resources: `builds`, `classes` (classes, teachers' views, shared builds), `explain`, `admin`, `ops`, `ui`, `published` (apps), `spend_api`, `preview`
//   (above `published`, whose apps it serves);
// - `mcp`, the same resources as MCP tools (above `builds`, `tasks`, `chat`, `published`);
// - `router`, the API origin's routes and OpenAPI document, above every resource;
// - and this root, which starts it all and which no module imports.
mod access;
mod admin;
mod api;
mod app_assistant;
mod apps;
mod assistant;
mod auth;
mod builds;
mod chat;
mod checks;
mod classes;
mod config;
mod embeddings;
mod enqueue;
mod error;
mod experiments;
mod explain;
mod feedback;
mod files;
mod headers;
mod jobs;
mod limits;
mod limits_api;
mod maintenance;
mod mcp;
mod metrics;
mod ops;
mod outside;
mod preview;
mod published;
mod queue;
mod ratelimit;
mod rerun;
mod router;
mod running;
mod seed_metrics;
mod spend;
mod spend_api;
mod state;
mod stream;
mod tasks;
mod turns;
mod ui;
mod visitor;

pub use auth::{hash_token, login_link, new_token};
pub use checks::Moderation;
pub use config::{MaintenanceConfig, MetricsConfig, ServeConfig};
pub use error::ApiError;
pub use ratelimit::{Cidr, IpLimit};

use state::Shared;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_engine::Engine;

/// Why the service could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("{0}")]
    Setup(String),
    #[error("the server stopped: {0}")]
    Io(#[from] std::io::Error),
}

/// A listener with a long accept queue: a thousand followers reconnecting at once must not
/// see their connections time out (the default backlog is shorter on some systems).
fn listen(addr: SocketAddr) -> Result<tokio::net::TcpListener, ServeError> {
    let bind = |e| ServeError::Bind(addr, e);
    let socket =
        if addr.is_ipv4() { tokio::net::TcpSocket::new_v4() } else { tokio::net::TcpSocket::new_v6() }.map_err(bind)?;
    socket.set_reuseaddr(true).map_err(bind)?;
    socket.bind(addr).map_err(bind)?;
    socket.listen(4096).map_err(bind)
}

/// Between two sweeps of the turns: expired assistant calls, and turns whose lease ran out
/// (a dead server's turn ends within [`wright_engine::TURN_LEASE`] and one sweep).
const TURN_SWEEP: Duration = Duration::from_secs(10);

/// What `serve` prints when it is up.
pub struct Started {
    pub api: SocketAddr,
    pub preview: SocketAddr,
    /// A one-time login link for the admin, when this start created the first user.
    pub login_url: Option<String>,
    /// Whether `api` and `preview` are served (false for `wright worker`).
    pub http: bool,
}

/// Run the service until `shutdown` fires, then stop taking builds, let running ones finish
/// within the grace time, cancel the rest (their streams still end with `complete`) and return.
/// `on_start` hears the bound addresses (and the first admin's login link) once listening.
pub async fn serve(
    engine: Arc<Engine>,
    cfg: ServeConfig,
    shutdown: CancellationToken,
    on_start: impl FnOnce(&Started),
) -> Result<(), ServeError> {
    let store = engine.store().clone();
    // The provider is connected (the offline model loaded) before the first request.
    let default_model = engine.default_model().await.map_err(|e| ServeError::Setup(e.to_string()))?;
    let interrupted = engine.end_interrupted_chat_turns().await;
    if interrupted > 0 {
        tracing::info!("{interrupted} chat turn(s) interrupted by the last stop were ended");
    }
    let listeners = if cfg.http { Some((listen(cfg.bind)?, listen(cfg.preview_bind)?)) } else { None };
    let mut cfg = cfg;
    let mut login_url = None;
    if let Some((api, preview)) = &listeners {
        cfg.bind = api.local_addr()?;
        cfg.preview_bind = preview.local_addr()?;
        login_url = auth::bootstrap_admin(store.as_ref(), &cfg.api_origin())
            .await
            .map_err(|e| ServeError::Setup(format!("creating the first user: {e}")))?;
    }
    let (api_addr, preview_addr) = (cfg.bind, cfg.preview_bind);
    // Files, archives and screenshots are kept under the engine's data directory, where its
    // builds write them.
    let artifacts = Arc::new(engine.artifacts().clone());
    let metrics = metrics::Metrics::new();
    let shared = Arc::new(Shared {
        engine: engine.clone(),
        store: store.clone(),
        artifacts,
        metrics: metrics.clone(),
        queue: running::Queue::new(),
        apps: apps::Apps::default(),
        stopping: AtomicBool::new(false),
        streams_stop: CancellationToken::new(),
        redactor: wright_engine::host_redactor(false),
        default_model,
        ip_limiter: ratelimit::IpLimiter::new(cfg.ip_limit.clone()),
        limits: limits::Limits::new(store.clone(), metrics.clone()),
        chat_tools: engine.chat_tools().iter().map(|t| t.name().to_string()).collect(),
        chat_max_chars: engine.file().chat.message_max_chars.unwrap_or(4000).max(1),
        cfg,
    });
    let workers_stop = CancellationToken::new();
    let workers = queue::start(shared.clone(), workers_stop.clone());
    let idle = {
        let shared = shared.clone();
        tokio::spawn(async move {
            let every = (shared.cfg.preview_idle / 4).clamp(Duration::from_millis(250), Duration::from_secs(30));
            loop {
                tokio::time::sleep(every).await;
                shared.apps.stop_idle(shared.cfg.preview_idle);
            }
        })
    };
    // Assistant turns whose page never answered end once their calls' deadline passes, and
    // chat and assistant turns whose server died (their lease ran out, on any server sharing
    // the store) end too.
    let expiry = {
        let engine = shared.engine.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(TURN_SWEEP).await;
                let ended = engine.expire_assistant_calls().await;
                if ended > 0 {
                    tracing::info!("{ended} assistant turn(s) ended: the page did not answer in time");
                }
                let lapsed = engine.end_lapsed_turns().await;
                if lapsed > 0 {
                    tracing::info!("{lapsed} turn(s) ended: the server answering them stopped");
                }
            }
        })
    };
    let Some((api_listener, preview_listener)) = listeners else {
        // `wright worker`: builds only, until the signal; `wright mcp serve`: builds and the MCP
        // handler on stdin/stdout, until the signal or the client closes stdin.
        on_start(&Started { api: api_addr, preview: preview_addr, login_url, http: false });
        if shared.cfg.mcp_stdio {
            let stop = shutdown.child_token();
            tokio::select! {
                ended = mcp::stdio(shared.clone(), stop) => if let Err(e) = ended {
                    tracing::error!("MCP on stdio stopped: {e}");
                },
                _ = shutdown.cancelled() => {}
            }
        } else {
            shutdown.cancelled().await;
        }
        tracing::info!("shutting down: no new builds; running ones get {:?}", shared.cfg.grace);
        shared.stopping.store(true, Ordering::SeqCst);
        workers_stop.cancel();
        queue::drain(&shared, workers).await;
        idle.abort();
        expiry.abort();
        return Ok(());
    };
    let api =
        axum::serve(api_listener, router::router(shared.clone()).into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(shared.streams_stop.clone().cancelled_owned());
    let preview = axum::serve(preview_listener, preview::router(shared.clone()))
        .with_graceful_shutdown(shared.streams_stop.clone().cancelled_owned());
    on_start(&Started { api: api_addr, preview: preview_addr, login_url, http: true });
    // The chat's diagram renderer (Mermaid, from the npm registry, checked) is fetched once, in
    // the background: diagrams show as source until it lands.
    let data_dir = shared.engine.data_dir().to_path_buf();
    if !wright_webui::vendor::mermaid_present(&data_dir) {
        tokio::task::spawn_blocking(move || {
            if let Err(e) = wright_webui::vendor::ensure_mermaid(&data_dir) {
                tracing::warn!("the chat's diagram renderer could not be fetched (diagrams show as source): {e}");
            }
        });
    }
    // The assistant's accessibility library (dom-accessibility-api, from the npm registry,
    // checked) likewise; and wright's own documents are indexed for its assistant.
    let data_dir = shared.engine.data_dir().to_path_buf();
    if !wright_webui::vendor::dom_accessibility_api_present(&data_dir) {
        tokio::task::spawn_blocking(move || {
            if let Err(e) = wright_webui::vendor::ensure_dom_accessibility_api(&data_dir) {
                tracing::warn!("the assistant's accessibility library could not be fetched: {e}");
            }
        });
    }
    {
        let shared = shared.clone();
        tokio::spawn(async move {
            crate::assistant::scope_of(&shared, None).await;
        });
    }
    // The chat's embedding model is loaded now, not on someone's first message (when it is not
    // here yet, the first message fetches it: `wright chat` once does too).
    if shared.engine.chat_embedding_present() {
        let warm = shared.engine.clone();
        tokio::spawn(async move {
            if let Err(e) = warm.chat_parts().await {
                tracing::warn!("the chat agent could not be prepared: {e}");
            }
        });
    }
    let api = tokio::spawn(async move { api.await });
    let preview = tokio::spawn(async move { preview.await });

    shutdown.cancelled().await;
    tracing::info!("shutting down: no new builds; running ones get {:?}", shared.cfg.grace);
    shared.stopping.store(true, Ordering::SeqCst);
    workers_stop.cancel();
    queue::drain(&shared, workers).await;
    // Chat turns' background tools (after their `done`) store their parts before we go.
    shared.engine.finish_background_tools(shared.cfg.grace).await;
    shared.streams_stop.cancel();
    idle.abort();
    expiry.abort();
    shared.apps.stop_all();
    let _ = api.await;
    let _ = preview.await;
    Ok(())
}
