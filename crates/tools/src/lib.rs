//! The tools a model calls to build a project, behind one [`Tool`] trait.
//!
//! The [`Registry`] is the only way calls reach tools: it parses the model's JSON, checks it
//! against the tool's schema, runs the tool and turns every failure into a `{ok:false, error}`
//! result the model can read. A bad call never ends a build.

mod clip;
mod deps;
mod exec;
mod exec_config;
mod files;
mod registry;
mod relative;
pub mod schema;
mod status;
#[cfg(test)]
mod test_support;
pub mod testing;
mod tool;

pub use clip::{clip, clip_tail};
pub use deps::install_declared;
pub use exec::{RunCommand, run_logged};
pub use exec_config::{ExecConfig, PackagesConfig};
pub use files::{
    ApplyPatch, CreateFile, DeleteFile, ListFiles, ReadFile, SearchFiles, UpdateFile, WriteFile, project_files,
    project_files_under,
};
pub use registry::{Registry, ToolOutcome};
pub use status::AnnounceStatus;
pub use testing::{RunTests, TestRun, run_tests};
pub use tool::{Tool, ToolContext, ToolError, ToolSuccess, decode};

use std::sync::Arc;

/// The registry with the ten contract tools.
pub fn builtin_registry() -> Registry {
    let mut r = Registry::new();
    r.register(Arc::new(CreateFile));
    r.register(Arc::new(UpdateFile));
    r.register(Arc::new(DeleteFile));
    r.register(Arc::new(ReadFile));
    r.register(Arc::new(ListFiles));
    r.register(Arc::new(SearchFiles));
    r.register(Arc::new(ApplyPatch));
    r.register(Arc::new(RunCommand));
    r.register(Arc::new(RunTests));
    r.register(Arc::new(AnnounceStatus));
    r
}
