//! The API's request and response bodies, and the error shape of every failed request: what
//! the handlers, the workers and the OpenAPI document share. A leaf of the module graph.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use wright_store::BuildRecord;

/// `POST /api/builds`. Unknown fields are refused (422), so a typo never silently does nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildBody {
    /// What to build, in plain words (10 to 2,000 characters unless configured otherwise).
    pub prompt: String,
    /// `static`, `interactive`, `fullstack` or `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Narration language: `en` or `pt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// One of the models the server allows (`GET /api/models`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Extra acceptance commands run in the build's sandbox; each must exit 0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
    /// Keep working on one of your earlier builds (its id), in its folder and conversation.
    #[serde(default, rename = "continue", skip_serializing_if = "Option::is_none")]
    pub r#continue: Option<String>,
}

/// `202` answer to `POST /api/builds`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Created {
    pub id: String,
    /// `queued`, or where the same earlier request stands.
    pub status: String,
    /// Where its events stream (SSE, or JSON lines with `Accept: application/x-ndjson`).
    pub events_url: String,
    /// The same request was already there (same `Idempotency-Key`, or identical and still active).
    pub deduplicated: bool,
}

/// One build, as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct BuildView {
    pub id: String,
    /// `build`, `task` (a task run) or `chat`.
    pub kind: String,
    pub prompt: String,
    /// The template of a build; for other kinds of run, the kind.
    pub template: String,
    pub lang: String,
    pub model: String,
    /// `queued`, `running`, `published` or `failed`.
    pub status: String,
    /// Why a failed build stopped (`verification_failed`, `cancelled`, `server_stopped`, …).
    pub end_reason: Option<String>,
    /// Which run of the build this is: 1, or more once it ran again after an interruption.
    pub attempt: u32,
    pub parent_id: Option<String>,
    pub owner: Option<String>,
    pub fix_attempts: u32,
    pub turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub duration_ms: Option<u64>,
    pub files: Vec<String>,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// Builds ahead of it while queued.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_position: Option<u64>,
    pub events_url: String,
    /// The project on its own preview origin (a full-stack build's app runs there on demand).
    pub preview_url: Option<String>,
    /// What was tried (Markdown); in `GET /api/builds/{id}` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
}

impl BuildView {
    pub fn of(b: BuildRecord, preview_origin: &str, with_report: bool) -> Self {
        let template = b.shown_template().to_string();
        let kind = b.start.kind.as_str().to_string();
        let id = b.start.id;
        Self {
            kind,
            events_url: format!("/api/builds/{id}/events"),
            preview_url: b.preview_key.as_ref().map(|k| url_for(preview_origin, &id, k)),
            prompt: b.start.prompt,
            template,
            lang: b.start.lang,
            model: b.start.model,
            status: b.status.as_str().to_string(),
            end_reason: b.end_reason.map(|r| r.as_str().to_string()),
            attempt: b.attempt,
            parent_id: b.start.parent_id,
            owner: b.owner,
            fix_attempts: b.fix_attempts,
            turns: b.turns,
            input_tokens: b.tokens.input_tokens,
            output_tokens: b.tokens.output_tokens,
            cost_usd: b.tokens.cost_usd,
            duration_ms: b.duration_ms,
            files: b.files,
            started_at: b.start.started_at,
            finished_at: b.finished_at,
            queue_position: None,
            report: if with_report { b.report } else { None },
            id,
        }
    }
}

/// The preview address of a build on the host-per-build scheme.
pub fn url_for(base: &str, id: &str, key: &str) -> String {
    let (scheme, rest) = base.split_once("://").unwrap_or(("http", base));
    format!("{scheme}://{id}-{key}.{}/", rest.trim_end_matches('/'))
}

/// A file of a build.
#[derive(Debug, Serialize, ToSchema)]
pub struct FileEntry {
    pub path: String,
    pub bytes: u64,
}

/// `POST /api/builds/{id}/cancel`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Cancelled {
    pub id: String,
    /// `cancelled` (it was queued), `cancelling` (it was running; `complete` follows) or `ended`.
    pub status: String,
}

/// Who is calling.
#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    pub id: String,
    pub name: String,
    pub role: String,
}

/// Models a request may name.
#[derive(Debug, Serialize, ToSchema)]
pub struct Models {
    pub default: String,
    pub allowed: Vec<String>,
}

/// The error shape of every failed request.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorInner,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorInner {
    /// Stable, for programs: `unauthorized`, `not_found`, `rate_limited`, `prompt_length`, …
    pub code: String,
    /// For people.
    pub message: String,
}
