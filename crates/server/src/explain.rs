//! `POST /api/builds/{id}/explain`: a build's code explained to a beginner, by the server's
//! model (the same words as `wright explain`): one at a time per user, and at most `[limits]
//! explanations_per_hour` an hour (the seed's "coach questions", 20 by default).

use crate::access::owned;
use crate::auth::Caller;
use crate::error::{ApiError, ApiJson, ApiResult};
use crate::limits::Route;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use wright_engine::EngineError;

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplainBody {
    /// `en` or `pt`; the build's language by default.
    pub lang: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Explanation {
    pub explanation: String,
}

/// Explain a finished build's code in plain words.
#[utoipa::path(post, path = "/api/builds/{id}/explain", params(("id" = String, Path)), request_body = ExplainBody,
    security(("bearer" = [])),
    responses((status = 200, body = Explanation), (status = 404, body = crate::api::ErrorBody),
        (status = 429, body = crate::api::ErrorBody),
        (status = 409, body = crate::api::ErrorBody), (status = 503, body = crate::api::ErrorBody)))]
pub async fn explain(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ExplainBody>,
) -> ApiResult<Json<Explanation>> {
    let build = owned(&state, &caller, &id).await?;
    // Logged under the build, an explanation is paid for by the build's owner.
    crate::spend::check(&state, build.owner.as_deref().unwrap_or(&caller.0.id)).await?;
    if !build.status.is_final() {
        return Err(ApiError::new(
            axum::http::StatusCode::CONFLICT,
            "still_running",
            format!("build {id} is still running; ask for an explanation once it has ended"),
        ));
    }
    let lang = match body.lang.as_deref() {
        Some(l) => wright_engine::parse_lang(l).map_err(|e| ApiError::invalid("bad_lang", e.to_string()))?,
        None => build.start.lang,
    };
    // After the checks above, so a request they refuse takes no explanation of the hour.
    let turn = state
        .limits
        .hold(
            format!("explain:{}", caller.0.id),
            &[Route::Explanations.quota(&state.cfg.limits, &caller.0.id)],
            "explaining",
            "an explanation of yours is being written; wait for it first",
        )
        .await?;
    // The client going away drops this future, and the model call with it.
    let cancel = CancellationToken::new();
    let text = state
        .engine
        .explain(&build, lang, &cancel, |_| {}, |note| tracing::warn!(build = %id, "{note}"))
        .await
        .map_err(|e| match e {
            EngineError::Usage(m) => ApiError::new(axum::http::StatusCode::CONFLICT, "no_files", m),
            EngineError::Provider(m) => ApiError::unavailable("model_unavailable", m),
        });
    turn.release().await;
    Ok(Json(Explanation { explanation: text? }))
}
