//! A preview's outside access: the build's own filtering proxy, and the page's way to it.
//!
//! **Which hosts.** A preview gets its build's narrowed list, never more: the `allow_hosts`
//! stored with the build's queued job (`builds.request`, on SQLite and PostgreSQL alike),
//! narrowed again against the admin's `[egress]` as it is now (so a later narrowing of the
//! admin's list applies too), with only the APIs the build named. A build that asked for
//! nothing in particular has the admin's list, as it had while it ran.
//!
//! **One proxy per previewed build**, started on first need and stopped with the build's app
//! when idle: the app's server (full-stack) reaches it through its sandbox's bridge, and the
//! page reaches it through the relay below, so both are counted against the same limits.
//!
//! **The page's calls go through the preview's own origin.** The preview's CSP allows
//! `connect-src 'self'` only, so the visitor's browser never calls an outside host itself.
//! Instead the page asks `/_egress/<absolute URL>` on its own origin (`/{id}/{key}/_egress/…`
//! under the shared path); wright makes that request through the build's proxy, which checks
//! it against the build's list, counts it and reports it as an `outside_request` event, and
//! wright hands the answer back. Pages written for direct calls keep working: every HTML page
//! of a preview gets a small script first ([`SHIM`]) that rewrites `fetch` and
//! `XMLHttpRequest` calls to other origins onto the relay. The proxy's loopback port is
//! reached with the build's token, which never reaches the page.
//!
//! **Where the events go.** A preview runs after its build's log has ended with `complete`,
//! and nothing may follow `complete`, so a preview's `outside_request` events are stored in
//! the build's preview log instead (`GET /api/builds/{id}/preview-events`, docs/egress.md).

use crate::error::ApiError;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wright_engine::{BuildEgress, Engine, OutsideAccess};
use wright_events::{Emitter, Event, EventSink};
use wright_store::{BuildRecord, Store};

/// Where a preview's relay lives on its origin.
pub const RELAY: &str = "_egress/";

/// Largest request body a page may send out through the relay (the proxy's byte limit still
/// applies on top).
const MAX_BODY: usize = 1 << 20;
/// Longest wait for an outside answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
/// Request headers a page's outside call keeps; never the visitor's cookies.
const PASSED: &[header::HeaderName] =
    &[header::CONTENT_TYPE, header::ACCEPT, header::ACCEPT_LANGUAGE, header::AUTHORIZATION];

/// The script every HTML page of a preview gets first, when outside hosts exist at all.
/// `__RELAY__` is the relay's path on the page's origin.
const SHIM: &str = r#"<script data-wright="outside">(() => {
  // wright: calls to other origins go through this preview's own origin, to the build's proxy.
  const relay = "__RELAY__";
  const route = (u) => {
    try {
      const url = new URL(u, document.baseURI);
      if ((url.protocol === "http:" || url.protocol === "https:") && url.host !== location.host) return relay + url.href;
    } catch (_) { /* not a URL: leave it to the browser */ }
    return null;
  };
  const fetch0 = window.fetch;
  window.fetch = function (input, init) {
    if (input instanceof Request) {
      const r = route(input.url);
      return fetch0.call(this, r ? new Request(r, input) : input, init);
    }
    const r = route(String(input));
    return fetch0.call(this, r || input, init);
  };
  const open0 = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    const r = route(String(url));
    return open0.call(this, method, r || url, ...rest);
  };
})();</script>"#;

/// One previewed build's way out: its proxy and a client that reaches it with the token.
struct Door {
    egress: Arc<BuildEgress>,
    access: OutsideAccess,
    client: reqwest::Client,
    last_used: Instant,
}

/// The previewed builds' proxies, by build id. Started on first need, stopped when the
/// build's preview goes idle (with its app) or its files go.
#[derive(Default)]
pub struct Doors {
    open: Mutex<HashMap<String, Door>>,
    /// One start at a time.
    starting: tokio::sync::Mutex<()>,
}

impl Doors {
    fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, Door>) -> R) -> R {
        let mut m = match self.open.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        f(&mut m)
    }

    fn live(&self, id: &str) -> Option<(Arc<BuildEgress>, OutsideAccess, reqwest::Client)> {
        self.with(|m| {
            let d = m.get_mut(id)?;
            d.last_used = Instant::now();
            Some((d.egress.clone(), d.access.clone(), d.client.clone()))
        })
    }

    /// The build's proxy, started if needed; `None` when the build may reach nothing outside.
    pub async fn egress(
        &self,
        engine: &Engine,
        store: &Arc<dyn Store>,
        build: &BuildRecord,
    ) -> Result<Option<Arc<BuildEgress>>, ApiError> {
        Ok(self.door(engine, store, build).await?.map(|(e, _, _)| e))
    }

    async fn door(
        &self,
        engine: &Engine,
        store: &Arc<dyn Store>,
        build: &BuildRecord,
    ) -> Result<Option<(Arc<BuildEgress>, OutsideAccess, reqwest::Client)>, ApiError> {
        let id = build.start.id.as_str();
        if let Some(d) = self.live(id) {
            return Ok(Some(d));
        }
        let _one = self.starting.lock().await;
        if let Some(d) = self.live(id) {
            return Ok(Some(d));
        }
        let unavailable = |why: String| ApiError::new(StatusCode::BAD_GATEWAY, "preview_outside", why);
        let asked = asked(build);
        let (egress, _) =
            engine.egress(&format!("p-{id}"), asked.as_deref()).map_err(|e| unavailable(e.to_string()))?;
        let Some(egress) = egress else { return Ok(None) };
        egress.attach(Emitter::new(id, vec![Arc::new(PreviewSink { store: store.clone(), build: id.to_string() })]));
        let access = egress.browser_access();
        let proxy = reqwest::Proxy::all(&access.proxy).map_err(|e| unavailable(e.to_string()))?;
        let client = reqwest::Client::builder()
            .proxy(proxy)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(ANSWER_TIMEOUT)
            .build()
            .map_err(|e| unavailable(e.to_string()))?;
        let egress = Arc::new(egress);
        let door =
            Door { egress: egress.clone(), access: access.clone(), client: client.clone(), last_used: Instant::now() };
        self.with(|m| m.insert(id.to_string(), door));
        Ok(Some((egress, access, client)))
    }

    /// Stop the proxies of builds whose preview nobody used for `idle`, except `keep`'s (an app
    /// still running holds its proxy anyway).
    pub fn stop_idle(&self, idle: Duration, keep: &dyn Fn(&str) -> bool) {
        self.with(|m| m.retain(|id, d| keep(id) || d.last_used.elapsed() < idle));
    }

    pub fn stop(&self, id: &str) {
        self.with(|m| m.remove(id));
    }
}

/// What the build asked for, from its stored request (`allow_hosts`); `None`: the admin's
/// list as it is (a build that narrowed nothing, or one made with `wright run`).
fn asked(build: &BuildRecord) -> Option<Vec<String>> {
    let wright_store::QueuedJob::Build(args) = build.queued_job().ok()? else { return None };
    args.allow_hosts.clone()
}

/// Stores a preview's `outside_request` events in the build's preview log.
struct PreviewSink {
    store: Arc<dyn Store>,
    build: String,
}

impl EventSink for PreviewSink {
    fn accept(&self, event: &Event) {
        let (store, build, kind) = (self.store.clone(), self.build.clone(), event.kind.clone());
        // Called on the proxy's task: store it on one of its own.
        tokio::spawn(async move {
            if let Err(e) = store.add_preview_event(&build, &kind).await {
                tracing::warn!(build = %build, "a preview's outside request could not be stored: {e}");
            }
        });
    }
}

/// Whether a path on the preview's origin (without its leading `/`) is the relay's.
pub fn is_relay(path: &str) -> bool {
    path.starts_with(RELAY)
}

/// The page's outside call `target` (an absolute `http(s)` URL), made through the build's
/// proxy: refused (403, and an `outside_request` event saying why) unless the build's list
/// allows it; otherwise counted, reported and answered with what the outside said.
///
/// It takes the proxies (`doors`), the engine and the store rather than the server's whole
/// state: the state holds the proxies, and this module stays below it.
pub async fn relay(
    doors: &Doors,
    engine: &Engine,
    store: &Arc<dyn Store>,
    build: &BuildRecord,
    target: &str,
    req: Request,
) -> Result<Response, ApiError> {
    let url = reqwest::Url::parse(target)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.username().is_empty() && u.password().is_none())
        .ok_or_else(|| ApiError::invalid("bad_url", format!("`{target}` is not an http:// or https:// URL")))?;
    let door = doors.door(engine, store, build).await?;
    let Some((_egress, access, client)) = door else {
        return Err(ApiError::forbidden("this build may reach no outside host"));
    };
    let allowed = access.allows(url.as_str());
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, MAX_BODY).await.map_err(|_| {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", "the request body is larger than 1 MiB")
    })?;
    let method = reqwest::Method::from_bytes(parts.method.as_str().as_bytes())
        .map_err(|_| ApiError::invalid("bad_method", "unknown method"))?;
    let mut out = client.request(method, url.clone());
    for name in PASSED {
        if let Some(v) = parts.headers.get(name) {
            out = out.header(name.as_str(), v.as_bytes());
        }
    }
    if !body.is_empty() {
        out = out.body(body);
    }
    // Even a call the list refuses goes to the proxy: it is the one that says no, counts and
    // reports it, as it does for the sandbox.
    let answer = out.send().await;
    let host = url.host_str().unwrap_or_default();
    if !allowed {
        return Err(ApiError::forbidden(format!(
            "{host} is not on this build's list of allowed hosts, so the page may not call it"
        )));
    }
    let res = answer.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            "outside_unreachable",
            format!("{host} did not answer: {}", e.without_url()),
        )
    })?;
    let status = StatusCode::from_u16(res.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let kept =
        res.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| HeaderValue::from_bytes(v.as_bytes()).ok());
    let location =
        res.headers().get(reqwest::header::LOCATION).and_then(|v| HeaderValue::from_bytes(v.as_bytes()).ok());
    let bytes = res.bytes().await.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            "outside_unreachable",
            format!("{host}'s answer broke off: {}", e.without_url()),
        )
    })?;
    let mut answer = (status, Body::from(bytes)).into_response();
    if let Some(v) = kept {
        answer.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    if let Some(v) = location {
        answer.headers_mut().insert(header::LOCATION, v);
    }
    Ok(answer)
}

/// The target URL of a relay request: what follows `_egress/` in the raw path, with the
/// request's own query.
pub fn target(req: &Request) -> Option<String> {
    let raw = req.uri().path();
    let at = raw.find(&format!("/{RELAY}"))? + RELAY.len() + 1;
    let mut t = raw[at..].to_string();
    if let Some(q) = req.uri().query() {
        t.push('?');
        t.push_str(q);
    }
    Some(t)
}

/// `page` with the relay script first in its `<head>` (or first of all without one).
/// `prefix` is the page's origin-relative root (`/` or `/{id}/{key}/`).
pub fn with_shim(page: &[u8], prefix: &str) -> Vec<u8> {
    let tag = SHIM.replace("__RELAY__", &format!("{prefix}{RELAY}"));
    let text = String::from_utf8_lossy(page);
    let lower = text.to_ascii_lowercase();
    let at = lower
        .find("<head")
        .or_else(|| lower.find("<html"))
        .and_then(|i| lower[i..].find('>').map(|j| i + j + 1))
        .unwrap_or(0);
    format!("{}{tag}{}", &text[..at], &text[at..]).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shim_goes_first_in_the_head() {
        let out = String::from_utf8(with_shim(b"<!doctype html><HTML lang=en><head><title>t</title>", "/")).unwrap();
        assert!(out.starts_with("<!doctype html><HTML lang=en><head><script data-wright=\"outside\">"), "{out}");
        assert!(out.contains("const relay = \"/_egress/\";") && out.ends_with("<title>t</title>"));
        let bare = String::from_utf8(with_shim(b"<p>hi</p>", "/b/k/")).unwrap();
        assert!(bare.starts_with("<script") && bare.contains("\"/b/k/_egress/\"") && bare.ends_with("<p>hi</p>"));
    }

    #[test]
    fn the_target_is_the_rest_of_the_raw_path_and_its_query() {
        let req = |uri: &str| Request::builder().uri(uri).body(Body::empty()).unwrap();
        assert_eq!(
            target(&req("/_egress/https://api.example.com/q.json?a=1&b=%20")).as_deref(),
            Some("https://api.example.com/q.json?a=1&b=%20")
        );
        assert_eq!(target(&req("/b1/key/_egress/http://h:8/x")).as_deref(), Some("http://h:8/x"));
        assert_eq!(target(&req("/index.html")), None);
        assert!(is_relay("_egress/http://x") && !is_relay("index.html"));
    }
}
