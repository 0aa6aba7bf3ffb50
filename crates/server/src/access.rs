//! Who may see a run, and who may change it: the one place the rules are written. Every route
//! and MCP tool that names a run by its id comes through [`access`] (by [`visible`] to read it,
//! [`owned`] to change it), so the rules cannot drift apart.
//!
//! - Its **owner**, and an **admin**, may do anything with it.
//! - A **teacher** may read (never change) the runs of the members of the classes they teach.
//! - A **classmate** (a member of a class with the owner) may read a build its owner shared,
//!   and make a copy of it to keep working on ([`crate::builds::create`] with `continue`).
//! - Nobody else learns that it exists: it is "not found", as for an id never given out.
//! - A chat turn is read through its conversation (`/api/chat`), by its owner only: not here,
//!   not even by an admin.

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::http::StatusCode;
use wright_store::{BuildRecord, Role};

/// What a caller may do with a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read and change it: its owner, or an admin.
    Own,
    /// Follow it, read its files, copy it; not change it: a teacher of its owner, or a
    /// classmate of the owner who shared it.
    Read,
}

/// What `caller` may do with run `b`, if anything.
pub(crate) async fn access(state: &AppState, caller: &Caller, b: &BuildRecord) -> ApiResult<Option<Access>> {
    if b.start.kind == wright_events::RunKind::Chat {
        return Ok(None);
    }
    let me = &caller.0;
    if me.role == Role::Admin || b.owner.as_deref() == Some(me.id.as_str()) {
        return Ok(Some(Access::Own));
    }
    let Some(owner) = b.owner.as_deref() else { return Ok(None) };
    let relation = state.store.relation(&me.id, owner).await?;
    if relation.teaches && me.role == Role::Teacher {
        return Ok(Some(Access::Read));
    }
    if relation.classmates && state.store.shared(&b.start.id).await?.is_some() {
        return Ok(Some(Access::Read));
    }
    Ok(None)
}

/// Run `id` and what the caller may do with it; "not found" when they may do nothing (its id
/// says nothing about whether it exists).
pub(crate) async fn reach(state: &AppState, caller: &Caller, id: &str) -> ApiResult<(BuildRecord, Access)> {
    let not_found = || ApiError::not_found(format!("build {id}"));
    let b = state.store.build(id).await.map_err(|e| match e {
        wright_store::StoreError::NotFound(_) => not_found(),
        e => e.into(),
    })?;
    match access(state, caller, &b).await? {
        Some(a) => Ok((b, a)),
        None => Err(not_found()),
    }
}

/// Run `id`, if the caller may read it.
pub(crate) async fn visible(state: &AppState, caller: &Caller, id: &str) -> ApiResult<BuildRecord> {
    Ok(reach(state, caller, id).await?.0)
}

/// Run `id`, if the caller may change it (cancel it, share it, work on in its folder): someone
/// who may only read it is told so (`403 read_only`), anyone else "not found".
pub(crate) async fn owned(state: &AppState, caller: &Caller, id: &str) -> ApiResult<BuildRecord> {
    match reach(state, caller, id).await? {
        (b, Access::Own) => Ok(b),
        (_, Access::Read) => Err(read_only(id)),
    }
}

/// The refusal of a change to a run the caller may only read.
pub(crate) fn read_only(id: &str) -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "read_only",
        format!("build {id} is someone else's: you may follow it and make a copy of it, not change it"),
    )
}
