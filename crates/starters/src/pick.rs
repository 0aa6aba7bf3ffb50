//! Which starter a request asks for, and how sure that is: words of the request against each
//! starter's tags and example requests, in English and Portuguese, accents and plurals
//! folded. A tag named in the request ("timer", "cronômetro") is strong evidence; an example
//! request shares most of its words with it otherwise. Below [`THRESHOLD`] no starter is used.
//! (Keywords until the chat issue's multilingual embedding model exists; the seam is
//! [`Library::scores`].)

use crate::{Library, Starter};
use std::collections::BTreeSet;
use wright_events::Template;

/// The confidence a starter needs to be used.
pub const THRESHOLD: f32 = 0.6;

/// A starter chosen for a request.
#[derive(Debug, Clone, Copy)]
pub struct Pick<'a> {
    pub starter: &'a Starter,
    pub score: f32,
}

/// Words that say nothing about what to build.
const STOP: &[&str] = &[
    "a",
    "an",
    "the",
    "for",
    "my",
    "of",
    "to",
    "with",
    "and",
    "that",
    "in",
    "on",
    "me",
    "make",
    "build",
    "create",
    "i",
    "want",
    "need",
    "please",
    "app",
    "page",
    "website",
    "site",
    "simple",
    "small",
    "web",
    "some",
    "it",
    "is",
    "can",
    "you",
    "write",
    "give",
    "which",
    "where",
    "this",
    "our",
    "your",
    "new",
    "little",
    "quick",
    "basic",
    "um",
    "uma",
    "o",
    "os",
    "as",
    "de",
    "do",
    "da",
    "dos",
    "das",
    "para",
    "pra",
    "meu",
    "minha",
    "com",
    "e",
    "que",
    "em",
    "no",
    "na",
    "faca",
    "faz",
    "crie",
    "cria",
    "quero",
    "preciso",
    "por",
    "favor",
    "aplicativo",
    "pagina",
    "simples",
    "pequeno",
    "pequena",
    "novo",
    "nova",
    "seu",
    "sua",
    "onde",
    "isso",
    "esse",
    "essa",
];

fn fold(c: char) -> char {
    match c {
        'á' | 'à' | 'â' | 'ã' | 'ä' => 'a',
        'é' | 'ê' | 'è' | 'ë' => 'e',
        'í' | 'ì' | 'î' | 'ï' => 'i',
        'ó' | 'ô' | 'õ' | 'ò' | 'ö' => 'o',
        'ú' | 'ù' | 'û' | 'ü' => 'u',
        'ç' => 'c',
        other => other,
    }
}

/// The words that matter in `text`: lowercase, accents folded, hyphenated words joined
/// ("to-do" is "todo"), a plural `s` dropped.
pub(crate) fn words(text: &str) -> BTreeSet<String> {
    text.to_lowercase()
        .chars()
        .filter(|c| *c != '-')
        .map(fold)
        .collect::<String>()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP.contains(w))
        .map(|w| {
            if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
                w[..w.len() - 1].to_string()
            } else {
                w.to_string()
            }
        })
        .collect()
}

impl Starter {
    /// How well `request` matches this starter, 0 to 1.
    pub fn score(&self, request: &str) -> f32 {
        self.score_words(&words(request))
    }

    pub(crate) fn score_words(&self, asked: &BTreeSet<String>) -> f32 {
        if asked.is_empty() {
            return 0.0;
        }
        let tag_hits = self
            .manifest
            .tags
            .iter()
            .filter(|t| {
                let tag = words(t);
                !tag.is_empty() && tag.is_subset(asked)
            })
            .count();
        let tags = if tag_hits == 0 { 0.0 } else { (0.7 + 0.1 * (tag_hits as f32 - 1.0)).min(0.95) };
        let examples = self
            .manifest
            .examples
            .en
            .iter()
            .chain(&self.manifest.examples.pt)
            .map(|e| {
                let ex = words(e);
                if ex.is_empty() { 0.0 } else { ex.intersection(asked).count() as f32 / ex.len() as f32 }
            })
            .fold(0.0f32, f32::max);
        tags.max(examples)
    }

    /// The share of the request's words this starter knows (its tags and examples): what tells
    /// two starters that both match apart ("a tip calculator" is a calculator too).
    pub(crate) fn coverage(&self, asked: &BTreeSet<String>) -> f32 {
        if asked.is_empty() {
            return 0.0;
        }
        let m = &self.manifest;
        let known: BTreeSet<String> =
            m.tags.iter().chain(&m.examples.en).chain(&m.examples.pt).flat_map(|t| words(t)).collect();
        asked.intersection(&known).count() as f32 / asked.len() as f32
    }
}

impl Library {
    /// Every starter's score for `request`, best first.
    pub fn scores(&self, request: &str) -> Vec<(&Starter, f32)> {
        let asked = words(request);
        let mut all: Vec<(&Starter, f32, f32)> =
            self.starters.iter().map(|s| (s, s.score_words(&asked), s.coverage(&asked))).collect();
        // Best score first; between equal ones, the starter that knows more of the request.
        all.sort_by(|a, b| {
            let key = |x: &(&Starter, f32, f32)| ((x.1 * 100.0).round() as i32, (x.2 * 100.0).round() as i32);
            key(b).cmp(&key(a)).then_with(|| a.0.id().cmp(b.0.id()))
        });
        all.into_iter().map(|(s, score, _)| (s, score)).collect()
    }

    /// The starter `request` asks for by its words, if one is sure enough; only starters of
    /// `template` when the person chose one (`auto` lets the starter decide). Below
    /// [`THRESHOLD`], none: a request nothing matches gets no starter, never the nearest. (The
    /// built-in model picks by meaning, `crate::meaning`; this is what capable models follow as a
    /// reference, and the built-in model's picker when the embedding model is unavailable.)
    pub fn pick(&self, request: &str, template: Template) -> Option<Pick<'_>> {
        let fits = |s: &Starter| crate::library::fits_template(template, s.manifest.template);
        self.scores(request)
            .into_iter()
            .filter(|(s, _)| fits(s))
            .find(|(_, score)| *score >= THRESHOLD)
            .map(|(starter, score)| Pick { starter, score })
    }
}
