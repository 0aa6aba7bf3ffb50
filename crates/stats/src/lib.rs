//! The few statistics wright's experiments need, written once and tested against values
//! computed with SciPy 1.17 (the fixtures in the tests say which call gave each).
//!
//! - [`mcnemar_exact`]: paired pass/fail outcomes of two variants on the same requests (only
//!   the discordant pairs count), two-sided exact binomial test.
//! - [`fisher_exact`]: two independent arms' successes and failures, two-sided.
//! - [`wilson`]: an interval for one arm's success rate that behaves at 0 and n.
//! - [`bootstrap_mean`] and [`paired_bootstrap_diff`]: percentile intervals for costs and
//!   durations, from a seeded generator so a report is reproducible.
//! - [`sample_ratio`]: the chi-square goodness-of-fit p-value of the units each arm got against
//!   the weights it should have got (a sample-ratio mismatch means the assignment is broken).

mod dist;

pub use dist::{chi_square_sf, ln_choose, normal_quantile};

/// A two-sided interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// Wilson's score interval for `successes` of `n` at `confidence` (0.95). `n == 0` gives the
/// whole range: nothing is known.
pub fn wilson(successes: u64, n: u64, confidence: f64) -> Interval {
    if n == 0 {
        return Interval { low: 0.0, high: 1.0 };
    }
    let z = normal_quantile(0.5 + confidence / 2.0);
    let (k, n) = (successes.min(n) as f64, n as f64);
    let p = k / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At 0 and n the interval reaches the bound exactly (rounding would leave it a hair short,
    // and the estimate itself outside).
    let low = if k == 0.0 { 0.0 } else { (centre - half).max(0.0) };
    let high = if k == n { 1.0 } else { (centre + half).min(1.0) };
    Interval { low, high }
}

/// Two-sided exact McNemar test: `b` pairs where only the first variant succeeded, `c` where
/// only the second did. Under no difference each discordant pair is a fair coin.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    let tail: f64 = (0..=k).map(|i| (ln_choose(n, i) - n as f64 * std::f64::consts::LN_2).exp()).sum();
    (2.0 * tail).min(1.0)
}

/// Two-sided Fisher exact test of the table `[[a, b], [c, d]]` (rows: arms; columns: success,
/// failure): the probability, with the margins fixed, of a table at most as likely as this one.
pub fn fisher_exact(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let (row1, col1, n) = (a + b, a + c, a + b + c + d);
    if n == 0 {
        return 1.0;
    }
    let ln_p = |x: u64| ln_choose(row1, x) + ln_choose(n - row1, col1 - x) - ln_choose(n, col1);
    let observed = ln_p(a);
    let lo = col1.saturating_sub(n - row1);
    let hi = row1.min(col1);
    // A relative tolerance so tables as likely as the observed one are counted despite rounding.
    let p: f64 = (lo..=hi).map(ln_p).filter(|&l| l <= observed + 1e-7).map(f64::exp).sum();
    p.min(1.0)
}

/// Sample-ratio check: the chi-square goodness-of-fit p-value of `observed` units per arm
/// against `weights` (any positive scale). A tiny p-value (< 0.001) means the arms did not get
/// the shares they should have: the comparison cannot be trusted.
pub fn sample_ratio(observed: &[u64], weights: &[f64]) -> f64 {
    let total: u64 = observed.iter().sum();
    let weight: f64 = weights.iter().sum();
    if total == 0 || observed.len() != weights.len() || observed.len() < 2 || weight <= 0.0 {
        return 1.0;
    }
    let statistic: f64 = observed
        .iter()
        .zip(weights)
        .map(|(&o, &w)| {
            let expected = total as f64 * w / weight;
            if expected > 0.0 { (o as f64 - expected).powi(2) / expected } else { 0.0 }
        })
        .sum();
    chi_square_sf(statistic, (observed.len() - 1) as f64)
}

/// Percentile bootstrap interval of the mean of `samples` (`resamples` draws with
/// replacement, seeded: the same inputs give the same interval).
pub fn bootstrap_mean(samples: &[f64], resamples: usize, confidence: f64, seed: u64) -> Option<Interval> {
    if samples.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let n = samples.len();
    let means: Vec<f64> =
        (0..resamples).map(|_| (0..n).map(|_| samples[rng.usize(..n)]).sum::<f64>() / n as f64).collect();
    Some(percentiles(means, confidence))
}

/// Percentile bootstrap interval of the mean paired difference `b[i] - a[i]` (the same request
/// under two variants): pairs are resampled together, so what the requests share cancels out.
pub fn paired_bootstrap_diff(a: &[f64], b: &[f64], resamples: usize, confidence: f64, seed: u64) -> Option<Interval> {
    if a.len() != b.len() {
        return None;
    }
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    bootstrap_mean(&diffs, resamples, confidence, seed)
}

fn percentiles(mut values: Vec<f64>, confidence: f64) -> Interval {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let i = ((values.len() - 1) as f64 * q).round() as usize;
        values[i.min(values.len() - 1)]
    };
    let tail = (1.0 - confidence) / 2.0;
    Interval { low: at(tail), high: at(1.0 - tail) }
}

#[cfg(test)]
mod tests;
