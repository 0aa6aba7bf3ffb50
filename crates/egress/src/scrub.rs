//! Taking an API's key out of what comes back from it. Upstreams echo keys in many spellings:
//! as they are, URL-encoded (`%XX` in either case, `+` for a space, as a query string or a
//! `Location` would), JSON-escaped (`\/`, `\"`, `\u00e9`, surrogate pairs, as an error object
//! would), and base64 (a `Basic` credential, a token that wraps the key). A list of spellings
//! would always miss one mixture, so the raw, URL and JSON forms are matched by decoding: at
//! each place in the answer, every character of the key may be written in any of those ways,
//! and the longest stretch that decodes to the whole key is replaced by `[redacted]`. Base64
//! does not decode character by character, so its forms are worked out once: the part of the
//! encoding that only the key's bytes decide, at each of the three byte offsets the key can
//! start at inside a longer base64 text, in both alphabets.

use base64::Engine as _;
use std::collections::HashSet;

/// What a found key is replaced with.
pub const REDACTED: &[u8] = b"[redacted]";

/// Keys shorter than this get no base64 forms: their encodings are too short to tell apart
/// from other base64 text.
const MIN_BASE64_KEY: usize = 6;

/// Finds one key in any of its spellings (see the module's notes) and replaces it.
#[derive(Clone)]
pub struct Scrubber {
    key: Vec<u8>,
    base64: Vec<Vec<u8>>,
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scrubber([hidden])")
    }
}

impl Scrubber {
    pub fn new(key: &str) -> Self {
        let key = key.as_bytes().to_vec();
        let mut base64: Vec<Vec<u8>> = Vec::new();
        if key.len() >= MIN_BASE64_KEY {
            for offset in 0..3usize {
                let mut bytes = vec![0u8; offset];
                bytes.extend_from_slice(&key);
                let text = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes).into_bytes();
                // Characters decided by key bytes alone: from the first whole sextet after the
                // offset to the last whole sextet of the key.
                let first = (offset * 8).div_ceil(6);
                let last = (bytes.len() * 8) / 6;
                if last > first {
                    let piece = text[first..last].to_vec();
                    let url_safe: Vec<u8> = piece
                        .iter()
                        .map(|b| match b {
                            b'+' => b'-',
                            b'/' => b'_',
                            b => *b,
                        })
                        .collect();
                    for p in [piece, url_safe] {
                        if !base64.contains(&p) {
                            base64.push(p);
                        }
                    }
                }
            }
        }
        Self { key, base64 }
    }

    /// Whether `hay` holds the key in any spelling.
    pub fn found_in(&self, hay: &[u8]) -> bool {
        (0..hay.len()).any(|i| self.end_of_match(hay, i).is_some())
            || self.base64.iter().any(|p| hay.windows(p.len()).any(|w| w == p.as_slice()))
    }

    /// `hay` with every spelling of the key replaced by `[redacted]`.
    pub fn scrub(&self, hay: &[u8]) -> Vec<u8> {
        if self.key.is_empty() {
            return hay.to_vec();
        }
        let mut out = Vec::with_capacity(hay.len());
        let mut i = 0;
        while i < hay.len() {
            match self.end_of_match(hay, i) {
                Some(end) => {
                    out.extend_from_slice(REDACTED);
                    i = end;
                }
                None => {
                    out.push(hay[i]);
                    i += 1;
                }
            }
        }
        self.base64.iter().fold(out, |text, piece| replace(&text, piece, REDACTED))
    }

    /// `text` scrubbed, as text.
    pub fn scrub_str(&self, text: &str) -> String {
        String::from_utf8_lossy(&self.scrub(text.as_bytes())).into_owned()
    }

    /// The end of the longest stretch from `start` that spells the whole key, if any. The
    /// spellings overlap (`%` may be itself or begin `%25`), so every way is followed, each
    /// (place in `hay`, place in the key) once.
    fn end_of_match(&self, hay: &[u8], start: usize) -> Option<usize> {
        let first = *hay.get(start)?;
        if self.key.is_empty() || !(first == self.key[0] || matches!(first, b'%' | b'+' | b'\\')) {
            return None;
        }
        let mut seen: HashSet<(usize, usize)> = HashSet::new();
        let mut todo = vec![(start, 0usize)];
        let mut best = None;
        while let Some((p, j)) = todo.pop() {
            if !seen.insert((p, j)) {
                continue;
            }
            if j == self.key.len() {
                best = best.max(Some(p));
                continue;
            }
            for (dp, dj) in self.steps(hay, p, j) {
                todo.push((p + dp, j + dj));
            }
        }
        best
    }

    /// Each way `hay[p..]` can spell the key's next character(s) from `j`: (bytes of `hay`
    /// used, bytes of the key matched).
    fn steps(&self, hay: &[u8], p: usize, j: usize) -> Vec<(usize, usize)> {
        let (Some(&h), Some(&k)) = (hay.get(p), self.key.get(j)) else { return Vec::new() };
        let mut ways = Vec::new();
        if h == k {
            ways.push((1, 1));
        }
        if h == b'+' && k == b' ' {
            ways.push((1, 1));
        }
        if h == b'%'
            && let Some(v) = hex(hay.get(p + 1..p + 3))
            && v == u32::from(k)
        {
            ways.push((3, 1));
        }
        if h == b'\\' {
            let short = match hay.get(p + 1) {
                Some(b'"') => Some(b'"'),
                Some(b'\\') => Some(b'\\'),
                Some(b'/') => Some(b'/'),
                Some(b'n') => Some(b'\n'),
                Some(b'r') => Some(b'\r'),
                Some(b't') => Some(b'\t'),
                Some(b'b') => Some(8),
                Some(b'f') => Some(12),
                _ => None,
            };
            if short == Some(k) {
                ways.push((2, 1));
            }
            if let Some((used, ch)) = json_unicode(hay, p) {
                let mut buf = [0u8; 4];
                let bytes = ch.encode_utf8(&mut buf).as_bytes();
                if self.key[j..].starts_with(bytes) {
                    ways.push((used, bytes.len()));
                }
            }
        }
        ways
    }
}

/// Four hex digits (or two, for `%XX`) as a number; `None` unless all are hex.
fn hex(digits: Option<&[u8]>) -> Option<u32> {
    let digits = digits?;
    let mut v = 0u32;
    for d in digits {
        v = v * 16 + char::from(*d).to_digit(16)?;
    }
    Some(v)
}

/// `\uXXXX` (or a surrogate pair of them) at `p`: the bytes used and the character.
fn json_unicode(hay: &[u8], p: usize) -> Option<(usize, char)> {
    let unit = |at: usize| -> Option<u32> {
        (hay.get(at..at + 2)? == b"\\u").then_some(())?;
        hex(hay.get(at + 2..at + 6))
    };
    let hi = unit(p)?;
    if (0xD800..0xDC00).contains(&hi) {
        let lo = unit(p + 6).filter(|lo| (0xDC00..0xE000).contains(lo))?;
        let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
        return char::from_u32(c).map(|c| (12, c));
    }
    char::from_u32(hi).map(|c| (6, c))
}

fn replace(hay: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    if needle.is_empty() {
        return hay.to_vec();
    }
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KEY: &str = "s3cr3t key/+é\"漢😀";

    fn scrubbed(hay: &str) -> String {
        Scrubber::new(KEY).scrub_str(hay)
    }

    #[test]
    fn the_usual_spellings_are_all_found() {
        let json = serde_json::to_string(KEY).unwrap();
        assert_eq!(scrubbed(&format!("{{\"error\":{json}}}")), "{\"error\":\"[redacted]\"}");
        let ascii_json = "s3cr3t key\\/+\\u00E9\\\"\\u6f22\\ud83d\\ude00";
        assert_eq!(scrubbed(&format!("k={ascii_json}.")), "k=[redacted].");
        let mut url = reqwest::Url::parse("http://x.invalid/").unwrap();
        url.query_pairs_mut().append_pair("k", KEY);
        let form = url.query().unwrap().strip_prefix("k=").unwrap().to_string();
        assert!(form.contains('+') && form.contains("%2F"), "{form}");
        assert_eq!(scrubbed(&format!("/x?k={form}&y=1")), "/x?k=[redacted]&y=1");
        assert_eq!(scrubbed(&format!("/x?k={}", form.to_lowercase().replace("%2b", "%2B"))), "/x?k=[redacted]");
        assert_eq!(scrubbed(&format!("bad key {KEY}!")), "bad key [redacted]!");
        let b64 = base64::engine::general_purpose::STANDARD.encode(format!("user:{KEY}"));
        let out = scrubbed(&format!("Basic {b64}"));
        assert!(out.contains("[redacted]") && !out.contains(&b64), "{out}");
        assert_eq!(scrubbed("nothing to see: s3cr3t kez"), "nothing to see: s3cr3t kez");
    }

    #[test]
    fn a_key_ending_in_an_escape_character_is_taken_whole() {
        let s = Scrubber::new("abc%");
        assert_eq!(s.scrub_str("x abc%25 y"), "x [redacted] y");
        assert_eq!(s.scrub_str("x abc% y"), "x [redacted] y");
    }

    /// Characters keys are made of, with the awkward ones over-represented.
    fn key_char() -> impl Strategy<Value = char> {
        prop_oneof![
            proptest::char::range('A', 'Z'),
            proptest::char::range('a', 'z'),
            proptest::char::range('0', '9'),
            proptest::sample::select(vec![' ', '/', '+', '%', '"', '\\', '&', '=', '?', '-', '_', '.', '\n']),
            proptest::sample::select(vec!['é', 'ß', '漢', '😀', '€']),
        ]
    }

    fn key() -> impl Strategy<Value = String> {
        proptest::collection::vec(key_char(), 6..24).prop_map(|v| v.into_iter().collect())
    }

    /// Text around the key, of characters no spelling of a key begins with or contains.
    fn filler() -> impl Strategy<Value = String> {
        "[<>{}:;,#()!~*|^]{0,12}"
    }

    /// One character written one of the ways an upstream might.
    fn spell(c: char, how: u8) -> String {
        let mut utf8 = [0u8; 4];
        let bytes = c.encode_utf8(&mut utf8).as_bytes();
        let json_short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '/' => Some("\\/"),
            '\n' => Some("\\n"),
            _ => None,
        };
        match how % 6 {
            0 => c.to_string(),
            1 => bytes.iter().map(|b| format!("%{b:02X}")).collect(),
            2 => bytes.iter().map(|b| format!("%{b:02x}")).collect(),
            3 if c == ' ' => "+".into(),
            4 if json_short.is_some() => json_short.unwrap_or_default().into(),
            4 | 5 => {
                let mut units = [0u16; 2];
                let hex: String = c.encode_utf16(&mut units).iter().map(|u| format!("\\u{u:04x}")).collect();
                if how.is_multiple_of(2) { hex.to_uppercase().replace("\\U", "\\u") } else { hex }
            }
            _ => c.to_string(),
        }
    }

    proptest! {
        #[test]
        fn any_mixture_of_url_and_json_spellings_is_replaced_whole(
            key in key(), before in filler(), after in filler(), hows in proptest::collection::vec(any::<u8>(), 24)
        ) {
            let spelled: String = key.chars().zip(hows.iter().cycle()).map(|(c, h)| spell(c, *h)).collect();
            let out = Scrubber::new(&key).scrub_str(&format!("{before}{spelled}{after}"));
            prop_assert_eq!(out, format!("{before}[redacted]{after}"));
        }

        #[test]
        fn what_libraries_write_never_survives(key in key(), before in filler(), after in filler()) {
            let s = Scrubber::new(&key);
            let json = serde_json::to_string(&key).unwrap();
            let mut url = reqwest::Url::parse("http://x.invalid/").unwrap();
            url.query_pairs_mut().append_pair("k", &key);
            let form = url.query().unwrap().to_string();
            for spelled in [json.clone(), form.clone(), key.clone()] {
                let out = s.scrub_str(&format!("{before}{spelled}{after}"));
                prop_assert!(out.contains("[redacted]"), "{} kept in {}", spelled, out);
                prop_assert!(!s.found_in(out.as_bytes()), "{}", out);
            }
        }

        #[test]
        fn base64_inside_longer_base64_is_found_at_every_offset(
            key in key(), head in proptest::collection::vec(any::<u8>(), 0..5), tail in proptest::collection::vec(any::<u8>(), 0..5), url_safe in any::<bool>()
        ) {
            let mut bytes = head.clone();
            bytes.extend_from_slice(key.as_bytes());
            bytes.extend_from_slice(&tail);
            let text = if url_safe {
                base64::engine::general_purpose::URL_SAFE.encode(&bytes)
            } else {
                base64::engine::general_purpose::STANDARD.encode(&bytes)
            };
            let s = Scrubber::new(&key);
            let out = s.scrub_str(&format!("token {text} end"));
            prop_assert!(out.contains("[redacted]") && !out.contains(&text), "{}", out);
            prop_assert!(out.starts_with("token ") && out.ends_with(" end"));
            // What is left of the encoding no longer decodes to anything holding the key.
            prop_assert!(!s.found_in(out.as_bytes()));
        }

        #[test]
        fn text_without_the_key_is_left_alone(key in key(), text in "\\PC{0,60}") {
            prop_assume!(!text.contains(key.as_str()));
            let s = Scrubber::new(&key);
            if !s.found_in(text.as_bytes()) {
                prop_assert_eq!(s.scrub_str(&text), text);
            }
        }
    }
}
