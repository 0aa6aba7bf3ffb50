//! What a build may reach: an allow-list of hosts, named APIs whose keys stay on the host, and
//! per-build limits. Everything here is parsed from the admin's configuration, so each
//! mistake is a [`PolicyError`] that names the entry, never a panic or a silent widening.

use reqwest::Url;
use std::fmt;
use std::net::Ipv6Addr;

/// Why an entry of the egress configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error("`{0}` is not a host: write a name or address, optionally with `:port` (no scheme, no path)")]
    BadHost(String),
    #[error("`{entry}`: the port `{port}` is not a number from 1 to 65535")]
    BadPort { entry: String, port: String },
    #[error("API name `{0}` must be 1 to 40 letters, digits, `-` or `_`")]
    BadApiName(String),
    #[error("APIs `{0}` and `{1}` would share the variable WRIGHT_API_{2}; rename one")]
    ApiClash(String, String, String),
    #[error("API `{name}`: base_url `{url}` must be an http:// or https:// URL with a host and no query")]
    BadBaseUrl { name: String, url: String },
    #[error("API `{0}`: its key is empty")]
    EmptyKey(String),
    #[error("API `{name}`: the header `{header}` must read `Name: value with {{key}}`")]
    BadHeader { name: String, header: String },
    #[error("API `{name}`: the query parameter name `{param}` must be letters, digits, `-` or `_`")]
    BadQuery { name: String, param: String },
}

/// One allow-list entry: `host` (ports 80 and 443) or `host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRule {
    host: String,
    port: Option<u16>,
}

/// The host part of an authority as wright compares it: lower case, without a trailing dot,
/// IPv6 without brackets. `None` for anything that is not a plain host name or address.
pub fn normalize_host(raw: &str) -> Option<String> {
    let raw = raw.trim_end_matches('.');
    if let Some(inner) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return inner.parse::<Ipv6Addr>().ok().map(|a| a.to_string());
    }
    if raw.is_empty() || raw.len() > 253 {
        return None;
    }
    let host = raw.to_ascii_lowercase();
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    host.split('.').all(label_ok).then_some(host)
}

/// Splits `host[:port]` (IPv6 in brackets) into its parts, unparsed.
fn split_authority(s: &str) -> (&str, Option<&str>) {
    if s.starts_with('[') {
        return match s.find(']') {
            Some(end) => match &s[end + 1..] {
                "" => (s, None),
                rest => (&s[..=end], Some(rest.strip_prefix(':').unwrap_or(rest))),
            },
            None => (s, None),
        };
    }
    match s.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (s, None),
    }
}

impl HostRule {
    /// `api.example.com`, `api.example.com:8443`, `127.0.0.1:38123`, `[::1]:9000`.
    pub fn parse(entry: &str) -> Result<Self, PolicyError> {
        let s = entry.trim();
        if s.contains("://") || s.contains('/') || s.contains('@') || s.chars().any(char::is_whitespace) {
            return Err(PolicyError::BadHost(entry.to_string()));
        }
        let (host, port) = split_authority(s);
        let host = normalize_host(host).ok_or_else(|| PolicyError::BadHost(entry.to_string()))?;
        let port = match port {
            None => None,
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|n| *n != 0)
                    .ok_or_else(|| PolicyError::BadPort { entry: entry.to_string(), port: p.to_string() })?,
            ),
        };
        Ok(Self { host, port })
    }

    /// The web origins this rule allows (a bare host: `http://host` and `https://host`; a
    /// pinned port: that port in both schemes, or just the scheme whose port it is).
    pub fn origins(&self) -> Vec<String> {
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        match self.port {
            None => vec![format!("http://{host}"), format!("https://{host}")],
            Some(80) => vec![format!("http://{host}")],
            Some(443) => vec![format!("https://{host}")],
            Some(p) => vec![format!("http://{host}:{p}"), format!("https://{host}:{p}")],
        }
    }

    /// Whether this rule lets a connection to `host` (already normalised) on `port` through.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        self.host == host && self.port.map_or(port == 80 || port == 443, |p| p == port)
    }

    /// What both rules allow, if anything: how a job's request narrows the admin's rule.
    fn intersect(&self, other: &HostRule) -> Option<HostRule> {
        if self.host != other.host {
            return None;
        }
        let port = match (self.port, other.port) {
            (None, None) => None,
            // A bare host means 80 and 443, so it meets a pinned port only there.
            (Some(p), None) | (None, Some(p)) if p == 80 || p == 443 => Some(p),
            (Some(p), Some(q)) if p == q => Some(p),
            _ => return None,
        };
        Some(HostRule { host: self.host.clone(), port })
    }
}

impl fmt::Display for HostRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        match self.port {
            Some(p) => write!(f, "{host}:{p}"),
            None => write!(f, "{host}"),
        }
    }
}

/// The hosts a build may reach through the forward proxy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList(Vec<HostRule>);

impl AllowList {
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Self, PolicyError> {
        entries.iter().map(|e| HostRule::parse(e.as_ref())).collect::<Result<Vec<_>, _>>().map(AllowList)
    }

    pub fn allows(&self, host: &str, port: u16) -> bool {
        self.0.iter().any(|r| r.allows(host, port))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn rules(&self) -> &[HostRule] {
        &self.0
    }

    /// The part of this list that `asked` also names. Entries the list does not allow come
    /// back in the second value (as written), so the caller can say they were left out.
    pub fn narrow(&self, asked: &[HostRule]) -> (AllowList, Vec<String>) {
        let mut kept: Vec<HostRule> = Vec::new();
        let mut refused = Vec::new();
        for a in asked {
            let matches: Vec<HostRule> = self.0.iter().filter_map(|c| a.intersect(c)).collect();
            if matches.is_empty() {
                refused.push(a.to_string());
            }
            for m in matches {
                if !kept.contains(&m) {
                    kept.push(m);
                }
            }
        }
        (AllowList(kept), refused)
    }
}

/// An API key. Its `Debug` never shows the value, so it cannot leak through a log line.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([hidden])")
    }
}

/// How an API wants its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPlacement {
    /// A header: `name` and a value template holding `{key}` (`Bearer {key}`).
    Header { name: String, template: String },
    /// A query parameter of that name (`appid`).
    Query(String),
}

impl KeyPlacement {
    /// `Authorization: Bearer {key}` → a header placement.
    pub fn header(api: &str, spec: &str) -> Result<Self, PolicyError> {
        let bad = || PolicyError::BadHeader { name: api.to_string(), header: spec.to_string() };
        let (name, value) = spec.split_once(':').ok_or_else(bad)?;
        let (name, value) = (name.trim(), value.trim());
        let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        if name.is_empty() || !name.bytes().all(token) || !value.contains("{key}") {
            return Err(bad());
        }
        Ok(Self::Header { name: name.to_ascii_lowercase(), template: value.to_string() })
    }

    pub fn query(api: &str, param: &str) -> Result<Self, PolicyError> {
        let ok = !param.is_empty() && param.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if ok {
            Ok(Self::Query(param.to_string()))
        } else {
            Err(PolicyError::BadQuery { name: api.into(), param: param.into() })
        }
    }
}

/// A named outside API: the sandbox calls `/_api/<name>/…` on the proxy, which forwards to
/// `base_url/…` with the key added.
#[derive(Debug, Clone)]
pub struct Api {
    pub name: String,
    pub base_url: Url,
    pub key: Secret,
    pub placement: KeyPlacement,
}

impl Api {
    pub fn new(name: &str, base_url: &str, key: Secret, placement: KeyPlacement) -> Result<Self, PolicyError> {
        let name_ok = !name.is_empty()
            && name.len() <= 40
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !name_ok {
            return Err(PolicyError::BadApiName(name.to_string()));
        }
        let bad = || PolicyError::BadBaseUrl { name: name.to_string(), url: base_url.to_string() };
        let url = Url::parse(base_url).map_err(|_| bad())?;
        let fine = matches!(url.scheme(), "http" | "https")
            && url.host_str().is_some()
            && url.query().is_none()
            && url.fragment().is_none()
            && url.username().is_empty()
            && url.password().is_none();
        if !fine {
            return Err(bad());
        }
        if key.expose().is_empty() {
            return Err(PolicyError::EmptyKey(name.to_string()));
        }
        Ok(Self { name: name.to_string(), base_url: url, key, placement })
    }

    /// The environment variable the sandbox finds this API's proxy URL in: `WRIGHT_API_<NAME>`.
    pub fn env_name(&self) -> String {
        env_name(&self.name)
    }

    /// The upstream host as reported: `host`, or `host:port` for a port other than 80/443.
    pub fn host_label(&self) -> String {
        let host = self.base_url.host_str().unwrap_or_default();
        match self.base_url.port() {
            Some(p) if p != 80 && p != 443 => format!("{host}:{p}"),
            _ => host.to_string(),
        }
    }
}

/// `WRIGHT_API_` and the name in upper case, anything but letters and digits as `_`.
pub fn env_name(api: &str) -> String {
    let tail: String =
        api.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    format!("WRIGHT_API_{tail}")
}

/// Per-build limits; refusals past them are reported like any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Outside requests (each CONNECT tunnel, plain request or API call counts one).
    pub max_requests: u64,
    /// Body bytes both ways, summed: request bodies sent out plus response bodies received,
    /// and every byte through a tunnel in either direction. Headers are not counted.
    pub max_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_requests: 200, max_bytes: 20 << 20 }
    }
}

/// Everything the proxy enforces for one build.
#[derive(Debug, Clone, Default)]
pub struct EgressPolicy {
    pub allow: AllowList,
    pub apis: Vec<Api>,
    pub limits: Limits,
}

impl EgressPolicy {
    /// Checks that no two APIs share a name or an environment variable.
    pub fn new(allow: AllowList, apis: Vec<Api>, limits: Limits) -> Result<Self, PolicyError> {
        for (i, a) in apis.iter().enumerate() {
            if let Some(b) = apis[..i].iter().find(|b| b.env_name() == a.env_name()) {
                let tail = a.env_name().trim_start_matches("WRIGHT_API_").to_string();
                return Err(PolicyError::ApiClash(b.name.clone(), a.name.clone(), tail));
            }
        }
        Ok(Self { allow, apis, limits })
    }

    /// Whether there is anything to reach at all (otherwise no proxy is needed).
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.apis.is_empty()
    }

    pub fn api(&self, name: &str) -> Option<&Api> {
        self.apis.iter().find(|a| a.name == name)
    }

    /// The policy a job may ask for: only hosts this one allows, only APIs it names. Each
    /// `asked` entry is a host rule or an API's name. The second value lists what was asked
    /// but is not allowed here (to be said to the user), the third a parse error if any.
    pub fn narrow(&self, asked: &[String]) -> Result<(EgressPolicy, Vec<String>), PolicyError> {
        let mut hosts = Vec::new();
        let mut apis = Vec::new();
        for a in asked {
            match self.api(a.trim()) {
                Some(api) => apis.push(api.clone()),
                None => hosts.push(HostRule::parse(a)?),
            }
        }
        let (allow, refused) = self.allow.narrow(&hosts);
        Ok((EgressPolicy { allow, apis, limits: self.limits }, refused))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bare_hosts_allow_web_ports_and_ports_pin_one() {
        let l = AllowList::parse(&["API.Example.com.", "127.0.0.1:38123", "[::1]:9000"]).unwrap();
        assert!(l.allows("api.example.com", 443) && l.allows("api.example.com", 80));
        assert!(!l.allows("api.example.com", 8080));
        assert!(!l.allows("evil.example.com", 443) && !l.allows("example.com", 443));
        assert!(l.allows("127.0.0.1", 38123) && !l.allows("127.0.0.1", 38124));
        assert!(l.allows("::1", 9000));
        assert_eq!(l.rules()[2].to_string(), "[::1]:9000");
        let all: Vec<String> = l.rules().iter().flat_map(HostRule::origins).collect();
        assert_eq!(
            all,
            [
                "http://api.example.com",
                "https://api.example.com",
                "http://127.0.0.1:38123",
                "https://127.0.0.1:38123",
                "http://[::1]:9000",
                "https://[::1]:9000"
            ]
        );
    }

    #[test]
    fn entries_that_are_not_hosts_are_refused_by_name() {
        for bad in ["", "https://a.com", "a.com/x", "user@a.com", "a com", "a..com", "-a.com", "[zz]:1", "a.com:"] {
            assert!(HostRule::parse(bad).is_err(), "{bad:?} should be refused");
        }
        assert_eq!(
            HostRule::parse("a.com:99999").unwrap_err().to_string(),
            "`a.com:99999`: the port `99999` is not a number from 1 to 65535"
        );
    }

    #[test]
    fn a_request_only_narrows_what_the_admin_allowed() {
        let admin = AllowList::parse(&["api.example.com", "127.0.0.1:38123"]).unwrap();
        let asked =
            AllowList::parse(&["api.example.com:443", "127.0.0.1", "evil.com", "api.example.com:8080"]).unwrap();
        let (kept, refused) = admin.narrow(asked.rules());
        assert!(kept.allows("api.example.com", 443) && !kept.allows("api.example.com", 80));
        assert!(!kept.allows("127.0.0.1", 38123), "a bare host asks for 80/443 only");
        assert_eq!(refused, ["127.0.0.1", "evil.com", "api.example.com:8080"]);
    }

    #[test]
    fn apis_check_their_parts_and_never_show_the_key() {
        let key = Secret::new("k-123456789");
        let h = KeyPlacement::header("w", "Authorization: Bearer {key}").unwrap();
        let api = Api::new("weather-now", "https://api.example.com/v1", key.clone(), h).unwrap();
        assert_eq!(api.env_name(), "WRIGHT_API_WEATHER_NOW");
        assert!(!format!("{api:?}").contains("k-123456789"));
        assert!(KeyPlacement::header("w", "Authorization Bearer {key}").is_err());
        assert!(KeyPlacement::header("w", "X-Key: static").is_err());
        assert!(KeyPlacement::query("w", "app id").is_err());
        let q = KeyPlacement::query("w", "appid").unwrap();
        for url in ["ftp://a.com", "https://a.com/?x=1", "https://u:p@a.com", "not a url"] {
            assert!(Api::new("w", url, key.clone(), q.clone()).is_err(), "{url}");
        }
        assert!(Api::new("w x", "https://a.com", key.clone(), q.clone()).is_err());
        assert!(Api::new("w", "https://a.com", Secret::new(""), q.clone()).is_err());
        let clash = vec![
            Api::new("a-b", "https://a.com", key.clone(), q.clone()).unwrap(),
            Api::new("a_b", "https://b.com", key, q).unwrap(),
        ];
        assert!(matches!(
            EgressPolicy::new(AllowList::default(), clash, Limits::default()),
            Err(PolicyError::ApiClash(..))
        ));
    }

    #[test]
    fn narrowing_keeps_named_apis_only() {
        let q = KeyPlacement::query("w", "appid").unwrap();
        let api = Api::new("weather", "https://api.example.com", Secret::new("k"), q).unwrap();
        let p = EgressPolicy::new(AllowList::parse(&["a.com"]).unwrap(), vec![api], Limits::default()).unwrap();
        let (n, refused) = p.narrow(&["weather".into()]).unwrap();
        assert!(n.allow.is_empty() && n.apis.len() == 1 && refused.is_empty());
        let (n, refused) = p.narrow(&["a.com".into(), "b.com".into()]).unwrap();
        assert!(n.apis.is_empty() && n.allow.allows("a.com", 443));
        assert_eq!(refused, ["b.com"]);
        assert!(p.narrow(&["not a host".into()]).is_err());
    }

    fn label() -> impl Strategy<Value = String> {
        "[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?"
    }

    fn hostname() -> impl Strategy<Value = String> {
        proptest::collection::vec(label(), 1..4).prop_map(|v| v.join("."))
    }

    proptest! {
        #[test]
        fn parsing_never_panics(s in "\\PC{0,40}") {
            let _ = HostRule::parse(&s);
            let _ = normalize_host(&s);
        }

        #[test]
        fn a_rule_round_trips_and_allows_exactly_its_ports(h in hostname(), port in proptest::option::of(1u16..), probe in 1u16..) {
            let text = match port { Some(p) => format!("{h}:{p}"), None => h.clone() };
            let rule = HostRule::parse(&text.to_uppercase()).unwrap();
            prop_assert_eq!(rule.to_string(), text.clone());
            prop_assert_eq!(HostRule::parse(&rule.to_string()).unwrap(), rule.clone());
            let expected = match port { Some(p) => probe == p, None => probe == 80 || probe == 443 };
            prop_assert_eq!(rule.allows(&h, probe), expected);
            let (longer, under) = (format!("x{h}"), format!("{h}.evil"));
            prop_assert!(!rule.allows(&longer, probe));
            prop_assert!(!rule.allows(&under, probe));
        }

        #[test]
        fn narrowing_never_widens(admin in proptest::collection::vec((hostname(), proptest::option::of(1u16..)), 0..4),
                                  asked in proptest::collection::vec((hostname(), proptest::option::of(1u16..)), 0..4),
                                  probe_host in 0usize..8, probe_port in prop_oneof![Just(80u16), Just(443u16), 1u16..]) {
            let rules = |v: &[(String, Option<u16>)]| v.iter().map(|(h, p)| HostRule { host: h.clone(), port: *p }).collect::<Vec<_>>();
            let admin_list = AllowList(rules(&admin));
            let asked_rules = rules(&asked);
            let (kept, _) = admin_list.narrow(&asked_rules);
            let hosts: Vec<&String> = admin.iter().chain(&asked).map(|(h, _)| h).collect();
            if let Some(h) = hosts.get(probe_host % hosts.len().max(1)) {
                if kept.allows(h, probe_port) {
                    prop_assert!(admin_list.allows(h, probe_port));
                    prop_assert!(AllowList(asked_rules.clone()).allows(h, probe_port));
                }
            }
        }
    }
}
