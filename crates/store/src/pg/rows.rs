//! PostgreSQL rows into the store's records: the same records the SQLite store reads back,
//! from the same columns (`BIGINT` for SQLite's `INTEGER`, a flag such as `success` kept as
//! 0 or 1).

use crate::note::{Note, NoteStatus};
use crate::sqlite::{u, unjson};
use crate::types::*;
use crate::{Result, StoreError};
use sqlx::Row;
use sqlx::postgres::PgRow;

/// A `BIGINT` count or size as the records' unsigned number (negatives, never stored, as 0).
pub(crate) fn n(r: &PgRow, col: &str) -> Result<u64> {
    Ok(u(r.try_get(col)?))
}

/// As [`n`], for an aggregate that is `NULL` over no rows.
pub(crate) fn n_or_0(r: &PgRow, col: &str) -> Result<u64> {
    Ok(u(r.try_get::<Option<i64>, _>(col)?.unwrap_or(0)))
}

/// A `BIGINT` as a `u32` field (saturating).
fn n32(r: &PgRow, col: &str) -> Result<u32> {
    Ok(u32::try_from(n(r, col)?).unwrap_or(u32::MAX))
}

pub(crate) fn tokens(r: &PgRow) -> Result<Tokens> {
    Ok(Tokens {
        input_tokens: n(r, "input_tokens")?,
        output_tokens: n(r, "output_tokens")?,
        cached_tokens: n(r, "cached_tokens")?,
        cost_usd: r.try_get("cost_usd")?,
    })
}

pub(crate) fn build_row(r: &PgRow) -> Result<BuildRecord> {
    let status: String = r.try_get("status")?;
    let files: String = r.try_get("files")?;
    Ok(BuildRecord {
        start: NewBuild {
            id: r.try_get("id")?,
            kind: {
                let kind: String = r.try_get("kind")?;
                wright_events::RunKind::parse(&kind).ok_or_else(|| StoreError::Corrupt(format!("run kind `{kind}`")))?
            },
            parent_id: r.try_get("parent_id")?,
            prompt: r.try_get("prompt")?,
            template: r.try_get("template")?,
            lang: r.try_get("lang")?,
            provider: r.try_get("provider")?,
            model: r.try_get("model")?,
            workspace: r.try_get("workspace")?,
            started_at: r.try_get("started_at")?,
        },
        status: RunStatus::parse(&status).ok_or_else(|| StoreError::Corrupt(format!("build status `{status}`")))?,
        end_reason: r
            .try_get::<Option<String>, _>("end_reason")?
            .map(|e| EndReason::parse(&e).ok_or_else(|| StoreError::Corrupt(format!("end reason `{e}`"))))
            .transpose()?,
        fix_attempts: n32(r, "fix_attempts")?,
        turns: n32(r, "turns")?,
        tokens: tokens(r)?,
        duration_ms: r.try_get::<Option<i64>, _>("duration_ms")?.map(u),
        files: unjson(&files, "build files")?,
        report: r.try_get("report")?,
        finished_at: r.try_get("finished_at")?,
        owner: r.try_get("owner")?,
        preview_key: r.try_get("preview_key")?,
        request: r.try_get("request")?,
        attempt: n32(r, "attempt")?,
    })
}

pub(crate) fn note_row(r: &PgRow) -> Result<Note> {
    let status: String = r.try_get("status")?;
    let list = |col: &str| -> Result<Vec<String>> {
        let s: String = r.try_get(col)?;
        unjson(&s, col)
    };
    Ok(Note {
        id: r.try_get("id")?,
        trigger: r.try_get("trigger")?,
        trigger_type: r.try_get("trigger_type")?,
        lesson: r.try_get("lesson")?,
        libraries: list("libraries")?,
        error_patterns: list("error_patterns")?,
        tags: list("tags")?,
        help_count: n32(r, "help_count")?,
        fail_count: n32(r, "fail_count")?,
        confidence: r.try_get("confidence")?,
        status: NoteStatus::parse(&status).ok_or_else(|| StoreError::Corrupt(format!("note status `{status}`")))?,
        source_build: r.try_get("source_build")?,
        source_error: r.try_get("source_error")?,
        source_fix: r.try_get("source_fix")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

pub(crate) fn turn_row(r: &PgRow) -> Result<Turn> {
    let message: String = r.try_get("message")?;
    Ok(Turn {
        build_id: r.try_get("build_id")?,
        idx: n32(r, "idx")?,
        phase: r.try_get("phase")?,
        role: r.try_get("role")?,
        message: unjson(&message, "turn")?,
        ts: r.try_get("ts")?,
        tokens: Tokens {
            input_tokens: n(r, "input_tokens")?,
            output_tokens: n(r, "output_tokens")?,
            cached_tokens: n(r, "cached_tokens")?,
            cost_usd: 0.0,
        },
    })
}

pub(crate) fn attempt_row(r: &PgRow) -> Result<Attempt> {
    let notes: String = r.try_get("notes_applied")?;
    let errors: String = r.try_get("errors")?;
    Ok(Attempt {
        id: r.try_get("id")?,
        build_id: r.try_get("build_id")?,
        template: r.try_get("template")?,
        success: r.try_get::<i64, _>("success")? != 0,
        iterations: n32(r, "iterations")?,
        duration_ms: n(r, "duration_ms")?,
        notes_applied: unjson(&notes, "attempt notes")?,
        errors: unjson(&errors, "attempt errors")?,
        model: r.try_get("model")?,
        tokens: tokens(r)?,
        created_at: r.try_get("created_at")?,
    })
}

pub(crate) fn usage_row(r: &PgRow) -> Result<UsageEntry> {
    Ok(UsageEntry {
        build_id: r.try_get("build_id")?,
        phase: r.try_get("phase")?,
        provider: r.try_get("provider")?,
        model: r.try_get("model")?,
        tokens: tokens(r)?,
        ts: r.try_get("ts")?,
    })
}

pub(crate) fn user_row(r: &PgRow) -> Result<User> {
    let role: String = r.try_get("role")?;
    Ok(User {
        id: r.try_get("id")?,
        name: r.try_get("name")?,
        role: Role::parse(&role).ok_or_else(|| StoreError::Corrupt(format!("user role `{role}`")))?,
        created_at: r.try_get("created_at")?,
    })
}

pub(crate) fn task_row(r: &PgRow) -> Result<TaskRecord> {
    let result: String = r.try_get("result")?;
    let status: String = r.try_get("status")?;
    Ok(TaskRecord {
        run_id: r.try_get("run_id")?,
        task_id: r.try_get("task_id")?,
        position: n32(r, "position")?,
        kind: r.try_get("kind")?,
        status: TaskStatus::parse(&status).ok_or_else(|| StoreError::Corrupt(format!("task status `{status}`")))?,
        message: r.try_get("message")?,
        result: serde_json::from_str(&result).map_err(|e| StoreError::Corrupt(format!("task result: {e}")))?,
        task_hash: r.try_get("task_hash")?,
        started_at: r.try_get("started_at")?,
        finished_at: r.try_get("finished_at")?,
    })
}

pub(crate) fn lent_row(r: &PgRow) -> Result<LentProject> {
    Ok(LentProject {
        run_id: r.try_get("run_id")?,
        path: r.try_get("path")?,
        uid: n(r, "uid")? as u32,
        gid: n(r, "gid")? as u32,
        pid: n(r, "pid")? as u32,
        pid_start: r.try_get("pid_start")?,
        lent_at: r.try_get("lent_at")?,
    })
}
