//! `wright serve`: builds for many users over HTTP.
//!
//! - **Queue in the store.** `POST /api/builds` stores the request and answers at once; workers
//!   claim queued builds from the store under a lease they renew, so several servers can share
//!   one database and a build whose worker died is ended by whoever notices the lease ran out.
//! - **Streams from the store.** Every event is stored before it is broadcast; a follower reads
//!   the store, then live events, so a stream resumes exactly after any disconnect
//!   (`Last-Event-ID`), for any build, finished or not ([`stream`]).
//! - **Users.** Hashed tokens, one-time login links that become `HttpOnly` cookies, per-user
//!   limits; keys and endpoints stay in the server's configuration.
//! - **Preview on its own origin** with a restrictive CSP, so generated code never shares an
//!   origin with the API or its cookie.
//!
//! Everything is wired from one [`wright_engine::Engine`], the same one `wright run` uses.

mod admin;
mod api;
mod apps;
mod auth;
mod builds;
mod checks;
mod error;
mod explain;
mod metrics;
mod ops;
mod preview;
mod queue;
mod ratelimit;
mod rerun;
mod stream;
mod ui;

pub use auth::{hash_token, login_link, new_token};
pub use checks::Moderation;
pub use error::ApiError;
pub use ratelimit::{Cidr, IpLimit};

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_engine::Engine;
use wright_store::Store;

/// How the service shares itself out. Built by the CLI from flags and `[serve]`.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub bind: SocketAddr,
    pub preview_bind: SocketAddr,
    /// Builds run at once by this process.
    pub workers: usize,
    pub builds_per_hour: u32,
    pub max_concurrent_builds: u32,
    pub prompt_chars: (usize, usize),
    /// Models a request may pick (beside the configured one).
    pub allowed_models: Vec<String>,
    pub moderation: Option<Moderation>,
    /// Between SSE heartbeat comments.
    pub heartbeat: Duration,
    /// How long running builds may go on after a shutdown signal before they are cancelled.
    pub grace: Duration,
    /// How long a claimed build stays claimed without its worker renewing it.
    pub lease: Duration,
    /// The address people use for the API (the login link and preview frame-ancestors);
    /// `http://BIND` when unset.
    pub public_url: Option<String>,
    /// The preview origin people use: each build is at `{id}-{key}.` before its host name.
    /// `http://localhost:PREVIEW_PORT` when unset (browsers resolve `*.localhost` to this machine).
    pub preview_url: Option<String>,
    /// A full-stack preview's app is stopped after this long without a request.
    pub preview_idle: Duration,
    /// Times an interrupted build (crash, kill -9, stop past the grace time) runs again before
    /// it ends failed with `server_stopped`.
    pub max_restarts: u32,
    /// The per-address limit on requests that carry no valid credentials.
    pub ip_limit: IpLimit,
}

impl ServeConfig {
    pub fn api_origin(&self) -> String {
        self.public_url.clone().unwrap_or_else(|| format!("http://{}", self.bind)).trim_end_matches('/').to_string()
    }
    pub fn preview_origin(&self) -> String {
        self.preview_url
            .clone()
            .unwrap_or_else(|| format!("http://localhost:{}", self.preview_bind.port()))
            .trim_end_matches('/')
            .to_string()
    }
}

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

/// What every handler shares.
pub(crate) struct Shared {
    pub engine: Arc<Engine>,
    pub store: Arc<dyn Store>,
    pub cfg: ServeConfig,
    pub metrics: metrics::Metrics,
    pub queue: queue::Queue,
    /// Full-stack apps running for previews.
    pub apps: apps::Apps,
    /// Set once a shutdown began: no new builds, `/readyz` says 503.
    pub stopping: AtomicBool,
    /// Ends open event streams when the server goes away (clients resume elsewhere).
    pub streams_stop: CancellationToken,
    /// Redacts secret values of this host from prompts' error messages and finds secrets in prompts.
    pub redactor: wright_sandbox::Redactor,
    /// The model builds use when a request names none.
    pub default_model: String,
    /// Users whose explanation is being written (one at a time each).
    pub explaining: explain::Explaining,
    /// Requests without valid credentials, per client address.
    pub ip_limiter: ratelimit::IpLimiter,
}

pub(crate) type AppState = Arc<Shared>;

impl Shared {
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
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

/// What `serve` prints when it is up.
pub struct Started {
    pub api: SocketAddr,
    pub preview: SocketAddr,
    /// A one-time login link for the admin, when this start created the first user.
    pub login_url: Option<String>,
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
    let api_listener = listen(cfg.bind)?;
    let preview_listener = listen(cfg.preview_bind)?;
    let api_addr = api_listener.local_addr()?;
    let preview_addr = preview_listener.local_addr()?;
    let mut cfg = cfg;
    cfg.bind = api_addr;
    cfg.preview_bind = preview_addr;
    let login_url = auth::bootstrap_admin(store.as_ref(), &cfg.api_origin())
        .await
        .map_err(|e| ServeError::Setup(format!("creating the first user: {e}")))?;
    let shared = Arc::new(Shared {
        engine: engine.clone(),
        store: store.clone(),
        metrics: metrics::Metrics::new(),
        queue: queue::Queue::new(),
        apps: apps::Apps::default(),
        stopping: AtomicBool::new(false),
        streams_stop: CancellationToken::new(),
        redactor: wright_engine::host_redactor(false),
        default_model,
        explaining: explain::Explaining::default(),
        ip_limiter: ratelimit::IpLimiter::new(cfg.ip_limit.clone()),
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
    let api =
        axum::serve(api_listener, ops::router(shared.clone()).into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(shared.streams_stop.clone().cancelled_owned());
    let preview = axum::serve(preview_listener, preview::router(shared.clone()))
        .with_graceful_shutdown(shared.streams_stop.clone().cancelled_owned());
    on_start(&Started { api: api_addr, preview: preview_addr, login_url });
    let api = tokio::spawn(async move { api.await });
    let preview = tokio::spawn(async move { preview.await });

    shutdown.cancelled().await;
    tracing::info!("shutting down: no new builds; running ones get {:?}", shared.cfg.grace);
    shared.stopping.store(true, Ordering::SeqCst);
    workers_stop.cancel();
    queue::drain(&shared, workers).await;
    shared.streams_stop.cancel();
    idle.abort();
    shared.apps.stop_all();
    let _ = api.await;
    let _ = preview.await;
    Ok(())
}
