//! Telling waiters that something was stored, so nobody has to poll for it.
//!
//! The store calls a [`Notifier`] after each commit: events appended to a run, a build queued,
//! a cancel asked for. [`LocalNotifier`] is an in-process broadcast (one channel per run that
//! someone follows, so a thousand followers cost one send); a PostgreSQL store will implement
//! the same trait over `LISTEN`/`NOTIFY`. A notice is a hint, never the data of record:
//! whoever receives one still trusts the store, and a missed notice costs at most the
//! follower's safety-net wait ([`crate::runlog::SAFETY_NET`]).

use crate::logged::Logged;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// Live events a run's channel holds for a slow follower before it lags (and reads the store).
const CAPACITY: usize = 1024;

/// Work that someone may be waiting for, other than a run's events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// A build was put in the queue (new, or back after an interruption).
    Queued,
    /// Someone asked for this run to stop.
    Cancel(String),
}

/// Wakes the followers of runs and the workers of the queue after the store commits.
pub trait Notifier: Send + Sync {
    /// `events` of `run` were committed, in `seq` order.
    fn appended(&self, run: &str, events: &[Arc<Logged>]);
    /// Events of `run` committed from now on. Join before reading the store, so that nothing
    /// committed in between is missed (a follower drops what it already has by `seq`).
    fn follow(&self, run: &str) -> broadcast::Receiver<Arc<Logged>>;
    /// The run ended: its channel can go once its followers have drained it.
    fn ended(&self, run: &str);
    fn signal(&self, signal: Signal);
    fn signals(&self) -> broadcast::Receiver<Signal>;
}

/// [`Notifier`] within one process.
pub struct LocalNotifier {
    runs: Mutex<HashMap<String, broadcast::Sender<Arc<Logged>>>>,
    signals: broadcast::Sender<Signal>,
}

impl Default for LocalNotifier {
    fn default() -> Self {
        Self { runs: Mutex::default(), signals: broadcast::channel(CAPACITY).0 }
    }
}

impl LocalNotifier {
    fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, broadcast::Sender<Arc<Logged>>>) -> R) -> R {
        // A poisoned map only means a thread panicked while holding it; the map is still valid.
        let mut map = match self.runs.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut map)
    }

    /// Runs with a channel open (for tests and metrics).
    pub fn channels(&self) -> usize {
        self.with(|m| m.len())
    }

    /// Whether anyone here follows `run` (a shared store reads another process's events only
    /// for runs someone follows).
    pub fn is_followed(&self, run: &str) -> bool {
        self.with(|m| m.get(run).is_some_and(|tx| tx.receiver_count() > 0))
    }

    /// Close every run's channel: each follower reads the store again (after notices may have
    /// been missed).
    pub fn close_all(&self) {
        self.with(|m| m.clear());
    }
}

impl Notifier for LocalNotifier {
    fn appended(&self, run: &str, events: &[Arc<Logged>]) {
        self.with(|m| {
            let Some(tx) = m.get(run) else { return };
            if tx.receiver_count() == 0 {
                m.remove(run);
                return;
            }
            for e in events {
                let _ = tx.send(e.clone());
            }
        });
    }

    fn follow(&self, run: &str) -> broadcast::Receiver<Arc<Logged>> {
        self.with(|m| match m.get(run) {
            Some(tx) => tx.subscribe(),
            None => {
                // Channels of runs that ended with nobody left on them go as new ones come.
                if m.len() >= 64 {
                    m.retain(|_, tx| tx.receiver_count() > 0);
                }
                let (tx, rx) = broadcast::channel(CAPACITY);
                m.insert(run.to_string(), tx);
                rx
            }
        })
    }

    fn ended(&self, run: &str) {
        // Dropping the sender closes the channel after what it holds has been received.
        self.with(|m| m.remove(run));
    }

    fn signal(&self, signal: Signal) {
        let _ = self.signals.send(signal);
    }

    fn signals(&self) -> broadcast::Receiver<Signal> {
        self.signals.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wright_events::{Event, EventKind, Level};

    fn logged(seq: u64) -> Arc<Logged> {
        let kind = EventKind::Status { message: format!("e{seq}"), level: Level::Info };
        Arc::new(Logged::new(Event { seq: wright_events::Seq(seq), build: "r".into(), ts: wright_events::now(), kind }))
    }

    #[tokio::test]
    async fn followers_get_what_is_appended_after_they_join_and_the_end_closes() {
        let n = LocalNotifier::default();
        n.appended("r", &[logged(1)]); // nobody follows: dropped, no channel kept
        assert_eq!(n.channels(), 0);
        let mut a = n.follow("r");
        let mut b = n.follow("r");
        n.appended("r", &[logged(2), logged(3)]);
        n.ended("r");
        for rx in [&mut a, &mut b] {
            assert_eq!(rx.recv().await.unwrap().event.seq, 2);
            assert_eq!(rx.recv().await.unwrap().event.seq, 3);
            assert!(matches!(rx.recv().await, Err(broadcast::error::RecvError::Closed)));
        }
        assert_eq!(n.channels(), 0);
    }

    #[tokio::test]
    async fn a_channel_nobody_follows_any_more_is_dropped() {
        let n = LocalNotifier::default();
        drop(n.follow("r"));
        n.appended("r", &[logged(1)]);
        assert_eq!(n.channels(), 0);
        let mut s = n.signals();
        n.signal(Signal::Cancel("r".into()));
        assert_eq!(s.recv().await.unwrap(), Signal::Cancel("r".into()));
    }
}
