//! Small routes: the models a request may name, health, readiness and metrics.

use crate::api::Models;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

/// The models a request may name.
#[utoipa::path(get, path = "/api/models", security(("bearer" = [])), responses((status = 200, body = Models)))]
pub async fn models(State(state): State<AppState>, _caller: Caller) -> Json<Models> {
    let mut allowed = vec![state.default_model.clone()];
    allowed.extend(state.cfg.allowed_models.iter().filter(|m| **m != state.default_model).cloned());
    Json(Models { default: state.default_model.clone(), allowed })
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
