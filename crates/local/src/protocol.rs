//! How wright talks to a small local model: one JSON object per turn, forced by a grammar.
//!
//! Chat templates of small models know nothing of tools, so the tools are described in the
//! system message, every past tool call is shown back in the same JSON form, and tool results
//! arrive as user messages. Sampling is constrained by a JSON Schema (turned into a llama.cpp
//! grammar) that admits exactly `{"tool": NAME, "arguments": {…matching NAME's schema…}}` or
//! `{"answer": "…"}`.

use serde_json::{Value, json};
use wright_provider::{Message, Role, ToolSpec};

/// One message in the model's own chat template terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTurn {
    pub role: &'static str,
    pub content: String,
}

/// What the model produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Call {
        name: String,
        arguments: String,
    },
    Answer(String),
    /// Not the expected shape (no grammar, or output cut at the token limit).
    Raw(String),
}

/// The instructions appended to the system message when tools are offered.
pub fn tool_instructions(tools: &[ToolSpec]) -> String {
    let mut s = String::from(
        "\n\nTo act, reply with exactly one JSON object and nothing else.\n\
         Use a tool: {\"tool\": \"<tool name>\", \"arguments\": {<the tool's arguments>}}\n\
         When everything is done: {\"answer\": \"<one sentence about what you built>\"}\n\
         Tools:\n",
    );
    for t in tools {
        let args = t.parameters.get("properties").and_then(Value::as_object).map(|p| {
            p.iter()
                .map(|(k, v)| format!("{k}: {}", v.get("type").map(type_word).unwrap_or_else(|| "value".into())))
                .collect::<Vec<_>>()
                .join(", ")
        });
        s.push_str(&format!("- {}({}): {}\n", t.name, args.unwrap_or_default(), t.description));
    }
    s
}

fn type_word(t: &Value) -> String {
    match t {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().filter_map(Value::as_str).filter(|s| *s != "null").collect::<Vec<_>>().join("|"),
        _ => "value".into(),
    }
}

/// A worked exchange shown before the real conversation when `createFile` is offered: small
/// models copy a demonstrated pattern (real file content, then a final answer once the tool
/// says ok) far more reliably than they follow instructions.
fn example_exchange() -> Vec<ChatTurn> {
    let page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n  <title>Hello</title>\n</head>\n<body>\n  <h1>Hello!</h1>\n  <p>Welcome to my page.</p>\n</body>\n</html>\n";
    vec![
        ChatTurn { role: "user", content: "(Example) Make a page that says hello.".into() },
        ChatTurn {
            role: "assistant",
            content: json!({"tool": "createFile", "arguments": {"path": "index.html", "content": page}}).to_string(),
        },
        ChatTurn {
            role: "user",
            content: "Result of createFile: {\"ok\":true,\"path\":\"index.html\",\"bytes\":178}".into(),
        },
        ChatTurn {
            role: "assistant",
            content: json!({"answer": "I made index.html, a page that says hello."}).to_string(),
        },
    ]
}

/// Turn the conversation into the model's chat, with the tool protocol folded in.
pub fn render(messages: &[Message], tools: &[ToolSpec]) -> Vec<ChatTurn> {
    let mut out: Vec<ChatTurn> = Vec::new();
    let instructions = if tools.is_empty() { String::new() } else { tool_instructions(tools) };
    for m in messages {
        let text = m.content.clone().unwrap_or_default();
        match m.role {
            Role::System => {
                if let Some(first) = out.iter_mut().find(|t| t.role == "system") {
                    first.content.push_str(&format!("\n\n{text}"));
                } else {
                    out.push(ChatTurn { role: "system", content: text });
                }
            }
            Role::User => out.push(ChatTurn { role: "user", content: text }),
            Role::Assistant => {
                let mut parts = Vec::new();
                for c in &m.tool_calls {
                    let args: Value = serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                    parts.push(json!({"tool": c.name, "arguments": args}).to_string());
                }
                if parts.is_empty() {
                    parts.push(json!({"answer": text}).to_string());
                }
                out.push(ChatTurn { role: "assistant", content: parts.join("\n") });
            }
            Role::Tool => {
                let name = m.name.clone().unwrap_or_else(|| "the tool".into());
                out.push(ChatTurn { role: "user", content: format!("Result of {name}: {text}") });
            }
        }
    }
    if !instructions.is_empty() {
        match out.iter_mut().find(|t| t.role == "system") {
            Some(s) => s.content.push_str(&instructions),
            None => out.insert(0, ChatTurn { role: "system", content: instructions.trim_start().to_string() }),
        }
    }
    if tools.iter().any(|t| t.name == "createFile") {
        let at = out.iter().position(|t| t.role != "system").unwrap_or(out.len());
        for (i, turn) in example_exchange().into_iter().enumerate() {
            out.insert(at + i, turn);
        }
    }
    out
}

/// Close every object schema so the grammar admits no invented argument names.
fn closed(schema: &Value) -> Value {
    match schema {
        Value::Object(o) => {
            let mut o: serde_json::Map<String, Value> = o.iter().map(|(k, v)| (k.clone(), closed(v))).collect();
            if o.get("type") == Some(&json!("object")) {
                o.insert("additionalProperties".into(), json!(false));
            }
            o.remove("description");
            Value::Object(o)
        }
        Value::Array(a) => Value::Array(a.iter().map(closed).collect()),
        other => other.clone(),
    }
}

/// The JSON Schema every reply must satisfy: one tool call (arguments per that tool's schema)
/// or a final answer.
pub fn grammar_schema(tools: &[ToolSpec]) -> Value {
    grammar_schema_for(tools, true)
}

/// [`grammar_schema`]; without `answer_allowed`, only a call of one of `tools` is admitted.
pub fn grammar_schema_for(tools: &[ToolSpec], answer_allowed: bool) -> Value {
    let mut options: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({
                "type": "object",
                "properties": {"tool": {"const": t.name}, "arguments": closed(&t.parameters)},
                "required": ["tool", "arguments"],
                "additionalProperties": false
            })
        })
        .collect();
    if answer_allowed {
        options.push(json!({
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
            "additionalProperties": false
        }));
    }
    json!({"oneOf": options})
}

/// Read the model's reply.
pub fn parse_output(text: &str, tools: &[ToolSpec]) -> Parsed {
    let trimmed = text.trim();
    let Ok(v) = serde_json::from_str::<Value>(trimmed) else { return Parsed::Raw(trimmed.to_string()) };
    if let Some(name) = v.get("tool").and_then(Value::as_str) {
        if tools.iter().any(|t| t.name == name) {
            let args = v.get("arguments").cloned().unwrap_or_else(|| json!({}));
            return Parsed::Call { name: name.to_string(), arguments: args.to_string() };
        }
    }
    if let Some(a) = v.get("answer").and_then(Value::as_str) {
        return Parsed::Answer(a.to_string());
    }
    Parsed::Raw(trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wright_provider::ToolCall;

    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "createFile".into(),
            description: "Create a file.".into(),
            parameters: json!({"type":"object","properties":{"path":{"type":"string","description":"p"},"content":{"type":"string"}},"required":["path","content"]}),
        }]
    }

    #[test]
    fn renders_history_in_the_protocol() {
        let msgs = vec![
            Message::system("be kind"),
            Message::user("make a page"),
            Message::assistant_calls(
                None,
                vec![ToolCall {
                    id: "c".into(),
                    name: "createFile".into(),
                    arguments: "{\"path\":\"a\",\"content\":\"b\"}".into(),
                }],
            ),
            Message::tool_result("c", "createFile", "{\"ok\":true}"),
            Message::assistant("done"),
        ];
        let r = render(&msgs, &tools());
        assert_eq!(r[0].role, "system");
        assert!(
            r[0].content.starts_with("be kind") && r[0].content.contains("- createFile(path: string, content: string)")
        );
        // The worked example sits between the system message and the real conversation.
        assert!(r[1].content.starts_with("(Example)") && r[2].content.contains("<!DOCTYPE html>"));
        assert_eq!(r[5].content, "make a page");
        assert_eq!(r[6].content, "{\"tool\":\"createFile\",\"arguments\":{\"path\":\"a\",\"content\":\"b\"}}");
        assert_eq!(r[7], ChatTurn { role: "user", content: "Result of createFile: {\"ok\":true}".into() });
        assert_eq!(r[8].content, "{\"answer\":\"done\"}");
    }

    #[test]
    fn grammar_schema_is_closed_and_parses_back() {
        let s = grammar_schema(&tools());
        assert_eq!(s["oneOf"][0]["properties"]["arguments"]["additionalProperties"], false);
        assert_eq!(s["oneOf"][1]["required"], json!(["answer"]));
        let only_calls = grammar_schema_for(&tools(), false);
        assert_eq!(only_calls["oneOf"].as_array().map(Vec::len), Some(1), "no plain answer when a call is required");
        assert_eq!(
            parse_output(" {\"tool\":\"createFile\",\"arguments\":{\"path\":\"x\",\"content\":\"y\"}} ", &tools()),
            Parsed::Call { name: "createFile".into(), arguments: "{\"path\":\"x\",\"content\":\"y\"}".into() }
        );
        assert_eq!(parse_output("{\"answer\":\"ok\"}", &tools()), Parsed::Answer("ok".into()));
        assert_eq!(
            parse_output("{\"tool\":\"nope\",\"arguments\":{}}", &tools()),
            Parsed::Raw("{\"tool\":\"nope\",\"arguments\":{}}".into())
        );
        assert_eq!(parse_output("{\"tool\":\"crea", &tools()), Parsed::Raw("{\"tool\":\"crea".into()));
    }
}
