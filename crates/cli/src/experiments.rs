//! `wright experiments`: online experiments of `wright serve` (docs/experiments.md), acting on
//! the local store as `wright classes` does: create a draft, start it, watch its arms, stop it.

use anyhow::{Context, Result, anyhow};
use clap::Subcommand;
use std::io::Write;
use wright_engine::EngineError;
use wright_experiments::{Metric, Report, Unit, Variant, arms_report};
use wright_store::{Experiment, NewExperiment, Store};

#[derive(Subcommand)]
pub enum ExperimentsCommand {
    /// Make a draft experiment; it changes nothing until started.
    Create {
        #[arg(long)]
        name: String,
        /// An arm, as `name` or `name:weight`; two or more (with `--file`'s).
        #[arg(long = "variant", value_name = "NAME[:WEIGHT]")]
        variants: Vec<String>,
        /// A TOML file of `[[variant]]` tables (name, weight, model, prompt_version,
        /// note_budget, starter_policy).
        #[arg(long)]
        file: Option<std::path::PathBuf>,
        /// `user` (a person keeps one variant) or `build`.
        #[arg(long, default_value = "user")]
        unit: String,
        /// The metric the test is read on.
        #[arg(long, default_value = "published")]
        primary: String,
        /// A metric watched so the winner does not make it worse; repeatable.
        #[arg(long = "guardrail")]
        guardrails: Vec<String>,
        /// Builds per arm at which the test is read.
        #[arg(long, default_value_t = 100)]
        horizon: u32,
    },
    /// Start a draft: new builds that name no model join it.
    Start { id: String },
    /// Stop the running experiment, recording the winner if one is named.
    Stop {
        id: String,
        #[arg(long)]
        promote: Option<String>,
    },
    /// An experiment's arms so far: rates with 95% intervals, means, the split's check and
    /// the verdict.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Every experiment, newest first.
    List,
}

#[derive(serde::Deserialize)]
struct VariantFile {
    #[serde(default)]
    variant: Vec<Variant>,
}

fn metric(name: &str) -> Result<Metric> {
    Metric::parse(name).ok_or_else(|| {
        let all: Vec<&str> = Metric::ALL.iter().map(|m| m.as_str()).collect();
        anyhow!("unknown metric `{name}`; use one of {}", all.join(", "))
    })
}

/// `name` or `name:weight` as a variant.
fn variant(arg: &str) -> Result<Variant> {
    match arg.rsplit_once(':') {
        Some((name, w)) => {
            let weight: f64 = w.parse().with_context(|| format!("`{arg}`: the weight after `:` is a number"))?;
            Ok(Variant::named(name, weight))
        }
        None => Ok(Variant::named(arg, 1.0)),
    }
}

/// `check` refuses variants this machine cannot build with (`wright.toml`'s prompt versions,
/// the starters): it is asked when an experiment is created and when it starts.
pub async fn experiments(
    cmd: ExperimentsCommand,
    store: &dyn Store,
    check: &dyn Fn(&[Variant]) -> Result<(), EngineError>,
    out: &mut dyn Write,
) -> Result<()> {
    match cmd {
        ExperimentsCommand::Create { name, variants, file, unit, primary, guardrails, horizon } => {
            let mut all = vec![];
            if let Some(path) = file {
                let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
                let parsed: VariantFile =
                    toml::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
                all.extend(parsed.variant);
            }
            for v in &variants {
                all.push(variant(v)?);
            }
            check(&all)?;
            let new = NewExperiment {
                name,
                unit: Unit::parse(&unit).ok_or_else(|| anyhow!("--unit is `user` or `build`"))?,
                variants: all,
                primary: metric(&primary)?,
                guardrails: guardrails.iter().map(|g| metric(g)).collect::<Result<_>>()?,
                horizon,
            };
            let e = store.create_experiment(&new).await?;
            writeln!(
                out,
                "Created experiment {} ({}), a draft; start it with `wright experiments start {}`.",
                e.name, e.id, e.name
            )?;
        }
        ExperimentsCommand::Start { id } => {
            check(&store.experiment(&id).await?.variants)?;
            let e = store.start_experiment(&id).await?;
            writeln!(out, "Started experiment {} ({}): new builds that name no model join it.", e.name, e.id)?;
        }
        ExperimentsCommand::Stop { id, promote } => {
            let e = store.stop_experiment(&id, promote.as_deref()).await?;
            match &e.promoted {
                Some(p) => writeln!(
                    out,
                    "Stopped experiment {}; `{p}` is the winner and every new build's default until another is promoted.",
                    e.name
                )?,
                None => writeln!(out, "Stopped experiment {}.", e.name)?,
            }
        }
        ExperimentsCommand::Show { id, json } => {
            let e = store.experiment(&id).await?;
            let outcomes = store.arm_outcomes(&e.id).await?;
            let report = arms_report(&e.variants, &outcomes, e.primary, e.horizon);
            if json {
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({"experiment": e, "report": report}))?
                )?;
            } else {
                write!(out, "{}", render(&e, &report))?;
            }
        }
        ExperimentsCommand::List => {
            let all = store.experiments().await?;
            if all.is_empty() {
                writeln!(out, "No experiments; make one with `wright experiments create`.")?;
            }
            for e in all {
                let names: Vec<String> = e.variants.iter().map(|v| format!("{}:{}", v.name, v.weight)).collect();
                writeln!(out, "{:<14} {:<24} {:<8} {}", e.id, e.name, e.state.as_str(), names.join(" "))?;
            }
        }
    }
    Ok(())
}

fn pct(r: &wright_experiments::Rate) -> String {
    match r.rate {
        Some(x) => format!("{:>3.0}% [{:.0}–{:.0}%]", x * 100.0, r.low * 100.0, r.high * 100.0),
        None => "–".into(),
    }
}

fn amount(m: &wright_experiments::Mean, digits: usize) -> String {
    match (m.mean, m.low, m.high) {
        (Some(x), Some(l), Some(h)) => format!("{x:.digits$} [{l:.digits$}–{h:.digits$}]"),
        _ => "–".into(),
    }
}

/// The report in words, the same figures as the admin API's.
pub fn render(e: &Experiment, r: &Report) -> String {
    let mut s = format!(
        "Experiment {} ({}), {}; unit {}; primary {}; read at {} builds per arm.\n",
        e.name,
        e.id,
        e.state.as_str(),
        e.unit.as_str(),
        r.primary.label(),
        r.horizon
    );
    if let Some(p) = &e.promoted {
        s += &format!("Promoted: {p} (new builds get it by default).\n");
    }
    for a in &r.arms {
        let v = e.variants.iter().find(|v| v.name == a.name).map(Variant::describe).unwrap_or_default();
        s += &format!(
            "\n{} (weight {}){}\n",
            a.name,
            a.weight,
            if v.is_empty() { String::new() } else { format!(": {v}") }
        );
        s += &format!("  builds        {}\n", a.n);
        s += &format!("  published     {}\n", pct(&a.published));
        s += &format!("  first try     {}\n", pct(&a.first_try));
        s += &format!("  thumbs up     {} of {} rated\n", pct(&a.thumbs_up), a.thumbs_up.n);
        s += &format!("  fix attempts  {}\n", amount(&a.fix_attempts, 2));
        s += &format!("  cost (USD)    {}\n", amount(&a.cost, 4));
        s += &format!("  duration (s)  {}\n", amount(&a.duration, 1));
        if let Some(p) = a.p_value {
            s += &format!("  vs {}: p = {p:.3}\n", r.arms[0].name);
        }
    }
    s += &format!(
        "\nSample ratio check: p = {:.3}{}\n",
        r.srm_p,
        if r.srm_warning.is_some() { " (MISMATCH)" } else { "" }
    );
    s += &format!("Verdict: {}\n", r.verdict);
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn variants_are_read_with_or_without_a_weight() {
        assert_eq!(variant("fast:3").unwrap(), Variant::named("fast", 3.0));
        assert_eq!(variant("control").unwrap(), Variant::named("control", 1.0));
        assert!(variant("x:heavy").unwrap_err().to_string().contains("number"));
    }
}
