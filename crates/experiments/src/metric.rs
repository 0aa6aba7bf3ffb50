//! What an experiment measures, per build, and what a build was assigned.

use crate::Variant;
use serde::{Deserialize, Serialize};

/// A measure of one build. The first three are yes/no (compared with exact tests on counts);
/// the rest are amounts (compared with bootstrap intervals on means).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// The build ended PUBLISHED.
    Published,
    /// Published without a fix attempt.
    FirstTry,
    /// A person rated it 👍 (of the rated builds).
    ThumbsUp,
    /// Fix attempts the build made.
    FixAttempts,
    /// What its model calls cost, in US dollars.
    Cost,
    /// Wall time from start to end, in seconds.
    Duration,
}

impl Metric {
    pub const ALL: [Metric; 6] =
        [Metric::Published, Metric::FirstTry, Metric::ThumbsUp, Metric::FixAttempts, Metric::Cost, Metric::Duration];

    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Published => "published",
            Metric::FirstTry => "first_try",
            Metric::ThumbsUp => "thumbs_up",
            Metric::FixAttempts => "fix_attempts",
            Metric::Cost => "cost",
            Metric::Duration => "duration",
        }
    }

    /// A name as users type it (`first-try` and `first_try` alike).
    pub fn parse(name: &str) -> Option<Metric> {
        let name = name.trim().to_ascii_lowercase().replace('-', "_");
        Metric::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// In words, for verdicts: "first-try success".
    pub fn label(self) -> &'static str {
        match self {
            Metric::Published => "published",
            Metric::FirstTry => "first-try success",
            Metric::ThumbsUp => "thumbs up",
            Metric::FixAttempts => "fix attempts",
            Metric::Cost => "cost",
            Metric::Duration => "duration",
        }
    }

    /// Yes/no per build (a rate), rather than an amount.
    pub fn is_rate(self) -> bool {
        matches!(self, Metric::Published | Metric::FirstTry | Metric::ThumbsUp)
    }

    /// More is better for rates; less is better for fix attempts, cost and duration.
    pub fn higher_is_better(self) -> bool {
        self.is_rate()
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one build came to, as experiments read it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub published: bool,
    pub fix_attempts: u32,
    pub cost_usd: f64,
    pub duration_secs: f64,
    /// A person's rating: `Some(true)` 👍, `Some(false)` 👎, `None` not rated.
    pub rating: Option<bool>,
}

impl Outcome {
    /// The build's value for `metric`: 1 or 0 for rates, the amount otherwise; `None` when it
    /// has none (an unrated build has no thumbs-up value).
    pub fn value(&self, metric: Metric) -> Option<f64> {
        let yes = |b: bool| if b { 1.0 } else { 0.0 };
        match metric {
            Metric::Published => Some(yes(self.published)),
            Metric::FirstTry => Some(yes(self.published && self.fix_attempts == 0)),
            Metric::ThumbsUp => self.rating.map(yes),
            Metric::FixAttempts => Some(f64::from(self.fix_attempts)),
            Metric::Cost => Some(self.cost_usd),
            Metric::Duration => Some(self.duration_secs),
        }
    }
}

/// What a build is split by: its owner (a person sees one variant across their builds) or the
/// build itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    #[default]
    User,
    Build,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::User => "user",
            Unit::Build => "build",
        }
    }

    pub fn parse(name: &str) -> Option<Unit> {
        match name.trim() {
            "user" => Some(Unit::User),
            "build" => Some(Unit::Build),
            _ => None,
        }
    }
}

/// The variant a build runs under, and of which experiment (an online experiment's id, or an
/// offline suite's `eval:…` name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assignment {
    pub experiment: String,
    pub variant: Variant,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_values_follow_the_outcome() {
        for m in Metric::ALL {
            assert_eq!(Metric::parse(m.as_str()), Some(m));
            assert_eq!(serde_json::to_value(m).ok(), Some(serde_json::Value::String(m.as_str().into())));
        }
        assert_eq!(Metric::parse("First-Try"), Some(Metric::FirstTry));
        assert_eq!(Metric::parse("speed"), None);
        let fixed = Outcome { published: true, fix_attempts: 2, cost_usd: 0.5, duration_secs: 3.0, rating: None };
        assert_eq!(fixed.value(Metric::Published), Some(1.0));
        assert_eq!(fixed.value(Metric::FirstTry), Some(0.0));
        assert_eq!(fixed.value(Metric::ThumbsUp), None);
        assert_eq!(fixed.value(Metric::FixAttempts), Some(2.0));
        let failed_first = Outcome { fix_attempts: 0, rating: Some(false), ..Outcome::default() };
        assert_eq!(failed_first.value(Metric::FirstTry), Some(0.0), "a failure is never a first-try success");
        assert_eq!(failed_first.value(Metric::ThumbsUp), Some(0.0));
        assert!(!Metric::Cost.higher_is_better() && Metric::FirstTry.higher_is_better());
    }
}
