//! Deterministic assignment by hash.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One arm of an experiment: its name, its share of the units (any positive scale), and what
/// it changes in a build. A knob left `None` keeps the configured setting, so a control arm is
/// just a name and a weight.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Its name (a suite's or `wright.toml`'s table key when read from one).
    #[serde(default)]
    pub name: String,
    #[serde(default = "one")]
    pub weight: f64,
    /// The model builds use (same provider).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A prompt version of `wright.toml`'s `[prompt_versions]` (`builtin`: the shipped prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_version: Option<String>,
    /// Tokens of learning notes a prompt may carry (`note_budget`; 0: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note_budget: Option<u32>,
    /// `auto`, `fill`, `reference`, `off` or a starter's id, as `--starter` takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starter_policy: Option<String>,
}

fn one() -> f64 {
    1.0
}

impl Variant {
    /// A variant that changes nothing: a name and a weight.
    pub fn named(name: impl Into<String>, weight: f64) -> Self {
        Self { name: name.into(), weight, ..Self::default() }
    }

    /// What the variant changes, in words (`model gpt-4o, note budget 0`), or `as configured`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = &self.model {
            parts.push(format!("model {m}"));
        }
        if let Some(p) = &self.prompt_version {
            parts.push(format!("prompt {p}"));
        }
        if let Some(n) = self.note_budget {
            parts.push(format!("note budget {n}"));
        }
        if let Some(s) = &self.starter_policy {
            parts.push(format!("starters {s}"));
        }
        if parts.is_empty() { "as configured".into() } else { parts.join(", ") }
    }
}

/// Why a variant list cannot be assigned from.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExperimentError {
    #[error("an experiment needs at least two variants")]
    TooFew,
    #[error("variant `{0}` has a weight that is not a positive number")]
    BadWeight(String),
    #[error("two variants are named `{0}`")]
    Duplicate(String),
}

/// Where in [0, 1) the unit falls for this experiment: the first 8 bytes of
/// `sha256("{experiment}:{salt}:{unit}")` as a fraction.
pub fn bucket(experiment: &str, salt: &str, unit: &str) -> f64 {
    let digest = Sha256::digest(format!("{experiment}:{salt}:{unit}").as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    // 53 bits: every value is exactly representable, and 1.0 is never reached.
    (u64::from_be_bytes(first) >> 11) as f64 / (1u64 << 53) as f64
}

/// The index of the variant `unit` gets in `experiment`: its bucket's place along the
/// cumulative weights.
pub fn assign(experiment: &str, salt: &str, unit: &str, variants: &[Variant]) -> Result<usize, ExperimentError> {
    if variants.len() < 2 {
        return Err(ExperimentError::TooFew);
    }
    for (i, v) in variants.iter().enumerate() {
        if !(v.weight.is_finite() && v.weight > 0.0) {
            return Err(ExperimentError::BadWeight(v.name.clone()));
        }
        if variants[..i].iter().any(|w| w.name == v.name) {
            return Err(ExperimentError::Duplicate(v.name.clone()));
        }
    }
    let total: f64 = variants.iter().map(|v| v.weight).sum();
    let at = bucket(experiment, salt, unit) * total;
    let mut edge = 0.0;
    for (i, v) in variants.iter().enumerate() {
        edge += v.weight;
        if at < edge {
            return Ok(i);
        }
    }
    Ok(variants.len() - 1)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    fn arms(weights: &[f64]) -> Vec<Variant> {
        weights.iter().enumerate().map(|(i, &weight)| Variant::named(format!("v{i}"), weight)).collect()
    }

    #[test]
    fn ten_thousand_units_land_within_two_points_of_the_weights() {
        for weights in [[0.5, 0.5].as_slice(), &[0.2, 0.8], &[1.0, 1.0, 2.0]] {
            let variants = arms(weights);
            let mut counts = vec![0usize; variants.len()];
            for u in 0..10_000 {
                counts[assign("exp-1", "s", &format!("user-{u}"), &variants).unwrap()] += 1;
            }
            let total: f64 = weights.iter().sum();
            for (count, w) in counts.iter().zip(weights) {
                let share = *count as f64 / 10_000.0;
                assert!((share - w / total).abs() < 0.02, "{weights:?}: {counts:?}");
            }
        }
    }

    #[test]
    fn experiments_assign_independently() {
        // Units in arm 0 of one experiment split evenly in another: the hashes do not correlate.
        let variants = arms(&[1.0, 1.0]);
        let (mut both, mut first) = (0, 0);
        for u in 0..10_000 {
            let unit = format!("user-{u}");
            if assign("exp-a", "s", &unit, &variants).unwrap() == 0 {
                first += 1;
                if assign("exp-b", "s", &unit, &variants).unwrap() == 0 {
                    both += 1;
                }
            }
        }
        let share = both as f64 / first as f64;
        assert!((share - 0.5).abs() < 0.03, "{both} of {first}");
        // A new salt reshuffles the same experiment.
        let moved = (0..1000)
            .filter(|u| {
                let unit = format!("user-{u}");
                assign("exp-a", "s", &unit, &variants).unwrap() != assign("exp-a", "s2", &unit, &variants).unwrap()
            })
            .count();
        assert!((400..600).contains(&moved), "{moved}");
    }

    #[test]
    fn bad_variant_lists_are_refused_with_the_reason() {
        assert_eq!(assign("e", "s", "u", &arms(&[1.0])), Err(ExperimentError::TooFew));
        assert_eq!(assign("e", "s", "u", &arms(&[1.0, 0.0])), Err(ExperimentError::BadWeight("v1".into())));
        assert_eq!(assign("e", "s", "u", &arms(&[1.0, f64::NAN])), Err(ExperimentError::BadWeight("v1".into())));
        let mut twice = arms(&[1.0, 1.0]);
        twice[1].name = "v0".into();
        assert_eq!(assign("e", "s", "u", &twice), Err(ExperimentError::Duplicate("v0".into())));
    }

    proptest! {
        #[test]
        fn assignment_is_deterministic_and_in_range(unit in ".{0,40}", salt in "[a-z0-9]{0,8}", n in 2usize..6) {
            let variants = arms(&vec![1.0; n]);
            let a = assign("exp", &salt, &unit, &variants).unwrap();
            prop_assert_eq!(Some(a), assign("exp", &salt, &unit, &variants).ok());
            prop_assert!(a < n);
            let b = bucket("exp", &salt, &unit);
            prop_assert!((0.0..1.0).contains(&b));
        }
    }
}
