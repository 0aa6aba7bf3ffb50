//! The server's per-user limits, decided by the store ([`wright_store::Limiter`]) so every
//! server sharing it keeps one limit: each model-backed [`Route`]'s requests an hour
//! (`[limits]`: builds and task runs, decided where the run is queued; explanations, chat
//! messages — a resume of an assistant turn counts as one: it is another model call — and
//! assistant turns), one chat turn and one explanation at a time per user, an embed key's
//! messages and new visitor sessions an hour, new conversations an hour, `/v1/embeddings`
//! requests an hour. A refusal is a 429 with `Retry-After` and the limit it ran into
//! (`error.limit`), and takes nothing.

use crate::error::{ApiError, LimitHit};
use crate::metrics::Metrics;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use wright_engine::RouteLimits;
use wright_events::RunKind;
use wright_store::{Admit, Quota, SlotAsk, Store};

/// A model-backed route with an hourly limit per user, set in `[limits]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Builds,
    Tasks,
    Explanations,
    ChatMessages,
    AssistantTurns,
}

impl Route {
    pub const ALL: [Route; 5] =
        [Self::Builds, Self::Tasks, Self::Explanations, Self::ChatMessages, Self::AssistantTurns];

    /// Its name in the limits route and in a refusal's `error.limit.route`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Builds => "builds",
            Self::Tasks => "tasks",
            Self::Explanations => "explanations",
            Self::ChatMessages => "chat_messages",
            Self::AssistantTurns => "assistant_turns",
        }
    }

    /// Its hourly limit.
    pub fn max(self, l: &RouteLimits) -> u32 {
        match self {
            Self::Builds => l.builds_per_hour,
            Self::Tasks => l.tasks_per_hour,
            Self::Explanations => l.explanations_per_hour,
            Self::ChatMessages => l.chat_messages_per_hour,
            Self::AssistantTurns => l.assistant_turns_per_hour,
        }
    }

    /// The runs it counts, for the routes whose limit is decided where a run is queued (the
    /// queue counts the runs themselves, in the transaction that queues one).
    pub fn run_kind(self) -> Option<RunKind> {
        match self {
            Self::Builds => Some(RunKind::Build),
            Self::Tasks => Some(RunKind::Task),
            _ => None,
        }
    }

    /// The store's quota of `who`'s uses of it (a user's id; a visitor's for assistant turns).
    /// Builds and task runs are counted by the queue instead ([`Route::run_kind`]): theirs
    /// names the same limit but no request takes it.
    pub fn quota(self, l: &RouteLimits, who: &str) -> Quota {
        let kind = match self {
            Self::Builds => "builds",
            Self::Tasks => "tasks",
            Self::Explanations => "explanations",
            Self::ChatMessages => "chat",
            Self::AssistantTurns => "assistant",
        };
        Quota::per_hour(format!("{kind}:{who}"), self.max(l))
    }
}

/// How long a held slot outlives its server's last renewal: a server that dies mid-turn frees
/// its user after this at the latest.
pub const SLOT_LEASE: Duration = wright_engine::TURN_LEASE;

/// Why a message waits: one is answered at a time per user, on every server.
pub const BUSY: &str = "the previous message is still being answered; wait for it to finish";

/// The store's limits, with what this server counts of them.
#[derive(Clone)]
pub struct Limits {
    store: Arc<dyn Store>,
    metrics: Metrics,
}

/// A slot this server holds (renewed every third of its lease) until dropped.
pub struct Held {
    store: Arc<dyn Store>,
    key: String,
    holder: String,
    keeper: JoinHandle<()>,
}

impl Held {
    /// Give the slot back now, before the answer goes out: a client that asks again as soon as
    /// it has its answer finds the slot free (a drop gives it back a moment later, in a task).
    pub async fn release(mut self) {
        self.keeper.abort();
        let (key, holder) = (std::mem::take(&mut self.key), std::mem::take(&mut self.holder));
        if let Err(e) = self.store.release_slot(&key, &holder).await {
            tracing::warn!(key, "a limit's slot was not given back (its lease frees it): {e}");
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.keeper.abort();
        if self.key.is_empty() {
            return; // given back by `release`
        }
        let (store, key, holder) =
            (self.store.clone(), std::mem::take(&mut self.key), std::mem::take(&mut self.holder));
        // Given back at once when a runtime is there to do it; else its lease runs out.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                if let Err(e) = store.release_slot(&key, &holder).await {
                    tracing::warn!(key, "a limit's slot was not given back (its lease frees it): {e}");
                }
            });
        }
    }
}

/// What a quota's key counts: the limit's name in `error.limit.route`, and in a refusal's words.
fn counted(key: &str) -> (&'static str, &'static str) {
    match key.split_once(':').map(|(kind, _)| kind) {
        Some("chat") => ("chat_messages", "chat messages"),
        Some("explanations") => ("explanations", "explanations"),
        Some("assistant") => ("assistant_turns", "assistant turns"),
        Some("key") => ("app_assistant", "messages to this app's assistant"),
        Some("visitors") => ("visitor_sessions", "new visitor sessions of this app"),
        Some("conversations") => ("conversations", "new conversations"),
        Some("embeddings") => ("embeddings", "embedding requests"),
        _ => ("requests", "requests"),
    }
}

/// The limit `route` (`limit` in `window`, `used` now) that refuses, with room back after `retry`.
pub fn hit(route: &'static str, limit: u32, used: u64, window: Duration, retry: Duration) -> LimitHit {
    let retry_after_secs = retry.as_secs().max(1);
    let at = chrono::Utc::now() + chrono::Duration::seconds(i64::try_from(retry_after_secs).unwrap_or(i64::MAX / 1000));
    LimitHit {
        route,
        limit,
        used,
        window_secs: window.as_secs(),
        retry_after_secs,
        resets_at: at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    }
}

impl Limits {
    pub fn new(store: Arc<dyn Store>, metrics: Metrics) -> Self {
        Self { store, metrics }
    }

    /// Count one use of each of `quotas`, or refuse (429) with nothing counted. `metric` names
    /// the refusal in `/metrics`.
    pub async fn count(&self, quotas: &[Quota], metric: &str) -> Result<(), ApiError> {
        let decided = self.store.admit(None, quotas).await?;
        self.answer(decided, quotas, metric, "")
    }

    /// Take `key` (e.g. `turn:<user>`) for this server and count `quotas`, all or nothing;
    /// `busy` says, when someone else holds it, what is in the way.
    pub async fn hold(&self, key: String, quotas: &[Quota], metric: &str, busy: &str) -> Result<Held, ApiError> {
        let holder = format!("h-{}", uuid::Uuid::new_v4().simple());
        let ask = SlotAsk { key, holder, lease: SLOT_LEASE };
        let decided = self.store.admit(Some(&ask), quotas).await?;
        self.answer(decided, quotas, metric, busy)?;
        let SlotAsk { key, holder, lease } = ask;
        let keeper = {
            let (store, key, holder) = (self.store.clone(), key.clone(), holder.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(lease / 3).await;
                    match store.renew_slot(&key, &holder, lease).await {
                        Ok(true) => {}
                        Ok(false) => return,
                        Err(e) => tracing::warn!(key, "renewing a limit's slot: {e}"),
                    }
                }
            })
        };
        Ok(Held { store: self.store.clone(), key, holder, keeper })
    }

    fn answer(&self, decided: Admit, quotas: &[Quota], metric: &str, busy: &str) -> Result<(), ApiError> {
        let refusal = match decided {
            Admit::Admitted => return Ok(()),
            Admit::Busy { retry_after } => ApiError::too_many("rate_limited", busy, retry_after.as_secs().max(1)),
            Admit::Over { key, count, max, retry_after } => {
                let (route, words) = counted(&key);
                let window = quotas.iter().find(|q| q.key == key).map_or(wright_store::limits::HOUR, |q| q.window);
                let hit = hit(route, max, count, window, retry_after);
                let (wait, back) = (hit.retry_after_secs, hit.resets_at.clone());
                ApiError::limited(
                    format!("at most {max} {words} an hour ({count} used); try again in {wait} s (at {back})"),
                    hit,
                )
            }
        };
        self.metrics.refused(metric);
        Err(refusal)
    }
}

#[cfg(test)]
mod tests {
    use super::{Route, counted};
    use wright_store::Quota;

    #[test]
    fn refusals_name_what_was_counted() {
        assert_eq!(counted("chat:u-1"), ("chat_messages", "chat messages"));
        assert_eq!(counted("key:ek-1").1, "messages to this app's assistant");
        assert_eq!(counted("odd"), ("requests", "requests"));
        // Every route's own quota is named by its route.
        let l = wright_engine::RouteLimits::default();
        for r in [Route::Explanations, Route::ChatMessages, Route::AssistantTurns] {
            assert_eq!(counted(&r.quota(&l, "u-1").key).0, r.name());
        }
        assert_eq!(Route::Explanations.quota(&l, "u-1"), Quota::per_hour("explanations:u-1", 20));
    }
}
