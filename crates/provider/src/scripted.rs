//! A provider that plays back a script: the one part of wright tests may fake, because it stands
//! in for the LLM. Also useful for benchmarks (an instant model).

use crate::{ChatRequest, ChatResponse, Delta, DeltaStream, FinishReason, Provider, ProviderError, ToolCall};
use std::sync::{Arc, Mutex};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum ScriptStep {
    Reply(ChatResponse),
    Fail(ProviderError),
}

impl ScriptStep {
    /// An answer made of tool calls `(name, arguments JSON)`; ids are `call_<n>`.
    pub fn calls(calls: &[(&str, serde_json::Value)]) -> Self {
        Self::Reply(ChatResponse {
            tool_calls: calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| ToolCall {
                    id: format!("call_{i}"),
                    name: (*name).to_string(),
                    arguments: args.to_string(),
                })
                .collect(),
            finish_reason: Some(FinishReason::ToolCalls),
            ..Default::default()
        })
    }
    /// A plain text answer (ends a tool loop).
    pub fn text(t: &str) -> Self {
        Self::Reply(ChatResponse {
            content: t.to_string(),
            finish_reason: Some(FinishReason::Stop),
            ..Default::default()
        })
    }
}

/// Plays its steps in order; when the script runs out it answers with `fallback` forever
/// (a text reply by default), so a test never hangs on an exhausted script.
#[derive(Clone)]
pub struct ScriptedProvider {
    steps: Arc<Mutex<std::collections::VecDeque<ScriptStep>>>,
    fallback: ScriptStep,
    requests: Arc<Mutex<Vec<ChatRequest>>>,
}

impl ScriptedProvider {
    pub fn new(steps: Vec<ScriptStep>) -> Self {
        Self { steps: Arc::new(Mutex::new(steps.into())), fallback: ScriptStep::text("done"), requests: Arc::default() }
    }
    /// What to answer once the script is exhausted.
    pub fn with_fallback(mut self, step: ScriptStep) -> Self {
        self.fallback = step;
        self
    }
    /// Every request received so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Provider for ScriptedProvider {
    fn name(&self) -> &str {
        "scripted"
    }

    fn stream(&self, request: ChatRequest) -> DeltaStream {
        if let Ok(mut r) = self.requests.lock() {
            r.push(request);
        }
        let step = self.steps.lock().ok().and_then(|mut s| s.pop_front()).unwrap_or_else(|| self.fallback.clone());
        let items: Vec<Result<Delta, ProviderError>> = match step {
            ScriptStep::Fail(e) => vec![Err(e)],
            ScriptStep::Reply(resp) => response_to_deltas(resp).into_iter().map(Ok).collect(),
        };
        Box::pin(futures::stream::iter(items))
    }
}

/// The deltas a streaming wire would have produced for `resp`.
pub fn response_to_deltas(resp: ChatResponse) -> Vec<Delta> {
    let mut out: Vec<Delta> = resp.notices.into_iter().map(Delta::Notice).collect();
    if !resp.content.is_empty() {
        out.push(Delta::Text(resp.content));
    }
    for (index, c) in resp.tool_calls.into_iter().enumerate() {
        out.push(Delta::ToolCall { index, id: Some(c.id), name: Some(c.name), arguments: c.arguments });
    }
    out.push(Delta::Usage(resp.usage));
    if let Some(f) = resp.finish_reason {
        out.push(Delta::Finish(f));
    }
    out
}
