//! Outside access for builds: the admin's `[egress]` table made into a policy once, narrowed
//! per build by what the job asks, and a filtering proxy started per build (and per preview
//! app) whose reports become `outside_request` events of that build.

use crate::EngineError;
use crate::config::EgressFile;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use wright_agent::OutsideApi;
use wright_egress::{AllowList, Api, EgressPolicy, KeyPlacement, Limits, OutsideRequest, Proxy, Secret};
use wright_events::{Emitter, EventKind};
use wright_sandbox::EgressBridge;

/// The policy `[egress]` describes, with each API's key read from the host's environment
/// through `env`; `None` when nothing is allowed (builds then have no network, as always).
pub(crate) fn configured(
    file: &EgressFile,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<EgressPolicy>, EngineError> {
    let bad = |e: wright_egress::PolicyError| EngineError::Usage(format!("[egress] in wright.toml: {e}"));
    let allow = AllowList::parse(&file.allow).map_err(bad)?;
    let mut apis = Vec::new();
    for (name, a) in &file.apis {
        let placement = match (&a.header, &a.query) {
            (Some(h), None) => KeyPlacement::header(name, h).map_err(bad)?,
            (None, Some(q)) => KeyPlacement::query(name, q).map_err(bad)?,
            _ => {
                return Err(EngineError::Usage(format!(
                    "[egress.apis.{name}] in wright.toml: say how the key is sent, with either \
                     header = \"Authorization: Bearer {{key}}\" or query = \"appid\" (not both)"
                )));
            }
        };
        let key = env(&a.key_env).filter(|k| !k.is_empty()).ok_or_else(|| {
            EngineError::Usage(format!(
                "[egress.apis.{name}] in wright.toml reads its key from ${}, which is not set",
                a.key_env
            ))
        })?;
        apis.push(Api::new(name, &a.base_url, Secret::new(key), placement).map_err(bad)?);
    }
    let d = Limits::default();
    let limits = Limits {
        max_requests: file.max_requests.unwrap_or(d.max_requests),
        max_bytes: file.max_bytes.unwrap_or(d.max_bytes),
    };
    let policy = EgressPolicy::new(allow, apis, limits).map_err(bad)?;
    Ok((!policy.is_empty()).then_some(policy))
}

/// What a job may have: the configured policy, narrowed to `asked` when it asks. The words
/// say what was asked but is not allowed here.
pub(crate) fn for_job(
    configured: Option<&EgressPolicy>,
    asked: Option<&[String]>,
) -> Result<(Option<EgressPolicy>, Vec<crate::notice::Warning>), EngineError> {
    let Some(asked) = asked else { return Ok((configured.cloned(), Vec::new())) };
    let Some(policy) = configured else {
        if asked.is_empty() {
            return Ok((None, Vec::new()));
        }
        return Err(EngineError::Usage(format!(
            "outside access to {} was asked for, but this wright allows none (the admin sets [egress] in wright.toml)",
            asked.join(", ")
        )));
    };
    let (narrowed, refused) = policy.narrow(asked).map_err(|e| EngineError::Usage(format!("--allow-host: {e}")))?;
    let notes = refused
        .iter()
        .map(|h| {
            crate::notice::Warning::new(
                crate::notice::WarningKind::HostRefused,
                format!("outside access to {h} was asked for but is not allowed here, so it stays closed"),
            )
        })
        .collect();
    Ok(((!narrowed.is_empty()).then_some(narrowed), notes))
}

/// One build's proxy, its bridge and where its reports go. The proxy stops when this drops.
pub struct BuildEgress {
    proxy: Proxy,
    slot: Arc<OnceLock<Emitter>>,
    bridge: EgressBridge,
    _dir: tempfile::TempDir,
}

/// The Node.js on the host's PATH (the bridge runs with it inside the sandbox).
fn host_node() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join("node")).find(|p| p.is_file())
}

impl BuildEgress {
    /// Starts a proxy for `policy` in a folder of its own under `data_dir/tmp` (not in the
    /// sandbox's writable folders, so the sandbox cannot replace the bridge or the socket).
    pub(crate) fn start(policy: EgressPolicy, data_dir: &Path, name: &str) -> Result<Self, EngineError> {
        let unavailable = |e: String| EngineError::Usage(format!("outside access: {e}"));
        let node = host_node()
            .ok_or_else(|| unavailable("the bridge into the sandbox needs Node.js, which is not on PATH".into()))?;
        let dir = crate::scratch::scratch_in(data_dir, &format!("egress-{name}"))?;
        let script = dir.path().join("bridge.js");
        std::fs::write(&script, wright_egress::BRIDGE_JS).map_err(|e| unavailable(e.to_string()))?;
        let [port] = wright_sandbox::loopback_ports::<1>().map_err(|e| unavailable(format!("no free port: {e}")))?;
        let slot: Arc<OnceLock<Emitter>> = Arc::default();
        let to = slot.clone();
        let build = name.to_string();
        let sink: wright_egress::Sink = Arc::new(move |r: OutsideRequest| match to.get() {
            Some(emitter) => emitter.emit(event(r)),
            None => {
                tracing::info!(build = %build, host = %r.host, allowed = r.allowed, status = r.status, "outside request")
            }
        });
        let proxy = Proxy::start(policy, dir.path(), sink).map_err(|e| unavailable(e.to_string()))?;
        let bridge = EgressBridge { socket: proxy.socket_path().to_path_buf(), script, node, port };
        Ok(Self { proxy, slot, bridge, _dir: dir })
    }

    /// From now on reports are events of this build (before, they are only logged).
    pub fn attach(&self, emitter: Emitter) {
        let _ = self.slot.set(emitter);
    }

    pub(crate) fn bridge(&self) -> EgressBridge {
        self.bridge.clone()
    }

    /// The variables commands get: the proxy for HTTP clients that honour them, and one
    /// `WRIGHT_API_<NAME>` base URL per API (Node's built-in `fetch` ignores proxy variables).
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        let url = format!("http://127.0.0.1:{}", self.bridge.port);
        let mut env: Vec<(String, String)> = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]
            .iter()
            .map(|k| (k.to_string(), url.clone()))
            .collect();
        for k in ["NO_PROXY", "no_proxy"] {
            env.push((k.into(), "localhost,127.0.0.1,::1".into()));
        }
        for api in &self.proxy.policy().apis {
            env.push((api.env_name(), format!("{url}/_api/{}", api.name)));
        }
        env
    }

    /// The APIs, as the prompt names them (never with their keys).
    pub fn apis(&self) -> Vec<OutsideApi> {
        self.proxy.policy().apis.iter().map(|a| OutsideApi { name: a.name.clone(), env: a.env_name() }).collect()
    }

    /// The allowed hosts, as written.
    pub fn hosts(&self) -> Vec<String> {
        self.proxy.policy().allow.rules().iter().map(|r| r.to_string()).collect()
    }

    /// What a page may reach (in the browser check, or a preview's relay): the allowed hosts,
    /// through the proxy's loopback port on this machine, wright asking on the page's behalf.
    /// The proxy URL carries the build's token (the port refuses requests without it).
    pub fn browser_access(&self) -> wright_browser::OutsideAccess {
        let allow = self.proxy.policy().allow.clone();
        wright_browser::OutsideAccess { proxy: self.proxy.proxy_url(), allow }
    }

    /// The proxy's loopback address on the host (its callers need the build's token).
    pub fn proxy_addr(&self) -> SocketAddr {
        self.proxy.tcp_addr()
    }
}

fn event(r: OutsideRequest) -> EventKind {
    EventKind::OutsideRequest {
        host: r.host,
        method: r.method,
        status: r.status,
        bytes: r.bytes,
        duration_ms: r.duration_ms,
        allowed: r.allowed,
        api: r.api,
        reason: r.reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ApiFile;

    fn file() -> EgressFile {
        let mut f =
            EgressFile { allow: vec!["api.example.com".into(), "127.0.0.1:38123".into()], ..Default::default() };
        f.apis.insert(
            "weather".into(),
            ApiFile {
                base_url: "https://w.example.com/v1".into(),
                key_env: "WEATHER_KEY".into(),
                query: Some("appid".into()),
                header: None,
            },
        );
        f
    }

    #[test]
    fn the_table_becomes_a_policy_and_bad_entries_are_usage_errors() {
        let env = |k: &str| (k == "WEATHER_KEY").then(|| "k-1".to_string());
        let p = configured(&file(), &env).unwrap().unwrap();
        assert_eq!(p.apis[0].key.expose(), "k-1");
        assert!(p.allow.allows("127.0.0.1", 38123));
        assert!(configured(&EgressFile::default(), &env).unwrap().is_none(), "nothing configured: no proxy");
        let no_key = configured(&file(), &|_: &str| None).unwrap_err().to_string();
        assert!(no_key.contains("$WEATHER_KEY, which is not set"), "{no_key}");
        let mut both = file();
        if let Some(a) = both.apis.get_mut("weather") {
            a.header = Some("X-Key: {key}".into());
        }
        assert!(configured(&both, &env).unwrap_err().to_string().contains("not both"));
        let mut bad = file();
        bad.allow.push("https://x.com".into());
        assert!(configured(&bad, &env).unwrap_err().to_string().contains("[egress]"));
    }

    #[test]
    fn a_job_only_narrows_and_is_told_what_stays_closed() {
        let env = |_: &str| Some("k".to_string());
        let p = configured(&file(), &env).unwrap();
        let (n, notes) = for_job(p.as_ref(), Some(&["api.example.com".into(), "evil.com".into()])).unwrap();
        let n = n.unwrap();
        assert!(n.allow.allows("api.example.com", 443) && n.apis.is_empty());
        assert_eq!(notes.len(), 1);
        assert!(notes[0].message.contains("evil.com") && notes[0].kind == crate::notice::WarningKind::HostRefused);
        let (n, _) = for_job(p.as_ref(), Some(&[])).unwrap();
        assert!(n.is_none(), "asking for nothing closes it all");
        let (n, _) = for_job(p.as_ref(), None).unwrap();
        assert_eq!(n.unwrap().apis.len(), 1, "asking nothing keeps the admin's");
        assert!(for_job(None, Some(&["a.com".into()])).unwrap_err().to_string().contains("allows none"));
    }
}
