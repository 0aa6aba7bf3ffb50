//! From a document's text to search chunks: sections split at headings, each carrying its
//! heading path, and long sections cut into pieces of about [`TARGET_CHARS`].
//!
//! The Markdown and HTML readers ([`crate::markdown`], [`crate::html`]) only find headings and
//! text; everything about sizes, anchors and empty sections is decided here, once.

use std::collections::HashMap;

/// A piece is cut near this many characters: long enough to hold a thought with its example,
/// short enough that a hit points at the paragraph that answers, and well inside the
/// embedding model's 512-token window.
pub(crate) const TARGET_CHARS: usize = 1_000;
/// The end of one piece is repeated at the start of the next, so a sentence that straddles a
/// cut is still found whole in one of them.
pub(crate) const OVERLAP_CHARS: usize = 150;
/// Separates the levels of a heading path ("Chat › Adding a tool").
pub(crate) const PATH_SEP: &str = " › ";

/// One searchable piece of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// The heading path, levels joined by [`PATH_SEP`]; empty before the first heading.
    pub heading: String,
    /// The anchor of the last heading (its explicit id, or its GitHub-style slug).
    pub anchor: Option<String>,
    /// The text, whitespace collapsed.
    pub text: String,
}

/// Collects text under the current heading path while a reader walks a document, and turns
/// each finished section into chunks.
pub(crate) struct Sections {
    /// `(level, text)` of the open headings, outermost first.
    path: Vec<(u8, String)>,
    anchor: Option<String>,
    /// Finished paragraphs of the current section, whitespace collapsed.
    paragraphs: Vec<String>,
    /// The paragraph being read.
    current: String,
    slugs: Slugger,
    chunks: Vec<Chunk>,
}

impl Sections {
    /// `root` is a title that heads every path (an HTML page's `<title>`), if any.
    pub(crate) fn new(root: Option<String>) -> Self {
        let path = root.map(|t| collapse(&t)).filter(|t| !t.is_empty()).map(|t| vec![(0, t)]).unwrap_or_default();
        Self {
            path,
            anchor: None,
            paragraphs: Vec::new(),
            current: String::new(),
            slugs: Slugger::default(),
            chunks: Vec::new(),
        }
    }

    /// Text inside the current paragraph.
    pub(crate) fn text(&mut self, s: &str) {
        self.current.push_str(s);
    }

    /// The current paragraph ends (a block element closed).
    pub(crate) fn paragraph_break(&mut self) {
        let p = collapse(&self.current);
        self.current.clear();
        if !p.is_empty() {
            self.paragraphs.push(p);
        }
    }

    /// A heading of `level` (1 for the outermost) starts a new section; `id` is an explicit
    /// anchor the document gave it.
    pub(crate) fn heading(&mut self, level: u8, text: &str, id: Option<&str>) {
        self.flush();
        let text = collapse(text);
        self.path.retain(|(l, _)| *l < level);
        let id = id.map(str::trim).filter(|i| !i.is_empty());
        self.anchor = match id {
            Some(id) => Some(self.slugs.claim(id)),
            None => Some(self.slugs.unique(&slug(&text))).filter(|s| !s.is_empty()),
        };
        self.path.push((level, text));
    }

    /// All chunks, in document order.
    pub(crate) fn finish(mut self) -> Vec<Chunk> {
        self.flush();
        self.chunks
    }

    fn flush(&mut self) {
        self.paragraph_break();
        if self.paragraphs.is_empty() {
            return;
        }
        let heading =
            self.path.iter().map(|(_, t)| t.as_str()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join(PATH_SEP);
        for text in pieces(&std::mem::take(&mut self.paragraphs)) {
            self.chunks.push(Chunk { heading: heading.clone(), anchor: self.anchor.clone(), text });
        }
    }
}

/// Whitespace runs become one space; leading and trailing whitespace goes.
pub(crate) fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// GitHub's heading slug: lower case, punctuation dropped, each space a hyphen.
pub(crate) fn slug(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' || is_combining(c) => Some(c),
            _ => None,
        })
        .collect()
}

/// Combining diacritical marks: part of a word (a decomposed "é"), not punctuation.
pub(crate) fn is_combining(c: char) -> bool {
    matches!(c, '\u{300}'..='\u{36f}')
}

/// Makes anchors unique within a document the way GitHub does ("setup", "setup-1", …).
#[derive(Default)]
struct Slugger {
    seen: HashMap<String, usize>,
}

impl Slugger {
    fn unique(&mut self, base: &str) -> String {
        if base.is_empty() {
            return String::new();
        }
        let n = self.seen.entry(base.to_string()).or_insert(0);
        let out = if *n == 0 { base.to_string() } else { format!("{base}-{n}") };
        *n += 1;
        if out != base {
            self.seen.entry(out.clone()).or_insert(1);
        }
        out
    }

    /// An explicit id is the document's own choice: kept as written, only remembered.
    fn claim(&mut self, id: &str) -> String {
        *self.seen.entry(id.to_string()).or_insert(0) += 1;
        id.to_string()
    }
}

/// Cuts a section's paragraphs into pieces near [`TARGET_CHARS`], at paragraph, then sentence,
/// then word boundaries, each piece after the first starting with the last words of the one
/// before.
pub(crate) fn pieces(paragraphs: &[String]) -> Vec<String> {
    let mut units = Vec::new();
    for p in paragraphs {
        split_unit(p, &mut units);
    }
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut current_len = 0;
    // Whether `current` holds more than the overlap carried over from the piece before.
    let mut fresh = false;
    for unit in units {
        let len = unit.chars().count();
        if fresh && current_len + 1 + len > TARGET_CHARS {
            let tail = overlap(&current);
            out.push(std::mem::replace(&mut current, tail));
            current_len = current.chars().count();
        }
        if !current.is_empty() {
            current.push(' ');
            current_len += 1;
        }
        current.push_str(&unit);
        current_len += len;
        fresh = true;
    }
    if fresh {
        out.push(current);
    }
    out
}

/// The words at the end of `piece` that fit in [`OVERLAP_CHARS`], starting at a sentence if
/// one starts there.
fn overlap(piece: &str) -> String {
    let mut start = piece.len();
    let mut chars = 0;
    for (i, c) in piece.char_indices().rev() {
        chars += 1;
        if chars > OVERLAP_CHARS {
            break;
        }
        if c == ' ' {
            start = i + 1;
        }
    }
    let tail = &piece[start.min(piece.len())..];
    // Prefer the start of a sentence inside the tail, so the overlap reads as whole sentences.
    let sentence = tail.match_indices(". ").map(|(i, _)| i + 2).find(|&i| i < tail.len());
    match sentence {
        Some(i) if i < tail.len() / 2 => tail[i..].to_string(),
        _ => tail.to_string(),
    }
}

/// Pushes `p` as one unit if it fits, else its sentences, else its words in runs, else (one
/// enormous word) runs of characters.
fn split_unit(p: &str, units: &mut Vec<String>) {
    if p.chars().count() <= TARGET_CHARS {
        units.push(p.to_string());
        return;
    }
    let sentences = sentences(p);
    if sentences.len() > 1 {
        for s in sentences {
            split_unit(s, units);
        }
        return;
    }
    let mut run = String::new();
    let mut run_len = 0;
    for word in p.split(' ') {
        let len = word.chars().count();
        if len > TARGET_CHARS {
            if !run.is_empty() {
                units.push(std::mem::take(&mut run));
                run_len = 0;
            }
            let chars: Vec<char> = word.chars().collect();
            units.extend(chars.chunks(TARGET_CHARS).map(|c| c.iter().collect::<String>()));
            continue;
        }
        if run_len > 0 && run_len + 1 + len > TARGET_CHARS {
            units.push(std::mem::take(&mut run));
            run_len = 0;
        }
        if run_len > 0 {
            run.push(' ');
            run_len += 1;
        }
        run.push_str(word);
        run_len += len;
    }
    if !run.is_empty() {
        units.push(run);
    }
}

/// `p` cut after each `.`, `!`, `?` or `…` that a space follows (the space is dropped).
fn sentences(p: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev = ' ';
    for (i, c) in p.char_indices() {
        if c == ' ' && matches!(prev, '.' | '!' | '?' | '…') && i > start {
            out.push(&p[start..i]);
            start = i + 1;
        }
        prev = c;
    }
    if start < p.len() {
        out.push(&p[start..]);
    }
    out
}

/// `text` cut at a word boundary to `max` characters and a "…" marking a cut (the marker is
/// on top of `max`, as snippets always were).
pub(crate) fn truncate(text: &str, max: usize) -> String {
    wright_text::clip_words(text, max.saturating_add(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_github() {
        assert_eq!(slug("Adding a tool"), "adding-a-tool");
        assert_eq!(slug("What's new in 2.0?"), "whats-new-in-20");
        assert_eq!(slug("Configuração  avançada"), "configuração--avançada");
        assert_eq!(slug("snake_case & kebab-case"), "snake_case--kebab-case");
        let mut s = Slugger::default();
        assert_eq!(s.unique("setup"), "setup");
        assert_eq!(s.unique("setup"), "setup-1");
        assert_eq!(s.unique("setup"), "setup-2");
        assert_eq!(s.unique("setup-1"), "setup-1-1");
    }

    #[test]
    fn short_sections_stay_whole() {
        assert_eq!(pieces(&["One.".into(), "Two.".into()]), vec!["One. Two."]);
        assert!(pieces(&[]).is_empty());
    }

    #[test]
    fn long_sections_are_cut_at_sentences_with_overlap() {
        let sentence = "The quick brown fox jumps over the lazy dog near the river bank. ";
        let para = sentence.repeat(40);
        let out = pieces(&[collapse(&para)]);
        assert!(out.len() >= 3, "{} pieces", out.len());
        for p in &out {
            let n = p.chars().count();
            assert!(n <= TARGET_CHARS + OVERLAP_CHARS + 1, "{n} chars");
            assert!(p.starts_with("The quick"), "cut mid-sentence: {p:.40}");
            assert!(p.ends_with("bank."), "cut mid-sentence: …{}", &p[p.len() - 20..]);
        }
        // The second piece repeats the end of the first.
        let tail: String = out[0].chars().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
        assert!(out[1].contains(tail.trim()));
    }

    #[test]
    fn one_huge_word_is_cut_by_characters() {
        let word = "á".repeat(2_500);
        let out = pieces(std::slice::from_ref(&word));
        assert!(out.len() >= 3);
        assert!(out.iter().all(|p| p.chars().count() <= TARGET_CHARS + OVERLAP_CHARS + 1));
        assert!(out.concat().contains(&word[..200]));
    }

    #[test]
    fn truncation_keeps_whole_words() {
        assert_eq!(truncate("short", 10), "short");
        assert_eq!(truncate("one two three four", 10), "one two…");
        assert_eq!(truncate("ããããããããããããã", 5), "ããããã…");
    }
}
