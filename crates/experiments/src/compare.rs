//! Two variants compared on paired builds (the same request and repeat under each): what
//! `wright eval` reports. Yes/no metrics get Wilson intervals per arm and an exact McNemar
//! test on the discordant pairs; amounts get seeded bootstrap intervals per arm and for the
//! paired difference. Every verdict is a sentence with its numbers.

use crate::{Metric, Outcome};
use serde::Serialize;
use wright_stats::{Interval, bootstrap_mean, mcnemar_exact, paired_bootstrap_diff, wilson};

/// Confidence of every interval.
pub const CONFIDENCE: f64 = 0.95;
/// Below this a test's difference is called shown.
pub const ALPHA: f64 = 0.05;
const RESAMPLES: usize = 10_000;

/// One arm's rate: successes of n, with its interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rate {
    pub successes: u64,
    pub n: u64,
    pub low: f64,
    pub high: f64,
}

/// One arm's mean amount, with its bootstrap interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mean {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

/// One variant's builds, summed up.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arm {
    pub variant: String,
    pub builds: u64,
    pub published: Rate,
    pub first_try: Rate,
    pub fix_attempts: Mean,
    pub cost_usd: Mean,
    pub duration_secs: Mean,
}

/// A yes/no metric compared on the pairs: where only A or only B succeeded, and McNemar's p.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateTest {
    pub metric: Metric,
    pub a_only: u64,
    pub b_only: u64,
    pub p_value: f64,
    /// `Some(true)`: B is better; `Some(false)`: worse; `None`: no difference shown.
    pub b_better: Option<bool>,
    pub verdict: String,
}

/// An amount compared on the pairs: the mean of B − A with its paired bootstrap interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AmountTest {
    pub metric: Metric,
    pub mean_diff: f64,
    pub low: f64,
    pub high: f64,
    pub b_better: Option<bool>,
    pub verdict: String,
}

/// Everything `wright eval` says about A against B.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub a: Arm,
    pub b: Arm,
    pub pairs: u64,
    pub rates: Vec<RateTest>,
    pub amounts: Vec<AmountTest>,
    /// The primary metric's verdict.
    pub primary: Metric,
    pub headline: String,
}

fn rate(successes: u64, n: u64) -> Rate {
    let Interval { low, high } = wilson(successes, n, CONFIDENCE);
    Rate { successes, n, low, high }
}

fn mean(values: &[f64], seed: u64) -> Mean {
    let m = if values.is_empty() { 0.0 } else { values.iter().sum::<f64>() / values.len() as f64 };
    let i = bootstrap_mean(values, RESAMPLES, CONFIDENCE, seed).unwrap_or(Interval { low: m, high: m });
    Mean { mean: m, low: i.low, high: i.high }
}

fn values(outcomes: &[&Outcome], metric: Metric) -> Vec<f64> {
    outcomes.iter().map(|o| o.value(metric).unwrap_or(0.0)).collect()
}

fn arm(variant: &str, outcomes: &[&Outcome], seed: u64) -> Arm {
    let n = outcomes.len() as u64;
    let count = |m: Metric| values(outcomes, m).iter().filter(|v| **v > 0.5).count() as u64;
    Arm {
        variant: variant.to_string(),
        builds: n,
        published: rate(count(Metric::Published), n),
        first_try: rate(count(Metric::FirstTry), n),
        fix_attempts: mean(&values(outcomes, Metric::FixAttempts), seed),
        cost_usd: mean(&values(outcomes, Metric::Cost), seed ^ 1),
        duration_secs: mean(&values(outcomes, Metric::Duration), seed ^ 2),
    }
}

/// `p = 0.009`, or `p < 0.001`.
pub fn p_text(p: f64) -> String {
    if p < 0.001 { "p < 0.001".into() } else { format!("p = {p:.3}") }
}

/// `20/40 (36%–64%)`.
pub fn rate_text(r: &Rate) -> String {
    format!("{}/{} ({:.0}%–{:.0}%)", r.successes, r.n, r.low * 100.0, r.high * 100.0)
}

/// An amount of `metric` in its unit: `$0.0042`, `3.1 s`, `1.25`.
pub fn amount_text(metric: Metric, x: f64) -> String {
    match metric {
        Metric::Cost => format!("${x:.4}"),
        Metric::Duration => format!("{x:.1} s"),
        _ => format!("{x:.2}"),
    }
}

fn signed(metric: Metric, x: f64) -> String {
    let sign = if x >= 0.0 { "+" } else { "−" };
    format!("{sign}{}", amount_text(metric, x.abs()))
}

/// Compare variant `a` with variant `b` on `pairs` (A's and B's outcome for the same request
/// and repeat). `primary` is the metric of the headline; `seed` makes the intervals
/// reproducible.
pub fn compare(a: &str, b: &str, pairs: &[(Outcome, Outcome)], primary: Metric, seed: u64) -> Comparison {
    let left: Vec<&Outcome> = pairs.iter().map(|(x, _)| x).collect();
    let right: Vec<&Outcome> = pairs.iter().map(|(_, y)| y).collect();
    let (arm_a, arm_b) = (arm(a, &left, seed), arm(b, &right, seed.wrapping_add(7)));
    let mut rates = Vec::new();
    for (metric, ra, rb) in [
        (Metric::Published, &arm_a.published, &arm_b.published),
        (Metric::FirstTry, &arm_a.first_try, &arm_b.first_try),
    ] {
        let yes = |o: &Outcome| o.value(metric).unwrap_or(0.0) > 0.5;
        let a_only = pairs.iter().filter(|(x, y)| yes(x) && !yes(y)).count() as u64;
        let b_only = pairs.iter().filter(|(x, y)| !yes(x) && yes(y)).count() as u64;
        let p_value = mcnemar_exact(b_only, a_only);
        let b_better = (p_value < ALPHA).then_some(b_only > a_only);
        let numbers = format!("{} vs {}, {}", rate_text(rb), rate_text(ra), p_text(p_value));
        let verdict = match b_better {
            Some(true) => format!("{b} is better than {a} on {}: {numbers}", metric.label()),
            Some(false) => format!("{b} is worse than {a} on {}: {numbers}", metric.label()),
            None => format!("No difference shown between {b} and {a} on {}: {numbers}", metric.label()),
        };
        rates.push(RateTest { metric, a_only, b_only, p_value, b_better, verdict });
    }
    let mut amounts = Vec::new();
    for (i, metric) in [Metric::FixAttempts, Metric::Cost, Metric::Duration].into_iter().enumerate() {
        let (xs, ys) = (values(&left, metric), values(&right, metric));
        let diffs: Vec<f64> = xs.iter().zip(&ys).map(|(x, y)| y - x).collect();
        let mean_diff = if diffs.is_empty() { 0.0 } else { diffs.iter().sum::<f64>() / diffs.len() as f64 };
        let ci = paired_bootstrap_diff(&xs, &ys, RESAMPLES, CONFIDENCE, seed.wrapping_add(100 + i as u64))
            .unwrap_or(Interval { low: mean_diff, high: mean_diff });
        // Less is better for every amount: B is better when its whole interval is below 0.
        let b_better = if ci.high < 0.0 {
            Some(true)
        } else if ci.low > 0.0 {
            Some(false)
        } else {
            None
        };
        let numbers = format!(
            "{} per build (95% interval {} to {})",
            signed(metric, mean_diff),
            signed(metric, ci.low),
            signed(metric, ci.high)
        );
        let verdict = match b_better {
            Some(true) => format!("{b} is better than {a} on {}: {numbers}", metric.label()),
            Some(false) => format!("{b} is worse than {a} on {}: {numbers}", metric.label()),
            None => format!("No difference shown between {b} and {a} on {}: {numbers}", metric.label()),
        };
        amounts.push(AmountTest { metric, mean_diff, low: ci.low, high: ci.high, b_better, verdict });
    }
    let headline = rates
        .iter()
        .find(|t| t.metric == primary)
        .map(|t| t.verdict.clone())
        .or_else(|| amounts.iter().find(|t| t.metric == primary).map(|t| t.verdict.clone()))
        .unwrap_or_else(|| format!("{} is not measured offline (nobody rates eval builds)", primary.label()));
    Comparison { a: arm_a, b: arm_b, pairs: pairs.len() as u64, rates, amounts, primary, headline }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built(published: bool, fixes: u32, cost: f64, secs: f64) -> Outcome {
        Outcome { published, fix_attempts: fixes, cost_usd: cost, duration_secs: secs, rating: None }
    }

    #[test]
    fn a_variant_that_always_needs_a_fix_is_worse_on_first_try_with_its_interval() {
        let pairs: Vec<(Outcome, Outcome)> =
            (0..12).map(|i| (built(true, 0, 0.001, 2.0), built(true, 1, 0.002, 3.0 + f64::from(i) * 0.1))).collect();
        let c = compare("a", "b", &pairs, Metric::FirstTry, 7);
        let first = &c.rates[1];
        assert_eq!((first.a_only, first.b_only), (12, 0));
        // Two-sided exact binomial of 0 of 12 at one half: 2 · 0.5^12.
        assert!((first.p_value - 2.0 * 0.5f64.powi(12)).abs() < 1e-12);
        assert_eq!(first.b_better, Some(false));
        assert_eq!(c.headline, first.verdict);
        assert!(c.headline.starts_with("b is worse than a on first-try success: 0/12 (0%–24%) vs 12/12 (76%–100%)"));
        assert!(c.headline.ends_with("p < 0.001"), "{}", c.headline);
        // Published does not differ: both always publish.
        assert_eq!(c.rates[0].b_better, None);
        assert!((c.rates[0].p_value - 1.0).abs() < 1e-12);
        // One more fix attempt, every time: the interval is exactly +1.
        let fixes = &c.amounts[0];
        assert_eq!((fixes.mean_diff, fixes.low, fixes.high), (1.0, 1.0, 1.0));
        assert_eq!(fixes.b_better, Some(false));
        assert!(c.amounts[2].low > 0.9 && c.amounts[2].verdict.contains("worse"), "{:?}", c.amounts[2]);
        assert_eq!(c.a.first_try.successes, 12);
        assert!((c.b.duration_secs.mean - 3.55).abs() < 1e-9);
    }

    #[test]
    fn discordant_pairs_alone_decide_and_the_text_says_so() {
        // 32 vs 20 of 40 with 14 discordant pairs one way and 2 the other (the shape).
        let mut pairs = Vec::new();
        pairs.extend((0..18).map(|_| (built(true, 0, 0.0, 1.0), built(true, 0, 0.0, 1.0))));
        pairs.extend((0..2).map(|_| (built(true, 0, 0.0, 1.0), built(true, 1, 0.0, 1.0))));
        pairs.extend((0..14).map(|_| (built(true, 1, 0.0, 1.0), built(true, 0, 0.0, 1.0))));
        pairs.extend((0..6).map(|_| (built(true, 1, 0.0, 1.0), built(true, 1, 0.0, 1.0))));
        let c = compare("a", "b", &pairs, Metric::FirstTry, 1);
        let t = &c.rates[1];
        assert_eq!((c.b.first_try.successes, c.a.first_try.successes), (32, 20));
        assert_eq!((t.b_only, t.a_only), (14, 2));
        // scipy.stats.binomtest(2, 16).pvalue
        assert!((t.p_value - 0.004180908203125).abs() < 1e-12, "{}", t.p_value);
        assert!(c.headline.starts_with("b is better than a on first-try success: 32/40"), "{}", c.headline);
        assert!(c.headline.ends_with("p = 0.004"), "{}", c.headline);
        // Equal costs: no difference, an interval of zero width.
        assert_eq!(c.amounts[1].b_better, None);
    }

    #[test]
    fn no_pairs_give_an_honest_empty_comparison() {
        let c = compare("a", "b", &[], Metric::Published, 1);
        assert_eq!(c.pairs, 0);
        assert_eq!(c.a.published.n, 0);
        assert!(c.headline.starts_with("No difference shown"), "{}", c.headline);
        let rated = compare("a", "b", &[], Metric::ThumbsUp, 1);
        assert!(rated.headline.contains("not measured offline"));
    }
}
