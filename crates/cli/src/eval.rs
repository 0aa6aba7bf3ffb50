//! `wright eval SUITE --variants a,b --repeats k` (docs/eval.md): the same requests built
//! under two variants, paired, in the sandbox like any build; then what differs, with exact
//! tests and intervals, as a table, JSON or a self-contained HTML report.

use crate::args::{DbArgs, Exit, ModelArgs, stop_on_ctrl_c, usage};
use crate::eval_report::{EvalBuild, EvalReport};
use crate::sandbox::{BrowserArgs, SandboxArgs, where_and_how};
use anyhow::anyhow;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use wright_engine::config::FileConfig;
use wright_engine::{Engine, Job, Overrides};
use wright_experiments::{Assignment, Metric, Outcome, Suite, Variant, compare};

#[derive(clap::Args)]
pub struct EvalArgs {
    /// The suite: a TOML file (`[[request]]`, `[variant.NAME]`) or JSONL (one request a line).
    suite: PathBuf,
    /// The two variants to compare, `A,B`: from the suite, else `[variants]` in wright.toml.
    /// `configured` is the settings as they are.
    #[arg(long, value_name = "A,B", value_delimiter = ',', required = true)]
    variants: Vec<String>,
    /// How many times each request is built under each variant.
    #[arg(long, value_name = "K", default_value_t = 1)]
    repeats: u32,
    /// The metric of the headline: published, first_try, fix_attempts, cost or duration.
    #[arg(long, value_name = "METRIC", default_value = "first_try")]
    primary: String,
    /// Seed of the bootstrap intervals (the same builds give the same report).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the comparison as one JSON document instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write a self-contained HTML report with charts to this file.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Fix attempts per build [default: 3].
    #[arg(long, value_name = "N")]
    max_fix_attempts: Option<u32>,
    /// Time limit for each build, in seconds [default: 600].
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    #[command(flatten)]
    llm: ModelArgs,
    #[command(flatten)]
    sandbox: SandboxArgs,
    #[command(flatten)]
    browser: BrowserArgs,
    #[command(flatten)]
    db: DbArgs,
}

/// The variant `name`: the suite's, else wright.toml's; `configured` changes nothing.
fn variant(name: &str, suite: &Suite, file: &FileConfig) -> Result<Variant, Exit> {
    if let Some(v) = suite.variants.get(name) {
        return Ok(v.clone());
    }
    if let Some(v) = file.variants.get(name) {
        return Ok(Variant { name: name.to_string(), ..v.clone() });
    }
    if name == "configured" {
        return Ok(Variant::named(name, 1.0));
    }
    let mut known: Vec<&str> = suite.variants.keys().chain(file.variants.keys()).map(String::as_str).collect();
    known.push("configured");
    Err(usage(anyhow!("no variant `{name}` in the suite or wright.toml's [variants]; known: {}", known.join(", "))))
}

pub async fn eval(args: EvalArgs, config_path: Option<PathBuf>) -> Result<u8, Exit> {
    let (file, _) = FileConfig::load(config_path.as_deref())?;
    let text =
        std::fs::read_to_string(&args.suite).map_err(|e| usage(anyhow!("suite {}: {e}", args.suite.display())))?;
    let suite = wright_experiments::suite::parse(&args.suite.to_string_lossy(), &text)
        .map_err(|e| usage(anyhow!("suite {}: {e}", args.suite.display())))?;
    let [a, b] = match args.variants.as_slice() {
        [a, b] if a != b => [variant(a, &suite, &file)?, variant(b, &suite, &file)?],
        _ => return Err(usage(anyhow!("--variants takes two different names, e.g. --variants lean,big"))),
    };
    let starters = wright_engine::starter_library(&file.data_dir(args.db.data_dir.clone()))?;
    wright_engine::variants::check_variants(&file.prompt_versions, &starters, [&a, &b])?;
    let primary = Metric::parse(&args.primary).ok_or_else(|| {
        usage(anyhow!("unknown metric `{}`; use published, first_try, fix_attempts, cost or duration", args.primary))
    })?;
    if args.repeats == 0 {
        return Err(usage(anyhow!("--repeats is at least 1")));
    }
    // Templates and languages are checked before anything is built.
    for r in &suite.requests {
        r.template.as_deref().map(wright_engine::parse_template).transpose()?;
        r.lang.as_deref().map(wright_engine::parse_lang).transpose()?;
    }
    let overrides = Overrides {
        max_fix_attempts: args.max_fix_attempts,
        timeout: args.timeout,
        browser_check: args.browser.browser_check.clone(),
        chromium: args.browser.chromium.clone(),
        ..where_and_how(&args.llm, &args.sandbox, &args.db)
    };
    let engine = Engine::new(file, overrides).await?;
    let cancel = stop_on_ctrl_c();
    let total = suite.requests.len() as u64 * u64::from(args.repeats) * 2;
    let bar = progress(total, args.json);
    let started = std::time::Instant::now();
    let mut builds = Vec::new();
    let mut pairs = Vec::new();
    for repeat in 1..=args.repeats {
        for (i, r) in suite.requests.iter().enumerate() {
            // Alternate which variant goes first, so what the first build warms (caches, the
            // model server) favours neither.
            let order = if (i + repeat as usize).is_multiple_of(2) { [&a, &b] } else { [&b, &a] };
            let mut got: [Option<Outcome>; 2] = [None, None];
            for v in order {
                if cancel.is_cancelled() {
                    return Err(Exit(130, anyhow!("stopped; {} of {total} builds were made", builds.len())));
                }
                let label =
                    format!("request {} of {}, repeat {repeat}, variant {}", i + 1, suite.requests.len(), v.name);
                bar.set_message(label.clone());
                let (id, outcome) = build_one(&engine, &suite, r, v, cancel.clone()).await?;
                bar.inc(1);
                let said = if outcome.published {
                    format!("published after {} fix attempt(s)", outcome.fix_attempts)
                } else {
                    "failed".to_string()
                };
                let line = format!("  {label}: {said} ({:.1} s, build {id})", outcome.duration_secs);
                if !bar.is_hidden() {
                    bar.println(line);
                } else if !args.json {
                    eprintln!("{line}");
                }
                got[usize::from(v.name == b.name)] = Some(outcome.clone());
                builds.push(EvalBuild { request: i + 1, repeat, variant: v.name.clone(), build: id, outcome });
            }
            if let [Some(x), Some(y)] = got {
                pairs.push((x, y));
            }
        }
    }
    bar.finish_and_clear();
    let comparison = compare(&a.name, &b.name, &pairs, primary, args.seed);
    let builds_secs = builds.iter().map(|b| b.outcome.duration_secs).sum();
    let report = EvalReport {
        suite: suite.name.clone(),
        requests: suite.requests.len(),
        repeats: args.repeats,
        variants: [a, b],
        builds,
        comparison,
        wall_secs: started.elapsed().as_secs_f64(),
        builds_secs,
    };
    let mut out = std::io::stdout();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(|e| Exit(1, e.into()))?;
        writeln!(out).map_err(|e| Exit(1, e.into()))?;
    } else {
        crate::eval_report::table(&report, &mut out).map_err(|e| Exit(1, e.into()))?;
    }
    if let Some(path) = &args.html {
        std::fs::write(path, crate::eval_report::html(&report))
            .map_err(|e| Exit(1, anyhow!("writing {}: {e}", path.display())))?;
        if !args.json {
            writeln!(out, "\nHTML report: {}", path.display()).map_err(|e| Exit(1, e.into()))?;
        }
    }
    Ok(0)
}

/// Build `r` under `v` through the engine, like `wright run`; its id and outcome.
async fn build_one(
    engine: &Engine,
    suite: &Suite,
    r: &wright_experiments::SuiteRequest,
    v: &Variant,
    cancel: tokio_util::sync::CancellationToken,
) -> Result<(String, Outcome), Exit> {
    let job = Job {
        id: wright_engine::new_build_id().into(),
        prompt: r.prompt.clone(),
        template: r.template.as_deref().map(wright_engine::parse_template).transpose()?,
        lang: r.lang.as_deref().map(wright_engine::parse_lang).transpose()?,
        checks: r.checks.clone(),
        continue_from: None,
        workspace: None,
        model: None,
        holder: None,
        allow_hosts: None,
        leash: None,
        hidden_removed: 0,
        variant: Some(Assignment { experiment: format!("eval:{}", suite.name), variant: v.clone() }),
    };
    let prepared = engine.prepare(job).await?;
    let id = prepared.id.clone();
    let finished = prepared.run(vec![], cancel).await;
    let report = finished.report;
    let outcome = Outcome {
        published: report.success(),
        fix_attempts: report.fix_attempts,
        cost_usd: report.cost_usd,
        duration_secs: report.duration.as_secs_f64(),
        rating: None,
    };
    Ok((id, outcome))
}

/// A bar on a terminal; lines only elsewhere (and nothing drawn with `--json`).
fn progress(total: u64, json: bool) -> indicatif::ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::hidden();
        bar.set_length(total);
        return bar;
    }
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} builds  {msg}") {
        bar.set_style(style);
    }
    bar
}
