//! The records wright keeps. Plain data, serialisable, with no database types in them, so a
//! PostgreSQL store can hand back exactly the same values as the SQLite one.

use serde::{Deserialize, Serialize};

pub use wright_events::api::RunId;
pub use wright_events::job::{BuildArgs, JobError, QueuedJob, TaskArgs};
pub use wright_events::{EndReason, Lang, RestartReason, RunStatus, TaskStatus, Template};

/// What is known about a build when it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewBuild {
    pub id: RunId,
    /// Build, task run or chat turn: which engine drives it.
    #[serde(default)]
    pub kind: wright_events::RunKind,
    /// The build this one continues (`wright run --continue`), if any.
    pub parent_id: Option<RunId>,
    pub prompt: String,
    /// The project template a build uses (`static`, `fullstack`…); `None` for other kinds of
    /// run (stored, and shown in JSON, as the empty text it always was).
    #[serde(with = "blank_template")]
    pub template: Option<Template>,
    pub lang: Lang,
    pub provider: String,
    pub model: String,
    pub workspace: String,
    pub started_at: String,
}

/// Token counts and their price.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
}

/// How a build ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildFinish {
    pub status: RunStatus,
    /// Why a failed build stopped.
    pub end_reason: Option<EndReason>,
    pub fix_attempts: u32,
    pub turns: u32,
    pub tokens: Tokens,
    pub duration_ms: u64,
    pub files: Vec<String>,
    /// A readable account of what was tried (kept for failed builds especially).
    pub report: Option<String>,
    pub finished_at: String,
}

/// A build as stored: how it started, and how far it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildRecord {
    #[serde(flatten)]
    pub start: NewBuild,
    pub status: RunStatus,
    pub end_reason: Option<EndReason>,
    pub fix_attempts: u32,
    pub turns: u32,
    pub tokens: Tokens,
    /// None while the build runs.
    pub duration_ms: Option<u64>,
    pub files: Vec<String>,
    pub report: Option<String>,
    pub finished_at: Option<String>,
    /// The user who asked for it (`wright serve`); none for `wright run`.
    #[serde(default)]
    pub owner: Option<String>,
    /// The secret part of its preview address (`wright serve`).
    #[serde(skip)]
    pub preview_key: Option<String>,
    /// What a worker runs (`wright serve`), as the queue stored it; `Err` says why a stored
    /// job cannot be read (the worker ends the build with `invalid_request`).
    #[serde(skip)]
    pub job: Option<std::result::Result<QueuedJob, JobError>>,
    /// Which run of the build this is: 1, or more after interruptions (`wright serve`).
    #[serde(default = "first_attempt")]
    pub attempt: u32,
}

impl BuildRecord {
    /// What a list shows in its template column: the template of a build, the kind of any
    /// other run (`task`).
    pub fn shown_template(&self) -> &'static str {
        match (self.start.kind, self.start.template) {
            (wright_events::RunKind::Build, Some(t)) => t.as_str(),
            (wright_events::RunKind::Build, None) => "",
            (other, _) => other.as_str(),
        }
    }

    /// The build's queued job, or why it cannot be run.
    pub fn queued_job(&self) -> std::result::Result<&QueuedJob, JobError> {
        match &self.job {
            Some(Ok(job)) => Ok(job),
            Some(Err(e)) => Err(e.clone()),
            None => Err(JobError("the build has no stored job".into())),
        }
    }
}

/// A run's template in JSON as it always was: its name, or `""` for a run that has none.
mod blank_template {
    use super::Template;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &Option<Template>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(t.map_or("", Template::as_str))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Template>, D::Error> {
        let text = String::deserialize(d)?;
        if text.is_empty() {
            return Ok(None);
        }
        Template::parse_loose(&text)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown template `{text}`")))
    }
}

fn first_attempt() -> u32 {
    1
}

/// What [`crate::Store::restart_build`] did with an interrupted build.
#[derive(Debug, Clone, PartialEq)]
pub enum Restart {
    /// Back in the queue at its old place; this `restarted` event is stored with it.
    Requeued(Box<wright_events::Event>),
    /// It ran `attempts` times already, the most allowed: the caller ends it.
    Exhausted { attempts: u32 },
    /// Someone asked to cancel it: the caller ends it as cancelled.
    Cancelled,
    /// The caller does not hold it (another reaper or worker does, or it ended).
    NotHeld,
}

impl Restart {
    /// What to do with a build `holder` wants to restart, from its stored `status` (`None`: one
    /// this version does not know), `worker`,
    /// `cancel_requested` flag and `attempt`: `Ok(attempt)` to put it back for run
    /// `attempt + 1`, or the answer that ends the request (the same on every backend).
    pub(crate) fn decide(
        status: Option<RunStatus>,
        worker: Option<&str>,
        holder: &str,
        cancel_requested: bool,
        attempt: u32,
        max_attempts: u32,
    ) -> Result<u32, Restart> {
        if status != Some(RunStatus::Running) || worker != Some(holder) {
            Err(Restart::NotHeld)
        } else if cancel_requested {
            Err(Restart::Cancelled)
        } else if attempt >= max_attempts {
            Err(Restart::Exhausted { attempts: attempt })
        } else {
            Ok(attempt)
        }
    }
}

/// A project a task run lent to the sandbox user, to give back to `uid`/`gid` if the run
/// never did (it was killed). `pid_start` tells the lending process from a later one with
/// the same pid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LentProject {
    pub run_id: String,
    pub path: String,
    pub uid: u32,
    pub gid: u32,
    pub pid: u32,
    pub pid_start: String,
    pub lent_at: String,
}

/// A build asked for over HTTP, waiting for a worker.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedBuild {
    pub build: NewBuild,
    pub owner: String,
    /// What a worker runs: the job, typed (stored as its kind and encoded args).
    pub job: QueuedJob,
    /// The client's `Idempotency-Key`: the same key from the same owner is the same build.
    pub idempotency_key: Option<String>,
    /// Identical requests from one owner while one of them is queued or running are one build.
    pub dedup_key: String,
    pub preview_key: String,
    /// Stored with the build as its first event, before any worker can take it (the queue
    /// notice); the store numbers and stamps it like any other.
    pub first_event: Option<wright_events::EventKind>,
    /// The owner's limits, decided in the transaction that queues the build, so two servers
    /// cannot both let an over-limit request through. `None`: no limit (a local run).
    pub limits: Option<Limits>,
}

/// How many runs one owner may have queued or running at once (every kind together), and
/// queue per hour (of the queued run's own kind: builds and task runs are counted apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub concurrent: u32,
    pub per_hour: u32,
}

/// Which limit refused a build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    Concurrent,
    Hourly,
}

impl LimitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Concurrent => "concurrent",
            Self::Hourly => "hourly",
        }
    }
}

/// What [`crate::Store::enqueue_build`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Enqueued {
    /// A new build was queued.
    New,
    /// The same request (by idempotency key, or identical and still active) was already there.
    Existing(Box<BuildRecord>),
    /// Not queued: this build (queued or running) works in the same folder. Two follow-ups of
    /// one parent would write over each other's files, and a re-run's copy of the folder would
    /// put back the other's half-written state.
    FolderBusy(String),
    /// Not queued: the owner is at a limit. `count` is what they have (at once, or this past
    /// hour); `oldest` when the oldest build of the hour was queued (the hourly limit's
    /// retry time), by the store's clock.
    Limited { kind: LimitKind, count: u64, oldest: Option<String> },
}

/// What a cancel request found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelOutcome {
    /// It was still queued and is now failed with `cancelled`; no worker will take it.
    WasQueued,
    /// It is running; its worker was asked to stop.
    Running,
    /// It had already ended.
    AlreadyEnded,
}

/// What a user may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    User,
    /// A user who also sees the builds, costs and limits of the members of the classes they
    /// teach (docs/classes.md); nothing of anyone else's.
    Teacher,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::User => "user",
            Self::Teacher => "teacher",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "admin" => Some(Self::Admin),
            "user" => Some(Self::User),
            "teacher" => Some(Self::Teacher),
            _ => None,
        }
    }
}

/// Someone who may use `wright serve`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub id: String,
    pub name: String,
    pub role: Role,
    pub created_at: String,
}

/// A browser session, or a one-time login link that becomes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKind {
    Session,
    Login,
}

impl SessionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::Login => "login",
        }
    }
}

/// One message of a build's conversation with the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub build_id: String,
    /// Position in the conversation, from 0.
    pub idx: u32,
    /// The build phase it belongs to (`GENERATING`, `FIXING`, …).
    pub phase: String,
    pub role: String,
    /// The provider-neutral message as JSON (role, content, tool calls, tool call id).
    pub message: serde_json::Value,
    pub ts: String,
    /// Usage of the model call that produced this message (assistant turns only).
    pub tokens: Tokens,
}

/// One error met during a build, for the attempt record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptError {
    pub iteration: u32,
    pub kind: String,
    pub error: String,
    pub fixed: bool,
}

/// The outcome of one generation (a build run), for statistics and note effectiveness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub id: String,
    pub build_id: String,
    pub template: Template,
    pub success: bool,
    /// Fix attempts it needed.
    pub iterations: u32,
    pub duration_ms: u64,
    pub notes_applied: Vec<String>,
    pub errors: Vec<AttemptError>,
    pub model: String,
    pub tokens: Tokens,
    pub created_at: String,
}

/// One model call, for the usage log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageEntry {
    pub build_id: String,
    pub phase: String,
    pub provider: String,
    pub model: String,
    pub tokens: Tokens,
    pub ts: String,
}

/// How one task of a task run ended (`wright task`). The run itself is a build record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub run_id: String,
    pub task_id: String,
    /// Where it came in the run's order (dependencies first), from 0.
    pub position: u32,
    /// The task's `type`.
    pub kind: String,
    pub status: TaskStatus,
    pub message: String,
    /// The task's result in the seed's shape: `{message, ai_result, validation_details}`.
    pub result: serde_json::Value,
    /// SHA-256 (hex) of the task as written, so a resumed run can tell an edited task.
    pub task_hash: String,
    pub started_at: String,
    pub finished_at: String,
}

/// Aggregates over everything stored (`wright stats`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub builds: u64,
    pub published: u64,
    /// Published without any fix attempt.
    pub first_try: u64,
    pub per_template: Vec<TemplateStats>,
    /// `fix_histogram[n]` = finished builds that took n fix attempts.
    pub fix_histogram: Vec<u64>,
    /// Finished builds that had at least one note in their prompt.
    pub builds_with_notes: u64,
    pub published_with_notes: u64,
    pub published_without_notes: u64,
    pub notes_total: u64,
    pub notes_active: u64,
    pub notes_candidate: u64,
    pub notes_deprecated: u64,
    pub tokens: Tokens,
    pub duration_p50_ms: Option<u64>,
    pub duration_p95_ms: Option<u64>,
}

/// Success figures for one template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TemplateStats {
    pub template: String,
    pub builds: u64,
    pub published: u64,
    pub first_try: u64,
}

/// One day of one template's builds (UTC day of their start), for the admin dashboard.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DayStats {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub template: String,
    /// Finished builds (published or failed).
    pub builds: u64,
    pub published: u64,
    pub first_try: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
}

/// How often verification found one kind of problem (`error_detected` events).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorKindCount {
    pub kind: String,
    pub count: u64,
}
