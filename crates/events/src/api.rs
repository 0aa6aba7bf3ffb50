//! The service's request and response bodies (`wright serve`'s HTTP API), defined once for the
//! server, its clients (the CLI, a future MCP server) and the OpenAPI document, which is
//! generated from these types. Ids travel as [`RunId`] and [`UserId`]; the words of a run's
//! life as the enums of [`crate::run`].

use crate::{EndReason, RunKind, RunStatus};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A run's id (`20261124-151203-9c1e`): a build, a task run or a chat turn.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(transparent)]
#[schema(value_type = String)]
pub struct RunId(pub String);

/// A user's id (`u-3fa2c1d09e4b`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(transparent)]
#[schema(value_type = String)]
pub struct UserId(pub String);

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl RunId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A run id reads as the text it is wherever text is asked for (`&run.id` for a `&str`), so
/// records carry the type without every caller unwrapping it.
impl std::ops::Deref for RunId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<String> for RunId {
    fn from(id: String) -> Self {
        RunId(id)
    }
}

impl From<&str> for RunId {
    fn from(id: &str) -> Self {
        RunId(id.to_string())
    }
}

impl PartialEq<str> for RunId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for RunId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for RunId {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl std::fmt::Display for UserId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

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
    /// Put an in-app assistant in the app's preview: a chat button whose assistant reads and
    /// operates the page, through an embed key bound to the build's preview origin.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub assistant: bool,
    /// Outside hosts (`host` or `host:port`) and API names the build may reach: only those the
    /// server's `[egress]` also allows are kept. Absent: the server's list as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_hosts: Option<Vec<String>>,
}

/// `POST /api/tasks`: a task file run as a run of its own, on one of your projects or in a
/// new, empty folder. The plan gets the same checks as `wright task check` before anything is
/// queued; unknown fields are refused (422).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskBody {
    /// The task file: a plan `{goal?, tasks: [...]}`, one task, or a list of tasks, as JSON; or
    /// the file's text as a string (JSON, or TOML with `"format": "toml"`).
    #[schema(value_type = Object)]
    pub plan: serde_json::Value,
    /// How a `plan` given as text is written: `json` (the default) or `toml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The build or task run whose project the tasks work on (its folder, once it has ended);
    /// absent: the project of `resume`, else a new, empty folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// An earlier task run of the same project whose passed tasks are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// Tasks to run again although they passed in the resumed run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rerun: Vec<String>,
    /// One of the models the server allows (`GET /api/models`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// One task of a task run, as `GET /api/tasks/{id}` shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaskOutcomeView {
    pub id: String,
    /// The task's `type`.
    #[serde(rename = "type")]
    pub kind: String,
    pub status: crate::TaskStatus,
    pub message: String,
    /// The result in the seed's shape: `{message, ai_result, validation_details}`.
    #[schema(value_type = Object)]
    pub result: serde_json::Value,
    pub started_at: String,
    pub finished_at: String,
}

/// A task run: the run as builds show it, and each task that ended so far, in run order.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskRunView {
    #[serde(flatten)]
    pub run: BuildView,
    pub tasks: Vec<TaskOutcomeView>,
}

/// `202` answer to `POST /api/builds`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Created {
    pub id: RunId,
    /// `queued`, or where the same earlier request stands.
    pub status: RunStatus,
    /// Where its events stream (SSE, or JSON lines with `Accept: application/x-ndjson`).
    pub events_url: String,
    /// The same request was already there (same `Idempotency-Key`, or identical and still active).
    pub deduplicated: bool,
}

/// One build, as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct BuildView {
    pub id: RunId,
    pub kind: RunKind,
    pub prompt: String,
    /// The template of a build; for other kinds of run, the kind.
    pub template: String,
    pub lang: crate::Lang,
    pub model: String,
    pub status: RunStatus,
    /// Why a failed build stopped.
    pub end_reason: Option<EndReason>,
    /// Which run of the build this is: 1, or more once it ran again after an interruption.
    pub attempt: u32,
    pub parent_id: Option<RunId>,
    pub owner: Option<UserId>,
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
    /// The app a published build became (its address and names); in `GET /api/builds/{id}` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<crate::AppRef>,
    /// Who shared the build with their classmates (their name), while it is shared; in `GET
    /// /api/builds/{id}` and `GET /api/builds?shared=true` (docs/classes.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_by: Option<String>,
    /// Its owner's 👍/👎 on it, if they gave one (`GET /api/builds/{id}` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback: Option<BuildRating>,
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
    pub id: RunId,
    pub status: CancelState,
}

/// What a cancel request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum CancelState {
    /// It was queued and has ended.
    Cancelled,
    /// It was running and is being stopped; `complete` follows.
    Cancelling,
    /// It had ended already.
    Ended,
}

/// A tested starter app new builds can begin from (`GET /api/starters`), for suggestions.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StarterView {
    pub id: String,
    pub template: crate::Template,
    /// Its title in English and Portuguese: `{"en": "...", "pt": "..."}`.
    pub title: std::collections::BTreeMap<String, String>,
    /// A request it answers, per language, to suggest.
    pub example: std::collections::BTreeMap<String, String>,
}

/// Who is calling.
#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    pub id: UserId,
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

/// A published app (`GET /api/apps`, `GET /api/apps/{slug}`; docs/apps.md).
#[derive(Debug, Serialize, ToSchema)]
pub struct AppView {
    pub slug: String,
    pub title: String,
    pub description: String,
    /// `/apps/<slug>` on the API's origin (it redirects to `url`).
    pub url_path: String,
    /// The app on its own origin (`http://app-<slug>.localhost:8788/`).
    pub url: String,
    pub build_id: RunId,
    pub owner: Option<UserId>,
    pub template: crate::Template,
    /// The request the build was made from.
    pub prompt: String,
    pub created_at: String,
    pub updated_at: String,
    /// False once its owner unpublished it (its address then answers 410).
    pub published: bool,
    pub unpublished_at: Option<String>,
    /// The published apps most like it, most similar first; in `GET /api/apps/{slug}` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related: Option<Vec<crate::AppRef>>,
}

/// `PATCH /api/apps/{slug}`: any of a new address, title, description.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AppEdit {
    /// Lower-case letters and digits in words joined by `-`; 409 when another app has it.
    pub slug: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
}

/// 👍 or 👎.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Thumb {
    Up,
    Down,
}

impl Thumb {
    /// As the store keeps it: 1 or -1.
    pub fn value(self) -> i8 {
        match self {
            Thumb::Up => 1,
            Thumb::Down => -1,
        }
    }

    /// From the store's 1 or -1 (anything not positive is 👎).
    pub fn of(value: i8) -> Self {
        if value > 0 { Thumb::Up } else { Thumb::Down }
    }
}

/// A person's verdict on a finished build (`POST /api/builds/{id}/feedback`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RateBody {
    pub value: Thumb,
    /// What was wrong or right, at most 2000 characters; after a 👎 the web UI offers it as
    /// the prompt of a follow-up build.
    #[serde(default)]
    pub comment: Option<String>,
}

/// A build's rating as the API shows it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct BuildRating {
    pub value: Thumb,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    pub updated_at: String,
}

/// A note whose confidence a rating moved.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MovedNoteView {
    pub id: String,
    pub before: f64,
    pub after: f64,
}

/// What rating a build did: the rating, and the notes it used whose confidence moved (none
/// when the same rating was given before).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RatedView {
    pub feedback: BuildRating,
    pub moved: Vec<MovedNoteView>,
}
