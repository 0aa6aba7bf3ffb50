//! The records wright keeps. Plain data, serialisable, with no database types in them, so a
//! PostgreSQL store can hand back exactly the same values as the SQLite one.

use serde::{Deserialize, Serialize};

/// Where a build stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildStatus {
    Running,
    Published,
    Failed,
}

impl BuildStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Published => "published",
            Self::Failed => "failed",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "running" => Some(Self::Running),
            "published" => Some(Self::Published),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }
}

/// What is known about a build when it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewBuild {
    pub id: String,
    /// The build this one continues (`wright run --continue`), if any.
    pub parent_id: Option<String>,
    pub prompt: String,
    pub template: String,
    pub lang: String,
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
    pub status: BuildStatus,
    /// Why a failed build stopped: `verification_failed`, `timed_out`, `cancelled`, `budget_spent`,
    /// `provider_unusable`.
    pub end_reason: Option<String>,
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
    pub status: BuildStatus,
    pub end_reason: Option<String>,
    pub fix_attempts: u32,
    pub turns: u32,
    pub tokens: Tokens,
    /// None while the build runs.
    pub duration_ms: Option<u64>,
    pub files: Vec<String>,
    pub report: Option<String>,
    pub finished_at: Option<String>,
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
    pub template: String,
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
