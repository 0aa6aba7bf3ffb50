//! What an experiment's arms show so far: one pure function from the arms' outcomes to the
//! figures the API, the CLI and the dashboard all print, so they cannot disagree.

use crate::{Metric, Outcome, Variant};
use serde::Serialize;

/// Confidence of every interval here.
const CONFIDENCE: f64 = 0.95;
/// Bootstrap draws for a mean's interval.
const RESAMPLES: usize = 2000;
/// Below this the sample-ratio check says the arms did not get their shares.
const SRM_ALPHA: f64 = 0.001;

/// A yes/no measure of an arm: `successes` of `n` (for thumbs up, of the rated builds), with
/// Wilson's 95% interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rate {
    pub successes: u64,
    pub n: u64,
    /// `None` with no builds to count.
    pub rate: Option<f64>,
    pub low: f64,
    pub high: f64,
}

/// An amount's mean over an arm's builds, with a 95% bootstrap interval (`None`: no builds).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mean {
    pub mean: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// One arm's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arm {
    pub name: String,
    pub weight: f64,
    /// Finished builds.
    pub n: u64,
    pub published: Rate,
    pub first_try: Rate,
    pub thumbs_up: Rate,
    pub fix_attempts: Mean,
    pub cost: Mean,
    pub duration: Mean,
    /// Fisher's exact p-value of the primary rate against the first arm: only once every arm
    /// has reached the horizon, never for the first arm or an amount.
    pub p_value: Option<f64>,
}

/// Every arm's figures, the sample-ratio check and the verdict in words.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub primary: Metric,
    pub horizon: u32,
    pub arms: Vec<Arm>,
    /// The chi-square p-value of the builds per arm against the weights.
    pub srm_p: f64,
    /// Said when `srm_p` < 0.001: the split is broken and nothing here can be trusted.
    pub srm_warning: Option<String>,
    /// Every arm has reached the horizon: the test is read.
    pub ready: bool,
    pub verdict: String,
}

/// The report of arms `variants` (in order, with their weights) given the finished builds'
/// `outcomes` per variant name, comparing `primary` once every arm has `horizon` builds.
pub fn arms_report(variants: &[Variant], outcomes: &[(String, Vec<Outcome>)], primary: Metric, horizon: u32) -> Report {
    let empty: Vec<Outcome> = vec![];
    let of = |name: &str| outcomes.iter().find(|(n, _)| n == name).map_or(&empty, |(_, o)| o);
    let mut arms: Vec<Arm> = variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let o = of(&v.name);
            Arm {
                name: v.name.clone(),
                weight: v.weight,
                n: o.len() as u64,
                published: rate(o, Metric::Published),
                first_try: rate(o, Metric::FirstTry),
                thumbs_up: rate(o, Metric::ThumbsUp),
                fix_attempts: mean(o, Metric::FixAttempts, i as u64),
                cost: mean(o, Metric::Cost, i as u64),
                duration: mean(o, Metric::Duration, i as u64),
                p_value: None,
            }
        })
        .collect();
    let counts: Vec<u64> = arms.iter().map(|a| a.n).collect();
    let weights: Vec<f64> = arms.iter().map(|a| a.weight).collect();
    let srm_p = wright_stats::sample_ratio(&counts, &weights);
    let srm_warning = (srm_p < SRM_ALPHA).then(|| {
        format!(
            "sample ratio mismatch: the arms got {} builds for weights {} (p = {srm_p:.2e}); \
             the split is broken, so the comparison cannot be trusted",
            join(counts.iter()),
            join(weights.iter())
        )
    });
    let fewest = counts.iter().copied().min().unwrap_or(0);
    let ready = !arms.is_empty() && fewest >= u64::from(horizon);
    let mut verdict = if ready {
        String::new()
    } else {
        format!("{fewest} of {horizon} builds per arm so far; the test is read at {horizon}")
    };
    if ready && primary.is_rate() {
        let first = arms.first().map(|a| pick(a, primary).clone());
        let mut lines = vec![];
        for arm in arms.iter_mut().skip(1) {
            let (Some(c), t) = (&first, pick(arm, primary).clone()) else { continue };
            let p = wright_stats::fisher_exact(t.successes, t.n - t.successes, c.successes, c.n - c.successes);
            arm.p_value = Some(p);
            let (tr, cr) = (t.rate.unwrap_or(0.0), c.rate.unwrap_or(0.0));
            let better = (tr > cr) == primary.higher_is_better();
            let word = if p >= 0.05 || tr == cr {
                "no clear difference".to_string()
            } else if better {
                "better".to_string()
            } else {
                "worse".to_string()
            };
            lines.push(format!(
                "{}: {} {:.0}% vs {:.0}%, p = {p:.3} (Fisher's exact): {word}",
                arm.name,
                primary.label(),
                tr * 100.0,
                cr * 100.0
            ));
        }
        verdict = lines.join("; ");
    } else if ready {
        verdict = format!("{} is an amount: compare the arms' 95% intervals", primary.label());
    }
    if let Some(w) = &srm_warning {
        verdict = format!("{w}. {verdict}");
    }
    Report { primary, horizon, arms, srm_p, srm_warning, ready, verdict }
}

fn pick(arm: &Arm, metric: Metric) -> &Rate {
    match metric {
        Metric::FirstTry => &arm.first_try,
        Metric::ThumbsUp => &arm.thumbs_up,
        _ => &arm.published,
    }
}

fn rate(outcomes: &[Outcome], metric: Metric) -> Rate {
    let values: Vec<f64> = outcomes.iter().filter_map(|o| o.value(metric)).collect();
    let n = values.len() as u64;
    let successes = values.iter().filter(|v| **v >= 0.5).count() as u64;
    let i = wright_stats::wilson(successes, n, CONFIDENCE);
    Rate { successes, n, rate: (n > 0).then(|| successes as f64 / n as f64), low: i.low, high: i.high }
}

fn mean(outcomes: &[Outcome], metric: Metric, seed: u64) -> Mean {
    let values: Vec<f64> = outcomes.iter().filter_map(|o| o.value(metric)).collect();
    let interval = wright_stats::bootstrap_mean(&values, RESAMPLES, CONFIDENCE, seed);
    Mean {
        mean: (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64),
        low: interval.map(|i| i.low),
        high: interval.map(|i| i.high),
    }
}

fn join<T: std::fmt::Display>(items: impl Iterator<Item = T>) -> String {
    items.map(|t| t.to_string()).collect::<Vec<_>>().join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(published: bool, fixes: u32, cost: f64, rating: Option<bool>) -> Outcome {
        Outcome { published, fix_attempts: fixes, cost_usd: cost, duration_secs: 10.0, rating }
    }

    fn arm(published: usize, failed: usize) -> Vec<Outcome> {
        let mut v: Vec<Outcome> = (0..published).map(|_| out(true, 0, 0.5, Some(true))).collect();
        v.extend((0..failed).map(|_| out(false, 3, 1.5, None)));
        v
    }

    fn two() -> Vec<Variant> {
        vec![Variant::named("control", 1.0), Variant::named("fast", 1.0)]
    }

    #[test]
    fn the_test_waits_for_the_horizon_and_says_how_far() {
        let outcomes = vec![("control".to_string(), arm(10, 2)), ("fast".to_string(), arm(12, 0))];
        let r = arms_report(&two(), &outcomes, Metric::Published, 100);
        assert!(!r.ready);
        assert_eq!(r.verdict, "12 of 100 builds per arm so far; the test is read at 100");
        assert!(r.arms.iter().all(|a| a.p_value.is_none()), "not read before the horizon");
        assert_eq!((r.arms[0].published.successes, r.arms[0].published.n), (10, 12));
        assert_eq!(r.arms[0].thumbs_up.n, 10, "thumbs up counts rated builds only");
        assert_eq!(r.arms[0].fix_attempts.mean, Some(0.5));
        let cost = &r.arms[0].cost;
        assert!((cost.mean.unwrap() - (10.0 * 0.5 + 2.0 * 1.5) / 12.0).abs() < 1e-12);
        assert!(cost.low.unwrap() <= cost.mean.unwrap() && cost.mean.unwrap() <= cost.high.unwrap());
    }

    #[test]
    fn wilson_and_fisher_give_the_known_numbers() {
        // Fisher's tea-tasting table [[3, 1], [1, 3]]: two-sided p = 34/70.
        let outcomes = vec![("control".to_string(), arm(1, 3)), ("fast".to_string(), arm(3, 1))];
        let r = arms_report(&two(), &outcomes, Metric::Published, 4);
        assert!(r.ready);
        assert!((r.arms[1].p_value.unwrap() - 34.0 / 70.0).abs() < 1e-9, "{:?}", r.arms[1].p_value);
        assert_eq!(r.arms[0].p_value, None, "the first arm is the baseline");
        assert!(r.verdict.contains("fast: published 75% vs 25%, p = 0.486"), "{}", r.verdict);
        assert!(r.verdict.contains("no clear difference"), "{}", r.verdict);
        // Wilson 95% for 1 of 4: (0.0456, 0.6994).
        let p = &r.arms[0].published;
        assert!((p.low - 0.0456).abs() < 1e-3 && (p.high - 0.6994).abs() < 1e-3, "{p:?}");
        assert!((r.srm_p - 1.0).abs() < 1e-12 && r.srm_warning.is_none());
    }

    #[test]
    fn a_clear_difference_is_named_better_or_worse() {
        let outcomes = vec![("control".to_string(), arm(5, 45)), ("fast".to_string(), arm(45, 5))];
        let r = arms_report(&two(), &outcomes, Metric::Published, 50);
        assert!(r.arms[1].p_value.unwrap() < 1e-10);
        assert!(r.verdict.ends_with("better"), "{}", r.verdict);
        let r = arms_report(&two(), &outcomes, Metric::FixAttempts, 50);
        assert!(r.verdict.contains("amount"), "{}", r.verdict);
    }

    #[test]
    fn a_broken_split_is_flagged_in_words() {
        // 100 against 50 for equal weights: chi-square 16.7, p = 4.5e-5.
        let outcomes = vec![("control".to_string(), arm(100, 0)), ("fast".to_string(), arm(50, 0))];
        let r = arms_report(&two(), &outcomes, Metric::Published, 10);
        assert!((r.srm_p - 4.46e-5).abs() < 1e-6, "{}", r.srm_p);
        let w = r.srm_warning.as_deref().unwrap();
        assert!(w.contains("100:50") && w.contains("cannot be trusted"), "{w}");
        assert!(r.verdict.starts_with("sample ratio mismatch"));
    }

    #[test]
    fn an_arm_without_builds_is_shown_empty() {
        let r = arms_report(&two(), &[], Metric::Published, 10);
        assert_eq!(r.arms.len(), 2);
        assert_eq!((r.arms[1].n, r.arms[1].published.rate, r.arms[1].cost.mean), (0, None, None));
        assert_eq!(r.verdict, "0 of 10 builds per arm so far; the test is read at 10");
    }
}
