//! A per-address limit on requests without valid credentials, against guessing: login links,
//! tokens, and the routes anyone may call (`/healthz`, `/readyz`, `/metrics`, the page).
//!
//! Each client address (an IPv6 client by its /64, which one machine usually has whole) has two
//! token buckets in the server's state (no global state): a request without credentials takes
//! a token from the first; one whose credentials are refused (401) takes one from the second
//! after the fact. A request without credentials is answered 429 with `Retry-After` while the
//! first is empty; one with credentials while the second is. A signed-in client never spends
//! tokens, and anonymous traffic from a shared address (a proxy, a classroom NAT) never holds
//! it back: only failed sign-ins from its address do, as they are how credentials are guessed.
//! `X-Forwarded-For` is believed only from the proxies the configuration names.

use axum::http::HeaderMap;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Instant;

/// Buckets kept (of each kind) before full ones (addresses quiet long enough) are dropped, and
/// then the longest unused ones: a flood of new addresses cannot grow the map without bound.
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

/// What a bucket is keyed by: an IPv4 address, or an IPv6 address's /64. One machine is usually
/// given a whole /64, so keying by the address would give it 2^64 buckets to rotate through.
fn bucket_key(ip: IpAddr) -> IpAddr {
    match canonical(ip) {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & (u128::MAX << 64)).into()),
        v4 => v4,
    }
}

/// Which of an address's buckets: requests without credentials, or refused sign-ins.
#[derive(Clone, Copy)]
enum Kind {
    Anonymous,
    FailedSignIn,
}

/// The buckets of the addresses seen lately.
pub struct IpLimiter {
    cfg: IpLimit,
    anonymous: Mutex<HashMap<IpAddr, Bucket>>,
    failed: Mutex<HashMap<IpAddr, Bucket>>,
}

impl IpLimiter {
    pub fn new(cfg: IpLimit) -> Self {
        Self { cfg, anonymous: Mutex::new(HashMap::new()), failed: Mutex::new(HashMap::new()) }
    }

    fn map(&self, kind: Kind) -> std::sync::MutexGuard<'_, HashMap<IpAddr, Bucket>> {
        let m = match kind {
            Kind::Anonymous => &self.anonymous,
            Kind::FailedSignIn => &self.failed,
        };
        match m.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        }
    }

    pub fn enabled(&self) -> bool {
        self.cfg.per_minute > 0
    }

    fn per_sec(&self) -> f64 {
        f64::from(self.cfg.per_minute) / 60.0
    }

    fn burst(&self) -> f64 {
        f64::from(self.cfg.burst.max(1))
    }

    /// Refill `ip`'s bucket of `kind` to `now`, then let `f` use it.
    fn with_bucket<R>(&self, kind: Kind, ip: IpAddr, now: Instant, f: impl FnOnce(&mut Bucket) -> R) -> R {
        let (rate, burst) = (self.per_sec(), self.burst());
        let ip = bucket_key(ip);
        let mut map = self.map(kind);
        if map.len() >= MAX_TRACKED && !map.contains_key(&ip) {
            map.retain(|_, b| b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate < burst);
            evict_oldest(&mut map);
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

    /// Take a token for a request without credentials, or say how long to wait for one.
    pub fn take(&self, ip: IpAddr, now: Instant) -> Result<(), u64> {
        self.with_bucket(Kind::Anonymous, ip, now, |b| {
            if b.tokens >= 1.0 {
                b.tokens -= 1.0;
                Ok(())
            } else {
                Err(self.wait(b))
            }
        })
    }

    /// Whether `ip` may not try credentials now: its refused sign-ins used up their bucket (and
    /// how long until it may). Only refused sign-ins count, so anonymous traffic from the same
    /// address never locks its signed-in users out. Signed-in traffic asks this on every
    /// request, so an address without a bucket gets none made for it.
    pub fn exhausted(&self, ip: IpAddr, now: Instant) -> Option<u64> {
        if !self.map(Kind::FailedSignIn).contains_key(&bucket_key(ip)) {
            return None;
        }
        self.with_bucket(Kind::FailedSignIn, ip, now, |b| (b.tokens < 1.0).then(|| self.wait(b)))
    }

    /// Spend a token of the refused sign-ins' bucket after the fact, down to none.
    pub fn charge(&self, ip: IpAddr, now: Instant) {
        self.with_bucket(Kind::FailedSignIn, ip, now, |b| b.tokens = (b.tokens - 1.0).max(0.0));
    }

    /// The client's address: the peer's, or, when the peer is a trusted proxy, the first entry
    /// of `X-Forwarded-For` read from the right that is not a trusted proxy. Only our proxies'
    /// entries are believed, so the reading stops there: an entry that is not an address is the
    /// client's doing, and skipping it would let the client pick the address charged, so the
    /// peer's is used instead. When every entry is a trusted proxy, the leftmost is the client.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let trusted = |ip: IpAddr| self.cfg.trusted_proxies.iter().any(|c| c.contains(ip));
        if !trusted(peer) {
            return canonical(peer);
        }
        let hops: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        let mut leftmost = None;
        for hop in hops.iter().rev() {
            match hop.parse::<IpAddr>() {
                Ok(ip) if trusted(ip) => leftmost = Some(ip),
                Ok(ip) => return canonical(ip),
                Err(_) => return canonical(peer),
            }
        }
        canonical(leftmost.unwrap_or(peer))
    }
}

/// Drop the longest unused buckets until there is room for one more under [`MAX_TRACKED`] (and a
/// tenth of it spare, so a flood does not sort the map on every new address).
fn evict_oldest(map: &mut HashMap<IpAddr, Bucket>) {
    if map.len() < MAX_TRACKED {
        return;
    }
    let keep = MAX_TRACKED - MAX_TRACKED / 10;
    let mut by_age: Vec<(Instant, IpAddr)> = map.iter().map(|(ip, b)| (b.at, *ip)).collect();
    by_age.sort_unstable();
    for (_, ip) in by_age.iter().take(map.len().saturating_sub(keep)) {
        map.remove(ip);
    }
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
        assert_eq!(l.take(ip("10.0.0.1"), t0 + Duration::from_millis(1500)), Err(1));
        assert_eq!(l.take(ip("10.0.0.1"), t0 + Duration::from_secs(60)), Ok(()), "refilled");
        l.charge(ip("10.0.0.3"), t0);
        l.charge(ip("10.0.0.3"), t0);
        l.charge(ip("10.0.0.3"), t0);
        assert_eq!(l.exhausted(ip("10.0.0.3"), t0), Some(1), "refused sign-ins spend tokens");
        assert!(l.exhausted(ip("10.0.0.3"), t0 + Duration::from_secs(60)).is_none(), "refilled");
    }

    #[test]
    fn anonymous_traffic_never_locks_out_signed_in_users_of_the_same_address() {
        let l = IpLimiter::new(IpLimit { per_minute: 60, burst: 2, trusted_proxies: vec![] });
        let t0 = Instant::now();
        let nat = ip("203.0.113.5");
        assert_eq!(l.take(nat, t0), Ok(()));
        assert_eq!(l.take(nat, t0), Ok(()));
        assert_eq!(l.take(nat, t0), Err(1), "the anonymous bucket is empty");
        assert_eq!(l.exhausted(nat, t0), None, "signed-in requests are still let through");
        // Failed sign-ins have their own bucket, and they do not hold back anonymous traffic.
        l.charge(nat, t0);
        assert_eq!(l.exhausted(nat, t0), None, "one token of two spent");
        l.charge(nat, t0);
        assert_eq!(l.exhausted(nat, t0), Some(1), "guessing credentials is held back");
        assert_eq!(l.take(nat, t0 + Duration::from_secs(1)), Ok(()), "anonymous refilled on its own");
    }

    #[test]
    fn an_ipv6_client_is_one_bucket_per_64() {
        let l = IpLimiter::new(IpLimit { per_minute: 60, burst: 1, trusted_proxies: vec![] });
        let t0 = Instant::now();
        assert_eq!(l.take(ip("2001:db8:1:2::1"), t0), Ok(()));
        assert_eq!(l.take(ip("2001:db8:1:2:ffff:ffff:ffff:fffe"), t0), Err(1), "same /64");
        assert_eq!(l.take(ip("2001:db8:1:3::1"), t0), Ok(()), "the next /64 is another network");
        assert_eq!(l.take(ip("10.0.0.1"), t0), Ok(()));
        assert_eq!(l.take(ip("10.0.0.2"), t0), Ok(()), "IPv4 by the address");
        assert_eq!(l.take(ip("::ffff:10.0.0.1"), t0), Err(1), "a mapped IPv4 address is that address");
    }

    #[test]
    fn the_map_never_grows_past_its_cap() {
        let l = IpLimiter::new(IpLimit { per_minute: 1, burst: 5, trusted_proxies: vec![] });
        let t0 = Instant::now();
        // Every bucket has a token spent, so none is full and none can be dropped as idle.
        for n in 0..(MAX_TRACKED as u32 + 500) {
            let at = t0 + Duration::from_millis(u64::from(n));
            assert_eq!(l.take(IpAddr::V4(n.into()), at), Ok(()));
            assert!(l.map(Kind::Anonymous).len() <= MAX_TRACKED);
        }
        let map = l.map(Kind::Anonymous);
        let newest = IpAddr::V4((MAX_TRACKED as u32 + 499).into());
        assert!(map.contains_key(&newest), "the newest is kept");
        assert!(!map.contains_key(&IpAddr::V4(0u32.into())), "the oldest went first");
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
    fn forwarded_for_stops_at_the_first_untrusted_entry_from_the_right() {
        let cfg = IpLimit { trusted_proxies: vec!["10.0.0.0/8".parse().unwrap()], ..IpLimit::default() };
        let l = IpLimiter::new(cfg);
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert("x-forwarded-for", HeaderValue::from_static(v));
            h
        };
        // A client cannot hide behind garbage: reading stops there and the peer is charged.
        assert_eq!(l.client(ip("10.0.0.5"), &with("203.0.113.9, not-an-ip, 10.1.1.1")), ip("10.0.0.5"));
        assert_eq!(l.client(ip("10.0.0.5"), &with("1.2.3.4, 10.2.2.2, 10.1.1.1")), ip("1.2.3.4"));
        assert_eq!(l.client(ip("10.0.0.5"), &with("10.9.9.9, 10.1.1.1")), ip("10.9.9.9"), "all our proxies");
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
