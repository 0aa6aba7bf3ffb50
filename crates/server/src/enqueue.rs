//! Queueing a run from a request, the same for every kind (`POST /api/builds`, `POST
//! /api/tasks`): a retry names the run it asked for before anything is checked, the store
//! queues it with the caller's limits in one transaction, and the answer is `202` with where
//! its events stream, or the refusal that says why.

use crate::api::Created;
use crate::auth::{Caller, hash_token};
use crate::error::{ApiError, ApiResult};
use crate::limits::Route;
use crate::state::AppState;
use axum::Json;
use axum::http::StatusCode;
use std::time::Duration;
use wright_events::RunKind;
use wright_events::api::RunId;
use wright_store::limits::HOUR;
use wright_store::{BuildRecord, Enqueued, LimitKind, QueuedBuild, QueuedJob, RunStatus};

/// How soon to look again when a run must end before another starts.
const TEN_S: Duration = Duration::from_secs(10);

/// The answer to a request that queued a run, or that named one already there.
pub(crate) type Answer = (StatusCode, Json<Created>);

/// Before any limit or check: the key that tells an identical request while it is active
/// (`Ok`), or the answer already (`Err`): the run a retry names (same `Idempotency-Key`, or the
/// same job while it is active), answered even at the limit and never counted again. A server
/// that is stopping refuses new runs.
pub(crate) async fn retry_or_stopping(
    state: &AppState,
    caller: &Caller,
    key: Option<&str>,
    job: &QueuedJob,
) -> ApiResult<Result<String, Answer>> {
    let dedup_key = hash_token(&format!("{}\n{}", caller.0.id, job.encode()));
    if let Some(b) = state.store.existing_build(&caller.0.id, key, &dedup_key).await? {
        return existing(b, job).map(Err);
    }
    if state.is_stopping() {
        return Err(ApiError::unavailable(
            "shutting_down",
            "this server is shutting down; send the request again shortly",
        ));
    }
    Ok(Ok(dedup_key))
}

/// Put `queued` in the queue: `None` when it is queued now (the caller says so with
/// [`created`]), else the run the request names after all, or the refusal (`busy` words the
/// conflict with the run `other` that works in the same folder).
pub(crate) async fn enqueue(
    state: &AppState,
    caller: &Caller,
    queued: &QueuedBuild,
    busy: impl FnOnce(&str) -> String,
) -> ApiResult<Option<Answer>> {
    match state.store.enqueue_build(queued).await? {
        Enqueued::New => Ok(None),
        Enqueued::Existing(b) => existing(*b, &queued.job).map(Some),
        Enqueued::Limited { kind, count, oldest } => {
            Err(refuse(state, &caller.0.id, queued.build.kind, kind, count, oldest).await)
        }
        Enqueued::FolderBusy(other) => Err(ApiError::new(StatusCode::CONFLICT, "conflict", busy(&other))),
    }
}

/// `202` for run `id`, just queued; an idle worker is woken for it.
pub(crate) fn created(state: &AppState, id: String, kind: RunKind) -> Answer {
    state.queue.wake.notify_one();
    let events_url = crate::api::events_url(kind, &id);
    (StatusCode::ACCEPTED, Json(Created { id: RunId(id), status: RunStatus::Queued, events_url, deduplicated: false }))
}

/// The answer to a request for a run of kind `run` that a per-user limit refused (decided by
/// the store in the transaction that would have queued it): 429 with when to try again and
/// the limit (`error.limit`: `concurrent_runs`, or the run kind's hourly `builds`/`tasks`).
pub(crate) async fn refuse(
    state: &AppState,
    user: &str,
    run: RunKind,
    kind: LimitKind,
    count: u64,
    oldest: Option<String>,
) -> ApiError {
    let cfg = &state.cfg;
    state.metrics.refused(kind.as_str());
    if let Err(e) = state.store.log_refusal(user, kind.as_str()).await {
        tracing::warn!("refusal not logged: {e}");
    }
    match kind {
        LimitKind::Concurrent => {
            // Room comes back when one of them ends: the wait is a hint to look again.
            let hit = crate::limits::hit("concurrent_runs", cfg.max_concurrent_builds, count, Duration::ZERO, TEN_S);
            ApiError::limited(
                format!(
                    "you have {count} builds queued or running, the most at once ({}); wait for one to end",
                    cfg.max_concurrent_builds
                ),
                hit,
            )
        }
        LimitKind::Hourly => {
            let route = if run == RunKind::Task { Route::Tasks } else { Route::Builds };
            let words = if run == RunKind::Task { "task runs" } else { "builds" };
            let hour = chrono::Duration::hours(1);
            let retry = oldest
                .and_then(|o| chrono::DateTime::parse_from_rfc3339(&o).ok())
                .map(|o| (o.with_timezone(&chrono::Utc) + hour - chrono::Utc::now()).num_seconds().max(1) as u64)
                .unwrap_or(60);
            let max = route.max(&cfg.limits);
            let hit = crate::limits::hit(route.name(), max, count, HOUR, Duration::from_secs(retry));
            let back = hit.resets_at.clone();
            ApiError::limited(
                format!(
                    "you started {count} {words} in the last hour, the most allowed ({max}); \
                     try again in {retry} s (at {back})"
                ),
                hit,
            )
        }
    }
}

/// The answer to a request (`job`, what its body asks for) that names build `b` already
/// there: that build, unless the request only shares its `Idempotency-Key` and asks for
/// something else. A key names one request, so that is refused with 422 (as Stripe does)
/// rather than answered with a build the client did not ask for. The requests are compared
/// as the typed jobs they ask for, so spacing, key order and spelling (`Full-Stack`) do not
/// count; an identical twin found without the key asks for the same job by construction.
pub(crate) fn existing(b: BuildRecord, job: &QueuedJob) -> ApiResult<(StatusCode, Json<Created>)> {
    // The experiment variant a build was put in is the server's, not the request's.
    let asked = |j: &QueuedJob| match j {
        QueuedJob::Build(a) => QueuedJob::Build(wright_events::job::BuildArgs { variant: None, ..a.clone() }),
        other => other.clone(),
    };
    let differs = b.job.as_ref().is_some_and(|first| first.as_ref().map(asked) != Ok(asked(job)));
    let id = b.start.id;
    if differs {
        return Err(ApiError::invalid(
            "idempotency_key_reused",
            format!(
                "Idempotency-Key: this key was sent with a different body for build {id}; \
                 send that body again to get the build, or a new key for a new build"
            ),
        ));
    }
    let events_url = crate::api::events_url(b.start.kind, &id);
    Ok((StatusCode::ACCEPTED, Json(Created { id, status: b.status, events_url, deduplicated: true })))
}
