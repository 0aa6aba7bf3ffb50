//! What every handler shares: the engine, the store, the configuration and the
//! parts of the service that live in this process (metrics, running builds, preview apps,
//! limits). A leaf of the module graph: it names only the parts it holds, none of the handlers.

use crate::apps::Apps;
use crate::chatlimit::ChatLimits;
use crate::config::ServeConfig;
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
    /// Users whose explanation is being written (one at a time each).
    pub explaining: Explaining,
    /// Requests without valid credentials, per client address.
    pub ip_limiter: IpLimiter,
    /// Chat's per-user limits (one turn at a time, messages per hour).
    pub chat_limits: ChatLimits,
    /// The chat tools' names, which a message's `modes` may switch.
    pub chat_tools: Vec<String>,
    /// The longest chat message, in characters.
    pub chat_max_chars: usize,
    pub chat_per_hour: u32,
}

pub(crate) type AppState = Arc<Shared>;

impl Shared {
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}

/// Who is having a build explained right now: one explanation at a time per user, so a
/// model call of up to a minute cannot be fired off in a loop.
#[derive(Default)]
pub struct Explaining(std::sync::Mutex<std::collections::HashSet<String>>);

/// A user's place in [`Explaining`], given back when the request ends (or is dropped).
pub struct Turn<'a> {
    set: &'a Explaining,
    user: String,
}

impl Explaining {
    pub fn take(&self, user: &str) -> Option<Turn<'_>> {
        let mut set = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        set.insert(user.to_string()).then(|| Turn { set: self, user: user.to_string() })
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.set.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&self.user);
    }
}
