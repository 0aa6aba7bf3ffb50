//! The API router, and its small routes: who am I, models, notes, stats, health, metrics and
//! the OpenAPI document.

use crate::AppState;
use crate::api::{ApiDoc, Me, Models};
use crate::auth::{self, Caller};
use crate::builds;
use crate::error::{ApiError, ApiResult};
use axum::Json;
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::time::Duration;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use wright_store::{Note, NoteFilter, Stats};

/// Largest request body.
pub const BODY_LIMIT: usize = 1 << 20;

/// Every route of the API origin. The routes of the API and the OpenAPI document come from one
/// list (utoipa-axum's router reads each handler's `#[utoipa::path]`), so no route can be
/// served without being documented.
pub fn router(state: AppState) -> Router {
    // Requests that answer and end; event streams are long-lived and are left out of the timeout.
    let (bounded, mut doc) = OpenApiRouter::<AppState>::with_openapi(ApiDoc::openapi())
        .routes(routes!(builds::create, builds::list))
        .routes(routes!(builds::get))
        .routes(routes!(builds::cancel))
        .routes(routes!(builds::files))
        // The one path axum spells otherwise (`{*path}`); documented by ApiDoc itself.
        .route("/api/builds/{id}/files/{*path}", get(builds::file))
        .routes(routes!(builds::archive))
        .routes(routes!(builds::screenshot))
        .routes(routes!(notes))
        .routes(routes!(crate::admin::edit_note))
        .routes(routes!(crate::admin::dashboard))
        .routes(routes!(stats))
        .routes(routes!(me))
        .routes(routes!(models))
        .routes(routes!(auth::logout))
        .routes(routes!(auth::login))
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
        .split_for_parts();
    let (unbounded, streams_doc) = OpenApiRouter::<AppState>::new()
        .routes(routes!(builds::events))
        // A model call: as long as the model takes, bounded by the provider's own time limits.
        .routes(routes!(crate::explain::explain))
        .split_for_parts();
    doc.merge(streams_doc);
    let doc = std::sync::Arc::new(doc.to_pretty_json().map_err(|e| e.to_string()));
    let pages = Router::new()
        .route("/api/openapi.json", get(move || openapi(doc.clone())))
        .route("/", get(crate::ui::index))
        .route("/ui/{name}", get(crate::ui::asset));
    let bounded = bounded
        .merge(pages)
        .layer(TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, Duration::from_secs(60)));
    unbounded
        .merge(bounded)
        .fallback(|| async { ApiError::not_found("this route") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "this route does not take that method")
        })
        .layer(axum::middleware::from_fn_with_state(state.clone(), crate::ratelimit::limit))
        .layer(axum::middleware::from_fn_with_state(state.clone(), crate::metrics::track))
        // Bodies are read only by the JSON extractor, which answers 413 in our error shape.
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(TraceLayer::new_for_http().make_span_with(|req: &axum::http::Request<_>| {
            // The path without its query: a login link carries its token in the query.
            tracing::info_span!("http", method = %req.method(), path = %req.uri().path())
        }))
        .with_state(state)
}

/// Who is calling.
#[utoipa::path(get, path = "/api/me", security(("bearer" = [])), responses((status = 200, body = Me), (status = 401, body = crate::api::ErrorBody)))]
pub async fn me(caller: Caller) -> Json<Me> {
    let u = caller.0;
    Json(Me { id: u.id, name: u.name, role: u.role.as_str().into() })
}

/// The models a request may name.
#[utoipa::path(get, path = "/api/models", security(("bearer" = [])), responses((status = 200, body = Models)))]
pub async fn models(State(state): State<AppState>, _caller: Caller) -> Json<Models> {
    let mut allowed = vec![state.default_model.clone()];
    allowed.extend(state.cfg.allowed_models.iter().filter(|m| **m != state.default_model).cloned());
    Json(Models { default: state.default_model.clone(), allowed })
}

/// The lessons wright learned from its fixes (`wright notes list`).
#[utoipa::path(get, path = "/api/notes", security(("bearer" = [])), responses((status = 200, description = "the notes, best first")))]
pub async fn notes(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Vec<Note>>> {
    let mut notes = state.store.list_notes(&NoteFilter { status: None, limit: Some(500) }).await?;
    // Lessons are shared; where each came from (another user's build and its error) is not.
    if !caller.is_admin() {
        for n in &mut notes {
            n.source_build = None;
            n.source_error = None;
        }
    }
    Ok(Json(notes))
}

/// The statistics of `wright stats --json`, over every build (admins only).
#[utoipa::path(get, path = "/api/stats", security(("bearer" = [])), responses((status = 200, description = "as `wright stats --json`"), (status = 403, body = crate::api::ErrorBody)))]
pub async fn stats(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Stats>> {
    if !caller.is_admin() {
        return Err(ApiError::forbidden("the statistics cover every user's builds; only admins may see them"));
    }
    Ok(Json(state.store.stats().await?))
}

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", responses((status = 200, description = "ok")))]
pub async fn healthz() -> &'static str {
    "ok\n"
}

/// Readiness: the store answers and the server is not shutting down.
#[utoipa::path(get, path = "/readyz", responses((status = 200, description = "ready"), (status = 503, body = crate::api::ErrorBody)))]
pub async fn readyz(State(state): State<AppState>) -> ApiResult<&'static str> {
    if state.is_stopping() {
        return Err(ApiError::unavailable("shutting_down", "the server is shutting down"));
    }
    state.store.queue_depth().await?;
    Ok("ready\n")
}

/// Prometheus text.
#[utoipa::path(get, path = "/metrics", responses((status = 200, description = "Prometheus text format")))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    if let Ok(depth) = state.store.queue_depth().await {
        state.metrics.queue_depth.set(depth as i64);
    }
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], state.metrics.render())
        .into_response()
}

/// The document the router made of its own routes.
async fn openapi(doc: std::sync::Arc<Result<String, String>>) -> Response {
    match doc.as_ref() {
        Ok(text) => ([(header::CONTENT_TYPE, "application/json")], text.clone()).into_response(),
        Err(e) => ApiError::internal(format!("OpenAPI document: {e}")).into_response(),
    }
}
