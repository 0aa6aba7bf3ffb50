//! What keeps a long-running service tidy, shared by every server and worker on one store:
//!
//! - **Job leases.** A periodic job (recalculating note confidence, pruning old builds' files)
//!   runs in one process at a time across all of them: [`Maintenance::try_job`] takes the job
//!   for a while by the store's clock, and only when its last lease has run out, so a job taken
//!   for its period runs at most once per period however many servers ask.
//! - **Confidence recalculation.** Every note's score again from its counts, with a decay for
//!   notes nobody has used for a long time ([`Decay`]), statuses moved by the lifecycle rules of
//!   [`crate::note`], and the retrieval index's ranks kept in step, in one transaction.
//! - **Retention.** Finished builds whose files may go ([`Maintenance::ended_before`]); their
//!   rows, events and conversation stay (history), only the files on disk are removed by the
//!   caller, which then marks the build pruned.
//! - **Worker registry.** Each process says it is alive every few seconds
//!   ([`Maintenance::worker_heartbeat`]); the dashboard and `/metrics` list who is.

use crate::Result;
use crate::note::{Note, NoteStatus, next_status};
use async_trait::async_trait;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

/// A periodic job's lease and how its last run went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobRun {
    pub name: String,
    /// Who took it last (a server's instance name).
    pub holder: Option<String>,
    /// Until when nobody else may take it (store time).
    pub lease_until: Option<String>,
    pub last_started: Option<String>,
    pub last_finished: Option<String>,
    /// How the last finished run went; `None` before any finished.
    pub last_ok: Option<bool>,
    /// What the last finished run did, or why it failed.
    pub last_detail: Option<String>,
}

impl JobRun {
    /// Started and not finished since (it runs now, or its process died while it ran).
    pub fn running(&self) -> bool {
        match (&self.last_started, &self.last_finished) {
            (Some(s), Some(f)) => s > f,
            (Some(_), None) => true,
            _ => false,
        }
    }
}

/// How much a note's evidence fades while nobody uses it.
///
/// A note unused for `d` days counts its help and fail counts with the weight
/// `w = 0.5^(d / half_life_days)`: its confidence is `(w·help + 1) / (w·(help + fail) + 2)`,
/// the same Beta(1,1) posterior as [`crate::note::score`] with the evidence discounted. A note
/// used today keeps its plain score; one unused for one half-life counts half its record; a
/// long-forgotten one drifts back to the prior's 0.5. A note with a long record fades slower
/// than one with a short one (50 helps halved are still 25). "Used" is the later of its last
/// use in a prompt (`note_uses`) and its last change (`updated_at`: an outcome, an edit).
/// Statuses never move on decay alone: only the counts promote or deprecate a note.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decay {
    /// Days after which an unused note's evidence counts half; 0 (or less) for no decay.
    pub half_life_days: f64,
}

impl Decay {
    /// No decay: confidence is the plain score of the counts.
    pub fn none() -> Self {
        Self { half_life_days: 0.0 }
    }

    pub fn half_life(days: f64) -> Self {
        Self { half_life_days: days }
    }

    /// The weight of the evidence of a note unused for `days_unused` days, in `(0, 1]`.
    pub fn weight(&self, days_unused: f64) -> f64 {
        let fades = self.half_life_days.is_finite() && self.half_life_days > 0.0;
        if !fades || days_unused.is_nan() || days_unused <= 0.0 {
            return 1.0;
        }
        0.5f64.powf(days_unused / self.half_life_days)
    }

    /// The confidence of a note with these counts, unused for `days_unused` days.
    pub fn confidence(&self, help: u32, fail: u32, days_unused: f64) -> f64 {
        let w = self.weight(days_unused);
        if w >= 1.0 {
            return crate::note::score(help, fail);
        }
        (w * f64::from(help) + 1.0) / (w * (f64::from(help) + f64::from(fail)) + 2.0)
    }
}

/// What a confidence recalculation did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Recalculated {
    /// Notes looked at.
    pub seen: u64,
    /// Notes whose confidence or status changed.
    pub changed: u64,
    /// Candidates that became active.
    pub promoted: u64,
    /// Notes that became deprecated.
    pub deprecated: u64,
}

/// What a process says of itself at each heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerBeat {
    /// The process's instance name (unique per process).
    pub name: String,
    pub host: String,
    pub pid: u32,
    /// Builds it may run at once.
    pub slots: u32,
    /// Builds it runs now.
    pub busy: u32,
    /// wright's version.
    pub version: String,
}

/// A process of the registry, as its last heartbeat left it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerRow {
    pub name: String,
    pub host: String,
    pub pid: u32,
    pub slots: u32,
    pub busy: u32,
    pub version: String,
    /// Its first heartbeat (store time).
    pub started_at: String,
    /// Its last heartbeat (store time).
    pub seen_at: String,
    /// Whether it was seen within the window asked for, by the store's clock.
    pub alive: bool,
}

/// Periodic jobs, retention and the worker registry; every [`crate::Store`] is one.
#[async_trait]
pub trait Maintenance: Send + Sync {
    /// Take job `name` for `holder` for `hold` from now (by the store's clock) when nobody holds
    /// it or its lease has run out: true when taken. The lease is not given back when the run
    /// finishes, so a job taken for its period runs at most once a period across every
    /// process; a holder cannot take it again before its own lease ends either.
    async fn try_job(&self, name: &str, holder: &str, hold: Duration) -> Result<bool>;
    /// Record how `holder`'s run of the job went; false (nothing recorded) when it no longer
    /// holds the job (its lease ran out and someone else took it).
    async fn finish_job(&self, name: &str, holder: &str, ok: bool, detail: &str) -> Result<bool>;
    /// Every job known, by name.
    async fn jobs(&self) -> Result<Vec<JobRun>>;

    /// Recompute every note's confidence from its counts with `decay`, move statuses along the
    /// lifecycle ([`crate::note::next_status`]) and bring the retrieval index (`note_keys`:
    /// keys of live notes, ranked by confidence) in step, in one transaction. `updated_at` is
    /// left alone: recalculating is not using.
    async fn recalculate_confidence(&self, decay: Decay) -> Result<Recalculated>;

    /// Finished builds and task runs (published or failed) that ended before `cutoff` (store
    /// time, RFC 3339) and whose files are still there, oldest first, at most `limit`, as
    /// `(run id, workspace)`. A run whose workspace another run uses that has not ended before
    /// `cutoff` (a follow-up build works in its parent's folder) is left out.
    async fn ended_before(&self, cutoff: &str, limit: u32) -> Result<Vec<(String, String)>>;
    /// Remember that a run's files were removed (its row and events stay).
    async fn mark_pruned(&self, run_id: &str) -> Result<()>;

    /// Say that `beat.name` is alive, with its figures, now by the store's clock.
    async fn worker_heartbeat(&self, beat: &WorkerBeat) -> Result<()>;
    /// Every process in the registry, by name; `alive` when seen within `alive_within`.
    async fn workers(&self, alive_within: Duration) -> Result<Vec<WorkerRow>>;
    /// Drop the processes not seen for `older_than`; how many went.
    async fn forget_workers(&self, older_than: Duration) -> Result<u64>;
}

/// Changes of confidence smaller than this are not written (a note used a moment ago keeps its
/// plain score exactly); a note fading with a 90-day half-life moves about 1e-4 an hour.
const EPSILON: f64 = 1e-6;

/// What a recalculation writes for one note.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NoteUpdate {
    pub id: String,
    pub confidence: f64,
    pub status: NoteStatus,
    /// Whether the note row itself changes (its confidence or status).
    pub row_changed: bool,
    /// What the index needs for it.
    pub index: IndexFix,
}

/// How one note's keys in the index are brought in step.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum IndexFix {
    /// Right already.
    InStep,
    /// The right keys, ranked wrong: set their rank to the note's confidence.
    Rerank,
    /// Replace its keys with these, ranked by its confidence (none once it is deprecated).
    Rewrite(Vec<String>),
}

/// Durations past a century are a century: the clock arithmetic cannot overflow.
pub(crate) fn capped(d: Duration) -> Duration {
    d.min(Duration::from_secs(100 * 365 * 86_400))
}

/// Days from `from` to `now` (both RFC 3339); 0 when either cannot be read or `from` is later.
pub(crate) fn days_between(from: &str, now: &str) -> f64 {
    let parse = |s: &str| chrono::DateTime::parse_from_rfc3339(s).ok();
    match (parse(from), parse(now)) {
        (Some(a), Some(b)) => ((b - a).num_milliseconds() as f64 / 86_400_000.0).max(0.0),
        _ => 0.0,
    }
}

/// The plan of a recalculation, the same on every backend: for each note (with the time of its
/// last use, if any) its new confidence and status, and what the index must become; keys of
/// notes that no longer exist are in the second list.
pub(crate) fn plan(
    notes: &[(Note, Option<String>)],
    index: &[(String, String, f64)],
    now: &str,
    decay: Decay,
) -> (Vec<NoteUpdate>, Vec<String>, Recalculated) {
    // note id -> its keys and their ranks as stored.
    let mut stored: HashMap<&str, BTreeMap<&str, f64>> = HashMap::new();
    for (key, note_id, rank) in index {
        stored.entry(note_id.as_str()).or_default().insert(key.as_str(), *rank);
    }
    let mut out = Recalculated::default();
    let mut updates = Vec::new();
    let mut known: BTreeSet<&str> = BTreeSet::new();
    for (note, last_use) in notes {
        known.insert(note.id.as_str());
        out.seen += 1;
        let used = match last_use {
            Some(u) if *u > note.updated_at => u.as_str(),
            _ => note.updated_at.as_str(),
        };
        let confidence = decay.confidence(note.help_count, note.fail_count, days_between(used, now));
        let status = next_status(note.status, note.help_count, note.fail_count);
        let row_changed = (confidence - note.confidence).abs() > EPSILON || status != note.status;
        if row_changed {
            out.changed += 1;
            if note.status == NoteStatus::Candidate && status == NoteStatus::Active {
                out.promoted += 1;
            }
            if note.status != NoteStatus::Deprecated && status == NoteStatus::Deprecated {
                out.deprecated += 1;
            }
        }
        let want: Vec<String> = if status == NoteStatus::Deprecated { Vec::new() } else { note.keys() };
        let index = match stored.get(note.id.as_str()) {
            None if want.is_empty() => IndexFix::InStep,
            None => IndexFix::Rewrite(want),
            Some(have) if have.len() != want.len() || want.iter().any(|k| !have.contains_key(k.as_str())) => {
                IndexFix::Rewrite(want)
            }
            Some(have) if have.values().all(|r| (r - confidence).abs() <= EPSILON) => IndexFix::InStep,
            Some(_) => IndexFix::Rerank,
        };
        if row_changed || index != IndexFix::InStep {
            updates.push(NoteUpdate { id: note.id.clone(), confidence, status, row_changed, index });
        }
    }
    let orphans: Vec<String> = stored.keys().filter(|id| !known.contains(*id)).map(|id| id.to_string()).collect();
    (updates, orphans, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_discounts_evidence() {
        let d = Decay::half_life(90.0);
        assert_eq!(d.confidence(3, 0, 0.0), 0.8, "used today: the plain score");
        // One half-life: the record counts half: (1.5 + 1) / (1.5 + 2).
        assert!((d.confidence(3, 0, 90.0) - 2.5 / 3.5).abs() < 1e-12);
        assert!((d.confidence(0, 5, 90.0) - 1.0 / 4.5).abs() < 1e-12);
        // Long forgotten: back to the prior.
        assert!((d.confidence(3, 0, 90.0 * 60.0) - 0.5).abs() < 1e-9);
        // A long record fades slower than a short one.
        assert!(d.confidence(100, 0, 90.0) > d.confidence(3, 0, 90.0));
        assert_eq!(Decay::none().confidence(3, 0, 1000.0), 0.8);
        assert_eq!(Decay::half_life(f64::NAN).weight(10.0), 1.0);
    }

    #[test]
    fn days_between_times() {
        assert_eq!(days_between("2026-01-01T00:00:00.000Z", "2026-01-11T00:00:00.000Z"), 10.0);
        assert_eq!(days_between("2026-01-11T00:00:00.000Z", "2026-01-01T00:00:00.000Z"), 0.0);
        assert_eq!(days_between("garbage", "2026-01-01T00:00:00.000Z"), 0.0);
    }

    #[test]
    fn plan_moves_statuses_and_fixes_the_index() {
        let now = "2026-06-01T00:00:00.000Z";
        let mut good = Note::new("good", "timers", "Pad seconds.");
        good.tags = vec!["timer".into()];
        good.help_count = 3;
        good.updated_at = now.into();
        let mut bad = Note::new("bad", "dom", "Never do this.");
        bad.tags = vec!["dom".into()];
        bad.fail_count = 5;
        bad.confidence = crate::note::score(0, 5);
        bad.updated_at = now.into();
        let index = vec![
            ("tag:dom".to_string(), "bad".to_string(), bad.confidence),
            ("tag:gone".to_string(), "ghost".to_string(), 0.5),
        ];
        let (updates, orphans, counts) = plan(&[(good, None), (bad, None)], &index, now, Decay::half_life(90.0));
        assert_eq!(counts, Recalculated { seen: 2, changed: 2, promoted: 1, deprecated: 1 });
        assert_eq!(orphans, vec!["ghost".to_string()]);
        assert_eq!(updates[0].status, NoteStatus::Active);
        assert_eq!(updates[0].index, IndexFix::Rewrite(vec!["tag:timer".to_string()]));
        assert_eq!(updates[1].status, NoteStatus::Deprecated);
        assert_eq!(updates[1].index, IndexFix::Rewrite(vec![]));
        // Unused for a half-life: the same keys, ranked by the faded score.
        let mut old = Note::new("old", "dom", "Use textContent.");
        old.tags = vec!["dom".into()];
        old.help_count = 3;
        old.status = NoteStatus::Active;
        old.confidence = 0.8;
        old.updated_at = "2026-03-03T00:00:00.000Z".into();
        let index = vec![("tag:dom".to_string(), "old".to_string(), 0.8)];
        let (updates, _, counts) = plan(&[(old, None)], &index, now, Decay::half_life(90.0));
        assert_eq!(counts, Recalculated { seen: 1, changed: 1, promoted: 0, deprecated: 0 });
        assert_eq!(updates[0].index, IndexFix::Rerank);
        assert!((updates[0].confidence - 2.5 / 3.5).abs() < 1e-12);
    }
}
