//! HTTP plumbing shared by the wire adapters: one client setup, one way to send and check a
//! request, one SSE pump with an idle timeout. Each wire only says how to read its own events.

use crate::{Delta, DeltaStream, ProviderError};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use std::collections::VecDeque;
use std::time::Duration;

/// The HTTP client every adapter uses.
pub(crate) fn client() -> Result<reqwest::Client, ProviderError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("wright/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ProviderError::Config(format!("HTTP client: {e}")))
}

/// Send a request, waiting at most `timeout` for the response to start. A non-2xx status becomes
/// the error `classify` makes of it (with the server's `Retry-After`, if any).
pub(crate) async fn send(
    builder: reqwest::RequestBuilder,
    url: &str,
    timeout: Duration,
    classify: impl Fn(u16, Option<Duration>, &str) -> ProviderError,
) -> Result<reqwest::Response, ProviderError> {
    send_request(builder, url, timeout, classify).await.map_err(SendError::into_error)
}

/// Why [`send_request`] has no response to read. The difference matters to a caller that
/// tries another way after a failure: an error status is the server's answer (asking again
/// another way would only double the load on a failing server), a broken connection is not.
#[derive(Debug)]
pub(crate) enum SendError {
    /// The server answered with an error status; its body, classified.
    Answered(ProviderError),
    /// No answer came: the connection failed or broke, or the wait ran out.
    NoAnswer(ProviderError),
}

impl SendError {
    pub(crate) fn into_error(self) -> ProviderError {
        match self {
            Self::Answered(e) | Self::NoAnswer(e) => e,
        }
    }
}

/// [`send`], telling an error status apart from no answer at all.
pub(crate) async fn send_request(
    builder: reqwest::RequestBuilder,
    url: &str,
    timeout: Duration,
    classify: impl Fn(u16, Option<Duration>, &str) -> ProviderError,
) -> Result<reqwest::Response, SendError> {
    let resp = match tokio::time::timeout(timeout, builder.send()).await {
        Err(_) => return Err(SendError::NoAnswer(ProviderError::Timeout(timeout))),
        Ok(Err(e)) => return Err(SendError::NoAnswer(classify_reqwest(&e, url))),
        Ok(Ok(r)) => r,
    };
    let status = resp.status().as_u16();
    if !(200..300).contains(&status) {
        let after = retry_after(resp.headers());
        let text = tokio::time::timeout(timeout, resp.text()).await.ok().and_then(Result::ok).unwrap_or_default();
        return Err(SendError::Answered(classify(status, after, &text)));
    }
    Ok(resp)
}

/// A whole response body, within `timeout`.
pub(crate) async fn body_text(resp: reqwest::Response, url: &str, timeout: Duration) -> Result<String, ProviderError> {
    match tokio::time::timeout(timeout, resp.text()).await {
        Err(_) => Err(ProviderError::Timeout(timeout)),
        Ok(Err(e)) => Err(classify_reqwest(&e, url)),
        Ok(Ok(t)) => Ok(t),
    }
}

/// What a wire makes of one SSE `data:` payload.
pub(crate) struct SseStep {
    pub deltas: Vec<Delta>,
    /// The answer is complete; stop reading.
    pub stop: bool,
}

/// Reads one wire's server-sent events.
pub(crate) trait SseHandler: Send + 'static {
    fn on_data(&mut self, data: &str) -> Result<SseStep, ProviderError>;
    /// Called when the server closes the stream; a wire that needs an explicit end marker
    /// returns an error when it did not see one.
    fn on_end(&mut self) -> Result<(), ProviderError> {
        Ok(())
    }
}

type EventStream = std::pin::Pin<
    Box<
        dyn futures::Stream<
                Item = Result<eventsource_stream::Event, eventsource_stream::EventStreamError<reqwest::Error>>,
            > + Send,
    >,
>;

struct SseState<H> {
    events: EventStream,
    pending: VecDeque<Delta>,
    done: bool,
    timeout: Duration,
    handler: H,
}

/// The deltas of a streamed response; waiting longer than `timeout` for any event is an error.
pub(crate) fn sse_deltas<H: SseHandler>(resp: reqwest::Response, timeout: Duration, handler: H) -> DeltaStream {
    let state = SseState {
        events: Box::pin(resp.bytes_stream().eventsource()),
        pending: VecDeque::new(),
        done: false,
        timeout,
        handler,
    };
    Box::pin(futures::stream::unfold(state, next_delta))
}

async fn next_delta<H: SseHandler>(mut st: SseState<H>) -> Option<(Result<Delta, ProviderError>, SseState<H>)> {
    loop {
        if let Some(d) = st.pending.pop_front() {
            return Some((Ok(d), st));
        }
        if st.done {
            return None;
        }
        let next = match tokio::time::timeout(st.timeout, st.events.next()).await {
            Err(_) => {
                st.done = true;
                return Some((Err(ProviderError::Timeout(st.timeout)), st));
            }
            Ok(n) => n,
        };
        match next {
            None => {
                st.done = true;
                if let Err(e) = st.handler.on_end() {
                    return Some((Err(e), st));
                }
            }
            Some(Err(e)) => {
                st.done = true;
                return Some((Err(ProviderError::Transient(format!("stream interrupted: {e}"))), st));
            }
            Some(Ok(ev)) => {
                let data = ev.data.trim();
                if data.is_empty() {
                    continue;
                }
                match st.handler.on_data(data) {
                    Ok(step) => {
                        st.done |= step.stop;
                        st.pending.extend(step.deltas);
                    }
                    Err(e) => {
                        st.done = true;
                        return Some((Err(e), st));
                    }
                }
            }
        }
    }
}

/// `retry-after-ms` (OpenAI) or `Retry-After` (seconds or an HTTP date).
pub(crate) fn retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = h.get("retry-after-ms").and_then(|v| v.to_str().ok()).and_then(|s| s.trim().parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    let raw = h.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    parse_retry_after(raw, chrono::Utc::now())
}

/// `Retry-After` is either delta-seconds or an HTTP date.
pub fn parse_retry_after(raw: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    if let Ok(secs) = raw.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(raw).ok()?;
    let delta = when.with_timezone(&chrono::Utc) - now;
    Some(delta.to_std().unwrap_or(Duration::ZERO))
}

pub(crate) fn classify_reqwest(e: &reqwest::Error, url: &str) -> ProviderError {
    if e.is_timeout() {
        ProviderError::Timeout(Duration::ZERO)
    } else if e.is_connect() {
        ProviderError::Unreachable(format!("{url}: {}", root_cause(e)))
    } else if e.is_builder() {
        ProviderError::Config(format!("bad endpoint URL {url}: {e}"))
    } else {
        ProviderError::Transient(format!("{url}: {}", root_cause(e)))
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur: &(dyn std::error::Error + 'static) = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
