//! What every handler shares: the engine, the store, the configuration and the
//! parts of the service that live in this process (metrics, running builds, preview apps,
//! limits' front). A leaf of the module graph: it names only the parts it holds, none of the handlers.

use crate::apps::Apps;
use crate::config::ServeConfig;
use crate::limits::Limits;
use crate::metrics::Metrics;
use crate::ratelimit::IpLimiter;
use crate::running::Queue;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio_util::sync::CancellationToken;
use wright_engine::{Artifacts, Engine};
use wright_store::Store;

/// What every handler shares.
pub(crate) struct Shared {
    pub engine: Arc<Engine>,
    pub store: Arc<dyn Store>,
    /// Builds' files, archives and screenshots (a local folder now; any backend of
    /// [`Artifacts`] later, so any server can answer for any run).
    pub artifacts: Arc<dyn Artifacts>,
    pub cfg: ServeConfig,
    pub metrics: Metrics,
    pub queue: Queue,
    /// Full-stack apps running for previews.
    pub apps: Apps,
    /// Set once a shutdown began: no new builds, `/readyz` says 503.
    pub stopping: AtomicBool,
    /// Ends open event streams when the server goes away (clients resume elsewhere).
    pub streams_stop: CancellationToken,
    /// Redacts secret values of this host from prompts' error messages and finds secrets in prompts.
    pub redactor: wright_sandbox::Redactor,
    /// The model builds use when a request names none.
    pub default_model: String,
    /// Requests without valid credentials, per client address.
    pub ip_limiter: IpLimiter,
    /// Per-user limits every server of the store shares (one turn at a time, each route's
    /// requests an hour, an embed key's rates, one explanation at a time).
    pub limits: Limits,
    /// The chat tools' names, which a message's `modes` may switch.
    pub chat_tools: Vec<String>,
    /// The longest chat message, in characters.
    pub chat_max_chars: usize,
}

pub(crate) type AppState = Arc<Shared>;

impl Shared {
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}
