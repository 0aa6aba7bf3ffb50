//! The proxy's listeners and request routing: one Unix socket (the sandbox bridge's way in)
//! and one loopback TCP port (wright's own host-side callers: the browser check, a preview's
//! relay), both serving the same rules.
//!
//! Any local process can connect to a loopback port, so the TCP port answers only requests
//! that carry the build's token (`Proxy-Authorization: Basic` with the token as password, or
//! `Bearer <token>`); without it, `403` and nothing is counted or reported. The Unix socket
//! needs no token: it lives in a folder only wright's user can enter (mode 0700), and the
//! sandbox reaches it only through the mount wright makes, so holding it is the capability.

use crate::policy::EgressPolicy;
use crate::report::Sink;
use crate::shared::{Answer, State, text};
use hyper::body::Incoming;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;
use wright_sandbox::SocketDir;

/// The proxy's socket file in the folder it is given.
pub const SOCKET_NAME: &str = "egress.sock";

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    #[error("the egress proxy must be started inside a tokio runtime")]
    NoRuntime,
    #[error("the egress proxy could not listen: {0}")]
    Listen(#[from] std::io::Error),
    #[error("the egress proxy's HTTP client could not be made: {0}")]
    Client(String),
}

/// One build's proxy. It stops (and its socket goes) when dropped.
pub struct Proxy {
    tcp: SocketAddr,
    socket: PathBuf,
    dir: SocketDir,
    state: Arc<State>,
}

impl Proxy {
    /// Listens on `<dir>/egress.sock` (reached through a short name, so `dir` may be long) and
    /// on a free loopback port, and serves `policy` until dropped. Needs a tokio runtime.
    pub fn start(policy: EgressPolicy, dir: &Path, sink: Sink) -> Result<Self, EgressError> {
        let handle = tokio::runtime::Handle::try_current().map_err(|_| EgressError::NoRuntime)?;
        let sockets = SocketDir::open(dir)?;
        let short = sockets.path(SOCKET_NAME);
        match std::fs::remove_file(&short) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
        let unix = std::os::unix::net::UnixListener::bind(&short)?;
        // The sandbox user (uid 65534 when wright is root) must be able to connect.
        std::fs::set_permissions(&short, std::fs::Permissions::from_mode(0o666))?;
        unix.set_nonblocking(true)?;
        let tcp = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        tcp.set_nonblocking(true)?;
        let addr = tcp.local_addr()?;
        let client = reqwest::Client::builder()
            // Never through the host's own proxy settings, and never follow a redirect to a
            // host the allow-list did not check.
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| EgressError::Client(e.to_string()))?;
        let state = Arc::new(State {
            policy,
            sink,
            client,
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            stop: CancellationToken::new(),
            token: uuid::Uuid::new_v4().simple().to_string(),
        });
        let _in_runtime = handle.enter();
        let unix = tokio::net::UnixListener::from_std(unix)?;
        let tcp = tokio::net::TcpListener::from_std(tcp)?;
        let st = state.clone();
        handle.spawn(async move {
            loop {
                tokio::select! {
                    _ = st.stop.cancelled() => return,
                    r = unix.accept() => accepted(r.map(|(s, _)| s), &st, Door::Socket).await,
                }
            }
        });
        let st = state.clone();
        handle.spawn(async move {
            loop {
                tokio::select! {
                    _ = st.stop.cancelled() => return,
                    r = tcp.accept() => accepted(r.map(|(s, _)| s), &st, Door::Port).await,
                }
            }
        });
        Ok(Self { tcp: addr, socket: dir.join(SOCKET_NAME), dir: sockets, state })
    }

    /// The loopback address (its callers need [`Proxy::token`]).
    pub fn tcp_addr(&self) -> SocketAddr {
        self.tcp
    }

    /// The secret the loopback port asks of every request. Never put it where a build's
    /// commands or a page could read it: they reach the proxy through the socket or a relay.
    pub fn token(&self) -> &str {
        &self.state.token
    }

    /// The loopback port as a proxy URL with the token as its credentials
    /// (`http://wright:<token>@127.0.0.1:<port>`), the form HTTP clients send as
    /// `Proxy-Authorization: Basic` on every request and `CONNECT`.
    pub fn proxy_url(&self) -> String {
        format!("http://wright:{}@{}", self.state.token, self.tcp)
    }

    /// The socket file by its real (possibly long) path, for mounting into the sandbox.
    pub fn socket_path(&self) -> &Path {
        &self.socket
    }

    /// A short name of the socket, valid in this process while the proxy lives.
    pub fn short_socket_path(&self) -> PathBuf {
        self.dir.path(SOCKET_NAME)
    }

    pub fn policy(&self) -> &EgressPolicy {
        &self.state.policy
    }

    /// Outside requests admitted so far.
    pub fn requests(&self) -> u64 {
        self.state.requests.load(Ordering::Relaxed)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.state.stop.cancel();
        let _ = std::fs::remove_file(self.dir.path(SOCKET_NAME));
    }
}

/// Which listener a connection came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Door {
    /// The Unix socket in the proxy's private folder (the sandbox's bridge).
    Socket,
    /// The loopback port: any local process can knock, so the token is asked.
    Port,
}

async fn accepted<S>(r: std::io::Result<S>, st: &Arc<State>, door: Door)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    match r {
        Ok(stream) => {
            tokio::spawn(serve(stream, st.clone(), door));
        }
        Err(e) => {
            // Out of descriptors, say: wait a little rather than spin.
            tracing::warn!("egress proxy: accept failed: {e}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn serve<S>(stream: S, st: Arc<State>, door: Door)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let svc = {
        let st = st.clone();
        hyper::service::service_fn(move |req| handle(st.clone(), req, door))
    };
    let conn = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), svc).with_upgrades();
    tokio::select! {
        r = conn => if let Err(e) = r { tracing::debug!("egress proxy connection: {e}") },
        _ = st.stop.cancelled() => {}
    }
}

async fn handle(st: Arc<State>, req: Request<Incoming>, door: Door) -> Result<Answer, Infallible> {
    let started = Instant::now();
    if door == Door::Port && !carries_token(req.headers(), &st.token) {
        // Not the build's: neither counted nor reported (a stranger could fill the log).
        tracing::debug!("egress proxy: a request without the build's token was refused");
        return Ok(text(
            StatusCode::FORBIDDEN,
            "wright's egress proxy answers on this port only requests carrying the build's token.\n".into(),
        ));
    }
    if req.method() == Method::CONNECT {
        return Ok(crate::tunnel::connect(st, req, started).await);
    }
    if req.uri().scheme().is_some() {
        return Ok(crate::forward::plain(&st, req, started).await);
    }
    if let Some(rest) = req.uri().path().strip_prefix("/_api/").map(str::to_string) {
        return Ok(crate::forward::api(&st, req, &rest, started).await);
    }
    Ok(text(
        StatusCode::BAD_REQUEST,
        "This is wright's egress proxy. Use it as an HTTP proxy (absolute URLs or CONNECT), or call a \
         configured API at /_api/<name>/<path>.\n"
            .into(),
    ))
}

/// Whether `Proxy-Authorization` holds `token`: as the password of `Basic` credentials (what
/// clients send for a proxy URL with `user:token@`), or as `Bearer <token>`.
fn carries_token(headers: &hyper::HeaderMap, token: &str) -> bool {
    use base64::Engine as _;
    let Some(value) = headers.get(hyper::header::PROXY_AUTHORIZATION).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let (scheme, rest) = value.trim().split_once(' ').unwrap_or((value, ""));
    let given = if scheme.eq_ignore_ascii_case("basic") {
        base64::engine::general_purpose::STANDARD
            .decode(rest.trim())
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|pair| pair.split_once(':').map(|(_, pass)| pass.to_string()))
    } else if scheme.eq_ignore_ascii_case("bearer") {
        Some(rest.trim().to_string())
    } else {
        None
    };
    given.is_some_and(|g| same(g.as_bytes(), token.as_bytes()))
}

/// Equal in a time that does not depend on where two secrets differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
