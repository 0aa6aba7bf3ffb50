//! Online experiments (docs/experiments.md): the variant a new build is put in when it is
//! queued, and the admin API that creates, starts, stops and reports experiments.

use crate::auth::Caller;
use crate::error::{ApiError, ApiJson, ApiResult};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use wright_experiments::{Assignment, Metric, Report, Unit, Variant, arms_report};
use wright_store::{Experiment, NewExperiment, StoreError};

/// Where a new build goes, and whether it counts in an experiment's arms.
pub(crate) struct Placement {
    pub(crate) assignment: Assignment,
    /// In the running experiment (recorded on the build, so its arms count it); `false` for
    /// the promoted default, which a stopped experiment no longer measures.
    pub(crate) counted: bool,
}

/// The running experiment's variant for a new build of `owner` whose id is `build`: by its
/// owner (a person keeps one variant) or by the build, as the experiment's unit says. With no
/// experiment running, the variant promoted when the last experiment with a winner stopped:
/// it is the default now. `None` when there is neither.
pub(crate) async fn assign_build(state: &AppState, owner: &str, build: &str) -> ApiResult<Option<Placement>> {
    let Some(exp) = state.store.running_experiment().await? else {
        return promoted_default(state).await;
    };
    let unit = match exp.unit {
        Unit::User => owner,
        Unit::Build => build,
    };
    let i = wright_experiments::assign(&exp.id, &exp.salt, unit, &exp.variants)
        .map_err(|e| ApiError::internal(format!("experiment `{}` cannot assign: {e}", exp.name)))?;
    let variant = exp.variants.get(i).cloned().ok_or_else(|| ApiError::internal("assignment out of range"))?;
    Ok(Some(Placement { assignment: Assignment { experiment: exp.id, variant }, counted: true }))
}

/// Where a follow-up of build `parent` goes: the variant its parent was counted under while
/// that experiment still runs, so a person's app is made the same way from request to last
/// change; not counted (the arms compare new requests). Else what a new build would get when
/// no experiment runs: the promoted default, if there is one.
pub(crate) async fn follow_up(state: &AppState, parent: &str) -> ApiResult<Option<Placement>> {
    if let Some((exp_id, name)) = state.store.build_variant(parent).await?
        && let Some(exp) = state.store.running_experiment().await?.filter(|e| e.id == exp_id)
        && let Some(variant) = exp.variants.iter().find(|v| v.name == name).cloned()
    {
        let experiment = format!("{} (follow-up)", exp.name);
        return Ok(Some(Placement { assignment: Assignment { experiment, variant }, counted: false }));
    }
    promoted_default(state).await
}

/// The winner of the experiment that stopped last with one, as every new build's default.
async fn promoted_default(state: &AppState) -> ApiResult<Option<Placement>> {
    let last = state
        .store
        .experiments()
        .await?
        .into_iter()
        .filter(|e| e.promoted.is_some())
        .max_by(|a, b| a.stopped_at.cmp(&b.stopped_at));
    let Some(exp) = last else { return Ok(None) };
    let winner = exp.promoted.as_deref().and_then(|p| exp.variants.iter().find(|v| v.name == p)).cloned();
    Ok(winner.map(|variant| Placement {
        assignment: Assignment { experiment: format!("{} (promoted)", exp.name), variant },
        counted: false,
    }))
}

fn admins_only(caller: &Caller) -> ApiResult<()> {
    if caller.is_admin() {
        Ok(())
    } else {
        Err(ApiError::forbidden("experiments change how every user's builds are made; only admins may see them"))
    }
}

/// An experiment with what its arms show so far.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ExperimentView {
    #[schema(value_type = Object)]
    pub experiment: Experiment,
    #[schema(value_type = Object)]
    pub report: Report,
}

/// A new experiment (a draft until started).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExperimentBody {
    pub name: String,
    /// `user` (default: a person keeps one variant) or `build`.
    pub unit: Option<String>,
    /// `[{name, weight?, model?, prompt_version?, note_budget?, starter_policy?}]`, two or more.
    #[schema(value_type = Vec<Object>)]
    pub variants: Vec<Variant>,
    /// The metric the test is read on (default `published`).
    pub primary: Option<String>,
    #[serde(default)]
    pub guardrails: Vec<String>,
    /// Builds per arm at which the test is read (default 100).
    pub horizon: Option<u32>,
}

/// How an experiment ends.
#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StopBody {
    /// The variant to record as the winner.
    pub promote: Option<String>,
}

/// What an experiment's arms show so far (the same report as `wright experiments show`).
pub(crate) async fn view(state: &AppState, experiment: Experiment) -> ApiResult<ExperimentView> {
    let outcomes = state.store.arm_outcomes(&experiment.id).await?;
    let report = arms_report(&experiment.variants, &outcomes, experiment.primary, experiment.horizon);
    Ok(ExperimentView { experiment, report })
}

fn metric(name: &str) -> ApiResult<Metric> {
    Metric::parse(name).ok_or_else(|| {
        let all: Vec<&str> = Metric::ALL.iter().map(|m| m.as_str()).collect();
        ApiError::invalid("bad_metric", format!("unknown metric `{name}`; use one of {}", all.join(", ")))
    })
}

/// Refuse variants this server cannot build with (a prompt version its `wright.toml` lacks, a
/// starter it does not have), with the variant and the reason.
fn checked(state: &AppState, variants: &[Variant]) -> ApiResult<()> {
    state.engine.check_variants(variants).map_err(|e| ApiError::invalid("invalid_experiment", e.to_string()))
}

fn invalid(e: StoreError) -> ApiError {
    match e {
        StoreError::Invalid(m) => ApiError::invalid("invalid_experiment", m),
        other => ApiError::from(other),
    }
}

/// Every experiment, newest first, each with its arms' report (admins only).
#[utoipa::path(get, path = "/api/admin/experiments", security(("bearer" = [])),
    responses((status = 200, body = Vec<ExperimentView>), (status = 403, body = crate::api::ErrorBody)))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Vec<ExperimentView>>> {
    admins_only(&caller)?;
    let mut out = vec![];
    for e in state.store.experiments().await? {
        out.push(view(&state, e).await?);
    }
    Ok(Json(out))
}

/// Create an experiment as a draft (admins only); refused with the reason when its variants
/// are fewer than two, weigh nothing, share a name, or name a prompt version or starter
/// this server does not have.
#[utoipa::path(post, path = "/api/admin/experiments", request_body = ExperimentBody, security(("bearer" = [])),
    responses((status = 201, body = ExperimentView), (status = 403, body = crate::api::ErrorBody),
        (status = 422, body = crate::api::ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<ExperimentBody>,
) -> ApiResult<(StatusCode, Json<ExperimentView>)> {
    admins_only(&caller)?;
    let unit = match body.unit.as_deref() {
        None => Unit::User,
        Some(u) => Unit::parse(u).ok_or_else(|| ApiError::invalid("bad_unit", "unit is `user` or `build`"))?,
    };
    checked(&state, &body.variants)?;
    let new = NewExperiment {
        name: body.name.trim().to_string(),
        unit,
        variants: body.variants,
        primary: metric(body.primary.as_deref().unwrap_or("published"))?,
        guardrails: body.guardrails.iter().map(|g| metric(g)).collect::<ApiResult<_>>()?,
        horizon: body.horizon.unwrap_or(100),
    };
    let e = state.store.create_experiment(&new).await.map_err(invalid)?;
    Ok((StatusCode::CREATED, Json(view(&state, e).await?)))
}

/// Start a draft: new builds join it from now on (admins only; one runs at a time). Refused
/// (422) when a variant names what this server no longer has.
#[utoipa::path(post, path = "/api/admin/experiments/{id}/start", params(("id" = String, Path)),
    security(("bearer" = [])),
    responses((status = 200, body = ExperimentView), (status = 403, body = crate::api::ErrorBody),
        (status = 404, body = crate::api::ErrorBody), (status = 409, body = crate::api::ErrorBody),
        (status = 422, body = crate::api::ErrorBody)))]
pub async fn start(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<ExperimentView>> {
    admins_only(&caller)?;
    // wright.toml may have changed since the draft was made.
    checked(&state, &state.store.experiment(&id).await?.variants)?;
    let e = state.store.start_experiment(&id).await?;
    Ok(Json(view(&state, e).await?))
}

/// Stop the running experiment, recording the variant promoted if one is named (admins only).
#[utoipa::path(post, path = "/api/admin/experiments/{id}/stop", params(("id" = String, Path)),
    request_body = StopBody, security(("bearer" = [])),
    responses((status = 200, body = ExperimentView), (status = 403, body = crate::api::ErrorBody),
        (status = 404, body = crate::api::ErrorBody), (status = 409, body = crate::api::ErrorBody)))]
pub async fn stop(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<StopBody>,
) -> ApiResult<Json<ExperimentView>> {
    admins_only(&caller)?;
    let e = state.store.stop_experiment(&id, body.promote.as_deref()).await?;
    Ok(Json(view(&state, e).await?))
}
