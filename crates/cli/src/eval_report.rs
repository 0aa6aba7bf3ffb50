//! `wright eval`'s report: a table for the terminal and a self-contained HTML page (inline
//! CSS and SVG, nothing fetched) with each arm's rates and the paired differences.

use serde::Serialize;
use std::io::Write;
use wright_experiments::compare::{Arm, Mean, amount_text, rate_text};
use wright_experiments::{Comparison, Metric, Outcome, Variant};

/// One build of the eval: which request, repeat and variant, and how it went.
#[derive(Debug, Clone, Serialize)]
pub struct EvalBuild {
    pub request: usize,
    pub repeat: u32,
    pub variant: String,
    pub build: String,
    pub outcome: Outcome,
}

/// The whole report: the suite, every build, and the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub suite: String,
    pub requests: usize,
    pub repeats: u32,
    pub variants: [Variant; 2],
    pub builds: Vec<EvalBuild>,
    pub comparison: Comparison,
    /// Wall time of the whole eval, and the builds' own time within it, in seconds.
    pub wall_secs: f64,
    pub builds_secs: f64,
}

fn mean_text(metric: Metric, m: &Mean) -> String {
    format!("{} ({}–{})", amount_text(metric, m.mean), amount_text(metric, m.low), amount_text(metric, m.high))
}

fn rows(arm: &Arm) -> [String; 5] {
    [
        rate_text(&arm.published),
        rate_text(&arm.first_try),
        mean_text(Metric::FixAttempts, &arm.fix_attempts),
        mean_text(Metric::Cost, &arm.cost_usd),
        mean_text(Metric::Duration, &arm.duration_secs),
    ]
}

const LABELS: [&str; 5] = ["published", "first-try success", "fix attempts", "cost", "duration"];

/// The comparison as an aligned table, then every verdict, the headline first.
pub fn table(r: &EvalReport, out: &mut dyn Write) -> std::io::Result<()> {
    let c = &r.comparison;
    writeln!(
        out,
        "Suite {}: {} request(s) × {} repeat(s) × 2 variants = {} builds, {} pairs ({:.1} s; builds {:.1} s)",
        r.suite,
        r.requests,
        r.repeats,
        r.builds.len(),
        c.pairs,
        r.wall_secs,
        r.builds_secs
    )?;
    for v in &r.variants {
        writeln!(out, "  {}: {}", v.name, v.describe())?;
    }
    writeln!(out, "\nper variant, with 95% intervals:")?;
    let (ra, rb) = (rows(&c.a), rows(&c.b));
    let w = ra.iter().chain(&rb).map(|s| s.chars().count()).max().unwrap_or(0).max(c.a.variant.len());
    writeln!(out, "  {:<18} {:<w$}  {:<w$}", "", c.a.variant, c.b.variant)?;
    for ((label, x), y) in LABELS.iter().zip(&ra).zip(&rb) {
        writeln!(out, "  {label:<18} {x:<w$}  {y:<w$}")?;
    }
    writeln!(out, "\nverdict: {}", c.headline)?;
    for v in c.rates.iter().map(|t| &t.verdict).chain(c.amounts.iter().map(|t| &t.verdict)) {
        if *v != c.headline {
            writeln!(out, "  - {v}")?;
        }
    }
    Ok(())
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Horizontal bars with interval whiskers, one row per arm and rate, on a 0–100% axis.
fn rates_chart(c: &Comparison) -> String {
    let mut svg = String::from(
        r#"<svg role="img" aria-label="rates per variant" viewBox="0 0 560 130" width="560" height="130" xmlns="http://www.w3.org/2000/svg">"#,
    );
    let x = |f: f64| 150.0 + f.clamp(0.0, 1.0) * 340.0;
    let mut y = 20.0;
    for (label, pick) in [("published", 0usize), ("first-try", 1)] {
        for (arm, colour) in [(&c.a, "#5b8def"), (&c.b, "#e07b39")] {
            let rate = if pick == 0 { &arm.published } else { &arm.first_try };
            let share = if rate.n == 0 { 0.0 } else { rate.successes as f64 / rate.n as f64 };
            svg.push_str(&format!(
                r##"<text x="4" y="{ty}" font-size="12">{label} · {name}</text><rect x="150" y="{y}" width="{w:.1}" height="14" fill="{colour}"/><line x1="{lo:.1}" x2="{hi:.1}" y1="{my}" y2="{my}" stroke="#222" stroke-width="2"/><text x="{tx:.1}" y="{ty}" font-size="11">{pct:.0}%</text>"##,
                ty = y + 11.0,
                name = esc(&arm.variant),
                w = x(share) - 150.0,
                lo = x(rate.low),
                hi = x(rate.high),
                my = y + 7.0,
                tx = x(rate.high) + 4.0,
                pct = share * 100.0,
            ));
            y += 22.0;
        }
        y += 10.0;
    }
    svg.push_str(r##"<line x1="150" x2="150" y1="10" y2="125" stroke="#999"/></svg>"##);
    svg
}

/// The paired differences (B − A) with their intervals, each on its own scale around 0.
fn diffs_chart(c: &Comparison) -> String {
    let mut svg = String::from(
        r#"<svg role="img" aria-label="paired differences" viewBox="0 0 520 110" width="520" height="110" xmlns="http://www.w3.org/2000/svg">"#,
    );
    for (i, t) in c.amounts.iter().enumerate() {
        let span = t.low.abs().max(t.high.abs()).max(t.mean_diff.abs()).max(1e-9);
        let x = |v: f64| 320.0 + v / span * 160.0;
        let y = 20.0 + i as f64 * 30.0;
        svg.push_str(&format!(
            r##"<text x="4" y="{ty}" font-size="12">{label}: {mean}</text><line x1="320" x2="320" y1="{a}" y2="{b}" stroke="#999"/><line x1="{lo:.1}" x2="{hi:.1}" y1="{y}" y2="{y}" stroke="#222" stroke-width="2"/><circle cx="{m:.1}" cy="{y}" r="4" fill="{colour}"/>"##,
            ty = y + 4.0,
            label = t.metric.label(),
            mean = esc(&amount_text(t.metric, t.mean_diff)),
            a = y - 10.0,
            b = y + 10.0,
            lo = x(t.low),
            hi = x(t.high),
            m = x(t.mean_diff),
            colour = match t.b_better {
                Some(true) => "#2e9d57",
                Some(false) => "#c8402f",
                None => "#777",
            },
        ));
    }
    svg.push_str("</svg>");
    svg
}

/// The report as one HTML page that needs nothing else.
pub fn html(r: &EvalReport) -> String {
    let c = &r.comparison;
    let mut table = String::from("<table><tr><th></th>");
    table.push_str(&format!("<th>{}</th><th>{}</th></tr>", esc(&c.a.variant), esc(&c.b.variant)));
    for ((label, x), y) in LABELS.iter().zip(rows(&c.a)).zip(rows(&c.b)) {
        table.push_str(&format!("<tr><td>{label}</td><td>{}</td><td>{}</td></tr>", esc(&x), esc(&y)));
    }
    table.push_str("</table>");
    let verdicts: String = c
        .rates
        .iter()
        .map(|t| &t.verdict)
        .chain(c.amounts.iter().map(|t| &t.verdict))
        .map(|v| format!("<li>{}</li>", esc(v)))
        .collect();
    let variants: String =
        r.variants.iter().map(|v| format!("<li><b>{}</b>: {}</li>", esc(&v.name), esc(&v.describe()))).collect();
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>wright eval: {suite}</title>
<style>body{{font:15px/1.5 system-ui,sans-serif;max-width:760px;margin:2em auto;padding:0 1em;color:#222}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 10px;text-align:left}}
.headline{{font-size:1.15em;padding:.6em;background:#f4f4f4;border-left:4px solid #5b8def}}</style></head>
<body><h1>wright eval: {suite}</h1>
<p>{requests} request(s) × {repeats} repeat(s) × 2 variants: {builds} builds in {pairs} pairs ({wall:.1} s).</p>
<ul>{variants}</ul>
<p class="headline">{headline}</p>
<h2>Per variant (95% intervals)</h2>{table}
<h2>Rates</h2>{rates}
<h2>Paired differences ({b} − {a}), 95% intervals</h2>{diffs}
<h2>Every verdict</h2><ul>{verdicts}</ul>
</body></html>
"#,
        suite = esc(&r.suite),
        requests = r.requests,
        repeats = r.repeats,
        builds = r.builds.len(),
        pairs = c.pairs,
        wall = r.wall_secs,
        headline = esc(&c.headline),
        rates = rates_chart(c),
        diffs = diffs_chart(c),
        a = esc(&c.a.variant),
        b = esc(&c.b.variant),
    )
}
