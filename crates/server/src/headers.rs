//! The request headers the API gives a meaning to, read once, axum's way: a handler names the
//! extractor and gets a checked value, or the request is refused with a clear `422` before the
//! handler runs. No handler reads these from a `HeaderMap` by hand.

use crate::error::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;

/// The longest `Idempotency-Key`.
pub const MAX_KEY_CHARS: usize = 200;

/// `Last-Event-ID`: the `seq` of the last event a client saw, to resume a stream after it.
/// Absent when the client starts from the beginning; anything but a number is refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LastEventId(pub Option<u64>);

impl LastEventId {
    /// Where a stream resumes: `?after=` wins over the header (a page that reconnects by hand
    /// says so in the address), else the header, else the beginning.
    pub fn after(self, query: Option<u64>) -> u64 {
        query.or(self.0).unwrap_or(0)
    }

    fn parse(value: Option<&[u8]>) -> Result<Self, ApiError> {
        let Some(raw) = value else { return Ok(Self(None)) };
        std::str::from_utf8(raw)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map(|seq| Self(Some(seq)))
            .ok_or_else(|| ApiError::invalid("invalid_fields", "Last-Event-ID must be the seq of an event"))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for LastEventId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Self::parse(parts.headers.get("last-event-id").map(|v| v.as_bytes()))
    }
}

/// `Idempotency-Key`: a client's name for one request, so a retry gets the same answer.
/// Absent when the client sends none; an empty, over-long or non-visible key is refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdempotencyKey(pub Option<String>);

impl IdempotencyKey {
    fn parse(value: Option<&axum::http::HeaderValue>) -> Result<Self, ApiError> {
        let Some(v) = value else { return Ok(Self(None)) };
        v.to_str()
            .ok()
            .filter(|k| !k.is_empty() && k.len() <= MAX_KEY_CHARS)
            .map(|k| Self(Some(k.to_string())))
            .ok_or_else(|| {
                ApiError::invalid("invalid_fields", format!("Idempotency-Key: 1 to {MAX_KEY_CHARS} visible characters"))
            })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for IdempotencyKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Self::parse(parts.headers.get("idempotency-key"))
    }
}

/// How a client wants a run's events: SSE, or JSON lines when its `Accept` names
/// `application/x-ndjson`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EventsFormat {
    #[default]
    Sse,
    Ndjson,
}

impl EventsFormat {
    fn parse(accept: Option<&axum::http::HeaderValue>) -> Self {
        let ndjson = accept.and_then(|v| v.to_str().ok()).is_some_and(|a| a.contains("application/x-ndjson"));
        if ndjson { Self::Ndjson } else { Self::Sse }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for EventsFormat {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self::parse(parts.headers.get(axum::http::header::ACCEPT)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn last_event_id_is_a_seq_or_refused() {
        assert_eq!(LastEventId::parse(None).map(|l| l.0).ok(), Some(None));
        assert_eq!(LastEventId::parse(Some(b" 7 ")).map(|l| l.0).ok(), Some(Some(7)));
        assert!(LastEventId::parse(Some(b"seven")).is_err());
        assert!(LastEventId::parse(Some(b"-1")).is_err());
        assert!(LastEventId::parse(Some(&[0xff])).is_err());
        assert_eq!(LastEventId(Some(7)).after(Some(3)), 3);
        assert_eq!(LastEventId(Some(7)).after(None), 7);
        assert_eq!(LastEventId(None).after(None), 0);
    }

    #[test]
    fn events_come_as_json_lines_only_when_asked_for() {
        let v = |s: &'static str| HeaderValue::from_static(s);
        assert_eq!(EventsFormat::parse(None), EventsFormat::Sse);
        assert_eq!(EventsFormat::parse(Some(&v("text/event-stream"))), EventsFormat::Sse);
        assert_eq!(EventsFormat::parse(Some(&v("application/x-ndjson"))), EventsFormat::Ndjson);
        assert_eq!(EventsFormat::parse(Some(&v("text/plain, application/x-ndjson;q=0.9"))), EventsFormat::Ndjson);
    }

    #[test]
    fn idempotency_keys_are_short_and_visible() {
        let ok = HeaderValue::from_static("dog-1");
        assert_eq!(IdempotencyKey::parse(Some(&ok)).map(|k| k.0).ok(), Some(Some("dog-1".to_string())));
        assert_eq!(IdempotencyKey::parse(None).map(|k| k.0).ok(), Some(None));
        assert!(IdempotencyKey::parse(Some(&HeaderValue::from_static(""))).is_err());
        let long = HeaderValue::from_str(&"k".repeat(MAX_KEY_CHARS + 1)).unwrap();
        assert!(IdempotencyKey::parse(Some(&long)).is_err());
        let bytes = HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap();
        assert!(IdempotencyKey::parse(Some(&bytes)).is_err());
    }
}
