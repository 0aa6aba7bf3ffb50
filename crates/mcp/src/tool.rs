//! A server's tool as one of the build's tools (`mcp__<server>__<tool>`), behind the same
//! [`Tool`] trait as the built-ins: the registry checks its arguments against its (cleaned)
//! schema and redacts its result like command output. Its output is the server's word only;
//! it is never taken as a check of the project (verification runs its own tests).

use crate::client::Connection;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use std::sync::Arc;
use wright_tools::{Tool, ToolContext, ToolError, ToolSuccess};

/// Most bytes of a tool's text the model sees (head and tail kept).
pub const RESULT_MAX: usize = 16 * 1024;
/// Most bytes of a tool's structured result kept as JSON; a bigger one is clipped as text.
pub const STRUCTURED_MAX: usize = 8 * 1024;

/// `mcp__<server>__<tool>`.
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// One enabled, pinned tool of a started server.
pub struct McpTool {
    pub(crate) connection: Arc<Connection>,
    /// The tool's own name on its server.
    pub(crate) remote: String,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) schema: Value,
}

impl McpTool {
    /// The server it belongs to.
    pub fn server(&self) -> &str {
        &self.connection.server.name
    }

    /// Its own name on its server.
    pub fn remote(&self) -> &str {
        &self.remote
    }

    /// Its input schema, cleaned.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The examples its server's table gives for the chat's relevance scoring: the ones for
    /// this tool, else the server's.
    pub fn examples(&self) -> Vec<String> {
        let server = &self.connection.server;
        server.tool_examples.get(&self.remote).cloned().unwrap_or_else(|| server.examples.clone())
    }

    /// Call it with arguments already checked against [`McpTool::schema`]: the result as a
    /// build's tool call sees it (not yet redacted).
    pub async fn call_with(
        &self,
        args: serde_json::Map<String, Value>,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<ToolSuccess, crate::error::McpError> {
        let result = self.connection.call(&self.remote, args, cancel).await?;
        Ok(success(self.server(), &self.remote, &result))
    }
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.schema.clone()
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolSuccess, ToolError> {
        let Value::Object(args) = args else {
            return Err(ToolError::InvalidArguments("send one JSON object".into()));
        };
        self.call_with(args, &ctx.cancel).await.map_err(|e| ToolError::Failed(e.to_string()))
    }
}

/// The result as the model reads it: `ok` (false when the server flagged an error), the text
/// parts joined and clipped, and the structured part when the server gave one.
pub(crate) fn success(server: &str, tool: &str, r: &CallToolResult) -> ToolSuccess {
    let mut parts = Vec::new();
    for block in &r.content {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(i) => parts.push(format!("[an image, {}, not shown]", i.mime_type)),
            ContentBlock::Audio(a) => parts.push(format!("[audio, {}, not played]", a.mime_type)),
            ContentBlock::ResourceLink(l) => parts.push(format!("[a link to {}]", l.uri)),
            ContentBlock::Resource(_) => parts.push("[an embedded resource, not shown]".into()),
            _ => parts.push("[content of a kind wright does not show]".into()),
        }
    }
    let text = parts.join("\n");
    let output = if text.len() > RESULT_MAX {
        let head = wright_tools::clip(&text, RESULT_MAX / 2);
        let tail = wright_tools::clip_tail(&text, RESULT_MAX / 2);
        format!("{head}\n{tail}")
    } else {
        text
    };
    let ok = r.is_error != Some(true);
    let mut value = json!({"ok": ok, "output": output});
    if let Some(s) = &r.structured_content {
        let encoded = s.to_string();
        value["structured"] = if encoded.len() <= STRUCTURED_MAX {
            s.clone()
        } else {
            Value::String(wright_tools::clip(&encoded, STRUCTURED_MAX))
        };
    }
    if !ok {
        value["error"] = Value::String(wright_tools::clip(&output, 2000));
    }
    let first = output.lines().next().unwrap_or("").to_string();
    let summary = format!("{server}/{tool}: {}", wright_tools::clip(&first, 160));
    ToolSuccess { value, summary }
}
