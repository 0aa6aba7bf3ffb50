//! Which starter a request means, by meaning rather than shared words: the request's e5 vector
//! against each starter's passages (its title, description and example requests, in English
//! and Portuguese), with the keyword signals of [`crate::pick`] beside it, put through one
//! logistic model fitted on a labelled set of requests (`crates/starters/eval/tune.jsonl`) and
//! measured on a held-out set nobody tunes on (`eval/heldout.jsonl`; `docs/starters.md`).
//!
//! The embedding model is the one the chat ships; this crate only sees its vectors (the
//! caller embeds, so the crate stays free of the model), through [`Embed`].

use crate::{Library, Starter};
use wright_events::Template;

/// Text to unit vectors: the e5 model in wright.
pub type Embed<'a> = &'a dyn Fn(&[String]) -> Result<Vec<Vec<f32>>, String>;

/// A starter's passages, embedded once per library.
#[derive(Debug, Clone)]
pub struct Meanings {
    /// Per starter (in library order): one vector per passage.
    vectors: Vec<Vec<Vec<f32>>>,
}

/// What is known of one request against one starter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signals {
    /// The highest cosine between the request and one of the starter's passages.
    pub similarity: f32,
    /// How far that is above the best other starter's (negative when another is closer).
    pub margin: f32,
    /// The keyword score ([`Starter::score`]).
    pub words: f32,
    /// The share of the request's words the starter knows.
    pub coverage: f32,
    /// The request is closer to one of the starter's near misses (`not_for`) than to any of
    /// its own passages: whatever the model says, the starter is not what was asked for.
    pub declined: bool,
}

impl Signals {
    /// The signals as the model's inputs, in its weights' order.
    pub fn features(&self) -> [f32; 4] {
        [self.similarity, self.margin, self.words, self.coverage]
    }
}

/// The fitted model: `p = 1 / (1 + e^-(w·x + b))` over [`Signals::features`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    pub weights: [f32; 4],
    pub bias: f32,
    /// The probability a pick needs.
    pub threshold: f32,
}

impl Model {
    /// The probability that the request means the starter: 0 for a declined one.
    pub fn probability(&self, s: &Signals) -> f32 {
        if s.declined { 0.0 } else { self.likeness(s) }
    }

    /// The model's probability whatever the near misses say: how alike the request and the
    /// starter are, for naming the closest starters when none is picked (a scientific
    /// calculator is not the calculator, but the calculator is still the closest thing).
    pub fn likeness(&self, s: &Signals) -> f32 {
        let z: f32 = self.weights.iter().zip(s.features()).map(|(w, x)| w * x).sum::<f32>() + self.bias;
        1.0 / (1.0 + (-z).exp())
    }
}

/// The texts a starter is known by, each one passage: first what it makes ([`own_passages`]
/// of them), then its near misses (`not_for`).
pub fn passages(s: &Starter) -> Vec<String> {
    let m = &s.manifest;
    let mut out = vec![m.title.en.clone(), m.title.pt.clone(), m.description.en.clone(), m.description.pt.clone()];
    out.extend(m.examples.en.iter().chain(&m.examples.pt).cloned());
    out.extend(m.not_for.en.iter().chain(&m.not_for.pt).cloned());
    out
}

/// How many of [`passages`] say what the starter makes (the rest are its near misses).
pub fn own_passages(s: &Starter) -> usize {
    4 + s.manifest.examples.en.len() + s.manifest.examples.pt.len()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl Meanings {
    /// Meanings from vectors embedded elsewhere: per starter in library order, one vector per
    /// [`passages`] entry.
    pub fn from_vectors(library: &Library, vectors: Vec<Vec<Vec<f32>>>) -> Result<Self, String> {
        if vectors.len() != library.starters.len() {
            return Err(format!("{} vector sets for {} starters", vectors.len(), library.starters.len()));
        }
        for (s, v) in library.starters.iter().zip(&vectors) {
            if v.len() != passages(s).len() {
                return Err(format!("{} vectors for the passages of {}", v.len(), s.id()));
            }
        }
        Ok(Self { vectors })
    }
}

impl Library {
    /// Embed every starter's passages (once: a library's meanings are kept by its caller).
    pub fn meanings(&self, embed: Embed<'_>) -> Result<Meanings, String> {
        let mut vectors = Vec::with_capacity(self.starters.len());
        for s in &self.starters {
            let texts = passages(s);
            let v = embed(&texts)?;
            if v.len() != texts.len() {
                return Err(format!("{} vectors for {} passages of {}", v.len(), texts.len(), s.id()));
            }
            vectors.push(v);
        }
        Ok(Meanings { vectors })
    }

    /// Every starter's signals for `request` (embedded as `asked`), in library order.
    pub fn signals(&self, request: &str, asked: &[f32], meanings: &Meanings) -> Vec<Signals> {
        let words = crate::pick::words(request);
        let best = |ps: &[Vec<f32>]| ps.iter().map(|p| cosine(asked, p)).fold(f32::MIN, f32::max);
        let (sims, near): (Vec<f32>, Vec<f32>) = self
            .starters
            .iter()
            .zip(&meanings.vectors)
            .map(|(s, ps)| {
                let (own, misses) = ps.split_at(own_passages(s).min(ps.len()));
                (best(own), best(misses))
            })
            .unzip();
        self.starters
            .iter()
            .zip(&sims)
            .enumerate()
            .map(|(i, (s, &sim))| {
                let other = sims.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, v)| *v).fold(f32::MIN, f32::max);
                Signals {
                    similarity: sim,
                    margin: if other == f32::MIN { 0.0 } else { sim - other },
                    words: s.score_words(&words),
                    coverage: s.coverage(&words),
                    declined: near[i] > sim,
                }
            })
            .collect()
    }

    /// Every starter with the probability that `request` means it, most probable first.
    pub fn ranked_by_meaning(
        &self,
        request: &str,
        asked: &[f32],
        meanings: &Meanings,
        model: &Model,
    ) -> Vec<(&Starter, f32)> {
        self.ranked_by(request, asked, meanings, |sig| model.probability(sig))
    }

    /// The `n` starters most probably meant by `request`, most probable first (for a request
    /// none fits: what the built-in model could make instead), near misses or not.
    pub fn closest_by_meaning(
        &self,
        request: &str,
        asked: &[f32],
        meanings: &Meanings,
        model: &Model,
        n: usize,
    ) -> Vec<&Starter> {
        self.ranked_by(request, asked, meanings, |sig| model.likeness(sig))
            .into_iter()
            .take(n)
            .map(|(s, _)| s)
            .collect()
    }

    /// Every starter scored by `score` over its signals for `request`, highest first.
    fn ranked_by(
        &self,
        request: &str,
        asked: &[f32],
        meanings: &Meanings,
        score: impl Fn(&Signals) -> f32,
    ) -> Vec<(&Starter, f32)> {
        let signals = self.signals(request, asked, meanings);
        let mut all: Vec<(&Starter, f32)> =
            self.starters.iter().zip(&signals).map(|(s, sig)| (s, score(sig))).collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1));
        all
    }

    /// The starter `request` means, if the model is sure enough: the most probable starter of
    /// `template` (any with `auto`), when its probability reaches the model's threshold. No
    /// starter otherwise: a request nothing fits gets none, never the nearest.
    pub fn pick_by_meaning(
        &self,
        request: &str,
        asked: &[f32],
        meanings: &Meanings,
        model: &Model,
        template: Template,
    ) -> Option<crate::Pick<'_>> {
        self.ranked_by_meaning(request, asked, meanings, model)
            .into_iter()
            .find(|(s, _)| crate::library::fits_template(template, s.manifest.template))
            .filter(|(_, p)| *p >= model.threshold)
            .map(|(starter, score)| crate::Pick { starter, score })
    }
}
