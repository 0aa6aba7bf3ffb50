//! `/api/chat`: conversations, a message's answer streamed as the contract's chat events,
//! resumable like build streams, the history, quiz answers scored here, 👍/👎, and the
//! flashcard deck's reviews.
//!
//! A message starts a chat turn (a run of kind `chat`) in its own task, so a client that goes
//! away mid-reply loses nothing: the turn goes on, and `GET …/turns/{run}/events` with
//! `Last-Event-ID` picks the stream up where it stopped.

use crate::auth::Caller;
use crate::error::{ApiError, ApiJson, ApiResult};
use crate::headers::LastEventId;
use crate::limits::Route;
use crate::metrics::ChatSink;
use crate::state::AppState;
use crate::turns::{lang_of, owned_by, sse};
use crate::visitor::ChatCaller;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use utoipa::ToSchema;
use wright_engine::ChatJob;
use wright_events::chat::{
    Card, ChatMessage, ConversationView, FeedbackBody, MessageBody, Part, QuizAnswers, QuizScore, ReviewBody,
};
use wright_store::{Conversation, Quota};

/// New conversations one user may start in an hour.
const CONVERSATIONS_PER_HOUR: u32 = 60;

/// `201` answer to `POST /api/chat`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChatCreated {
    pub id: String,
}

/// `200` answer to `DELETE /api/chat/{id}/messages`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Cleared {
    pub deleted: u64,
}

#[derive(Debug, Deserialize)]
pub struct AfterQuery {
    pub after: Option<u64>,
}

fn view(c: Conversation) -> ConversationView {
    ConversationView {
        id: c.id,
        title: c.title,
        created_at: c.created_at,
        updated_at: c.updated_at,
        messages: c.messages,
    }
}

/// The caller's conversation; anyone else's is "not found".
async fn owned(state: &AppState, caller: &Caller, id: &str) -> ApiResult<Conversation> {
    owned_by(state, &caller.0.id, id).await
}

/// Start a conversation.
#[utoipa::path(post, path = "/api/chat", security(("bearer" = [])),
    responses((status = 201, body = ChatCreated)))]
pub async fn create(State(state): State<AppState>, caller: ChatCaller) -> ApiResult<(StatusCode, Json<ChatCreated>)> {
    let started = Quota::per_hour(format!("conversations:{}", caller.owner()), CONVERSATIONS_PER_HOUR);
    state.limits.count(&[started], "chat_conversations").await?;
    let id = state.engine.new_conversation(&caller.owner()).await.map_err(|e| ApiError::internal(e.to_string()))?;
    Ok((StatusCode::CREATED, Json(ChatCreated { id })))
}

/// The caller's conversations, the latest first.
#[utoipa::path(get, path = "/api/chat", security(("bearer" = [])),
    responses((status = 200, body = [ConversationView])))]
pub async fn list(State(state): State<AppState>, caller: ChatCaller) -> ApiResult<Json<Vec<ConversationView>>> {
    Ok(Json(state.store.conversations(&caller.owner(), 100).await?.into_iter().map(view).collect()))
}

/// Send a message: the answer streams as SSE (`tool_selected`, `tool_result`, `text_delta`,
/// `message`, `error`, `done`); `X-Wright-Run` names the turn, to resume it.
#[utoipa::path(post, path = "/api/chat/{id}/messages", params(("id" = String, Path)), request_body = MessageBody,
    security(("bearer" = [])),
    responses((status = 200, description = "text/event-stream of chat events"), (status = 404, body = crate::api::ErrorBody),
        (status = 422, body = crate::api::ErrorBody), (status = 429, body = crate::api::ErrorBody)))]
pub async fn send(
    State(state): State<AppState>,
    caller: ChatCaller,
    Path(id): Path<String>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<MessageBody>,
) -> ApiResult<Response> {
    owned_by(&state, &caller.owner(), &id).await?;
    let content = checked_message(&state, &body.content).await?;
    // A page that runs tools (or any visitor of an app) talks to the in-app assistant.
    let caller = match caller {
        ChatCaller::User(user) if body.client_tools.is_empty() => Caller(user),
        other => {
            if !body.modes.is_empty() {
                return Err(ApiError::invalid("invalid_fields", "modes: the in-app assistant has no tools to switch"));
            }
            return crate::assistant::start_turn(&state, &other, id, content, &body.client_tools, lang_of(&headers))
                .await;
        }
    };
    let run = start_turn(&state, &caller, id, content, body.modes, lang_of(&headers)).await?;
    Ok(sse(&state, &run, 0, true))
}

/// A message as it will be stored and sent: without its surrounding blanks, within the length
/// limit, free of secrets and past moderation; refused while the server stops. Every way a
/// user's message arrives (this route, the MCP `chat` tool) checks it here.
pub(crate) async fn checked_message(state: &AppState, content: &str) -> ApiResult<String> {
    if state.is_stopping() {
        return Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "stopping", "the server is stopping; try again"));
    }
    // What a person cannot see never reaches the model (the stored message is what it read).
    let content = wright_text::hidden::strip(content.trim()).text.trim().to_string();
    let chars = content.chars().count();
    if chars == 0 || chars > state.chat_max_chars {
        return Err(ApiError::invalid(
            "message_length",
            format!("the message has {chars} characters; write 1 to {}", state.chat_max_chars),
        ));
    }
    crate::checks::check_prompt(&content, (1, usize::MAX), &state.redactor, crate::checks::Asked::Chat)?;
    if let Some(m) = &state.cfg.moderation {
        m.check(&content).await.inspect_err(|_| state.metrics.refused("moderation"))?;
    }
    Ok(content)
}

/// Start a signed-in user's chat turn on conversation `id` (theirs, its message checked by
/// [`checked_message`]) under the per-user limits, in a task of its own: the turn's run id,
/// whose events tell the answer. The route and the MCP `chat` tool both start turns here.
pub(crate) async fn start_turn(
    state: &AppState,
    caller: &Caller,
    id: String,
    content: String,
    modes: std::collections::BTreeMap<String, wright_events::chat::Mode>,
    lang: wright_events::Lang,
) -> ApiResult<String> {
    let known: Vec<&str> = state.chat_tools.iter().map(String::as_str).collect();
    if let Some(bad) = modes.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(ApiError::invalid(
            "invalid_fields",
            format!("modes: no tool is called `{bad}` ({})", known.join(", ")),
        ));
    }
    crate::spend::check(state, &caller.0.id).await?;
    let slot = state
        .limits
        .hold(
            format!("turn:{}", caller.0.id),
            &[Route::ChatMessages.quota(&state.cfg.limits, &caller.0.id)],
            "chat_rate",
            crate::limits::BUSY,
        )
        .await?;
    let run = wright_engine::new_build_id();
    let mut job =
        ChatJob { run: run.clone(), asked: None, conversation: id, user: caller.0.id.clone(), content, modes, lang };
    state.engine.record_chat_turn(&mut job).await.map_err(|e| ApiError::internal(e.to_string()))?;
    crate::spend::charge_turn(state, &run, &caller.0.id).await;
    let (engine, metrics, stop) = (state.engine.clone(), state.metrics.clone(), state.streams_stop.clone());
    tokio::spawn(async move {
        let _slot = slot;
        let sinks: Vec<Arc<dyn wright_events::EventSink>> = vec![Arc::new(ChatSink(metrics))];
        let run = job.run.clone();
        let turn = {
            let engine = engine.clone();
            tokio::spawn(async move { engine.chat_turn(job, sinks, stop.child_token()).await })
        };
        match turn.await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::error!("chat turn could not run: {e}"),
            // A bug took the turn down: it still ends, so no follower waits for ever.
            Err(e) => {
                tracing::error!(run = %run, "chat turn stopped unexpectedly: {e}");
                engine.fail_chat_turn(&run, "Something went wrong while answering; send the message again.").await;
            }
        }
    });
    Ok(run)
}

/// Follow a chat turn's events again (after a reload or a dropped connection): from
/// `Last-Event-ID` or `?after=`.
#[utoipa::path(get, path = "/api/chat/{id}/turns/{run}/events", params(("id" = String, Path), ("run" = String, Path)),
    security(("bearer" = [])), responses((status = 200, description = "text/event-stream of chat events")))]
pub async fn turn_events(
    State(state): State<AppState>,
    caller: ChatCaller,
    Path((id, run)): Path<(String, String)>,
    Query(q): Query<AfterQuery>,
    last: LastEventId,
) -> ApiResult<Response> {
    owned_by(&state, &caller.owner(), &id).await?;
    let record = state.store.build(&run).await.map_err(|_| ApiError::not_found(format!("turn {run}")))?;
    let in_conversation = state.store.messages(&id, Some(200)).await?.iter().any(|m| m.run.as_deref() == Some(&run));
    if record.start.kind != wright_events::RunKind::Chat || !in_conversation {
        return Err(ApiError::not_found(format!("turn {run}")));
    }
    // A turn that ended replays to its end; one that goes on pauses where the page must act.
    let pause = !state.store.has_ended(&run).await?;
    Ok(sse(&state, &run, last.after(q.after), pause))
}

/// The conversation's messages, oldest first (quizzes without their answers).
#[utoipa::path(get, path = "/api/chat/{id}/messages", params(("id" = String, Path)), security(("bearer" = [])),
    responses((status = 200, body = [ChatMessage]), (status = 404, body = crate::api::ErrorBody)))]
pub async fn history(
    State(state): State<AppState>,
    caller: ChatCaller,
    Path(id): Path<String>,
) -> ApiResult<Json<Vec<ChatMessage>>> {
    owned_by(&state, &caller.owner(), &id).await?;
    Ok(Json(state.store.messages(&id, None).await?.iter().map(ChatMessage::public).collect()))
}

/// Clear the conversation's messages.
#[utoipa::path(delete, path = "/api/chat/{id}/messages", params(("id" = String, Path)), security(("bearer" = [])),
    responses((status = 200, body = Cleared), (status = 404, body = crate::api::ErrorBody)))]
pub async fn clear(
    State(state): State<AppState>,
    caller: ChatCaller,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Json<Cleared>> {
    owned_by(&state, &caller.owner(), &id).await?;
    // A turn waiting for the page ends with the history it belonged to.
    state.engine.close_waiting_turns(&id, "cancelled: the history was cleared", lang_of(&headers)).await;
    Ok(Json(Cleared { deleted: state.store.clear_messages(&id).await? }))
}

/// Score the answers to a message's quiz (one chosen option per question).
#[utoipa::path(post, path = "/api/chat/{id}/messages/{message}/quiz", params(("id" = String, Path), ("message" = String, Path)),
    request_body = QuizAnswers, security(("bearer" = [])),
    responses((status = 200, body = QuizScore), (status = 404, body = crate::api::ErrorBody), (status = 422, body = crate::api::ErrorBody)))]
pub async fn quiz(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, message)): Path<(String, String)>,
    ApiJson(body): ApiJson<QuizAnswers>,
) -> ApiResult<Json<QuizScore>> {
    owned(&state, &caller, &id).await?;
    let m = state.store.message(&id, &message).await?;
    let quiz = m
        .parts
        .iter()
        .find_map(|p| if let Part::Quiz { quiz } = p { Some(quiz) } else { None })
        .ok_or_else(|| ApiError::not_found(format!("a quiz in message {message}")))?;
    quiz.score(&body.answers).map(Json).ok_or_else(|| {
        ApiError::invalid(
            "invalid_fields",
            format!("answers: give one option index per question ({} questions)", quiz.questions.len()),
        )
    })
}

/// 👍 (`up`), 👎 (`down`) or neither (`none`) on one of the assistant's replies.
#[utoipa::path(post, path = "/api/chat/{id}/messages/{message}/feedback", params(("id" = String, Path), ("message" = String, Path)),
    request_body = FeedbackBody, security(("bearer" = [])),
    responses((status = 204), (status = 404, body = crate::api::ErrorBody), (status = 422, body = crate::api::ErrorBody)))]
pub async fn feedback(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, message)): Path<(String, String)>,
    ApiJson(body): ApiJson<FeedbackBody>,
) -> ApiResult<StatusCode> {
    owned(&state, &caller, &id).await?;
    let value = match body.value.as_str() {
        "up" => Some(1),
        "down" => Some(-1),
        "none" => None,
        other => return Err(ApiError::invalid("invalid_fields", format!("value: up, down or none, not `{other}`"))),
    };
    state.store.message(&id, &message).await?;
    state.store.set_feedback(&id, &message, value).await.map_err(|e| match e {
        wright_store::StoreError::Invalid(m) => ApiError::invalid("invalid_fields", m),
        other => other.into(),
    })?;
    Ok(StatusCode::NO_CONTENT)
}

/// The caller's flashcards, the soonest due first.
#[utoipa::path(get, path = "/api/flashcards", security(("bearer" = [])), responses((status = 200, body = [Card])))]
pub async fn cards(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Vec<Card>>> {
    let cards = state.store.cards(&caller.0.id, None, 500).await?;
    Ok(Json(cards.iter().map(wright_chat::tools::flashcards::view).collect()))
}

/// Review a card (`again`, `hard`, `good`, `easy`); FSRS schedules its next date.
#[utoipa::path(post, path = "/api/flashcards/{card}/review", params(("card" = String, Path)), request_body = ReviewBody,
    security(("bearer" = [])),
    responses((status = 200, body = Card), (status = 404, body = crate::api::ErrorBody), (status = 422, body = crate::api::ErrorBody)))]
pub async fn review(
    State(state): State<AppState>,
    caller: Caller,
    Path(card): Path<String>,
    ApiJson(body): ApiJson<ReviewBody>,
) -> ApiResult<Json<Card>> {
    let rating = wright_chat::tools::flashcards::parse_rating(&body.rating).ok_or_else(|| {
        ApiError::invalid("invalid_fields", format!("rating: again, hard, good or easy, not `{}`", body.rating))
    })?;
    Ok(Json(wright_chat::tools::flashcards::review(state.store.as_ref(), &caller.0.id, &card, rating).await?))
}
