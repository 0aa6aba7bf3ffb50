//! wright as a library: one dependency that re-exports the engine's crates under short names.
//!
//! ```no_run
//! use std::sync::Arc;
//! use wright::{agent, events, provider, sandbox, tools};
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
//! let report = agent::run_build(
//!     agent::BuildRequest {
//!         prompt: "a counter app".into(),
//!         template: agent::Template::Auto,
//!         lang: agent::Lang::En,
//!         checks: vec![],
//!         max_fix_attempts: 3,
//!         max_turns: 100,
//!         timeout: std::time::Duration::from_secs(600),
//!         model: "local-model".into(),
//!         temperature: None,
//!         max_tokens: None,
//!         retry: provider::RetryPolicy::default(),
//!         pricing: Default::default(),
//!         max_cost_usd: None,
//!         fix_model: None,
//!     },
//!     agent::BuildDeps { provider: Arc::new(model), registry: Arc::new(tools::builtin_registry()), ctx },
//! )
//! .await;
//! println!("success: {}", report.success());
//! # Ok(()) }
//! ```

pub use wright_agent as agent;
pub use wright_events as events;
pub use wright_local as local;
pub use wright_provider as provider;
pub use wright_sandbox as sandbox;
pub use wright_testreport as testreport;
pub use wright_tools as tools;
pub use wright_webcheck as webcheck;
