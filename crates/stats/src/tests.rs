//! Known values from SciPy 1.17: `binomtest(min(b, c), b + c, 0.5).pvalue` (McNemar),
//! `binomtest(k, n).proportion_ci(0.95, method='wilson')`, `fisher_exact(table).pvalue` and
//! `chisquare(observed, expected).pvalue`.
#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;

fn close(got: f64, want: f64, rel: f64) {
    let ok = if want == 0.0 { got.abs() < 1e-12 } else { ((got - want) / want).abs() < rel };
    assert!(ok, "got {got}, want {want}");
}

#[test]
fn mcnemar_matches_scipy() {
    close(mcnemar_exact(2, 14), 0.004180908203125, 1e-9);
    close(mcnemar_exact(0, 5), 0.0625, 1e-9);
    close(mcnemar_exact(7, 7), 1.0, 1e-9);
    close(mcnemar_exact(3, 12), 0.03515625, 1e-9);
    close(mcnemar_exact(12, 0), 0.00048828125, 1e-9);
    assert_eq!(mcnemar_exact(0, 0), 1.0);
}

#[test]
fn wilson_matches_scipy() {
    for (k, n, low, high) in [
        (32, 40, 0.6524269365360051, 0.8950001027456229),
        (20, 40, 0.35199526933465386, 0.6480047306653461),
        (0, 10, 0.0, 0.27753279986288926),
        (10, 10, 0.7224672001371109, 1.0),
        (81, 263, 0.2552885198782742, 0.36620957698280004),
    ] {
        let i = wilson(k, n, 0.95);
        close(i.low, low, 1e-8);
        close(i.high, high, 1e-8);
    }
    assert_eq!(wilson(0, 0, 0.95), Interval { low: 0.0, high: 1.0 });
    // Found by the property test: 333 of 333 left the upper bound a rounding short of 1.
    assert_eq!(wilson(333, 333, 0.95).high, 1.0);
    assert_eq!(wilson(0, 333, 0.95).low, 0.0);
}

#[test]
fn fisher_matches_scipy() {
    close(fisher_exact(8, 2, 1, 5), 0.034965034965034975, 1e-9);
    close(fisher_exact(32, 8, 20, 20), 0.009310610721799758, 1e-9);
    close(fisher_exact(0, 10, 10, 0), 1.082508822446903e-05, 1e-9);
    close(fisher_exact(3, 1, 1, 3), 0.48571428571428565, 1e-9);
}

#[test]
fn sample_ratio_matches_scipy() {
    close(sample_ratio(&[5100, 4900], &[0.5, 0.5]), 0.04550026389635857, 1e-8);
    close(sample_ratio(&[5300, 4700], &[1.0, 1.0]), 1.9731752900753933e-09, 1e-6);
    close(sample_ratio(&[3400, 3300, 3300], &[1.0, 1.0, 1.0]), 0.36787944117144245, 1e-8);
    close(sample_ratio(&[821, 179], &[0.8, 0.2]), 0.09687507502627439, 1e-8);
    assert_eq!(sample_ratio(&[], &[]), 1.0);
}

#[test]
fn the_normal_quantile_is_exact_enough_for_intervals() {
    close(normal_quantile(0.975), 1.959963984540054, 2e-9);
    close(normal_quantile(0.995), 2.5758293035489004, 2e-9);
    close(normal_quantile(0.5) + 1.0, 1.0, 1e-15);
    close(normal_quantile(0.001), -3.090232306167813, 2e-9);
}

#[test]
fn bootstrap_intervals_are_reproducible_and_cover_the_truth() {
    let costs: Vec<f64> = (0..40).map(|i| 0.01 + (i % 7) as f64 * 0.002).collect();
    let mean = costs.iter().sum::<f64>() / costs.len() as f64;
    let a = bootstrap_mean(&costs, 2000, 0.95, 7).unwrap();
    assert_eq!(Some(a), bootstrap_mean(&costs, 2000, 0.95, 7), "seeded");
    assert!(a.contains(mean) && a.low < a.high, "{a:?}");
    // B always costs 0.005 more on the same request: the paired interval is that, exactly.
    let b: Vec<f64> = costs.iter().map(|c| c + 0.005).collect();
    let d = paired_bootstrap_diff(&costs, &b, 2000, 0.95, 7).unwrap();
    close(d.low, 0.005, 1e-9);
    close(d.high, 0.005, 1e-9);
    assert!(paired_bootstrap_diff(&costs, &b[1..], 10, 0.95, 7).is_none());
    assert!(bootstrap_mean(&[], 10, 0.95, 1).is_none());
}

proptest! {
    #[test]
    fn p_values_are_probabilities(b in 0u64..400, c in 0u64..400, a in 0u64..60, d in 0u64..60) {
        let p = mcnemar_exact(b, c);
        prop_assert!((0.0..=1.0).contains(&p));
        prop_assert!((mcnemar_exact(c, b) - p).abs() < 1e-12, "symmetric");
        let f = fisher_exact(a, b % 60, c % 60, d);
        prop_assert!((0.0..=1.0).contains(&f));
        let s = sample_ratio(&[a + 1, d + 1], &[1.0, 2.0]);
        prop_assert!((0.0..=1.0).contains(&s));
    }

    #[test]
    fn wilson_holds_its_estimate(k in 0u64..500, extra in 0u64..500) {
        let n = k + extra;
        let i = wilson(k, n, 0.95);
        prop_assert!(0.0 <= i.low && i.low <= i.high && i.high <= 1.0);
        if n > 0 {
            prop_assert!(i.contains(k as f64 / n as f64));
        }
    }
}
