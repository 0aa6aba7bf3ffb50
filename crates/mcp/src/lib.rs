//! Tools from Model Context Protocol servers, for builds, task runs and the chat.
//!
//! A team brings its own tools to wright the way it brings them to other agents: a table per
//! server in `wright.toml` (`[mcp_servers.NAME]`, [`config`]). wright runs unattended, so a
//! server is handled as hostile input:
//! - a stdio server runs inside wright's sandbox, with the workspace bound in, no network
//!   unless its table says `network = true`, and a cleared environment plus the variables its
//!   table names (never ones that load code, such as `LD_PRELOAD` or `NODE_OPTIONS`);
//! - only the tools its table lists in `enabled_tools` are offered, each pinned by the hash of
//!   its name, description and schema ([`pin`]): a change turns the tool off until approved;
//! - descriptions are stripped of invisible characters and tags and capped ([`clean`]), and
//!   results are clipped (and redacted by the tool registry like command output).
//!
//! Tools are named `mcp__<server>__<tool>` ([`McpTool`]).

pub mod clean;
pub mod client;
pub mod config;
mod error;
pub mod pin;
pub mod session;
mod tool;

pub use client::{Confine, Connection, Launch};
pub use config::{Server, ServerConfig, Transport, servers};
pub use error::McpError;
pub use pin::{PINS_FILE, Pins};
pub use session::{Listed, Started, ToolState, list, start};
pub use tool::{McpTool, RESULT_MAX, tool_name};
