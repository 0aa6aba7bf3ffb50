//! wright's composition root: the one place that turns configuration into running parts.
//!
//! `wright run`, `wright serve` and the server's workers all go through [`Engine`]: it opens the
//! store, builds the provider chain (once, lazily, so a bad `--continue` id is reported before a
//! model is fetched), prices calls, chooses the sandbox per build and prepares each build's
//! workspace, scratch folder, confinement and [`BuildRequest`](wright_agent::BuildRequest). Front
//! ends only add what is theirs: flags, rendering, HTTP. Nothing here is global; every setting is
//! passed in through [`FileConfig`](config::FileConfig) and [`Overrides`].

pub mod artifacts;
pub mod config;
mod egress;
pub mod embedq;
mod engine;
mod error;
mod explain;
mod leashed;
pub mod local;
mod mcp;
mod mcp_chat;
mod mcp_doctor;
pub mod notice;
pub mod packages;
pub mod providers;
pub mod route_limits;
pub mod sampling;
pub mod sandbox;
mod scratch;
pub mod variants;

pub use artifacts::{ArtifactError, Artifacts, LocalArtifacts, RunRef};
pub use egress::BuildEgress;
pub use engine::assistant::AssistantScope;
pub use engine::chat::{ChatFinished, ChatJob, ChatParts, answerer, doctor_lines as chat_doctor_lines};
pub use engine::starters::starter_library;
pub use engine::tasks::{PreparedTasks, TaskJob, TasksFinished, load_task_file, read_plan};
pub use engine::turns::{TURN_LEASE, TurnHold};
pub use engine::{
    Engine, Finished, Job, Overrides, Prepared, database_url, host_redactor, new_build_id, open_store, parse_lang,
    parse_template,
};
pub use error::{EngineError, env_var};
pub use mcp_doctor::doctor_line as mcp_doctor_line;
pub use route_limits::RouteLimits;
pub use scratch::scratch_in;
pub use wright_browser::OutsideAccess;
pub use wright_tasks::{Format as TaskFormat, Plan as TaskPlan};
