//! How one model call measured against its token budget (`docs/configuration.md`, "Token
//! budgets"): carried by `usage` events beside the contract's fields, which stay as they were.

use serde::{Deserialize, Serialize};

/// Estimated tokens (about four characters each) of one model call, part by part, against the
/// budget of its template (or task run). Readers that do not know it ignore it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallBudget {
    /// Which budget applied: `static`, `interactive`, `fullstack`, `react` or `task`.
    pub name: String,
    /// The budget's total (prompt and answer together).
    pub total: u32,
    /// What the call came to: every part below added up.
    pub used: u32,
    /// The system prompt.
    pub system: u32,
    /// The request (the first user message).
    pub user: u32,
    /// Everything said since the request, tool results apart.
    pub history: u32,
    /// The tool results sent.
    pub tool_results: u32,
    /// The answer (the output tokens the provider reported).
    pub answer: u32,
    /// The parts over their share (`system`, `user`, `tool_results`, `answer`, `total`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over: Vec<String>,
    /// Whether wright kept the call to the budget (`[budgets] enforce = true`) or only measured.
    pub enforced: bool,
    /// Messages dropped, shortened or summarised to keep to the budget.
    #[serde(default)]
    pub trimmed: u32,
}
