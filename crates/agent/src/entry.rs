//! Where a full-stack project's server starts: the server check, the browser check and the
//! server's preview all start an app the same way.

use wright_tools::ToolContext;

/// Where a full-stack project's server starts, relative to the workspace: the file named by
/// `scripts.start` when that is `node <file>`, else the first conventional entry that exists.
pub fn server_entry(ctx: &ToolContext) -> Option<String> {
    server_entry_in(&ctx.workspace)
}

/// [`server_entry`] of a workspace (the server's preview starts apps the same way).
pub fn server_entry_in(workspace: &wright_sandbox::Workspace) -> Option<String> {
    let exists = |p: &str| workspace.is_file(p);
    start_script_files(workspace)
        .into_iter()
        .chain(["server/server.js", "server/index.js", "server.js", "index.js"].map(String::from))
        .find(|p| exists(p))
}

/// The file arguments of `"start": "node [flags] <file>"` in package.json, in order.
fn start_script_files(workspace: &wright_sandbox::Workspace) -> Vec<String> {
    let Ok(bytes) = workspace.read("package.json") else { return Vec::new() };
    let Ok(pkg) = serde_json::from_slice::<serde_json::Value>(&bytes) else { return Vec::new() };
    let Some(start) = pkg.pointer("/scripts/start").and_then(serde_json::Value::as_str) else {
        return Vec::new();
    };
    let mut words = start.split_whitespace();
    if words.next() != Some("node") {
        return Vec::new();
    }
    words.filter(|w| !w.starts_with('-')).map(|w| w.trim_start_matches("./").to_string()).collect()
}
