//! The web UI on the API origin: the page at `/` and its files at `/ui/{name}`, embedded in
//! the binary (wright-webui), and the built third-party files at `/ui/vendor/{name}` (Mermaid),
//! which are fetched once into the data dir and served from there. The page may load only its
//! own files and frame only the preview origins, so nothing a build wrote can run on the origin
//! that holds the session cookie.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The policy of the UI's page: its own scripts and styles, its API, and frames from the
/// builds' preview origins (`{id}-{key}.` in front of the preview address) only.
fn policy(preview_origin: &str) -> String {
    let (scheme, rest) = preview_origin.split_once("://").unwrap_or(("http", preview_origin));
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
         frame-src {scheme}://*.{rest}; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// The page. It asks `/api/me` who is signed in and shows the sign-in help when nobody is.
pub async fn index(State(state): State<AppState>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()),
            (header::CONTENT_SECURITY_POLICY, policy(&state.cfg.preview_origin())),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
            (header::REFERRER_POLICY, "no-referrer".to_string()),
            (header::CACHE_CONTROL, "no-cache".to_string()),
        ],
        wright_webui::INDEX,
    )
        .into_response()
}

/// One of the page's files.
pub async fn asset(Path(name): Path<String>) -> Response {
    match wright_webui::asset(&name) {
        Some(a) => (
            [
                (header::CONTENT_TYPE, a.content_type),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            a.body,
        )
            .into_response(),
        None => ApiError::not_found(format!("/ui/{name}")).into_response(),
    }
}

/// A file of the in-app assistant's browser library, for any page to load (`<script
/// type="module" src=".../assistant/assistant.js">`): public, so any origin may fetch it.
pub async fn assistant_asset(Path(name): Path<String>) -> Response {
    match wright_webui::assistant_asset(&name) {
        Some(a) => (
            [
                (header::CONTENT_TYPE, a.content_type),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                (header::CACHE_CONTROL, "no-cache"),
                (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
                (axum::http::HeaderName::from_static("cross-origin-resource-policy"), "cross-origin"),
            ],
            a.body,
        )
            .into_response(),
        None => ApiError::not_found(format!("/assistant/{name}")).into_response(),
    }
}

/// A fetched third-party file at `path`: `304` when the client holds `etag`'s version, else its
/// bytes; `None` when it cannot be read (the caller says what to do).
async fn vendored(path: &std::path::Path, content_type: &str, etag: String, headers: &HeaderMap) -> Option<Response> {
    if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag))
    {
        return Some((StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response());
    }
    match tokio::fs::read(path).await {
        Ok(body) => Some(
            (
                [
                    (header::CONTENT_TYPE, content_type.to_string()),
                    (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
                    (header::CACHE_CONTROL, "no-cache".to_string()),
                    (header::ETAG, etag),
                ],
                body,
            )
                .into_response(),
        ),
        Err(e) => {
            tracing::warn!("{}: {e}", path.display());
            None
        }
    }
}

/// A vendored file of the assistant's library (`/assistant/vendor/dom-accessibility-api/…`),
/// public like the library itself.
pub async fn assistant_vendor(State(state): State<AppState>, Path(name): Path<String>, headers: HeaderMap) -> Response {
    let data_dir = state.engine.data_dir().to_path_buf();
    let found = match wright_webui::vendor::served_assistant(&data_dir, &name) {
        Some((path, content_type)) => {
            vendored(&path, content_type, wright_webui::vendor::assistant_etag(), &headers).await
        }
        None => None,
    };
    let Some(mut res) = found else {
        return ApiError::new(
            StatusCode::NOT_FOUND,
            "not_fetched",
            format!(
                "/assistant/vendor/{name}: not a file of the assistant's library, or dom-accessibility-api {} has not \
                 been fetched into this server's data dir yet (`cargo xtask setup`, or a `wright serve` start with npm \
                 and a network, fetches it)",
                wright_webui::vendor::DOM_ACCESSIBILITY_API_VERSION
            ),
        )
        .into_response();
    };
    res.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, axum::http::HeaderValue::from_static("*"));
    res
}

/// A vendored file (`/ui/vendor/mermaid.min.js`, `/ui/vendor/mermaid.LICENSE`) from the data
/// dir; 404 with what to do when it has not been fetched.
pub async fn vendor(State(state): State<AppState>, Path(name): Path<String>, headers: HeaderMap) -> Response {
    if !wright_webui::vendor::SERVED.iter().any(|s| s.name == name) {
        return ApiError::not_found(format!("/ui/vendor/{name}")).into_response();
    }
    let data_dir = state.engine.data_dir().to_path_buf();
    let Some((path, content_type)) = wright_webui::vendor::served(&data_dir, &name) else {
        return not_fetched(&name);
    };
    vendored(&path, content_type, wright_webui::vendor::etag(), &headers).await.unwrap_or_else(|| not_fetched(&name))
}

fn not_fetched(name: &str) -> Response {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_fetched",
        format!(
            "/ui/vendor/{name}: the diagram renderer (Mermaid {}) has not been fetched into this server's data dir; \
             `cargo xtask setup` or a `wright serve` start with npm and a network fetches it (diagrams show their \
             Mermaid source until then)",
            wright_webui::vendor::MERMAID_VERSION
        ),
    )
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_may_frame_only_preview_origins() {
        let p = policy("http://localhost:8788");
        assert!(p.contains("frame-src http://*.localhost:8788;"), "{p}");
        assert!(p.contains("script-src 'self';") && !p.contains("unsafe"), "{p}");
        let p = policy("https://preview.example.org");
        assert!(p.contains("frame-src https://*.preview.example.org;"), "{p}");
    }
}
