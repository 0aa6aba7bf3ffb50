//! Why a server or its tools could not be used: one error type for the whole crate.

use std::time::Duration;

/// Why a server or its tools could not be used.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("MCP server `{server}` in wright.toml: {why}")]
    Config { server: String, why: String },
    #[error("MCP server `{server}`: {why}")]
    Server { server: String, why: String },
    #[error("MCP server `{server}` did not answer the call within {after:?}")]
    Timeout { server: String, after: Duration },
    #[error("MCP pins: {0}")]
    Pins(String),
}
