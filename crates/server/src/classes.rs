//! `/api/classes` and `/api/builds/{id}/share` (docs/classes.md): an admin makes classes and
//! names their teachers and members; a teacher reads their classes' members' builds, costs and
//! limits; a member shares a build of theirs with their classmates. Who may see which run is
//! decided in [`crate::access`], not here.

use crate::access::owned;
use crate::auth::Caller;
use crate::error::{ApiError, ApiJson, ApiResult};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use wright_events::api::{BuildView, RunId};
use wright_store::{Class, MemberSpend, Part, Role, User};

/// Recent builds shown per member in a class's view.
const RECENT: u32 = 5;

/// A class: its name and its people, by name. A member sees the class's name and teachers.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ClassView {
    pub name: String,
    pub teachers: Vec<String>,
    /// Left out for a member of the class: classmates see nothing of each other but what they share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub members: Option<Vec<String>>,
}

fn names(users: &[User]) -> Vec<String> {
    users.iter().map(|u| u.name.clone()).collect()
}

/// `class` as `caller` may see it; `None` when it is none of theirs.
fn view(caller: &Caller, class: &Class) -> Option<ClassView> {
    let me = &caller.0.id;
    let full = caller.is_admin() || teaches(caller, class);
    let member = class.members.iter().any(|u| u.id == *me);
    (full || member).then(|| ClassView {
        name: class.name.clone(),
        teachers: names(&class.teachers),
        members: full.then(|| names(&class.members)),
    })
}

fn teaches(caller: &Caller, class: &Class) -> bool {
    caller.0.role == Role::Teacher && class.teachers.iter().any(|u| u.id == caller.0.id)
}

fn admins_only(caller: &Caller) -> ApiResult<()> {
    if caller.is_admin() {
        Ok(())
    } else {
        Err(ApiError::forbidden("only an admin makes classes and changes who is in them"))
    }
}

/// The classes you are in: every class for an admin, those you teach or belong to otherwise.
#[utoipa::path(get, path = "/api/classes", security(("bearer" = [])),
    responses((status = 200, body = [ClassView]), (status = 401, body = crate::api::ErrorBody)))]
pub async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Vec<ClassView>>> {
    Ok(Json(state.store.classes().await?.iter().filter_map(|c| view(&caller, c)).collect()))
}

/// `POST /api/classes`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewClass {
    /// 1 to 64 letters, digits, `-`, `_` or `.`.
    pub name: String,
    /// Users with the teacher role (`wright users add NAME --teacher`), by name.
    #[serde(default)]
    pub teachers: Vec<String>,
}

/// Make a class (admins only).
#[utoipa::path(post, path = "/api/classes", request_body = NewClass, security(("bearer" = [])),
    responses((status = 201, body = ClassView), (status = 403, body = crate::api::ErrorBody),
        (status = 409, body = crate::api::ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<NewClass>,
) -> ApiResult<(StatusCode, Json<ClassView>)> {
    admins_only(&caller)?;
    let teachers = wright_store::classes::people_named(&state.store.users().await?, &body.teachers, true)?;
    let class = state.store.create_class(&body.name, &teachers).await?;
    let view = view(&caller, &class).ok_or_else(|| ApiError::internal("the new class"))?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// `POST /api/classes/{name}/members`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MembersChange {
    /// Users to add, by name.
    #[serde(default)]
    pub add: Vec<String>,
    /// Members to remove, by name: they stop seeing the class's shared builds at once.
    #[serde(default)]
    pub remove: Vec<String>,
    /// Teachers to add, by name.
    #[serde(default)]
    pub add_teachers: Vec<String>,
}

/// Add members (and teachers) to a class and remove members (admins only); the class after.
#[utoipa::path(post, path = "/api/classes/{name}/members", params(("name" = String, Path)), request_body = MembersChange,
    security(("bearer" = [])),
    responses((status = 200, body = ClassView), (status = 403, body = crate::api::ErrorBody),
        (status = 404, body = crate::api::ErrorBody), (status = 409, body = crate::api::ErrorBody)))]
pub async fn members(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
    ApiJson(body): ApiJson<MembersChange>,
) -> ApiResult<Json<ClassView>> {
    admins_only(&caller)?;
    let class = change(&state, &name, &body.add, &body.add_teachers, &body.remove).await?;
    Ok(Json(view(&caller, &class).ok_or_else(|| ApiError::internal("the class"))?))
}

/// Change class `name`'s people, each named by user name.
async fn change(
    state: &AppState,
    name: &str,
    add: &[String],
    add_teachers: &[String],
    remove: &[String],
) -> ApiResult<Class> {
    let users = state.store.users().await?;
    let mut people: Vec<(String, Part)> =
        wright_store::classes::people_named(&users, add, false)?.into_iter().map(|id| (id, Part::Member)).collect();
    people.extend(
        wright_store::classes::people_named(&users, add_teachers, true)?.into_iter().map(|id| (id, Part::Teacher)),
    );
    let remove = wright_store::classes::people_named(&users, remove, false)?;
    Ok(state.store.change_class(name, &people, &remove).await?)
}

/// One member of a class, as its teacher sees them.
#[derive(Serialize, utoipa::ToSchema)]
pub struct MemberView {
    pub name: String,
    /// Their runs this month (UTC), of every kind.
    pub runs: u64,
    /// What their model calls cost this month: builds, task runs, explanations, chat and
    /// assistant turns (docs/spend.md), the same figures their monthly cap is checked against.
    pub cost_usd: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The month so far, projected to its end; their monthly cap, if any.
    pub projected_usd: f64,
    pub cap_usd: Option<f64>,
    /// Builds queued or running now, and queued this past hour, against the server's limits.
    pub active_builds: u64,
    pub max_concurrent_builds: u32,
    /// Their limit on each model-backed route and how much of it the past hour used, as
    /// `GET /api/limits` tells them.
    pub limits: crate::limits_api::LimitsView,
    /// Their newest builds, with outcome.
    pub recent: Vec<BuildView>,
}

/// A class as its teacher (or an admin) sees it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ClassReport {
    pub name: String,
    pub teachers: Vec<String>,
    /// The start of the month the costs are counted from.
    pub since: String,
    pub cost_usd: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub members: Vec<MemberView>,
}

/// A class's members with their recent builds, costs this month and limits: for its teachers
/// and admins; anyone else is told it is not found.
#[utoipa::path(get, path = "/api/classes/{name}", params(("name" = String, Path)), security(("bearer" = [])),
    responses((status = 200, body = ClassReport), (status = 404, body = crate::api::ErrorBody)))]
pub async fn report(
    State(state): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> ApiResult<Json<ClassReport>> {
    let class = state.store.class(&name).await?;
    if !(caller.is_admin() || teaches(&caller, &class)) {
        return Err(ApiError::not_found(format!("class `{name}`")));
    }
    let now = chrono::Utc::now();
    let since = wright_store::spend::Month::of(now).start;
    let spend = state.store.class_spend(&class.id, &since).await?;
    let origin = state.cfg.preview_origin();
    let mut members = Vec::with_capacity(spend.len());
    for MemberSpend { user, runs, .. } in spend {
        let recent = state.store.builds_of(Some(&user.id), RECENT).await?;
        // Every model call they pay for, not only their builds' (explanations, chats…).
        let (month, _) = state.store.user_spending(now, &user.id).await?;
        members.push(MemberView {
            runs,
            cost_usd: month.cost_usd,
            input_tokens: month.tokens.input_tokens,
            output_tokens: month.tokens.output_tokens,
            projected_usd: month.projected_usd,
            cap_usd: month.cap_usd,
            active_builds: state.store.active_builds(&user.id).await?,
            max_concurrent_builds: state.cfg.max_concurrent_builds,
            limits: crate::limits_api::limits_of(&state, &user.id).await?,
            recent: recent.into_iter().map(|b| crate::api::view_of(b, &origin, false)).collect(),
            name: user.name,
        });
    }
    Ok(Json(ClassReport {
        name: class.name,
        teachers: names(&class.teachers),
        since,
        cost_usd: members.iter().map(|m| m.cost_usd).sum(),
        input_tokens: members.iter().map(|m| m.input_tokens).sum(),
        output_tokens: members.iter().map(|m| m.output_tokens).sum(),
        members,
    }))
}

/// `POST /api/builds/{id}/share`.
#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShareBody {
    /// `true` to let your classmates follow the build and copy it; `false` to stop.
    pub shared: bool,
}

/// What sharing did.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ShareView {
    pub id: RunId,
    pub shared: bool,
}

/// Share your build with your classmates (read-only: they may follow it and make a copy of it
/// of their own), or stop sharing it.
#[utoipa::path(post, path = "/api/builds/{id}/share", params(("id" = String, Path)), request_body = ShareBody,
    security(("bearer" = [])),
    responses((status = 200, body = ShareView), (status = 403, body = crate::api::ErrorBody),
        (status = 404, body = crate::api::ErrorBody)))]
pub async fn share(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ShareBody>,
) -> ApiResult<Json<ShareView>> {
    let b = owned(&state, &caller, &id).await?;
    state.store.set_shared(&b.start.id, body.shared).await?;
    Ok(Json(ShareView { id: b.start.id, shared: body.shared }))
}
