//! The store's records read back from a row of either backend. SQLite and PostgreSQL keep the
//! same columns (`INTEGER`/`BIGINT` numbers, lists as JSON text, a flag such as `success` as
//! 0 or 1), so one decoder per record serves both through [`Cols`].

use crate::note::{Note, NoteStatus};
use crate::types::*;
use crate::{Result, StoreError};
use sqlx::Row;
use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;

/// A row's columns as the store's records need them.
pub(crate) trait Cols {
    fn text(&self, col: &str) -> Result<String>;
    fn opt_text(&self, col: &str) -> Result<Option<String>>;
    fn int(&self, col: &str) -> Result<i64>;
    fn opt_int(&self, col: &str) -> Result<Option<i64>>;
    fn real(&self, col: &str) -> Result<f64>;
    fn opt_real(&self, col: &str) -> Result<Option<f64>>;
    /// A flag: SQLite's 0/1 `INTEGER`, PostgreSQL's `BOOLEAN`.
    fn flag(&self, col: &str) -> Result<bool>;
}

macro_rules! cols {
    ($row:ty) => {
        impl Cols for $row {
            fn text(&self, col: &str) -> Result<String> {
                Ok(self.try_get(col)?)
            }
            fn opt_text(&self, col: &str) -> Result<Option<String>> {
                Ok(self.try_get(col)?)
            }
            fn int(&self, col: &str) -> Result<i64> {
                Ok(self.try_get(col)?)
            }
            fn opt_int(&self, col: &str) -> Result<Option<i64>> {
                Ok(self.try_get(col)?)
            }
            fn real(&self, col: &str) -> Result<f64> {
                Ok(self.try_get(col)?)
            }
            fn opt_real(&self, col: &str) -> Result<Option<f64>> {
                Ok(self.try_get(col)?)
            }
            fn flag(&self, col: &str) -> Result<bool> {
                Ok(self.try_get(col)?)
            }
        }
    };
}

cols!(SqliteRow);
cols!(PgRow);

/// Column `col` as a build's template: `None` for the empty text other kinds of run store.
/// Read as people type it, since rows written before the template was typed hold the request's
/// own spelling (`Full-Stack`), which the server had accepted; anything else is `Corrupt`.
pub(crate) fn template(r: &impl Cols, col: &str) -> Result<Option<Template>> {
    let t = r.text(col)?;
    if t.is_empty() {
        return Ok(None);
    }
    Template::parse_loose(&t).map(Some).ok_or_else(|| StoreError::Corrupt(format!("template `{t}`")))
}

/// Column `col` as a narration language, read as leniently as [`template`] (`pt-BR`).
pub(crate) fn lang(r: &impl Cols, col: &str) -> Result<Lang> {
    let l = r.text(col)?;
    Lang::parse_loose(&l).ok_or_else(|| StoreError::Corrupt(format!("language `{l}`")))
}

/// The text a template is stored as: its wire name, empty for none.
pub(crate) fn template_text(t: Option<Template>) -> &'static str {
    t.map_or("", Template::as_str)
}

/// A stored count or size as the records' unsigned number (negatives, never stored, as 0).
pub(crate) fn u(v: i64) -> u64 {
    v.max(0) as u64
}

/// Column `col` as such a number.
pub(crate) fn n(r: &impl Cols, col: &str) -> Result<u64> {
    Ok(u(r.int(col)?))
}

/// As [`n`], for an aggregate that is `NULL` over no rows.
pub(crate) fn n_or_0(r: &impl Cols, col: &str) -> Result<u64> {
    Ok(u(r.opt_int(col)?.unwrap_or(0)))
}

/// Column `col` as a `u32` field (saturating).
pub(crate) fn n32(r: &impl Cols, col: &str) -> Result<u32> {
    Ok(u32::try_from(n(r, col)?).unwrap_or(u32::MAX))
}

pub(crate) fn json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Invalid(e.to_string()))
}

pub(crate) fn unjson<T: serde::de::DeserializeOwned>(s: &str, what: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

/// Escape `%`, `_` and `\` for a `LIKE … ESCAPE '\'` prefix match.
pub(crate) fn like_prefix(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 1);
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// Nearest-rank percentile of sorted values.
pub(crate) fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.saturating_sub(1).min(sorted.len() - 1)).copied()
}

pub(crate) fn tokens(r: &impl Cols) -> Result<Tokens> {
    Ok(Tokens {
        input_tokens: n(r, "input_tokens")?,
        output_tokens: n(r, "output_tokens")?,
        cached_tokens: n(r, "cached_tokens")?,
        cost_usd: r.real("cost_usd")?,
    })
}

pub(crate) fn build_row(r: &impl Cols) -> Result<BuildRecord> {
    let status = r.text("status")?;
    let kind = r.text("kind")?;
    Ok(BuildRecord {
        start: NewBuild {
            id: RunId(r.text("id")?),
            kind: wright_events::RunKind::parse(&kind)
                .ok_or_else(|| StoreError::Corrupt(format!("run kind `{kind}`")))?,
            parent_id: r.opt_text("parent_id")?.map(RunId),
            prompt: r.text("prompt")?,
            template: template(r, "template")?,
            lang: lang(r, "lang")?,
            provider: r.text("provider")?,
            model: r.text("model")?,
            workspace: r.text("workspace")?,
            started_at: r.text("started_at")?,
        },
        status: RunStatus::parse(&status).ok_or_else(|| StoreError::Corrupt(format!("build status `{status}`")))?,
        end_reason: r
            .opt_text("end_reason")?
            .map(|e| EndReason::parse(&e).ok_or_else(|| StoreError::Corrupt(format!("end reason `{e}`"))))
            .transpose()?,
        fix_attempts: n32(r, "fix_attempts")?,
        turns: n32(r, "turns")?,
        tokens: tokens(r)?,
        duration_ms: r.opt_int("duration_ms")?.map(u),
        files: unjson(&r.text("files")?, "build files")?,
        report: r.opt_text("report")?,
        finished_at: r.opt_text("finished_at")?,
        owner: r.opt_text("owner")?,
        preview_key: r.opt_text("preview_key")?,
        job: r.opt_text("request")?.map(|text| QueuedJob::decode(&text)),
        attempt: n32(r, "attempt")?,
    })
}

pub(crate) fn note_row(r: &impl Cols) -> Result<Note> {
    let status = r.text("status")?;
    let list = |col: &str| -> Result<Vec<String>> { unjson(&r.text(col)?, col) };
    Ok(Note {
        id: r.text("id")?,
        trigger: r.text("trigger")?,
        trigger_type: r.text("trigger_type")?,
        lesson: r.text("lesson")?,
        libraries: list("libraries")?,
        error_patterns: list("error_patterns")?,
        tags: list("tags")?,
        help_count: n32(r, "help_count")?,
        fail_count: n32(r, "fail_count")?,
        confidence: r.real("confidence")?,
        status: NoteStatus::parse(&status).ok_or_else(|| StoreError::Corrupt(format!("note status `{status}`")))?,
        source_build: r.opt_text("source_build")?,
        source_error: r.opt_text("source_error")?,
        source_fix: r.opt_text("source_fix")?,
        created_at: r.text("created_at")?,
        updated_at: r.text("updated_at")?,
    })
}

pub(crate) fn turn_row(r: &impl Cols) -> Result<Turn> {
    Ok(Turn {
        build_id: r.text("build_id")?,
        idx: n32(r, "idx")?,
        phase: r.text("phase")?,
        role: r.text("role")?,
        message: unjson(&r.text("message")?, "turn")?,
        ts: r.text("ts")?,
        tokens: Tokens {
            input_tokens: n(r, "input_tokens")?,
            output_tokens: n(r, "output_tokens")?,
            cached_tokens: n(r, "cached_tokens")?,
            cost_usd: 0.0,
        },
    })
}

pub(crate) fn attempt_row(r: &impl Cols) -> Result<Attempt> {
    Ok(Attempt {
        id: r.text("id")?,
        build_id: r.text("build_id")?,
        template: template(r, "template")?
            .ok_or_else(|| StoreError::Corrupt("an attempt without a template".into()))?,
        success: r.int("success")? != 0,
        iterations: n32(r, "iterations")?,
        duration_ms: n(r, "duration_ms")?,
        notes_applied: unjson(&r.text("notes_applied")?, "attempt notes")?,
        errors: unjson(&r.text("errors")?, "attempt errors")?,
        model: r.text("model")?,
        tokens: tokens(r)?,
        created_at: r.text("created_at")?,
    })
}

pub(crate) fn usage_row(r: &impl Cols) -> Result<UsageEntry> {
    Ok(UsageEntry {
        build_id: r.text("build_id")?,
        phase: r.text("phase")?,
        provider: r.text("provider")?,
        model: r.text("model")?,
        tokens: tokens(r)?,
        ts: r.text("ts")?,
    })
}

pub(crate) fn user_row(r: &impl Cols) -> Result<User> {
    let role = r.text("role")?;
    Ok(User {
        id: r.text("id")?,
        name: r.text("name")?,
        role: Role::parse(&role).ok_or_else(|| StoreError::Corrupt(format!("user role `{role}`")))?,
        created_at: r.text("created_at")?,
    })
}

pub(crate) fn task_row(r: &impl Cols) -> Result<TaskRecord> {
    let status = r.text("status")?;
    Ok(TaskRecord {
        run_id: r.text("run_id")?,
        task_id: r.text("task_id")?,
        position: n32(r, "position")?,
        kind: r.text("kind")?,
        status: TaskStatus::parse(&status).ok_or_else(|| StoreError::Corrupt(format!("task status `{status}`")))?,
        message: r.text("message")?,
        result: serde_json::from_str(&r.text("result")?)
            .map_err(|e| StoreError::Corrupt(format!("task result: {e}")))?,
        task_hash: r.text("task_hash")?,
        started_at: r.text("started_at")?,
        finished_at: r.text("finished_at")?,
    })
}

pub(crate) fn lent_row(r: &impl Cols) -> Result<LentProject> {
    Ok(LentProject {
        run_id: r.text("run_id")?,
        path: r.text("path")?,
        uid: n(r, "uid")? as u32,
        gid: n(r, "gid")? as u32,
        pid: n(r, "pid")? as u32,
        pid_start: r.text("pid_start")?,
        lent_at: r.text("lent_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::{like_prefix, percentile};

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=20).collect();
        assert_eq!(percentile(&v, 50.0), Some(10));
        assert_eq!(percentile(&v, 95.0), Some(19));
        assert_eq!(percentile(&[7], 95.0), Some(7));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn like_patterns_escape_their_wildcards() {
        assert_eq!(like_prefix("b-1"), "b-1%");
        assert_eq!(like_prefix("a%b_c\\"), "a\\%b\\_c\\\\%");
    }
}
