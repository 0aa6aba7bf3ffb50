//! The preview origin: a build's files, or its running app, served apart from the API.
//!
//! Each build gets an origin of its own, `http://{id}-{key}.localhost:8788/` (browsers resolve
//! any `*.localhost` to this machine; behind a proxy, `--preview-url` names a wildcard domain),
//! so root-relative links and `fetch('/api/…')` work, and nothing of the API's origin or of
//! another build is reachable from it. The 128-bit key is the capability; no cookie is needed.
//! Without wildcard names, `/{id}/{key}/` on the preview port serves the same files under a
//! path (relative links only) with an opaque origin. Either way the CSP's `frame-ancestors`
//! lets only the API's pages frame it.
//!
//! A published app (docs/apps.md) is served the same way on an origin of its own,
//! `http://app-{slug}.localhost:8788/`, to anyone (publishing made it public); the API's
//! `/apps/{slug}` only redirects there, so app code never runs on the API's origin.

use crate::error::ApiError;
use crate::files::{file_error, on_disk};
use crate::state::AppState;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use wright_engine::{ArtifactError, RunRef};
use wright_sandbox::{Workspace, WorkspaceLimits};
use wright_store::BuildRecord;

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/{id}/{key}/", any(by_path_root))
        .route("/{id}/{key}/{*path}", any(by_path))
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

/// The slug from a published app's host name (`app-my-todo-app.localhost:8788`). A slug never
/// ends in 32 hex digits ([`wright_store::check_slug`]), so no app host reads as a build's.
pub fn host_app(host: &str) -> Option<String> {
    let label = host.split('.').next()?;
    let slug = label.strip_prefix(APP_HOST_PREFIX)?;
    wright_store::check_slug(slug).is_ok().then(|| slug.to_string())
}

/// What an app's host name starts with before its slug.
pub const APP_HOST_PREFIX: &str = "app-";

async fn by_host(State(state): State<AppState>, req: Request) -> Response {
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("").to_string();
    let path = req.uri().path().trim_start_matches('/').to_string();
    let served = if let Some((id, key)) = host_build(&host) {
        serve(&state, &id, &key, &path, req, true).await
    } else if let Some(slug) = host_app(&host) {
        serve_app(&state, &slug, &path, req).await
    } else {
        Err(ApiError::not_found("this preview"))
    };
    served.unwrap_or_else(IntoResponse::into_response)
}

/// A published app on its own origin: the build's files (or its running server) with the
/// same rules and headers as its preview. An unpublished app's address is gone (410).
async fn serve_app(state: &AppState, slug: &str, path: &str, req: Request) -> Result<Response, ApiError> {
    let app = crate::published::live(state, slug).await?;
    let build = state.store.build(&app.build_id).await.map_err(|_| ApiError::not_found(format!("app {slug}")))?;
    serve_build(state, &build, path, req, true).await
}

/// Whether a request came to a build's or an app's own origin: then its path is the page's
/// own (`/a/b/c` or `/_egress/https://…` must not read as `/{id}/{key}/…`).
fn on_own_origin(req: &Request) -> bool {
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    host_build(host).is_some() || host_app(host).is_some()
}

async fn by_path_root(
    State(state): State<AppState>,
    Path((id, key)): Path<(String, String)>,
    req: Request,
) -> Response {
    if on_own_origin(&req) {
        return by_host(State(state), req).await;
    }
    serve(&state, &id, &key, "", req, false).await.unwrap_or_else(IntoResponse::into_response)
}

async fn by_path(
    State(state): State<AppState>,
    Path((id, key, path)): Path<(String, String, String)>,
    req: Request,
) -> Response {
    if on_own_origin(&req) {
        return by_host(State(state), req).await;
    }
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
    serve_build(state, &build, path, req, own_origin).await
}

/// A build's page or its app's answer, with the preview origin's headers: one code path for
/// previews and published apps.
async fn serve_build(
    state: &AppState,
    build: &BuildRecord,
    path: &str,
    req: Request,
    own_origin: bool,
) -> Result<Response, ApiError> {
    let missing = || ApiError::not_found("this preview");
    let id = build.start.id.as_str();
    // The page's outside calls, through the build's own proxy (crate::outside).
    if crate::outside::is_relay(path) {
        let target = crate::outside::target(&req).ok_or_else(missing)?;
        return crate::outside::relay(&state.apps.doors, &state.engine, &state.store, build, &target, req).await;
    }
    // Pages get the relay script only where some outside host may be allowed at all.
    let shim_prefix = match (own_origin, build.preview_key.as_deref()) {
        _ if state.engine.outside_origins().is_empty() => None,
        (true, _) => Some("/".to_string()),
        (false, Some(key)) => Some(format!("/{id}/{key}/")),
        (false, None) => None,
    };
    let run = RunRef::from(build);
    // Only a full-stack build with a package.json runs its own server; its folder must be here.
    let app = if build.start.template == Some(wright_events::Template::Fullstack) {
        let folder = state.artifacts.local_folder(&run).ok_or_else(missing)?;
        on_disk(move || {
            let ws = Workspace::existing(&folder, WorkspaceLimits::default()).map_err(|_| missing())?;
            Ok(ws.is_file("package.json").then_some(ws))
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
        let egress = state.apps.doors.egress(&state.engine, &state.store, build).await?;
        let res =
            crate::apps::proxy(&state.apps, &state.engine, egress, id, &ws, Request::from_parts(parts, body)).await?;
        match &shim_prefix {
            Some(prefix) if is_html(&res) => with_shim_body(res, prefix).await?,
            _ => res,
        }
    } else {
        // A template with a build step is shown from its bundled page's folder (`dist/`).
        let bundled = build
            .start
            .template
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
            && let Some(key) = build.preview_key.as_deref()
            && let Some(tag) = crate::app_assistant::tag_for(state, id, key).await
        {
            bytes = crate::app_assistant::inject(&bytes, &tag);
            assisted = true;
        }
        if let Some(prefix) = shim_prefix.as_deref().filter(|_| content_type(&path).starts_with("text/html")) {
            bytes = crate::outside::with_shim(&bytes, prefix);
        }
        ([(header::CONTENT_TYPE, content_type(&path))], Body::from(bytes)).into_response()
    };
    let h = res.headers_mut();
    // Its own origin may keep same-origin rights (they reach only itself); under a shared
    // path the page gets an opaque origin instead.
    let same_origin = if own_origin { " allow-same-origin" } else { "" };
    // A page with the assistant loads its library from, and talks to, the API's origin.
    let api = if assisted { format!(" {}", state.cfg.api_origin()) } else { String::new() };
    // No outside host is named: the page's outside calls go to its own origin's relay, through
    // the build's proxy, counted and reported (crate::outside, docs/egress.md).
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

/// Largest page of an app's server that gets the relay script (a larger one is passed as is).
const MAX_SHIMMED_PAGE: usize = 8 << 20;

fn is_html(res: &Response) -> bool {
    res.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/html"))
}

/// An app server's HTML page with the relay script added (its length changes with it).
async fn with_shim_body(res: Response, prefix: &str) -> Result<Response, ApiError> {
    let (mut parts, body) = res.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_SHIMMED_PAGE).await.map_err(|e| {
        ApiError::new(axum::http::StatusCode::BAD_GATEWAY, "preview_app", format!("the app's page: {e}"))
    })?;
    parts.headers.remove(header::CONTENT_LENGTH);
    Ok(Response::from_parts(parts, Body::from(crate::outside::with_shim(&bytes, prefix))))
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
        assert_eq!(host_app("app-my-todo-app-2.localhost:8788"), Some("my-todo-app-2".into()));
        assert_eq!(host_build("app-my-todo-app-2.localhost:8788"), None);
        assert_eq!(host_app(&host), None);
        assert_eq!(host_app("app-Bad_Slug.localhost"), None);
        assert_eq!(host_app("localhost:8788"), None);
        assert_eq!(url_for("http://localhost:8788", "b1", "k"), "http://b1-k.localhost:8788/");
        assert_eq!(url_for("https://preview.example.org/", "b1", "k"), "https://b1-k.preview.example.org/");
    }
}
