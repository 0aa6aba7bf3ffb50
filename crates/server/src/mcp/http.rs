//! `/mcp` on `wright serve`: rmcp's Streamable HTTP service behind wright's own door.
//!
//! Before rmcp reads a byte, [`guard`] checks the request's `Host` (the server's own address, or
//! loopback at its port: a page on another site that rebinds its DNS name to 127.0.0.1 sends
//! its own name, GHSA-89vp-x53w-74fx) and its `Origin` when it has one (the same addresses),
//! answering 403 otherwise; then the bearer token (or session cookie) exactly as the API takes
//! it, answering 401 without one. The user it finds rides in the request's extensions, which
//! rmcp hands to the handler with every call. One policy, ours, in our error shape: rmcp's own
//! Host check is turned off so it cannot disagree with it.

use super::WrightMcp;
use super::sessions::Sessions;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;
use axum::Router;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

/// The route.
pub const PATH: &str = "/mcp";
/// Largest MCP message: the API's own body limit (`router::BODY_LIMIT`), which rmcp enforces
/// itself while it reads the body.
const BODY_LIMIT: usize = 1 << 20;

/// The `/mcp` route, ready to merge into the API's router (outside its request timeout: a
/// `build_app` call may wait 50 s and its notifications stream as long as the session lasts).
pub fn routes(state: AppState) -> Router<AppState> {
    let handler = WrightMcp::new(state.clone(), None);
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_max_request_body_bytes(BODY_LIMIT)
        .with_sse_keep_alive(Some(state.cfg.heartbeat))
        .with_cancellation_token(state.streams_stop.child_token());
    let service =
        StreamableHttpService::new(move || Ok(handler.clone()), Arc::new(LocalSessionManager::default()), config);
    let sessions = Arc::new(Sessions::default());
    Router::new().route_service(PATH, service).layer(axum::middleware::from_fn_with_state((state, sessions), guard))
}

/// The addresses (`host[:port]`, lowercase) a request to this server may name in `Host`: the
/// API's public address and loopback at the port it listens on.
fn allowed_authorities(state: &AppState) -> Vec<String> {
    let port = state.cfg.bind.port();
    let mut out: Vec<String> = ["localhost", "127.0.0.1", "[::1]"].iter().map(|h| format!("{h}:{port}")).collect();
    let origin = state.cfg.api_origin();
    if let Some((scheme, rest)) = origin.split_once("://") {
        let authority = rest.split('/').next().unwrap_or(rest).to_ascii_lowercase();
        out.push(authority.clone());
        // `https://example.com` is reached as `Host: example.com` or `example.com:443`.
        let default = if scheme.eq_ignore_ascii_case("https") { 443 } else { 80 };
        if !authority.contains(':') || authority.ends_with(']') {
            out.push(format!("{authority}:{default}"));
        } else if let Some(bare) = authority.strip_suffix(&format!(":{default}")) {
            out.push(bare.to_string());
        }
    }
    out
}

/// Whether `Origin: value` is one of this server's own addresses.
fn origin_allowed(value: &str, allowed: &[String]) -> bool {
    let Some((scheme, authority)) = value.split_once("://") else { return false };
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return false;
    }
    let authority = authority.trim_end_matches('/').to_ascii_lowercase();
    allowed.contains(&authority)
}

/// The header that names a Streamable HTTP session.
const SESSION: &str = "mcp-session-id";

/// Middleware: Host and Origin (403), then who is calling (401), then whether the session the
/// request names is the caller's (404 otherwise, as for a session that does not exist), before
/// rmcp.
pub async fn guard(State((state, sessions)): State<(AppState, Arc<Sessions>)>, req: Request, next: Next) -> Response {
    let allowed = allowed_authorities(&state);
    let host = req.headers().get(header::HOST).and_then(|v| v.to_str().ok()).map(str::to_ascii_lowercase);
    if !host.as_ref().is_some_and(|h| allowed.contains(h)) {
        return ApiError::forbidden(format!(
            "Host {}: /mcp answers only to this server's own address ({})",
            host.as_deref().unwrap_or("(none)"),
            allowed.join(", ")
        ))
        .into_response();
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let ok = origin.to_str().is_ok_and(|o| origin_allowed(o, &allowed));
        if !ok {
            return ApiError::forbidden("Origin: /mcp takes requests from pages of this server's own address only")
                .into_response();
        }
    }
    let (mut parts, body) = req.into_parts();
    let caller = match Caller::from_request_parts(&mut parts, &state).await {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    let user = caller.0.id.clone();
    let named = parts.headers.get(SESSION).and_then(|v| v.to_str().ok()).map(str::to_string);
    if let Some(id) = &named
        && !sessions.may_use(id, &user)
    {
        return ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "this MCP session does not exist; initialize a new one",
        )
        .into_response();
    }
    let closing = parts.method == Method::DELETE;
    parts.extensions.insert(caller);
    let res = next.run(Request::from_parts(parts, body)).await;
    match (&named, res.headers().get(SESSION).and_then(|v| v.to_str().ok())) {
        (None, Some(opened)) => sessions.opened(opened, &user),
        (Some(id), _) if closing && res.status().is_success() => sessions.closed(id),
        _ => {}
    }
    res
}

#[cfg(test)]
mod tests {
    use super::origin_allowed;

    #[test]
    fn only_the_servers_own_origins_pass() {
        let allowed =
            vec!["127.0.0.1:8787".to_string(), "localhost:8787".to_string(), "wright.example:443".to_string()];
        assert!(origin_allowed("http://127.0.0.1:8787", &allowed));
        assert!(origin_allowed("http://LOCALHOST:8787/", &allowed));
        assert!(!origin_allowed("http://127.0.0.1:9999", &allowed), "another port is another origin");
        assert!(!origin_allowed("http://evil.example:8787", &allowed));
        assert!(!origin_allowed("null", &allowed));
        assert!(!origin_allowed("file://127.0.0.1:8787", &allowed));
    }
}
