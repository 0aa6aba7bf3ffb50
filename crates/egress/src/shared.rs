//! What the proxy's request handlers share: the rules, the counters and the way out
//! ([`State`]), and how an answer is made. The proxy ([`crate::proxy`]) makes the state; the
//! plain and API forwarding ([`crate::forward`]) and tunnels ([`crate::tunnel`]) use it, so
//! none of them depends back on the proxy.

use crate::policy::EgressPolicy;
use crate::report::{OutsideRequest, Sink};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Response, StatusCode};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// What the request handlers share: the rules, the counters and the way out.
pub(crate) struct State {
    pub(crate) policy: EgressPolicy,
    pub(crate) sink: Sink,
    pub(crate) client: reqwest::Client,
    pub(crate) requests: AtomicU64,
    pub(crate) bytes: AtomicU64,
    pub(crate) stop: CancellationToken,
    /// What the TCP port's callers must present (128 random bits, hex).
    pub(crate) token: String,
}

/// A response with a whole body (bodies are bounded by the byte limit, so they are buffered).
pub(crate) type Answer = Response<Full<Bytes>>;

impl State {
    /// Counts one outside request, or says which limit refuses it.
    pub(crate) fn admit(&self) -> Result<(), String> {
        let l = self.policy.limits;
        if self.bytes.load(Ordering::Relaxed) >= l.max_bytes {
            return Err(format!("this build has used its {} bytes of outside traffic", l.max_bytes));
        }
        if self.requests.fetch_add(1, Ordering::Relaxed) >= l.max_requests {
            return Err(format!("this build has made its {} outside requests", l.max_requests));
        }
        Ok(())
    }

    /// Bytes still allowed.
    pub(crate) fn budget(&self) -> u64 {
        self.policy.limits.max_bytes.saturating_sub(self.bytes.load(Ordering::Relaxed))
    }

    /// Takes `n` bytes from the budget; false when that goes past it.
    pub(crate) fn take(&self, n: u64) -> bool {
        self.bytes.fetch_add(n, Ordering::Relaxed).saturating_add(n) <= self.policy.limits.max_bytes
    }

    pub(crate) fn report(&self, r: OutsideRequest) {
        tracing::debug!(host = %r.host, method = %r.method, status = r.status, allowed = r.allowed, "outside request");
        (self.sink)(r);
    }

    /// Reports a refusal and answers it with `status` and the reason in plain words.
    pub(crate) fn refuse(
        &self,
        status: StatusCode,
        host: &str,
        method: &str,
        api: Option<&str>,
        reason: String,
        started: Instant,
    ) -> Answer {
        self.report(OutsideRequest {
            host: host.to_string(),
            method: method.to_string(),
            status: status.as_u16(),
            bytes: 0,
            duration_ms: elapsed_ms(started),
            allowed: false,
            api: api.map(str::to_string),
            reason: Some(reason.clone()),
        });
        text(status, format!("wright's egress proxy refused this request: {reason}\n"))
    }
}

pub(crate) fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

pub(crate) fn text(status: StatusCode, body: String) -> Answer {
    let mut res = Response::new(Full::new(Bytes::from(body)));
    *res.status_mut() = status;
    res.headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"));
    res
}

/// `host` or `host:port` (IPv6 in brackets) for reports; 80 and 443 go unsaid.
pub(crate) fn host_label(host: &str, port: u16) -> String {
    let host = if host.contains(':') { format!("[{host}]") } else { host.to_string() };
    if port == 80 || port == 443 { host } else { format!("{host}:{port}") }
}
