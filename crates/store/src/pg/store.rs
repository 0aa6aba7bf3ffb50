//! [`Store`] on PostgreSQL: builds, turns, attempts, usage, notes, stats, the queue, users.

#![allow(unused_variables)]
use super::{PgStore, todo_pg};
use crate::note::{Note, NoteStatus};
use crate::types::*;
use crate::{NoteFilter, NoteHit, Result, RunEnd, Store};
use async_trait::async_trait;
use std::time::Duration;

#[async_trait]
impl Store for PgStore {
    async fn create_build(&self, build: &NewBuild) -> Result<()> {
        Err(todo_pg("Store"))
    }

    async fn build(&self, id: &str) -> Result<BuildRecord> {
        Err(todo_pg("Store"))
    }

    async fn list_builds(&self, limit: u32) -> Result<Vec<BuildRecord>> {
        Err(todo_pg("Store"))
    }

    async fn resolve_build(&self, id_or_prefix: &str) -> Result<BuildRecord> {
        Err(todo_pg("Store"))
    }

    async fn append_turn(&self, turn: &Turn, writer: Option<&str>) -> Result<()> {
        Err(todo_pg("Store"))
    }

    async fn turns(&self, build_id: &str) -> Result<Vec<Turn>> {
        Err(todo_pg("Store"))
    }

    async fn record_attempt(&self, attempt: &Attempt) -> Result<()> {
        Err(todo_pg("Store"))
    }

    async fn attempts(&self, build_id: &str) -> Result<Vec<Attempt>> {
        Err(todo_pg("Store"))
    }

    async fn log_usage(&self, entry: &UsageEntry) -> Result<()> {
        Err(todo_pg("Store"))
    }

    async fn usage(&self, build_id: &str) -> Result<Vec<UsageEntry>> {
        Err(todo_pg("Store"))
    }

    async fn put_note(&self, note: &Note) -> Result<()> {
        Err(todo_pg("Store"))
    }

    async fn note(&self, id: &str) -> Result<Note> {
        Err(todo_pg("Store"))
    }

    async fn resolve_note(&self, id_or_prefix: &str) -> Result<Note> {
        Err(todo_pg("Store"))
    }

    async fn edit_note(&self, id: &str, lesson: Option<&str>, status: Option<NoteStatus>) -> Result<Note> {
        Err(todo_pg("Store"))
    }

    async fn list_notes(&self, filter: &NoteFilter) -> Result<Vec<Note>> {
        Err(todo_pg("Store"))
    }

    async fn find_notes(&self, keys: &[String], limit: u32) -> Result<Vec<NoteHit>> {
        Err(todo_pg("Store"))
    }

    async fn record_note_outcome(&self, ids: &[String], helped: bool) -> Result<Vec<Note>> {
        Err(todo_pg("Store"))
    }

    async fn record_note_uses(&self, build_id: &str, ids: &[String], phase: &str) -> Result<()> {
        Err(todo_pg("Store"))
    }

    async fn note_uses(&self, build_id: &str) -> Result<Vec<String>> {
        Err(todo_pg("Store"))
    }

    async fn stats(&self) -> Result<Stats> {
        Err(todo_pg("Store"))
    }

    async fn daily_stats(&self, days: u32) -> Result<Vec<DayStats>> {
        Err(todo_pg("Store"))
    }

    async fn error_kinds(&self, days: u32, limit: u32) -> Result<Vec<ErrorKindCount>> {
        Err(todo_pg("Store"))
    }

    async fn enqueue_build(&self, build: &QueuedBuild) -> Result<Enqueued> {
        Err(todo_pg("Store"))
    }

    async fn claim_build(&self, worker: &str, lease: Duration) -> Result<Option<BuildRecord>> {
        Err(todo_pg("Store"))
    }

    async fn renew_lease(&self, id: &str, worker: &str, lease: Duration) -> Result<bool> {
        Err(todo_pg("Store"))
    }

    async fn take_expired(&self, reaper: &str, lease: Duration, spare: &str) -> Result<Vec<BuildRecord>> {
        Err(todo_pg("Store"))
    }

    async fn queue_position(&self, id: &str) -> Result<u64> {
        Err(todo_pg("Store"))
    }

    async fn queue_depth(&self) -> Result<u64> {
        Err(todo_pg("Store"))
    }

    async fn request_cancel(&self, id: &str, if_queued: RunEnd) -> Result<CancelOutcome> {
        Err(todo_pg("Store"))
    }

    async fn cancel_requested(&self, id: &str) -> Result<bool> {
        Err(todo_pg("Store"))
    }

    async fn builds_of(&self, owner: Option<&str>, limit: u32) -> Result<Vec<BuildRecord>> {
        Err(todo_pg("Store"))
    }

    async fn builds_since(&self, owner: &str, since: &str) -> Result<(u64, Option<String>)> {
        Err(todo_pg("Store"))
    }

    async fn active_builds(&self, owner: &str) -> Result<u64> {
        Err(todo_pg("Store"))
    }

    async fn create_user(&self, user: &User, token_hash: &str) -> Result<()> {
        Err(todo_pg("Store"))
    }

    async fn users(&self) -> Result<Vec<User>> {
        Err(todo_pg("Store"))
    }

    async fn remove_user(&self, name: &str) -> Result<bool> {
        Err(todo_pg("Store"))
    }

    async fn user_by_token(&self, token_hash: &str) -> Result<Option<User>> {
        Err(todo_pg("Store"))
    }

    async fn put_session(&self, token_hash: &str, user_id: &str, kind: SessionKind, expires_at: &str) -> Result<()> {
        Err(todo_pg("Store"))
    }

    async fn session_user(&self, token_hash: &str, kind: SessionKind, now: &str) -> Result<Option<User>> {
        Err(todo_pg("Store"))
    }

    async fn end_session(&self, token_hash: &str) -> Result<()> {
        Err(todo_pg("Store"))
    }

    async fn log_refusal(&self, user_id: &str, reason: &str) -> Result<()> {
        Err(todo_pg("Store"))
    }

    async fn put_task_result(&self, record: &TaskRecord) -> Result<()> {
        Err(todo_pg("Store"))
    }

    async fn task_results(&self, run_id: &str) -> Result<Vec<TaskRecord>> {
        Err(todo_pg("Store"))
    }

    async fn restart_build(&self, id: &str, holder: &str, max_attempts: u32, reason: &str) -> Result<Restart> {
        Err(todo_pg("Store"))
    }

    async fn existing_build(
        &self,
        owner: &str,
        idempotency_key: Option<&str>,
        dedup_key: &str,
    ) -> Result<Option<BuildRecord>> {
        Err(todo_pg("Store"))
    }

    async fn lend_project(&self, project: &LentProject) -> Result<()> {
        Err(todo_pg("Store"))
    }

    async fn lent_projects(&self) -> Result<Vec<LentProject>> {
        Err(todo_pg("Store"))
    }

    async fn project_returned(&self, run_id: &str) -> Result<()> {
        Err(todo_pg("Store"))
    }
}
