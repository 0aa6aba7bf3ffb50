//! What model calls cost, per user and month: `GET /api/spend` (your own), `GET
//! /api/admin/spend` (everyone's), and the monthly caps an admin sets (`PUT
//! /api/admin/users/{name}/cap`, `PUT /api/admin/cap` for the default), the same as `wright
//! users cap`. Caps are kept in the store, so every server sees a change at once.

use crate::auth::Caller;
use crate::error::{ApiError, ApiJson, ApiResult};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use wright_store::{Day, SpendReport, StoreError, Tokens};

/// Your month: what your model calls cost so far, at this pace by the month's end, and your cap.
#[derive(Serialize, utoipa::ToSchema)]
pub struct MySpend {
    /// `YYYY-MM` (UTC).
    pub month: String,
    /// When the month's spend starts again from nothing.
    pub resets_at: String,
    pub cost_usd: f64,
    #[schema(value_type = Object)]
    pub tokens: Tokens,
    pub calls: u64,
    pub projected_usd: f64,
    /// Your cap (your own, else the default); none for no cap.
    pub cap_usd: Option<f64>,
    pub share_of_cap: Option<f64>,
    /// Past 80 % of the cap: words to show.
    pub warning: Option<String>,
    /// At or over the cap: builds, explanations and chat messages are refused until it resets.
    pub over_cap: bool,
    #[schema(value_type = Vec<Object>)]
    pub days: Vec<Day>,
}

/// Your spend this month and your cap.
#[utoipa::path(get, path = "/api/spend", security(("bearer" = [])),
    responses((status = 200, body = MySpend), (status = 401, body = crate::api::ErrorBody)))]
pub async fn mine(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<MySpend>> {
    let (me, month) = state.store.user_spending(chrono::Utc::now(), &caller.0.id).await?;
    Ok(Json(MySpend {
        warning: crate::spend::warning(&me, &month),
        over_cap: me.over_cap(),
        month: month.month,
        resets_at: month.resets_at,
        cost_usd: me.cost_usd,
        tokens: me.tokens,
        calls: me.calls,
        projected_usd: me.projected_usd,
        cap_usd: me.cap_usd,
        share_of_cap: me.share_of_cap,
        days: me.days,
    }))
}

fn admins_only(caller: &Caller) -> ApiResult<()> {
    if caller.is_admin() {
        Ok(())
    } else {
        Err(ApiError::forbidden("only admins may see or set other users' spending"))
    }
}

/// Every user's spend this month: per day, so far and projected, with their caps (admins only).
#[utoipa::path(get, path = "/api/admin/spend", security(("bearer" = [])),
    responses((status = 200, description = "the month's spend per user and day"), (status = 403, body = crate::api::ErrorBody)))]
pub async fn all(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<SpendReport>> {
    admins_only(&caller)?;
    Ok(Json(state.store.spending(chrono::Utc::now(), None).await?))
}

/// A monthly cap in US dollars; `null` removes it.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CapBody {
    pub cap_usd: Option<f64>,
}

/// The caps as they are after a change.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CapView {
    /// The user whose cap changed; none for the default.
    pub user: Option<String>,
    pub cap_usd: Option<f64>,
    pub default_cap_usd: Option<f64>,
}

fn valid(cap: Option<f64>) -> ApiResult<()> {
    wright_store::spend::check_cap(cap).map_err(|e| ApiError::invalid("bad_cap", e.to_string()))
}

/// Set or remove a user's monthly spending cap (admins only). Without a cap of their own a
/// user has the default.
#[utoipa::path(put, path = "/api/admin/users/{name}/cap", params(("name" = String, Path)), request_body = CapBody,
    security(("bearer" = [])),
    responses((status = 200, body = CapView), (status = 403, body = crate::api::ErrorBody),
        (status = 404, body = crate::api::ErrorBody), (status = 422, body = crate::api::ErrorBody)))]
pub async fn set_user_cap(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<CapBody>,
) -> ApiResult<Json<CapView>> {
    admins_only(&caller)?;
    valid(body.cap_usd)?;
    let user = state
        .store
        .users()
        .await?
        .into_iter()
        .find(|u| u.name == name)
        .ok_or_else(|| ApiError::not_found(format!("user {name}")))?;
    state.store.set_spend_cap(Some(&user.id), body.cap_usd).await.map_err(refused)?;
    let caps = state.store.spend_caps().await?;
    tracing::info!(user = %name, cap = ?body.cap_usd, by = %caller.0.name, "spending cap set");
    Ok(Json(CapView { cap_usd: caps.of(&user.id), default_cap_usd: caps.default_usd, user: Some(name) }))
}

/// Set or remove the default monthly spending cap of every user without one (admins only).
#[utoipa::path(put, path = "/api/admin/cap", request_body = CapBody, security(("bearer" = [])),
    responses((status = 200, body = CapView), (status = 403, body = crate::api::ErrorBody),
        (status = 422, body = crate::api::ErrorBody)))]
pub async fn set_default_cap(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CapBody>,
) -> ApiResult<Json<CapView>> {
    admins_only(&caller)?;
    valid(body.cap_usd)?;
    state.store.set_spend_cap(None, body.cap_usd).await.map_err(refused)?;
    tracing::info!(cap = ?body.cap_usd, by = %caller.0.name, "default spending cap set");
    Ok(Json(CapView { user: None, cap_usd: body.cap_usd, default_cap_usd: body.cap_usd }))
}

fn refused(e: StoreError) -> ApiError {
    match e {
        StoreError::Invalid(m) => ApiError::invalid("bad_cap", m),
        other => other.into(),
    }
}
