//! What the chat's routes and the assistant's share: whose conversation it is, which language
//! the caller reads, and a turn's events as SSE (pausing where the page must act).

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use futures::StreamExt;
use wright_events::Lang;
use wright_events::chat_sse::{sse_data, sse_name};
use wright_store::Conversation;

/// `owner`'s conversation (a user's or a visitor's); anyone else's is "not found".
pub async fn owned_by(state: &AppState, owner: &str, id: &str) -> ApiResult<Conversation> {
    match state.store.conversation(id).await {
        Ok(c) if c.user_id == owner => Ok(c),
        Ok(_) | Err(wright_store::StoreError::NotFound(_)) => Err(ApiError::not_found(format!("conversation {id}"))),
        Err(e) => Err(e.into()),
    }
}

/// English or Portuguese by `Accept-Language` (its first language we speak), else English.
pub fn lang_of(headers: &HeaderMap) -> Lang {
    let value = headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    value
        .split(',')
        .filter_map(|part| part.split(';').next())
        .find_map(|tag| Lang::parse_loose(tag.trim()).or_else(|| Lang::parse_loose(tag.trim().get(..2)?)))
        .unwrap_or(Lang::En)
}

/// A turn's events after `after` as SSE, ending after `done`; with `pause`, also after a
/// `client_tool_calls` (the turn then waits for the page, which answers with a new request).
pub fn sse(state: &AppState, run: &str, after: u64, pause: bool) -> Response {
    let frames = crate::stream::follow(state.store.clone(), run, after, state.streams_stop.clone());
    let frames = futures::stream::unfold((frames, false), move |(mut frames, waiting)| async move {
        if waiting {
            return None;
        }
        let f = frames.next().await?;
        let waiting = pause && matches!(f.event.kind, wright_events::EventKind::ClientToolCalls { .. });
        Some((f, (frames, waiting)))
    });
    let mut res = crate::stream::sse(state.cfg.heartbeat, frames, |l| {
        (sse_name(&l.event.kind), sse_data(&l.event.kind).to_string())
    });
    if let Ok(v) = HeaderValue::from_str(run) {
        res.headers_mut().insert("x-wright-run", v);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_comes_from_accept_language() {
        let mut h = HeaderMap::new();
        assert_eq!(lang_of(&h), Lang::En);
        h.insert(header::ACCEPT_LANGUAGE, HeaderValue::from_static("pt-BR,pt;q=0.9,en;q=0.8"));
        assert_eq!(lang_of(&h), Lang::Pt);
        h.insert(header::ACCEPT_LANGUAGE, HeaderValue::from_static("fr-FR,fr;q=0.9"));
        assert_eq!(lang_of(&h), Lang::En);
        h.insert(header::ACCEPT_LANGUAGE, HeaderValue::from_static("de, pt-PT;q=0.5"));
        assert_eq!(lang_of(&h), Lang::Pt);
    }
}
