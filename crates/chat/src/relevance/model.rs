//! The calibrated relevance model: one logistic regression over signals every tool has (its
//! cue patterns, the similarity of the message to its example requests, the vote of the
//! nearest labelled examples), with **the same weights for every tool**, so a tool that brings
//! only a description and a few examples (an MCP tool) is scored by the same model as a
//! built-in one. Only the threshold is per tool (chosen on the tuning split); a tool the model
//! was not fitted with gets the default threshold. Three fits of the same form: with the
//! embedding ([`EMBEDDED`]), without it ([`PATTERNS`]), and for a tool with examples but no
//! patterns ([`EXAMPLES`]).
//!
//! The constants below are fitted by `cargo run -p wright-chat --example select_fit --release`
//! on `crates/chat/eval/tuning.jsonl` (leave-one-out: a message is never its own neighbour) and
//! only measured on `eval/heldout.jsonl` (`eval/README.md`, `docs/chat.md`).

/// The confidence at which the agent runs a tool (seed 001's 0.7): a probability at the tool's
/// own threshold is reported as exactly this, so `[chat] confidence_threshold` keeps its meaning.
pub const SELECT_AT: f32 = 0.7;

/// How many features [`Signals::features`] gives.
pub const FEATURES: usize = 10;

/// What is known of one message against one tool.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Signals {
    /// 1 when one of the tool's explicit-request patterns matches.
    pub ask: f32,
    /// 1 when only the tool's subject word matches.
    pub topic: f32,
    /// 1 when the message talks about an earlier result or declines one.
    pub mention: f32,
    /// 1 when another tool's explicit request matches and none of this tool's does.
    pub other_ask: f32,
    /// 1 when the message asks for a plain answer ("just explain").
    pub plain: f32,
    /// The highest cosine between the message and one of the tool's examples (0 without the
    /// embedding model).
    pub similarity: f32,
    /// The mean cosine of the three closest of the tool's examples.
    pub top3: f32,
    /// The share of the nearest labelled examples that asked for the tool, by closeness.
    pub vote: f32,
    /// [`Signals::similarity`] minus the best other tool's.
    pub margin: f32,
    /// [`Signals::similarity`] minus the closest example that asked for no tool.
    pub none_margin: f32,
}

impl Signals {
    /// The signals as the model's inputs, in its weights' order.
    pub fn features(&self) -> [f32; FEATURES] {
        [
            self.ask,
            self.topic,
            self.mention,
            self.other_ask,
            self.plain,
            self.similarity,
            self.top3,
            self.vote,
            self.margin,
            self.none_margin,
        ]
    }

    /// The features' names, for the fitting tool's report.
    pub const NAMES: [&'static str; FEATURES] =
        ["ask", "topic", "mention", "other_ask", "plain", "similarity", "top3", "vote", "margin", "none_margin"];
}

/// `p = 1 / (1 + e^-(w·x + b))` over [`Signals::features`], with a threshold per tool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    pub weights: [f32; FEATURES],
    pub bias: f32,
    /// Per tool, the probability it needs to run.
    pub thresholds: &'static [(&'static str, f32)],
    /// The threshold of a tool without its own.
    pub default_threshold: f32,
}

impl Model {
    pub fn probability(&self, s: &Signals) -> f32 {
        let z: f32 = self.weights.iter().zip(s.features()).map(|(w, x)| w * x).sum::<f32>() + self.bias;
        1.0 / (1.0 + (-z).exp())
    }

    pub fn threshold(&self, tool: &str) -> f32 {
        self.thresholds.iter().find(|(t, _)| *t == tool).map(|(_, v)| *v).unwrap_or(self.default_threshold)
    }

    /// The probability as the agent's confidence: piecewise linear, the tool's threshold at
    /// [`SELECT_AT`], 0 at 0 and 1 at 1 (so the order of tools by confidence is kept within a
    /// tool, and every tool is selected at the same number).
    pub fn confidence(&self, tool: &str, p: f32) -> f32 {
        let t = self.threshold(tool).clamp(0.01, 0.99);
        let c = if p >= t { SELECT_AT + (1.0 - SELECT_AT) * (p - t) / (1.0 - t) } else { SELECT_AT * p / t };
        c.clamp(0.0, 1.0)
    }
}

// FITTED-BEGIN: pasted from `cargo run -p wright-chat --example select_fit --release` (ridge
// chosen by 5-fold cross-validation on the tuning split: 1 with the embedding, 1 without;
// thresholds: the best F1 per tool on the tuning split). Weights are on the raw features, in
// [`Signals::NAMES`] order; similarity, top3 and margin are correlated, so read them together.
#[allow(clippy::excessive_precision)]
/// With the embedding model (the configuration wright ships).
pub const EMBEDDED: Model = Model {
    weights: [6.4416194, -0.24991845, -7.683645, -3.7875385, 0.0, -34.12412, 74.09965, 6.995345, -16.04654, 4.424813],
    bias: -39.130432,
    thresholds: &[
        ("code", 0.100008905),
        ("diagram", 0.14783138),
        ("flashcard_update", 0.5314413),
        ("flashcards", 0.47399092),
        ("quiz", 0.45212078),
        ("video_search", 0.20126367),
    ],
    default_threshold: 0.4683044,
};

#[allow(clippy::excessive_precision)]
/// Without it (patterns alone: the embedding's signals are 0, their weights fitted to 0).
pub const PATTERNS: Model = Model {
    weights: [6.851828, 0.7262643, -5.8907604, -3.5455217, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    bias: -3.0203106,
    thresholds: &[
        ("code", 0.5459525),
        ("diagram", 0.5459525),
        ("flashcard_update", 0.53520024),
        ("flashcards", 0.5459525),
        ("quiz", 0.5459525),
        ("video_search", 0.5459525),
    ],
    default_threshold: 0.5459525,
};

/// With the embedding model, for a tool that brings no patterns, only example requests (an MCP
/// tool): the same fit with the pattern signals at 0, so the embedding's signals carry it alone.
/// Ridge 0.1 (cross-validated); measured on the built-ins with their patterns hidden it is much
/// weaker (tuning precision 0.65, recall 0.72): examples alone say less than patterns do.
#[allow(clippy::excessive_precision)]
pub const EXAMPLES: Model = Model {
    weights: [0.0, 0.0, 0.0, 0.0, 0.0, -64.56006, 89.6203, 5.348853, 9.545484, 11.073706],
    bias: -24.39319,
    thresholds: &[],
    default_threshold: 0.23736738,
};
// FITTED-END

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tools_threshold_lands_on_the_agents() {
        let m = Model { weights: [0.0; FEATURES], bias: 0.0, thresholds: &[("quiz", 0.4)], default_threshold: 0.6 };
        assert!((m.confidence("quiz", 0.4) - SELECT_AT).abs() < 1e-6);
        assert!((m.confidence("other", 0.6) - SELECT_AT).abs() < 1e-6);
        assert!(m.confidence("quiz", 0.39) < SELECT_AT && m.confidence("quiz", 0.41) > SELECT_AT);
        assert_eq!(m.confidence("quiz", 1.0), 1.0);
        assert_eq!(m.confidence("quiz", 0.0), 0.0);
    }
}
