//! The builds this process runs, and how each can be stopped: the part of the workers'
//! ([`crate::queue`]) state that every handler shares.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How a running build can be stopped: `cancel` is the user's stop button (the build ends,
/// with `complete`); `interrupt` drops the run as a crash would, to run it again later.
#[derive(Clone, Default)]
pub(crate) struct Handles {
    pub cancel: CancellationToken,
    pub interrupt: CancellationToken,
    /// Set with `interrupt` when the lease was lost, so the `restarted` event says why.
    pub lost: Arc<AtomicBool>,
}

impl Handles {
    /// The worker no longer holds the build (a lease it could not renew, or a write the store
    /// refused): drop the run as a crash would. Its commands go at once through `leash`, no
    /// model call starts from here on, a tool it still dispatches is refused (`cancel`, the
    /// tools' own fence), and the worker puts the build back (`lost`, `interrupt`).
    pub fn drop_run(&self, build: &str, why: &str, leash: Option<&wright_sandbox::Leash>) {
        tracing::warn!(build, "{why}; dropping this run");
        self.lost.store(true, Ordering::SeqCst);
        if let Some(leash) = leash {
            let _ = leash.hold_for(std::time::Duration::ZERO);
        }
        self.interrupt.cancel();
        self.cancel.cancel();
    }
}

/// The builds this process runs, and the bell that wakes idle workers.
pub struct Queue {
    pub wake: Notify,
    running: Mutex<HashMap<String, Handles>>,
    /// Names this process's workers and reaper in the store (`host-pid-random`).
    pub instance: String,
    /// This machine's name (the registry of workers shows it).
    pub host: String,
}

impl Queue {
    pub fn new() -> Self {
        let host = std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
        let tag = uuid::Uuid::new_v4().simple().to_string();
        Self {
            wake: Notify::new(),
            running: Mutex::new(HashMap::new()),
            instance: format!("{host}-{}-{}", std::process::id(), &tag[..6]),
            host,
        }
    }

    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, Handles>) -> R) -> R {
        let mut m = match self.running.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        f(&mut m)
    }

    /// Stop a build this process runs; false when it runs elsewhere (or not at all).
    pub fn cancel(&self, id: &str) -> bool {
        self.with(|m| m.get(id).map(|t| t.cancel.cancel()).is_some())
    }

    pub fn running(&self) -> usize {
        self.with(|m| m.len())
    }
}
