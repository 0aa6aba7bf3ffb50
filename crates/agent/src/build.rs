//! The build state machine.

use crate::agent_loop::{AgentLoop, LoopStats, PhaseEnd};
use crate::prompts::{self, Lang, Narration, Template};
use crate::verify::{Failure, verify};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use wright_events::{EventKind, Level, Phase};
use wright_provider::{Message, Provider, ProviderError, RetryPolicy, Usage};
use wright_tools::{Registry, ToolContext};

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

/// What to build and within which limits.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    pub prompt: String,
    pub template: Template,
    pub lang: Lang,
    /// Extra acceptance commands (`--check`), run with `sh -c` in the workspace.
    pub checks: Vec<String>,
    pub max_fix_attempts: u32,
    pub max_turns: u32,
    pub timeout: Duration,
    pub model: String,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
    pub retry: RetryPolicy,
    pub pricing: Pricing,
    /// End the build once the model calls cost this much (USD).
    pub max_cost_usd: Option<f64>,
    /// A different (cheaper) model for fix attempts; the generation model when `None`.
    pub fix_model: Option<String>,
}

/// The parts a build runs on. `ctx.cancel` is the caller's stop button (Ctrl-C).
pub struct BuildDeps {
    pub provider: Arc<dyn Provider>,
    pub registry: Arc<Registry>,
    pub ctx: ToolContext,
}

/// How a build ended.
#[derive(Debug, Clone, PartialEq)]
pub enum BuildEnd {
    Published,
    /// Verification still failed after the last fix attempt.
    VerificationFailed,
    /// The model could not be used (unreachable, auth, rejected): exit code 3.
    ProviderUnusable(ProviderError),
    TimedOut(Duration),
    Cancelled,
    /// `max_cost_usd` was reached.
    BudgetSpent(f64),
}

/// The outcome of a build, for the caller's exit code and summary.
#[derive(Debug, Clone)]
pub struct BuildReport {
    pub end: BuildEnd,
    pub template: Template,
    pub files: Vec<String>,
    pub fix_attempts: u32,
    pub turns: u32,
    pub usage: Usage,
    pub cost_usd: f64,
    pub duration: Duration,
}

impl BuildReport {
    pub fn success(&self) -> bool {
        self.end == BuildEnd::Published
    }
}

/// Run one build to its end. Always emits `complete` last, whatever happens.
pub async fn run_build(req: BuildRequest, deps: BuildDeps) -> BuildReport {
    let started = Instant::now();
    let user_cancel = deps.ctx.cancel.clone();
    let cancel = user_cancel.child_token();
    let timed_out = Arc::new(AtomicBool::new(false));
    let timer = {
        let (cancel, timed_out, timeout) = (cancel.clone(), timed_out.clone(), req.timeout);
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            timed_out.store(true, Ordering::SeqCst);
            cancel.cancel();
        })
    };
    let mut ctx = deps.ctx;
    ctx.cancel = cancel.clone();
    let emitter = ctx.emitter.clone();
    let template = req.template.resolve(&req.prompt);
    let agent = AgentLoop {
        provider: deps.provider,
        registry: deps.registry,
        ctx: ctx.clone(),
        model: req.model.clone(),
        temperature: req.temperature,
        max_tokens: req.max_tokens,
        retry: req.retry.clone(),
        max_turns: req.max_turns,
        pricing: req.pricing.clone(),
        max_cost_usd: req.max_cost_usd,
    };
    let mut stats = LoopStats::default();
    let mut fix_attempts = 0u32;

    let end = drive(&req, template, &agent, &ctx, &mut stats, &mut fix_attempts).await;
    timer.abort();
    // A cancel that came from the timer is a timeout, not the user's stop.
    let end = match end {
        BuildEnd::Cancelled if timed_out.load(Ordering::SeqCst) => BuildEnd::TimedOut(req.timeout),
        other => other,
    };

    let files = wright_tools::project_files(ctx.workspace.root());
    let success = end == BuildEnd::Published;
    match &end {
        BuildEnd::Published => emitter.emit(EventKind::Phase {
            phase: Phase::Published,
            iteration: fix_attempts,
            message: prompts::narrate(req.lang, Narration::Published),
        }),
        other => {
            let message = match other {
                BuildEnd::VerificationFailed => prompts::narrate(
                    req.lang,
                    Narration::StillFailing(fix_attempts, ctx.workspace.root().display().to_string()),
                ),
                BuildEnd::ProviderUnusable(e) => prompts::narrate(req.lang, Narration::ProviderFailed(e.to_string())),
                BuildEnd::TimedOut(t) => prompts::narrate(req.lang, Narration::TimedOut(t.as_secs())),
                BuildEnd::Cancelled => prompts::narrate(req.lang, Narration::Stopped),
                BuildEnd::BudgetSpent(c) => prompts::narrate(req.lang, Narration::BudgetSpent(*c)),
                BuildEnd::Published => String::new(),
            };
            emitter.emit(EventKind::Phase { phase: Phase::Failed, iteration: fix_attempts, message: message.clone() });
            emitter.emit(EventKind::Error { message });
        }
    }
    let duration = started.elapsed();
    emitter.emit(EventKind::Complete {
        success,
        files: files.clone(),
        iterations: stats.turns,
        fix_attempts,
        duration_ms: duration.as_millis() as u64,
        input_tokens: stats.usage.input_tokens,
        output_tokens: stats.usage.output_tokens,
        cached_tokens: stats.usage.cached_tokens,
        cost_usd: stats.cost_usd,
    });
    BuildReport {
        end,
        template,
        files,
        fix_attempts,
        turns: stats.turns,
        usage: stats.usage,
        cost_usd: stats.cost_usd,
        duration,
    }
}

/// The phases, up to (not including) the terminal one.
async fn drive(
    req: &BuildRequest,
    template: Template,
    agent: &AgentLoop,
    ctx: &ToolContext,
    stats: &mut LoopStats,
    fix_attempts: &mut u32,
) -> BuildEnd {
    let emitter = &ctx.emitter;
    emitter.emit(EventKind::Phase {
        phase: Phase::Planning,
        iteration: 0,
        message: prompts::narrate(req.lang, Narration::Planning(template)),
    });
    let existing = wright_tools::project_files(ctx.workspace.root());
    let system = prompts::system_prompt(template, req.lang);
    let opening = prompts::request_message(&req.prompt, &existing, &req.checks);
    let mut messages = vec![Message::system(system.clone()), Message::user(opening)];

    emitter.emit(EventKind::Phase {
        phase: Phase::Generating,
        iteration: 0,
        message: prompts::narrate(req.lang, Narration::Generating),
    });
    if let Some(end) = phase_end(agent.run(&mut messages, stats).await, emitter) {
        return end;
    }

    let fix_agent = req.fix_model.as_ref().map(|m| AgentLoop { model: m.clone(), ..agent.clone() });
    let fix_agent = fix_agent.as_ref().unwrap_or(agent);
    let mut history: Vec<String> = Vec::new();
    loop {
        if ctx.cancel.is_cancelled() {
            return BuildEnd::Cancelled;
        }
        emitter.emit(EventKind::Phase {
            phase: Phase::Verifying,
            iteration: *fix_attempts,
            message: prompts::narrate(req.lang, Narration::Verifying),
        });
        let v = verify(ctx, template, &req.checks, *fix_attempts).await;
        if ctx.cancel.is_cancelled() {
            return BuildEnd::Cancelled;
        }
        if v.passed() {
            if *fix_attempts > 0 {
                emitter.emit(EventKind::ErrorFixed { iteration: *fix_attempts });
            }
            return BuildEnd::Published;
        }
        if *fix_attempts >= req.max_fix_attempts {
            return BuildEnd::VerificationFailed;
        }
        *fix_attempts += 1;
        let attempt = *fix_attempts;
        history.push(format!("verification {}: {}", attempt, summarize(&v.failures)));
        emitter.emit(EventKind::Phase {
            phase: Phase::Fixing,
            iteration: attempt,
            message: format!("Fixing: {}", wright_tools::clip(&summarize(&v.failures), 300)),
        });
        // The last attempt starts afresh: long failed transcripts make models worse at debugging.
        if attempt == req.max_fix_attempts && attempt > 1 {
            let files = wright_tools::project_files(ctx.workspace.root());
            messages = vec![
                Message::system(system.clone()),
                Message::user(prompts::fresh_fix_message(
                    &req.prompt,
                    &files,
                    &history,
                    &v.failures,
                    attempt,
                    req.max_fix_attempts,
                )),
            ];
        } else {
            messages.push(Message::user(prompts::fix_message(&v.failures, attempt, req.max_fix_attempts)));
        }
        if let Some(end) = phase_end(fix_agent.run(&mut messages, stats).await, emitter) {
            return end;
        }
    }
}

/// Map a loop phase's end to a build end when it ends the build; narrate the others.
fn phase_end(end: PhaseEnd, emitter: &wright_events::Emitter) -> Option<BuildEnd> {
    match end {
        PhaseEnd::Finished(_) => None,
        PhaseEnd::MaxTurns => {
            emitter.status(Level::Warning, "The model used all its turns for this step; checking what it has so far.");
            None
        }
        PhaseEnd::Stuck(_) => None,
        PhaseEnd::Cancelled => Some(BuildEnd::Cancelled),
        PhaseEnd::BudgetSpent(c) => Some(BuildEnd::BudgetSpent(c)),
        PhaseEnd::Provider(e) => Some(BuildEnd::ProviderUnusable(e)),
    }
}

fn summarize(failures: &[Failure]) -> String {
    failures.iter().map(|f| f.summary.clone()).collect::<Vec<_>>().join("; ")
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
