//! The tools wright offers over MCP: their names, descriptions, input schemas and output
//! schemas. What a caller may pass is exactly what these schemas name: a prompt, a template, a
//! build id, a task plan, a message. No path, command or endpoint is among them: the caller is
//! untrusted, and anything else (checks, hosts, folders) stays the server's to decide.

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::Arc;

/// The longest a `build_app` call waits for its build before answering (MCP clients give up
/// on a call after about a minute: codex waits 60 s).
pub const MAX_WAIT_SECS: u64 = 50;
/// Most events one `get_build_events` call returns.
pub const MAX_EVENTS: u64 = 1000;

pub const BUILD_APP: &str = "build_app";
pub const GET_BUILD: &str = "get_build";
pub const GET_BUILD_EVENTS: &str = "get_build_events";
pub const LIST_BUILDS: &str = "list_builds";
pub const CANCEL_BUILD: &str = "cancel_build";
pub const RUN_TASK: &str = "run_task";
pub const LIST_APPS: &str = "list_apps";
pub const CHAT: &str = "chat";

fn object(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// A build as `GET /api/builds/{id}` shows it (the fields a caller most needs are named; the
/// rest are there too).
fn build_view() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "kind": {"type": "string"},
            "status": {"type": "string", "description": "queued, running, published or failed"},
            "end_reason": {"type": ["string", "null"]},
            "prompt": {"type": "string"},
            "template": {"type": "string"},
            "files": {"type": "array", "items": {"type": "string"}},
            "fix_attempts": {"type": "integer"},
            "queue_position": {"type": ["integer", "null"]},
            "report": {},
            "app": {},
            "preview_url": {"type": ["string", "null"]}
        },
        "required": ["id", "status"]
    })
}

fn id_input(what: &str) -> Value {
    json!({
        "type": "object",
        "properties": {"build_id": {"type": "string", "description": what}},
        "required": ["build_id"],
        "additionalProperties": false
    })
}

fn tool(name: &'static str, description: &'static str, input: Value, output: Value, read_only: bool) -> Tool {
    Tool::new(name, description, object(input))
        .with_raw_output_schema(object(output))
        .with_annotations(ToolAnnotations::new().read_only(read_only).destructive(false).open_world(false))
}

/// Every tool, in the order `tools/list` gives them.
pub fn all() -> Vec<Tool> {
    vec![
        tool(
            BUILD_APP,
            "Build a web app or a Python, Rust or Go program from a description: wright plans it, writes it, \
             verifies it and fixes it until its checks pass, then publishes it. Answers with the build's id at once, or after waiting up to \
             `wait_seconds` (at most 50) for it to end, sending progress notifications as it goes. Follow a \
             build with get_build_events until its `complete` event, or get_build.",
            json!({
                "type": "object",
                "properties": {
                    "prompt": {"type": "string", "description": "What to build, in plain words (10 to 2,000 characters unless the server says otherwise)."},
                    "template": {"type": "string", "enum": wright_events::Template::ALL.iter().map(|t| t.as_str()).collect::<Vec<_>>(), "description": "The kind of project [default: auto]."},
                    "wait_seconds": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_SECS, "description": "Wait up to this many seconds for the build to end [default: 0]."}
                },
                "required": ["prompt"],
                "additionalProperties": false
            }),
            json!({
                "type": "object",
                "properties": {
                    "build_id": {"type": "string"},
                    "status": {"type": "string", "description": "queued, running, published or failed"},
                    "last_seq": {"type": "integer", "description": "The last event seen while waiting; get_build_events continues after it."},
                    "success": {"type": ["boolean", "null"], "description": "Once the build ended: whether its verification passed."},
                    "deduplicated": {"type": "boolean"}
                },
                "required": ["build_id", "status"]
            }),
            false,
        ),
        tool(
            GET_BUILD,
            "One of your builds with its outcome and report, and links to its report, files, archive and app.",
            id_input("The build's id (from build_app or list_builds)."),
            build_view(),
            true,
        ),
        tool(
            GET_BUILD_EVENTS,
            "A build's events after `after_seq` (the same events, numbered 1, 2, 3… without gaps, as its event \
             stream): call again with the last `seq` until `done` is true (the last event is `complete`).",
            json!({
                "type": "object",
                "properties": {
                    "build_id": {"type": "string"},
                    "after_seq": {"type": "integer", "minimum": 0, "description": "Events after this seq [default: 0, from the start]."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_EVENTS, "description": "At most this many [default: 200]."}
                },
                "required": ["build_id"],
                "additionalProperties": false
            }),
            json!({
                "type": "object",
                "properties": {
                    "build_id": {"type": "string"},
                    "events": {"type": "array", "items": {"type": "object", "properties": {"seq": {"type": "integer"}, "type": {"type": "string"}}, "required": ["seq", "type"]}},
                    "last_seq": {"type": "integer"},
                    "done": {"type": "boolean", "description": "The build's `complete` event is among the events returned."}
                },
                "required": ["build_id", "events", "last_seq", "done"]
            }),
            true,
        ),
        tool(
            LIST_BUILDS,
            "Your builds and task runs, newest first.",
            json!({
                "type": "object",
                "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 500, "description": "At most this many [default: 50]."}},
                "additionalProperties": false
            }),
            json!({"type": "object", "properties": {"builds": {"type": "array", "items": build_view()}}, "required": ["builds"]}),
            true,
        ),
        tool(
            CANCEL_BUILD,
            "Stop a queued or running build or task run; its events still end with `complete`.",
            id_input("The build's id."),
            json!({
                "type": "object",
                "properties": {"id": {"type": "string"}, "status": {"type": "string", "description": "cancelled, cancelling or ended"}},
                "required": ["id", "status"]
            }),
            false,
        ),
        tool(
            RUN_TASK,
            "Run a task plan (the task file `wright task run` takes: `{goal?, tasks: [...]}`) as a run of its \
             own, on one of your ended builds (`project`) or in a new folder. Follow it with get_build_events.",
            json!({
                "type": "object",
                "properties": {
                    "task": {"description": "The plan: an object `{goal?, tasks: [...]}`, one task, a list of tasks, or the file's text."},
                    "format": {"type": "string", "enum": ["json", "toml"], "description": "How a plan given as text is written [default: json]."},
                    "project": {"type": "string", "description": "The id of one of your ended builds to work on."}
                },
                "required": ["task"],
                "additionalProperties": false
            }),
            json!({
                "type": "object",
                "properties": {"build_id": {"type": "string"}, "status": {"type": "string"}, "deduplicated": {"type": "boolean"}},
                "required": ["build_id", "status"]
            }),
            false,
        ),
        tool(
            LIST_APPS,
            "Your published apps, newest first, with their addresses.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            json!({
                "type": "object",
                "properties": {"apps": {"type": "array", "items": {"type": "object", "properties": {"slug": {"type": "string"}, "title": {"type": "string"}, "url": {"type": "string"}, "build_id": {"type": "string"}}}}},
                "required": ["apps"]
            }),
            true,
        ),
        tool(
            CHAT,
            "Send a message to wright's tutoring chat agent (it explains code, draws diagrams, makes quizzes and \
             flashcards) and get its reply. Without `conversation` a new one is started; pass the returned id \
             to go on with it.",
            json!({
                "type": "object",
                "properties": {
                    "conversation": {"type": "string", "description": "A conversation id from an earlier chat call."},
                    "message": {"type": "string", "description": "What to say."}
                },
                "required": ["message"],
                "additionalProperties": false
            }),
            json!({
                "type": "object",
                "properties": {
                    "conversation": {"type": "string"},
                    "run": {"type": "string"},
                    "text": {"type": "string", "description": "The reply's text."},
                    "parts": {"type": "array", "items": {"type": "object"}, "description": "The reply's parts (text, diagram, quiz, flashcards, code…), as the chat API gives them."},
                    "finish_reason": {"type": "string", "description": "stop, round_limit, cancelled or error"}
                },
                "required": ["conversation", "text", "parts"]
            }),
            false,
        ),
    ]
}
