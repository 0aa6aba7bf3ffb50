//! What the proxy says about each outside request, and where it says it.

use std::sync::Arc;

/// One outside request as reported: what was asked, what came of it. Holds no key, no URL
/// path and no query, only the host, so it can be shown and stored as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideRequest {
    /// `host`, or `host:port` when the port is not 80 or 443.
    pub host: String,
    /// `GET`, `POST`, … or `CONNECT` for a tunnel.
    pub method: String,
    /// The status the sandbox got back (200 for a tunnel that opened; 403 refused; 429 past a
    /// limit; 502 the outside did not answer).
    pub status: u16,
    /// Body bytes both ways (see [`Limits::max_bytes`]).
    pub bytes: u64,
    pub duration_ms: u64,
    /// Whether the request was let through.
    pub allowed: bool,
    /// The named API, for `/_api/<name>/…` calls.
    pub api: Option<String>,
    /// Why it was refused or cut short, in plain words.
    pub reason: Option<String>,
}

/// Where reports go. Called on the proxy's tasks, so it must be quick.
pub type Sink = Arc<dyn Fn(OutsideRequest) + Send + Sync>;
