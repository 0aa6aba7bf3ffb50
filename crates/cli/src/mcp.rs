//! `wright mcp`: wright and the Model Context Protocol (`docs/mcp.md`). `serve` offers wright's
//! builds, task runs, apps and chat as MCP tools on stdin/stdout, for an editor or an agent
//! (codex, Claude Code, goose) that starts it as a stdio server; `list` and `approve` manage
//! the tools of the MCP servers of `wright.toml` that builds may call.

use crate::{Exit, usage};
use std::io::Write;
use std::path::PathBuf;
use wright_engine::config::FileConfig;
use wright_engine::{Engine, Overrides};
use wright_mcp::{Listed, Server, ToolState, Transport, tool_name};

#[derive(clap::Subcommand)]
pub enum McpCommand {
    /// Serve wright's builds, tasks, apps and chat as MCP tools on stdin/stdout.
    ///
    /// Builds run here, as the local user, with the same queue, limits and sandbox as `wright
    /// serve`. Nothing but MCP goes to stdout (logs go to stderr); it stops when the client
    /// closes stdin. `/mcp` on `wright serve` offers the same tools over HTTP.
    Serve(Box<crate::serve::McpServeArgs>),
    /// Start each server once and show its tools: on, not enabled, or changed since approved.
    List(McpArgs),
    /// Take a server's tools as they are now (their descriptions and schemas) as approved.
    Approve {
        /// The server's name in wright.toml (`[mcp_servers.NAME]`).
        server: String,
        #[command(flatten)]
        args: McpArgs,
    },
}

#[derive(clap::Args)]
pub struct McpArgs {
    /// Data folder (where the approvals are kept) [default: $XDG_DATA_HOME/wright].
    #[arg(long, env = "WRIGHT_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Sandbox the servers start in: auto, bwrap, landlock or none [default: auto].
    #[arg(long, value_name = "MODE")]
    sandbox: Option<String>,
}

async fn engine(config: Option<PathBuf>, args: McpArgs) -> Result<Engine, Exit> {
    let (file, _) = FileConfig::load(config.as_deref())?;
    Ok(Engine::new(file, Overrides { data_dir: args.data_dir, sandbox: args.sandbox, ..Overrides::default() }).await?)
}

pub async fn mcp(cmd: McpCommand, config: Option<PathBuf>, out: &mut dyn Write) -> Result<u8, Exit> {
    match cmd {
        McpCommand::Serve(args) => crate::serve::mcp_serve(*args, config).await,
        McpCommand::List(args) => {
            let engine = engine(config, args).await?;
            let servers = engine.mcp_inspect().await?;
            if servers.is_empty() {
                writeln!(out, "No MCP servers in wright.toml; docs/mcp.md shows how to add one.").map_err(usage)?;
                return Ok(0);
            }
            let mut failed = false;
            for (server, listed) in servers {
                failed |= listed.is_err();
                show(out, &server, listed).map_err(usage)?;
            }
            Ok(u8::from(failed))
        }
        McpCommand::Approve { server, args } => {
            let engine = engine(config, args).await?;
            let listed = engine.mcp_approve(&server).await?;
            let on = listed.iter().filter(|t| t.state == ToolState::On).count();
            writeln!(out, "Approved {on} tool(s) of `{server}` as they are now:").map_err(usage)?;
            for t in listed.iter().filter(|t| t.state == ToolState::On) {
                writeln!(out, "  {}", tool_name(&server, &t.name)).map_err(usage)?;
            }
            Ok(0)
        }
    }
}

fn show(out: &mut dyn Write, server: &Server, listed: Result<Vec<Listed>, String>) -> std::io::Result<()> {
    let how = match &server.transport {
        Transport::Stdio { command, args, network, .. } => format!(
            "stdio: {}{}",
            std::iter::once(command).chain(args).cloned().collect::<Vec<_>>().join(" "),
            if *network { ", network allowed" } else { ", no network" }
        ),
        Transport::Http { url, .. } => format!("http: {url}"),
    };
    let required = if server.required { ", required" } else { "" };
    match listed {
        Err(why) => writeln!(out, "{} ({how}{required}): FAILED: {why}", server.name),
        Ok(tools) => {
            writeln!(out, "{} ({how}{required}): {} tool(s)", server.name, tools.len())?;
            for t in &tools {
                let name = tool_name(&server.name, &t.name);
                writeln!(out, "  {name:<36} {:<36} {}", t.state.as_str(), wright_tools::clip(&t.description, 80))?;
            }
            for missing in server.enabled_tools.iter().filter(|n| !tools.iter().any(|t| &t.name == *n)) {
                writeln!(out, "  {:<36} enabled, but the server does not offer it", tool_name(&server.name, missing))?;
            }
            Ok(())
        }
    }
}
