//! How a built-in tool judges its relevance to a message: its own cue patterns (English and
//! Portuguese, matched on accent-folded lower case) combined with the similarity of the
//! message to the tool's example requests under a local embedding model.
//!
//! Patterns carry precision: an explicit request ("quiz me", "faça um fluxograma") scores high,
//! a bare topic word ("quiz") scores low, and a mere mention ("the quiz you gave me", "sem
//! diagrama") caps the score below any threshold.
//!
//! The embedding catches what no pattern names ("can you put me on the spot about…"). A raw
//! cosine means something only for one model, so it is never compared with a fixed number:
//! the message's nearest examples vote instead. The example bank is the labelled set
//! (`eval/labelled.jsonl`: requests for each tool, for two, for none, and mentions); a tool's
//! vote is the share of the closest examples that asked for it, weighted by how close they are. Measured by `cargo test -p wright-chat --test
//! selection` (leave-one-out on the labelled set, and two sets written apart from it).

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

/// The labelled set, shipped in the binary as the vote's example bank.
pub const LABELLED: &str = include_str!("../eval/labelled.jsonl");

/// The labelled examples (a line that does not parse is skipped: the set is tested).
pub fn labelled() -> Vec<Example> {
    LABELLED.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

struct Banked {
    text: String,
    tools: Vec<String>,
    vector: Vec<f32>,
}

/// A vote counts for this much of a score. It applies only where no pattern asked for any tool
/// (beside an explicit request, a tool without a word of its own is a topical neighbour: e5
/// weighs topic over intent). Measured on the three sets: at 1.0 the vote finds a third of the
/// indirect requests the patterns miss, with no loss on the gated sets beyond 0.95.
pub const VOTE_WEIGHT: f32 = 1.0;

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
}

struct Compiled {
    asks: Vec<Regex>,
    topics: Vec<Regex>,
    mentions: Vec<Regex>,
}

/// The pattern score of an explicit request and of a bare topic word.
pub const ASK: f32 = 1.0;
pub const TOPIC: f32 = 0.55;
/// The most a message that only mentions the tool's subject can score.
pub const MENTION_CAP: f32 = 0.3;
/// Without an embedding model, an explicit request scores this (still above 0.7).
pub const PATTERNS_ONLY_ASK: f32 = 0.85;

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
    /// labelled set, once, at start).
    pub fn new(tools: Vec<(&'static str, Cues)>, embedder: Option<Arc<dyn Embedder>>) -> Result<Self, CueError> {
        Self::with_bank(tools, embedder, labelled(), false)
    }

    /// [`Scorer::new`] with another example bank; `leave_one_out` skips an example whose text
    /// is the message being scored.
    pub fn with_bank(
        tools: Vec<(&'static str, Cues)>,
        embedder: Option<Arc<dyn Embedder>>,
        examples: Vec<Example>,
        leave_one_out: bool,
    ) -> Result<Self, CueError> {
        let mut out = HashMap::new();
        for (name, cues) in &tools {
            out.insert(
                name.to_string(),
                Compiled {
                    asks: compile(name, &cues.asks)?,
                    topics: compile(name, &cues.topics)?,
                    mentions: compile(name, &cues.mentions)?,
                },
            );
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
        Ok(Self { tools: out, embedder, bank, plain, leave_one_out })
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

    /// Whether any tool's explicit request matches the (folded) text.
    fn any_ask(&self, folded: &str) -> bool {
        self.tools.values().any(|c| c.asks.iter().any(|r| r.is_match(folded)))
    }

    /// The share of the message's nearest examples that asked for `tool`, each weighted by
    /// how close it is to the closest one (0 without a bank).
    pub fn vote(&self, tool: &str, message: &str, embedding: &[f32]) -> f32 {
        let mut near: Vec<(f32, &Banked)> = self
            .bank
            .iter()
            .filter(|b| !(self.leave_one_out && b.text == message))
            .map(|b| (cosine(embedding, &b.vector), b))
            .collect();
        near.sort_by(|a, b| b.0.total_cmp(&a.0));
        near.truncate(NEIGHBOURS);
        let Some(best) = near.first().map(|n| n.0) else { return 0.0 };
        let (mut yes, mut all) = (0.0f32, 0.0f32);
        for (cos, b) in &near {
            let w = ((cos - best) / SHARPNESS).exp();
            all += w;
            if b.tools.iter().any(|t| t == tool) {
                yes += w;
            }
        }
        if all > 0.0 { yes / all } else { 0.0 }
    }

    /// The tool's relevance to `message` (0 for a tool without cues).
    pub fn score(&self, tool: &str, message: &str, embedding: Option<&[f32]>) -> f32 {
        let Some(c) = self.tools.get(tool) else { return 0.0 };
        let text = fold(message);
        let any = |set: &[Regex]| set.iter().any(|r| r.is_match(&text));
        let lexical = if any(&c.asks) {
            ASK
        } else if any(&c.topics) {
            TOPIC
        } else {
            0.0
        };
        let mention = any(&c.mentions);
        let patterns = if lexical >= ASK { PATTERNS_ONLY_ASK } else { lexical };
        // The vote can select what the patterns missed, but never sinks an explicit request.
        let s = match embedding.filter(|_| !self.bank.is_empty()) {
            // The vote is for messages no pattern understood: beside an explicit request for
            // another tool, a tool with no word of its own is a topical neighbour, not a wish.
            Some(v) if !self.plain.iter().any(|r| r.is_match(&text)) && (lexical > 0.0 || !self.any_ask(&text)) => {
                patterns.max(VOTE_WEIGHT * self.vote(tool, message, v))
            }
            Some(_) => patterns,
            None => patterns,
        };
        if mention { s.min(MENTION_CAP) } else { s }
    }
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
        };
        Scorer::new(vec![("quiz", cues)], None).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn folding_takes_accents_and_case_away() {
        assert_eq!(fold("Faça um DIAGRAMA, já!"), "faca um diagrama, ja!");
    }

    #[test]
    fn asks_pass_topics_do_not_and_mentions_are_capped() {
        let s = scorer();
        assert!(s.score("quiz", "Quiz me on cells", None) >= 0.7);
        assert!(s.score("quiz", "Faça um quiz sobre células", None) >= 0.7);
        assert!(s.score("quiz", "what is a quiz", None) < 0.7);
        assert!(s.score("quiz", "I don't get the quiz you gave me", None) <= MENTION_CAP);
        assert!(s.score("quiz", "não quero quiz, faça um quiz não", None) <= MENTION_CAP);
        assert_eq!(s.score("nope", "quiz me", None), 0.0);
    }

    #[test]
    fn a_wrong_pattern_is_named() {
        let bad = Cues { asks: vec!["(".into()], ..Cues::default() };
        let err = Scorer::new(vec![("x", bad)], None).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("tool x") && err.contains("`(`"), "{err}");
    }
}
