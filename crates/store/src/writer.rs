//! Persist-before-show for a running run, without making anyone wait.
//!
//! [`LogWriter`] is the first (and only) sink of a run's [`wright_events::Emitter`]: `accept`
//! queues the event and returns at once, so an emit never blocks a tokio worker nor holds the
//! emitter's lock across a database write. One task per run drains the queue in groups (all
//! that is waiting, up to [`MAX_GROUP`]: the events emitted while the previous group was
//! being committed), appends each group in one transaction through [`RunLog::append`], and
//! only then hands the stored events (numbered by the store) to the sinks behind it: the
//! terminal, the JSONL writer, metrics. Nobody is shown an event that is not stored.
//!
//! [`LogWriter::finish`] goes through the same queue, so the run's `complete` follows every
//! event emitted before it.
//!
//! A refusal by the fence (another worker holds the run, or its lease ran out by the
//! database's clock) is not an error to log and go on from: the run is no longer this
//! writer's. [`LogWriter::fenced`] hands the owner a token that is cancelled then, so it drops
//! the run as it would for a lease it failed to renew.

use crate::runlog::{Draft, Finished, Logged, RunEnd, RunLog};
use crate::{Result, StoreError};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use wright_events::{Event, EventSink, Seq};

/// The most events committed in one transaction.
pub const MAX_GROUP: usize = 256;

/// Tries of a write the database refused for a passing reason (busy, I/O), with a growing wait.
const TRIES: u32 = 4;

enum Job {
    Event(Draft),
    Finish(Box<RunEnd>, oneshot::Sender<Result<Finished>>),
    Flush(oneshot::Sender<()>),
}

/// Stores a run's events in order, then shows them to the sinks behind it.
pub struct LogWriter {
    jobs: mpsc::UnboundedSender<Job>,
    failures: Arc<AtomicU64>,
}

impl LogWriter {
    /// Start the writer task of `run` (on the current tokio runtime). `writer` is the fencing
    /// token (see [`RunLog`]); `sinks` see each event once it is stored, in order.
    pub fn start(log: Arc<dyn RunLog>, run: &str, writer: Option<&str>, sinks: Vec<Arc<dyn EventSink>>) -> Arc<Self> {
        Self::fenced(log, run, writer, sinks, CancellationToken::new())
    }

    /// [`LogWriter::start`], cancelling `refused` when the store refuses this writer an append
    /// or the run's end because it no longer holds the run ([`StoreError::NotHolder`]).
    pub fn fenced(
        log: Arc<dyn RunLog>,
        run: &str,
        writer: Option<&str>,
        sinks: Vec<Arc<dyn EventSink>>,
        refused: CancellationToken,
    ) -> Arc<Self> {
        let (jobs, rx) = mpsc::unbounded_channel();
        let failures = Arc::new(AtomicU64::new(0));
        let task = Task {
            log,
            run: run.to_string(),
            writer: writer.map(str::to_string),
            sinks,
            failures: failures.clone(),
            last: Seq(0),
            refused: false,
            on_refused: refused,
        };
        tokio::spawn(task.run(rx));
        Arc::new(Self { jobs, failures })
    }

    /// Wait until every event accepted so far is stored and shown.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.jobs.send(Job::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }

    /// End the run after every event accepted so far (see [`RunLog::finish`]); the events it
    /// stores are shown to the sinks before this returns.
    pub async fn finish(&self, end: RunEnd) -> Result<Finished> {
        let (done, wait) = oneshot::channel();
        self.jobs
            .send(Job::Finish(Box::new(end), done))
            .map_err(|_| StoreError::Unsupported("the run's event writer has stopped".into()))?;
        wait.await.map_err(|_| StoreError::Unsupported("the run's event writer has stopped".into()))?
    }

    /// Events that could not be stored so far (each is also logged).
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }
}

impl EventSink for LogWriter {
    fn accept(&self, event: &Event) {
        let draft = Draft { ts: event.ts.clone(), kind: event.kind.clone() };
        if self.jobs.send(Job::Event(draft)).is_err() {
            self.failures.fetch_add(1, Ordering::Relaxed);
        }
    }
}

struct Task {
    log: Arc<dyn RunLog>,
    run: String,
    writer: Option<String>,
    sinks: Vec<Arc<dyn EventSink>>,
    failures: Arc<AtomicU64>,
    /// The last `seq` shown.
    last: Seq,
    /// The store refused this writer (the run ended, or another worker holds it): later
    /// events are not tried again, only shown.
    refused: bool,
    /// Cancelled at the first refusal, for the run's owner.
    on_refused: CancellationToken,
}

/// Whether a failed write may succeed if tried again.
fn passing(e: &StoreError) -> bool {
    matches!(e, StoreError::Database(_))
}

/// `attempt`, tried again (up to [`TRIES`] times, waiting longer each time) while the database
/// refuses it for a passing reason.
async fn retrying<T, F, Fut>(run: &str, what: &str, mut attempt: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let mut tries = 0;
    loop {
        match attempt().await {
            Err(e) if passing(&e) && tries + 1 < TRIES => {
                tracing::warn!(run, tries, "{what}, trying again: {e}");
                tokio::time::sleep(Duration::from_millis(100 << tries)).await;
                tries += 1;
            }
            other => return other,
        }
    }
}

impl Task {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Job>) {
        let mut group = Vec::new();
        while let Some(job) = rx.recv().await {
            let mut then = None;
            match job {
                Job::Event(d) => group.push(d),
                other => then = Some(other),
            }
            while then.is_none() && group.len() < MAX_GROUP {
                match rx.try_recv() {
                    Ok(Job::Event(d)) => group.push(d),
                    Ok(other) => then = Some(other),
                    Err(_) => break,
                }
            }
            if !group.is_empty() {
                self.store(std::mem::take(&mut group)).await;
            }
            match then {
                Some(Job::Finish(end, done)) => {
                    let finished = self.finish(*end).await;
                    let _ = done.send(finished);
                }
                Some(Job::Flush(done)) => {
                    let _ = done.send(());
                }
                Some(Job::Event(_)) | None => {}
            }
        }
    }

    async fn store(&mut self, group: Vec<Draft>) {
        let result = if self.refused {
            Err(StoreError::Unsupported("refused before".into()))
        } else {
            let (log, run, writer) = (self.log.clone(), self.run.clone(), self.writer.clone());
            retrying(&self.run, "storing events", || log.append(&run, writer.as_deref(), group.clone())).await
        };
        let logged = match result {
            Ok(logged) => logged,
            Err(e) => {
                if matches!(e, StoreError::NotHolder(_) | StoreError::Ended(_)) {
                    self.refused = true;
                }
                // Not for `Ended`: an event after the run's own ending is late, not lost.
                if matches!(e, StoreError::NotHolder(_)) {
                    self.on_refused.cancel();
                }
                if !matches!(e, StoreError::Unsupported(_)) {
                    tracing::error!(run = %self.run, events = group.len(), "events not stored: {e}");
                }
                self.failures.fetch_add(group.len() as u64, Ordering::Relaxed);
                // Shown all the same: a terminal still tells its user what happened.
                self.unstored(group)
            }
        };
        self.show(&logged);
    }

    async fn finish(&mut self, end: RunEnd) -> Result<Finished> {
        let (log, run, writer) = (self.log.clone(), self.run.clone(), self.writer.clone());
        let result = retrying(&self.run, "ending the run", || log.finish(&run, writer.as_deref(), end.clone())).await;
        match &result {
            Ok(Finished::Now(logged)) => self.show(logged),
            Ok(Finished::Already { .. }) => {}
            Err(e) => {
                if matches!(e, StoreError::NotHolder(_)) {
                    self.refused = true;
                    self.on_refused.cancel();
                }
                tracing::error!(run = %self.run, "the run's end not stored: {e}");
                // The terminal still sees how it ended.
                let mut words: Vec<Draft> = end.last_words.into_iter().map(Draft::now).collect();
                words.push(Draft::now(end.complete));
                let shown = self.unstored(words);
                self.show(&shown);
            }
        }
        result
    }

    /// Events the store did not take, numbered after the last one shown.
    fn unstored(&self, drafts: Vec<Draft>) -> Vec<Arc<Logged>> {
        drafts
            .into_iter()
            .zip(self.last.0 + 1..)
            .map(|(d, seq)| {
                Arc::new(Logged::new(Event { seq: Seq(seq), build: self.run.clone(), ts: d.ts, kind: d.kind }))
            })
            .collect()
    }

    fn show(&mut self, logged: &[Arc<Logged>]) {
        for l in logged {
            self.last = l.event.seq;
            for sink in &self.sinks {
                sink.accept(&l.event);
            }
        }
    }
}
