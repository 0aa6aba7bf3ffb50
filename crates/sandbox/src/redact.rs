//! Redaction of secrets and private paths from text that the model or the user will see.
//!
//! A [`Redactor`] replaces three kinds of text:
//! - exact secret values it was given (for example the values of the host's `*_API_KEY`
//!   variables), because a key printed by `env` or echoed in an error must never reach a
//!   transcript, an event log or a provider;
//! - well-known token shapes (OpenAI, Anthropic, Google, GitHub, Slack, AWS, `Bearer` headers,
//!   PEM private keys, passwords in URLs), because a key can reach output without ever being in
//!   wright's environment (a file the model printed, a config it found);
//! - the host user's home folder, replaced by `~`, because it names the user and says where
//!   their files are.
//!
//! It holds no global state: callers build it from their configuration (see
//! [`Redactor::from_host_env`]) and clone it cheaply. Live output arrives in chunks, so
//! [`RedactStream`] holds back the unfinished end of the text until it can tell whether a
//! secret continues in the next chunk.

use crate::output::CappedOutput;
use regex::Regex;
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

/// What a secret or token is replaced with.
pub const REDACTED: &str = "[redacted]";
/// What the host home folder is replaced with.
pub const HOME_MARK: &str = "~";
/// Shorter values are not treated as secrets: they would match ordinary words and numbers.
pub const MIN_SECRET_LEN: usize = 8;

/// Parts of an environment variable name that mark its value as a secret.
const SECRET_NAME_PARTS: &[&str] = &["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"];

/// Most bytes a stream holds back; past this it lets text go even if a token might continue
/// (only PEM blocks and URL passwords longer than this could be split).
const STREAM_MAX_PENDING: usize = 64 * 1024;
/// An unfinished line is held back up to this many bytes (more when a secret is longer).
const STREAM_LINE_HOLD: usize = 1024;

/// A token shape: the match (or one capture group of it) is the secret.
struct Pattern {
    re: Regex,
    /// Capture group holding the secret; 0 for the whole match.
    group: usize,
    /// Extra test on the secret text, to keep ordinary words out.
    check: Check,
}

fn any(_: &str) -> bool {
    true
}

/// Random keys mix letters and digits; kebab-case names (`sk-learn-compatible-…`) do not.
fn looks_random(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes().any(|b| b.is_ascii_lowercase())
}

type Check = fn(&str) -> bool;

/// `(regex, group, check)` for every token shape wright knows.
const PATTERNS: &[(&str, usize, Check)] = &[
    // OpenAI (sk-…, sk-proj-…, sk-svcacct-…) and Anthropic (sk-ant-api03-…).
    (r"sk-(?:ant-)?[A-Za-z0-9_-]{20,}", 0, looks_random),
    // Google API keys.
    (r"AIza[0-9A-Za-z_-]{35}", 0, any),
    // GitHub tokens: personal, OAuth, user-to-server, server-to-server, refresh, fine-grained.
    (r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}", 0, any),
    (r"github_pat_[A-Za-z0-9_]{22,}", 0, any),
    // Slack.
    (r"xox[abprs]-[A-Za-z0-9-]{10,}", 0, any),
    // AWS access key ids (long-lived and temporary).
    (r"(?:AKIA|ASIA)[0-9A-Z]{16}", 0, any),
    // `Authorization: Bearer <token>`: the token only, so the header stays readable.
    (r"(?i)bearer[ \t]+([A-Za-z0-9._~+/=-]{8,})", 1, any),
    // PEM private keys; a block cut off before its END line is redacted to the end.
    (r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\z)", 0, any),
    // `scheme://user:password@host`: the whole user part.
    (r"[A-Za-z][A-Za-z0-9+.-]*://([^/\s:@]+:[^/\s@]+)@", 1, any),
];

/// One replaced range of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    /// A home-folder path (replaced by `~`) rather than a secret.
    home: bool,
}

struct Inner {
    /// Exact values, longest first.
    secrets: Vec<String>,
    /// Home folder spellings without a trailing `/`, longest first.
    homes: Vec<String>,
    patterns: Vec<Pattern>,
    /// How much an unfinished line may be held back in a stream.
    line_hold: usize,
}

/// Replaces secrets, token shapes and the host home folder in text. Cheap to clone.
///
/// ```
/// use std::path::Path;
/// use wright_sandbox::Redactor;
///
/// let r = Redactor::from_host_env(
///     [("MY_API_KEY".to_string(), "abcd1234efgh".to_string())],
///     Some(Path::new("/home/alice")),
/// );
/// assert_eq!(r.redact("key abcd1234efgh in /home/alice/app"), "key [redacted] in ~/app");
///
/// // Chunks: the key is split, yet never shown.
/// let mut s = r.stream();
/// let mut shown = s.push("key abcd12");
/// shown += &s.push("34efgh\n");
/// shown += &s.finish();
/// assert_eq!(shown, "key [redacted]\n");
/// ```
#[derive(Clone)]
pub struct Redactor {
    inner: Arc<Inner>,
}

impl Default for Redactor {
    /// Token shapes only: no known secret values and no home folder.
    fn default() -> Self {
        Self::new(Vec::<String>::new(), None)
    }
}

impl std::fmt::Debug for Redactor {
    // Never prints the secrets themselves.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.inner.secrets.len())
            .field("homes", &self.inner.homes)
            .field("patterns", &self.inner.patterns.len())
            .finish()
    }
}

impl Redactor {
    /// A redactor for these exact secret values and this home folder (if any). Values shorter
    /// than [`MIN_SECRET_LEN`] are ignored; so is a home folder of `/` or a relative path.
    pub fn new(secrets: impl IntoIterator<Item = String>, home: Option<&Path>) -> Self {
        let mut values: Vec<String> = Vec::new();
        for s in secrets {
            for v in [s.trim().to_string(), s] {
                // A value inside the replacement text would make redaction loop on itself.
                if v.len() >= MIN_SECRET_LEN && !REDACTED.contains(v.as_str()) && !values.contains(&v) {
                    values.push(v);
                }
            }
        }
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        let mut homes: Vec<String> = Vec::new();
        if let Some(h) = home.filter(|h| h.is_absolute()) {
            let canonical = std::fs::canonicalize(h).ok();
            for p in std::iter::once(h.to_path_buf()).chain(canonical) {
                let s = p.to_string_lossy().trim_end_matches('/').to_string();
                if s.len() >= 2 && !homes.contains(&s) {
                    homes.push(s);
                }
            }
        }
        homes.sort_by_key(|h| std::cmp::Reverse(h.len()));
        let patterns = PATTERNS
            .iter()
            // The patterns are constants covered by tests; a failure here cannot happen at
            // run time, and skipping one beats refusing to redact at all.
            .filter_map(|(re, group, check)| Regex::new(re).ok().map(|re| Pattern { re, group: *group, check: *check }))
            .collect();
        let longest = values.iter().chain(&homes).map(String::len).max().unwrap_or(0);
        let line_hold = STREAM_LINE_HOLD.max(longest + 1);
        Self { inner: Arc::new(Inner { secrets: values, homes, patterns, line_hold }) }
    }

    /// A redactor for the host: the values of every variable whose name looks secret (see
    /// [`is_secret_name`](Self::is_secret_name)) and the host's home folder. The caller passes
    /// them in (usually `std::env::vars()` and `$HOME`), so nothing here reads global state.
    pub fn from_host_env(vars: impl IntoIterator<Item = (String, String)>, home: Option<&Path>) -> Self {
        let secrets = vars.into_iter().filter(|(k, _)| Self::is_secret_name(k)).map(|(_, v)| v);
        Self::new(secrets, home)
    }

    /// Whether a variable's name says it holds a secret: it contains KEY, TOKEN, SECRET,
    /// PASSWORD, PASSWD or CREDENTIAL, in any case.
    pub fn is_secret_name(name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        SECRET_NAME_PARTS.iter().any(|p| upper.contains(p))
    }

    /// How many exact secret values this redactor knows.
    pub fn secret_count(&self) -> usize {
        self.inner.secrets.len()
    }

    /// The text with every secret, token and home folder replaced. Borrowed when nothing was.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let spans = self.spans(text);
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = apply(text, &spans);
        // A replacement can, in contrived text, complete a new match next to it (a secret
        // ending in `/` before `:pw@`); a few more passes make the result stable.
        for _ in 0..3 {
            let again = self.spans(&out);
            if again.is_empty() {
                break;
            }
            out = apply(&out, &again);
        }
        Cow::Owned(out)
    }

    /// Captured output with its text redacted. The result holds the rendered text whole, so
    /// its byte counts describe the redacted text, not what the command wrote.
    pub fn redact_capture(&self, capture: CappedOutput) -> CappedOutput {
        let text = capture.render();
        match self.redact(&text) {
            Cow::Borrowed(_) => capture,
            Cow::Owned(clean) => {
                let mut out = CappedOutput::new(clean.len(), 0);
                out.push(clean.as_bytes());
                out
            }
        }
    }

    /// A stream redactor for text that arrives in chunks.
    pub fn stream(&self) -> RedactStream {
        RedactStream { redactor: self.clone(), pending: String::new() }
    }

    /// Every range to replace, sorted and merged.
    fn spans(&self, text: &str) -> Vec<Span> {
        let mut spans = Vec::new();
        for s in &self.inner.secrets {
            spans.extend(text.match_indices(s.as_str()).map(|(i, m)| Span { start: i, end: i + m.len(), home: false }));
        }
        for p in &self.inner.patterns {
            for caps in p.re.captures_iter(text) {
                if let Some(m) = caps.get(p.group) {
                    if !m.is_empty() && (p.check)(m.as_str()) {
                        spans.push(Span { start: m.start(), end: m.end(), home: false });
                    }
                }
            }
        }
        for h in &self.inner.homes {
            for (i, m) in text.match_indices(h.as_str()) {
                let before = text[..i].chars().next_back();
                let after = text[i + m.len()..].chars().next();
                // Only the folder itself: not `/rootfs`, `/mnt/root` or `~/root`. `]`, `[` and
                // `~` count as attached so a replacement next to it cannot create a new match.
                let attached = |c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '-');
                if before.is_some_and(|c| attached(c) || matches!(c, ']' | '~'))
                    || after.is_some_and(|c| attached(c) || c == '[')
                {
                    continue;
                }
                spans.push(Span { start: i, end: i + m.len(), home: true });
            }
        }
        merge(spans)
    }
}

/// Sort and merge overlapping ranges; a merge with any secret is a secret.
fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        match out.last_mut() {
            Some(last) if s.start < last.end => {
                last.end = last.end.max(s.end);
                last.home &= s.home;
            }
            _ => out.push(s),
        }
    }
    out
}

fn apply(text: &str, spans: &[Span]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in spans {
        out.push_str(&text[at..s.start]);
        out.push_str(if s.home { HOME_MARK } else { REDACTED });
        at = s.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The largest char boundary of `s` at or below `i`.
fn floor_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Redacts text that arrives in chunks (live command output).
///
/// Each [`push`](Self::push) returns the text that is safe to show now; the unfinished last
/// line, a possible start of a known secret, and any match that reaches the end of what has
/// arrived are held back until the next chunk or [`finish`](Self::finish). Lines that end are
/// shown at once, so live output is not delayed in the usual case. Past 64 KiB of held text
/// (a PEM block that never ends) the oldest part is let go, redacted on its own.
pub struct RedactStream {
    redactor: Redactor,
    pending: String,
}

impl RedactStream {
    /// Add a chunk; returns what can be shown now (possibly empty).
    pub fn push(&mut self, chunk: &str) -> String {
        self.pending.push_str(chunk);
        let cut = self.safe_cut();
        if cut == 0 {
            return String::new();
        }
        let rest = self.pending.split_off(cut);
        let ready = std::mem::replace(&mut self.pending, rest);
        self.redactor.redact(&ready).into_owned()
    }

    /// The end of the stream: everything still held, redacted.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        self.redactor.redact(&rest).into_owned()
    }

    /// Bytes currently held back.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// How much of `pending` can go out without splitting anything that may be a secret.
    fn safe_cut(&self) -> usize {
        let text = self.pending.as_str();
        let len = text.len();
        let inner = &self.redactor.inner;
        // The unfinished last line (bounded): token shapes never span lines, and a line that
        // has ended can be judged whole.
        let line_start = text.rfind(['\n', '\r']).map_or(0, |i| i + 1);
        let mut cut = floor_boundary(text, line_start.max(len.saturating_sub(inner.line_hold)));
        // The start of a known value (which may hold a newline) at the very end.
        for s in inner.secrets.iter().chain(&inner.homes) {
            for k in (1..s.len().min(len + 1)).rev() {
                if s.is_char_boundary(k) && text.ends_with(&s[..k]) {
                    cut = cut.min(len - k);
                    break;
                }
            }
        }
        // A match that crosses the cut or reaches the end may still grow: keep it whole.
        for sp in self.redactor.spans(text) {
            if sp.end == len || (sp.start < cut && sp.end > cut) {
                cut = cut.min(sp.start);
            }
        }
        if cut == 0 && len > STREAM_MAX_PENDING {
            cut = floor_boundary(text, len - inner.line_hold.min(len));
        }
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::path::PathBuf;

    const HOME: &str = "/home/alice";
    const KEY: &str = "s3cr3t-V4lue-XYZ";

    fn r() -> Redactor {
        Redactor::new(vec![KEY.to_string()], Some(Path::new(HOME)))
    }

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(Redactor::default().inner.patterns.len(), PATTERNS.len());
    }

    #[test]
    fn exact_values_and_env_names() {
        let red = Redactor::from_host_env(
            vec![
                ("OPENAI_API_KEY".into(), "abc123DEF456ghi".into()),
                ("my_password".into(), "hunter2hunter2".into()),
                ("GITHUB_TOKEN".into(), "short".into()),
                ("PATH".into(), "/usr/bin:/bin:/usr/local/bin".into()),
                ("AWS_SECRET_ACCESS_KEY".into(), "wJalrXUtnFEMI/K7MDENG".into()),
            ],
            None,
        );
        assert_eq!(red.secret_count(), 3);
        let out = red.redact("key=abc123DEF456ghi pw hunter2hunter2 path /usr/bin:/bin:/usr/local/bin short");
        assert_eq!(out, "key=[redacted] pw [redacted] path /usr/bin:/bin:/usr/local/bin short");
        assert!(Redactor::is_secret_name("npm_config__authToken"));
        assert!(Redactor::is_secret_name("DB_CREDENTIALS"));
        assert!(!Redactor::is_secret_name("HOME"));
    }

    #[test]
    fn token_shapes() {
        let red = Redactor::default();
        let cases = [
            "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL",
            "sk-proj-Ab3dEfGhIjKlMnOpQrStUvWxYz0123456789_-abc",
            "sk-ant-api03-Ab3dEfGhIjKlMnOpQrStUvWxYz0123456789",
            "AIzaSyA-1234567890abcdefghijklmnopqrstu",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "gho_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "xoxb-123456789012-abcdefghijkl",
            "AKIAIOSFODNN7EXAMPLE",
        ];
        for c in cases {
            let text = format!("value: \"{c}\" end");
            assert_eq!(red.redact(&text), "value: \"[redacted]\" end", "{c}");
        }
        assert_eq!(
            red.redact("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc"),
            "Authorization: Bearer [redacted]"
        );
        assert_eq!(
            red.redact("git clone https://bob:hunter2@example.com/x.git"),
            "git clone https://[redacted]@example.com/x.git"
        );
        let pem = "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----\nafter";
        assert_eq!(red.redact(pem), "before\n[redacted]\nafter");
        let cut = "x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA";
        assert_eq!(red.redact(cut), "x\n[redacted]");
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let red = r();
        for t in [
            "task-runner-configuration-file-name",
            "the sk-learn-compatible-wrapper-thing works",
            "/home/alicex/file /mnt/home/alice/x ~/home/alice",
            "Bearer abc",
            "https://example.com/path?a=b@c",
            "a bearer of good news",
            "AKIA is not a key",
        ] {
            assert_eq!(red.redact(t), t);
        }
    }

    #[test]
    fn home_folder_becomes_tilde() {
        let red = r();
        assert_eq!(red.redact("at /home/alice/proj/a.js:3"), "at ~/proj/a.js:3");
        assert_eq!(red.redact("file:///home/alice/x.mjs"), "file://~/x.mjs");
        assert_eq!(red.redact("cd /home/alice"), "cd ~");
        assert_eq!(red.redact("\"/home/alice\""), "\"~\"");
        // Only real absolute homes.
        assert_eq!(Redactor::new(vec![], Some(Path::new("/"))).redact("/etc"), "/etc");
        assert_eq!(Redactor::new(vec![], Some(Path::new("rel"))).redact("rel/x"), "rel/x");
        let root = Redactor::new(vec![], Some(&PathBuf::from("/root/")));
        assert_eq!(root.redact("/root/.npm and /var/root and /rootfs"), "~/.npm and /var/root and /rootfs");
    }

    #[test]
    fn debug_never_shows_secrets() {
        assert!(!format!("{:?}", r()).contains(KEY));
    }

    #[test]
    fn capture_is_redacted_whole() {
        let mut c = CappedOutput::new(100, 100);
        c.push(format!("key {KEY}\n").as_bytes());
        assert_eq!(r().redact_capture(c).render(), "key [redacted]\n");
    }

    #[test]
    fn stream_catches_secrets_split_anywhere() {
        let red = r();
        let text = format!(
            "line one\nkey={KEY} in /home/alice/app\nAuthorization: Bearer abcdefghijk123\n-----BEGIN PRIVATE KEY-----\nQUJD\n-----END PRIVATE KEY-----\nsk-proj-Ab3dEfGhIjKlMnOpQrStUvWx\ndone"
        );
        let whole = red.redact(&text).into_owned();
        for i in 0..=text.len() {
            for j in i..=text.len() {
                if !text.is_char_boundary(i) || !text.is_char_boundary(j) {
                    continue;
                }
                let mut s = red.stream();
                let mut out = s.push(&text[..i]);
                out.push_str(&s.push(&text[i..j]));
                out.push_str(&s.push(&text[j..]));
                out.push_str(&s.finish());
                assert_eq!(out, whole, "split at {i}/{j}");
            }
        }
        assert!(!whole.contains(KEY) && !whole.contains("QUJD") && !whole.contains(HOME));
    }

    #[test]
    fn stream_lets_finished_lines_through_at_once() {
        let mut s = r().stream();
        assert_eq!(s.push("listening on 3000\n"), "listening on 3000\n");
        assert_eq!(s.push("partial"), "");
        assert_eq!(s.pending(), 7);
        assert_eq!(s.push(" line\nnext"), "partial line\n");
        assert_eq!(s.finish(), "next");
    }

    #[test]
    fn stream_holds_at_most_a_bounded_amount() {
        let mut s = Redactor::default().stream();
        let mut shown = s.push("-----BEGIN PRIVATE KEY-----\n");
        for _ in 0..200 {
            shown.push_str(&s.push(&"A".repeat(1000)));
            assert!(s.pending() <= STREAM_MAX_PENDING + 1000);
        }
        shown.push_str(&s.finish());
        assert!(shown.starts_with(REDACTED));
    }

    fn fragment() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => ".{0,12}",
            1 => Just(KEY.to_string()),
            1 => Just(HOME.to_string()),
            1 => Just("/home/alice/".to_string()),
            1 => Just("Bearer ".to_string()),
            1 => Just("https://u:p@".to_string()),
            1 => Just("ghp_abcdefghijklmnopqrstuvwxyz0123456789".to_string()),
            1 => Just("-----BEGIN PRIVATE KEY-----".to_string()),
            1 => Just("-----END PRIVATE KEY-----".to_string()),
            1 => Just("\n".to_string()),
            1 => "[\\[\\]~/:@ ]{1,3}",
        ]
    }

    proptest! {
        #[test]
        fn never_panics_and_is_idempotent(parts in proptest::collection::vec(fragment(), 0..12)) {
            let red = r();
            let text = parts.concat();
            let once = red.redact(&text).into_owned();
            let twice = red.redact(&once).into_owned();
            prop_assert_eq!(&once, &twice);
        }

        #[test]
        fn embedded_secret_never_survives(
            before in ".{0,40}",
            after in ".{0,40}",
            secret in "[A-Za-z0-9_+/=.-]{8,40}",
            splits in proptest::collection::vec(0usize..200, 0..4),
        ) {
            let red = Redactor::new(vec![secret.clone()], Some(Path::new(HOME)));
            let text = format!("{before}{secret}{after}");
            let whole = red.redact(&text);
            prop_assert!(!whole.contains(secret.as_str()), "{:?}", whole);
            // The same through a stream, cut at arbitrary points.
            let mut cuts: Vec<usize> = splits.into_iter().map(|c| floor_boundary(&text, c)).collect();
            cuts.sort_unstable();
            let mut s = red.stream();
            let mut out = String::new();
            let mut at = 0;
            for c in cuts {
                out.push_str(&s.push(&text[at..c.max(at)]));
                at = c.max(at);
            }
            out.push_str(&s.push(&text[at..]));
            out.push_str(&s.finish());
            prop_assert!(!out.contains(secret.as_str()), "{:?}", out);
        }

        #[test]
        fn plain_text_streams_unchanged(chunks in proptest::collection::vec("[a-z \n]{0,30}", 0..10)) {
            let mut s = Redactor::default().stream();
            let mut out = String::new();
            for c in &chunks {
                out.push_str(&s.push(c));
            }
            out.push_str(&s.finish());
            prop_assert_eq!(out, chunks.concat());
        }
    }
}
