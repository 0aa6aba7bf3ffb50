//! The [`Store`] trait: everything wright persists, behind one seam.

use crate::{
    AppStore, AssistantStore, Attempt, BuildRecord, CancelOutcome, ChatStore, ClassStore, DayStats, Enqueued,
    ErrorKindCount, ExperimentStore, FeedbackStore, LentProject, Limiter, Maintenance, NewBuild, Note, NoteStatus,
    PreviewLog, QueuedBuild, Restart, Result, RunEnd, RunLog, SessionKind, Spending, Stats, TaskRecord, Turn,
    UsageEntry, User,
};
use async_trait::async_trait;
use std::time::Duration;

/// Which notes to list.
#[derive(Debug, Clone, Default)]
pub struct NoteFilter {
    pub status: Option<NoteStatus>,
    pub limit: Option<u32>,
}

/// A note found by retrieval and how many of the query's keys it matched.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteHit {
    pub note: Note,
    pub matched: u32,
}

/// Everything wright persists. Implementations must be safe to share between tasks. A run's
/// events, and its end, go through the [`RunLog`] every store is; the chat's records through
/// its [`ChatStore`]. Lists of builds for people (`list_builds`, `builds_of`) and the limits
/// that count a user's builds leave chat turns (runs of kind `chat`) out: a conversation is
/// not a build, and its turns must not use up a user's build quota. Periodic jobs, retention
/// and the worker registry go through its [`Maintenance`].
#[async_trait]
pub trait Store:
    RunLog
    + ChatStore
    + AssistantStore
    + AppStore
    + Maintenance
    + PreviewLog
    + Limiter
    + ClassStore
    + Spending
    + FeedbackStore
    + ExperimentStore
{
    // Builds.
    async fn create_build(&self, build: &NewBuild) -> Result<()>;
    async fn build(&self, id: &str) -> Result<BuildRecord>;
    /// Newest first; builds and task runs, not chat turns.
    async fn list_builds(&self, limit: u32) -> Result<Vec<BuildRecord>>;
    /// The one build whose id is `id` or starts with it (so people can type a prefix).
    async fn resolve_build(&self, id_or_prefix: &str) -> Result<BuildRecord>;

    // Conversation.
    /// Store one message of a run's conversation for `writer` (the worker that holds the run,
    /// `None` for one no worker holds); [`StoreError::NotHolder`] when it does not hold it.
    async fn append_turn(&self, turn: &Turn, writer: Option<&str>) -> Result<()>;
    async fn turns(&self, build_id: &str) -> Result<Vec<Turn>>;

    // Attempts and usage.
    async fn record_attempt(&self, attempt: &Attempt) -> Result<()>;
    async fn attempts(&self, build_id: &str) -> Result<Vec<Attempt>>;
    async fn log_usage(&self, entry: &UsageEntry) -> Result<()>;
    async fn usage(&self, build_id: &str) -> Result<Vec<UsageEntry>>;

    // Notes.
    /// Insert a note, or replace the one with the same id (import, edit).
    async fn put_note(&self, note: &Note) -> Result<()>;
    async fn note(&self, id: &str) -> Result<Note>;
    /// The one note whose id is `id` or starts with it.
    async fn resolve_note(&self, id_or_prefix: &str) -> Result<Note>;
    /// Change a note's lesson and/or status in one statement (an admin's correction), leaving
    /// its counts as they are at that moment. Returns the note as it is now.
    async fn edit_note(&self, id: &str, lesson: Option<&str>, status: Option<NoteStatus>) -> Result<Note>;
    /// Best confidence first.
    async fn list_notes(&self, filter: &NoteFilter) -> Result<Vec<Note>>;
    /// Non-deprecated notes carrying any of `keys` (see [`Note::keys`]), most matched keys
    /// first, then best score; at most `limit`.
    async fn find_notes(&self, keys: &[String], limit: u32) -> Result<Vec<NoteHit>>;
    /// Count one use of each note (`helped` when the build succeeded) and move it along its
    /// lifecycle, atomically per note. Returns the updated notes.
    async fn record_note_outcome(&self, ids: &[String], helped: bool) -> Result<Vec<Note>>;
    /// Remember that `build_id` had these notes in its prompt.
    async fn record_note_uses(&self, build_id: &str, ids: &[String], phase: &str) -> Result<()>;
    async fn note_uses(&self, build_id: &str) -> Result<Vec<String>>;

    /// Aggregates for `wright stats`.
    async fn stats(&self) -> Result<Stats>;
    /// Finished builds per UTC day and template over the last `days` days, oldest first.
    async fn daily_stats(&self, days: u32) -> Result<Vec<DayStats>>;
    /// The kinds of problem verification found most over the last `days` days, most frequent
    /// first; at most `limit`.
    async fn error_kinds(&self, days: u32, limit: u32) -> Result<Vec<ErrorKindCount>>;

    // The service's queue. It lives here, not in a process, so any number of servers and
    // workers can share it; a claimed build carries a lease its worker renews.
    /// Queue a build, unless the owner already has it: the same `idempotency_key`, or an
    /// identical request (`dedup_key`) still queued or running.
    async fn enqueue_build(&self, build: &QueuedBuild) -> Result<Enqueued>;
    /// Take the oldest queued build for `worker`, leased for `lease` from now by the store's
    /// clock (the database's, never a worker's: clocks of many machines disagree).
    async fn claim_build(&self, worker: &str, lease: Duration) -> Result<Option<BuildRecord>>;
    /// Extend a claimed build's lease to `lease` from now; false when the worker no longer
    /// holds it: another worker took it, or its lease ran out by the database's clock (a lease
    /// that ran out is gone, even with the worker's name still on the build, so a worker
    /// frozen past it cannot pick up where it was).
    async fn renew_lease(&self, id: &str, worker: &str, lease: Duration) -> Result<bool>;
    /// Record `folder` as the build's files while `worker` holds it (the folder of this claim:
    /// a build run again after a lost lease works in a folder of its own, so its stale run
    /// never writes into it); false when the worker no longer holds it. While a worker holds
    /// the build, [`Store::create_build`] leaves the folder as this set it.
    async fn set_claim_folder(&self, id: &str, worker: &str, folder: &str) -> Result<bool>;
    /// Take the running builds whose lease has ended by the store's clock (their worker is
    /// gone), holding each for `lease`, so that exactly one caller ends each of them. Builds of
    /// workers whose names start with `spare` are left alone: the caller's own workers, alive
    /// though their renewals were held up.
    async fn take_expired(&self, reaper: &str, lease: Duration, spare: &str) -> Result<Vec<BuildRecord>>;
    /// Builds ahead of this one in the queue (0 when it is next or not queued).
    async fn queue_position(&self, id: &str) -> Result<u64>;
    /// Queued builds in all.
    async fn queue_depth(&self) -> Result<u64>;
    /// Stop a build: a queued one ends at once with `if_queued` (through [`RunLog::finish`]);
    /// a running one is flagged, and its worker is told ([`Signal::Cancel`]).
    async fn request_cancel(&self, id: &str, if_queued: RunEnd) -> Result<CancelOutcome>;
    async fn cancel_requested(&self, id: &str) -> Result<bool>;
    /// Newest first; only `owner`'s when given; not chat turns.
    async fn builds_of(&self, owner: Option<&str>, limit: u32) -> Result<Vec<BuildRecord>>;
    /// How many builds `owner` queued since `since`, and when the oldest of them was queued
    /// (chat turns are not counted).
    async fn builds_since(&self, owner: &str, since: &str) -> Result<(u64, Option<String>)>;
    /// `owner`'s builds that are queued or running (chat turns are not counted).
    async fn active_builds(&self, owner: &str) -> Result<u64>;

    // Users and sessions of the service. Secrets are stored as their SHA-256 only.
    async fn create_user(&self, user: &User, token_hash: &str) -> Result<()>;
    async fn users(&self) -> Result<Vec<User>>;
    /// False when there was no such user.
    async fn remove_user(&self, name: &str) -> Result<bool>;
    async fn user_by_token(&self, token_hash: &str) -> Result<Option<User>>;
    async fn put_session(&self, token_hash: &str, user_id: &str, kind: SessionKind, expires_at: &str) -> Result<()>;
    /// The user of a live session or login link; a login link is used up by this call.
    async fn session_user(&self, token_hash: &str, kind: SessionKind, now: &str) -> Result<Option<User>>;
    async fn end_session(&self, token_hash: &str) -> Result<()>;
    /// Remember a request a limit refused.
    async fn log_refusal(&self, user_id: &str, reason: &str) -> Result<()>;

    // Task runs (`wright task`): the run is a build; each task's outcome is a row.
    /// Insert or replace the outcome of one task of a run.
    async fn put_task_result(&self, record: &TaskRecord) -> Result<()>;
    /// The outcomes of a run's tasks, in run order.
    async fn task_results(&self, run_id: &str) -> Result<Vec<TaskRecord>>;

    // Interrupted builds (`wright serve`): a crash or kill -9 costs the user nothing.
    /// Put a running build that `holder` holds (its worker, or the reaper that took it over)
    /// back in the queue at its old place for run `attempt + 1`, with its `restarted` event
    /// (`reason`) stored in the same step; not once it has run `max_attempts` times.
    async fn restart_build(
        &self,
        id: &str,
        holder: &str,
        max_attempts: u32,
        reason: wright_events::RestartReason,
    ) -> Result<Restart>;
    /// The build of `owner` a new request would be: the one with this `Idempotency-Key`, or
    /// an identical request (`dedup_key`) still queued or running. Asked before any limit, so
    /// a retry never counts as a new build.
    async fn existing_build(
        &self,
        owner: &str,
        idempotency_key: Option<&str>,
        dedup_key: &str,
    ) -> Result<Option<BuildRecord>>;

    // Projects a task run lent to the sandbox user (as root), until they are given back.
    async fn lend_project(&self, project: &LentProject) -> Result<()>;
    async fn lent_projects(&self) -> Result<Vec<LentProject>>;
    async fn project_returned(&self, run_id: &str) -> Result<()>;
}
