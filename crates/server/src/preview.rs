//! The preview origin: a build's files, or its running app, served apart from the API.
//!
//! Each build gets an origin of its own, `http://{id}-{key}.localhost:8788/` (browsers resolve
//! any `*.localhost` to this machine; behind a proxy, `--preview-url` names a wildcard domain),
//! so root-relative links and `fetch('/api/…')` work, and nothing of the API's origin or of
//! another build is reachable from it. The 128-bit key is the capability; no cookie is needed.
//! Without wildcard names, `/{id}/{key}/` on the preview port serves the same files under a
//! path (relative links only) with an opaque origin. Either way the CSP's `frame-ancestors`
//! lets only the API's pages frame it.

use crate::error::ApiError;
use crate::files::{file_error, on_disk};
use crate::state::AppState;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use wright_engine::{ArtifactError, RunRef};
use wright_sandbox::{Workspace, WorkspaceLimits};

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/{id}/{key}/", get(by_path_root))
        .route("/{id}/{key}/{*path}", get(by_path))
        .fallback(by_host)
        .with_state(state)
}

/// `{id}-{key}` from a preview host name (`20261124-151203-9c1e-<32 hex>.localhost:8788`).
pub fn host_build(host: &str) -> Option<(String, String)> {
    let label = host.split('.').next()?;
    let (id, key) = label.rsplit_once('-')?;
    (key.len() == 32 && key.bytes().all(|b| b.is_ascii_hexdigit()) && !id.is_empty())
        .then(|| (id.to_string(), key.to_ascii_lowercase()))
}

async fn by_host(State(state): State<AppState>, req: Request) -> Response {
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("").to_string();
    let Some((id, key)) = host_build(&host) else {
        return ApiError::not_found("this preview").into_response();
    };
    let path = req.uri().path().trim_start_matches('/').to_string();
    serve(&state, &id, &key, &path, req, true).await.unwrap_or_else(IntoResponse::into_response)
}

async fn by_path_root(
    State(state): State<AppState>,
    Path((id, key)): Path<(String, String)>,
    req: Request,
) -> Response {
    serve(&state, &id, &key, "", req, false).await.unwrap_or_else(IntoResponse::into_response)
}

async fn by_path(
    State(state): State<AppState>,
    Path((id, key, path)): Path<(String, String, String)>,
    req: Request,
) -> Response {
    serve(&state, &id, &key, &path, req, false).await.unwrap_or_else(IntoResponse::into_response)
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

async fn serve(
    state: &AppState,
    id: &str,
    key: &str,
    path: &str,
    req: Request,
    own_origin: bool,
) -> Result<Response, ApiError> {
    let missing = || ApiError::not_found("this preview");
    let build = state.store.build(id).await.map_err(|_| missing())?;
    match &build.preview_key {
        Some(k) if same(k, key) => {}
        _ => return Err(missing()),
    }
    let run = RunRef::from(&build);
    // Only a full-stack build with a package.json runs its own server; its folder must be here.
    let app = if build.start.template == "fullstack" {
        let folder = run.workspace.clone();
        on_disk(move || {
            let ws = Workspace::existing(&folder, WorkspaceLimits::default()).map_err(|_| missing())?;
            Ok(ws.root().join("package.json").is_file().then_some(ws))
        })
        .await?
    } else {
        None
    };
    let mut assisted = false;
    let mut res = if let Some(ws) = app {
        // The app's own server answers, started on demand in the build's sandbox.
        let (mut parts, body) = req.into_parts();
        let query = parts.uri.query().map(|q| format!("?{q}")).unwrap_or_default();
        parts.uri = format!("/{path}{query}").parse::<Uri>().map_err(|_| missing())?;
        crate::apps::proxy(&state.apps, &state.engine, id, &ws, Request::from_parts(parts, body)).await?
    } else {
        // A template with a build step is shown from its bundled page's folder (`dist/`).
        let bundled = wright_events::Template::parse(&build.start.template)
            .filter(|t| t.has_build_step())
            .and_then(|t| t.entry_page().rsplit_once('/').map(|(dir, _)| dir));
        let asked = match bundled {
            Some(dir) => format!("{dir}/{}", path.trim_end_matches('/')).trim_end_matches('/').to_string(),
            None => path.trim_end_matches('/').to_string(),
        };
        let (path, mut bytes) = static_file(state, &run, &asked).await.map_err(|e| match e {
            ArtifactError::NoFiles(_) => missing(),
            e => file_error(e, id),
        })?;
        // An app built with an assistant gets its chat button on every page.
        if content_type(&path).starts_with("text/html")
            && let Some(tag) = crate::app_assistant::tag_for(state, id, key).await
        {
            bytes = crate::app_assistant::inject(&bytes, &tag);
            assisted = true;
        }
        ([(header::CONTENT_TYPE, content_type(&path))], Body::from(bytes)).into_response()
    };
    let h = res.headers_mut();
    // Its own origin may keep same-origin rights (they reach only itself); under a shared
    // path the page gets an opaque origin instead.
    let same_origin = if own_origin { " allow-same-origin" } else { "" };
    // A page with the assistant loads its library from, and talks to, the API's origin.
    let api = if assisted { format!(" {}", state.cfg.api_origin()) } else { String::new() };
    let csp = format!(
        "default-src 'self' data: blob:; script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:{api}; \
         style-src 'self' 'unsafe-inline'{api}; img-src 'self' data: blob:; connect-src 'self'{api}; \
         frame-ancestors 'self' {}; sandbox allow-scripts allow-forms allow-modals allow-popups{same_origin}",
        state.cfg.api_origin()
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.remove(header::SET_COOKIE);
    Ok(res)
}

/// The file a static preview shows for `asked`: a folder (or the root) shows its index.html; a
/// full-stack build keeps its page in client/. Gives the path shown and its bytes.
async fn static_file(state: &AppState, run: &RunRef, asked: &str) -> Result<(String, Vec<u8>), ArtifactError> {
    let artifacts = &state.artifacts;
    if asked.is_empty() {
        let pages = ["index.html", "client/index.html", "public/index.html"];
        for page in pages {
            match artifacts.read(run, page).await {
                Ok(bytes) => return Ok((page.to_string(), bytes)),
                Err(ArtifactError::NotFound(_) | ArtifactError::IsDirectory(_)) => continue,
                Err(e) => return Err(e),
            }
        }
        return Err(ArtifactError::NotFound("index.html".into()));
    }
    match artifacts.read(run, asked).await {
        Ok(bytes) => Ok((asked.to_string(), bytes)),
        Err(ArtifactError::IsDirectory(_)) => {
            let page = format!("{asked}/index.html");
            let bytes = artifacts.read(run, &page).await?;
            Ok((page, bytes))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::url_for;

    #[test]
    fn keys_compare_whole() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "abcd"));
        assert_eq!(content_type("a/b.HTML"), "text/html; charset=utf-8");
        assert_eq!(content_type("noext"), "application/octet-stream");
    }

    #[test]
    fn preview_hosts() {
        let key = "0123456789abcdef0123456789ABCDEF";
        let host = format!("20261124-151203-9c1e-{key}.localhost:8788");
        assert_eq!(host_build(&host), Some(("20261124-151203-9c1e".into(), key.to_ascii_lowercase())));
        assert_eq!(host_build("localhost:8788"), None);
        assert_eq!(host_build("x-123.localhost"), None);
        assert_eq!(host_build(&format!("-{key}.localhost")), None);
        assert_eq!(url_for("http://localhost:8788", "b1", "k"), "http://b1-k.localhost:8788/");
        assert_eq!(url_for("https://preview.example.org/", "b1", "k"), "https://b1-k.preview.example.org/");
    }
}
