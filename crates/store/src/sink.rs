//! Persist-before-emit for the synchronous event fan-out.
//!
//! [`wright_events::EventSink::accept`] is synchronous and the store is async, so the sink owns a
//! writer thread with its own small runtime. `accept` hands the event over and waits for the
//! write to finish; sinks registered after this one therefore only see stored events. Waiting
//! on a channel (not `block_on`) keeps it safe to call from any thread or runtime flavour.
//! The writer's runtime runs one long-lived loop rather than a `block_on` per event, so the
//! work a store leaves for its runtime (a pool taking a connection back) is never stranded.

use crate::Store;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use wright_events::{Event, EventSink};

type Job = (Event, mpsc::SyncSender<()>);

/// An [`EventSink`] that writes each event to a [`Store`] before returning.
pub struct PersistSink {
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
    failures: Arc<AtomicU64>,
}

impl PersistSink {
    /// Start the writer thread. A failed write is logged and counted, never fatal: losing the
    /// record of an event is better than stopping the build it describes.
    pub fn new(store: Arc<dyn Store>) -> std::io::Result<Self> {
        let (jobs, mut rx) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let failures = Arc::new(AtomicU64::new(0));
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let failed = failures.clone();
        std::thread::Builder::new().name("wright-persist".into()).spawn(move || {
            runtime.block_on(async move {
                while let Some((event, done)) = rx.recv().await {
                    if let Err(e) = store.append_event(&event).await {
                        failed.fetch_add(1, Ordering::Relaxed);
                        tracing::error!(seq = event.seq, build = %event.build, "event not stored: {e}");
                    }
                    let _ = done.send(());
                }
            });
        })?;
        Ok(Self { jobs, failures })
    }

    /// Events that could not be stored so far.
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }
}

impl EventSink for PersistSink {
    fn accept(&self, event: &Event) {
        let (done, wait) = mpsc::sync_channel(1);
        if self.jobs.send((event.clone(), done)).is_err() {
            self.failures.fetch_add(1, Ordering::Relaxed);
            return;
        }
        // The caller waits until the event is stored: that is what lets a stream resume from
        // the store. Inside a multi-threaded runtime the wait moves this worker's other tasks
        // elsewhere first; otherwise builds emitting at once could occupy every worker while
        // the task holding the database's write lock waits to be polled.
        let waited = match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| wait.recv())
            }
            _ => wait.recv(),
        };
        if waited.is_err() {
            self.failures.fetch_add(1, Ordering::Relaxed);
        }
    }
}
