//! Provider-neutral chat types. Adapters translate these to and from their wire formats.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call as the model sent it. `arguments` stays the raw JSON text: validating it is the
/// tool layer's job, and a malformed string must reach it intact so the model can be told why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One conversation message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: which call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For `Role::Tool`: the tool's name (some wires need it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    pub fn system(text: impl Into<String>) -> Self {
        Self::text(Role::System, text)
    }
    pub fn user(text: impl Into<String>) -> Self {
        Self::text(Role::User, text)
    }
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::text(Role::Assistant, text)
    }
    fn text(role: Role, text: impl Into<String>) -> Self {
        Self { role, content: Some(text.into()), tool_calls: Vec::new(), tool_call_id: None, name: None }
    }
    /// An assistant turn that carried tool calls (and maybe some text).
    pub fn assistant_calls(content: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self { role: Role::Assistant, content, tool_calls, tool_call_id: None, name: None }
    }
    /// The answer to one tool call.
    pub fn tool_result(call_id: impl Into<String>, name: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
            name: Some(name.into()),
        }
    }
}

/// A tool the model may call; `parameters` is a JSON Schema object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// Whether the model may answer in words when it is offered tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoice {
    /// It chooses: a tool call or an answer.
    #[default]
    Auto,
    /// It must call one of the tools (a structured answer is wanted, not prose).
    Required,
}

impl ToolChoice {
    pub fn is_auto(&self) -> bool {
        *self == ToolChoice::Auto
    }
}

/// Everything a provider needs for one model call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "ToolChoice::is_auto")]
    pub tool_choice: ToolChoice,
}

/// Token accounting for one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens served from the provider's prompt cache (a subset of `input_tokens`).
    pub cached_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_tokens += other.cached_tokens;
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    Other(String),
}

impl FinishReason {
    pub fn from_wire(s: &str) -> Self {
        match s {
            "stop" | "end_turn" | "STOP" => Self::Stop,
            "tool_calls" | "function_call" | "tool_use" => Self::ToolCalls,
            "length" | "max_tokens" | "MAX_TOKENS" => Self::Length,
            "content_filter" | "SAFETY" => Self::ContentFilter,
            other => Self::Other(other.to_string()),
        }
    }
}

/// One increment of a streamed answer. Non-streaming adapters emit the same deltas at once.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    Text(String),
    /// A piece of a tool call. Pieces with the same `index` belong to one call; `id` and `name`
    /// usually arrive on the first piece only, `arguments` is appended.
    ToolCall {
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
    Usage(Usage),
    Finish(FinishReason),
    /// The model that actually answered, when it differs from the request's (a fallback).
    Model(String),
    /// Something the wire adapted to that the user should hear about once (e.g. "this server
    /// cannot stream tool calls; asking for whole answers"). Not part of the answer.
    Notice(String),
}

/// A complete answer, assembled from deltas.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatResponse {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish_reason: Option<FinishReason>,
    /// Set when another model than the requested one answered (cost is priced by this one).
    pub model: Option<String>,
    /// What the wire adapted to while answering ([`Delta::Notice`]), to be shown as status.
    pub notices: Vec<String>,
}
