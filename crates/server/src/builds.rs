//! `/api/builds`: queue, list, show, cancel, follow, and read a build's files.

use crate::access::{Access, visible};
use crate::api::{BuildBody, BuildView, Cancelled, Created, FileEntry};
use crate::auth::Caller;
use crate::error::{ApiError, ApiJson, ApiResult};
use crate::files::file_error;
use crate::headers::{EventsFormat, IdempotencyKey, LastEventId};
use crate::metrics::Following;
use crate::state::AppState;
use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use std::convert::Infallible;
use wright_engine::{ArtifactError, RunRef};
use wright_events::api::CancelState;
use wright_events::words::{Said, say};
use wright_events::{EventKind, Lang, Level, Template};
use wright_store::{
    BuildArgs, BuildFinish, BuildRecord, CancelOutcome, Limits, NewBuild, QueuedBuild, QueuedJob, RunEnd, RunStatus,
    Tokens,
};

/// Most acceptance commands one request may add, and the longest one.
const MAX_CHECKS: usize = 10;
const MAX_CHECK_CHARS: usize = 1000;

/// Run `id`, if the caller may see it and it has ended, and what they may do with it: one
/// still queued or running is a `409 parent_active` that `busy` words (its folder is not to be
/// worked on yet).
pub(crate) async fn ended(
    state: &AppState,
    caller: &Caller,
    id: &str,
    busy: impl FnOnce() -> String,
) -> ApiResult<(BuildRecord, Access)> {
    let (b, access) = crate::access::reach(state, caller, id).await?;
    if !b.status.is_final() {
        return Err(ApiError::new(StatusCode::CONFLICT, "parent_active", busy()));
    }
    Ok((b, access))
}

/// A model the caller asked for must be one the server offers.
pub(crate) fn check_model(state: &AppState, model: Option<&String>) -> ApiResult<()> {
    if let Some(m) = model
        && *m != state.default_model
        && !state.cfg.allowed_models.contains(m)
    {
        return Err(ApiError::invalid(
            "model_not_allowed",
            format!("model `{m}` is not offered here; GET /api/models lists the ones you may pick"),
        ));
    }
    Ok(())
}

fn validate(state: &AppState, body: &BuildBody) -> ApiResult<()> {
    crate::checks::check_prompt(&body.prompt, state.cfg.prompt_chars, &state.redactor, crate::checks::Asked::Build)?;
    check_model(state, body.model.as_ref())?;
    if body.checks.len() > MAX_CHECKS || body.checks.iter().any(|c| c.trim().is_empty() || c.len() > MAX_CHECK_CHARS) {
        return Err(ApiError::invalid(
            "invalid_fields",
            format!("checks: at most {MAX_CHECKS} commands, none empty or over {MAX_CHECK_CHARS} characters"),
        ));
    }
    if let Some(hosts) = &body.allow_hosts
        && (hosts.len() > MAX_CHECKS || hosts.iter().any(|h| h.trim().is_empty() || h.len() > 255))
    {
        return Err(ApiError::invalid(
            "invalid_fields",
            format!("allow_hosts: at most {MAX_CHECKS} hosts or API names, none empty or over 255 characters"),
        ));
    }
    Ok(())
}

/// Queue a build.
#[utoipa::path(post, path = "/api/builds", request_body = BuildBody, security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header,
        description = "A retry with the same key and body returns the same build; the same key with another body is refused (422)")),
    responses((status = 202, body = Created), (status = 401, body = crate::api::ErrorBody),
        (status = 409, body = crate::api::ErrorBody),
        (status = 413, body = crate::api::ErrorBody), (status = 422, body = crate::api::ErrorBody),
        (status = 429, body = crate::api::ErrorBody), (status = 503, body = crate::api::ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    IdempotencyKey(key): IdempotencyKey,
    ApiJson(mut body): ApiJson<BuildBody>,
) -> ApiResult<(StatusCode, Json<Created>)> {
    // The body is read once, here: the queue stores the typed job, and a retry is the same
    // request when it asks for the same job (spelling, spacing and key order do not count).
    let args = BuildArgs::from_body(&body).map_err(|e| ApiError::invalid("invalid_fields", e.to_string()))?;
    // From here on the prompt is the one the model will read: without invisible characters.
    body.prompt.clone_from(&args.prompt);
    let job = QueuedJob::Build(args.clone());
    let dedup_key = match crate::enqueue::retry_or_stopping(&state, &caller, key.as_deref(), &job).await? {
        Ok(dedup_key) => dedup_key,
        Err(answer) => return Ok(answer),
    };
    let mut args = args;
    validate(&state, &body)?;
    crate::spend::check(&state, &caller.0.id).await?;
    // A build of one's own is continued in its folder; one the caller may only read (shared by
    // a classmate, or a student's for their teacher) is copied into a folder of the caller's.
    let (parent, copy) = match &body.r#continue {
        Some(id) => {
            let (b, access) =
                ended(&state, &caller, id, || format!("build {id} has not ended yet; continue it once it has")).await?;
            (Some(b), access == Access::Read)
        }
        None => (None, false),
    };
    if let Some(m) = &state.cfg.moderation {
        m.check(&body.prompt).await.inspect_err(|_| state.metrics.refused("moderation"))?;
    }
    let cfg_limits = (state.cfg.max_concurrent_builds, state.cfg.limits.builds_per_hour);
    let id = wright_engine::new_build_id();
    let workspace = match &parent {
        Some(p) if !copy => p.start.workspace.clone(),
        _ => state.engine.artifacts().record(&state.engine.artifacts().build_folder(&id)),
    };
    if let (Some(p), true) = (&parent, copy) {
        copy_files(&state, p, &id).await?;
    }
    // A new build that names no model joins the running experiment, if one is (else it gets
    // the last promoted variant, the default now); a follow-up keeps its parent's variant.
    let placed = match (&parent, &body.model) {
        (_, Some(_)) => None,
        (None, None) => crate::experiments::assign_build(&state, &caller.0.id, &id).await?,
        (Some(p), None) => crate::experiments::follow_up(&state, p.start.id.as_str()).await?,
    };
    args.variant = placed.as_ref().map(|p| p.assignment.clone());
    let assigned = placed.filter(|p| p.counted).map(|p| p.assignment);
    let job = QueuedJob::Build(args.clone());
    let ahead = state.store.queue_depth().await?;
    let now = wright_events::now();
    let first = EventKind::Queued { position: ahead };
    let queued = QueuedBuild {
        build: NewBuild {
            id: id.clone().into(),
            kind: wright_events::RunKind::Build,
            parent_id: parent.as_ref().map(|p| p.start.id.clone()),
            prompt: body.prompt.clone(),
            template: Some(args.template.or(parent.as_ref().and_then(|p| p.start.template)).unwrap_or(Template::Auto)),
            lang: args.lang.unwrap_or_default(),
            provider: state.engine.provider_kind().as_str().to_string(),
            model: body.model.clone().unwrap_or_else(|| state.default_model.clone()),
            workspace,
            started_at: now,
        },
        owner: caller.0.id.clone(),
        dedup_key,
        job,
        idempotency_key: key,
        // 128 random bits: the preview address is the capability to see the build's files.
        preview_key: uuid::Uuid::new_v4().simple().to_string(),
        first_event: Some(first),
        limits: Some(Limits { concurrent: cfg_limits.0, per_hour: cfg_limits.1 }),
    };

    let busy = |other: &str| format!("build {other} is still working in this folder; continue once it has ended");
    let enqueued = crate::enqueue::enqueue(&state, &caller, &queued, busy).await;
    if copy && !matches!(enqueued, Ok(None)) {
        // Not queued after all: its copy of the files is nobody's.
        crate::rerun::discard(state.engine.artifacts().root(), &id);
        let _ = crate::rerun::remove_all(&state.engine.artifacts().build_folder(&id));
    }
    if let Some(answer) = enqueued? {
        return Ok(answer);
    }
    // Queued already: a failure here leaves the build out of the arms' counts, not unqueued.
    if let Some(a) = &assigned
        && let Err(e) = state.store.set_build_variant(&id, &a.experiment, &a.variant.name).await
    {
        tracing::warn!(build = %id, "the build's experiment variant could not be recorded: {e}");
    }
    if body.assistant
        && let Err(e) =
            crate::app_assistant::create_key(&state, &id, &queued.preview_key, &caller.0.id, &body.prompt).await
    {
        tracing::warn!(build = %id, "the build's assistant key could not be made; its pages go without: {e}");
    }
    tracing::info!(build = %id, user = %caller.0.name, "queued");
    Ok(crate::enqueue::created(&state, id, wright_events::RunKind::Build))
}

/// A copy of `parent`'s files (a build the caller may only read) as build `id`'s own folder, and
/// as the copy a re-run after an interruption starts again from (`rerun::prepare`).
async fn copy_files(state: &AppState, parent: &BuildRecord, id: &str) -> ApiResult<()> {
    let artifacts = state.engine.artifacts().clone();
    let from = artifacts.resolve(std::path::Path::new(&parent.start.workspace));
    let (pid, id) = (parent.start.id.to_string(), id.to_string());
    let copied = tokio::task::spawn_blocking(move || {
        let (own, snap) = (artifacts.build_folder(&id), crate::rerun::snapshot_of(artifacts.root(), &id));
        let made = crate::rerun::copy_project(&from, &own).and_then(|()| crate::rerun::copy_project(&from, &snap));
        if made.is_err() {
            // Half a copy is nobody's.
            let _ = crate::rerun::remove_all(&own);
            let _ = crate::rerun::remove_all(&snap);
        }
        made
    })
    .await
    .map_err(|e| ApiError::internal(format!("copying the files: {e}")))?;
    copied.map_err(|e| {
        ApiError::new(StatusCode::CONFLICT, "no_files", format!("the files of build {pid} could not be copied: {e}"))
    })
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct ListQuery {
    /// At most this many, newest first [default 50, at most 500].
    pub(crate) limit: Option<u32>,
    /// `true`: the builds your classmates shared with you instead, each with `shared_by`.
    #[serde(default)]
    pub(crate) shared: bool,
}

/// Your builds (an admin sees everyone's), newest first; with `?shared=true`, the builds your
/// classmates shared with you.
#[utoipa::path(get, path = "/api/builds", params(ListQuery), security(("bearer" = [])),
    responses((status = 200, body = [BuildView]), (status = 401, body = crate::api::ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<ListQuery>,
) -> ApiResult<Json<Vec<BuildView>>> {
    let limit = q.limit.unwrap_or(50).clamp(1, 500);
    let origin = state.cfg.preview_origin();
    if q.shared {
        let shared = state.store.shared_with(&caller.0.id, limit).await?;
        let view = |s: wright_store::SharedBuild| BuildView {
            shared_by: Some(s.shared.by),
            ..crate::api::view_of(s.build, &origin, false)
        };
        return Ok(Json(shared.into_iter().map(view).collect()));
    }
    let owner = (!caller.is_admin()).then_some(caller.0.id.as_str());
    let builds = state.store.builds_of(owner, limit).await?;
    Ok(Json(builds.into_iter().map(|b| crate::api::view_of(b, &origin, false)).collect()))
}

/// One build with its outcome and report.
#[utoipa::path(get, path = "/api/builds/{id}", params(("id" = String, Path)), security(("bearer" = [])),
    responses((status = 200, body = BuildView), (status = 404, body = crate::api::ErrorBody)))]
pub async fn get(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<Json<BuildView>> {
    let b = visible(&state, &caller, &id).await?;
    let queued = b.status == wright_store::RunStatus::Queued;
    let mut view = crate::api::view_of(b, &state.cfg.preview_origin(), true);
    view.app = state.store.app_of_build(&id).await?.map(|a| a.to_ref());
    view.shared_by = state.store.shared(&id).await?.map(|s| s.by);
    view.feedback = state.store.build_feedback(&id).await?.map(crate::api::rating_of);
    if queued {
        view.queue_position = Some(state.store.queue_position(&id).await?);
    }
    Ok(Json(view))
}

/// Stop a queued or running build; its stream still ends with `complete`.
#[utoipa::path(post, path = "/api/builds/{id}/cancel", params(("id" = String, Path)), security(("bearer" = [])),
    responses((status = 200, body = Cancelled), (status = 404, body = crate::api::ErrorBody)))]
pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Cancelled>> {
    let b = crate::access::owned(&state, &caller, &id).await?;
    cancel_run(&state, b).await
}

/// Stop run `b` (a build or a task run) the caller may see.
pub(crate) async fn cancel_run(state: &AppState, b: BuildRecord) -> ApiResult<Json<Cancelled>> {
    let (id, lang) = (b.start.id, b.start.lang);
    let status = match state.store.request_cancel(&id, cancelled_while_queued(lang)).await? {
        CancelOutcome::WasQueued => {
            // A follow-up build cancelled while queued again after an interruption has a copy of
            // its folder, and its interrupted run may have left the folder half-written.
            match state.store.build(&id).await {
                Ok(b) => crate::queue::restore_and_discard(state, &id, b.start.workspace).await,
                Err(_) => crate::rerun::discard(state.engine.artifacts().root(), &id),
            }
            state.metrics.build_ended(Some(wright_events::EndReason::Cancelled), None);
            CancelState::Cancelled
        }
        CancelOutcome::Running => {
            // At once when it runs here; another server's worker sees the flag within a second.
            state.queue.cancel(&id);
            CancelState::Cancelling
        }
        CancelOutcome::AlreadyEnded => CancelState::Ended,
    };
    Ok(Json(Cancelled { id, status }))
}

/// How a build cancelled before any worker took it ends: a warning (in the build's language),
/// its record, `complete`.
fn cancelled_while_queued(lang: Lang) -> RunEnd {
    let record = BuildFinish {
        status: RunStatus::Failed,
        end_reason: Some(wright_events::EndReason::Cancelled),
        fix_attempts: 0,
        turns: 0,
        tokens: Tokens::default(),
        duration_ms: 0,
        files: vec![],
        report: None,
        finished_at: wright_events::now(),
    };
    let said = say(lang, Said::CancelledWhileQueued);
    RunEnd::of(record, vec![EventKind::Status { message: said, level: Level::Warning }])
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct EventsQuery {
    /// Start after this `seq` (like `Last-Event-ID`).
    pub(crate) after: Option<u64>,
}

/// The build's events: SSE (`id: seq`, `event: type`, `data: JSON`), or JSON lines with
/// `Accept: application/x-ndjson`. Resumes after `Last-Event-ID` or `?after=`; ends after `complete`.
#[utoipa::path(get, path = "/api/builds/{id}/events", params(("id" = String, Path), EventsQuery,
        ("Last-Event-ID" = Option<u64>, Header, description = "Resume after this seq")),
    security(("bearer" = [])),
    responses((status = 200, description = "text/event-stream or application/x-ndjson"), (status = 404, body = crate::api::ErrorBody)))]
pub async fn events(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<EventsQuery>,
    last: LastEventId,
    format: EventsFormat,
) -> ApiResult<Response> {
    visible(&state, &caller, &id).await?;
    Ok(follow(&state, &id, last.after(q.after), format))
}

/// Run `id`'s events after `after`, as SSE or as JSON lines.
pub(crate) fn follow(state: &AppState, id: &str, after: u64, format: EventsFormat) -> Response {
    let frames = crate::stream::follow(state.store.clone(), id, after, state.streams_stop.clone());
    let following = Following::new(&state.metrics);
    let frames = frames.map(move |frame| {
        let _counted = &following;
        frame
    });
    if format == EventsFormat::Ndjson {
        let body = Body::from_stream(frames.map(|f| Ok::<_, Infallible>(format!("{}\n", f.json()))));
        return ([(header::CONTENT_TYPE, "application/x-ndjson"), (header::CACHE_CONTROL, "no-store")], body)
            .into_response();
    }
    crate::stream::sse(state.cfg.heartbeat, frames, |l| (l.event.kind.type_name(), l.json().to_string()))
}

/// The build's files (generated folders such as `node_modules` left out).
#[utoipa::path(get, path = "/api/builds/{id}/files", params(("id" = String, Path)), security(("bearer" = [])),
    responses((status = 200, body = [FileEntry]), (status = 404, body = crate::api::ErrorBody)))]
pub async fn files(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Vec<FileEntry>>> {
    let b = visible(&state, &caller, &id).await?;
    let entries = match state.artifacts.list(&RunRef::from(&b)).await {
        Ok(files) => files.into_iter().map(|f| FileEntry { path: f.path, bytes: f.bytes }).collect(),
        // A build whose folder is gone (or was never made) has no files.
        Err(ArtifactError::NoFiles(_)) => vec![],
        Err(e) => return Err(ApiError::internal(format!("listing the files: {e}"))),
    };
    Ok(Json(entries))
}

/// One file's content, as plain text or bytes: never rendered on the API's origin (the
/// preview origin is for that).
#[utoipa::path(get, path = "/api/builds/{id}/files/{path}", params(("id" = String, Path), ("path" = String, Path)),
    security(("bearer" = [])),
    responses((status = 200, description = "the file"), (status = 400, body = crate::api::ErrorBody), (status = 404, body = crate::api::ErrorBody)))]
pub async fn file(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, path)): Path<(String, String)>,
) -> ApiResult<Response> {
    let b = visible(&state, &caller, &id).await?;
    let bytes = state.artifacts.read(&RunRef::from(&b), &path).await.map_err(|e| file_error(e, &id))?;
    let kind =
        if std::str::from_utf8(&bytes).is_ok() { "text/plain; charset=utf-8" } else { "application/octet-stream" };
    Ok((
        [
            (header::CONTENT_TYPE, kind),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CONTENT_SECURITY_POLICY, "default-src 'none'; sandbox"),
        ],
        bytes,
    )
        .into_response())
}

/// The page as the browser check last saw it (a PNG), once a build has been checked.
#[utoipa::path(get, path = "/api/builds/{id}/screenshot", params(("id" = String, Path)), security(("bearer" = [])),
    responses((status = 200, description = "image/png"), (status = 404, body = crate::api::ErrorBody)))]
pub async fn screenshot(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<Response> {
    visible(&state, &caller, &id).await?;
    match state.artifacts.screenshot(&id).await {
        Ok(Some(bytes)) => {
            Ok(([(header::CONTENT_TYPE, "image/png"), (header::CACHE_CONTROL, "no-cache")], bytes).into_response())
        }
        Ok(None) => {
            Err(ApiError::not_found(format!("a screenshot of build {id} (the browser check has not taken one)")))
        }
        Err(e) => Err(ApiError::internal(format!("reading the screenshot: {e}"))),
    }
}

/// The project as a `.zip`.
#[utoipa::path(get, path = "/api/builds/{id}/archive", params(("id" = String, Path)), security(("bearer" = [])),
    responses((status = 200, description = "application/zip"), (status = 404, body = crate::api::ErrorBody)))]
pub async fn archive(State(state): State<AppState>, caller: Caller, Path(id): Path<String>) -> ApiResult<Response> {
    let b = visible(&state, &caller, &id).await?;
    let run = RunRef::from(&b);
    // Asked first, so a build without files is a 404 rather than a response cut short.
    state.artifacts.list(&run).await.map_err(|e| match e {
        ArtifactError::NoFiles(_) => ApiError::not_found(format!("the files of build {id}")),
        e => ApiError::internal(format!("making the archive: {e}")),
    })?;
    let body = crate::files::piped(move |out| async move { state.artifacts.archive_to(&run, out).await });
    let disposition = format!("attachment; filename=\"wright-{id}.zip\"");
    let mut res = ([(header::CONTENT_TYPE, "application/zip")], body).into_response();
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        res.headers_mut().insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(res)
}

#[derive(serde::Deserialize, utoipa::IntoParams)]
pub struct PreviewEventsQuery {
    /// Start after this `seq`.
    after: Option<u64>,
}

/// The build's preview log: the `outside_request` events of its previews (the page's calls
/// through the preview's relay, the app's server's calls), oldest first, at most 1000 per call
/// (page on with `?after=`). Each is the same JSON as in the build's own stream, numbered
/// 1, 2, 3… in a sequence of its own.
#[utoipa::path(get, path = "/api/builds/{id}/preview-events", params(("id" = String, Path), PreviewEventsQuery),
    security(("bearer" = [])),
    responses((status = 200, description = "a JSON array of events"), (status = 404, body = crate::api::ErrorBody)))]
pub async fn preview_events(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<PreviewEventsQuery>,
) -> ApiResult<Json<Vec<wright_events::Event>>> {
    let b = visible(&state, &caller, &id).await?;
    Ok(Json(state.store.preview_events(&b.start.id, q.after.unwrap_or(0)).await?))
}
