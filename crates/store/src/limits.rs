//! Per-user limits kept in the store, so every server sharing it enforces one limit: N servers
//! give a user the same chat messages an hour as one server does, and one turn at a time means
//! one across all of them.
//!
//! Two shapes cover every limit wright has:
//! - a **quota**: at most `max` uses of a key in a sliding `window` (messages an hour, visitor
//!   sessions a key starts an hour, `/v1/embeddings` requests). Each use is a row with the
//!   store's time; the window's rows are counted.
//! - a **slot**: one holder of a key at a time (a user's turn being answered), held for a lease
//!   the holder renews, so a server that dies lets go by itself when the lease runs out.
//!
//! [`Limiter::admit`] decides a slot and several quotas together, in one transaction under the
//! keys' locks: either all are taken or none is (a refused message uses up nothing), and two
//! requests at once on two servers cannot both see room left. Time is the store's (the
//! database's clock on PostgreSQL), never a server's.

use crate::Result;
use async_trait::async_trait;
use std::time::Duration;

/// At most `max` uses of `key` within `window`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    pub key: String,
    pub max: u32,
    pub window: Duration,
}

impl Quota {
    /// So many uses of `key` an hour.
    pub fn per_hour(key: impl Into<String>, max: u32) -> Self {
        Self { key: key.into(), max, window: HOUR }
    }
}

/// One holder of `key` at a time; `holder` keeps it for `lease` after each renewal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotAsk {
    pub key: String,
    pub holder: String,
    pub lease: Duration,
}

/// What [`Limiter::admit`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admit {
    /// The slot (if asked) is held and one use of every quota counted.
    Admitted,
    /// Someone else holds the slot; it frees at the latest when their lease runs out.
    Busy { retry_after: Duration },
    /// Quota `key` is used up: `count` uses in its window (at most `max`); the oldest of them
    /// leaves the window after `retry_after`.
    Over { key: String, count: u64, max: u32, retry_after: Duration },
}

/// How much of a limit is used now, read without taking any ([`Limiter::quota_usage`],
/// [`Limiter::runs_used`]): what a page shows before the limit bites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Uses in the window now.
    pub count: u64,
    /// When the oldest of them leaves the window (and one use comes back); `None` when there
    /// are none.
    pub frees_in: Option<Duration>,
}

/// A sliding-window quota's hour.
pub const HOUR: Duration = Duration::from_secs(3600);

/// Uses kept this long at most (the longest window a limit may have); older rows are removed
/// by [`Limiter::sweep_limits`].
pub const LONGEST_WINDOW: Duration = Duration::from_secs(24 * 3600);

/// Limits shared by every server of a store; every [`crate::Store`] is one.
#[async_trait]
pub trait Limiter: Send + Sync {
    /// Take `slot` (when given) and count one use of each of `quotas`, all or nothing, in one
    /// transaction: the first refusal found is the answer and nothing is taken. A holder
    /// asking again for a slot it holds gets it (its lease renewed).
    async fn admit(&self, slot: Option<&SlotAsk>, quotas: &[Quota]) -> Result<Admit>;
    /// Keep `holder`'s slot `key` for `lease` from now; false when it is not theirs any more
    /// (their lease ran out and someone else took it, or it was released).
    async fn renew_slot(&self, key: &str, holder: &str, lease: Duration) -> Result<bool>;
    /// How much of each of `quotas` is used now, in their order: a read, nothing is taken (the
    /// limits route shows it before a limit bites). `max` is not consulted.
    async fn quota_usage(&self, quotas: &[Quota]) -> Result<Vec<Usage>>;
    /// Runs of `kind` that `owner` queued within `window` (the runs' own hourly limit, which
    /// [`crate::Store::enqueue_build`] decides in the transaction that queues one): a read.
    async fn runs_used(&self, owner: &str, kind: wright_events::RunKind, window: Duration) -> Result<Usage>;
    /// Give slot `key` back if `holder` has it.
    async fn release_slot(&self, key: &str, holder: &str) -> Result<()>;
    /// Remove quota uses older than [`LONGEST_WINDOW`], slots whose lease ran out and visitors
    /// whose session expired; how many rows went.
    async fn sweep_limits(&self) -> Result<u64>;
}

/// Milliseconds as stored, from a duration (saturating: a window of centuries is "all time").
pub(crate) fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The wait until a use made at `oldest_ms` leaves a window of `window_ms`, at `now_ms`; at
/// least a second, as `Retry-After` counts whole seconds.
pub(crate) fn wait(oldest_ms: i64, window_ms: i64, now_ms: i64) -> Duration {
    let left = oldest_ms.saturating_add(window_ms).saturating_sub(now_ms).max(1000);
    Duration::from_millis(u64::try_from(left).unwrap_or(1000))
}

/// A [`Usage`] from a count and the oldest use's time, all in milliseconds.
pub(crate) fn usage_of(count: i64, oldest_ms: Option<i64>, window_ms: i64, now_ms: i64) -> Usage {
    let count = u64::try_from(count).unwrap_or_default();
    let frees_in = oldest_ms.filter(|_| count > 0).map(|o| wait(o, window_ms, now_ms));
    Usage { count, frees_in }
}

/// Milliseconds since 1970 of a stored RFC 3339 time (a run's `queued_at`).
pub(crate) fn rfc3339_ms(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text).ok().map(|t| t.timestamp_millis())
}

/// The keys a request locks, sorted and without repeats, so two requests that share keys
/// take their locks in the same order (no deadlock).
pub(crate) fn lock_order<'a>(slot: Option<&'a SlotAsk>, quotas: &'a [Quota]) -> Vec<String> {
    let mut keys: Vec<String> = slot
        .map(|s| format!("slot:{}", s.key))
        .into_iter()
        .chain(quotas.iter().map(|q| format!("quota:{}", q.key)))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_whole_seconds_at_least() {
        assert_eq!(wait(0, 3_600_000, 3_599_990), Duration::from_millis(1000));
        assert_eq!(wait(0, 3_600_000, 600_000), Duration::from_millis(3_000_000));
        assert_eq!(wait(i64::MAX, i64::MAX, 0), Duration::from_millis(i64::MAX as u64));
    }

    #[test]
    fn locks_are_taken_in_one_order() {
        let slot = SlotAsk { key: "turn:u".into(), holder: "h".into(), lease: HOUR };
        let qs = [Quota::per_hour("chat:u", 1), Quota::per_hour("chat:u", 2), Quota::per_hour("a", 1)];
        assert_eq!(lock_order(Some(&slot), &qs), ["quota:a", "quota:chat:u", "slot:turn:u"]);
    }
}
