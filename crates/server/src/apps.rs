//! Full-stack previews: a build's own server, started on the first preview request inside the
//! same sandbox its build ran in (network still denied), reached through a Unix socket that a
//! small bridge inside the sandbox carries to the app's port, and stopped after an idle time.

use crate::error::ApiError;
use axum::body::Body;
use axum::http::{Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use wright_engine::Engine;
use wright_sandbox::{CommandRunner, CommandSpec, ProcessRunner, SocketDir, Workspace};

const BRIDGE: &str = include_str!("preview_bridge.js");
/// How long an app gets to start listening.
const STARTUP: Duration = Duration::from_secs(15);
/// Largest request body passed on to an app.
const MAX_BODY: usize = 1 << 20;

/// The socket's name in the app's scratch folder.
const SOCKET: &str = "app.sock";

struct App {
    /// The scratch folder, held open: the socket is reached through it by a short name, and a
    /// caller holding it can never reach another build's socket through a reused descriptor.
    socket: Arc<SocketDir>,
    stop: CancellationToken,
    last_used: Instant,
    /// The scratch folder (HOME, TMPDIR, the socket); removed when the app is dropped.
    _scratch: tempfile::TempDir,
    /// The build's preview proxy (its own narrowed list, [`crate::outside`]), shared with the
    /// page's relay; held while the app runs.
    _egress: Option<Arc<wright_engine::BuildEgress>>,
}

/// The apps running for previews, by build id.
#[derive(Default)]
pub struct Apps {
    running: Mutex<HashMap<String, App>>,
    /// One start at a time per build.
    starting: tokio::sync::Mutex<()>,
    /// The previewed builds' outside-access proxies (the app's server and the page's relay).
    pub doors: crate::outside::Doors,
}

impl Apps {
    fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, App>) -> R) -> R {
        let mut m = match self.running.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        f(&mut m)
    }

    /// The app's socket, starting it if it is not running.
    async fn socket(
        &self,
        engine: &Engine,
        egress: Option<Arc<wright_engine::BuildEgress>>,
        id: &str,
        ws: &Workspace,
    ) -> Result<Arc<SocketDir>, ApiError> {
        let live = self.with(|m| {
            let app = m.get_mut(id).filter(|a| !a.stop.is_cancelled())?;
            app.last_used = Instant::now();
            Some(app.socket.clone())
        });
        if let Some(s) = live {
            return Ok(s);
        }
        let _one = self.starting.lock().await;
        if let Some(s) = self.with(|m| m.get(id).filter(|a| !a.stop.is_cancelled()).map(|a| a.socket.clone())) {
            return Ok(s);
        }
        let app = start(engine, egress, id, ws).await?;
        let socket = app.socket.clone();
        if let Some(old) = self.with(|m| m.insert(id.to_string(), app)) {
            old.stop.cancel();
        }
        Ok(socket)
    }

    /// Stop the apps nobody asked anything of for `idle`, and the proxies of previews nobody
    /// used for as long.
    pub fn stop_idle(&self, idle: Duration) {
        self.with(|m| {
            m.retain(|id, app| {
                let keep = !app.stop.is_cancelled() && app.last_used.elapsed() < idle;
                if !keep {
                    tracing::info!(build = %id, "stopping its preview app");
                    app.stop.cancel();
                }
                keep
            })
        });
        self.doors.stop_idle(idle, &|id| self.with(|m| m.contains_key(id)));
    }

    /// Stop one build's app and its proxy, if they run (its files are about to go).
    pub fn stop(&self, id: &str) {
        if let Some(app) = self.with(|m| m.remove(id)) {
            tracing::info!(build = %id, "stopping its preview app");
            app.stop.cancel();
        }
        self.doors.stop(id);
    }

    pub fn stop_all(&self) {
        self.stop_idle(Duration::ZERO);
    }
}

async fn start(
    engine: &Engine,
    egress: Option<Arc<wright_engine::BuildEgress>>,
    id: &str,
    ws: &Workspace,
) -> Result<App, ApiError> {
    let unavailable = |why: String| ApiError::new(StatusCode::BAD_GATEWAY, "preview_app", why);
    let entry = wright_agent::verify::server_entry_in(ws)
        .ok_or_else(|| unavailable("this full-stack build has no server file to start".into()))?;
    let scratch = engine.scratch("p").map_err(|e| unavailable(e.to_string()))?;
    // Reached by a short name whatever the data folder's length (a socket path must fit in 107 bytes).
    let socket = Arc::new(SocketDir::open(scratch.path()).map_err(|e| unavailable(e.to_string()))?);
    let (exec, confinement) =
        engine.sandbox_with(ws, scratch.path(), egress.as_deref()).map_err(|e| unavailable(e.to_string()))?;
    let [port] = wright_sandbox::loopback_ports::<1>().map_err(|e| unavailable(format!("no free port: {e}")))?;
    let args = vec![
        "-e".into(),
        BRIDGE.into(),
        entry.clone(),
        scratch.path().display().to_string(),
        SOCKET.into(),
        port.to_string(),
    ];
    let mut spec = CommandSpec::new("node", args, ws.root().to_path_buf(), exec.env.clone());
    // It runs until it is stopped for being idle (or the server stops).
    spec.timeout = Duration::from_secs(24 * 3600);
    let stop = CancellationToken::new();
    let runner = ProcessRunner::new(confinement.isolation);
    {
        let (stop, id) = (stop.clone(), id.to_string());
        tokio::spawn(async move {
            let outcome = runner.run(spec, &(), &stop).await;
            tracing::info!(build = %id, "preview app ended: {:?}", outcome.map(|o| o.exit_code));
            stop.cancel();
        });
    }
    let deadline = Instant::now() + STARTUP;
    while Instant::now() < deadline {
        if stop.is_cancelled() {
            return Err(unavailable(format!("`node {entry}` exited before it answered")));
        }
        if tokio::net::UnixStream::connect(socket.path(SOCKET)).await.is_ok() && answers(&socket).await {
            tracing::info!(build = %id, entry, "preview app started");
            return Ok(App { socket, stop, last_used: Instant::now(), _scratch: scratch, _egress: egress });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.cancel();
    Err(unavailable(format!("`node {entry}` did not answer within {} s", STARTUP.as_secs())))
}

/// Whether the app behind the bridge answers HTTP yet (the bridge listens before the app does).
async fn answers(socket: &SocketDir) -> bool {
    let req = Request::get("/").header(header::HOST, "localhost").body(Body::empty());
    match req {
        Ok(req) => send(socket, req).await.is_ok(),
        Err(_) => false,
    }
}

async fn send(socket: &SocketDir, req: Request<Body>) -> Result<Response<hyper::body::Incoming>, String> {
    let stream = tokio::net::UnixStream::connect(socket.path(SOCKET)).await.map_err(|e| e.to_string())?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender.send_request(req).await.map_err(|e| e.to_string())
}

/// Pass one preview request to the build's app and its answer back.
pub async fn proxy(
    apps: &Apps,
    engine: &Engine,
    egress: Option<Arc<wright_engine::BuildEgress>>,
    id: &str,
    ws: &Workspace,
    req: Request<Body>,
) -> Result<Response<Body>, ApiError> {
    let socket = apps.socket(engine, egress, id, ws).await?;
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, MAX_BODY).await.map_err(|_| {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", "the request body is larger than 1 MiB")
    })?;
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
    let mut out = Request::builder().method(parts.method).uri(path);
    // Only what an app needs; never the caller's cookies or credentials for wright.
    for name in [header::CONTENT_TYPE, header::ACCEPT, header::ACCEPT_LANGUAGE, header::IF_NONE_MATCH] {
        if let Some(v) = parts.headers.get(&name) {
            out = out.header(name, v);
        }
    }
    let out =
        out.header(header::HOST, "localhost").body(Body::from(body)).map_err(|e| ApiError::internal(e.to_string()))?;
    let res = send(&socket, out)
        .await
        .map_err(|e| ApiError::new(StatusCode::BAD_GATEWAY, "preview_app", format!("the app did not answer: {e}")))?;
    Ok(res.map(Body::new))
}
