//! Following a build's events for a client: the store's own subscription ([`RunLog::subscribe`]:
//! stored events, then live ones, no gap, no duplicate, ending after `complete`), cut short
//! when the server stops. The build never waits for a follower: followers wait for it, and a
//! client that goes away (the stream is dropped) stops its follower.

use futures::StreamExt;
use futures::stream::BoxStream;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_store::{Logged, Store};

/// The events of `build` after `after`, until `complete` or `stop`. A read the store refuses
/// is logged; the subscription reads again after its safety-net wait.
pub fn follow(
    store: Arc<dyn Store>,
    build: &str,
    after: u64,
    stop: CancellationToken,
) -> BoxStream<'static, Arc<Logged>> {
    let run = build.to_string();
    store
        .subscribe(build, after)
        .filter_map(move |item| {
            let logged = match item {
                Ok(l) => Some(l),
                Err(e) => {
                    tracing::warn!(build = %run, "reading events: {e}");
                    None
                }
            };
            std::future::ready(logged)
        })
        .take_until(stop.cancelled_owned())
        .boxed()
}
