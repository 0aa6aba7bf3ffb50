//! How the service is set up: built by the CLI from flags and `[serve]`.

use crate::checks::Moderation;
use crate::ratelimit::IpLimit;
use std::net::SocketAddr;
use std::time::Duration;

/// How the service shares itself out. Built by the CLI from flags and `[serve]`.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub bind: SocketAddr,
    pub preview_bind: SocketAddr,
    /// Builds run at once by this process; 0 for an API-only server (`--no-workers`), whose
    /// builds are run by `wright worker`s sharing its database.
    pub workers: usize,
    /// Whether this process serves HTTP (the API and previews); false for `wright worker`.
    pub http: bool,
    /// Whether this process answers MCP on its stdin and stdout (`wright mcp serve`, with
    /// `http` false) and stops when the client closes stdin.
    pub mcp_stdio: bool,
    /// Each model-backed route's requests an hour per user (`[limits]`).
    pub limits: wright_engine::RouteLimits,
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
    /// Periodic jobs (`[maintenance]`).
    pub maintenance: MaintenanceConfig,
    /// Who may read `/metrics` and whether its labels name hosts (`[metrics]`).
    pub metrics: MetricsConfig,
}

/// `GET /metrics`'s settings (`[metrics]` in wright.toml).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsConfig {
    /// The bearer token a scrape must carry; `None` leaves the route open.
    pub token: Option<String>,
    /// Whether per-server series carry the server's name and host; otherwise an opaque id.
    pub host_labels: bool,
}

/// The periodic jobs every server runs, one server at a time (`[maintenance]` in wright.toml;
/// see [`crate::maintenance`]).
#[derive(Debug, Clone, PartialEq)]
pub struct MaintenanceConfig {
    /// How often each job runs, across every server sharing the store [default: 1 hour].
    pub every: Duration,
    /// Days after which an unused note's record counts half when its confidence is
    /// recalculated; 0 for no decay [default: 90].
    pub decay_half_life_days: f64,
    /// How long a finished build's files are kept; `None` keeps them for ever [default].
    pub retention: Option<Duration>,
}

impl Default for MaintenanceConfig {
    fn default() -> Self {
        Self { every: Duration::from_secs(3600), decay_half_life_days: 90.0, retention: None }
    }
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
