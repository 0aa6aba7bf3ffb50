//! The server's per-user limits, decided by the store ([`wright_store::Limiter`]) so every
//! server sharing it keeps one limit: one chat turn at a time per user, chat messages an hour
//! (a resume of an assistant turn counts as a message: it is another model call), an embed
//! key's messages and new visitor sessions an hour, new conversations an hour, `/v1/embeddings`
//! requests an hour, one explanation at a time. A refusal is a 429 with `Retry-After` and
//! takes nothing.

use crate::error::ApiError;
use crate::metrics::Metrics;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use wright_store::{Admit, Quota, SlotAsk, Store};

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

impl Drop for Held {
    fn drop(&mut self) {
        self.keeper.abort();
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

/// What a quota's key counts, in the words of a refusal.
fn counted(key: &str) -> &'static str {
    match key.split_once(':').map(|(kind, _)| kind) {
        Some("chat") => "chat messages",
        Some("key") => "messages to this app's assistant",
        Some("visitors") => "new visitor sessions of this app",
        Some("conversations") => "new conversations",
        Some("embeddings") => "embedding requests",
        _ => "requests",
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
        self.answer(decided, metric, "")
    }

    /// Take `key` (e.g. `turn:<user>`) for this server and count `quotas`, all or nothing;
    /// `busy` says, when someone else holds it, what is in the way.
    pub async fn hold(&self, key: String, quotas: &[Quota], metric: &str, busy: &str) -> Result<Held, ApiError> {
        let holder = format!("h-{}", uuid::Uuid::new_v4().simple());
        let ask = SlotAsk { key, holder, lease: SLOT_LEASE };
        let decided = self.store.admit(Some(&ask), quotas).await?;
        self.answer(decided, metric, busy)?;
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

    fn answer(&self, decided: Admit, metric: &str, busy: &str) -> Result<(), ApiError> {
        let (why, retry) = match decided {
            Admit::Admitted => return Ok(()),
            Admit::Busy { retry_after } => (busy.to_string(), retry_after),
            Admit::Over { key, max, retry_after, .. } => {
                let wait = retry_after.as_secs().max(1);
                (format!("at most {max} {} an hour; try again in {wait} s", counted(&key)), retry_after)
            }
        };
        self.metrics.refused(metric);
        Err(ApiError::too_many("rate_limited", why, retry.as_secs().max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn refusals_name_what_was_counted() {
        assert_eq!(counted("chat:u-1"), "chat messages");
        assert_eq!(counted("key:ek-1"), "messages to this app's assistant");
        assert_eq!(counted("odd"), "requests");
    }
}
