//! `CONNECT host:port`: a byte tunnel to an allowed host. HTTPS stays end to end between the
//! sandbox and the outside (no interception); the proxy only counts the bytes.

use crate::policy::normalize_host;
use crate::report::OutsideRequest;
use crate::shared::{Answer, State, elapsed_ms, host_label, text};
use hyper::body::Incoming;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// How one direction of a tunnel ended.
enum Flow {
    /// The sender closed its side; the other direction may go on.
    Done,
    /// The byte budget ran out.
    Cut,
    Broken,
}

pub(crate) async fn connect(st: Arc<State>, req: Request<Incoming>, started: Instant) -> Answer {
    let method = "CONNECT";
    let raw = req.uri().authority().map(|a| a.to_string()).unwrap_or_default();
    let (Some(host), Some(port)) = (req.uri().host().and_then(normalize_host), req.uri().port_u16()) else {
        let reason = format!("CONNECT needs host:port, not `{raw}`");
        return st.refuse(StatusCode::BAD_REQUEST, &raw, method, None, reason, started);
    };
    let label = host_label(&host, port);
    if !st.policy.allow.allows(&host, port) {
        let reason = format!("{label} is not on this build's list of allowed hosts");
        return st.refuse(StatusCode::FORBIDDEN, &label, method, None, reason, started);
    }
    if let Err(reason) = st.admit() {
        return st.refuse(StatusCode::TOO_MANY_REQUESTS, &label, method, None, reason, started);
    }
    let upstream = match tokio::time::timeout(Duration::from_secs(10), TcpStream::connect((host.as_str(), port))).await
    {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return unreachable(&st, &label, format!("{label} could not be reached: {e}"), started),
        Err(_) => return unreachable(&st, &label, format!("{label} did not answer within 10 s"), started),
    };
    tokio::spawn(async move {
        let (bytes, reason) = match hyper::upgrade::on(req).await {
            Ok(up) => pump(TokioIo::new(up), upstream, &st).await,
            Err(e) => (0, Some(format!("the tunnel was not taken up: {e}"))),
        };
        st.report(OutsideRequest {
            host: label,
            method: method.into(),
            status: 200,
            bytes,
            duration_ms: elapsed_ms(started),
            allowed: true,
            api: None,
            reason,
        });
    });
    text(StatusCode::OK, String::new())
}

fn unreachable(st: &State, label: &str, reason: String, started: Instant) -> Answer {
    st.report(OutsideRequest {
        host: label.to_string(),
        method: "CONNECT".into(),
        status: 502,
        bytes: 0,
        duration_ms: elapsed_ms(started),
        allowed: true,
        api: None,
        reason: Some(reason.clone()),
    });
    text(StatusCode::BAD_GATEWAY, format!("wright's egress proxy: {reason}\n"))
}

/// Copies both ways until both sides are done, the budget runs out or the proxy stops.
/// Returns the bytes carried and, when cut short, why.
async fn pump<A>(inside: A, outside: TcpStream, st: &State) -> (u64, Option<String>)
where
    A: AsyncRead + AsyncWrite + Unpin,
{
    let carried = AtomicU64::new(0);
    let (mut ir, mut iw) = tokio::io::split(inside);
    let (mut or, mut ow) = outside.into_split();
    let up = copy(&mut ir, &mut ow, st, &carried);
    let down = copy(&mut or, &mut iw, st, &carried);
    tokio::pin!(up, down);
    let (mut up_done, mut down_done) = (false, false);
    let mut reason = None;
    while !(up_done && down_done) {
        let flow = tokio::select! {
            f = &mut up, if !up_done => { up_done = true; f }
            f = &mut down, if !down_done => { down_done = true; f }
            _ = st.stop.cancelled() => { reason = Some("the build ended".to_string()); break }
        };
        match flow {
            Flow::Done => {}
            Flow::Cut => {
                reason = Some("cut off: this build's outside-traffic budget is used up".into());
                break;
            }
            Flow::Broken => break,
        }
    }
    (carried.load(Ordering::Relaxed), reason)
}

async fn copy<R, W>(r: &mut R, w: &mut W, st: &State, carried: &AtomicU64) -> Flow
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) => {
                let _ = w.shutdown().await;
                return Flow::Done;
            }
            Ok(n) => n,
            Err(_) => return Flow::Broken,
        };
        if !st.take(n as u64) {
            return Flow::Cut;
        }
        if w.write_all(&buf[..n]).await.is_err() {
            return Flow::Broken;
        }
        carried.fetch_add(n as u64, Ordering::Relaxed);
    }
}
