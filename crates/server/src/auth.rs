//! Who is calling: `Authorization: Bearer <token>`, or the `HttpOnly` session cookie a
//! one-time login link sets. Only SHA-256 hashes of tokens are stored; tokens never reach
//! logs or events (the request span records the route, not headers).

use crate::api::Me;
use crate::error::ApiError;
use crate::state::AppState;
use axum::Json;
use axum::extract::{FromRequestParts, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::time::Duration;
use wright_store::{Role, SessionKind, Store, User};

/// The session cookie's name.
pub const COOKIE: &str = "wright_session";
/// How long a browser session lasts.
const SESSION_DAYS: u64 = 30;
/// How long a login link works (once).
const LOGIN_LINK: Duration = Duration::from_secs(24 * 3600);

/// A new random secret: `wr_` and 64 hex digits (256 bits).
pub fn new_token() -> String {
    token_with("wr_")
}

/// `prefix` and 64 random hex characters (two v4 UUIDs): an unguessable secret.
pub fn token_with(prefix: &str) -> String {
    let a = uuid::Uuid::new_v4().simple().to_string();
    let b = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}{a}{b}")
}

/// The token of an `Authorization: Bearer …` header.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
}

/// What the store keeps of a token.
pub fn hash_token(token: &str) -> String {
    Sha256::digest(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The signed-in user of a request.
#[derive(Debug, Clone)]
pub struct Caller(pub User);

impl Caller {
    pub fn is_admin(&self) -> bool {
        self.0.role == Role::Admin
    }
    /// May this caller change something owned by `owner` (an app)? Runs go through
    /// `crate::access`, which also knows teachers and classmates.
    pub fn may_see(&self, owner: Option<&str>) -> bool {
        self.is_admin() || owner == Some(self.0.id.as_str())
    }
}

pub(crate) fn cookie_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(';')).find_map(|kv| {
        let (k, v) = kv.trim().split_once('=')?;
        (k == name).then_some(v)
    })
}

/// Whether a request that carries the session cookie comes from the UI's own origin. A page on
/// a preview origin (a generated app, which knows its build id) could otherwise send the
/// viewer's cookie along with a POST, since previews may share the UI's registrable domain.
/// Reads need no check; a client that sends neither header is not a browser.
fn same_site_request(parts: &Parts) -> bool {
    use axum::http::Method;
    if matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return true;
    }
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = header("sec-fetch-site") {
        return site == "same-origin" || site == "none";
    }
    match (header("origin"), header("host")) {
        (Some(origin), Some(host)) => origin.split_once("://").map(|(_, h)| h) == Some(host),
        (Some(_), None) => false,
        (None, _) => true,
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let user = if let Some(token) = bearer(&parts.headers) {
            state.store.user_by_token(&hash_token(token)).await?
        } else if let Some(session) = cookie_value(&parts.headers, COOKIE) {
            if !same_site_request(parts) {
                return Err(ApiError::forbidden(
                    "a request from another site may not use your session; use the page itself, or a token",
                ));
            }
            state.store.session_user(&hash_token(session), SessionKind::Session, &wright_events::now()).await?
        } else {
            None
        };
        user.map(Caller).ok_or_else(ApiError::unauthorized)
    }
}

/// On a first start (no users yet): create the admin and return a one-time login link.
pub async fn bootstrap_admin(store: &dyn Store, origin: &str) -> Result<Option<String>, wright_store::StoreError> {
    if !store.users().await?.is_empty() {
        return Ok(None);
    }
    let admin = wright_store::new_user("admin", Role::Admin);
    // The admin's API token is never shown; `wright users add` makes tokens for scripts.
    store.create_user(&admin, &hash_token(&new_token())).await?;
    Ok(Some(login_link(store, &admin, origin).await?))
}

/// A one-time link that signs `user` in.
pub async fn login_link(store: &dyn Store, user: &User, origin: &str) -> Result<String, wright_store::StoreError> {
    let token = new_token();
    store
        .put_session(&hash_token(&token), &user.id, SessionKind::Login, &crate::queue::time_from_now(LOGIN_LINK))
        .await?;
    Ok(format!("{origin}/login?token={token}"))
}

#[derive(Deserialize)]
pub struct LoginQuery {
    token: String,
}

/// `GET /login?token=…`: use up the link, set the session cookie, go to `/` (so the token
/// leaves the address bar and the history at once).
#[utoipa::path(get, path = "/login", params(("token" = String, Query, description = "the one-time login link's token")),
    responses((status = 303, description = "signed in: the session cookie is set, on to the page"),
        (status = 401, body = crate::api::ErrorBody), (status = 429, body = crate::api::ErrorBody)))]
pub async fn login(State(state): State<AppState>, Query(q): Query<LoginQuery>) -> Result<Response, ApiError> {
    let now = wright_events::now();
    let user = state.store.session_user(&hash_token(&q.token), SessionKind::Login, &now).await?.ok_or_else(|| {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "login_link",
            "this login link was used already or has expired; ask an admin for a new one (`wright users login NAME`)",
        )
    })?;
    let session = new_token();
    let max_age = SESSION_DAYS * 24 * 3600;
    state
        .store
        .put_session(
            &hash_token(&session),
            &user.id,
            SessionKind::Session,
            &crate::queue::time_from_now(Duration::from_secs(max_age)),
        )
        .await?;
    let cookie = format!("{COOKIE}={session}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}");
    let mut res = Redirect::to("/").into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        res.headers_mut().insert(header::SET_COOKIE, v);
    }
    res.headers_mut().insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    Ok(res)
}

/// `POST /api/logout`: end the browser session.
#[utoipa::path(post, path = "/api/logout", responses((status = 204, description = "the session is over and its cookie cleared")))]
pub async fn logout(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    if let Some(session) = cookie_value(&headers, COOKIE) {
        state.store.end_session(&hash_token(session)).await?;
    }
    let mut res = StatusCode::NO_CONTENT.into_response();
    res.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("wright_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"),
    );
    Ok(res)
}

/// Who is calling.
#[utoipa::path(get, path = "/api/me", security(("bearer" = [])), responses((status = 200, body = Me), (status = 401, body = crate::api::ErrorBody)))]
pub async fn me(caller: Caller) -> Json<Me> {
    let u = caller.0;
    Json(Me { id: wright_events::api::UserId(u.id), name: u.name, role: u.role.as_str().into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_hashed() {
        let a = new_token();
        assert_eq!(a.len(), 67);
        assert_ne!(a, new_token());
        assert_eq!(hash_token("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn cookies_are_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_static("a=1; wright_session=xyz; b=2"));
        assert_eq!(cookie_value(&h, COOKIE), Some("xyz"));
        assert_eq!(cookie_value(&h, "c"), None);
    }
}

#[cfg(test)]
mod csrf_tests {
    use super::same_site_request;
    use axum::http::Request;

    fn parts(method: &str, headers: &[(&str, &str)]) -> axum::http::request::Parts {
        let mut r = Request::builder().method(method).uri("/api/builds/x/cancel");
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        r.body(()).unwrap().into_parts().0
    }

    #[test]
    fn cookie_writes_must_come_from_the_page_itself() {
        assert!(same_site_request(&parts("POST", &[("sec-fetch-site", "same-origin")])));
        assert!(!same_site_request(&parts("POST", &[("sec-fetch-site", "same-site")])), "a preview origin");
        assert!(!same_site_request(&parts("POST", &[("sec-fetch-site", "cross-site")])));
        assert!(same_site_request(&parts("GET", &[("sec-fetch-site", "cross-site")])), "reads are not checked");
        assert!(same_site_request(&parts("POST", &[("origin", "http://127.0.0.1:8787"), ("host", "127.0.0.1:8787")])));
        assert!(!same_site_request(&parts(
            "POST",
            &[("origin", "http://b1-k.localhost:8788"), ("host", "127.0.0.1:8787")]
        )));
        assert!(same_site_request(&parts("POST", &[])), "curl with a cookie");
    }
}
