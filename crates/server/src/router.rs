//! The API origin's router: every resource's routes, the middleware around them (per-address
//! limit, metrics, body limit, timeouts, tracing) and the OpenAPI document, made from the same
//! list of routes. The top of the module graph: it imports every resource, and none imports it.

use crate::api::{BuildBody, BuildView, Cancelled, Created, ErrorBody, ErrorInner, FileEntry, Me, Models};
use crate::error::ApiError;
use crate::state::AppState;
use crate::{
    admin, assistant, auth, builds, chat, classes, embeddings, experiments, explain, feedback, ops, published,
    spend_api, tasks, ui, visitor,
};
use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

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
        .routes(routes!(feedback::rate))
        .routes(routes!(builds::files))
        // The one path axum spells otherwise (`{*path}`); documented by ApiDoc itself.
        .route("/api/builds/{id}/files/{*path}", get(builds::file))
        .routes(routes!(builds::archive))
        .routes(routes!(builds::screenshot))
        .routes(routes!(crate::builds::preview_events))
        .routes(routes!(classes::share))
        .routes(routes!(classes::list, classes::create))
        .routes(routes!(classes::report))
        .routes(routes!(classes::members))
        .routes(routes!(tasks::create))
        .routes(routes!(tasks::get))
        .routes(routes!(tasks::cancel))
        .routes(routes!(admin::notes))
        .routes(routes!(admin::edit_note))
        .routes(routes!(admin::dashboard))
        .routes(routes!(admin::stats))
        .routes(routes!(experiments::list, experiments::create))
        .routes(routes!(experiments::start))
        .routes(routes!(experiments::stop))
        .routes(routes!(spend_api::mine))
        .routes(routes!(spend_api::all))
        .routes(routes!(spend_api::set_user_cap))
        .routes(routes!(spend_api::set_default_cap))
        .routes(routes!(auth::me))
        .routes(routes!(ops::models))
        .routes(routes!(ops::starters))
        .routes(routes!(auth::logout))
        .routes(routes!(auth::login))
        .routes(routes!(ops::healthz))
        .routes(routes!(ops::readyz))
        .routes(routes!(ops::metrics))
        .routes(routes!(crate::limits_api::limits))
        .routes(routes!(chat::quiz))
        .routes(routes!(chat::feedback))
        .routes(routes!(chat::cards))
        .routes(routes!(chat::review))
        .routes(routes!(assistant::create_key, assistant::list_keys))
        .routes(routes!(assistant::revoke_key))
        .routes(routes!(embeddings::embeddings))
        .routes(routes!(published::list))
        .routes(routes!(published::get, published::edit, published::unpublish))
        .split_for_parts();
    // What an app's pages call from their own origin with a visitor token (`visitor::cors`).
    let (embeddable, embeddable_doc) = OpenApiRouter::<AppState>::new()
        .routes(routes!(chat::create, chat::list))
        .routes(routes!(chat::history, chat::clear))
        .routes(routes!(assistant::view))
        .routes(routes!(assistant::pending))
        .routes(routes!(assistant::visitors))
        .split_for_parts();
    doc.merge(embeddable_doc);
    let bounded = bounded.merge(embeddable);
    let (unbounded, streams_doc) = OpenApiRouter::<AppState>::new()
        .routes(routes!(builds::events))
        .routes(routes!(tasks::events))
        // A chat turn's answer streams as long as its tools and the model take.
        .routes(routes!(chat::send))
        .routes(routes!(chat::turn_events))
        .routes(routes!(assistant::tool_results))
        // A model call: as long as the model takes, bounded by the provider's own time limits.
        .routes(routes!(explain::explain))
        .split_for_parts();
    doc.merge(streams_doc);
    // MCP over Streamable HTTP (docs/mcp.md): its own Host, Origin and token checks.
    let unbounded = unbounded.merge(crate::mcp::http::routes(state.clone()));
    let doc = std::sync::Arc::new(doc.to_pretty_json().map_err(|e| e.to_string()));
    let pages = Router::new()
        .route("/api/openapi.json", get(move || openapi(doc.clone())))
        .route("/", get(ui::index))
        .route("/ui/{name}", get(ui::asset))
        .route("/ui/vendor/{name}", get(ui::vendor))
        .route("/assistant/{name}", get(ui::assistant_asset))
        .route("/assistant/vendor/{*name}", get(ui::assistant_vendor))
        // A published app's address: a redirect to its own origin (docs/apps.md).
        .route("/apps/{slug}", get(published::visit))
        .route("/apps/{slug}/", get(published::visit))
        .route("/apps/{slug}/{*path}", get(published::visit_path));
    let bounded = bounded
        .merge(pages)
        .layer(TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, Duration::from_secs(60)));
    unbounded
        .merge(bounded)
        .fallback(|| async { ApiError::not_found("this route") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "this route does not take that method")
        })
        .layer(axum::middleware::from_fn_with_state(state.clone(), limit))
        // Outside the routes, so a preflight (OPTIONS, which no route takes) is answered too.
        .layer(axum::middleware::from_fn_with_state(state.clone(), visitor::cors))
        .layer(axum::middleware::from_fn_with_state(state.metrics.clone(), crate::metrics::track))
        // Bodies are read only by the JSON extractor, which answers 413 in our error shape.
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(TraceLayer::new_for_http().make_span_with(|req: &axum::http::Request<_>| {
            // The path without its query: a login link carries its token in the query.
            tracing::info_span!("http", method = %req.method(), path = %req.uri().path())
        }))
        .with_state(state)
}

/// The document the router made of its own routes.
async fn openapi(doc: std::sync::Arc<Result<String, String>>) -> Response {
    match doc.as_ref() {
        Ok(text) => ([(header::CONTENT_TYPE, "application/json")], text.clone()).into_response(),
        Err(e) => ApiError::internal(format!("OpenAPI document: {e}")).into_response(),
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "wright", description = "Builds for many users over HTTP, with resumable event streams."),
    // Only the route whose path axum and OpenAPI spell differently (`{*path}`, a path of any
    // depth): every other route is put in the document by the router that serves it (above).
    paths(crate::builds::file),
    components(schemas(crate::api::TaskBody, crate::api::TaskRunView, crate::api::TaskOutcomeView, crate::api::AppView, crate::api::AppEdit, BuildBody, Created, BuildView, FileEntry, Cancelled, Me, Models, ErrorBody, ErrorInner, crate::admin::Dashboard, crate::admin::NoteEdit, crate::experiments::ExperimentView, crate::experiments::ExperimentBody, crate::experiments::StopBody, crate::explain::ExplainBody, crate::explain::Explanation, crate::error::LimitHit)),
    modifiers(&BearerAuth)
)]
pub struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme("bearer", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
    }
}

fn refused(retry: u64) -> Response {
    ApiError::too_many(
        "rate_limited",
        format!("too many requests without a valid sign-in from your address; try again in {retry} s"),
        retry,
    )
    .into_response()
}

/// Middleware: the per-address limit of [`crate::ratelimit`].
pub async fn limit(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let limiter = &state.ip_limiter;
    let Some(peer) = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()) else {
        return next.run(req).await;
    };
    if !limiter.enabled() {
        return next.run(req).await;
    }
    let ip = limiter.client(peer, req.headers());
    let now = Instant::now();
    let bearer = req.headers().contains_key(header::AUTHORIZATION);
    let cookie = auth::cookie_value(req.headers(), auth::COOKIE).is_some();
    if !bearer && !cookie {
        if let Err(retry) = limiter.take(ip, now) {
            state.metrics.refused("per_address");
            return refused(retry);
        }
        return next.run(req).await;
    }
    // Tokens and session cookies are guessed by sending them: an address out of tokens may
    // not try more; a refused one spends a token below.
    if let Some(retry) = limiter.exhausted(ip, now) {
        state.metrics.refused("per_address");
        return refused(retry);
    }
    let res = next.run(req).await;
    if res.status() == StatusCode::UNAUTHORIZED {
        limiter.charge(ip, Instant::now());
    }
    res
}
