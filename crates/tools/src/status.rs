//! announceStatus: the model's narration for the person watching.

use crate::{Tool, ToolContext, ToolError, ToolSuccess, decode, schema::schema_for};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use wright_events::Level;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum StatusType {
    Info,
    Success,
    Warning,
    Error,
}

#[derive(Deserialize, JsonSchema)]
struct StatusArgs {
    /// A short, beginner-friendly sentence about what is happening, like 'Making the button count clicks...'.
    message: String,
    /// How to show it.
    #[serde(default, rename = "type")]
    kind: Option<StatusType>,
}

pub struct AnnounceStatus;

#[async_trait::async_trait]
impl Tool for AnnounceStatus {
    fn name(&self) -> &'static str {
        "announceStatus"
    }
    fn description(&self) -> &'static str {
        "Tell the person watching what you are doing, in plain words a beginner understands."
    }
    fn parameters(&self) -> Value {
        schema_for::<StatusArgs>()
    }
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolSuccess, ToolError> {
        let a: StatusArgs = decode(args)?;
        let level = match a.kind {
            None | Some(StatusType::Info) => Level::Info,
            Some(StatusType::Success) => Level::Success,
            Some(StatusType::Warning) => Level::Warning,
            Some(StatusType::Error) => Level::Error,
        };
        let message = crate::clip(a.message.trim(), 500);
        ctx.emitter.status(level, message.clone());
        Ok(ToolSuccess { summary: message, value: json!({"ok": true}) })
    }
}
