//! The MCP servers of `wright.toml`, started for each run inside its sandbox: the engine owns
//! the sandbox, so it makes each server's confinement (its own network and readable folders,
//! the run's workspace and a private home writable) and hands the run the servers' tools.

use crate::sandbox::{self, Mode};
use std::path::PathBuf;
use std::sync::Arc;
use wright_mcp::{Confine, Launch, Pins, Server};
use wright_sandbox::{Isolation, Limits, Policy};
use wright_tools::{Tool, ToolContext};

/// One run's servers, started when the run's record exists ([`wright_agent::Prelude`]).
pub(crate) struct McpPrelude {
    pub(crate) servers: Vec<Server>,
    pub(crate) confine: RunConfine,
    /// Where the pins are kept (`DATA/mcp-pins.json`).
    pub(crate) data_dir: PathBuf,
    /// A private HOME and TMPDIR for the servers, inside the run's scratch folder.
    pub(crate) home: PathBuf,
    pub(crate) env: fn(&str) -> Option<String>,
    /// Hides the values of secret-looking host variables in what servers say.
    pub(crate) redactor: Arc<wright_sandbox::Redactor>,
}

/// The run's sandbox mode and limits, with the workspace and the servers' home writable.
pub(crate) struct RunConfine {
    pub(crate) mode: Mode,
    pub(crate) limits: Limits,
    pub(crate) writable: Vec<PathBuf>,
}

impl Confine for RunConfine {
    fn isolation(&self, network: bool, read_only: &[PathBuf]) -> Result<Box<dyn Isolation>, String> {
        let policy = Policy {
            network,
            limits: self.limits,
            writable: self.writable.clone(),
            read_only: read_only.to_vec(),
            egress: None,
        };
        sandbox::choose(self.mode, policy).map(|c| c.isolation).map_err(|e| e.to_string())
    }
}

impl McpPrelude {
    /// What starting a server of this run needs besides its table.
    fn launch(&self, workspace: &std::path::Path) -> Launch<'_> {
        Launch {
            confine: &self.confine,
            workspace: workspace.to_path_buf(),
            home: self.home.clone(),
            env: &self.env,
            redactor: &self.redactor,
        }
    }

    /// Start every server for a run in `workspace`, saying each outcome on `emitter`: the
    /// tools they offer, or why the run cannot go on (a required server failed).
    pub(crate) async fn start(
        &self,
        workspace: &std::path::Path,
        emitter: &wright_events::Emitter,
    ) -> Result<Vec<Arc<wright_mcp::McpTool>>, String> {
        let mut pins = match Pins::load(&self.data_dir) {
            Ok(p) => p,
            Err(e) => {
                // Without its pins no tool can be trusted: every server fails, as it would at start.
                let reason = e.to_string();
                for s in &self.servers {
                    emitter.emit(wright_events::EventKind::McpServerFailed {
                        server: s.name.clone(),
                        reason: reason.clone(),
                        required: s.required,
                    });
                }
                return match self.servers.iter().any(|s| s.required) {
                    true => Err(reason),
                    false => Ok(vec![]),
                };
            }
        };
        std::fs::create_dir_all(&self.home).map_err(|e| format!("making the MCP servers' home: {e}"))?;
        let launch = self.launch(workspace);
        let started = wright_mcp::start(&self.servers, &launch, &mut pins, emitter).await;
        match started.required_failed {
            Some(why) => Err(why),
            None => Ok(started.tools),
        }
    }
}

#[async_trait::async_trait]
impl wright_agent::Prelude for McpPrelude {
    async fn prepare(&self, ctx: &ToolContext) -> Result<Vec<Arc<dyn Tool>>, String> {
        let tools = self.start(ctx.workspace.root(), &ctx.emitter).await?;
        Ok(tools.into_iter().map(|t| t as Arc<dyn Tool>).collect())
    }
}

/// Says what the chat's servers did in wright's log (the chat's tools start outside any run).
pub(crate) struct LogSink;

impl wright_events::EventSink for LogSink {
    fn accept(&self, event: &wright_events::Event) {
        match &event.kind {
            wright_events::EventKind::McpServerStarted { server, tools } => {
                tracing::info!(server = %server, tools = ?tools, "MCP server started for the chat")
            }
            wright_events::EventKind::McpServerFailed { server, reason, .. } => {
                tracing::warn!(server = %server, "MCP server did not start for the chat: {reason}")
            }
            wright_events::EventKind::Status { message, .. } => tracing::warn!("{message}"),
            _ => {}
        }
    }
}

/// What each server lists now, judged against the pins (`wright mcp list`, `wright doctor`),
/// each started in a throwaway workspace. The pins are only read.
pub(crate) async fn inspect(
    prelude: &McpPrelude,
    workspace: &std::path::Path,
) -> Vec<(Server, Result<Vec<wright_mcp::Listed>, String>)> {
    let mut pins = Pins::load(&prelude.data_dir);
    let mut out = Vec::new();
    let _ = std::fs::create_dir_all(&prelude.home);
    let launch = prelude.launch(workspace);
    for server in &prelude.servers {
        let listed = match &mut pins {
            Err(e) => Err(e.to_string()),
            Ok(pins) => match wright_mcp::Connection::connect(server, &launch).await {
                Ok(c) => wright_mcp::list(&c, pins).await.map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            },
        };
        out.push((server.clone(), listed));
    }
    out
}

/// Take `server`'s tools as they are now as its pins (`wright mcp approve SERVER`): the
/// enabled tools it lists; returns them.
pub(crate) async fn approve(
    prelude: &McpPrelude,
    workspace: &std::path::Path,
    server: &Server,
) -> Result<Vec<wright_mcp::Listed>, String> {
    let mut pins = Pins::load(&prelude.data_dir).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&prelude.home).map_err(|e| e.to_string())?;
    let launch = prelude.launch(workspace);
    let connection = wright_mcp::Connection::connect(server, &launch).await.map_err(|e| e.to_string())?;
    // Listed against a copy: what is pinned now does not matter, the new pins replace it.
    let listed = wright_mcp::list(&connection, &mut pins.clone()).await.map_err(|e| e.to_string())?;
    let enabled: std::collections::BTreeMap<String, String> = listed
        .iter()
        .filter(|t| server.enabled_tools.contains(&t.name))
        .map(|t| (t.name.clone(), t.fingerprint.clone()))
        .collect();
    pins.approve(&server.name, enabled);
    pins.save().map_err(|e| e.to_string())?;
    Ok(listed
        .into_iter()
        .map(|mut t| {
            // Approved now: what was off for having changed is on.
            if t.state == wright_mcp::ToolState::Changed {
                t.state = wright_mcp::ToolState::On;
            }
            t
        })
        .collect())
}
