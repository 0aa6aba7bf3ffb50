//! Starting a run's servers: each is started (or reached), its tools listed, and the ones its
//! table enables and whose pins hold become the run's tools. Every server's outcome is an event
//! (`mcp_server_started` / `mcp_server_failed`); a required server that fails stops the run.

use crate::clean::{DESCRIPTION_MAX, SCHEMA_MAX, clean_schema, clean_text};
use crate::client::{Connection, Launch};
use crate::config::Server;
use crate::pin::{Pins, Standing, fingerprint};
use crate::tool::{McpTool, tool_name};
use serde_json::Value;
use std::sync::Arc;
use wright_events::{Emitter, EventKind, Level};

/// The tools of every server that started.
#[derive(Default)]
pub struct Started {
    pub tools: Vec<Arc<McpTool>>,
    /// Why the run cannot go on: a required server did not start.
    pub required_failed: Option<String>,
}

/// A tool as a server listed it, and what wright makes of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub name: String,
    pub description: String,
    pub schema: Value,
    pub fingerprint: String,
    pub state: ToolState,
}

/// Whether a listed tool is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    /// Enabled, and its pin holds (or was taken now).
    On,
    /// Not in the table's `enabled_tools`.
    NotEnabled,
    /// Its description or schema changed since it was pinned: `wright mcp approve SERVER`.
    Changed,
    /// Its input schema is larger than wright offers a model.
    TooLarge,
    /// Its name has characters a model's tool name cannot (or `mcp__<server>__<tool>` is
    /// longer than 64): it cannot be offered.
    BadName,
}

/// Whether `mcp__<server>__<tool>` can be a model's tool name: letters, digits, `_` and `-`,
/// at most 64 in all (what the providers' wires accept).
fn usable_name(server: &str, tool: &str) -> bool {
    !tool.is_empty()
        && tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && tool_name(server, tool).len() <= 64
}

impl ToolState {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolState::On => "on",
            ToolState::NotEnabled => "not enabled",
            ToolState::Changed => "changed: run `wright mcp approve`",
            ToolState::TooLarge => "schema too large",
            ToolState::BadName => "name not usable",
        }
    }
}

/// What `server` lists, judged against its table and `pins` (taking the pins of enabled tools
/// seen for the first time).
pub async fn list(connection: &Connection, pins: &mut Pins) -> Result<Vec<Listed>, crate::error::McpError> {
    let server = &connection.server;
    let mut out = Vec::new();
    for tool in connection.tools().await? {
        let raw_description = tool.description.as_deref().unwrap_or("").to_string();
        let raw_schema = Value::Object((*tool.input_schema).clone());
        let print = fingerprint(&tool.name, &raw_description, &raw_schema);
        let mut schema = raw_schema;
        clean_schema(&mut schema);
        let state = if !server.enabled_tools.contains(tool.name.as_ref()) {
            ToolState::NotEnabled
        } else if !usable_name(&server.name, &tool.name) {
            ToolState::BadName
        } else if schema.to_string().len() > SCHEMA_MAX {
            ToolState::TooLarge
        } else {
            match pins.check(&server.name, &tool.name, &print) {
                Standing::Pinned | Standing::New => ToolState::On,
                Standing::Changed => ToolState::Changed,
            }
        };
        out.push(Listed {
            name: tool.name.to_string(),
            description: clean_text(&raw_description, DESCRIPTION_MAX),
            schema,
            fingerprint: print,
            state,
        });
    }
    Ok(out)
}

/// Start every server and gather the tools a run may call, saying each outcome on `emitter`.
pub async fn start(servers: &[Server], launch: &Launch<'_>, pins: &mut Pins, emitter: &Emitter) -> Started {
    let mut started = Started::default();
    for server in servers {
        let listed = match Connection::connect(server, launch).await {
            Ok(c) => list(&c, pins).await.map(|l| (c, l)),
            Err(e) => Err(e),
        };
        let (connection, listed) = match listed {
            Ok(ok) => ok,
            Err(e) => {
                let reason = launch.redactor.redact(&e.to_string()).into_owned();
                emitter.emit(EventKind::McpServerFailed {
                    server: server.name.clone(),
                    reason: reason.clone(),
                    required: server.required,
                });
                if server.required && started.required_failed.is_none() {
                    started.required_failed = Some(reason);
                }
                continue;
            }
        };
        let mut names = Vec::new();
        for tool in listed {
            match tool.state {
                ToolState::On => {
                    let name = tool_name(&server.name, &tool.name);
                    names.push(name.clone());
                    started.tools.push(Arc::new(McpTool {
                        connection: connection.clone(),
                        remote: tool.name,
                        name,
                        description: tool.description,
                        schema: tool.schema,
                    }));
                }
                ToolState::Changed => emitter.emit(EventKind::Status {
                    message: format!(
                        "The MCP tool {} changed its description or schema since it was approved, so it is off; \
                         if the change is expected, run `wright mcp approve {}`.",
                        tool_name(&server.name, &tool.name),
                        server.name
                    ),
                    level: Level::Warning,
                }),
                ToolState::TooLarge => emitter.emit(EventKind::Status {
                    message: format!(
                        "The MCP tool {}'s input schema is over {SCHEMA_MAX} bytes, so it is off.",
                        tool_name(&server.name, &tool.name)
                    ),
                    level: Level::Warning,
                }),
                ToolState::BadName => emitter.emit(EventKind::Status {
                    message: format!(
                        "The MCP tool `{}` of {} has a name a model cannot call (letters, digits, `_` and `-`, \
                         64 in all with its prefix), so it is off.",
                        tool.name, server.name
                    ),
                    level: Level::Warning,
                }),
                ToolState::NotEnabled => {}
            }
        }
        for missing in server.enabled_tools.iter().filter(|t| !names.contains(&tool_name(&server.name, t))) {
            tracing::debug!(server = %server.name, tool = %missing, "an enabled tool is not offered");
        }
        emitter.emit(EventKind::McpServerStarted { server: server.name.clone(), tools: names });
    }
    if let Err(e) = pins.save() {
        tracing::warn!("{e}");
    }
    started
}

#[cfg(test)]
mod tests {
    use super::usable_name;

    #[test]
    fn only_names_a_model_can_call_are_offered() {
        assert!(usable_name("docs", "search"));
        assert!(usable_name("everything", "get-tiny-image"));
        for bad in ["", "files/read", "a.b", "ünï", "with space", &"x".repeat(60)] {
            assert!(!usable_name("docs", bad), "{bad}");
        }
    }
}
