//! Published apps (docs/apps.md): `/api/apps` to list, show (with related apps), rename and
//! unpublish them, and `/apps/{slug}` on the API's origin, which only redirects to the app's
//! own origin (served by [`crate::preview`]): app code never runs beside the API and its
//! session cookie.

use crate::api::{AppEdit, AppView, ErrorBody};
use crate::auth::Caller;
use crate::error::{ApiError, ApiJson, ApiResult};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use wright_events::api::{RunId, UserId};
use wright_store::{App, AppChange, AppFilter, StoreError};

/// Related apps shown with one.
const RELATED: u32 = 5;

/// An app as the API shows it.
pub fn view_of(app: App, preview_origin: &str) -> AppView {
    AppView {
        url_path: app.url_path(),
        url: crate::api::app_url_for(preview_origin, &app.slug),
        published: app.is_published(),
        slug: app.slug,
        title: app.title,
        description: app.description,
        build_id: RunId(app.build_id),
        owner: app.owner.map(UserId),
        template: app.template,
        prompt: app.prompt,
        created_at: app.created_at,
        updated_at: app.updated_at,
        unpublished_at: app.unpublished_at,
        related: None,
    }
}

fn gone(slug: &str) -> ApiError {
    ApiError::new(StatusCode::GONE, "gone", format!("the app {slug} was unpublished by its owner"))
}

/// The published app at `slug`: 404 when there is none, 410 when it was unpublished.
pub async fn live(state: &AppState, slug: &str) -> ApiResult<App> {
    let app = state.store.app(slug).await.map_err(|_| ApiError::not_found(format!("app {slug}")))?;
    if app.is_published() { Ok(app) } else { Err(gone(slug)) }
}

/// The app, if the caller may change it: its owner or an admin. Someone else's app is
/// refused (403; published apps are public, so hiding it would hide nothing).
async fn owned(state: &AppState, caller: &Caller, slug: &str) -> ApiResult<App> {
    let app = state.store.app(slug).await?;
    if caller.may_see(app.owner.as_deref()) {
        Ok(app)
    } else {
        Err(ApiError::forbidden(format!("the app {slug} is not yours")))
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct AppsQuery {
    /// `1`: every user's apps (admins only).
    pub(crate) all: Option<String>,
    /// At most this many, newest first [default 50, at most 500].
    pub(crate) limit: Option<u32>,
}

/// Your apps, published and unpublished, newest first; `?all=1` lists everyone's (admins).
#[utoipa::path(get, path = "/api/apps", params(AppsQuery), security(("bearer" = [])),
    responses((status = 200, body = [AppView]), (status = 403, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<AppsQuery>,
) -> ApiResult<Json<Vec<AppView>>> {
    let all = matches!(q.all.as_deref(), Some("1" | "true"));
    if all && !caller.is_admin() {
        return Err(ApiError::forbidden("only an admin may list every user's apps"));
    }
    let owner = (!all).then(|| caller.0.id.clone());
    let filter = AppFilter { owner, published_only: false, limit: q.limit.unwrap_or(50).clamp(1, 500) };
    let origin = state.cfg.preview_origin();
    Ok(Json(state.store.apps(&filter).await?.into_iter().map(|a| view_of(a, &origin)).collect()))
}

/// One app with the published apps most like it. Published apps are anyone's to see; an
/// unpublished one only its owner's (and admins').
#[utoipa::path(get, path = "/api/apps/{slug}", params(("slug" = String, Path)), security(("bearer" = [])),
    responses((status = 200, body = AppView), (status = 404, body = ErrorBody)))]
pub async fn get(State(state): State<AppState>, caller: Caller, Path(slug): Path<String>) -> ApiResult<Json<AppView>> {
    let app = state.store.app(&slug).await?;
    if !app.is_published() && !caller.may_see(app.owner.as_deref()) {
        return Err(ApiError::not_found(format!("app {slug}")));
    }
    let related = state.store.related_apps(&slug, RELATED).await?;
    let mut view = view_of(app, &state.cfg.preview_origin());
    view.related = Some(related.iter().map(App::to_ref).collect());
    Ok(Json(view))
}

/// Give an app a new address, title or description (its owner or an admin). The old address
/// is free for anyone from then on.
#[utoipa::path(patch, path = "/api/apps/{slug}", params(("slug" = String, Path)), request_body = AppEdit,
    security(("bearer" = [])),
    responses((status = 200, body = AppView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn edit(
    State(state): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
    ApiJson(body): ApiJson<AppEdit>,
) -> ApiResult<Json<AppView>> {
    owned(&state, &caller, &slug).await?;
    if let Some(new) = &body.slug {
        wright_store::check_slug(new).map_err(|e| ApiError::invalid("invalid_slug", e.to_string()))?;
    }
    let change = AppChange { slug: body.slug, title: body.title, description: body.description };
    let app = state.store.rename_app(&slug, &change).await.map_err(|e| match e {
        StoreError::Invalid(m) if m.contains("taken") => ApiError::new(StatusCode::CONFLICT, "slug_taken", m),
        StoreError::Invalid(m) => ApiError::invalid("invalid_fields", m),
        e => e.into(),
    })?;
    Ok(Json(view_of(app, &state.cfg.preview_origin())))
}

/// Unpublish an app (its owner or an admin): its address answers 410 from then on, and its
/// slug stays reserved so an old link never shows someone else's app.
#[utoipa::path(delete, path = "/api/apps/{slug}", params(("slug" = String, Path)), security(("bearer" = [])),
    responses((status = 200, body = AppView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn unpublish(
    State(state): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> ApiResult<Json<AppView>> {
    owned(&state, &caller, &slug).await?;
    let app = state.store.unpublish_app(&slug).await?;
    Ok(Json(view_of(app, &state.cfg.preview_origin())))
}

/// `/apps/{slug}[/{path}]` on the API's origin: a redirect (307) to the same path on the app's
/// own origin; 404 for no such app, 410 for an unpublished one.
pub async fn visit(State(state): State<AppState>, Path(slug): Path<String>, req: Request) -> Response {
    redirect(&state, &slug, "", req).await
}

pub async fn visit_path(
    State(state): State<AppState>,
    Path((slug, path)): Path<(String, String)>,
    req: Request,
) -> Response {
    redirect(&state, &slug, &path, req).await
}

async fn redirect(state: &AppState, slug: &str, path: &str, req: Request) -> Response {
    if let Err(e) = live(state, slug).await {
        return e.into_response();
    }
    let query = req.uri().query().map(|q| format!("?{q}")).unwrap_or_default();
    let to = format!("{}{path}{query}", crate::api::app_url_for(&state.cfg.preview_origin(), slug));
    match HeaderValue::from_str(&to) {
        Ok(v) => (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, v)]).into_response(),
        Err(_) => ApiError::invalid("bad_path", "the path cannot be redirected").into_response(),
    }
}
