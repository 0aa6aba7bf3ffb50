//! The front door for work on an existing codebase: a task file holds one task or a plan of
//! tasks with `depends_on`, in the shape of the seed's execution engine (`id`, `type`,
//! `description`, `instructions`, `input_artifacts`, `output_artifacts`, `constraints`,
//! `validation_criteria`). This crate reads such a file (JSON or TOML), checks it field by
//! field with errors that name the field, orders the plan by its dependencies, publishes its
//! JSON Schema, defines the result each task ends with, holds the handler table
//! ([`handlers`]) that runs a task by its `type`, and runs a whole plan ([`run`]): in order,
//! recording each task's outcome before the next starts, so a stopped run can be resumed.

mod builtin;
pub mod codegen;
pub mod handlers;
mod judge;
mod model;
mod result;
pub mod run;

pub use handlers::{Handlers, Judge, TaskEnv, TaskHandler, UnknownType};
pub use judge::ModelJudge;
pub use model::{Criterion, Format, Instructions, Plan, Task, TaskFileError, TaskLimits, order, parse, schema};
pub use result::{CommandExecuted, Judgement, OverallStatus, TaskResult, ValidationDetails};
pub use run::{Earlier, Recorder, RunError, RunOptions, RunSummary, TaskOutcome, TaskStatus, run_plan, task_hash};
