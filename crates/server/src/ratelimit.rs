//! A per-address limit on requests without valid credentials, against guessing: login links,
//! tokens, and the routes anyone may call (`/healthz`, `/readyz`, `/metrics`, the page).
//!
//! Each client address has a token bucket in the server's state (no global state): a request
//! without credentials takes a token; one whose credentials are refused (401) takes one after
//! the fact; while an address has none left, every request from it is answered 429 with
//! `Retry-After`. A signed-in client never spends tokens, so a user is only held back when
//! their address also sends requests without credentials or failed sign-ins.
//! `X-Forwarded-For` is believed only from the proxies the configuration names.

use crate::AppState;
use crate::error::ApiError;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::Instant;

/// Buckets kept before full ones (addresses quiet long enough) are dropped.
const MAX_TRACKED: usize = 10_000;

/// How the limit is set (`[serve]` in wright.toml, or flags).
#[derive(Debug, Clone)]
pub struct IpLimit {
    /// Requests without valid credentials one address may make per minute; 0 turns it off.
    pub per_minute: u32,
    /// How many of them may come at once.
    pub burst: u32,
    /// Proxies whose `X-Forwarded-For` names the client (addresses or CIDR ranges).
    pub trusted_proxies: Vec<Cidr>,
}

impl Default for IpLimit {
    fn default() -> Self {
        Self { per_minute: 120, burst: 60, trusted_proxies: vec![] }
    }
}

/// An address range: `10.0.0.0/8`, `fd00::/8`, or one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl std::str::FromStr for Cidr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not an address or an address range such as 10.0.0.0/8");
        let (addr, prefix) = match s.trim().split_once('/') {
            Some((a, p)) => (a.parse::<IpAddr>().map_err(|_| bad())?, Some(p.parse::<u8>().map_err(|_| bad())?)),
            None => (s.trim().parse::<IpAddr>().map_err(|_| bad())?, None),
        };
        let bits = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = prefix.unwrap_or(bits);
        if prefix > bits {
            return Err(bad());
        }
        Ok(Self { addr, prefix })
    }
}

impl Cidr {
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        let mask = |bits: u32, width: u32| if bits == 0 { 0 } else { u128::MAX << (width - bits) };
        match (canonical(self.addr), ip) {
            (IpAddr::V4(a), IpAddr::V4(b)) => {
                let m = mask(u32::from(self.prefix), 32) as u32;
                u32::from(a) & m == u32::from(b) & m
            }
            (IpAddr::V6(a), IpAddr::V6(b)) => {
                let m = mask(u32::from(self.prefix), 128);
                u128::from(a) & m == u128::from(b) & m
            }
            _ => false,
        }
    }
}

/// An IPv4 address seen through an IPv6 socket is that IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The buckets of the addresses seen lately.
pub struct IpLimiter {
    cfg: IpLimit,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

impl IpLimiter {
    pub fn new(cfg: IpLimit) -> Self {
        Self { cfg, buckets: Mutex::new(HashMap::new()) }
    }

    fn enabled(&self) -> bool {
        self.cfg.per_minute > 0
    }

    fn per_sec(&self) -> f64 {
        f64::from(self.cfg.per_minute) / 60.0
    }

    fn burst(&self) -> f64 {
        f64::from(self.cfg.burst.max(1))
    }

    /// Refill `ip`'s bucket to `now`, then let `f` use it.
    fn with_bucket<R>(&self, ip: IpAddr, now: Instant, f: impl FnOnce(&mut Bucket) -> R) -> R {
        let (rate, burst) = (self.per_sec(), self.burst());
        let mut map = match self.buckets.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        if map.len() >= MAX_TRACKED && !map.contains_key(&ip) {
            map.retain(|_, b| b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate < burst);
        }
        let b = map.entry(ip).or_insert(Bucket { tokens: burst, at: now });
        b.tokens = (b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate).min(burst);
        b.at = now;
        f(b)
    }

    /// Seconds until `ip` has a token again.
    fn wait(&self, b: &Bucket) -> u64 {
        ((1.0 - b.tokens) / self.per_sec()).ceil().max(1.0) as u64
    }

    /// Take a token, or say how long to wait for one.
    pub fn take(&self, ip: IpAddr, now: Instant) -> Result<(), u64> {
        self.with_bucket(ip, now, |b| {
            if b.tokens >= 1.0 {
                b.tokens -= 1.0;
                Ok(())
            } else {
                Err(self.wait(b))
            }
        })
    }

    /// Whether `ip` has no token left (and how long until it has). Signed-in traffic asks
    /// this on every request, so an address without a bucket gets none made for it.
    pub fn exhausted(&self, ip: IpAddr, now: Instant) -> Option<u64> {
        let known = match self.buckets.lock() {
            Ok(m) => m.contains_key(&ip),
            Err(p) => p.into_inner().contains_key(&ip),
        };
        if !known {
            return None;
        }
        self.with_bucket(ip, now, |b| (b.tokens < 1.0).then(|| self.wait(b)))
    }

    /// Spend a token after the fact (a refused sign-in), down to none.
    pub fn charge(&self, ip: IpAddr, now: Instant) {
        self.with_bucket(ip, now, |b| b.tokens = (b.tokens - 1.0).max(0.0));
    }

    /// The client's address: the peer's, or, when the peer is a trusted proxy, the last
    /// address in `X-Forwarded-For` that is not one.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let trusted = |ip: IpAddr| self.cfg.trusted_proxies.iter().any(|c| c.contains(ip));
        if !trusted(peer) {
            return canonical(peer);
        }
        let hops: Vec<IpAddr> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|a| a.trim().parse::<IpAddr>().ok())
            .collect();
        hops.iter().rev().copied().find(|ip| !trusted(*ip)).or(hops.first().copied()).map(canonical).unwrap_or(peer)
    }
}

fn refused(retry: u64) -> Response {
    ApiError::too_many(
        "rate_limited",
        format!("too many requests without a valid sign-in from your address; try again in {retry} s"),
        retry,
    )
    .into_response()
}

/// The middleware: see the module's description.
pub async fn limit(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let limiter = &state.ip_limiter;
    let Some(peer) = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()) else {
        return next.run(req).await;
    };
    if !limiter.enabled() {
        return next.run(req).await;
    }
    let ip = limiter.client(peer, req.headers());
    let now = Instant::now();
    let bearer = req.headers().contains_key(header::AUTHORIZATION);
    let cookie = crate::auth::cookie_value(req.headers(), crate::auth::COOKIE).is_some();
    if !bearer && !cookie {
        if let Err(retry) = limiter.take(ip, now) {
            state.metrics.refused("per_address");
            return refused(retry);
        }
        return next.run(req).await;
    }
    // Tokens and session cookies are guessed by sending them: an address out of tokens may
    // not try more; a refused one spends a token below.
    if let Some(retry) = limiter.exhausted(ip, now) {
        state.metrics.refused("per_address");
        return refused(retry);
    }
    let res = next.run(req).await;
    if res.status() == StatusCode::UNAUTHORIZED {
        limiter.charge(ip, Instant::now());
    }
    res
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use axum::http::HeaderValue;
    use std::time::Duration;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_bucket_empties_refills_and_is_per_address() {
        let l = IpLimiter::new(IpLimit { per_minute: 60, burst: 3, trusted_proxies: vec![] });
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(l.take(ip("10.0.0.1"), t0), Ok(()));
        }
        assert_eq!(l.take(ip("10.0.0.1"), t0), Err(1), "one a second: wait a second");
        assert_eq!(l.take(ip("10.0.0.2"), t0), Ok(()), "another address has its own");
        assert_eq!(l.take(ip("10.0.0.1"), t0 + Duration::from_millis(1500)), Ok(()));
        assert!(l.exhausted(ip("10.0.0.1"), t0 + Duration::from_millis(1500)).is_some());
        assert!(l.exhausted(ip("10.0.0.1"), t0 + Duration::from_secs(60)).is_none(), "refilled");
        l.charge(ip("10.0.0.3"), t0);
        l.charge(ip("10.0.0.3"), t0);
        l.charge(ip("10.0.0.3"), t0);
        assert_eq!(l.exhausted(ip("10.0.0.3"), t0), Some(1), "refused sign-ins spend tokens");
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let cfg = IpLimit { trusted_proxies: vec!["10.0.0.0/8".parse().unwrap()], ..IpLimit::default() };
        let l = IpLimiter::new(cfg);
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", HeaderValue::from_static("1.2.3.4, 203.0.113.9, 10.1.1.1"));
        assert_eq!(l.client(ip("10.0.0.5"), &h), ip("203.0.113.9"), "the last hop before our proxies");
        assert_eq!(l.client(ip("198.51.100.7"), &h), ip("198.51.100.7"), "anyone may write the header");
        assert_eq!(l.client(ip("::ffff:198.51.100.7"), &HeaderMap::new()), ip("198.51.100.7"));
        assert_eq!(l.client(ip("10.0.0.5"), &HeaderMap::new()), ip("10.0.0.5"));
    }

    #[test]
    fn ranges_parse_and_match() {
        let c: Cidr = "192.168.0.0/16".parse().unwrap();
        assert!(c.contains(ip("192.168.4.2")) && !c.contains(ip("192.169.0.1")));
        let one: Cidr = "::1".parse().unwrap();
        assert!(one.contains(ip("::1")) && !one.contains(ip("::2")));
        assert!("0.0.0.0/0".parse::<Cidr>().unwrap().contains(ip("8.8.8.8")));
        assert!("10.0.0.0/33".parse::<Cidr>().is_err() && "proxy".parse::<Cidr>().is_err());
    }
}
