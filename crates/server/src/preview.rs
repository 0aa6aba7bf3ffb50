//! The preview origin: a build's files served on their own port, at
//! `/{build}/{preview key}/{path}`, never on the API's origin. The CSP's `sandbox` gives each
//! page an opaque origin, so generated code can neither read the API's cookie (another origin
//! already) nor another preview's storage; `frame-ancestors` lets only the API's pages frame it.

use crate::AppState;
use crate::builds::read_file;
use crate::error::ApiError;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use wright_sandbox::{Workspace, WorkspaceLimits};

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/{id}/{key}/", get(root))
        .route("/{id}/{key}/{*path}", get(file))
        .fallback(|| async { ApiError::not_found("this preview") })
        .with_state(state)
}

async fn root(State(state): State<AppState>, Path((id, key)): Path<(String, String)>) -> Response {
    serve(&state, &id, &key, "").await.unwrap_or_else(IntoResponse::into_response)
}

async fn file(State(state): State<AppState>, Path((id, key, path)): Path<(String, String, String)>) -> Response {
    serve(&state, &id, &key, &path).await.unwrap_or_else(IntoResponse::into_response)
}

/// Byte-wise equal in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("").to_ascii_lowercase().as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

async fn serve(state: &AppState, id: &str, key: &str, path: &str) -> Result<Response, ApiError> {
    let missing = || ApiError::not_found("this preview");
    let build = state.store.build(id).await.map_err(|_| missing())?;
    match &build.preview_key {
        Some(k) if same(k, key) => {}
        _ => return Err(missing()),
    }
    let ws = Workspace::open(&build.start.workspace, WorkspaceLimits::default()).map_err(|_| missing())?;
    let mut path = path.trim_end_matches('/').to_string();
    // A folder (or the root) shows its index.html; a full-stack build keeps its page in client/.
    if path.is_empty() {
        path = ["index.html", "client/index.html", "public/index.html"]
            .into_iter()
            .find(|p| ws.root().join(p).is_file())
            .unwrap_or("index.html")
            .to_string();
    } else if ws.root().join(&path).is_dir() {
        path = format!("{path}/index.html");
    }
    let bytes = read_file(&ws, &path)?;
    let mut res = ([(header::CONTENT_TYPE, content_type(&path))], bytes).into_response();
    let h = res.headers_mut();
    let csp = format!(
        "default-src 'self' data: blob:; script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; \
         frame-ancestors 'self' {}; sandbox allow-scripts allow-forms allow-modals allow-popups",
        state.cfg.api_origin()
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_compare_whole() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "abcd"));
        assert_eq!(content_type("a/b.HTML"), "text/html; charset=utf-8");
        assert_eq!(content_type("noext"), "application/octet-stream");
    }
}
