//! How a tool judges its relevance to a message: signals every tool has, put through one
//! calibrated model ([`model`]) with the same weights for every tool.
//!
//! The signals are the tool's cue patterns (English and Portuguese, on accent-folded lower case:
//! an explicit request, a bare topic word, a mere mention or a refusal), and under a local
//! embedding model the message's similarity to the tool's example requests, margins against the
//! other tools and against the examples that asked for nothing, and the vote of the message's
//! nearest labelled examples. A raw cosine means something only for one model, so it is never
//! compared with a hand-set number: the model's weights and the tools' thresholds are fitted on
//! the tuning split (`eval/tuning.jsonl`, also the example bank shipped in the binary) and
//! measured on a held-out split nobody tunes on (`cargo test -p wright-chat --test selection`).

pub mod model;

use model::{Model, Signals};
use regex::Regex;
use std::collections::HashMap;
use std::sync::Arc;

/// A local sentence-embedding model.
pub trait Embedder: Send + Sync {
    /// Model name, for logs and `wright doctor`.
    fn name(&self) -> &str;
    /// One unit-length vector per text.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String>;
    /// [`Embedder::embed`] for texts `owner` is waiting for (a message being answered): a
    /// shared model serves these before bulk work, taking turns between owners.
    fn embed_interactive(&self, owner: &str, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        let _ = owner;
        self.embed(texts)
    }
}

/// A labelled example message: the tools it asked for (none for chit-chat and mentions).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Example {
    pub text: String,
    pub tools: Vec<String>,
}

/// The tuning split of the labelled set, shipped in the binary as the example bank.
pub const LABELLED: &str = include_str!("../eval/tuning.jsonl");

/// The labelled examples (a line that does not parse is skipped: the set is tested).
pub fn labelled() -> Vec<Example> {
    LABELLED.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

struct Banked {
    text: String,
    tools: Vec<String>,
    vector: Vec<f32>,
}

/// Messages that ask for a plain answer ("just explain", "só explica"): the vote stays out.
const PLAIN: &[&str] =
    &[r"(just|only)\s+(explain|tell me|text|in words)", r"(so|apenas)\s+(me\s+)?(explica|texto|em palavras)"];

/// How many nearest examples vote, and how sharply closeness weighs (in cosine units).
pub const NEIGHBOURS: usize = 7;
pub const SHARPNESS: f32 = 0.02;

/// A tool's cues. Patterns are regexes over the accent-folded, lower-cased message.
#[derive(Debug, Clone, Default)]
pub struct Cues {
    /// An explicit request for what the tool makes.
    pub asks: Vec<String>,
    /// The tool's subject named, without a request.
    pub topics: Vec<String>,
    /// Talking about an earlier result, or asking for it not to be made.
    pub mentions: Vec<String>,
    /// Example requests of the tool's own, beside the bank's (a tool from outside, such as an
    /// MCP server's, brings these; the built-ins' examples are in the bank).
    pub examples: Vec<String>,
}

struct Compiled {
    asks: Vec<Regex>,
    topics: Vec<Regex>,
    mentions: Vec<Regex>,
}

/// Why cues could not be compiled (a built-in's pattern is wrong: a bug, caught by tests).
#[derive(Debug, thiserror::Error)]
#[error("tool {tool}: pattern `{pattern}`: {error}")]
pub struct CueError {
    tool: String,
    pattern: String,
    error: String,
}

/// Scores registered tools against messages.
pub struct Scorer {
    tools: HashMap<String, Compiled>,
    /// The tools in registration order.
    names: Vec<String>,
    embedder: Option<Arc<dyn Embedder>>,
    bank: Vec<Banked>,
    plain: Vec<Regex>,
    /// Skip an example whose text is the message's (to measure on the bank itself).
    leave_one_out: bool,
}

/// Lower case without accents, so `Faça um DIAGRAMA` and `faca um diagrama` match alike.
pub fn fold(text: &str) -> String {
    text.chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ã' | 'ä' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'õ' | 'ö' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            'ç' => 'c',
            'ñ' => 'n',
            '’' => '\'',
            c => c,
        })
        .collect()
}

fn compile(tool: &str, patterns: &[String]) -> Result<Vec<Regex>, CueError> {
    patterns
        .iter()
        .map(|p| Regex::new(p).map_err(|e| CueError { tool: tool.into(), pattern: p.clone(), error: e.to_string() }))
        .collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na.sqrt() * nb.sqrt()) }
}

impl Scorer {
    /// Compile every tool's cues and, with an embedding model, embed the example bank (the
    /// tuning split, once, at start).
    pub fn new(tools: Vec<(&str, Cues)>, embedder: Option<Arc<dyn Embedder>>) -> Result<Self, CueError> {
        Self::with_bank(tools, embedder, labelled(), false)
    }

    /// [`Scorer::new`] with another example bank; `leave_one_out` skips an example whose text
    /// is the message being scored (to measure on the bank itself). Each tool's own
    /// [`Cues::examples`] join the bank as requests for that tool.
    pub fn with_bank(
        tools: Vec<(&str, Cues)>,
        embedder: Option<Arc<dyn Embedder>>,
        mut examples: Vec<Example>,
        leave_one_out: bool,
    ) -> Result<Self, CueError> {
        let mut out = HashMap::new();
        let mut names = Vec::new();
        for (name, cues) in &tools {
            out.insert(
                name.to_string(),
                Compiled {
                    asks: compile(name, &cues.asks)?,
                    topics: compile(name, &cues.topics)?,
                    mentions: compile(name, &cues.mentions)?,
                },
            );
            names.push(name.to_string());
            examples
                .extend(cues.examples.iter().map(|text| Example { text: text.clone(), tools: vec![name.to_string()] }));
        }
        let bank = match &embedder {
            Some(e) => {
                let texts: Vec<String> = examples.iter().map(|x| x.text.clone()).collect();
                let vectors = e.embed(&texts).map_err(|error| CueError {
                    tool: "*".into(),
                    pattern: "the example bank".into(),
                    error,
                })?;
                examples
                    .into_iter()
                    .zip(vectors)
                    .map(|(x, vector)| Banked { text: x.text, tools: x.tools, vector })
                    .collect()
            }
            None => Vec::new(),
        };
        let plain = compile("*", &PLAIN.iter().map(|p| p.to_string()).collect::<Vec<_>>())?;
        Ok(Self { tools: out, names, embedder, bank, plain, leave_one_out })
    }

    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// The message's embedding, when a model is loaded (`None` if it fails: patterns still work).
    pub fn embed(&self, message: &str) -> Option<Vec<f32>> {
        self.embed_for("system", message)
    }

    /// [`Scorer::embed`] for a message `owner` is waiting for (interactive work of theirs).
    pub fn embed_for(&self, owner: &str, message: &str) -> Option<Vec<f32>> {
        let e = self.embedder.as_ref()?;
        match e.embed_interactive(owner, &[message.to_string()]) {
            Ok(mut v) => v.pop(),
            Err(err) => {
                tracing::warn!(error = %err, "embedding the message failed; scoring by patterns only");
                None
            }
        }
    }

    /// The bank's examples with their cosine to the message, closest first (the message itself
    /// left out when measuring on the bank).
    fn nearest(&self, message: &str, embedding: &[f32]) -> Vec<(f32, &Banked)> {
        let mut near: Vec<(f32, &Banked)> = self
            .bank
            .iter()
            .filter(|b| !(self.leave_one_out && b.text == message))
            .map(|b| (cosine(embedding, &b.vector), b))
            .collect();
        near.sort_by(|a, b| b.0.total_cmp(&a.0));
        near
    }

    /// The share of the message's nearest examples that asked for `tool`, each weighted by
    /// how close it is to the closest one (0 without a bank).
    pub fn vote(&self, tool: &str, message: &str, embedding: &[f32]) -> f32 {
        vote_of(&self.nearest(message, embedding), tool)
    }

    /// Everything the model weighs for `tool` and `message` (`None` for a tool without cues).
    pub fn signals(&self, tool: &str, message: &str, embedding: Option<&[f32]>) -> Option<Signals> {
        let c = self.tools.get(tool)?;
        let text = fold(message);
        let any = |set: &[Regex]| set.iter().any(|r| r.is_match(&text));
        let ask = any(&c.asks);
        let other_ask =
            !ask && self.tools.iter().any(|(name, o)| name != tool && o.asks.iter().any(|r| r.is_match(&text)));
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        let mut s = Signals {
            ask: flag(ask),
            topic: flag(!ask && any(&c.topics)),
            mention: flag(any(&c.mentions)),
            other_ask: flag(other_ask),
            plain: flag(self.plain.iter().any(|r| r.is_match(&text))),
            ..Signals::default()
        };
        let Some(v) = embedding.filter(|_| !self.bank.is_empty()) else { return Some(s) };
        let near = self.nearest(message, v);
        let closest = |want: &dyn Fn(&Banked) -> bool, k: usize| -> Vec<f32> {
            near.iter().filter(|(_, b)| want(b)).take(k).map(|(c, _)| *c).collect()
        };
        let own = closest(&|b| b.tools.iter().any(|t| t == tool), 3);
        s.similarity = own.first().copied().unwrap_or(0.0);
        s.top3 = if own.is_empty() { 0.0 } else { own.iter().sum::<f32>() / own.len() as f32 };
        let other = self
            .names
            .iter()
            .filter(|n| n.as_str() != tool)
            .filter_map(|n| closest(&|b| b.tools.iter().any(|t| t == n), 1).first().copied())
            .fold(None, |m: Option<f32>, c| Some(m.map_or(c, |m| m.max(c))));
        s.margin = other.map_or(0.0, |o| s.similarity - o);
        s.none_margin = closest(&|b| b.tools.is_empty(), 1).first().map_or(0.0, |n| s.similarity - n);
        s.vote = vote_of(&near, tool);
        Some(s)
    }

    /// The calibrated model for `tool`'s signals: with the embedding's, patterns alone, or
    /// (a tool with examples and no patterns) the embedding's alone.
    pub fn model_for(&self, tool: &str, embedded: bool) -> &'static Model {
        let patterns =
            self.tools.get(tool).is_some_and(|c| !(c.asks.is_empty() && c.topics.is_empty() && c.mentions.is_empty()));
        match (embedded, patterns) {
            (false, _) => &model::PATTERNS,
            (true, true) => &model::EMBEDDED,
            (true, false) => &model::EXAMPLES,
        }
    }

    /// The tool's relevance to `message` as the agent reads it: the model's probability, mapped
    /// so the tool's own threshold is [`model::SELECT_AT`] (0 for a tool without cues).
    pub fn score(&self, tool: &str, message: &str, embedding: Option<&[f32]>) -> f32 {
        let embedded = embedding.is_some() && !self.bank.is_empty();
        let Some(s) = self.signals(tool, message, embedding) else { return 0.0 };
        let m = self.model_for(tool, embedded);
        m.confidence(tool, m.probability(&s))
    }
}

/// The share of the [`NEIGHBOURS`] closest examples that asked for `tool`, weighted by how
/// close each is to the closest one.
fn vote_of(near: &[(f32, &Banked)], tool: &str) -> f32 {
    let near = &near[..near.len().min(NEIGHBOURS)];
    let Some(best) = near.first().map(|n| n.0) else { return 0.0 };
    let (mut yes, mut all) = (0.0f32, 0.0f32);
    for (cos, b) in near {
        let w = ((cos - best) / SHARPNESS).exp();
        all += w;
        if b.tools.iter().any(|t| t == tool) {
            yes += w;
        }
    }
    if all > 0.0 { yes / all } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scorer() -> Scorer {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let cues = Cues {
            asks: s(&[r"\bquiz me\b", r"\b(faca|crie) um quiz\b"]),
            topics: s(&[r"\bquiz\b"]),
            mentions: s(&[r"\bthe quiz you\b", r"\bnao .*quiz\b"]),
            ..Cues::default()
        };
        Scorer::new(vec![("quiz", cues)], None).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn folding_takes_accents_and_case_away() {
        assert_eq!(fold("Faça um DIAGRAMA, já!"), "faca um diagrama, ja!");
    }

    #[test]
    fn asks_pass_topics_and_mentions_do_not() {
        let s = scorer();
        assert!(s.score("quiz", "Quiz me on cells", None) >= 0.7);
        assert!(s.score("quiz", "Faça um quiz sobre células", None) >= 0.7);
        assert!(s.score("quiz", "what is a quiz", None) < 0.7);
        assert!(s.score("quiz", "I don't get the quiz you gave me", None) < 0.7);
        assert!(s.score("quiz", "não quero quiz, faça um quiz não", None) < 0.7);
        assert_eq!(s.score("nope", "quiz me", None), 0.0);
    }

    #[test]
    fn a_wrong_pattern_is_named() {
        let bad = Cues { asks: vec!["(".into()], ..Cues::default() };
        let err = Scorer::new(vec![("x", bad)], None).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("tool x") && err.contains("`(`"), "{err}");
    }
}
