//! What each MCP tool does, as the caller it acts for. Every tool calls the very functions the
//! HTTP routes are (`builds::create`, `builds::get`, `tasks::create`, `chat::start_turn`, …), so
//! a build started over MCP meets the same prompt checks, moderation, per-user limits, queue
//! and sandbox as one started with `POST /api/builds`; only the shape of the answer differs.

use super::tools::{MAX_EVENTS, MAX_WAIT_SECS};
use crate::api::{BuildBody, TaskBody};
use crate::auth::Caller;
use crate::error::{ApiError, ApiJson};
use crate::headers::IdempotencyKey;
use crate::state::AppState;
use crate::visitor::ChatCaller;
use axum::extract::{Path, Query, State};
use futures::StreamExt;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam, ProgressToken, Resource};
use rmcp::{Peer, RoleServer};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_events::EventKind;

/// A tool's answer, or the plain message of why it could not give one (sent back as a result
/// with `isError: true`, never as a protocol error: the caller's model reads it and corrects).
pub type Outcome = Result<CallToolResult, String>;

/// Where a progress notification goes, when the caller asked for them.
pub struct Progress {
    pub peer: Peer<RoleServer>,
    pub token: Option<ProgressToken>,
}

/// Why a request was refused, as the caller reads it: the API's message, with when to try again.
pub fn refusal(e: ApiError) -> String {
    match e.retry_after {
        Some(secs) => format!("{} (try again in {secs} s)", e.message),
        None => e.message,
    }
}

/// The tool's arguments as `T`; unknown or mistyped fields are refused with serde's words.
pub fn args<T: DeserializeOwned>(arguments: Option<JsonObject>) -> Result<T, String> {
    serde_json::from_value(Value::Object(arguments.unwrap_or_default())).map_err(|e| format!("arguments: {e}"))
}

/// A structured answer with a one-line text part for clients that show text only.
fn answer(summary: String, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::structured(structured);
    r.content = vec![ContentBlock::text(summary)];
    r
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, String> {
    serde_json::to_value(v).map_err(|e| format!("internal: {e}"))
}

fn status_word(v: &Value) -> String {
    v.as_str().unwrap_or("unknown").to_string()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildApp {
    prompt: String,
    template: Option<String>,
    #[serde(default)]
    wait_seconds: u64,
}

/// `build_app`: queue a build as `POST /api/builds` does (only a prompt and a template: the
/// caller names no checks, hosts or folders), then wait up to `wait_seconds` for it, telling
/// each phase and narration as progress.
pub async fn build_app(
    state: &AppState,
    caller: Caller,
    a: BuildApp,
    progress: Progress,
    cancelled: CancellationToken,
) -> Outcome {
    if a.wait_seconds > MAX_WAIT_SECS {
        return Err(format!("wait_seconds: at most {MAX_WAIT_SECS}; follow a longer build with get_build_events"));
    }
    let body = BuildBody {
        prompt: a.prompt,
        template: a.template,
        lang: None,
        model: None,
        checks: vec![],
        r#continue: None,
        assistant: false,
        allow_hosts: None,
    };
    let (_, created) = crate::builds::create(State(state.clone()), caller, IdempotencyKey(None), ApiJson(body))
        .await
        .map_err(refusal)?;
    let created = created.0;
    let id = created.id.0.clone();
    let mut status = to_value(&created.status)?;
    let mut last_seq = 0;
    let mut success = Value::Null;
    if a.wait_seconds > 0 {
        let events = crate::stream::follow(state.store.clone(), &id, 0, state.streams_stop.clone());
        let deadline = tokio::time::sleep(Duration::from_secs(a.wait_seconds));
        tokio::pin!(events, deadline);
        loop {
            let logged = tokio::select! {
                next = events.next() => match next { Some(l) => l, None => break },
                _ = &mut deadline => break,
                _ = cancelled.cancelled() => break,
            };
            last_seq = logged.event.seq.0;
            if let EventKind::Complete { success: ok, .. } = &logged.event.kind {
                success = Value::Bool(*ok);
            }
            if let (Some(token), Some(message)) = (&progress.token, progress_message(&logged.event.kind)) {
                let note = ProgressNotificationParam::new(token.clone(), last_seq as f64).with_message(message);
                if let Err(e) = progress.peer.notify_progress(note).await {
                    tracing::debug!(build = %id, "a progress notification was not sent: {e}");
                }
            }
            if logged.is_complete() {
                break;
            }
        }
        status = to_value(&state.store.build(&id).await.map_err(|e| refusal(e.into()))?.status)?;
    }
    let summary = format!("build {id}: {}", status_word(&status));
    Ok(answer(
        summary,
        json!({"build_id": id, "status": status, "last_seq": last_seq, "success": success, "deduplicated": created.deduplicated}),
    ))
}

/// What a caller is told of an event while it waits: the phases, the narration and the end.
fn progress_message(kind: &EventKind) -> Option<String> {
    match kind {
        EventKind::Queued { position } => Some(format!("queued ({position} ahead)")),
        EventKind::Started { .. } => Some("started".into()),
        EventKind::Phase { phase, message, .. } => Some(format!("{}: {message}", phase.as_str())),
        EventKind::Status { message, .. } => Some(message.clone()),
        EventKind::Complete { success, .. } => {
            Some(if *success { "complete: verified and published".into() } else { "complete: failed".into() })
        }
        _ => None,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildId {
    build_id: String,
}

/// `get_build`: `GET /api/builds/{id}`'s view, with links to what the build has.
pub async fn get_build(state: &AppState, caller: Caller, a: BuildId) -> Outcome {
    let view = crate::builds::get(State(state.clone()), caller, Path(a.build_id.clone())).await.map_err(refusal)?.0;
    let mut links = vec![];
    // Links only where something answers them: a process that serves HTTP (not `wright mcp
    // serve` over stdio, whose caller reads the same things through these tools).
    if state.cfg.http {
        let api = state.cfg.api_origin();
        let id = &a.build_id;
        links.push(
            Resource::new(format!("{api}/api/builds/{id}"), "report")
                .with_description("the build with its outcome and report (JSON, bearer token)")
                .with_mime_type("application/json"),
        );
        if !view.files.is_empty() {
            links.push(
                Resource::new(format!("{api}/api/builds/{id}/files"), "files")
                    .with_description("the list of the project's files (JSON, bearer token)")
                    .with_mime_type("application/json"),
            );
            links.push(
                Resource::new(format!("{api}/api/builds/{id}/archive"), "archive")
                    .with_description("the project as a .zip (bearer token)")
                    .with_mime_type("application/zip"),
            );
        }
        if let Some(app) = &view.app {
            links.push(
                Resource::new(crate::api::app_url_for(&state.cfg.preview_origin(), &app.slug), "app")
                    .with_description("the published app"),
            );
        } else if let Some(preview) = &view.preview_url {
            links.push(Resource::new(preview.clone(), "preview").with_description("the build's preview"));
        }
    }
    let structured = to_value(&view)?;
    let summary = format!(
        "build {}: {}{}",
        a.build_id,
        status_word(&structured["status"]),
        structured["end_reason"].as_str().map(|r| format!(" ({r})")).unwrap_or_default()
    );
    let mut r = answer(summary, structured);
    r.content.extend(links.into_iter().map(ContentBlock::resource_link));
    Ok(r)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsArgs {
    build_id: String,
    #[serde(default)]
    after_seq: u64,
    limit: Option<u64>,
}

/// `get_build_events`: the run log's events after `after_seq` (the SSE stream's, seq for seq).
pub async fn get_build_events(state: &AppState, caller: Caller, a: EventsArgs) -> Outcome {
    crate::access::visible(state, &caller, &a.build_id).await.map_err(refusal)?;
    let limit = a.limit.unwrap_or(200).clamp(1, MAX_EVENTS) as usize;
    let events = state.store.events(&a.build_id, a.after_seq).await.map_err(|e| refusal(e.into()))?;
    let page: Vec<_> = events.into_iter().take(limit).collect();
    let last_seq = page.last().map_or(a.after_seq, |e| e.seq.0);
    let done = page.iter().any(|e| matches!(e.kind, EventKind::Complete { .. }));
    let summary = format!(
        "{} events of build {} after {}{}",
        page.len(),
        a.build_id,
        a.after_seq,
        if done { "; the build is complete" } else { "" }
    );
    Ok(answer(summary, json!({"build_id": a.build_id, "events": page, "last_seq": last_seq, "done": done})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    limit: Option<u32>,
}

/// `list_builds`: `GET /api/builds`.
pub async fn list_builds(state: &AppState, caller: Caller, a: ListArgs) -> Outcome {
    let q = crate::builds::ListQuery { limit: a.limit, shared: false };
    let builds = crate::builds::list(State(state.clone()), caller, Query(q)).await.map_err(refusal)?.0;
    Ok(answer(format!("{} builds", builds.len()), json!({"builds": builds})))
}

/// `cancel_build`: `POST /api/builds/{id}/cancel`.
pub async fn cancel_build(state: &AppState, caller: Caller, a: BuildId) -> Outcome {
    let c = crate::builds::cancel(State(state.clone()), caller, Path(a.build_id)).await.map_err(refusal)?.0;
    let v = to_value(&c)?;
    Ok(answer(format!("build {}: {}", c.id.0, status_word(&v["status"])), v))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunTask {
    task: Value,
    format: Option<String>,
    project: Option<String>,
}

/// `run_task`: `POST /api/tasks` with the plan (the caller names no folder: a new one, or
/// one of its own ended builds by id).
pub async fn run_task(state: &AppState, caller: Caller, a: RunTask) -> Outcome {
    let body =
        TaskBody { plan: a.task, format: a.format, project: a.project, resume: None, rerun: vec![], model: None };
    let (_, created) = crate::tasks::create(State(state.clone()), caller, IdempotencyKey(None), ApiJson(body))
        .await
        .map_err(refusal)?;
    let c = created.0;
    let status = to_value(&c.status)?;
    Ok(answer(
        format!("task run {}: {}", c.id.0, status_word(&status)),
        json!({"build_id": c.id.0, "status": status, "deduplicated": c.deduplicated}),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `list_apps`: the caller's published apps (`GET /api/apps`, the unpublished left out).
pub async fn list_apps(state: &AppState, caller: Caller) -> Outcome {
    let q = crate::published::AppsQuery { all: None, limit: None };
    let apps = crate::published::list(State(state.clone()), caller, Query(q)).await.map_err(refusal)?.0;
    let apps: Vec<_> = apps.into_iter().filter(|a| a.published).collect();
    Ok(answer(format!("{} published apps", apps.len()), json!({"apps": apps})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chat {
    conversation: Option<String>,
    message: String,
}

/// `chat`: a message to the chat agent, as `POST /api/chat/{id}/messages` sends it (same
/// checks, same per-user limits), and its reply's parts once the turn is done.
pub async fn chat(state: &AppState, caller: Caller, a: Chat, cancelled: CancellationToken) -> Outcome {
    let conversation = match a.conversation {
        Some(id) => {
            crate::turns::owned_by(state, &caller.0.id, &id).await.map_err(refusal)?;
            id
        }
        None => {
            let who = ChatCaller::User(caller.0.clone());
            crate::chat::create(State(state.clone()), who).await.map_err(refusal)?.1.0.id
        }
    };
    let content = crate::chat::checked_message(state, &a.message).await.map_err(refusal)?;
    let run = crate::chat::start_turn(
        state,
        &caller,
        conversation.clone(),
        content,
        Default::default(),
        wright_events::Lang::En,
    )
    .await
    .map_err(refusal)?;
    let events = crate::stream::follow(state.store.clone(), &run, 0, state.streams_stop.clone());
    tokio::pin!(events);
    let (mut text, mut parts, mut finish) = (String::new(), Value::Array(vec![]), Value::Null);
    loop {
        let logged = tokio::select! {
            next = events.next() => match next { Some(l) => l, None => break },
            _ = cancelled.cancelled() => break,
        };
        match &logged.event.kind {
            EventKind::TextDelta { text: t } => text.push_str(t),
            // The user's message comes first, then the reply.
            kind @ EventKind::ChatMessage { message } if message.role != wright_events::chat::Role::User => {
                parts = wright_events::chat_sse::sse_data(kind).get("parts").cloned().unwrap_or(Value::Array(vec![]));
            }
            kind @ EventKind::Complete { .. } => {
                finish = wright_events::chat_sse::sse_data(kind).get("finish_reason").cloned().unwrap_or(Value::Null);
                break;
            }
            _ => {}
        }
    }
    let summary = if text.is_empty() { "(no text in the reply; see its parts)".to_string() } else { text.clone() };
    Ok(answer(
        summary,
        json!({"conversation": conversation, "run": run, "text": text, "parts": parts, "finish_reason": finish}),
    ))
}
