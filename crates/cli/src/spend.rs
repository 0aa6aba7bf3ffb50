//! Cost per user in `wright stats` (this month, per user and day, projected, against the caps),
//! the seeds' metrics beside it (time to publish, note effectiveness, duration per day), and
//! `wright users cap`: the monthly spending caps every server of the store enforces.

use anyhow::{Result, bail};
use std::io::Write;
use wright_store::{SeedMetrics, SpendReport, Store};

use wright_store::seeds::DAYS as SEED_DAYS;
use wright_store::spend::usd;

/// This month's spend and the last [`SEED_DAYS`] days' seeds' metrics.
pub async fn figures(store: &dyn Store) -> Result<(SpendReport, SeedMetrics)> {
    let now = chrono::Utc::now();
    Ok((store.spending(now, None).await?, store.seeds(now, SEED_DAYS).await?))
}

fn cap_words(cap: Option<f64>) -> String {
    cap.map_or_else(|| "no cap".to_string(), usd)
}

fn secs(ms: Option<u64>) -> String {
    ms.map_or_else(|| "–".to_string(), |m| format!("{:.1} s", m as f64 / 1000.0))
}

fn ratio(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.2}"))
}

fn share(ok: u64, all: u64) -> String {
    if all == 0 { "–".to_string() } else { format!("{}/{} ({:.0}%)", ok, all, ok as f64 * 100.0 / all as f64) }
}

/// The spend and seeds' sections of `wright stats`.
pub fn write_text(out: &mut dyn Write, r: &SpendReport, m: &SeedMetrics) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "Spend {}      {} so far · {} projected (day {} of {}) · default cap {} · resets {}",
        r.month.month,
        usd(r.cost_usd),
        usd(r.projected_usd),
        r.month.days_elapsed,
        r.month.days_in_month,
        cap_words(r.default_cap_usd),
        r.month.resets_at.get(..10).unwrap_or(&r.month.resets_at)
    )?;
    if r.users.is_empty() {
        writeln!(out, "  No model calls this month.")?;
    }
    for u in &r.users {
        let name = u.name.clone().unwrap_or_else(|| format!("({})", u.user_id));
        let flag = if u.over_cap() {
            " · OVER CAP"
        } else if u.near_cap() {
            " · past 80% of cap"
        } else {
            ""
        };
        writeln!(
            out,
            "  {name:<20} {:>9} · {:>9} tokens · {:>4} calls · projected {:>9} · cap {}{flag}",
            usd(u.cost_usd),
            u.tokens.input_tokens + u.tokens.output_tokens,
            u.calls,
            usd(u.projected_usd),
            cap_words(u.cap_usd)
        )?;
        let days: Vec<String> = u
            .days
            .iter()
            .map(|d| format!("{} {} ({} tokens)", d.day.get(5..).unwrap_or(&d.day), usd(d.cost_usd), d.tokens))
            .collect();
        writeln!(out, "  {:<20} {}", "", days.join(" · "))?;
    }
    let t = &m.time_to_publish;
    writeln!(out)?;
    writeln!(
        out,
        "{:<15}p50 {} · p95 {} · p99 {} ({} published builds, last {SEED_DAYS} days)",
        "Time to publish",
        secs(t.p50_ms),
        secs(t.p95_ms),
        secs(t.p99_ms),
        t.count
    )?;
    let n = &m.note_effectiveness;
    writeln!(
        out,
        "{:<15}note confidence {} (published {} · failed {}) · published with notes {} · without {}",
        "Note effect.",
        ratio(n.confidence),
        ratio(n.published_confidence),
        ratio(n.failed_confidence),
        share(n.published_with_notes, n.builds_with_notes),
        share(n.published_without_notes, n.builds_without_notes)
    )?;
    if !m.duration_per_day.is_empty() {
        writeln!(out, "Duration per day (published builds)")?;
        for d in &m.duration_per_day {
            writeln!(
                out,
                "  {}  {:>3} finished · {:>3} published · mean {} · p95 {}",
                d.day,
                d.builds,
                d.published,
                secs(d.mean_ms),
                secs(d.p95_ms)
            )?;
        }
    }
    Ok(())
}

/// An amount of dollars, or `none`.
fn parse_cap(text: &str) -> Result<Option<f64>> {
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    match text.trim_start_matches('$').parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
        _ => bail!("a cap is an amount of US dollars (0 or more, e.g. `5` or `12.50`) or `none`, not `{text}`"),
    }
}

/// `wright users cap NAME USD|none`, `wright users cap --default USD|none`, or with no
/// arguments the caps in force.
pub async fn cap(store: &dyn Store, args: &[String], default: bool, out: &mut dyn Write) -> Result<()> {
    match (default, args) {
        (false, []) => {
            let caps = store.spend_caps().await?;
            writeln!(out, "{:<24} {}", "(default)", cap_words(caps.default_usd))?;
            for u in store.users().await? {
                if let Some(c) = caps.users.get(&u.id) {
                    writeln!(out, "{:<24} {}", u.name, usd(*c))?;
                }
            }
        }
        (true, [amount]) => {
            let cap = parse_cap(amount)?;
            store.set_spend_cap(None, cap).await?;
            writeln!(out, "Default monthly spending cap: {}.", cap_words(cap))?;
        }
        (false, [name, amount]) => {
            let cap = parse_cap(amount)?;
            let Some(user) = store.users().await?.into_iter().find(|u| &u.name == name) else {
                bail!("there is no user named `{name}`; see `wright users list`");
            };
            store.set_spend_cap(Some(&user.id), cap).await?;
            let now = store.spend_caps().await?.of(&user.id);
            match cap {
                Some(_) => writeln!(out, "{name}'s monthly spending cap: {}.", cap_words(now))?,
                None => writeln!(out, "{name} has no cap of their own now: the default applies ({}).", cap_words(now))?,
            }
        }
        _ => bail!(
            "usage: `wright users cap NAME USD|none`, `wright users cap --default USD|none`, or `wright users cap`"
        ),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_are_dollars_or_none() {
        assert_eq!(parse_cap("5").unwrap(), Some(5.0));
        assert_eq!(parse_cap("$12.50").unwrap(), Some(12.5));
        assert_eq!(parse_cap("NONE").unwrap(), None);
        assert!(parse_cap("-1").is_err() && parse_cap("lots").is_err() && parse_cap("inf").is_err());
    }
}
