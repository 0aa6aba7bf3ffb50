//! Chromium and the page it loads, started inside the build's sandbox by `host.js`, and a
//! loopback TCP port on wright's side that carries DevTools to the Unix socket the host listens
//! on (DevTools speaks WebSocket over TCP; the sandbox's network is its own).

use crate::{BrowserError, BrowserSettings, Launch};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use wright_sandbox::{CommandOutcome, CommandSpec, RunError, SocketDir};

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
        // limit where no cgroup can be made, as for most ordinary users) kills it at start.
        spec.reserves_address_space = true;
        let stop = CancellationToken::new();
        let task = {
            let (runner, stop) = (launch.runner.clone(), stop.clone());
            tokio::spawn(async move { runner.run(spec, &(), &stop).await })
        };
        let version = match wait_for_devtools(&socket, &task).await {
            Ok(v) => v,
            Err(why) => {
                stop.cancel();
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
        Ok(Self { stop, task, forwarder, ws_url, page_url, origin, _sockets: sockets })
    }

    /// Stop Chromium and everything the host started (the sandbox's process group goes with it).
    pub(crate) async fn stop(self) {
        self.stop.cancel();
        self.forwarder.abort();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.task).await;
    }
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
