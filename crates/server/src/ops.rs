//! Small routes: the models a request may name, the starters it may begin from, health,
//! readiness and metrics.

use crate::api::{Models, StarterView};
use crate::auth::{Caller, hash_token};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The models a request may name.
#[utoipa::path(get, path = "/api/models", security(("bearer" = [])), responses((status = 200, body = Models)))]
pub async fn models(State(state): State<AppState>, _caller: Caller) -> Json<Models> {
    let mut allowed = vec![state.default_model.clone()];
    allowed.extend(state.cfg.allowed_models.iter().filter(|m| **m != state.default_model).cloned());
    Json(Models { default: state.default_model.clone(), allowed })
}

/// The tested starter apps a new build may begin from, with a request each answers: what the
/// page suggests under its prompt.
#[utoipa::path(get, path = "/api/starters", security(("bearer" = [])),
    responses((status = 200, body = [StarterView]), (status = 401, body = crate::api::ErrorBody)))]
pub async fn starters(State(state): State<AppState>, _caller: Caller) -> ApiResult<Json<Vec<StarterView>>> {
    let engine = state.engine.clone();
    let library = tokio::task::spawn_blocking(move || engine.starters())
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let views = library
        .list()
        .iter()
        .map(|s| {
            let m = &s.manifest;
            let pair =
                |en: &str, pt: &str| [("en".to_string(), en.to_string()), ("pt".to_string(), pt.to_string())].into();
            let first = |v: &[String]| v.first().cloned().unwrap_or_default();
            StarterView {
                id: m.id.clone(),
                template: m.template,
                title: pair(&m.title.en, &m.title.pt),
                example: pair(&first(&m.examples.en), &first(&m.examples.pt)),
            }
        })
        .collect();
    Ok(Json(views))
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

/// Prometheus text. With `[metrics] token` set, only for `Authorization: Bearer <that token>`.
#[utoipa::path(get, path = "/metrics", security((), ("bearer" = [])),
    responses((status = 200, description = "Prometheus text format"), (status = 401, body = crate::api::ErrorBody)))]
pub async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> ApiResult<Response> {
    if let Some(token) = &state.cfg.metrics.token {
        // Compared as hashes, so the time taken says nothing of how much of the token matched.
        let given = crate::auth::bearer(&headers).map(hash_token);
        if given.as_deref() != Some(hash_token(token).as_str()) {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "/metrics needs `Authorization: Bearer <token>` with the token of `[metrics] token` in wright.toml",
            ));
        }
    }
    if let Ok(depth) = state.store.queue_depth().await {
        state.metrics.queue_depth.set(depth as i64);
    }
    state.metrics.set_chat_feedback(&state.store.feedback_by_tool().await.unwrap_or_default());
    // Two small reads: a row per job and per server.
    if let (Ok(jobs), Ok(workers)) = (state.store.jobs().await, state.store.workers(crate::maintenance::ALIVE).await) {
        state.metrics.set_maintenance(&jobs, &workers, state.cfg.metrics.host_labels);
    }
    if let Ok(seeds) = state.store.seeds(chrono::Utc::now(), wright_store::seeds::DAYS).await {
        state.metrics.seeds.set(&seeds);
    }
    Ok(([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], state.metrics.render())
        .into_response())
}
