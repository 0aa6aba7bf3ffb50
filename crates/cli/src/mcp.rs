//! `wright mcp`: wright and the Model Context Protocol (docs/mcp.md). `serve` offers wright's
//! builds, task runs, apps and chat as MCP tools on stdin/stdout, for an editor or an agent
//! (codex, Claude Code, goose) that starts it as a stdio server.

use crate::Exit;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum McpCommand {
    /// Serve wright's builds, tasks, apps and chat as MCP tools on stdin/stdout.
    ///
    /// Builds run here, as the local user, with the same queue, limits and sandbox as `wright
    /// serve`. Nothing but MCP goes to stdout
    /// (logs go to stderr); it stops when the client closes stdin. `/mcp` on `wright serve`
    /// offers the same tools over HTTP.
    Serve(Box<crate::serve::McpServeArgs>),
}

pub async fn mcp(cmd: McpCommand, config_path: Option<PathBuf>) -> Result<u8, Exit> {
    match cmd {
        McpCommand::Serve(args) => crate::serve::mcp_serve(*args, config_path).await,
    }
}
