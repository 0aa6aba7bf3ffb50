//! Chromium and the page it loads, started inside the build's sandbox by `host.js`, and a
//! loopback TCP port on wright's side that carries DevTools to the Unix socket the host listens
//! on (DevTools speaks WebSocket over TCP; the sandbox's network is its own).

use crate::{BrowserError, BrowserSettings, Launch};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use wright_sandbox::{CommandOutcome, CommandSpec, RunError, SocketDir, TreeMemory};

const HOST_JS: &str = include_str!("host.js");
/// How long Chromium gets to start listening for DevTools.
const STARTUP: Duration = Duration::from_secs(20);

/// What to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageSource {
    /// The workspace's files, served as they are; `entry` is the page (`index.html`, `public/index.html`).
    Static { entry: String },
    /// The app's own server (`node <entry>` with `PORT` set); `path` is what to open on it.
    Server { entry: String, path: String },
}

/// Chromium's flags. `--no-sandbox` only when wright's sandbox confines the browser instead:
/// as the sandbox's unprivileged user Chromium cannot create its own namespaces.
///
/// Memory: one page gets at most two renderer processes, and V8's heap in each at most the
/// check's memory limit (by default V8 sizes it from the machine's memory, up to 4 GiB). The
/// total of all processes is bounded by the host's watchdog (see [`Host::start`]).
fn flags(settings: &BrowserSettings, confined: bool) -> Vec<String> {
    let mut f: Vec<String> = [
        "--headless",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-default-apps",
        "--disable-breakpad",
        "--disable-crash-reporter",
        "--disable-features=Translate,MediaRouter,OptimizationHints,DialMediaRouteProvider,SpareRendererForSitePerProcess",
        "--disable-site-isolation-trials",
        "--in-process-gpu",
        "--metrics-recording-only",
        "--password-store=basic",
        "--use-mock-keychain",
        "--mute-audio",
        "--hide-scrollbars",
        // The sandbox's HTTP(S)_PROXY (outside access) is for the app's code: Chromium's own
        // background requests must not go out, and the page's allowed ones wright makes itself.
        "--no-proxy-server",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    f.push(format!("--window-size={},{}", settings.width, settings.height));
    f.push("--renderer-process-limit=2".into());
    f.push(format!("--js-flags=--max-old-space-size={}", (settings.memory_limit >> 20).max(64)));
    if confined {
        f.push("--no-sandbox".into());
        f.push("--no-zygote".into());
    }
    f
}

/// A running host: Chromium, the page's server, and the bridge to DevTools.
pub(crate) struct Host {
    stop: CancellationToken,
    task: JoinHandle<Result<CommandOutcome, RunError>>,
    forwarder: JoinHandle<()>,
    /// The browser's DevTools WebSocket, through the forwarder.
    pub ws_url: String,
    /// The page, as the browser reaches it.
    pub page_url: String,
    pub origin: String,
    /// Keeps the socket's short name valid while the host runs.
    _sockets: Arc<SocketDir>,
    /// Cancelled when the host has ended, for whatever reason.
    ended: CancellationToken,
    /// Why the watchdog stopped the host, when it did.
    over: Arc<Mutex<Option<String>>>,
}

impl Host {
    pub(crate) async fn start(
        launch: &Launch,
        chromium: &Path,
        source: &PageSource,
        settings: &BrowserSettings,
    ) -> Result<Self, BrowserError> {
        let start_err = |e: String| BrowserError::Start(e);
        // Both ends name the DevTools socket through a descriptor of the scratch folder, so its
        // path fits whatever the data folder's length.
        let sockets = Arc::new(
            SocketDir::open(&launch.scratch)
                .map_err(|e| start_err(format!("cannot open {}: {e}", launch.scratch.display())))?,
        );
        let socket = sockets.path("cdp.sock");
        let profile = launch.scratch.join("chromium-profile");
        let [page_port, cdp_port] =
            wright_sandbox::loopback_ports::<2>().map_err(|e| start_err(format!("no free port: {e}")))?;
        let (mode, target, path) = match source {
            PageSource::Static { entry } => ("static", launch.workspace.display().to_string(), entry.clone()),
            PageSource::Server { entry, path } => ("server", entry.clone(), path.clone()),
        };
        let mut args = vec![
            "-e".to_string(),
            HOST_JS.to_string(),
            mode.to_string(),
            target,
            launch.scratch.display().to_string(),
            page_port.to_string(),
            cdp_port.to_string(),
            chromium.display().to_string(),
            profile.display().to_string(),
        ];
        args.extend(flags(settings, launch.confined));
        let mut spec = CommandSpec::new("node", args, launch.workspace.clone(), launch.env.clone());
        spec.timeout = settings.time_limit + STARTUP + Duration::from_secs(10);
        // Chromium reserves terabytes of address space it never uses; an RLIMIT_AS (the memory
        // limit where no cgroup can be made, as for most ordinary users) kills it at start
        // (below about 100 GiB; above, it bounds nothing). It gets RLIMIT_DATA per process
        // instead, and wright watches the memory of the whole tree (Chromium's processes, this
        // host, a full-stack app's server), from outside the sandbox where the page and the
        // app cannot reach the watchdog; a cgroup, where there is one, sits above both.
        spec.reserves_address_space = true;
        spec.memory_watch = Some(settings.memory_limit);
        let stop = CancellationToken::new();
        let ended = CancellationToken::new();
        let over: Arc<Mutex<Option<String>>> = Arc::default();
        let task = {
            let (runner, stop, ended, over) = (launch.runner.clone(), stop.clone(), ended.clone(), over.clone());
            let (limit, source) = (settings.memory_limit, source.clone());
            tokio::spawn(async move {
                let r = runner.run(spec, &(), &stop).await;
                if let Some(m) = r.as_ref().ok().and_then(|o| o.memory_exceeded.as_ref()) {
                    let why = overrun(m, limit, &source);
                    tracing::warn!("the browser check was stopped: {why}");
                    if let Ok(mut o) = over.lock() {
                        *o = Some(why);
                    }
                }
                ended.cancel();
                r
            })
        };
        let version = match wait_for_devtools(&socket, &task).await {
            Ok(v) => v,
            Err(why) => {
                stop.cancel();
                let _ = tokio::time::timeout(Duration::from_secs(5), ended.cancelled()).await;
                if let Some(why) = over.lock().ok().and_then(|o| o.clone()) {
                    return Err(BrowserError::OutOfMemory(why));
                }
                let detail = match tokio::time::timeout(Duration::from_secs(5), task).await {
                    Ok(Ok(Ok(o))) => {
                        let err = o.stderr.render();
                        let tail: String = err
                            .lines()
                            .rev()
                            .take(6)
                            .collect::<Vec<_>>()
                            .into_iter()
                            .rev()
                            .collect::<Vec<_>>()
                            .join("\n");
                        if tail.trim().is_empty() { String::new() } else { format!("\n{tail}") }
                    }
                    Ok(Ok(Err(e))) => format!("\n{e}"),
                    _ => String::new(),
                };
                return Err(start_err(format!("{why}{detail}")));
            }
        };
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| start_err(format!("no loopback port for DevTools: {e}")))?;
        let local = listener.local_addr().map_err(|e| start_err(e.to_string()))?;
        let forwarder = tokio::spawn(forward(listener, sockets.clone()));
        let ws_url = rehost(&version, &local.to_string())
            .ok_or_else(|| start_err(format!("unexpected DevTools answer: {version}")))?;
        let origin = format!("http://127.0.0.1:{page_port}");
        let page_url = format!("{origin}/{}", path.trim_start_matches('/'));
        Ok(Self { stop, task, forwarder, ws_url, page_url, origin, _sockets: sockets, ended, over })
    }

    /// Resolves when the watchdog has stopped the host; never otherwise.
    pub(crate) async fn stopped_for_memory(&self) {
        self.ended.cancelled().await;
        if self.memory_overrun().is_none() {
            std::future::pending::<()>().await;
        }
    }

    /// Why the watchdog stopped the host, when it did.
    pub(crate) fn memory_overrun(&self) -> Option<String> {
        self.over.lock().ok().and_then(|o| o.clone())
    }

    /// Stop Chromium and everything the host started (the sandbox's process group goes with it).
    pub(crate) async fn stop(self) {
        self.stop.cancel();
        self.forwarder.abort();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.task).await;
    }
}

/// Says who held the memory when the watchdog stopped the check, and how much: the fix loop
/// must know whether the page's scripts or the app's server are to blame.
fn overrun(m: &TreeMemory, limit: u64, source: &PageSource) -> String {
    let mib = |b: u64| format!("{} MiB", b >> 20);
    let command = m.largest.as_ref().map_or("", |l| l.command.as_str());
    let server = match source {
        PageSource::Server { entry, .. } if command.split_whitespace().skip(1).any(|a| a.ends_with(entry.as_str())) => {
            Some(entry.as_str())
        }
        _ => None,
    };
    let (who, process) = match server {
        Some(entry) => ("the app's server".to_string(), format!("`node {entry}`, the app's server,")),
        None if command.contains("--type=renderer") => {
            ("the page".to_string(), "Chromium's renderer, which runs the page's scripts,".to_string())
        }
        None if command.contains("chromium") => ("the page".to_string(), "Chromium".to_string()),
        None => ("the browser check".to_string(), "one of its processes".to_string()),
    };
    let largest = m.largest.as_ref().map_or(String::new(), |l| format!(" ({process} held {})", mib(l.bytes)));
    format!(
        "{who} used too much memory: the check's processes held {} together, over its limit of {}{largest}; the check was stopped",
        mib(m.total),
        mib(limit)
    )
}

/// Poll the host's socket until Chromium answers `/json/version`; its WebSocket URL.
async fn wait_for_devtools(
    socket: &Path,
    task: &JoinHandle<Result<CommandOutcome, RunError>>,
) -> Result<String, String> {
    let deadline = Instant::now() + STARTUP;
    while Instant::now() < deadline {
        if task.is_finished() {
            return Err("the browser host exited before Chromium listened".into());
        }
        if let Ok(body) = get(socket, "/json/version").await {
            let v: serde_json::Value =
                serde_json::from_str(&body).map_err(|e| format!("DevTools said {body:?}: {e}"))?;
            if let Some(ws) = v.get("webSocketDebuggerUrl").and_then(|w| w.as_str()) {
                return Ok(ws.to_string());
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(format!("Chromium did not listen within {} s", STARTUP.as_secs()))
}

/// One HTTP/1.1 GET over the Unix socket (hyper's client on the connection); the body of a
/// 200 answer. Anything else, or no answer within 2 s, means DevTools is not ready yet.
async fn get(socket: &Path, path: &str) -> std::io::Result<String> {
    use http_body_util::BodyExt;
    let not_ready = |what: String| std::io::Error::other(what);
    let ask = async {
        let stream = tokio::net::UnixStream::connect(socket).await?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| not_ready(e.to_string()))?;
        // The connection's task ends with the request: Chromium keeps it open otherwise.
        let driver = tokio::spawn(conn);
        let req = hyper::Request::get(path)
            .header(hyper::header::HOST, "127.0.0.1")
            .body(http_body_util::Empty::<hyper::body::Bytes>::new())
            .map_err(|e| not_ready(e.to_string()))?;
        let res = sender.send_request(req).await.map_err(|e| not_ready(e.to_string()))?;
        if res.status() != hyper::StatusCode::OK {
            driver.abort();
            return Err(not_ready(format!("DevTools answered {}", res.status())));
        }
        let body = res.into_body().collect().await.map_err(|e| not_ready(e.to_string()))?.to_bytes();
        driver.abort();
        Ok(String::from_utf8_lossy(&body).into_owned())
    };
    tokio::time::timeout(Duration::from_secs(2), ask)
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer"))?
}

/// `ws://127.0.0.1:9222/devtools/browser/ID` with its host and port replaced by `authority`.
fn rehost(ws: &str, authority: &str) -> Option<String> {
    let rest = ws.strip_prefix("ws://")?;
    let (_, path) = rest.split_once('/')?;
    Some(format!("ws://{authority}/{path}"))
}

/// Carry each connection to the loopback port over to the host's Unix socket.
async fn forward(listener: tokio::net::TcpListener, sockets: Arc<SocketDir>) {
    let socket: PathBuf = sockets.path("cdp.sock");
    while let Ok((mut tcp, _)) = listener.accept().await {
        let socket = socket.clone();
        let _keep = sockets.clone();
        tokio::spawn(async move {
            let _keep = _keep;
            if let Ok(mut unix) = tokio::net::UnixStream::connect(&socket).await {
                let _ = tokio::io::copy_bidirectional(&mut tcp, &mut unix).await;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_devtools_url_is_moved_to_the_forwarder() {
        assert_eq!(
            rehost("ws://127.0.0.1:41234/devtools/browser/ab-cd", "127.0.0.1:5000").as_deref(),
            Some("ws://127.0.0.1:5000/devtools/browser/ab-cd")
        );
        assert_eq!(rehost("http://x/y", "a:1"), None);
    }

    #[test]
    fn chromium_keeps_its_own_sandbox_unless_wright_confines_it() {
        let s = BrowserSettings::default();
        assert!(!flags(&s, false).iter().any(|f| f == "--no-sandbox"));
        assert!(flags(&s, true).iter().any(|f| f == "--no-sandbox"));
        assert!(flags(&s, true).iter().any(|f| f == "--window-size=1280,800"));
    }
}
