//! Starting a build from a tested starter (`wright_starters`), two ways:
//!
//! - **Fill** (small models, the built-in one): one call whose only tool is `fillStarter`, so a
//!   grammar-constrained model can only answer with the starter's slot values; wright checks
//!   them against the slots' schema (asking once more with the error, then keeping the
//!   defaults), renders the files into the project, and the build goes on to verification.
//! - **Reference** (capable models): the starter's files open the first message as a tested
//!   pattern to follow; the model writes the project itself.

use crate::agent_loop::{AgentLoop, LoopStats};
use serde_json::{Value, json};
use wright_events::{EventKind, Lang, Level};
use wright_provider::{ChatRequest, Message, ToolSpec, complete};
use wright_starters::Starter;
use wright_tools::ToolContext;

/// How a build uses its starter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StarterMode {
    Fill,
    Reference,
}

impl StarterMode {
    pub fn as_str(self) -> &'static str {
        match self {
            StarterMode::Fill => "fill",
            StarterMode::Reference => "reference",
        }
    }
}

/// The starter a build begins from, and how sure the match was.
#[derive(Debug, Clone)]
pub struct StarterChoice {
    pub starter: Starter,
    pub score: f32,
    pub mode: StarterMode,
}

/// The most characters of a starter's files shown as a reference.
const REFERENCE_CHARS: usize = 12_000;

/// The first message's opening in reference mode: the starter's files, clipped.
pub(crate) fn reference(choice: &StarterChoice, lang: Lang) -> String {
    let s = &choice.starter;
    let mut block = format!(
        "A tested starter for this kind of app, \"{}\", passes its tests and the browser check. Follow its structure and \
         file layout; change its texts, data and details to fit the request.\n",
        s.manifest.title.get(lang)
    );
    let files = s.render(&s.defaults_in(lang)).unwrap_or_default();
    for (path, text) in files {
        if block.len() + text.len() > REFERENCE_CHARS {
            block.push_str(&format!("--- {path} (left out for length)\n"));
            continue;
        }
        block.push_str(&format!("--- {path}\n{text}\n"));
    }
    block
}

fn fill_tool(starter: &Starter) -> ToolSpec {
    ToolSpec {
        name: "fillStarter".into(),
        description: "Fill in the starter's slots (texts, items, colours, numbers) for the request.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"values": starter.manifest.slots},
            "required": ["values"],
            "additionalProperties": false
        }),
    }
}

fn fill_prompt(choice: &StarterChoice, request: &str, lang: Lang) -> Vec<Message> {
    let s = &choice.starter;
    let language = match lang {
        Lang::En => "English",
        Lang::Pt => "Brazilian Portuguese",
    };
    let system = format!(
        "You fill in a form for a tested app template, \"{}\". Call fillStarter once with values for every slot, \
         written for the person's request, in {language}. Keep each text short and concrete; keep colours as #rrggbb.",
        s.manifest.title.en
    );
    let user = format!(
        "Request: {request}\n\nThe slots, with their defaults:\n{}",
        serde_json::to_string_pretty(&s.defaults_in(lang)).unwrap_or_default()
    );
    vec![Message::system(system), Message::user(user)]
}

/// Fill the starter's slots with the model's values, render it, and write the files. Returns
/// the files written and what happened, in words, for the build's log.
pub(crate) async fn fill(
    agent: &AgentLoop,
    choice: &StarterChoice,
    request: &str,
    lang: Lang,
    ctx: &ToolContext,
    stats: &mut LoopStats,
) -> Result<(Vec<String>, String, bool), String> {
    let s = &choice.starter;
    let mut messages = fill_prompt(choice, request, lang);
    let mut values: Option<Value> = None;
    let mut why = String::new();
    for _try in 0..2 {
        let req = ChatRequest {
            model: agent.model.clone(),
            messages: messages.clone(),
            tools: vec![fill_tool(s)],
            // The generate phase's setting; 0.3 (the seed's) when it has none.
            temperature: agent.temperature.or(Some(0.3)),
            max_tokens: agent.max_tokens,
            tool_choice: Default::default(),
        };
        let answer = complete(agent.provider.as_ref(), &req, &agent.retry, &ctx.cancel, |_| {}, |_, _, _| {})
            .await
            .map_err(|e| format!("the model could not fill the starter: {e}"))?;
        stats.turns += 1;
        let answered_by = answer.model.clone().unwrap_or_else(|| agent.model.clone());
        agent.charge(&answered_by, answer.usage, stats).await;
        let Some(call) = answer.tool_calls.first() else {
            why = "the model answered without filling the slots".into();
            messages.push(Message::assistant(answer.content.clone()));
            messages.push(Message::user("Call fillStarter with the values."));
            continue;
        };
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        ctx.emitter.emit(EventKind::ToolCall { id: call.id.clone(), name: call.name.clone(), arguments: args.clone() });
        let proposed = args.get("values").cloned().unwrap_or(Value::Null);
        match s.fill_in(lang, &proposed) {
            Ok(v) => {
                ctx.emitter.emit(EventKind::ToolResult {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    ok: true,
                    summary: format!("filled the {} starter's slots", s.id()),
                });
                values = Some(v);
                break;
            }
            Err(e) => {
                why = e.to_string();
                ctx.emitter.emit(EventKind::ToolResult {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    ok: false,
                    summary: why.clone(),
                });
                messages.push(Message::assistant_calls(None, vec![call.clone()]));
                messages.push(Message::tool_result(
                    &call.id,
                    &call.name,
                    json!({"ok": false, "error": why}).to_string(),
                ));
            }
        }
    }
    let kept_defaults = values.is_none();
    let (mut values, said) = match values {
        Some(v) => (v, format!("Filled the {} starter's slots for the request.", s.id())),
        None => {
            ctx.emitter.status(Level::Warning, format!("The starter's slots keep their defaults: {why}."));
            (s.defaults_in(lang), format!("Kept the {} starter's defaults ({why}).", s.id()))
        }
    };
    // The page speaks the build's language whatever the model chose.
    for slot in ["lang", "language"] {
        if let Some(v) = values.get_mut(slot).filter(|v| v.is_string()) {
            *v = Value::String(lang.as_str().to_string());
        }
    }
    // What the request is for names the page when the model left the name as it was.
    let values = s.with_subject(lang, values, request);
    let values = s.fill_in(lang, &values).unwrap_or_else(|_| s.defaults_in(lang));
    let files = s.render(&values).map_err(|e| e.to_string())?;
    let mut written = Vec::new();
    for (path, text) in files {
        let out = ctx.workspace.write(&path, text.as_bytes()).map_err(|e| e.to_string())?;
        ctx.emitter.emit(EventKind::FileWritten { path: out.path.clone(), bytes: out.bytes, created: out.created });
        written.push(out.path);
    }
    Ok((written, said, kept_defaults))
}
