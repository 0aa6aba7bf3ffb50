//! The agent: a tool-calling loop, and the build state machine around it.
//!
//! `PLANNING → GENERATING → TRANSPILING? → VERIFYING → (FIXING → TRANSPILING? → VERIFYING)* → PUBLISHED | FAILED`.
//! The model writes and runs things through tools; wright itself decides whether the result
//! works ([`verify`]), hands failures back as a user message, and stops after a bounded number
//! of fix attempts, a timeout, or a cancel, always ending the event stream with `complete`.
//! At the end it scans the final files for risky patterns ([`scan`]) and warns about them.

mod agent_loop;
pub mod budget;
mod build;
mod build_fix;
pub mod diagnose;
mod ending;
mod entry;
pub mod fixing;
pub mod journal;
mod learning;
pub mod nofit;
mod pricing;
pub mod prompts;
pub mod publish;
mod run;
pub mod scan;
mod starting;
mod stuck;
mod transpiling;
mod verdict;
pub mod verify;
mod verify_browser;
mod verify_program;

pub use agent_loop::{AgentLoop, ContextFit, LoopStats, PhaseEnd};
pub use budget::{Budgeting, Budgets, TokenBudget};
pub use build::{BuildDeps, Prelude, run_build};
pub use pricing::{ModelPrice, Pricing};
pub use prompts::{Lang, OutsideApi, Template};
pub use run::{BuildEnd, BuildReport, BuildRequest};
pub use starting::{StarterChoice, StarterMode};
pub use stuck::StuckDetector;
pub use verify::{Failure, Verification, verify};
pub use verify_browser::Screenshots;
