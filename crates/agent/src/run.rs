//! The build's request, progress and outcome: the types the build state machine
//! ([`crate::build`]), its ending ([`crate::ending`]) and its learning ([`crate::learning`])
//! all read. They live here, below all three, so each of those depends on this module and
//! none depends back on the build.

use crate::agent_loop::LoopStats;
use crate::journal::Journal;
use crate::pricing::Pricing;
use crate::prompts::{self, Lang, Template};
use crate::scan::{Finding, ScanReport};
use std::time::Duration;
use wright_events::{EndReason, EventKind, Phase};
use wright_provider::{Message, ProviderError, RetryPolicy, Usage};
use wright_store::{AttemptError, Note};
use wright_tools::ToolContext;

/// The note model's temperature unless `[sampling.note]` says otherwise: a lesson should say
/// what the fix showed, not vary. (Here, below the learning phase that uses it.)
pub(crate) const NOTE_TEMPERATURE: f32 = 0.2;

/// What to build and within which limits.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    pub prompt: String,
    /// Invisible characters removed from the prompt before it reached wright (said in the
    /// narration, so the person knows the model read less than they pasted).
    pub hidden_removed: u32,
    pub template: Template,
    pub lang: Lang,
    /// Extra acceptance commands (`--check`), run with `sh -c` in the workspace.
    pub checks: Vec<String>,
    pub max_fix_attempts: u32,
    pub max_turns: u32,
    pub timeout: Duration,
    pub model: String,
    /// Sampling temperature of code generation (`[sampling.generate]`); none sends none.
    pub temperature: Option<f32>,
    /// Sampling temperature of fix attempts (`[sampling.fix]`).
    pub fix_temperature: Option<f32>,
    /// Sampling temperature of the note written after a fix (`[sampling.note]`).
    pub note_temperature: Option<f32>,
    /// The token budgets each model call is measured against (`[budgets]`).
    pub budgets: crate::budget::Budgets,
    pub max_tokens: Option<u32>,
    pub retry: RetryPolicy,
    pub pricing: Pricing,
    /// End the build once the model calls cost this much (USD).
    pub max_cost_usd: Option<f64>,
    /// A different (cheaper) model for fix attempts; the generation model when `None`.
    pub fix_model: Option<String>,
    /// Tokens of learning notes the prompt may carry (`--note-budget`); 0 turns notes off.
    pub note_budget: u32,
    /// The model that writes a lesson after a successful fix; the fix model when `None`.
    pub note_model: Option<String>,
    /// The build this one continues (`wright run --continue`).
    pub parent: Option<String>,
    /// That build's conversation, which this one carries on.
    pub history: Vec<Message>,
    /// The browser check of VERIFYING (web templates).
    pub browser: wright_browser::BrowserSettings,
    /// Where the browser check's screenshot is kept (overwritten each round, so it shows the
    /// final page); none is kept when `None`.
    pub screenshot: Option<std::sync::Arc<dyn crate::Screenshots>>,
    /// How the store names the workspace (relative to the artifacts' root when beneath it);
    /// its path as it is when `None`.
    pub workspace_record: Option<String>,
    /// The tested starter this build begins from (a new build only), and how.
    pub starter: Option<crate::StarterChoice>,
    /// Set when the built-in model has no starter that fits this new build: it ends at once,
    /// saying what it can make instead ([`crate::nofit`]).
    pub no_fit: Option<crate::nofit::NoFit>,
    /// How long one TRANSPILING pass may take (templates with a build step).
    pub transpile_limit: Duration,
    /// Outside APIs the build's server may call (named in the full-stack prompt).
    pub outside_apis: Vec<prompts::OutsideApi>,
    /// The experiment variant the build runs under, announced once its record exists
    /// (`experiment_assigned`) and kept with it. Its knobs are already applied to the fields
    /// above by whoever made the request.
    pub experiment: Option<wright_experiments::Assignment>,
    /// Instructions a prompt version adds after the system prompt (`[prompt_versions]`).
    pub prompt_extra: Option<String>,
}

impl Default for BuildRequest {
    fn default() -> Self {
        Self {
            prompt: String::new(),
            hidden_removed: 0,
            template: Template::Auto,
            lang: Lang::En,
            checks: Vec::new(),
            max_fix_attempts: crate::fixing::DEFAULT_FIX_ATTEMPTS,
            max_turns: 100,
            timeout: Duration::from_secs(600),
            model: String::new(),
            temperature: None,
            fix_temperature: None,
            note_temperature: Some(NOTE_TEMPERATURE),
            budgets: crate::budget::Budgets::default(),
            max_tokens: None,
            retry: RetryPolicy::default(),
            pricing: Pricing::default(),
            max_cost_usd: None,
            fix_model: None,
            note_budget: wright_memory::DEFAULT_NOTE_BUDGET,
            note_model: None,
            parent: None,
            history: Vec::new(),
            browser: wright_browser::BrowserSettings::default(),
            screenshot: None,
            workspace_record: None,
            starter: None,
            no_fit: None,
            transpile_limit: wright_transpile::DEFAULT_LIMIT,
            outside_apis: Vec::new(),
            experiment: None,
            prompt_extra: None,
        }
    }
}

/// How a build ended.
#[derive(Debug, Clone, PartialEq)]
pub enum BuildEnd {
    Published,
    /// Verification still failed after the last fix attempt.
    VerificationFailed,
    /// The model could not be used (unreachable, auth, rejected): exit code 3.
    ProviderUnusable(ProviderError),
    /// The conversation outgrew the model's context window even after compaction: the model
    /// works, it just cannot hold this build (a failure, exit code 1, not an unusable provider).
    ContextFull(String),
    TimedOut(Duration),
    Cancelled,
    /// `max_cost_usd` was reached.
    BudgetSpent(f64),
    /// The built-in model has no tested starter that fits the request: nothing was built.
    NoFittingStarter,
    /// A required MCP server could not be started (why): nothing was built.
    ToolServerFailed(String),
}

impl BuildEnd {
    /// The stored `end_reason` of a build that did not publish.
    pub fn reason(&self) -> Option<EndReason> {
        match self {
            Self::Published => None,
            Self::VerificationFailed => Some(EndReason::VerificationFailed),
            Self::ProviderUnusable(_) => Some(EndReason::ProviderUnusable),
            Self::ContextFull(_) => Some(EndReason::ContextFull),
            Self::TimedOut(_) => Some(EndReason::TimedOut),
            Self::Cancelled => Some(EndReason::Cancelled),
            Self::BudgetSpent(_) => Some(EndReason::BudgetSpent),
            Self::NoFittingStarter => Some(EndReason::NoFittingStarter),
            Self::ToolServerFailed(_) => Some(EndReason::ToolServerFailed),
        }
    }
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
    /// Ids of the learning notes the build's prompts carried.
    pub notes_applied: Vec<String>,
    /// The note this build taught (new or reinforced).
    pub learned: Option<Note>,
    /// Risky patterns in the final files ([`scan`]); warnings only, they never fail a build.
    pub security_warnings: Vec<Finding>,
    /// A readable account of what was tried (Markdown).
    pub report: String,
    /// This run's ending is the build's: the store took it (false when the run had ended
    /// already, or its holder lost it; true without a store).
    pub ended_here: bool,
}

impl BuildReport {
    pub fn success(&self) -> bool {
        self.end == BuildEnd::Published
    }
}

/// What a build has done so far, for its record and report.
#[derive(Default)]
pub(crate) struct Progress {
    pub(crate) stats: LoopStats,
    pub(crate) fix_attempts: u32,
    pub(crate) applied: Vec<Note>,
    pub(crate) errors: Vec<AttemptError>,
    pub(crate) log: Vec<String>,
    pub(crate) learned: Option<(Note, bool)>,
    pub(crate) security: ScanReport,
    /// Whether the last verification opened the page in a browser.
    pub(crate) browser: crate::verdict::BrowserStatus,
    /// The starter the built-in model filled (its title), and whether its texts stayed the
    /// starter's defaults: the ending says what was made, never as if written from scratch.
    pub(crate) from_starter: Option<(String, bool)>,
}

/// Emit a phase change and file later records under it.
pub(crate) fn enter(ctx: &ToolContext, journal: Option<&Journal>, phase: Phase, iteration: u32, message: String) {
    if let Some(j) = journal {
        j.set_phase(phase);
    }
    ctx.emitter.emit(EventKind::Phase { phase, iteration, message });
}
