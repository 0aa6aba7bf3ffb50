//! Following a build's events for a client: the store's own subscription ([`RunLog::subscribe`]:
//! stored events, then live ones, no gap, no duplicate, ending after `complete`), cut short
//! when the server stops. The build never waits for a follower: followers wait for it, and a
//! client that goes away (the stream is dropped) stops its follower.

use axum::http::{HeaderValue, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
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

/// A run's events (as [`follow`] replays then follows them) as a server-sent event stream, the
/// one way builds and chat turns are sent: `id:` is the event's `seq` (so `Last-Event-ID`
/// resumes exactly), `event:` and `data:` are what `render` makes of it, a `heartbeat` comment
/// every `heartbeat` keeps proxies from closing an idle stream, and neither proxies nor
/// browsers keep or buffer it.
pub fn sse<F>(heartbeat: Duration, frames: impl Stream<Item = Arc<Logged>> + Send + 'static, render: F) -> Response
where
    F: Fn(&Logged) -> (&'static str, String) + Send + Sync + 'static,
{
    let events = frames.map(move |f| {
        let (name, data) = render(&f);
        Ok::<_, Infallible>(SseEvent::default().id(f.event.seq.to_string()).event(name).data(data))
    });
    let mut res = Sse::new(events).keep_alive(KeepAlive::new().interval(heartbeat).text("heartbeat")).into_response();
    // Proxies must not buffer the stream.
    res.headers_mut().insert("x-accel-buffering", HeaderValue::from_static("no"));
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use wright_events::{Event, EventKind};

    #[tokio::test]
    async fn one_builder_sends_every_stream_the_same_way() {
        let logged = |seq| {
            let kind = EventKind::Queued { position: seq };
            Arc::new(Logged::new(Event { seq: wright_events::Seq(seq), build: "b".into(), ts: String::new(), kind }))
        };
        let frames = futures::stream::iter([logged(1), logged(2)]);
        let res = sse(Duration::from_secs(30), frames, |l| ("queued", format!("q{}", l.event.seq)));
        let h = res.headers();
        assert_eq!(h[header::CONTENT_TYPE], "text/event-stream");
        assert_eq!(h[header::CACHE_CONTROL], "no-store");
        assert_eq!(h["x-accel-buffering"], "no");
        let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
        assert_eq!(
            std::str::from_utf8(&body).unwrap(),
            "id: 1\nevent: queued\ndata: q1\n\nid: 2\nevent: queued\ndata: q2\n\n"
        );
    }
}
