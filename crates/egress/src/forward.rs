//! Requests the proxy makes on the sandbox's behalf: absolute-URI plain HTTP to allowed hosts,
//! and named-API calls with the key added here, on the host, and taken out of the answer.

use crate::policy::{Api, KeyPlacement, normalize_host};
use crate::report::OutsideRequest;
use crate::scrub::Scrubber;
use crate::shared::{Answer, State, elapsed_ms, host_label, text};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use reqwest::Url;
use std::time::Instant;

/// Headers that belong to one connection (or to the proxy), never passed on.
const HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
];

fn passable(headers: &HeaderMap, also_drop: &[&str]) -> HeaderMap {
    let mut out = HeaderMap::new();
    for (name, value) in headers {
        let n = name.as_str();
        if !HOP.contains(&n) && !also_drop.contains(&n) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

/// `http://host[:port]/…` through the proxy: only to allowed hosts.
pub(crate) async fn plain(st: &State, req: Request<Incoming>, started: Instant) -> Answer {
    let method = req.method().to_string();
    let uri = req.uri().clone();
    let raw_host = uri.host().unwrap_or_default().to_string();
    let Some(host) = normalize_host(&raw_host) else {
        let reason = format!("`{raw_host}` is not a host name");
        return st.refuse(StatusCode::BAD_REQUEST, &raw_host, &method, None, reason, started);
    };
    let port = uri.port_u16().unwrap_or(80);
    let label = host_label(&host, port);
    if uri.scheme_str() != Some("http") {
        let reason = "only http:// URLs are forwarded as requests; https goes through CONNECT".to_string();
        return st.refuse(StatusCode::BAD_REQUEST, &label, &method, None, reason, started);
    }
    if !st.policy.allow.allows(&host, port) {
        let reason = format!("{label} is not on this build's list of allowed hosts");
        return st.refuse(StatusCode::FORBIDDEN, &label, &method, None, reason, started);
    }
    let Ok(url) = Url::parse(&uri.to_string()) else {
        return st.refuse(StatusCode::BAD_REQUEST, &label, &method, None, "the URL does not parse".into(), started);
    };
    if let Err(reason) = st.admit() {
        return st.refuse(StatusCode::TOO_MANY_REQUESTS, &label, &method, None, reason, started);
    }
    let (parts, body) = req.into_parts();
    let headers = passable(&parts.headers, &[]);
    let out = st.client.request(parts.method, url).headers(headers);
    exchange(st, out, body, &label, &method, None, started).await
}

/// `/_api/<name>/<rest>?q` → `<base_url>/<rest>?q` with the API's key.
pub(crate) async fn api(st: &State, req: Request<Incoming>, rest: &str, started: Instant) -> Answer {
    let method = req.method().to_string();
    let (name, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let Some(api) = st.policy.api(name) else {
        let reason = format!("no API named `{name}` is configured for this build");
        let label = format!("_api/{name}");
        return st.refuse(StatusCode::NOT_FOUND, &label, &method, Some(name), reason, started);
    };
    let label = api.host_label();
    let Some(url) = api_url(api, tail, req.uri().query()) else {
        let reason = "the path leaves the API's base URL".to_string();
        return st.refuse(StatusCode::BAD_REQUEST, &label, &method, Some(name), reason, started);
    };
    if let Err(reason) = st.admit() {
        return st.refuse(StatusCode::TOO_MANY_REQUESTS, &label, &method, Some(name), reason, started);
    }
    let (parts, body) = req.into_parts();
    // No compression, so the key can be found and taken out of whatever comes back.
    let mut drop = vec!["accept-encoding"];
    if let KeyPlacement::Header { name, .. } = &api.placement {
        drop.push(name.as_str());
    }
    let mut out = st.client.request(parts.method, url).headers(passable(&parts.headers, &drop));
    if let KeyPlacement::Header { name, template } = &api.placement {
        out = out.header(name.as_str(), template.replace("{key}", api.key.expose()));
    }
    exchange(st, out, body, &label, &method, Some(api), started).await
}

/// The upstream URL of an API call, or `None` when `tail` would climb out of the base path.
fn api_url(api: &Api, tail: &str, query: Option<&str>) -> Option<Url> {
    let mut url = api.base_url.clone();
    let base = url.path().trim_end_matches('/').to_string();
    url.set_path(&format!("{base}/{tail}"));
    if !url.path().starts_with(&format!("{base}/")) {
        return None;
    }
    url.set_query(query);
    if let KeyPlacement::Query(param) = &api.placement {
        let kept: Vec<(String, String)> =
            url.query_pairs().filter(|(k, _)| k != param).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        url.query_pairs_mut().clear().extend_pairs(kept).append_pair(param, api.key.expose());
    }
    Some(url)
}

/// Sends the request (its body within the byte budget), reads the answer (within it too),
/// reports, and hands the answer back.
async fn exchange(
    st: &State,
    out: reqwest::RequestBuilder,
    body: Incoming,
    label: &str,
    method: &str,
    api: Option<&Api>,
    started: Instant,
) -> Answer {
    let name = api.map(|a| a.name.as_str());
    let over = |what: &str| format!("the {what} is larger than what is left of this build's outside-traffic budget");
    let budget = usize::try_from(st.budget()).unwrap_or(usize::MAX);
    let sent = match Limited::new(body, budget).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return st.refuse(StatusCode::PAYLOAD_TOO_LARGE, label, method, name, over("request body"), started),
    };
    let sent_len = sent.len() as u64;
    st.take(sent_len);
    let mut res = match out.body(sent).send().await {
        Ok(r) => r,
        Err(e) => {
            let reason = hide_key(&format!("the outside did not answer: {}", e.without_url()), api);
            return failed(st, label, method, name, sent_len, reason, started);
        }
    };
    let status = res.status();
    let mut headers = passable(res.headers(), &[]);
    let mut got: Vec<u8> = Vec::new();
    loop {
        match res.chunk().await {
            Ok(Some(chunk)) => {
                if !st.take(chunk.len() as u64) {
                    return st.refuse(StatusCode::BAD_GATEWAY, label, method, name, over("answer"), started);
                }
                got.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) => {
                let reason = hide_key(&format!("the answer broke off: {}", e.without_url()), api);
                return failed(st, label, method, name, sent_len + got.len() as u64, reason, started);
            }
        }
    }
    let bytes = sent_len + got.len() as u64;
    if let Some(api) = api {
        got = scrub(&mut headers, got, api);
    }
    st.report(OutsideRequest {
        host: label.to_string(),
        method: method.to_string(),
        status: status.as_u16(),
        bytes,
        duration_ms: elapsed_ms(started),
        allowed: true,
        api: name.map(str::to_string),
        reason: None,
    });
    let mut answer = Response::new(Full::new(Bytes::from(got)));
    *answer.status_mut() = status;
    *answer.headers_mut() = headers;
    answer
}

/// An allowed request the outside did not complete: reported as allowed, answered 502.
fn failed(
    st: &State,
    label: &str,
    method: &str,
    api: Option<&str>,
    bytes: u64,
    reason: String,
    started: Instant,
) -> Answer {
    st.report(OutsideRequest {
        host: label.to_string(),
        method: method.to_string(),
        status: StatusCode::BAD_GATEWAY.as_u16(),
        bytes,
        duration_ms: elapsed_ms(started),
        allowed: true,
        api: api.map(str::to_string),
        reason: Some(reason.clone()),
    });
    text(StatusCode::BAD_GATEWAY, format!("wright's egress proxy: {reason}\n"))
}

fn hide_key(text: &str, api: Option<&Api>) -> String {
    match api {
        Some(api) => Scrubber::new(api.key.expose()).scrub_str(text),
        None => text.to_string(),
    }
}

/// Takes the key out of an API's answer (an echoing error page, a `Location` with the query),
/// in every spelling [`Scrubber`] knows.
fn scrub(headers: &mut HeaderMap, body: Vec<u8>, api: &Api) -> Vec<u8> {
    let scrubber = Scrubber::new(api.key.expose());
    let names: Vec<HeaderName> = headers.keys().cloned().collect();
    for name in names {
        let values: Vec<HeaderValue> = headers.get_all(&name).iter().cloned().collect();
        if values.iter().any(|v| scrubber.found_in(v.as_bytes())) {
            headers.remove(&name);
            for v in values {
                if let Ok(v) = HeaderValue::from_bytes(&scrubber.scrub(v.as_bytes())) {
                    headers.append(name.clone(), v);
                }
            }
        }
    }
    scrubber.scrub(&body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Secret;

    fn api(base: &str, placement: KeyPlacement) -> Api {
        Api::new("w", base, Secret::new("s3cr3t key/+"), placement).unwrap()
    }

    #[test]
    fn api_urls_keep_under_the_base_path_and_carry_the_key_once() {
        let q = api("https://api.example.com/v1/", KeyPlacement::query("w", "appid").unwrap());
        let u = api_url(&q, "forecast", Some("city=Lisboa&appid=forged")).unwrap();
        assert_eq!(u.as_str(), "https://api.example.com/v1/forecast?city=Lisboa&appid=s3cr3t+key%2F%2B");
        assert!(api_url(&q, "../admin", None).is_none());
        assert!(api_url(&q, "%2e%2e/admin", None).is_none());
        let h = api("http://127.0.0.1:9/", KeyPlacement::header("w", "X-Key: {key}").unwrap());
        assert_eq!(api_url(&h, "a/b", None).unwrap().as_str(), "http://127.0.0.1:9/a/b");
    }

    #[test]
    fn the_key_is_scrubbed_from_answers_in_every_spelling() {
        let a = api("https://api.example.com", KeyPlacement::query("w", "appid").unwrap());
        let mut headers = HeaderMap::new();
        headers.insert("location", HeaderValue::from_static("/x?appid=s3cr3t+key%2F%2B"));
        let body = scrub(&mut headers, b"bad key s3cr3t key/+ or s3cr3t+key%2F%2B".to_vec(), &a);
        assert_eq!(headers["location"], "/x?appid=[redacted]");
        assert_eq!(String::from_utf8(body).unwrap(), "bad key [redacted] or [redacted]");
        assert_eq!(hide_key("x s3cr3t key/+ y", Some(&a)), "x [redacted] y");
        let mut headers = HeaderMap::new();
        let body = scrub(&mut headers, br#"{"key":"s3cr3t key\/+","b64":"czNjcjN0IGtleS8r"}"#.to_vec(), &a);
        assert_eq!(String::from_utf8(body).unwrap(), r#"{"key":"[redacted]","b64":"[redacted]"}"#);
    }
}
