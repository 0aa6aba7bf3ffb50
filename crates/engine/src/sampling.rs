//! `[sampling]` and `[budgets]` in `wright.toml` (`docs/configuration.md`): how each phase's
//! model calls are sampled, and the token budget of each template and of task runs.

use crate::EngineError;
use serde::Deserialize;
use wright_agent::{Budgets, TokenBudget};

/// A phase whose model calls have their own sampling settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Writing the project (a build's GENERATING, a task run's code).
    Generate,
    /// Fix attempts after a failed check.
    Fix,
    /// The lesson written after a successful fix.
    Note,
    /// "Explain the code".
    Explain,
    /// The chat's replies.
    Chat,
}

impl Phase {
    /// What each phase sends when nothing is set: 0.3 for code (the seed's "consistent code"),
    /// and what the other phases sent before they were settable.
    pub fn default_temperature(self) -> f32 {
        match self {
            Phase::Generate | Phase::Fix | Phase::Explain => 0.3,
            Phase::Note => 0.2,
            Phase::Chat => 0.4,
        }
    }
}

/// One phase's table (`[sampling.generate]`, …).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseFile {
    /// 0 to 2; lower is steadier.
    pub temperature: Option<f32>,
}

/// The `[sampling]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingFile {
    #[serde(default)]
    pub generate: PhaseFile,
    #[serde(default)]
    pub fix: PhaseFile,
    #[serde(default)]
    pub note: PhaseFile,
    #[serde(default)]
    pub explain: PhaseFile,
    #[serde(default)]
    pub chat: PhaseFile,
}

impl SamplingFile {
    fn phase(&self, phase: Phase) -> &PhaseFile {
        match phase {
            Phase::Generate => &self.generate,
            Phase::Fix => &self.fix,
            Phase::Note => &self.note,
            Phase::Explain => &self.explain,
            Phase::Chat => &self.chat,
        }
    }

    /// The temperature a phase sends: `--temperature` (or the top-level `temperature` of
    /// `wright.toml`) for every phase, else the phase's own, else its default.
    pub fn temperature(&self, phase: Phase, everywhere: Option<f32>) -> f32 {
        everywhere.or(self.phase(phase).temperature).unwrap_or_else(|| phase.default_temperature())
    }

    /// Temperatures outside 0–2 are refused: every wire that takes one accepts that range.
    pub fn check(&self, everywhere: Option<f32>) -> Result<(), EngineError> {
        let named = [
            ("generate", self.generate.temperature),
            ("fix", self.fix.temperature),
            ("note", self.note.temperature),
            ("explain", self.explain.temperature),
            ("chat", self.chat.temperature),
        ];
        for (name, t) in named
            .into_iter()
            .map(|(n, t)| (format!("[sampling.{n}] temperature"), t))
            .chain([("temperature".to_string(), everywhere)])
        {
            if let Some(t) = t.filter(|t| !(0.0..=2.0).contains(t)) {
                return Err(EngineError::Usage(format!("{name} = {t} is out of range: use a number from 0 to 2")));
            }
        }
        Ok(())
    }
}

/// One template's `[budgets.NAME]` table: any part left out keeps its default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenBudgetFile {
    pub system: Option<u32>,
    pub user: Option<u32>,
    pub answer: Option<u32>,
    pub tool_results: Option<u32>,
    pub total: Option<u32>,
}

impl TokenBudgetFile {
    fn over(&self, name: &str, d: TokenBudget) -> Result<TokenBudget, EngineError> {
        let b = TokenBudget {
            system: self.system.unwrap_or(d.system),
            user: self.user.unwrap_or(d.user),
            answer: self.answer.unwrap_or(d.answer),
            tool_results: self.tool_results.unwrap_or(d.tool_results),
            total: self.total.unwrap_or(d.total),
        };
        if b.answer == 0 || b.answer >= b.total {
            return Err(EngineError::Usage(format!(
                "[budgets.{name}]: answer ({}) must be more than 0 and less than total ({}), which also holds the prompt",
                b.answer, b.total
            )));
        }
        Ok(b)
    }
}

/// The `[budgets]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetsFile {
    /// Keep each call within its budget; otherwise calls are only measured [default: false].
    pub enforce: Option<bool>,
    /// Exchanges after the request sent when enforcing [default: 6].
    pub keep_turns: Option<usize>,
    #[serde(default, rename = "static")]
    pub static_page: TokenBudgetFile,
    #[serde(default)]
    pub interactive: TokenBudgetFile,
    #[serde(default)]
    pub fullstack: TokenBudgetFile,
    #[serde(default)]
    pub react: TokenBudgetFile,
    #[serde(default)]
    pub task: TokenBudgetFile,
}

impl BudgetsFile {
    /// The budgets, the seed's numbers where nothing is set; a clear error for a budget whose
    /// answer leaves no room for a prompt.
    pub fn resolve(&self) -> Result<Budgets, EngineError> {
        let d = Budgets::default();
        if self.keep_turns == Some(0) {
            return Err(EngineError::Usage(
                "[budgets] keep_turns must be at least 1 (the latest exchange is always sent)".into(),
            ));
        }
        Ok(Budgets {
            static_page: self.static_page.over("static", d.static_page)?,
            interactive: self.interactive.over("interactive", d.interactive)?,
            fullstack: self.fullstack.over("fullstack", d.fullstack)?,
            react: self.react.over("react", d.react)?,
            task: self.task.over("task", d.task)?,
            enforce: self.enforce.unwrap_or(d.enforce),
            keep_turns: self.keep_turns.unwrap_or(d.keep_turns),
        })
    }
}
