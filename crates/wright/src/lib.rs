//! wright as a library: one dependency that re-exports the engine's crates under short names.
//!
//! ```no_run
//! use std::sync::Arc;
//! use wright::{agent, events, provider, sandbox, store, tools};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let ws = sandbox::Workspace::open("/tmp/my-app", sandbox::WorkspaceLimits::default())?;
//! let model = provider::openai::OpenAiProvider::new(provider::openai::OpenAiConfig {
//!     base_url: "http://127.0.0.1:8080/v1".into(),
//!     ..Default::default()
//! })?;
//! let ctx = tools::ToolContext {
//!     workspace: ws,
//!     runner: Arc::new(sandbox::ProcessRunner::default()),
//!     emitter: events::Emitter::new("my-build", vec![Arc::new(events::MemorySink::new())]),
//!     cancel: Default::default(),
//!     exec: tools::ExecConfig::for_build("/tmp/my-app-home".as_ref(), "/tmp/my-app-tmp".as_ref())?,
//! };
//! // Builds, events and learning notes live in the store; without one a build has no memory.
//! let db = store::open("sqlite:///tmp/wright.db").await?;
//! let report = agent::run_build(
//!     agent::BuildRequest { prompt: "a counter app".into(), model: "local-model".into(), ..Default::default() },
//!     agent::BuildDeps {
//!         provider: Arc::new(model),
//!         registry: Arc::new(tools::builtin_registry()),
//!         ctx,
//!         store: Some(db),
//!         provider_label: "openai:local-model".into(),
//!         holder: None,
//!         // With no log writer the store gets the build's end, the sinks its events.
//!         log: None,
//!         // Nothing to set up once the run is recorded (the engine starts MCP servers here).
//!         prelude: None,
//!     },
//! )
//! .await;
//! println!("success: {}", report.success());
//! # Ok(()) }
//! ```

pub use wright_agent as agent;
pub use wright_events as events;
pub use wright_local as local;
pub use wright_memory as memory;
pub use wright_provider as provider;
pub use wright_sandbox as sandbox;
pub use wright_store as store;
pub use wright_testreport as testreport;
pub use wright_tools as tools;
pub use wright_webcheck as webcheck;
