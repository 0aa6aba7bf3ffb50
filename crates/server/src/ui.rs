//! The web UI on the API origin: the page at `/` and its files at `/ui/{name}`, embedded in
//! the binary (wright-webui). The page may load only its own files and frame only the preview
//! origins, so nothing a build wrote can run on the origin that holds the session cookie.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::header;
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
