//! Learning notes: a lesson learned from one error and its fix, scored by how often it helped.
//!
//! The score is the mean of a Beta(1,1) prior updated with the note's record,
//! `(help+1)/(help+fail+2)`: a new note starts at 0.5 and one lucky build cannot make it certain.

use serde::{Deserialize, Serialize};

/// A note's place in its lifecycle: `CANDIDATE → ACTIVE → DEPRECATED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NoteStatus {
    Candidate,
    Active,
    Deprecated,
}

impl NoteStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Candidate => "CANDIDATE",
            Self::Active => "ACTIVE",
            Self::Deprecated => "DEPRECATED",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_uppercase().as_str() {
            "CANDIDATE" => Some(Self::Candidate),
            "ACTIVE" => Some(Self::Active),
            "DEPRECATED" => Some(Self::Deprecated),
            _ => None,
        }
    }
}

/// Help count at which a candidate may become active.
pub const ACTIVATE_MIN_HELP: u32 = 3;
/// Score a candidate must exceed to become active.
pub const ACTIVATE_MIN_SCORE: f64 = 0.6;
/// Uses (help + fail) before a note can be deprecated.
pub const DEPRECATE_MIN_USES: u32 = 5;
/// Score below which a used note is deprecated.
pub const DEPRECATE_MAX_SCORE: f64 = 0.3;

/// `(help+1)/(help+fail+2)`.
pub fn score(help: u32, fail: u32) -> f64 {
    (f64::from(help) + 1.0) / (f64::from(help) + f64::from(fail) + 2.0)
}

/// The status a note should have after its counts changed. Deprecation is sticky: a note that
/// proved harmful comes back only by hand (`wright notes import` / edit).
pub fn next_status(current: NoteStatus, help: u32, fail: u32) -> NoteStatus {
    let s = score(help, fail);
    match current {
        NoteStatus::Deprecated => NoteStatus::Deprecated,
        _ if help + fail >= DEPRECATE_MIN_USES && s < DEPRECATE_MAX_SCORE => NoteStatus::Deprecated,
        NoteStatus::Candidate if help >= ACTIVATE_MIN_HELP && s > ACTIVATE_MIN_SCORE => NoteStatus::Active,
        other => other,
    }
}

/// One lesson, with everything retrieval matches on and its track record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    pub id: String,
    /// What the lesson is about, e.g. "node:test with DOM code".
    pub trigger: String,
    /// `library`, `pattern`, `error_class`, `component_type` or `universal` (always applies).
    pub trigger_type: String,
    pub lesson: String,
    #[serde(default)]
    pub libraries: Vec<String>,
    #[serde(default)]
    pub error_patterns: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub help_count: u32,
    #[serde(default)]
    pub fail_count: u32,
    #[serde(default = "half")]
    pub confidence: f64,
    #[serde(default = "candidate")]
    pub status: NoteStatus,
    #[serde(default)]
    pub source_build: Option<String>,
    #[serde(default)]
    pub source_error: Option<String>,
    #[serde(default)]
    pub source_fix: Option<String>,
    #[serde(default)]
    pub created_at: String,
    #[serde(default)]
    pub updated_at: String,
}

fn half() -> f64 {
    0.5
}
fn candidate() -> NoteStatus {
    NoteStatus::Candidate
}

impl Note {
    /// A fresh `CANDIDATE` note (score 0.5, no uses) stamped now; callers fill in the lists.
    pub fn new(id: impl Into<String>, trigger: impl Into<String>, lesson: impl Into<String>) -> Note {
        let now = crate::now();
        Note {
            id: id.into(),
            trigger: trigger.into(),
            trigger_type: "pattern".into(),
            lesson: lesson.into(),
            libraries: Vec::new(),
            error_patterns: Vec::new(),
            tags: Vec::new(),
            help_count: 0,
            fail_count: 0,
            confidence: score(0, 0),
            status: NoteStatus::Candidate,
            source_build: None,
            source_error: None,
            source_fix: None,
            created_at: now.clone(),
            updated_at: now,
        }
    }

    /// Count one more use of the note; `helped` when the build it was applied to succeeded.
    pub fn record(&mut self, helped: bool) {
        if helped {
            self.help_count += 1;
        } else {
            self.fail_count += 1;
        }
        self.confidence = score(self.help_count, self.fail_count);
        self.status = next_status(self.status, self.help_count, self.fail_count);
    }

    /// Whether retrieval should consider the note regardless of the request's words.
    pub fn is_universal(&self) -> bool {
        self.trigger_type.eq_ignore_ascii_case("universal")
            || self.tags.iter().any(|t| t.eq_ignore_ascii_case("universal"))
    }

    /// The index keys retrieval looks notes up by: `lib:`, `tag:`, `err:` and `any:universal`.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.libraries.iter().filter_map(|l| lib_key(l)).collect();
        for t in &self.tags {
            keys.extend(tag_words(t).iter().map(|w| tag_key(w)));
        }
        for p in &self.error_patterns {
            keys.extend(pattern_words(p).iter().map(|w| err_key(w)));
        }
        if self.is_universal() {
            keys.push(UNIVERSAL_KEY.to_string());
        }
        keys.sort();
        keys.dedup();
        keys
    }
}

/// The key every universal note carries.
pub const UNIVERSAL_KEY: &str = "any:universal";

// The index and its lookups must spell keys the same way; these are the only spellings.

/// The `lib:` key of a package name (trimmed, lower-cased); none for a blank one.
pub fn lib_key(name: &str) -> Option<String> {
    let name = name.trim().to_ascii_lowercase();
    (!name.is_empty()).then(|| format!("lib:{name}"))
}

/// The `tag:` key of one word from [`tag_words`].
pub fn tag_key(word: &str) -> String {
    format!("tag:{word}")
}

/// The `err:` key of one word from [`pattern_words`].
pub fn err_key(word: &str) -> String {
    format!("err:{word}")
}

/// Normalised words of a tag or a request: lower case, split on anything but letters, digits,
/// `-`, `.`, `@` and `/`, plurals folded (`timers` → `timer`), the hyphenated whole kept too.
pub fn tag_words(text: &str) -> Vec<String> {
    let lower = text.trim().to_lowercase();
    let parts: Vec<String> = lower
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '.' | '@' | '/')))
        .map(|w| w.trim_matches(|c| matches!(c, '-' | '.' | '/')))
        .filter(|w| w.chars().count() >= 2)
        .map(fold_plural)
        .collect();
    let mut out = parts.clone();
    if parts.len() > 1 {
        out.push(parts.join("-"));
    }
    out.sort();
    out.dedup();
    out
}

/// Significant words of an error pattern or an error text (for `err:` keys): letters only,
/// three or more of them, common filler dropped.
pub fn pattern_words(text: &str) -> Vec<String> {
    const FILLER: &[&str] = &[
        "the", "and", "not", "for", "but", "was", "are", "with", "from", "this", "that", "has", "have", "error", "at",
    ];
    let mut out: Vec<String> = text
        .to_lowercase()
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 3 && !FILLER.contains(w))
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

fn fold_plural(w: &str) -> String {
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") && w.chars().all(|c| c.is_alphabetic()) {
        w[..w.len() - 1].to_string()
    } else {
        w.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note() -> Note {
        Note {
            libraries: vec!["Express".into()],
            error_patterns: vec!["Expected values to be strictly equal".into()],
            tags: vec!["Countdown Timers".into()],
            ..Note::new("n1", "timer display", "Pad seconds with padStart(2, '0').")
        }
    }

    #[test]
    fn score_follows_the_formula() {
        assert_eq!(score(0, 0), 0.5);
        assert_eq!(score(3, 0), 0.8);
        assert_eq!(score(1, 3), 2.0 / 6.0);
    }

    #[test]
    fn lifecycle_transitions() {
        let mut n = note();
        n.record(true);
        n.record(true);
        assert_eq!(n.status, NoteStatus::Candidate, "two helps are not enough");
        n.record(true);
        assert_eq!((n.status, n.confidence), (NoteStatus::Active, 0.8));
        // Active notes are deprecated only after five uses with a score under 0.3.
        let mut bad = note();
        for _ in 0..4 {
            bad.record(false);
        }
        assert_eq!(bad.status, NoteStatus::Candidate, "four uses are too few to judge");
        bad.record(false);
        assert_eq!(bad.status, NoteStatus::Deprecated);
        bad.record(true);
        assert_eq!(bad.status, NoteStatus::Deprecated, "deprecation is sticky");
        // help=3, fail=3: score 0.5, not above 0.6: stays a candidate.
        let mut mixed = note();
        for h in [false, false, false, true, true, true] {
            mixed.record(h);
        }
        assert_eq!(mixed.status, NoteStatus::Candidate);
    }

    #[test]
    fn keys_are_normalised() {
        let k = note().keys();
        assert!(k.contains(&"lib:express".to_string()));
        assert!(k.contains(&"tag:countdown".to_string()) && k.contains(&"tag:timer".to_string()));
        assert!(k.contains(&"tag:countdown-timer".to_string()));
        assert!(k.contains(&"err:strictly".to_string()) && !k.iter().any(|k| k == "err:to"));
        assert!(!k.contains(&UNIVERSAL_KEY.to_string()));
        let mut u = note();
        u.trigger_type = "universal".into();
        assert!(u.keys().contains(&UNIVERSAL_KEY.to_string()));
    }
}
