//! An MCP server's tool as a chat tool: scored like the built-ins by the shared scorer, from the
//! examples its server's table gives (`examples`, `tool_examples`), so it runs only when a
//! message asks for what it does (the same threshold and cap as every chat tool). Its
//! arguments are the message itself when it takes one text, else the model fills them in
//! against the tool's schema; its answer is redacted and shown as text.

use serde_json::{Map, Value};
use std::sync::Arc;
use wright_chat::{ChatContext, ChatTool, Cues, ToolError, ToolOutput};
use wright_events::chat::Part;
use wright_mcp::McpTool;
use wright_provider::ToolSpec;
use wright_sandbox::Redactor;

/// Most characters of a tool's answer a chat message shows.
const SHOWN_MAX: usize = 6000;

pub(crate) struct McpChatTool {
    pub(crate) tool: Arc<McpTool>,
    pub(crate) redactor: Arc<Redactor>,
}

/// The one text property a tool takes, when that is all it takes.
fn single_text(schema: &Value) -> Option<String> {
    let props = schema.get("properties")?.as_object()?;
    let mut texts = props.iter().filter(|(_, p)| p.get("type").and_then(Value::as_str) == Some("string"));
    let (name, _) = texts.next()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let others_required = required.iter().any(|r| r != name);
    (texts.next().is_none() && !others_required && props.len() == 1).then(|| name.clone())
}

#[async_trait::async_trait]
impl ChatTool for McpChatTool {
    fn name(&self) -> &str {
        wright_tools::Tool::name(self.tool.as_ref())
    }

    fn description(&self) -> &str {
        wright_tools::Tool::description(self.tool.as_ref())
    }

    fn triggers(&self) -> &'static [&'static str] {
        &[]
    }

    fn cues(&self) -> Cues {
        Cues { examples: self.tool.examples(), ..Cues::default() }
    }

    fn can_handle(&self, message: &str, ctx: &ChatContext) -> f32 {
        ctx.scorer.score(self.name(), message, ctx.embedding.as_deref().map(Vec::as_slice))
    }

    fn message_type(&self) -> &'static str {
        "tool_output"
    }

    async fn execute(&self, message: &str, ctx: &ChatContext) -> Result<ToolOutput, ToolError> {
        let schema = self.tool.schema().clone();
        let (args, warning) = match single_text(&schema) {
            Some(field) => (Map::from_iter([(field, Value::String(message.to_string()))]), None),
            None => {
                let spec = ToolSpec {
                    name: self.name().to_string(),
                    description: self.description().to_string(),
                    parameters: schema.clone(),
                };
                let system = format!(
                    "Call {} with the arguments that answer the user's message. Use only what the message says.",
                    self.name()
                );
                let check = |v: &Value| -> Result<Map<String, Value>, String> {
                    wright_tools::schema::validate(&schema, v)?;
                    v.as_object().cloned().ok_or_else(|| "the arguments must be one JSON object".to_string())
                };
                wright_chat::model::structured(ctx, spec, system, message.to_string(), check).await?
            }
        };
        let done = self.tool.call_with(args, &ctx.cancel).await.map_err(|e| ToolError::Provider(e.to_string()))?;
        let output = done.value.get("output").and_then(Value::as_str).unwrap_or_default();
        let output = self.redactor.redact(output).into_owned();
        if done.value.get("ok") == Some(&Value::Bool(false)) {
            return Err(ToolError::Provider(format!(
                "{} answered with an error: {}",
                self.name(),
                wright_tools::clip(&output, 500)
            )));
        }
        let shown = wright_text::head(&output, SHOWN_MAX, wright_text::Unit::Chars).to_string();
        Ok(ToolOutput {
            content: shown.clone(),
            part: Part::ToolOutput { tool: self.name().to_string(), text: shown },
            warning,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_taking_one_text_gets_the_message_and_others_need_the_model() {
        let one = json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]});
        assert_eq!(single_text(&one).as_deref(), Some("query"));
        let two = json!({"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}});
        assert_eq!(single_text(&two), None);
        let number = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert_eq!(single_text(&number), None);
    }
}
