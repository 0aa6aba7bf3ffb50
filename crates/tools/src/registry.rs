//! Dispatching model calls to tools, with every failure made into a readable result.

use crate::{Tool, ToolContext, ToolError, schema};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use wright_events::EventKind;
use wright_provider::{ToolCall, ToolSpec};
use wright_sandbox::Redactor;

/// The result of one call as the model and the event stream see it.
#[derive(Debug, Clone)]
pub struct ToolOutcome {
    pub ok: bool,
    /// The JSON object given back to the model.
    pub value: Value,
    pub summary: String,
}

impl ToolOutcome {
    fn failure(error: String) -> Self {
        let summary = crate::clip(&error, 200);
        Self { ok: false, value: json!({"ok": false, "error": error}), summary }
    }
}

#[derive(Clone)]
struct Entry {
    tool: Arc<dyn Tool>,
    schema: Value,
}

/// Tools by name.
#[derive(Clone, Default)]
pub struct Registry {
    tools: BTreeMap<String, Entry>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let schema = tool.parameters();
        self.tools.insert(tool.name().to_string(), Entry { tool, schema });
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.keys().map(String::as_str).collect()
    }

    /// What the model is told about the tools.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .values()
            .map(|e| ToolSpec {
                name: e.tool.name().to_string(),
                description: e.tool.description().to_string(),
                parameters: e.schema.clone(),
            })
            .collect()
    }

    /// Run one call, emitting `tool_call` and `tool_result` around it.
    pub async fn dispatch(&self, call: &ToolCall, ctx: &ToolContext) -> ToolOutcome {
        let parsed: Result<Value, String> = if call.arguments.trim().is_empty() {
            Ok(json!({}))
        } else {
            serde_json::from_str::<Value>(&call.arguments).map_err(|e| e.to_string())
        };
        ctx.emitter.emit(EventKind::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: parsed.clone().unwrap_or_else(|_| Value::String(call.arguments.clone())),
        });
        let outcome = redact_outcome(self.run(call, parsed, ctx).await, &ctx.exec.redactor);
        ctx.emitter.emit(EventKind::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            ok: outcome.ok,
            summary: outcome.summary.clone(),
        });
        outcome
    }

    async fn run(&self, call: &ToolCall, parsed: Result<Value, String>, ctx: &ToolContext) -> ToolOutcome {
        let Some(entry) = self.tools.get(call.name.as_str()) else {
            let known = self.names().join(", ");
            return ToolOutcome::failure(format!("unknown tool `{}`; the tools are: {known}", call.name));
        };
        let mut args = match parsed {
            Ok(v) => v,
            Err(e) => {
                return ToolOutcome::failure(format!(
                    "the arguments are not valid JSON ({e}); send one JSON object, e.g. {{\"path\": \"index.html\"}}"
                ));
            }
        };
        entry.tool.coerce(&mut args);
        if let Err(e) = schema::validate(&entry.schema, &args) {
            return ToolOutcome::failure(format!("invalid arguments for {}: {e}", call.name));
        }
        if ctx.cancel.is_cancelled() {
            return ToolOutcome::failure("the build was stopped before this tool ran".into());
        }
        // A run past its lease (its worker froze or lost the database) writes nothing more:
        // the build may be another run's by now. Asked of the clock, not of a timer, so it
        // holds whichever task a woken worker runs first.
        if ctx.runner.past_lease() {
            return ToolOutcome::failure("this run's lease ran out; the tool did not run".into());
        }
        match entry.tool.call(args, ctx).await {
            Ok(s) => {
                let ok = s.value.get("ok").and_then(Value::as_bool).unwrap_or(true);
                let mut value = s.value;
                if let Some(obj) = value.as_object_mut() {
                    obj.entry("ok").or_insert(Value::Bool(ok));
                }
                ToolOutcome { ok, value, summary: s.summary }
            }
            Err(e @ ToolError::InvalidArguments(_)) => ToolOutcome::failure(format!("{} for {}", e, call.name)),
            Err(ToolError::Path(e @ wright_sandbox::PathError::Link(_))) => {
                if let wright_sandbox::PathError::Link(path) = &e {
                    ctx.emitter
                        .emit(EventKind::LinkRefused { path: path.clone(), step: wright_events::LinkStep::Tool });
                }
                ToolOutcome::failure(e.to_string())
            }
            Err(e) => ToolOutcome::failure(e.to_string()),
        }
    }
}

/// Every string the model or the event stream will see, redacted. A result that hid a secret
/// says so, so the model does not copy `[redacted]` back into a file.
fn redact_outcome(mut outcome: ToolOutcome, redactor: &Redactor) -> ToolOutcome {
    let mut hid_secret = false;
    redact_value(&mut outcome.value, redactor, &mut hid_secret);
    if hid_secret {
        if let Some(obj) = outcome.value.as_object_mut() {
            obj.insert("redacted".into(), json!(REDACTED_NOTE));
        }
    }
    outcome.summary = redactor.redact(&outcome.summary).into_owned();
    outcome
}

const REDACTED_NOTE: &str =
    "text that looked like a key, token or password was replaced by [redacted]; never write [redacted] into a file";

fn redact_value(v: &mut Value, redactor: &Redactor, hid_secret: &mut bool) {
    match v {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(clean) = redactor.redact(s) {
                *s = clean;
            }
            // Command output arrives redacted already; the marker is what tells.
            *hid_secret |= s.contains(wright_sandbox::REDACTED);
        }
        Value::Array(items) => items.iter_mut().for_each(|i| redact_value(i, redactor, hid_secret)),
        Value::Object(map) => map.values_mut().for_each(|i| redact_value(i, redactor, hid_secret)),
        _ => {}
    }
}
