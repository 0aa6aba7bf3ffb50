//! `wright doctor`'s word on the MCP servers of `wright.toml`: each started once, as a run
//! would start it, with its tools and whether builds may call them.

use crate::mcp::{McpPrelude, RunConfine, inspect};
use crate::sandbox::Mode;
use std::sync::Arc;

/// `wright doctor`'s line on the MCP servers of `wright.toml`: each started once, in a
/// throwaway folder under `data_dir`, with its tools and whether builds may call them.
pub async fn doctor_line(file: &crate::config::FileConfig, data_dir: &std::path::Path, mode: Mode) -> Option<String> {
    let servers = match wright_mcp::servers(&file.mcp_servers) {
        Ok(s) if s.is_empty() => return None,
        Ok(s) => s,
        Err(e) => return Some(e.to_string()),
    };
    let scratch = match crate::scratch_in(data_dir, "mcp") {
        Ok(s) => s,
        Err(e) => return Some(format!("cannot start the servers: {e}")),
    };
    let (ws, home) = (scratch.path().join("workspace"), scratch.path().join("mcp-home"));
    if let Err(e) = std::fs::create_dir_all(&ws) {
        return Some(format!("cannot start the servers: {e}"));
    }
    let prelude = McpPrelude {
        servers,
        confine: RunConfine { mode, limits: crate::sandbox::limits(file), writable: vec![ws.clone(), home.clone()] },
        data_dir: data_dir.to_path_buf(),
        home,
        env: crate::error::env_var,
        redactor: Arc::new(crate::host_redactor(true)),
    };
    let lines: Vec<String> = inspect(&prelude, &ws)
        .await
        .into_iter()
        .map(|(server, listed)| match listed {
            Err(why) => format!("{}: FAILED ({why})", server.name),
            Ok(tools) => {
                let each: Vec<String> = tools
                    .iter()
                    .map(|t| format!("{} {}", wright_mcp::tool_name(&server.name, &t.name), t.state.as_str()))
                    .collect();
                format!("{}: {}", server.name, if each.is_empty() { "no tools".to_string() } else { each.join(", ") })
            }
        })
        .collect();
    Some(lines.join("; "))
}
