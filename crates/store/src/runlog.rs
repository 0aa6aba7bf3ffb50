//! A run's event log, owned by the store: the one place that numbers a run's events, the one
//! place that ends a run, and the one way to follow it.
//!
//! - [`RunLog::append`] gives events their `seq` inside the store's transaction, so they are
//!   gapless and unique per run however many processes write, and refuses a writer that no
//!   longer holds the run (its lease is the fencing token).
//! - [`RunLog::finish`] writes the run's final record and its `complete` event in one
//!   transaction, exactly once: a kill -9 can never leave a record and a stream that disagree,
//!   and a second `finish` returns the first outcome.
//! - [`RunLog::subscribe`] yields the stored events after a `seq`, then live ones, with no gap
//!   and no duplicate, woken by the store's [`Notifier`](crate::Notifier).

pub use crate::logged::Logged;
use crate::types::{BuildFinish, RunStatus};
use crate::{Result, StoreError};
use async_trait::async_trait;
use futures::stream::BoxStream;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use wright_events::{AppRef, Event, EventKind, Seq};

/// How long a follower waits without hearing of its run before it reads the store anyway: a
/// safety net for notices that cannot reach it (a run written by another process on a shared
/// SQLite file), not the way events normally arrive.
pub const SAFETY_NET: Duration = Duration::from_secs(2);

/// Frames a follower keeps for its reader before it waits for it.
const FOLLOWER_BUFFER: usize = 256;

/// An event before the store has numbered it.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub ts: String,
    pub kind: EventKind,
}

impl Draft {
    pub fn now(kind: EventKind) -> Self {
        Self { ts: wright_events::now(), kind }
    }
}

/// How a run ends: what to say last, its final record, and its `complete` event.
///
/// `complete` is derived from `record` ([`RunEnd::of`]), never written beside it: the stream's
/// last word and the run's row say the same thing because one is made from the other, and
/// [`RunLog::finish`] refuses an end whose `complete` says otherwise (a hand-made one).
#[derive(Debug, Clone, PartialEq)]
pub struct RunEnd {
    /// Events stored just before `complete`, in the same transaction (an `error` saying why).
    pub last_words: Vec<EventKind>,
    pub record: BuildFinish,
    /// Must be [`EventKind::Complete`] as [`RunEnd::of`] makes it from `record`.
    pub complete: EventKind,
}

impl RunEnd {
    /// The end `record` describes, its `complete` made from it (no browser check, no app),
    /// after `last_words`.
    pub fn of(record: BuildFinish, last_words: Vec<EventKind>) -> Self {
        let complete = derive(&record, false, None, None);
        Self { last_words, record, complete }
    }

    /// The page's browser check at the build's last verification: the one thing `complete`
    /// says that the record does not keep.
    pub fn checked(mut self, browser_checked: bool, browser_reason: Option<String>) -> Self {
        self.complete = derive(&self.record, browser_checked, browser_reason, self.app());
        self
    }

    /// The app a published build became (docs/apps.md), kept in the apps table, not the record.
    pub fn with_app(mut self, app: Option<Box<AppRef>>) -> Self {
        let (checked, reason) = self.check();
        self.complete = derive(&self.record, checked, reason, app);
        self
    }

    fn check(&self) -> (bool, Option<String>) {
        match &self.complete {
            EventKind::Complete { browser_checked, browser_reason, .. } => (*browser_checked, browser_reason.clone()),
            _ => (false, None),
        }
    }

    fn app(&self) -> Option<Box<AppRef>> {
        match &self.complete {
            EventKind::Complete { app, .. } => app.clone(),
            _ => None,
        }
    }
}

/// The `complete` that `record` describes, with what only the caller knows (the browser check
/// and the app).
fn derive(
    record: &BuildFinish,
    browser_checked: bool,
    browser_reason: Option<String>,
    app: Option<Box<AppRef>>,
) -> EventKind {
    EventKind::Complete {
        success: record.status == RunStatus::Published,
        files: record.files.clone(),
        iterations: record.turns,
        fix_attempts: record.fix_attempts,
        duration_ms: record.duration_ms,
        input_tokens: record.tokens.input_tokens,
        output_tokens: record.tokens.output_tokens,
        cached_tokens: record.tokens.cached_tokens,
        cost_usd: record.tokens.cost_usd,
        browser_checked,
        browser_reason,
        end_reason: record.end_reason,
        app,
    }
}

/// What [`RunLog::finish`] did.
#[derive(Debug, Clone)]
pub enum Finished {
    /// This call ended the run; these are the events it stored, `complete` last.
    Now(Vec<Arc<Logged>>),
    /// The run had ended already; nothing changed. Its `complete` as first stored, and status.
    Already { complete: Option<Event>, status: RunStatus },
}

impl Finished {
    /// The run's `complete`, whichever call stored it.
    pub fn complete(&self) -> Option<&Event> {
        match self {
            Finished::Now(events) => events.last().map(|l| &l.event),
            Finished::Already { complete, .. } => complete.as_ref(),
        }
    }
}

/// A run's event log. `writer` is the fencing token: the worker that holds the run under its
/// lease (`wright serve`), or `None` for a run no worker holds (a local `wright run`, a build
/// still queued). A call whose writer does not hold the run fails with
/// [`StoreError::NotHolder`]; appending to a run that has ended fails with
/// [`StoreError::Ended`].
#[async_trait]
pub trait RunLog: Send + Sync {
    /// Store `events` after the run's last one, numbered in the same transaction.
    async fn append(&self, run: &str, writer: Option<&str>, events: Vec<Draft>) -> Result<Vec<Arc<Logged>>>;
    /// End the run: `end.last_words`, its record and `complete`, in one transaction, once.
    async fn finish(&self, run: &str, writer: Option<&str>, end: RunEnd) -> Result<Finished>;
    /// Stored events of a run with `seq > after`, in order.
    async fn events(&self, run: &str, after: u64) -> Result<Vec<Event>>;
    /// Whether the run has ended (its `complete` is stored); false for a run not stored.
    async fn has_ended(&self, run: &str) -> Result<bool>;
    /// Events after `after`, stored then live, ending after `complete` (or at once when the
    /// run had ended before `after`). Dropping the stream stops the follower.
    fn subscribe(&self, run: &str, after: u64) -> BoxStream<'static, Result<Arc<Logged>>>;
    fn notifier(&self) -> Arc<dyn crate::Notifier>;
}

/// A run's state as the writing transaction found it (its row locked or the database's write
/// lock held, by the backend's means).
pub(crate) struct Head {
    pub status: RunStatus,
    pub last: u64,
}

/// Decide from the run's stored `status`, `worker`, last `seq` and whether its lease has run
/// out by the database's clock (`expired`) whether `writer` may write to it: the fence, the
/// same on every backend. A worker whose lease ran out holds nothing, even before another
/// takes the run: its name alone is not enough. An ended run is refused to appends
/// ([`StoreError::Ended`]) and handed to `finish` (`ending`), which answers with its first
/// outcome.
pub(crate) fn check_head(
    run: &str,
    status: &str,
    worker: Option<&str>,
    last: u64,
    expired: bool,
    writer: Option<&str>,
    ending: bool,
) -> Result<Head> {
    let status = RunStatus::parse(status).ok_or_else(|| StoreError::Corrupt(format!("run status `{status}`")))?;
    let head = Head { status, last };
    if status.is_final() {
        return if ending { Ok(head) } else { Err(StoreError::Ended(run.to_string())) };
    }
    let holds = match writer {
        Some(w) => status == RunStatus::Running && worker == Some(w) && !expired,
        None => worker.is_none(),
    };
    if holds { Ok(head) } else { Err(StoreError::NotHolder(run.to_string())) }
}

/// Refuse a `complete` among appended events (a run ends through `finish`).
pub(crate) fn check_append(events: &[Draft]) -> Result<()> {
    if events.iter().any(|d| matches!(d.kind, EventKind::Complete { .. })) {
        return Err(StoreError::Invalid("`complete` is stored by finishing the run, not appended".into()));
    }
    Ok(())
}

/// `events` numbered `after + 1…` as `run`'s, each serialised once for its row and followers.
pub(crate) fn stamp(run: &str, after: u64, events: Vec<Draft>) -> Vec<Arc<Logged>> {
    events
        .into_iter()
        .zip(after + 1..)
        .map(|(d, seq)| Arc::new(Logged::new(Event { seq: Seq(seq), build: run.to_string(), ts: d.ts, kind: d.kind })))
        .collect()
}

/// The drafts a run's end stores: its last words, then `complete`.
pub(crate) fn end_drafts(last_words: Vec<EventKind>, complete: EventKind) -> Vec<Draft> {
    let mut drafts: Vec<Draft> = last_words.into_iter().map(Draft::now).collect();
    drafts.push(Draft::now(complete));
    drafts
}

/// A stored event's JSON read back.
pub(crate) fn parse_event(s: &str) -> Result<Event> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt(format!("event: {e}")))
}

/// Check `end` before any transaction: a `complete` that is not one, or that says something
/// its record does not, would end the stream of a run whose record says something else.
pub(crate) fn check_end(end: &RunEnd) -> Result<()> {
    if !matches!(end.complete, EventKind::Complete { .. }) {
        return Err(StoreError::Invalid(format!("a run ends with `complete`, not `{}`", end.complete.type_name())));
    }
    if end.last_words.iter().any(|k| matches!(k, EventKind::Complete { .. })) || !end.record.status.is_final() {
        return Err(StoreError::Invalid("a run's last words cannot end it, and its end must be final".into()));
    }
    let (checked, reason) = end.check();
    let want = derive(&end.record, checked, reason, end.app());
    if want == end.complete {
        return Ok(());
    }
    Err(StoreError::Invalid(format!(
        "this `complete` disagrees with the run's record ({}); make it from the record with RunEnd::of",
        disagreements(&end.complete, &want)
    )))
}

/// The fields in which `got` differs from `want`, as `field: got in complete, want in the
/// record`.
fn disagreements(got: &EventKind, want: &EventKind) -> String {
    let (got, want) = (serde_json::to_value(got), serde_json::to_value(want));
    let (Ok(serde_json::Value::Object(got)), Ok(serde_json::Value::Object(want))) = (got, want) else {
        return "its fields differ".into();
    };
    let mut keys: Vec<&String> = got.keys().chain(want.keys()).collect();
    keys.sort();
    keys.dedup();
    let null = serde_json::Value::Null;
    keys.into_iter()
        .filter_map(|k| {
            let (g, w) = (got.get(k).unwrap_or(&null), want.get(k).unwrap_or(&null));
            (g != w).then(|| format!("{k}: {g} in `complete`, {w} in the record"))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// [`RunLog::subscribe`] for any log that can be cloned into a task (the SQLite store is).
pub(crate) fn follow<L: RunLog + Clone + 'static>(
    log: L,
    run: &str,
    after: u64,
) -> BoxStream<'static, Result<Arc<Logged>>> {
    let (tx, rx) = mpsc::channel(FOLLOWER_BUFFER);
    let run = run.to_string();
    tokio::spawn(async move {
        tokio::select! {
            _ = pump(&log, &run, Seq(after), &tx) => {}
            _ = tx.closed() => {}
        }
    });
    Box::pin(futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) }))
}

type Out = mpsc::Sender<Result<Arc<Logged>>>;

/// Send one event; `None` when the follower is done (its reader left, or this was `complete`).
async fn send(tx: &Out, l: Arc<Logged>, last: &mut Seq) -> Option<()> {
    *last = l.event.seq;
    let done = l.is_complete();
    if tx.send(Ok(l)).await.is_err() || done { None } else { Some(()) }
}

async fn pump<L: RunLog>(log: &L, run: &str, mut last: Seq, tx: &Out) {
    // Join the live channel first: anything committed after this arrives live, anything
    // committed before is in the read below, and a `seq` in both is sent once.
    let notifier = log.notifier();
    let mut live = notifier.follow(run);
    loop {
        // Asked before the read: `complete` and the final status commit together, so a run
        // that had ended before the read has its `complete` in it (or sent before `after`).
        let ended = match log.has_ended(run).await {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(run, "reading a run's state: {e}");
                tokio::time::sleep(SAFETY_NET).await;
                continue;
            }
        };
        match log.events(run, last.0).await {
            Ok(events) => {
                let empty = events.is_empty();
                for e in events {
                    if e.seq != last.next() {
                        tracing::warn!(run, seq = e.seq.0, last = last.0, "stored events have a gap");
                    }
                    if send(tx, Arc::new(Logged::new(e)), &mut last).await.is_none() {
                        return;
                    }
                }
                if empty && ended {
                    return;
                }
            }
            Err(e) => {
                // The reader hears of it; the follower tries again after the safety net.
                if tx.send(Err(e)).await.is_err() {
                    return;
                }
                tokio::time::sleep(SAFETY_NET).await;
                continue;
            }
        }
        // Then live, until something says "read the store again": a gap, a lag, a closed
        // channel, or the safety net's quiet spell.
        loop {
            let next = match tokio::time::timeout(SAFETY_NET, live.recv()).await {
                Ok(r) => r,
                Err(_) => break,
            };
            match next {
                Ok(l) if l.event.seq <= last => continue,
                Ok(l) if l.event.seq == last.next() => {
                    if send(tx, l, &mut last).await.is_none() {
                        return;
                    }
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => break,
                Err(broadcast::error::RecvError::Closed) => {
                    live = notifier.follow(run);
                    break;
                }
            }
        }
    }
}
