//! `POST /api/builds/{id}/feedback`: the owner's 👍/👎 on a finished build, which moves the
//! confidence of the notes the build used (docs/feedback.md).

use crate::auth::Caller;
use crate::error::{ApiError, ApiJson, ApiResult};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use wright_events::api::{MovedNoteView, RateBody, RatedView};
use wright_store::{StoreError, feedback::MAX_COMMENT};

/// Rate a finished build of yours: `up` or `down`, with an optional comment. The notes the
/// build used gain (👍) or lose (👎) confidence, once per value.
#[utoipa::path(post, path = "/api/builds/{id}/feedback", params(("id" = String, Path)), request_body = RateBody,
    security(("bearer" = [])),
    responses((status = 200, body = RatedView), (status = 404, body = crate::api::ErrorBody),
        (status = 409, body = crate::api::ErrorBody), (status = 422, body = crate::api::ErrorBody)))]
pub async fn rate(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<RateBody>,
) -> ApiResult<Json<RatedView>> {
    let b = crate::access::owned(&state, &caller, &id).await?;
    // An admin may see and change anyone's build, but a rating is its owner's own verdict.
    if b.owner.as_deref() != Some(caller.0.id.as_str()) {
        return Err(ApiError::forbidden(format!("build {id} is someone else's: only its owner rates it")));
    }
    if let Some(c) = &body.comment
        && c.chars().count() > MAX_COMMENT
    {
        return Err(ApiError::invalid("invalid_fields", format!("comment: at most {MAX_COMMENT} characters")));
    }
    if !b.status.is_final() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "not_finished",
            format!("build {id} has not finished yet; rate it once it has"),
        ));
    }
    let rated =
        state.store.rate_build(&id, Some(&caller.0.id), body.value.value(), body.comment.as_deref()).await.map_err(
            |e| match e {
                StoreError::Invalid(m) => ApiError::invalid("invalid_fields", m),
                other => other.into(),
            },
        )?;
    Ok(Json(RatedView {
        feedback: crate::api::rating_of(rated.feedback),
        moved: rated.moved.into_iter().map(|m| MovedNoteView { id: m.id, before: m.before, after: m.after }).collect(),
    }))
}
