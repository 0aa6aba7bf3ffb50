//! What admins see across every user's builds: the dashboard's figures in one document, the
//! statistics, and the lessons (which everyone may read and an admin may correct or retire).

use crate::auth::Caller;
use crate::error::{ApiError, ApiJson, ApiResult};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};
use wright_store::{
    DayStats, ErrorKindCount, JobRun, Note, NoteFilter, NoteStatus, SeedMetrics, SpendReport, Stats, StoreError,
    WorkerRow,
};

fn admins_only(caller: &Caller) -> ApiResult<()> {
    if caller.is_admin() {
        Ok(())
    } else {
        Err(ApiError::forbidden("this covers every user's builds; only admins may see it"))
    }
}

#[derive(Deserialize)]
pub struct DashboardQuery {
    /// Days of history for the trends (1–365, default 30).
    days: Option<u32>,
}

/// The admin dashboard's figures: totals, the trends per day and template, the problems
/// verification finds most, the lessons with their scores, the periodic jobs' last runs and
/// the servers sharing the store.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Dashboard {
    #[schema(value_type = Object)]
    pub stats: Stats,
    #[schema(value_type = Vec<Object>)]
    pub days: Vec<DayStats>,
    #[schema(value_type = Vec<Object>)]
    pub error_kinds: Vec<ErrorKindCount>,
    #[schema(value_type = Vec<Object>)]
    pub notes: Vec<Note>,
    /// The periodic jobs (`confidence`, `retention`): lease, last run and how it went.
    #[schema(value_type = Vec<Object>)]
    pub maintenance: Vec<JobRun>,
    /// Every server in the registry, `alive` when it sent a heartbeat lately.
    #[schema(value_type = Vec<Object>)]
    pub workers: Vec<WorkerRow>,
    /// This month's model spend per user and day, so far and projected, with the caps.
    #[schema(value_type = Object)]
    pub spend: SpendReport,
    /// The seeds' metrics over the trends' days: time to publish, note effectiveness,
    /// duration per day.
    #[schema(value_type = Object)]
    pub seeds: SeedMetrics,
    /// People's 👍/👎: on builds (overall and per experiment variant) and on the chat's
    /// replies (per tool), one signal (docs/feedback.md).
    #[schema(value_type = Object)]
    pub ratings: wright_store::RatingSummary,
}

/// Everything the admin dashboard draws (admins only).
#[utoipa::path(get, path = "/api/admin/dashboard", params(("days" = Option<u32>, Query)), security(("bearer" = [])),
    responses((status = 200, body = Dashboard), (status = 403, body = crate::api::ErrorBody)))]
pub async fn dashboard(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<DashboardQuery>,
) -> ApiResult<Json<Dashboard>> {
    admins_only(&caller)?;
    let days = q.days.unwrap_or(30).clamp(1, 365);
    Ok(Json(Dashboard {
        stats: state.store.stats().await?,
        days: state.store.daily_stats(days).await?,
        error_kinds: state.store.error_kinds(days, 12).await?,
        notes: state.store.list_notes(&NoteFilter { status: None, limit: Some(50) }).await?,
        maintenance: state.store.jobs().await?,
        workers: state.store.workers(crate::maintenance::ALIVE).await?,
        spend: state.store.spending(chrono::Utc::now(), None).await?,
        seeds: state.store.seeds(chrono::Utc::now(), days).await?,
        ratings: state.store.rating_summary().await?,
    }))
}

/// A correction to a lesson: its text, or its status (`deprecated` retires it from prompts).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteEdit {
    pub lesson: Option<String>,
    /// `candidate`, `active` or `deprecated`.
    pub status: Option<String>,
}

/// Correct or retire a lesson (admins only).
#[utoipa::path(patch, path = "/api/notes/{id}", params(("id" = String, Path)), request_body = NoteEdit,
    security(("bearer" = [])),
    responses((status = 200, description = "the note as it is now"), (status = 403, body = crate::api::ErrorBody),
        (status = 404, body = crate::api::ErrorBody), (status = 422, body = crate::api::ErrorBody)))]
pub async fn edit_note(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    ApiJson(edit): ApiJson<NoteEdit>,
) -> ApiResult<Json<Note>> {
    admins_only(&caller)?;
    let lesson = edit.lesson.as_deref().map(str::trim);
    if lesson.is_some_and(|l| l.is_empty() || l.chars().count() > 2000) {
        return Err(ApiError::invalid("bad_lesson", "a lesson is 1 to 2,000 characters"));
    }
    let status = match edit.status.as_deref() {
        None => None,
        Some(s) => Some(
            NoteStatus::parse(s)
                .ok_or_else(|| ApiError::invalid("bad_status", "status is candidate, active or deprecated"))?,
        ),
    };
    let note = state.store.edit_note(&id, lesson, status).await.map_err(|e| match e {
        StoreError::NotFound(_) => ApiError::not_found(format!("note {id}")),
        other => ApiError::from(other),
    })?;
    Ok(Json(note))
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
