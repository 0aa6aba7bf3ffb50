//! `GET /api/limits`: the caller's limit on each model-backed route, how much of it the past
//! hour used, what is left and when the oldest use leaves the hour, so a page shows a limit
//! before it bites ("18 of 20 questions left this hour"). A read: asking takes nothing.

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::limits::Route;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use wright_store::Usage;
use wright_store::limits::HOUR;

/// One route's limit for the caller.
#[derive(Debug, Serialize, ToSchema)]
pub struct RouteUsage {
    /// The most requests an hour (0: the route is closed).
    pub limit: u32,
    /// Requests in the past hour.
    pub used: u64,
    /// Requests left now.
    pub remaining: u64,
    /// Seconds until the oldest of them leaves the hour (one more request fits); absent when
    /// none was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frees_in_secs: Option<u64>,
    /// When that is (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frees_at: Option<String>,
}

/// The caller's limits, by route: `builds`, `tasks`, `explanations`, `chat_messages`,
/// `assistant_turns`.
#[derive(Debug, Serialize, ToSchema)]
pub struct LimitsView {
    /// The window every limit counts in, in seconds (an hour).
    pub window_secs: u64,
    pub routes: BTreeMap<String, RouteUsage>,
}

fn view(limit: u32, u: Usage) -> RouteUsage {
    let frees_in_secs = u.frees_in.map(|d| d.as_secs().max(1));
    let frees_at = frees_in_secs.map(|s| {
        let at = chrono::Utc::now() + chrono::Duration::seconds(i64::try_from(s).unwrap_or(i64::MAX / 1000));
        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    });
    RouteUsage { limit, used: u.count, remaining: u64::from(limit).saturating_sub(u.count), frees_in_secs, frees_at }
}

/// Your limit on each model-backed route, and how much of it the past hour used.
#[utoipa::path(get, path = "/api/limits", security(("bearer" = [])),
    responses((status = 200, body = LimitsView), (status = 401, body = crate::api::ErrorBody)))]
pub async fn limits(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<LimitsView>> {
    Ok(Json(limits_of(&state, &caller.0.id).await?))
}

/// `user`'s limits, by route, as [`limits`] answers them (a teacher's class view shows them too).
pub(crate) async fn limits_of(state: &AppState, user: &str) -> ApiResult<LimitsView> {
    let l = &state.cfg.limits;
    let counted: Vec<Route> = Route::ALL.into_iter().filter(|r| r.run_kind().is_none()).collect();
    let quotas: Vec<_> = counted.iter().map(|r| r.quota(l, user)).collect();
    let used = state.store.quota_usage(&quotas).await?;
    let mut routes: BTreeMap<String, RouteUsage> =
        counted.iter().zip(used).map(|(r, u)| (r.name().to_string(), view(r.max(l), u))).collect();
    for r in Route::ALL {
        if let Some(kind) = r.run_kind() {
            let u = state.store.runs_used(user, kind, HOUR).await?;
            routes.insert(r.name().to_string(), view(r.max(l), u));
        }
    }
    Ok(LimitsView { window_secs: HOUR.as_secs(), routes })
}
