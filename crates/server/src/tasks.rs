//! `/api/tasks`: a task file run as a run of its own (`wright task run` over HTTP). The plan is
//! checked as `wright task check` checks it before anything is queued; the run goes through the
//! builds' queue, limits, leases and run log (a row of kind `task`, its job typed as
//! [`QueuedJob::Task`]), so it is followed, resumed, restarted and cancelled as a build is.

use crate::access::{Access, read_only, visible};
use crate::api::{Cancelled, Created, TaskBody, TaskOutcomeView, TaskRunView};
use crate::auth::Caller;
use crate::builds::{check_model, follow};
use crate::error::{ApiError, ApiJson, ApiResult};
use crate::headers::{EventsFormat, IdempotencyKey, LastEventId};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use wright_events::api::RunId;
use wright_events::{EventKind, Lang, RunKind};
use wright_store::{BuildRecord, Limits, NewBuild, QueuedBuild, QueuedJob, RunStatus, TaskArgs};

/// Most tasks one plan may hold.
const MAX_TASKS: usize = 100;

/// The task run, if the caller may see it and it is one; anything else is "not found".
async fn visible_run(state: &AppState, caller: &Caller, id: &str) -> ApiResult<BuildRecord> {
    let b = visible(state, caller, id).await?;
    if b.start.kind == RunKind::Task { Ok(b) } else { Err(ApiError::not_found(format!("task run {id}"))) }
}

/// A run whose project a new task run may work on: the caller's, and ended.
async fn ended_project(state: &AppState, caller: &Caller, id: &str, field: &str) -> ApiResult<BuildRecord> {
    let (b, access) = crate::builds::ended(state, caller, id, || {
        format!("{field}: run {id} has not ended yet; start the tasks once it has")
    })
    .await?;
    // A task run works in the project's own folder: only its owner's (or an admin's).
    if access == Access::Read { Err(read_only(id)) } else { Ok(b) }
}

/// The plan of `body`, read and checked as `wright task check` does; errors name the field.
fn read_plan(body: &TaskBody) -> ApiResult<wright_engine::TaskPlan> {
    let bad = |m: String| ApiError::invalid("invalid_plan", format!("plan: {m}"));
    let (text, format) = match &body.plan {
        serde_json::Value::String(text) => {
            let format = match body.format.as_deref().map(str::to_ascii_lowercase).as_deref() {
                None | Some("json") => wright_engine::TaskFormat::Json,
                Some("toml") => wright_engine::TaskFormat::Toml,
                Some(other) => return Err(bad(format!("format `{other}` is not known; use json or toml"))),
            };
            (text.clone(), format)
        }
        value @ (serde_json::Value::Object(_) | serde_json::Value::Array(_)) => {
            if body.format.as_deref().is_some_and(|f| !f.eq_ignore_ascii_case("json")) {
                return Err(bad("a plan given as JSON is JSON; `format` is for a plan given as text".into()));
            }
            (value.to_string(), wright_engine::TaskFormat::Json)
        }
        _ => return Err(bad("give the task file as a JSON object or list, or its text as a string".into())),
    };
    let plan = wright_engine::read_plan(&text, format).map_err(bad)?;
    if plan.tasks.len() > MAX_TASKS {
        return Err(bad(format!("{} tasks; a plan holds at most {MAX_TASKS}", plan.tasks.len())));
    }
    Ok(plan)
}

/// Queue a task run.
#[utoipa::path(post, path = "/api/tasks", request_body = TaskBody, security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header,
        description = "A retry with the same key and body returns the same run; the same key with another body is refused (422)")),
    responses((status = 202, body = Created), (status = 401, body = crate::api::ErrorBody),
        (status = 404, body = crate::api::ErrorBody), (status = 409, body = crate::api::ErrorBody),
        (status = 413, body = crate::api::ErrorBody), (status = 422, body = crate::api::ErrorBody),
        (status = 429, body = crate::api::ErrorBody), (status = 503, body = crate::api::ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    IdempotencyKey(key): IdempotencyKey,
    ApiJson(body): ApiJson<TaskBody>,
) -> ApiResult<(StatusCode, Json<Created>)> {
    let plan = read_plan(&body)?;
    let mut plan_json = serde_json::to_value(&plan).map_err(|e| ApiError::internal(format!("the plan: {e}")))?;
    // Every text of the plan goes to the model: without what a person cannot see.
    let hidden = strip_hidden(&mut plan_json);
    if hidden > 0 {
        tracing::info!(user = %caller.0.name, hidden, "invisible characters removed from a task plan");
    }
    let args = TaskArgs {
        plan: plan_json,
        project: body.project.clone().map(RunId),
        resume: body.resume.clone().map(RunId),
        rerun: body.rerun.clone(),
        model: body.model.clone(),
    };
    let job = QueuedJob::Task(args);
    let dedup_key = match crate::enqueue::retry_or_stopping(&state, &caller, key.as_deref(), &job).await? {
        Ok(dedup_key) => dedup_key,
        Err(answer) => return Ok(answer),
    };
    check_model(&state, body.model.as_ref())?;
    // Everything in the plan goes to the model: no secrets in it.
    let text = job.encode();
    if state.redactor.redact(&text) != text {
        return Err(ApiError::invalid(
            "prompt_secret",
            "the plan holds something that looks like a secret (an API key, token, password in a URL or private key); \
             remove it and send it again: wright never sends secrets to a model",
        ));
    }
    let ids: Vec<&str> = plan.tasks.iter().map(|t| t.id.as_str()).collect();
    if let Some(t) = body.rerun.iter().find(|t| !ids.contains(&t.as_str())) {
        return Err(ApiError::invalid("invalid_fields", format!("rerun: the plan has no task `{t}`")));
    }
    let project = match &body.project {
        Some(id) => Some(ended_project(&state, &caller, id, "project").await?),
        None => None,
    };
    let resumed = match &body.resume {
        Some(id) => {
            let r = ended_project(&state, &caller, id, "resume").await?;
            if r.start.kind != RunKind::Task {
                return Err(ApiError::invalid("invalid_fields", format!("resume: {id} is a build, not a task run")));
            }
            if project.as_ref().is_some_and(|p| p.start.workspace != r.start.workspace) {
                return Err(ApiError::invalid(
                    "invalid_fields",
                    format!(
                        "resume: task run {id} worked on another project than {}",
                        body.project.as_deref().unwrap_or("")
                    ),
                ));
            }
            Some(r)
        }
        None if !body.rerun.is_empty() => {
            return Err(ApiError::invalid("invalid_fields", "rerun needs resume: there is no earlier run to keep"));
        }
        None => None,
    };
    crate::spend::check(&state, &caller.0.id).await?;
    if let Some(m) = &state.cfg.moderation {
        m.check(&text).await.inspect_err(|_| state.metrics.refused("moderation"))?;
    }
    let id = wright_engine::new_build_id();
    let artifacts = state.engine.artifacts();
    // The project it works on: the one named, else the resumed run's, else a new folder.
    let on = project.as_ref().or(resumed.as_ref());
    let workspace = match on {
        Some(p) => p.start.workspace.clone(),
        None => artifacts.record(&artifacts.build_folder(&id)),
    };
    let prompt = plan.goal.clone().unwrap_or_else(|| format!("tasks: {}", ids.join(", ")));
    let lang = on.map_or(Lang::En, |p| p.start.lang);
    let queued = QueuedBuild {
        build: NewBuild {
            id: id.clone().into(),
            kind: RunKind::Task,
            parent_id: on.map(|p| p.start.id.clone()),
            prompt,
            template: None,
            lang,
            provider: state.engine.provider_kind().as_str().to_string(),
            model: body.model.clone().unwrap_or_else(|| state.default_model.clone()),
            workspace,
            started_at: wright_events::now(),
        },
        owner: caller.0.id.clone(),
        dedup_key,
        job,
        idempotency_key: key,
        preview_key: uuid::Uuid::new_v4().simple().to_string(),
        first_event: Some(EventKind::Queued { position: state.store.queue_depth().await? }),
        limits: Some(Limits { concurrent: state.cfg.max_concurrent_builds, per_hour: state.cfg.limits.tasks_per_hour }),
    };
    let busy = |other: &str| format!("run {other} is still working on this project; start the tasks once it has ended");
    if let Some(answer) = crate::enqueue::enqueue(&state, &caller, &queued, busy).await? {
        return Ok(answer);
    }
    tracing::info!(run = %id, user = %caller.0.name, tasks = ids.len(), "task run queued");
    Ok(crate::enqueue::created(&state, id, RunKind::Task))
}

/// One task run: the run, and each task that has ended so far, in run order.
#[utoipa::path(get, path = "/api/tasks/{id}", params(("id" = String, Path)), security(("bearer" = [])),
    responses((status = 200, body = TaskRunView), (status = 404, body = crate::api::ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<TaskRunView>> {
    let b = visible_run(&state, &caller, &id).await?;
    let queued = b.status == RunStatus::Queued;
    let mut run = crate::api::view_of(b, &state.cfg.preview_origin(), true);
    if queued {
        run.queue_position = Some(state.store.queue_position(&id).await?);
    }
    let tasks = state
        .store
        .task_results(&id)
        .await?
        .into_iter()
        .map(|t| TaskOutcomeView {
            id: t.task_id,
            kind: t.kind,
            status: t.status,
            message: t.message,
            result: t.result,
            started_at: t.started_at,
            finished_at: t.finished_at,
        })
        .collect();
    Ok(Json(TaskRunView { run, tasks }))
}

/// Stop a queued or running task run: the task running is stopped, the ones after it do not
/// run; its stream still ends with `complete`.
#[utoipa::path(post, path = "/api/tasks/{id}/cancel", params(("id" = String, Path)), security(("bearer" = [])),
    responses((status = 200, body = Cancelled), (status = 404, body = crate::api::ErrorBody)))]
pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Cancelled>> {
    let b = visible_run(&state, &caller, &id).await?;
    if crate::access::access(&state, &caller, &b).await? != Some(Access::Own) {
        return Err(read_only(&id));
    }
    crate::builds::cancel_run(&state, b).await
}

/// The task run's events, as a build's: SSE (`id: seq`, `event: type`, `data: JSON`), or JSON
/// lines with `Accept: application/x-ndjson`; resumes after `Last-Event-ID` or `?after=`.
#[utoipa::path(get, path = "/api/tasks/{id}/events", params(("id" = String, Path), crate::builds::EventsQuery,
        ("Last-Event-ID" = Option<u64>, Header, description = "Resume after this seq")),
    security(("bearer" = [])),
    responses((status = 200, description = "text/event-stream or application/x-ndjson"), (status = 404, body = crate::api::ErrorBody)))]
pub async fn events(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(q): Query<crate::builds::EventsQuery>,
    last: LastEventId,
    format: EventsFormat,
) -> ApiResult<Response> {
    visible_run(&state, &caller, &id).await?;
    Ok(follow(&state, &id, last.after(q.after), format))
}
/// Remove the characters a person cannot see from every text of `v` (keys included); how many.
fn strip_hidden(v: &mut serde_json::Value) -> usize {
    use serde_json::Value;
    let strip = |s: &mut String| {
        let out = wright_text::hidden::strip(s);
        *s = out.text;
        out.removed
    };
    match v {
        Value::String(s) => strip(s),
        Value::Array(items) => items.iter_mut().map(strip_hidden).sum(),
        Value::Object(map) => {
            let old = std::mem::take(map);
            let mut n = 0;
            for (mut k, mut item) in old {
                n += strip(&mut k) + strip_hidden(&mut item);
                map.insert(k, item);
            }
            n
        }
        _ => 0,
    }
}
