//! Folding deltas into a complete answer.

use crate::types::{ChatResponse, Delta, ToolCall, Usage};
use std::collections::BTreeMap;

#[derive(Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Assembles streamed [`Delta`]s into a [`ChatResponse`]; tool-call pieces are joined by `index`,
/// which is how every streaming wire interleaves parallel calls.
#[derive(Default)]
pub struct ResponseAssembler {
    content: String,
    calls: BTreeMap<usize, PartialCall>,
    usage: Usage,
    finish: Option<crate::FinishReason>,
    model: Option<String>,
    notices: Vec<String>,
}

impl ResponseAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, delta: Delta) {
        match delta {
            Delta::Text(t) => self.content.push_str(&t),
            Delta::ToolCall { index, id, name, arguments } => {
                let call = self.calls.entry(index).or_default();
                if let Some(id) = id.filter(|s| !s.is_empty()) {
                    call.id = Some(id);
                }
                if let Some(name) = name {
                    // Some servers repeat the name on every piece; others split it.
                    if call.name != name {
                        call.name.push_str(&name);
                    }
                }
                call.arguments.push_str(&arguments);
            }
            // Usage may be reported more than once (Anthropic: start and end); the last
            // non-zero figure per field wins.
            Delta::Usage(u) => {
                if u.input_tokens > 0 {
                    self.usage.input_tokens = u.input_tokens;
                }
                if u.output_tokens > 0 {
                    self.usage.output_tokens = u.output_tokens;
                }
                if u.cached_tokens > 0 {
                    self.usage.cached_tokens = u.cached_tokens;
                }
            }
            Delta::Finish(f) => self.finish = Some(f),
            Delta::Model(m) => self.model = Some(m),
            Delta::Notice(n) => self.notices.push(n),
        }
    }

    /// Whether anything has been received yet (a call that produced nothing can be retried).
    pub fn is_empty(&self) -> bool {
        self.content.is_empty() && self.calls.is_empty()
    }

    pub fn finish(self) -> ChatResponse {
        let tool_calls = self
            .calls
            .into_iter()
            .map(|(index, c)| ToolCall {
                id: c.id.unwrap_or_else(|| format!("call_{index}")),
                name: c.name,
                arguments: if c.arguments.trim().is_empty() { "{}".to_string() } else { c.arguments },
            })
            .collect();
        ChatResponse {
            content: self.content,
            tool_calls,
            usage: self.usage,
            finish_reason: self.finish,
            model: self.model,
            notices: self.notices,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FinishReason;

    #[test]
    fn joins_interleaved_tool_call_pieces_by_index() {
        let mut a = ResponseAssembler::new();
        a.push(Delta::Text("Hi ".into()));
        a.push(Delta::ToolCall {
            index: 0,
            id: Some("a".into()),
            name: Some("createFile".into()),
            arguments: "{\"pa".into(),
        });
        a.push(Delta::ToolCall { index: 1, id: Some("b".into()), name: Some("runTests".into()), arguments: "".into() });
        a.push(Delta::ToolCall { index: 0, id: None, name: None, arguments: "th\":1}".into() });
        a.push(Delta::Text("there".into()));
        a.push(Delta::Usage(Usage { input_tokens: 10, output_tokens: 0, cached_tokens: 4 }));
        a.push(Delta::Usage(Usage { input_tokens: 0, output_tokens: 7, cached_tokens: 0 }));
        a.push(Delta::Finish(FinishReason::ToolCalls));
        let r = a.finish();
        assert_eq!(r.content, "Hi there");
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[0].arguments, "{\"path\":1}");
        assert_eq!(r.tool_calls[1].arguments, "{}");
        assert_eq!(r.tool_calls[1].id, "b");
        assert_eq!(r.usage, Usage { input_tokens: 10, output_tokens: 7, cached_tokens: 4 });
        assert_eq!(r.finish_reason, Some(FinishReason::ToolCalls));
    }
}
