//! The page's requests to allowed outside hosts ([`OutsideAccess`]): wright asks them itself,
//! through the build's filtering proxy, and gives Chromium the answers (CDP
//! `Fetch.fulfillRequest`). The proxy checks, counts and reports them like the sandbox's own,
//! and Chromium needs no proxy settings, so its background requests stay unanswered.

use crate::OutsideAccess;
use base64::Engine as _;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    EventRequestPaused, FailRequestParams, FulfillRequestParams, HeaderEntry,
};
use chromiumoxide::cdp::browser_protocol::network::ErrorReason;
use std::time::Duration;

/// Longest wait for an outside answer; the browser check's own limit bounds the whole.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// Headers the client sets itself (or that only make sense hop by hop).
const OWN_HEADERS: &[&str] = &["host", "content-length", "connection", "proxy-authorization", "proxy-connection"];

/// A client for the allowed hosts, through the proxy.
pub(crate) struct Outside {
    access: OutsideAccess,
    client: reqwest::Client,
}

impl Outside {
    /// `None` when the proxy's address is not a URL (nothing is then let out).
    pub(crate) fn new(access: &OutsideAccess) -> Option<Self> {
        let proxy = reqwest::Proxy::all(&access.proxy).ok()?;
        let client = reqwest::Client::builder()
            .proxy(proxy)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(ANSWER_TIMEOUT)
            .build()
            .ok()?;
        Some(Self { access: access.clone(), client })
    }

    pub(crate) fn allows(&self, url: &str) -> bool {
        self.access.allows(url)
    }

    /// Ask the paused request through the proxy and hand Chromium the answer; a request that
    /// got no answer at all fails as a connection failure would.
    pub(crate) async fn fulfil(&self, page: &Page, e: &EventRequestPaused) {
        match self.ask(e).await {
            Ok((status, headers, body)) => {
                let mut p = FulfillRequestParams::new(e.request_id.clone(), status);
                p.response_headers = Some(headers);
                p.body = Some(base64::engine::general_purpose::STANDARD.encode(body).into());
                if let Err(err) = page.execute(p).await {
                    tracing::debug!("an outside answer could not be handed to the page: {err}");
                }
            }
            Err(err) => {
                tracing::debug!("outside request failed: {err}");
                let _ = page.execute(FailRequestParams::new(e.request_id.clone(), ErrorReason::ConnectionFailed)).await;
            }
        }
    }

    async fn ask(&self, e: &EventRequestPaused) -> Result<(i64, Vec<HeaderEntry>, Vec<u8>), reqwest::Error> {
        let method = reqwest::Method::from_bytes(e.request.method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let mut req = self.client.request(method, &e.request.url);
        if let Some(headers) = e.request.headers.inner().as_object() {
            for (name, value) in headers {
                if let Some(value) =
                    value.as_str().filter(|_| !OWN_HEADERS.contains(&name.to_ascii_lowercase().as_str()))
                {
                    req = req.header(name.as_str(), value);
                }
            }
        }
        let body: Vec<u8> = e
            .request
            .post_data_entries
            .iter()
            .flatten()
            .filter_map(|entry| entry.bytes.as_ref())
            .filter_map(|b| base64::engine::general_purpose::STANDARD.decode(AsRef::<str>::as_ref(b)).ok())
            .flatten()
            .collect();
        if !body.is_empty() {
            req = req.body(body);
        }
        let res = req.send().await?;
        let status = i64::from(res.status().as_u16());
        let headers = res
            .headers()
            .iter()
            .filter_map(|(k, v)| v.to_str().ok().map(|v| HeaderEntry::new(k.as_str(), v)))
            .collect();
        let bytes = res.bytes().await?.to_vec();
        Ok((status, headers, bytes))
    }
}
