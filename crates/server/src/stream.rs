//! Following a build's events: stored ones first, then live ones, with no gap and no duplicate.
//!
//! The follower joins the build's channel *before* reading the store. Events are stored before
//! they are broadcast, so anything broadcast after joining arrives live and anything stored
//! before the read is in the read; an event in both is recognised by its `seq` and sent once.
//! A gap in the live `seq`s, a lagging receiver or a closed channel all mean "read the store
//! again from the last `seq` sent". When another process runs the build, the hub's one relay
//! per build feeds the channel from the store. The build never waits for a follower: followers
//! wait for it.

use crate::hub::{Frame, Hub};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use wright_store::Store;

/// Frames a follower buffers for its client before it stops taking live events and later
/// catches up from the store.
const CLIENT_BUFFER: usize = 256;

/// After this long with no live event, a follower looks at the store itself.
const QUIET: Duration = Duration::from_secs(15);

/// Start following `build` after `after`; frames arrive on the receiver, which ends after
/// `complete` (or when `stop` fires). Dropping the receiver (the client went away) ends the
/// follower; the build goes on.
pub fn follow(
    store: Arc<dyn Store>,
    hub: Hub,
    build: String,
    after: u64,
    poll: Duration,
    stop: CancellationToken,
) -> mpsc::Receiver<Arc<Frame>> {
    let (tx, rx) = mpsc::channel(CLIENT_BUFFER);
    tokio::spawn(async move {
        tokio::select! {
            _ = pump(store.as_ref(), &hub, &build, after, &tx, poll) => {}
            _ = stop.cancelled() => {}
            _ = tx.closed() => {}
        }
    });
    rx
}

/// Whether the follower should go on.
enum Next {
    Continue,
    Done,
}

async fn send(tx: &mpsc::Sender<Arc<Frame>>, frame: Arc<Frame>, last: &mut u64) -> Next {
    *last = frame.seq;
    let done = frame.complete;
    if tx.send(frame).await.is_err() || done { Next::Done } else { Next::Continue }
}

async fn pump(store: &dyn Store, hub: &Hub, build: &str, mut last: u64, tx: &mpsc::Sender<Arc<Frame>>, poll: Duration) {
    let mut sub = hub.subscribe(build);
    // Times the store had nothing new for a build whose record is final. The record is
    // finished just before `complete` is stored, so one look is not proof of the end.
    let mut ended_looks = 0u32;
    loop {
        // Catch up from the store.
        match hub.events(build, last).await {
            Ok(events) => {
                let empty = events.is_empty();
                for e in events {
                    if e.seq != last + 1 {
                        tracing::warn!(build, seq = e.seq, last, "stored events have a gap");
                    }
                    if let Next::Done = send(tx, Arc::new(Frame::of(&e)), &mut last).await {
                        return;
                    }
                }
                // Nothing more will come for a build that has ended: its `complete` was sent
                // before (a resume after it), or it is about to be stored.
                if empty && store.build(build).await.map(|b| b.status.is_final()).unwrap_or(true) {
                    let tail = hub.events(build, last.saturating_sub(1)).await.unwrap_or_default();
                    if tail.first().is_some_and(|e| e.kind.type_name() == "complete") {
                        return;
                    }
                    ended_looks += 1;
                    if ended_looks > 3 {
                        return;
                    }
                }
            }
            Err(e) => {
                tracing::warn!(build, "reading events: {e}");
                tokio::time::sleep(poll).await;
                continue;
            }
        }
        // Then live, until something says "read the store again". A long quiet spell also
        // does, cheaply: a safety net, not the way events normally arrive.
        let wait = if ended_looks == 0 { QUIET } else { poll };
        loop {
            let next = match tokio::time::timeout(wait, sub.recv()).await {
                Ok(r) => r,
                Err(_) => break,
            };
            match next {
                Ok(f) if f.seq <= last => continue,
                Ok(f) if f.seq == last + 1 => {
                    if let Next::Done = send(tx, f, &mut last).await {
                        return;
                    }
                }
                // A gap, or this follower fell behind: the store has the missing events.
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => break,
                Err(broadcast::error::RecvError::Closed) => {
                    // The build ended here, or its channel was replaced: the store has the rest.
                    sub = hub.subscribe(build);
                    break;
                }
            }
        }
    }
}
