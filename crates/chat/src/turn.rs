//! One chat turn end to end: store the user's message, score and run the tools, stream the
//! reply, wait for background tools, store the reply with its typed parts. Every step is an
//! event of the turn's run (stored by the run's writer before anyone is shown it).

use crate::agent::ChatAgent;
use crate::model::provider_words;
use crate::relevance::Scorer;
use crate::reply::{ReplyForm, prompt};
use crate::tool::{ChatContext, ToolResult};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use wright_events::chat::{ChatMessage, ContentFlags, Mode, Part, Role};
use wright_events::{Emitter, EventKind, Lang};
use wright_provider::{ChatRequest, Delta, Provider, RetryPolicy, Usage, complete};
use wright_store::Store;

/// What every turn shares.
#[derive(Clone)]
pub struct TurnDeps {
    pub agent: Arc<ChatAgent>,
    pub provider: Arc<dyn Provider>,
    pub model: String,
    /// Rate limits are not waited out (`max_rate_limited_retries: 0`): the user is told.
    pub retry: RetryPolicy,
    pub store: Arc<dyn Store>,
    pub scorer: Arc<Scorer>,
    /// Tokens of history the reply's prompt may carry.
    pub history_budget: usize,
}

/// One message to answer.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The user's message when it is stored already (as the turn was recorded); else the turn
    /// stores `content` as it starts.
    pub asked: Option<ChatMessage>,
    pub conversation: String,
    pub user: String,
    pub content: String,
    pub modes: BTreeMap<String, Mode>,
    pub lang: Lang,
}

/// How the turn went.
#[derive(Debug, Clone, Default)]
pub struct TurnOutcome {
    pub reply: Option<ChatMessage>,
    pub usage: Usage,
    /// Why the reply could not be written (rate limit, provider down…), in the user's words.
    pub error: Option<String>,
    /// Tools that ran (worked or not).
    pub tools: Vec<String>,
}

/// The user's message `content`, asked in run `run`.
pub fn user_message(content: &str, run: &str) -> ChatMessage {
    message(Role::User, vec![Part::Text { text: content.to_string() }], run)
}

/// A fresh conversation id.
pub fn conversation_id() -> String {
    format!("c-{:012x}", fastrand::u64(..) & 0xffff_ffff_ffff)
}

/// A fresh message id.
pub fn message_id() -> String {
    format!("m-{:012x}", fastrand::u64(..) & 0xffff_ffff_ffff)
}

/// A new message of `role` with `parts`, written in run `run`.
pub fn message(role: Role, parts: Vec<Part>, run: &str) -> ChatMessage {
    ChatMessage {
        id: message_id(),
        role,
        flags: ContentFlags::of(&parts),
        parts,
        run: Some(run.to_string()),
        created_at: chrono::Utc::now().to_rfc3339(),
        feedback: None,
    }
}

fn result_event(r: &ToolResult) -> EventKind {
    EventKind::ChatToolResult {
        tool: r.tool.clone(),
        success: r.success,
        outcome: r.outcome,
        message_type: r.message_type.clone(),
        content: (!r.content.is_empty()).then(|| r.content.clone()),
        structured_data: r.part.as_ref().map(|p| Box::new(serde_json::to_value(p.public()).unwrap_or_default())),
        error: r.error.clone(),
        execution_order: r.execution_order,
        metadata: Box::new(r.metadata.clone()),
    }
}

/// Run one turn. Errors reach the user as words in the outcome; nothing here panics.
pub async fn run_turn(deps: &TurnDeps, turn: &Turn, emit: &Emitter, cancel: &CancellationToken) -> TurnOutcome {
    let t0 = Instant::now();
    let run = emit.build_id().to_string();
    let mut out = TurnOutcome::default();
    let store = |e: wright_store::StoreError| format!("the conversation could not be saved: {e}");

    let mut history = match deps.store.messages(&turn.conversation, Some(41)).await {
        Ok(h) => h,
        Err(e) => return TurnOutcome { error: Some(store(e)), ..out },
    };
    let asked = match &turn.asked {
        Some(stored) => {
            history.retain(|m| m.id != stored.id);
            stored.clone()
        }
        None => {
            let asked = user_message(&turn.content, &run);
            if let Err(e) = deps.store.add_message(&turn.conversation, &asked, &[]).await {
                return TurnOutcome { error: Some(store(e)), ..out };
            }
            asked
        }
    };
    if history.len() > 40 {
        history.drain(..history.len() - 40);
    }
    emit.emit(EventKind::ChatMessage { message: Box::new(asked) });

    let scorer = deps.scorer.clone();
    let (text, user) = (turn.content.clone(), turn.user.clone());
    let embedding =
        tokio::task::spawn_blocking(move || scorer.embed_for(&user, &text)).await.ok().flatten().map(Arc::new);
    let ctx = ChatContext {
        user: turn.user.clone(),
        conversation: turn.conversation.clone(),
        lang: turn.lang,
        history: Arc::new(history.clone()),
        provider: deps.provider.clone(),
        model: deps.model.clone(),
        retry: deps.retry.clone(),
        store: deps.store.clone(),
        scorer: deps.scorer.clone(),
        embedding,
        usage: Default::default(),
        cancel: cancel.clone(),
    };

    let selection = deps.agent.select(&turn.content, &ctx, &turn.modes);
    emit.emit(EventKind::ToolScores { scores: selection.scores.clone(), micros: selection.micros });
    let mut chosen: Vec<_> = selection.foreground.iter().chain(&selection.background).collect();
    chosen.sort_by_key(|c| c.execution_order);
    for c in &chosen {
        emit.emit(EventKind::ToolSelected { tool: c.tool.name().to_string(), confidence: c.confidence });
        out.tools.push(c.tool.name().to_string());
    }

    // Background tools start now and are collected after the reply.
    let background = (!selection.background.is_empty()).then(|| {
        let (agent, bg, msg, ctx) =
            (deps.agent.clone(), selection.background.clone(), turn.content.clone(), ctx.clone());
        tokio::spawn(async move { agent.run(&bg, &msg, &ctx, t0).await })
    });

    let results = tokio::select! {
        r = deps.agent.run(&selection.foreground, &turn.content, &ctx, t0) => r,
        _ = cancel.cancelled() => Vec::new(),
    };
    for r in &results {
        emit.emit(result_event(r));
    }

    let form = ReplyForm::for_successes(results.iter().filter(|r| r.success).count());
    let req = ChatRequest {
        model: deps.model.clone(),
        messages: prompt(form, turn.lang, &results, &history, &turn.content, deps.history_budget),
        tools: Vec::new(),
        temperature: Some(0.4),
        max_tokens: Some(form.max_tokens()),
        tool_choice: Default::default(),
    };
    tracing::info!(run = %run, form = form.as_str(), tools = results.len(), "chat reply");
    let mut streamed = String::new();
    let answer = complete(
        deps.provider.as_ref(),
        &req,
        &deps.retry,
        cancel,
        |d| {
            if let Delta::Text(t) = d
                && !t.is_empty()
            {
                streamed.push_str(t);
                emit.emit(EventKind::TextDelta { text: t.clone() });
            }
        },
        |_, _, _| {},
    )
    .await;
    let mut parts = Vec::new();
    match answer {
        Ok(a) => {
            ctx.add_usage(a.usage);
            let text = a.content.trim().to_string();
            if !text.is_empty() {
                parts.push(Part::Text { text });
            }
        }
        Err(e) => {
            // What the user already saw stays in the conversation.
            if !streamed.trim().is_empty() {
                parts.push(Part::Text { text: streamed.trim().to_string() });
            }
            out.error = Some(provider_words(&e));
        }
    }
    parts.extend(results.iter().filter_map(|r| r.part.clone()));

    if let Some(mut handle) = background {
        let bg = tokio::select! {
            r = &mut handle => r.unwrap_or_default(),
            _ = cancel.cancelled() => {
                handle.abort();
                Vec::new()
            }
        };
        for r in &bg {
            emit.emit(result_event(r));
            parts.extend(r.part.clone());
        }
    }

    if let Some(e) = &out.error {
        parts.push(Part::Error { tool: "reply".into(), message: e.clone() });
    }
    let reply = message(Role::Assistant, parts, &run);
    if let Err(e) = deps.store.add_message(&turn.conversation, &reply, &out.tools).await {
        out.error.get_or_insert(store(e));
    }
    // The event log shows what clients may see: a quiz's answers stay in the store.
    emit.emit(EventKind::ChatMessage { message: Box::new(reply.public()) });
    out.reply = Some(reply);
    out.usage = ctx.usage();
    out
}
