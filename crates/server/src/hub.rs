//! One broadcast channel per build for live fan-out. The store is the source of truth; the
//! hub only spares subscribers a database read per event. Events reach the hub after they are
//! stored (the persisting sink comes first), so a subscriber that joins the channel and then
//! reads the store sees every event exactly once (see `stream`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;
use wright_events::{Event, EventSink};

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

/// The per-build channels of this process.
#[derive(Default, Clone)]
pub struct Hub {
    channels: Arc<Mutex<HashMap<String, Channel>>>,
}

/// What a subscriber gets: the receiver, and whether this process runs the build (if not,
/// the subscriber also watches the store, where another process writes).
pub struct Subscription {
    pub rx: broadcast::Receiver<Arc<Frame>>,
    pub local: bool,
}

impl Hub {
    fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, Channel>) -> R) -> R {
        let mut map = match self.channels.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut map)
    }

    pub fn subscribe(&self, build: &str) -> Subscription {
        self.with(|m| {
            let ch = m
                .entry(build.to_string())
                .or_insert_with(|| Channel { tx: broadcast::channel(CAPACITY).0, local: false });
            Subscription { rx: ch.tx.subscribe(), local: ch.local }
        })
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
        HubSink { tx }
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
}

impl EventSink for HubSink {
    fn accept(&self, event: &Event) {
        let _ = self.tx.send(Arc::new(Frame::of(event)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wright_events::{Emitter, Level};

    #[tokio::test]
    async fn subscribers_get_events_and_close_ends_them() {
        let hub = Hub::default();
        let mut a = hub.subscribe("b1");
        assert!(!a.local);
        let sink = Arc::new(hub.open("b1"));
        let em = Emitter::new("b1", vec![sink]);
        em.status(Level::Info, "one");
        em.status(Level::Info, "two");
        hub.close("b1");
        let f1 = a.rx.recv().await.unwrap();
        let f2 = a.rx.recv().await.unwrap();
        assert_eq!((f1.seq, f2.seq), (1, 2));
        assert_eq!(f1.kind, "status");
        assert!(f2.json.contains("\"two\""));
        drop(em);
        assert!(a.rx.recv().await.is_err(), "closed after the sender is gone");
        assert!(hub.is_empty());
    }
}
