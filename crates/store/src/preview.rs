//! A preview's own event log: the `outside_request` events of a previewed build's proxy (its
//! page's calls through the preview's relay, its app's server's calls). Kept apart from the
//! build's run log, which ends at `complete` with nothing after it; numbered per build by the
//! store (1, 2, 3…), on every backend the same.

use crate::{Result, StoreError};
use async_trait::async_trait;
use wright_events::{Event, EventKind};

/// Longest a preview log is read in one call.
pub const PREVIEW_PAGE: u32 = 1000;

#[async_trait]
pub trait PreviewLog: Send + Sync {
    /// Store one event of `build`'s preview after its last one; the event as stored.
    async fn add_preview_event(&self, build: &str, kind: &EventKind) -> Result<Event>;
    /// `build`'s preview events with `seq > after`, in order, at most [`PREVIEW_PAGE`].
    async fn preview_events(&self, build: &str, after: u64) -> Result<Vec<Event>>;
}

/// A payload as stored.
pub(crate) fn payload(kind: &EventKind) -> Result<String> {
    serde_json::to_string(kind).map_err(|e| StoreError::Invalid(format!("event: {e}")))
}

/// A stored row back as the event it was.
pub(crate) fn event(build: &str, seq: i64, ts: String, data: &str) -> Result<Event> {
    let kind: EventKind = serde_json::from_str(data).map_err(|e| StoreError::Corrupt(format!("preview event: {e}")))?;
    let seq = u64::try_from(seq).map_err(|_| StoreError::Corrupt(format!("preview event seq {seq}")))?;
    Ok(Event { seq: wright_events::Seq(seq), build: build.to_string(), ts, kind })
}
