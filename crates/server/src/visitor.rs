//! Who may chat: a signed-in user (token or session), or an anonymous visitor of an app that
//! embeds an assistant with an embed key. A visitor's token is unguessable and owns only the
//! visitor's own conversations; it opens the chat routes and nothing else, and only from the
//! origins its key allows (CORS answers name the caller's origin only when the key allows it).

use crate::auth::{Caller, bearer, hash_token, token_with};
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use wright_store::{EmbedKey, User};

/// The header an embedding page sends its embed key in (only to start a visitor session).
pub const EMBED_KEY_HEADER: &str = "x-wright-embed-key";

/// Who is calling a chat route.
#[derive(Debug, Clone)]
pub enum ChatCaller {
    User(User),
    Visitor { id: String, key: EmbedKey },
}

impl ChatCaller {
    /// The owner id of this caller's conversations: a user's id, or `visitor:<key>:<visitor>`.
    pub fn owner(&self) -> String {
        match self {
            ChatCaller::User(u) => u.id.clone(),
            ChatCaller::Visitor { id, key } => format!("visitor:{}:{id}", key.id),
        }
    }

    /// Who is limited per hour and one turn at a time.
    pub fn limit_key(&self) -> String {
        self.owner()
    }
}

/// A visitor token: `vt_` and 64 hex characters.
pub fn new_visitor_token() -> String {
    token_with("vt_")
}

/// An embed key's secret: `ek_` and 64 hex characters.
pub fn new_embed_key() -> String {
    token_with("ek_")
}

/// `origin` is one `key` allows (scheme, host and port, exactly).
pub fn origin_allowed(key: &EmbedKey, origin: &str) -> bool {
    let origin = origin.trim_end_matches('/');
    key.origins.iter().any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(origin))
}

/// A refusal for a page on an origin its key does not allow.
pub fn wrong_origin(origin: &str) -> ApiError {
    ApiError::forbidden(format!(
        "pages on {origin} may not use this embed key; its owner can add the origin to the key"
    ))
}

impl FromRequestParts<AppState> for ChatCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        if let Some(token) = bearer(&parts.headers).filter(|t| t.starts_with("vt_")) {
            let (id, key) =
                state.store.visitor_by_hash(&hash_token(token)).await?.ok_or_else(ApiError::unauthorized)?;
            if let Some(origin) = parts.headers.get(header::ORIGIN).and_then(|v| v.to_str().ok())
                && !origin_allowed(&key, origin)
            {
                return Err(wrong_origin(origin));
            }
            return Ok(ChatCaller::Visitor { id, key });
        }
        Caller::from_request_parts(parts, state).await.map(|c| ChatCaller::User(c.0))
    }
}

/// The embed key a request names in [`EMBED_KEY_HEADER`], if live.
pub async fn embed_key_of(state: &AppState, headers: &HeaderMap) -> Result<Option<EmbedKey>, ApiError> {
    match headers.get(EMBED_KEY_HEADER).and_then(|v| v.to_str().ok()).map(str::trim) {
        Some(k) if !k.is_empty() => Ok(state.store.embed_key_by_hash(&hash_token(k)).await?),
        _ => Ok(None),
    }
}

/// Middleware for the routes an embedding page calls from its own origin: answers preflights,
/// and names the page's origin in `Access-Control-Allow-Origin` only for a request whose
/// visitor token or embed key allows that origin (the handlers refuse the others).
pub async fn cors(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let embeddable = path == "/api/chat"
        || path.starts_with("/api/chat/")
        || path == "/api/assistant"
        || path == "/api/embed/visitors";
    let origin = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()).map(str::to_string);
    let Some(origin) = origin.filter(|_| embeddable) else { return next.run(req).await };
    if req.method() == Method::OPTIONS {
        // A preflight carries no credentials: it may ask; the request itself is checked.
        let mut res = StatusCode::NO_CONTENT.into_response();
        let h = res.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&origin) {
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
        }
        h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, DELETE"));
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("authorization, content-type, accept-language, last-event-id, x-wright-embed-key"),
        );
        h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
        h.insert(header::VARY, HeaderValue::from_static("Origin"));
        return res;
    }
    let key = if let Some(token) = bearer(req.headers()).filter(|t| t.starts_with("vt_")) {
        state.store.visitor_by_hash(&hash_token(token)).await.ok().flatten().map(|(_, k)| k)
    } else {
        embed_key_of(&state, req.headers()).await.ok().flatten()
    };
    let allowed = key.as_ref().is_some_and(|k| origin_allowed(k, &origin));
    let mut res = next.run(req).await;
    if allowed && let Ok(v) = HeaderValue::from_str(&origin) {
        let h = res.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
        h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("x-wright-run"));
        h.append(header::VARY, HeaderValue::from_static("Origin"));
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(origins: &[&str]) -> EmbedKey {
        EmbedKey {
            id: "k".into(),
            owner_id: "u".into(),
            name: "app".into(),
            origins: origins.iter().map(|o| o.to_string()).collect(),
            tools: Vec::new(),
            docs_dir: None,
            per_hour: 10,
            created_at: String::new(),
            revoked_at: None,
        }
    }

    #[test]
    fn an_origin_must_match_exactly() {
        let k = key(&["https://app.example", "http://localhost:8788/"]);
        assert!(origin_allowed(&k, "https://app.example"));
        assert!(origin_allowed(&k, "http://localhost:8788"));
        assert!(!origin_allowed(&k, "https://app.example.evil"));
        assert!(!origin_allowed(&k, "http://app.example"));
        assert!(!origin_allowed(&key(&[]), "https://app.example"));
    }

    #[test]
    fn tokens_are_long_and_distinct() {
        let (a, b) = (new_visitor_token(), new_visitor_token());
        assert!(a.starts_with("vt_") && a.len() == 67 && a != b);
        assert!(new_embed_key().starts_with("ek_"));
    }
}
