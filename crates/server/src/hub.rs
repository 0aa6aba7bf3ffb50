//! One broadcast channel per build for live fan-out. The store is the source of truth; the
//! hub only spares subscribers a database read per event. Events reach the hub after they are
//! stored (the persisting sink comes first), so a subscriber that joins the channel and then
//! reads the store sees every event exactly once (see `stream`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast;
use wright_events::{Event, EventSink};
use wright_store::Store;

/// Live events a channel holds for a slow subscriber before it lags (and goes back to the store).
const CAPACITY: usize = 1024;

/// An event serialised once for every subscriber.
#[derive(Debug)]
pub struct Frame {
    pub seq: u64,
    pub kind: &'static str,
    pub json: String,
    pub complete: bool,
}

impl Frame {
    pub fn of(event: &Event) -> Self {
        Self {
            seq: event.seq,
            kind: event.kind.type_name(),
            json: event.to_json_line(),
            complete: event.kind.type_name() == "complete",
        }
    }
}

struct Channel {
    tx: broadcast::Sender<Arc<Frame>>,
    /// A worker of this process runs the build, so everything it emits comes through here.
    local: bool,
}

/// The per-build channels of this process. For a build that no worker here runs (queued, or
/// running on another server), one relay per build reads the store and feeds the channel, so
/// a thousand followers cost one query per poll, not a thousand.
#[derive(Clone)]
pub struct Hub {
    channels: Arc<Mutex<HashMap<String, Channel>>>,
    store: Arc<dyn Store>,
    poll: Duration,
    /// Followers' catch-up reads share a few database connections, so a thousand followers
    /// arriving at once cannot starve the writes that run builds and renew their leases.
    reads: Arc<tokio::sync::Semaphore>,
}

/// How many follower reads of the store may run at once.
const READERS: usize = 3;

impl Hub {
    pub fn new(store: Arc<dyn Store>, poll: Duration) -> Self {
        Self { channels: Arc::default(), store, poll, reads: Arc::new(tokio::sync::Semaphore::new(READERS)) }
    }

    /// A build's stored events after `after`, read through the followers' share of the store.
    pub async fn events(&self, build: &str, after: u64) -> wright_store::Result<Vec<Event>> {
        let _permit = self.reads.acquire().await.map_err(|e| wright_store::StoreError::Unsupported(e.to_string()))?;
        self.store.events(build, after).await
    }

    fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, Channel>) -> R) -> R {
        let mut map = match self.channels.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut map)
    }

    /// Live events of `build` from now on (the follower reads what came before from the store).
    pub fn subscribe(&self, build: &str) -> broadcast::Receiver<Arc<Frame>> {
        let (rx, relay) = self.with(|m| {
            if let Some(ch) = m.get(build) {
                return (ch.tx.subscribe(), None);
            }
            let (tx, rx) = broadcast::channel(CAPACITY);
            m.insert(build.to_string(), Channel { tx: tx.clone(), local: false });
            (rx, Some(tx))
        });
        if let Some(tx) = relay {
            tokio::spawn(self.clone().relay(build.to_string(), tx));
        }
        rx
    }

    fn current(&self, build: &str, tx: &broadcast::Sender<Arc<Frame>>) -> Option<bool> {
        self.with(|m| m.get(build).filter(|c| c.tx.same_channel(tx)).map(|c| c.local))
    }

    /// Feed a channel from the store while no worker of this process runs the build.
    async fn relay(self, build: String, tx: broadcast::Sender<Arc<Frame>>) {
        // One step back: the last stored event is sent again, so a `complete` stored between a
        // follower's own read and this one still reaches it (followers skip a `seq` they have,
        // and a gap before a later one sends them back to the store).
        let mut last = self.store.last_seq(&build).await.unwrap_or(0).saturating_sub(1);
        loop {
            tokio::time::sleep(self.poll).await;
            match self.current(&build, &tx) {
                // Closed, replaced, or a worker here took the build over: it publishes now.
                None | Some(true) => return,
                Some(false) => {}
            }
            if tx.receiver_count() == 0 {
                self.with(|m| {
                    if m.get(&build).is_some_and(|c| c.tx.same_channel(&tx) && !c.local) {
                        m.remove(&build);
                    }
                });
                return;
            }
            match self.events(&build, last).await {
                Ok(events) => {
                    for e in events {
                        last = e.seq;
                        let frame = Arc::new(Frame::of(&e));
                        let done = frame.complete;
                        let _ = tx.send(frame);
                        if done {
                            self.close(&build);
                            return;
                        }
                    }
                }
                Err(e) => tracing::warn!(build, "relaying events: {e}"),
            }
        }
    }

    /// A worker of this process starts running `build`: its events go out through the sink.
    pub fn open(&self, build: &str) -> HubSink {
        let tx = self.with(|m| {
            let ch = m
                .entry(build.to_string())
                .or_insert_with(|| Channel { tx: broadcast::channel(CAPACITY).0, local: true });
            ch.local = true;
            ch.tx.clone()
        });
        HubSink { tx, silent: AtomicBool::new(false) }
    }

    /// Send one stored event to the build's subscribers (for events the server writes itself).
    pub fn publish(&self, event: &Event) {
        let tx = self.with(|m| m.get(&event.build).map(|c| c.tx.clone()));
        if let Some(tx) = tx {
            let _ = tx.send(Arc::new(Frame::of(event)));
        }
    }

    /// The build ended: drop its channel, so subscribers drain what is left and finish.
    pub fn close(&self, build: &str) {
        self.with(|m| m.remove(build));
    }

    /// Channels open now (for tests and metrics).
    pub fn len(&self) -> usize {
        self.with(|m| m.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The hub end of a running build's event fan-out. Sending never waits: a subscriber that
/// cannot keep up lags and reads the store instead, so nobody slows the build.
pub struct HubSink {
    tx: broadcast::Sender<Arc<Frame>>,
    silent: AtomicBool,
}

impl HubSink {
    /// Send nothing more: the run was interrupted, and the store now says what comes next.
    pub fn silence(&self) {
        self.silent.store(true, Ordering::SeqCst);
    }
}

impl EventSink for HubSink {
    fn accept(&self, event: &Event) {
        if !self.silent.load(Ordering::SeqCst) {
            let _ = self.tx.send(Arc::new(Frame::of(event)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wright_events::{Emitter, Level};

    #[tokio::test]
    async fn subscribers_get_events_and_close_ends_them() {
        let store: Arc<dyn Store> = Arc::new(wright_store::SqliteStore::memory().await.unwrap());
        let hub = Hub::new(store, Duration::from_millis(50));
        let mut a = hub.subscribe("b1");
        let sink = Arc::new(hub.open("b1"));
        let em = Emitter::new("b1", vec![sink]);
        em.status(Level::Info, "one");
        em.status(Level::Info, "two");
        hub.close("b1");
        let f1 = a.recv().await.unwrap();
        let f2 = a.recv().await.unwrap();
        assert_eq!((f1.seq, f2.seq), (1, 2));
        assert_eq!(f1.kind, "status");
        assert!(f2.json.contains("\"two\""));
        drop(em);
        assert!(a.recv().await.is_err(), "closed after the sender is gone");
        assert!(hub.is_empty());
    }

    #[tokio::test]
    async fn a_build_run_elsewhere_is_relayed_from_the_store_once_for_all_followers() {
        let store: Arc<dyn Store> = Arc::new(wright_store::SqliteStore::memory().await.unwrap());
        let hub = Hub::new(store.clone(), Duration::from_millis(20));
        let (mut a, mut b) = (hub.subscribe("b2"), hub.subscribe("b2"));
        tokio::time::sleep(Duration::from_millis(50)).await; // the relay has started
        // Another process writes the events; only the store sees them.
        for (seq, kind) in [
            (1, wright_events::EventKind::Status { level: Level::Info, message: "from elsewhere".into() }),
            (2, wright_events::EventKind::Error { message: "x".into() }),
        ] {
            let e = Event { seq, build: "b2".into(), ts: wright_events::now(), kind };
            store.append_event(&e).await.unwrap();
        }
        for rx in [&mut a, &mut b] {
            let f = rx.recv().await.unwrap();
            assert_eq!((f.seq, f.kind), (1, "status"));
            assert_eq!(rx.recv().await.unwrap().seq, 2);
        }
        drop((a, b));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(hub.is_empty(), "the relay stops when nobody follows");
    }
}
