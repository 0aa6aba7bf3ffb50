//! What model calls cost: the price table shipped with wright (`data/prices.toml`), extended
//! by the user's, and the cost of one call's usage.

use std::collections::HashMap;
use wright_provider::Usage;

/// Price of a model per million tokens, in USD.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Deserialize)]
pub struct ModelPrice {
    pub input: f64,
    #[serde(default)]
    pub cached_input: Option<f64>,
    pub output: f64,
}

/// Prices by model id. Models without a price cost 0 in events.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(transparent)]
pub struct Pricing {
    pub models: HashMap<String, ModelPrice>,
}

/// The price table shipped with wright (`data/prices.toml`).
const BUILTIN_PRICES: &str = include_str!("../data/prices.toml");

impl Pricing {
    /// The built-in table.
    pub fn builtin() -> Self {
        toml::from_str(BUILTIN_PRICES).unwrap_or_default()
    }

    /// Parse a price table in the same TOML form as the built-in one.
    pub fn parse(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// Add or replace entries (user tables extend the built-in one).
    pub fn extend(&mut self, other: Pricing) {
        self.models.extend(other.models);
    }

    /// The price for `model`: its own entry, else the longest entry it starts with.
    pub fn price(&self, model: &str) -> Option<&ModelPrice> {
        let id = model.rsplit('/').next().unwrap_or(model);
        self.models.get(model).or_else(|| self.models.get(id)).or_else(|| {
            self.models.iter().filter(|(k, _)| id.starts_with(k.as_str())).max_by_key(|(k, _)| k.len()).map(|(_, p)| p)
        })
    }

    pub fn cost(&self, model: &str, u: Usage) -> f64 {
        let Some(p) = self.price(model) else { return 0.0 };
        let cached = u.cached_tokens.min(u.input_tokens) as f64;
        let fresh = u.input_tokens as f64 - cached;
        (fresh * p.input + cached * p.cached_input.unwrap_or(p.input) + u.output_tokens as f64 * p.output) / 1_000_000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_prices_match_model_families() {
        let p = Pricing::parse(BUILTIN_PRICES).unwrap();
        assert_eq!(p, Pricing::builtin());
        assert!(p.models.len() > 10);
        assert_eq!(p.price("gpt-4o-mini").unwrap().output, 0.60);
        assert_eq!(p.price("claude-sonnet-4-5-20250929").unwrap().input, 3.00);
        assert_eq!(p.price("openai/gpt-4o-2024-08-06").unwrap().input, 2.50);
        assert_eq!(p.price("gpt-4o-mini-2024-07-18").unwrap().input, 0.15, "longest prefix wins");
        assert!(p.price("qwen2.5-coder").is_none());
        let mut custom = Pricing::parse("[\"qwen2.5-coder\"]\ninput = 0.1\noutput = 0.2\n").unwrap();
        custom.extend(Pricing::builtin());
        assert!(custom.price("qwen2.5-coder").is_some() && custom.price("gpt-4o").is_some());
    }

    #[test]
    fn cost_counts_cached_input_at_its_price() {
        let mut p = Pricing::default();
        p.models.insert("m".into(), ModelPrice { input: 2.0, cached_input: Some(0.5), output: 8.0 });
        let c = p.cost("m", Usage { input_tokens: 1_000_000, output_tokens: 500_000, cached_tokens: 400_000 });
        assert!((c - (0.6 * 2.0 + 0.4 * 0.5 + 0.5 * 8.0)).abs() < 1e-9);
        assert_eq!(p.cost("other", Usage { input_tokens: 5, output_tokens: 5, cached_tokens: 0 }), 0.0);
    }
}
