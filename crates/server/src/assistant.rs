//! The in-app assistant's routes: which client tools the caller's assistant offers, the page's
//! results of a round (accepted only for pending calls of that conversation, then the turn
//! resumes on this server whichever server asked), the calls still pending after a reload,
//! embed keys and their visitors, and `/v1/embeddings` on the OpenAI wire.

use crate::auth::{Caller, hash_token};
use crate::error::{ApiError, ApiJson, ApiResult};
use crate::limits::Route;
use crate::metrics::ChatSink;
use crate::state::AppState;
use crate::turns::{owned_by, sse};
use crate::visitor::{ChatCaller, embed_key_of, new_embed_key, new_visitor_token, origin_allowed, wrong_origin};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;
use wright_chat::assistant::{MAX_OUTPUT_CHARS, ui_tools};
use wright_engine::{AssistantScope, ChatJob};
use wright_events::chat::{AssistantView, ClientToolDef, DocsStatus, PendingCall, PendingView, ToolResultsBody};
use wright_events::{EventKind, Lang};
use wright_store::{Answer, Answered, EmbedKey, Quota};

/// Results one post may carry.
const MAX_RESULTS: usize = 64;

/// The assistant of wright's own UI, or of the app whose key `key` is.
pub async fn scope_of(state: &AppState, key: Option<&EmbedKey>) -> AssistantScope {
    let docs_dir = match key {
        None => state.engine.wright_docs_dir().map(Some).unwrap_or_else(|e| {
            tracing::warn!("wright's docs are not searchable: {e}");
            None
        }),
        Some(k) => k.docs_dir.as_ref().map(std::path::PathBuf::from),
    };
    let docs = match docs_dir {
        Some(dir) => match state.engine.docs_index(&dir, &state.streams_stop).await {
            Ok(index) => Some(index),
            Err(e) => {
                tracing::warn!("documents of {} are not searchable: {e}", dir.display());
                None
            }
        },
        None => None,
    };
    match key {
        None => AssistantScope { id: "wright".into(), app: "wright".into(), tools: ui_tools::ui_tools(), docs },
        Some(k) => AssistantScope { id: format!("key:{}", k.id), app: k.name.clone(), tools: k.tools.clone(), docs },
    }
}

/// The scope a stored turn was started in.
async fn scope_named(state: &AppState, id: &str) -> ApiResult<AssistantScope> {
    match id.strip_prefix("key:") {
        None => Ok(scope_of(state, None).await),
        Some(key) => {
            let key = state
                .store
                .embed_key(key)
                .await?
                .filter(|k| k.revoked_at.is_none())
                .ok_or_else(|| ApiError::forbidden("this app's embed key was revoked"))?;
            Ok(scope_of(state, Some(&key)).await)
        }
    }
}

fn key_of(caller: &ChatCaller) -> Option<&EmbedKey> {
    match caller {
        ChatCaller::User(_) => None,
        ChatCaller::Visitor { key, .. } => Some(key),
    }
}

/// The client tools a message names, checked against the assistant's own: names only (a page
/// cannot add a tool or rewrite what one tells the model), each known, none twice.
pub fn check_client_tools(asked: &[serde_json::Value], offered: &[ClientToolDef]) -> ApiResult<Vec<String>> {
    let names: Vec<&str> = offered.iter().map(|d| d.name.as_str()).collect();
    let mut out: Vec<String> = Vec::new();
    for v in asked {
        let Some(name) = v.as_str() else {
            return Err(ApiError::invalid(
                "invalid_fields",
                format!(
                    "client_tools: name the tools this server defines ({}); a page cannot define or describe a tool",
                    names.join(", ")
                ),
            ));
        };
        if !names.contains(&name) {
            return Err(ApiError::invalid(
                "invalid_fields",
                format!("client_tools: this assistant has no tool `{name}` ({})", names.join(", ")),
            ));
        }
        if !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    Ok(out)
}

/// The quotas one model call of `caller`'s uses: their messages an hour, and an app's visitor
/// also their key's (all its visitors together).
fn model_calls(state: &AppState, caller: &ChatCaller) -> Vec<Quota> {
    let mut quotas = vec![Route::ChatMessages.quota(&state.cfg.limits, &caller.limit_key())];
    if let ChatCaller::Visitor { key, .. } = caller {
        quotas.push(Quota::per_hour(format!("key:{}", key.id), key.per_hour));
    }
    quotas
}

/// Who pays for a caller's turns (their monthly spend, [`crate::spend`]): the user, or for an
/// app's visitor the embed key's owner.
fn payer(caller: &ChatCaller) -> &str {
    match caller {
        ChatCaller::User(u) => &u.id,
        ChatCaller::Visitor { key, .. } => &key.owner_id,
    }
}

/// The quotas a new assistant turn uses: one of the caller's assistant turns an hour (first,
/// so a refusal names it when both are used up), and its first model call's (a resume is a
/// model call, not a turn).
fn turn_calls(state: &AppState, caller: &ChatCaller) -> Vec<Quota> {
    let mut quotas = vec![Route::AssistantTurns.quota(&state.cfg.limits, &caller.limit_key())];
    quotas.extend(model_calls(state, caller));
    quotas
}

/// How long a visitor's session lasts unused (`[assistant] visitor_idle_hours`, 24).
fn visitor_idle(state: &AppState) -> std::time::Duration {
    let hours = state.engine.file().assistant.visitor_idle_hours.unwrap_or(24).max(1);
    std::time::Duration::from_secs(hours.saturating_mul(3600))
}

/// Start an assistant turn for a message already checked by `chat::send`: close the turn that
/// waits for the page (a reload or a new message), record this one, run it in its own task.
pub async fn start_turn(
    state: &AppState,
    caller: &ChatCaller,
    conversation: String,
    content: String,
    client_tools: &[serde_json::Value],
    lang: Lang,
) -> ApiResult<Response> {
    let scope = scope_of(state, key_of(caller)).await;
    let tools = check_client_tools(client_tools, &scope.tools)?;
    crate::spend::check(state, payer(caller)).await?;
    let slot = state
        .limits
        .hold(format!("turn:{}", caller.limit_key()), &turn_calls(state, caller), "chat_rate", crate::limits::BUSY)
        .await?;
    if let ChatCaller::Visitor { id, .. } = caller
        && let Err(e) = state.store.touch_visitor(id, visitor_idle(state)).await
    {
        tracing::warn!(visitor = %id, "the visitor's session was not moved on: {e}");
    }
    let closed = state
        .engine
        .close_waiting_turns(&conversation, "cancelled: a new message was sent before this action ran", lang)
        .await;
    if closed > 0 {
        tracing::info!(conversation, closed, "waiting assistant turns closed by a new message");
    }
    let mut job = ChatJob {
        run: wright_engine::new_build_id(),
        asked: None,
        conversation,
        user: caller.owner(),
        content,
        modes: Default::default(),
        lang,
    };
    state.engine.record_chat_turn(&mut job).await.map_err(|e| ApiError::internal(e.to_string()))?;
    crate::spend::charge_turn(state, &job.run, payer(caller)).await;
    let run = job.run.clone();
    let (engine, metrics, stop) = (state.engine.clone(), state.metrics.clone(), state.streams_stop.clone());
    tokio::spawn(async move {
        let _slot = slot;
        let sinks: Vec<Arc<dyn wright_events::EventSink>> = vec![Arc::new(ChatSink(metrics))];
        let run = job.run.clone();
        let task = {
            let engine = engine.clone();
            tokio::spawn(async move { engine.assistant_turn(job, scope, tools, sinks, stop.child_token()).await })
        };
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!("assistant turn could not run: {e}"),
            Err(e) => {
                tracing::error!(run = %run, "assistant turn stopped unexpectedly: {e}");
                engine.fail_chat_turn(&run, "Something went wrong while answering; send the message again.").await;
            }
        }
    });
    Ok(sse(state, &run, 0, true))
}

/// The client tools the caller's assistant offers, its round cap, and whether it has documents.
#[utoipa::path(get, path = "/api/assistant", security(("bearer" = [])),
    responses((status = 200, body = AssistantView), (status = 401, body = crate::api::ErrorBody)))]
pub async fn view(State(state): State<AppState>, caller: ChatCaller) -> ApiResult<Json<AssistantView>> {
    let scope = scope_of(&state, key_of(&caller)).await;
    let docs_index = match &scope.docs {
        Some(index) => index.status().await.ok().map(|s| DocsStatus {
            files: s.files as u64,
            chunks: s.chunks as u64,
            embedded: s.embedded as u64,
        }),
        None => None,
    };
    Ok(Json(AssistantView {
        tools: scope.tools,
        max_rounds: state.engine.assistant_max_rounds(),
        docs: scope.docs.is_some(),
        docs_index,
    }))
}

/// The page's results of a round of client tool calls, as one batch in the calls' order. The
/// answer streams the turn's events from the round's `client_tool_calls` on (the turn goes on
/// once the round's last result is in).
#[utoipa::path(post, path = "/api/chat/{id}/tool-results", params(("id" = String, Path)), request_body = ToolResultsBody,
    security(("bearer" = [])),
    responses((status = 200, description = "text/event-stream of chat events"), (status = 404, body = crate::api::ErrorBody),
        (status = 422, body = crate::api::ErrorBody)))]
pub async fn tool_results(
    State(state): State<AppState>,
    caller: ChatCaller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ToolResultsBody>,
) -> ApiResult<Response> {
    owned_by(&state, &caller.owner(), &id).await?;
    if body.results.is_empty() || body.results.len() > MAX_RESULTS {
        return Err(ApiError::invalid("invalid_results", format!("results: give 1 to {MAX_RESULTS} results")));
    }
    let mut answers = Vec::new();
    for r in &body.results {
        let answer = match (&r.output, &r.error) {
            (Some(out), None) => Answer::Output(match out {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            (None, Some(err)) => Answer::Error(err.clone()),
            _ => {
                return Err(ApiError::invalid(
                    "invalid_results",
                    format!("result {}: give either `output` or `error`", r.id),
                ));
            }
        };
        let chars = match &answer {
            Answer::Output(t) | Answer::Error(t) => t.chars().count(),
        };
        if chars > MAX_OUTPUT_CHARS {
            return Err(ApiError::invalid(
                "invalid_results",
                format!("result {}: {chars} characters; at most {MAX_OUTPUT_CHARS}", r.id),
            ));
        }
        answers.push((r.id.clone(), answer));
    }
    let answered = state.store.answer_calls(&id, &answers, &wright_engine::answerer()).await.map_err(|e| match e {
        wright_store::StoreError::Invalid(m) => ApiError::invalid("invalid_results", m),
        other => other.into(),
    })?;
    let run = match &answered {
        Answered::Waiting { run, .. } | Answered::RoundComplete { run } => run.clone(),
    };
    // The stream picks up after the round's calls, so the client sees what follows them.
    let after = state
        .store
        .events(&run, 0)
        .await?
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ClientToolCalls { .. }))
        .map(|e| e.seq.0)
        .next_back()
        .unwrap_or(0);
    if let Answered::RoundComplete { run } = answered {
        // This request resumes the turn (no one else will): if it cannot, the turn ends here
        // rather than wait for ever.
        let ready = match state.store.assistant_turn(&run).await {
            Ok(turn) => scope_named(&state, &turn.assistant).await.map(|scope| (turn, scope)),
            Err(e) => Err(e.into()),
        };
        let (turn, scope) = match ready {
            Ok(r) => r,
            Err(e) => {
                state.engine.fail_chat_turn(&run, &format!("This turn could not go on: {}", e.message)).await;
                return Err(e);
            }
        };
        // Going on is another model call: it counts against the caller's rate like a message.
        // Over it, the turn ends here, saying why, rather than wait for a post that will not come.
        if let Err(refused) = state.limits.count(&model_calls(&state, &caller), "chat_rate").await {
            state.engine.fail_chat_turn(&run, &format!("This turn could not go on: {}", refused.message)).await;
            return Err(refused);
        }
        let lang = turn.lang;
        let (engine, metrics, stop) = (state.engine.clone(), state.metrics.clone(), state.streams_stop.clone());
        tokio::spawn(async move {
            let sinks: Vec<Arc<dyn wright_events::EventSink>> = vec![Arc::new(ChatSink(metrics))];
            let task = {
                let (engine, run) = (engine.clone(), run.clone());
                tokio::spawn(
                    async move { engine.resume_assistant_turn(&run, scope, lang, sinks, stop.child_token()).await },
                )
            };
            match task.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::error!("assistant turn could not go on: {e}"),
                Err(e) => {
                    tracing::error!(run = %run, "assistant turn stopped unexpectedly: {e}");
                    engine.fail_chat_turn(&run, "Something went wrong while answering; send the message again.").await;
                }
            }
        });
    }
    Ok(sse(&state, &run, after, true))
}

/// The client tool calls of the conversation still waiting for the page (after a reload):
/// read-only ones may be run again; the others should be answered with an error.
#[utoipa::path(get, path = "/api/chat/{id}/pending", params(("id" = String, Path)), security(("bearer" = [])),
    responses((status = 200, body = PendingView), (status = 404, body = crate::api::ErrorBody)))]
pub async fn pending(
    State(state): State<AppState>,
    caller: ChatCaller,
    Path(id): Path<String>,
) -> ApiResult<Json<PendingView>> {
    owned_by(&state, &caller.owner(), &id).await?;
    let calls = state.store.pending_calls(&id).await?;
    Ok(Json(PendingView {
        run: calls.first().map(|c| c.run.clone()),
        calls: calls
            .into_iter()
            .map(|c| PendingCall {
                arguments: serde_json::from_str(&c.arguments).unwrap_or(serde_json::Value::Null),
                id: c.id,
                name: c.name,
                read_only: c.read_only,
                round: c.round,
                deadline: c.deadline,
            })
            .collect(),
    }))
}

/// `201` answer to `POST /api/embed/visitors`.
#[derive(Debug, Serialize, ToSchema)]
pub struct VisitorCreated {
    /// Send it as `Authorization: Bearer …` on the chat routes; it owns this visitor's
    /// conversations only.
    pub token: String,
}

/// Start an anonymous visitor session for a page that embeds an assistant (header
/// `X-Wright-Embed-Key`), from an origin the key allows.
#[utoipa::path(post, path = "/api/embed/visitors", security(()),
    responses((status = 201, body = VisitorCreated), (status = 401, body = crate::api::ErrorBody),
        (status = 403, body = crate::api::ErrorBody), (status = 429, body = crate::api::ErrorBody)))]
pub async fn visitors(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> ApiResult<(StatusCode, Json<VisitorCreated>)> {
    let key = embed_key_of(&state, &headers).await?.ok_or_else(ApiError::unauthorized)?;
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok())
        && !origin_allowed(&key, origin)
    {
        return Err(wrong_origin(origin));
    }
    // Sessions are cheap to ask for: a key's visitors start at most so many an hour, and at
    // most so many are live at once (each ends once unused for a while).
    let started = Quota::per_hour(format!("visitors:{}", key.id), key.per_hour.saturating_mul(10));
    state.limits.count(&[started], "visitor_sessions").await?;
    let token = new_visitor_token();
    let id = format!("v-{}", &uuid::Uuid::new_v4().simple().to_string()[..16]);
    let cap = state.engine.file().assistant.max_visitors_per_key.unwrap_or(10_000).max(1);
    if !state.store.create_visitor(&id, &hash_token(&token), &key.id, visitor_idle(&state), cap).await? {
        state.metrics.refused("visitor_sessions");
        return Err(ApiError::too_many(
            "rate_limited",
            format!("this app has {cap} visitor sessions open, the most at once; try again later"),
            600,
        ));
    }
    Ok((StatusCode::CREATED, Json(VisitorCreated { token })))
}

/// `POST /api/embed-keys`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EmbedKeyBody {
    /// The app's name, as its assistant calls it.
    pub name: String,
    /// Origins whose pages may use the key, e.g. `https://app.example`.
    pub origins: Vec<String>,
    /// The tools the app's pages run [default: describe_app_ui, click_element, fill_form_element].
    #[serde(default)]
    pub tools: Option<Vec<ClientToolDef>>,
    /// A folder on the server with the app's documents (admins only).
    #[serde(default)]
    pub docs_dir: Option<String>,
    /// Messages an hour for all the app's visitors [default: 200].
    #[serde(default)]
    pub per_hour: Option<u32>,
}

/// An embed key as its owner sees it (`key` only in the answer that made it).
#[derive(Debug, Serialize, ToSchema)]
pub struct EmbedKeyView {
    pub id: String,
    pub name: String,
    pub origins: Vec<String>,
    pub tools: Vec<String>,
    pub docs: bool,
    pub per_hour: u32,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

fn key_view(k: EmbedKey, secret: Option<String>) -> EmbedKeyView {
    EmbedKeyView {
        id: k.id,
        name: k.name,
        origins: k.origins,
        tools: k.tools.into_iter().map(|t| t.name).collect(),
        docs: k.docs_dir.is_some(),
        per_hour: k.per_hour,
        created_at: k.created_at,
        revoked_at: k.revoked_at,
        key: secret,
    }
}

/// `origin` as a key stores it: scheme, host and port, nothing after.
fn check_origin(origin: &str) -> ApiResult<String> {
    let o = origin.trim().trim_end_matches('/');
    let ok = (o.starts_with("http://") || o.starts_with("https://"))
        && o.split_once("://").is_some_and(|(_, rest)| !rest.is_empty() && !rest.contains(['/', '?', '#', ' ']));
    if !ok {
        return Err(ApiError::invalid(
            "invalid_fields",
            format!("origins: `{origin}` is not an origin (scheme://host[:port], e.g. https://app.example)"),
        ));
    }
    Ok(o.to_ascii_lowercase())
}

/// Make an embed key for one of your apps; its secret is shown once.
#[utoipa::path(post, path = "/api/embed-keys", request_body = EmbedKeyBody, security(("bearer" = [])),
    responses((status = 201, body = EmbedKeyView), (status = 422, body = crate::api::ErrorBody)))]
pub async fn create_key(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<EmbedKeyBody>,
) -> ApiResult<(StatusCode, Json<EmbedKeyView>)> {
    let name = body.name.trim();
    if name.is_empty() || name.chars().count() > 80 {
        return Err(ApiError::invalid("invalid_fields", "name: 1 to 80 characters"));
    }
    if body.origins.is_empty() || body.origins.len() > 20 {
        return Err(ApiError::invalid("invalid_fields", "origins: 1 to 20 origins"));
    }
    let origins = body.origins.iter().map(|o| check_origin(o)).collect::<ApiResult<Vec<_>>>()?;
    let tools = body.tools.unwrap_or_else(ui_tools::ui_tools);
    for t in &tools {
        ui_tools::check_def(t).map_err(|why| ApiError::invalid("invalid_fields", format!("tools: {why}")))?;
    }
    if body.docs_dir.is_some() && !caller.is_admin() {
        return Err(ApiError::forbidden("docs_dir names a folder on the server: only an admin may set it"));
    }
    if let Some(dir) = &body.docs_dir
        && !std::path::Path::new(dir).is_dir()
    {
        return Err(ApiError::invalid("invalid_fields", format!("docs_dir: {dir} is not a folder on this server")));
    }
    let secret = new_embed_key();
    let key = EmbedKey {
        id: format!("ek-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]),
        owner_id: caller.0.id.clone(),
        name: name.to_string(),
        origins,
        tools,
        docs_dir: body.docs_dir,
        per_hour: body.per_hour.unwrap_or(200).clamp(1, 100_000),
        created_at: wright_events::now(),
        revoked_at: None,
    };
    state.store.create_embed_key(&key, &hash_token(&secret)).await?;
    Ok((StatusCode::CREATED, Json(key_view(key, Some(secret)))))
}

/// Your embed keys, newest first.
#[utoipa::path(get, path = "/api/embed-keys", security(("bearer" = [])), responses((status = 200, body = [EmbedKeyView])))]
pub async fn list_keys(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Vec<EmbedKeyView>>> {
    Ok(Json(state.store.embed_keys(&caller.0.id).await?.into_iter().map(|k| key_view(k, None)).collect()))
}

/// Revoke one of your embed keys: its pages and visitors lose the assistant at once.
#[utoipa::path(delete, path = "/api/embed-keys/{id}", params(("id" = String, Path)), security(("bearer" = [])),
    responses((status = 204), (status = 404, body = crate::api::ErrorBody)))]
pub async fn revoke_key(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    if state.store.revoke_embed_key(&caller.0.id, &id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("embed key {id}")))
    }
}
