//! The in-app assistant (seed 004): the model calls tools, some run on the server
//! (`search_documents`), most in the user's page (read the screen, click, fill in). A round's
//! page calls are stored as pending and sent as `client_tool_calls`; the turn then holds
//! nothing (no task, no connection) until the page posts the results, and whichever server
//! the post reaches resumes it from the store. The server caps the rounds whatever the page
//! does.

pub mod prompt;
pub mod ui_tools;

use crate::model::provider_words;
use crate::reply::{as_text, tokens_of};
use crate::turn::message;
use async_trait::async_trait;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_events::chat::{ChatMessage, ClientCall, ClientToolDef, Part, Role};
use wright_events::{Emitter, EventKind, Lang};
use wright_provider::{ChatRequest, Delta, Message, Provider, RetryPolicy, ToolChoice, ToolSpec, Usage, complete};
use wright_store::{AssistantTurn, CallRow, CallStatus, Side, Store, TurnState};

/// Longest tool output the model is shown, in characters (a page's answer is cut there).
pub const MAX_OUTPUT_CHARS: usize = 48_000;

/// What a server tool gives back: words for the model, and maybe a part for the reply.
#[derive(Debug, Clone)]
pub struct ServerOutput {
    pub for_model: String,
    pub part: Option<Part>,
}

/// A tool the assistant runs on the server.
#[async_trait]
pub trait ServerTool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    /// Run with the model's (parsed) arguments; an error is told to the model.
    async fn run(&self, args: &Value) -> Result<ServerOutput, String>;
}

/// What every assistant turn of one assistant shares.
#[derive(Clone)]
pub struct AssistantDeps {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    pub retry: RetryPolicy,
    pub store: Arc<dyn Store>,
    /// Who the assistant serves, for its prompt (`wright`, or the app's name).
    pub app: String,
    pub server_tools: Vec<Arc<dyn ServerTool>>,
    /// The assistant's client tools (a turn uses those its page named).
    pub client_tools: Vec<ClientToolDef>,
    pub max_rounds: u32,
    /// How long the page has to answer a round.
    pub page_timeout: Duration,
    pub history_budget: usize,
}

/// How an assistant turn stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum Finish {
    /// The model answered in words.
    Stop,
    /// The model wanted more rounds than allowed.
    RoundLimit,
    Cancelled,
    /// The model or the store failed; the words say what to do.
    Error(String),
}

/// Where a turn is after a step.
#[derive(Debug, Clone)]
pub enum Step {
    /// Waiting for the page's results of round `round`.
    Waiting {
        round: u32,
    },
    Done {
        finish: Finish,
        reply: Option<ChatMessage>,
    },
}

/// One step's outcome and the tokens it spent.
#[derive(Debug, Clone)]
pub struct Stepped {
    pub step: Step,
    pub usage: Usage,
}

fn hash(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// A fresh provider-side id for a tool call the model left without one, or gave an id another
/// call of the same answer has (the transcript must tell the two apart).
fn call_id() -> String {
    format!("call_{:016x}", fastrand::u64(..))
}

/// The answer's calls, each with an id of its own within the answer: the provider's, unless it
/// is empty or repeats one before it. These are what the provider is told back; the store and
/// the page know the calls by the server's ids ([`wright_store::new_call_id`]).
fn distinct_ids(calls: &[wright_provider::ToolCall]) -> Vec<wright_provider::ToolCall> {
    let mut seen = std::collections::HashSet::new();
    calls
        .iter()
        .map(|c| {
            let keep = !c.id.trim().is_empty() && !seen.contains(&c.id);
            let id = if keep { c.id.clone() } else { call_id() };
            seen.insert(id.clone());
            wright_provider::ToolCall { id, ..c.clone() }
        })
        .collect()
}

/// `text` cut to [`MAX_OUTPUT_CHARS`], saying so.
pub fn capped(text: &str) -> String {
    if text.chars().count() <= MAX_OUTPUT_CHARS {
        return text.to_string();
    }
    let kept: String = text.chars().take(MAX_OUTPUT_CHARS).collect();
    format!("{kept}\n… (cut at {MAX_OUTPUT_CHARS} characters)")
}

impl AssistantDeps {
    fn specs(&self, active: &[String]) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = self.server_tools.iter().map(|t| t.spec()).collect();
        specs.extend(self.client_tools.iter().filter(|d| active.contains(&d.name)).map(|d| ToolSpec {
            name: d.name.clone(),
            description: d.description.clone(),
            parameters: d.parameters.clone(),
        }));
        specs
    }

    /// The system prompt, the conversation before this turn (within the budget), the user's
    /// message and what happened this turn so far.
    async fn prompt(&self, turn: &AssistantTurn, lang: Lang, transcript: &[Message]) -> Result<Vec<Message>, String> {
        let names: Vec<String> = self.specs(&turn.client_tools).into_iter().map(|s| s.name).collect();
        let docs = self.server_tools.iter().any(|t| t.spec().name == ui_tools::SEARCH_DOCUMENTS);
        let system = prompt::system(&self.app, lang, docs, &names);
        let history = self
            .store
            .messages(&turn.conversation, Some(41))
            .await
            .map_err(|e| format!("the conversation could not be read: {e}"))?;
        let (before, asked): (Vec<_>, Vec<_>) = history.into_iter().partition(|m| m.run.as_deref() != Some(&turn.run));
        let question = asked.iter().find(|m| m.role == Role::User).map(as_text).unwrap_or_default();
        let mut used = tokens_of(&system) + tokens_of(&question);
        let mut kept = Vec::new();
        for m in before.iter().rev() {
            let text = as_text(m);
            used += tokens_of(&text);
            if used > self.history_budget {
                break;
            }
            kept.push(match m.role {
                Role::User => Message::user(text),
                Role::Assistant => Message::assistant(text),
            });
        }
        kept.reverse();
        let mut messages = vec![Message::system(system)];
        messages.extend(kept);
        messages.push(Message::user(question));
        messages.extend(transcript.iter().cloned());
        Ok(messages)
    }
}

fn transcript_of(turn: &AssistantTurn) -> Vec<Message> {
    serde_json::from_value(turn.transcript.clone()).unwrap_or_default()
}

/// The tool message the model reads for a finished call.
fn tool_message(c: &CallRow) -> Message {
    let content = match (c.status, &c.output, &c.error) {
        (CallStatus::Answered, Some(out), _) => capped(out),
        (_, _, Some(err)) => format!("error: {}", capped(err)),
        (status, _, _) => format!("error: {}", status.as_str()),
    };
    // The provider matches a result to its call by the id it gave, never by the server's.
    Message::tool_result(&c.provider_id, &c.name, content)
}

/// Start a new assistant turn for the message stored in run `turn.run` (its user message is
/// stored already) and run it until it waits for the page or ends.
pub async fn start(
    deps: &AssistantDeps,
    turn: AssistantTurn,
    lang: Lang,
    emit: &Emitter,
    cancel: &CancellationToken,
) -> Stepped {
    if let Err(e) = deps.store.begin_assistant_turn(&turn).await {
        let why = format!("the conversation could not be saved: {e}");
        return Stepped { step: Step::Done { finish: Finish::Error(why), reply: None }, usage: Usage::default() };
    }
    drive(deps, turn, lang, emit, cancel).await
}

/// Resume run `run` after the page answered its round (the store said this caller resumes it).
pub async fn resume(
    deps: &AssistantDeps,
    run: &str,
    lang: Lang,
    emit: &Emitter,
    cancel: &CancellationToken,
) -> Stepped {
    let fail =
        |why: String| Stepped { step: Step::Done { finish: Finish::Error(why), reply: None }, usage: Usage::default() };
    let mut turn = match deps.store.assistant_turn(run).await {
        Ok(t) => t,
        Err(e) => return fail(format!("the turn could not be read: {e}")),
    };
    let calls = match deps.store.round_calls(run, turn.round).await {
        Ok(c) => c,
        Err(e) => return fail(format!("the turn's tool calls could not be read: {e}")),
    };
    let mut transcript = transcript_of(&turn);
    transcript.extend(calls.iter().map(tool_message));
    turn.transcript = serde_json::to_value(&transcript).unwrap_or_default();
    drive(deps, turn, lang, emit, cancel).await
}

/// Ask the model, run server tools, and go on until the model answers in words, the page must
/// act, or the round cap is reached.
async fn drive(
    deps: &AssistantDeps,
    mut turn: AssistantTurn,
    lang: Lang,
    emit: &Emitter,
    cancel: &CancellationToken,
) -> Stepped {
    let mut usage = Usage::default();
    let mut transcript = transcript_of(&turn);
    loop {
        let messages = match deps.prompt(&turn, lang, &transcript).await {
            Ok(m) => m,
            Err(why) => return end(deps, turn, Finish::Error(why), None, emit, usage).await,
        };
        let req = ChatRequest {
            model: deps.model.clone(),
            messages,
            tools: deps.specs(&turn.client_tools),
            temperature: Some(0.2),
            max_tokens: Some(900),
            tool_choice: ToolChoice::Auto,
        };
        let answer = complete(
            deps.provider.as_ref(),
            &req,
            &deps.retry,
            cancel,
            |d| {
                if let Delta::Text(t) = d
                    && !t.is_empty()
                {
                    emit.emit(EventKind::TextDelta { text: t.clone() });
                }
            },
            |_, _, _| {},
        )
        .await;
        let answer = match answer {
            Ok(a) => a,
            Err(_) if cancel.is_cancelled() => return end(deps, turn, Finish::Cancelled, None, emit, usage).await,
            Err(e) => {
                tracing::warn!("the assistant's model could not be used: {e}");
                return end(deps, turn, Finish::Error(provider_words(lang, &e)), None, emit, usage).await;
            }
        };
        usage.add(answer.usage);
        if answer.tool_calls.is_empty() {
            let text = answer.content.trim().to_string();
            return end(deps, turn, Finish::Stop, Some(text), emit, usage).await;
        }
        if turn.round >= deps.max_rounds {
            tracing::info!(run = %turn.run, rounds = turn.round, "assistant turn refused another round");
            let words = prompt::round_limit(lang, deps.max_rounds);
            emit.emit(EventKind::TextDelta { text: words.clone() });
            return end(deps, turn, Finish::RoundLimit, Some(words), emit, usage).await;
        }
        turn.round += 1;
        let calls = distinct_ids(&answer.tool_calls);
        let said = answer.content.trim();
        transcript.push(Message::assistant_calls((!said.is_empty()).then(|| said.to_string()), calls.clone()));
        let rows = run_round(deps, &mut turn, &calls, emit).await;
        if rows.iter().any(|r| r.status == CallStatus::Pending) {
            turn.transcript = serde_json::to_value(&transcript).unwrap_or_default();
            if let Err(e) = deps.store.wait_for_page(&turn, &rows).await {
                let why = format!("the tool calls could not be saved: {e}");
                return end(deps, turn, Finish::Error(why), None, emit, usage).await;
            }
            let calls = rows
                .iter()
                .filter(|r| r.status == CallStatus::Pending)
                .map(|r| ClientCall {
                    id: r.id.clone(),
                    name: r.name.clone(),
                    arguments: serde_json::from_str(&r.arguments).unwrap_or(Value::Null),
                })
                .collect();
            emit.emit(EventKind::ClientToolCalls { round: turn.round, calls });
            return Stepped { step: Step::Waiting { round: turn.round }, usage };
        }
        transcript.extend(rows.iter().map(tool_message));
        turn.transcript = serde_json::to_value(&transcript).unwrap_or_default();
        if let Err(e) = deps.store.save_assistant_turn(&turn).await {
            tracing::warn!(run = %turn.run, "assistant turn not saved: {e}");
        }
    }
}

/// One round's calls as rows: server tools run now (and answered), page tools pending, and
/// calls the model should not have made answered with why.
async fn run_round(
    deps: &AssistantDeps,
    turn: &mut AssistantTurn,
    calls: &[wright_provider::ToolCall],
    emit: &Emitter,
) -> Vec<CallRow> {
    let deadline = (chrono::Utc::now() + chrono::Duration::from_std(deps.page_timeout).unwrap_or_default())
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut rows = Vec::new();
    for (pos, call) in calls.iter().enumerate() {
        let mut row = CallRow {
            id: wright_store::new_call_id(),
            provider_id: call.id.clone(),
            run: turn.run.clone(),
            conversation: turn.conversation.clone(),
            round: turn.round,
            pos: u32::try_from(pos).unwrap_or(u32::MAX),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            args_hash: hash(&call.arguments),
            side: Side::Server,
            read_only: true,
            deadline: deadline.clone(),
            status: CallStatus::Answered,
            output: None,
            error: None,
        };
        let args = if call.arguments.trim().is_empty() {
            Ok(Value::Object(Default::default()))
        } else {
            serde_json::from_str::<Value>(&call.arguments).map_err(|e| format!("the arguments are not valid JSON: {e}"))
        };
        let server = deps.server_tools.iter().find(|t| t.spec().name == call.name);
        let client = deps.client_tools.iter().find(|d| d.name == call.name && turn.client_tools.contains(&d.name));
        match (args, server, client) {
            (Err(why), _, _) => row.error = Some(why),
            (Ok(args), Some(tool), _) => {
                let order = u32::try_from(pos).unwrap_or(u32::MAX) + 1;
                // Said before it runs, so a page can show what the server is doing.
                emit.emit(EventKind::ToolSelected { tool: call.name.clone(), confidence: 1.0 });
                match tool.run(&args).await {
                    Ok(out) => {
                        emit.emit(EventKind::ChatToolResult {
                            tool: call.name.clone(),
                            success: true,
                            outcome: wright_events::chat::Outcome::Success,
                            message_type: out.part.as_ref().map(|p| p.type_name()).unwrap_or("text").into(),
                            content: None,
                            structured_data: out
                                .part
                                .as_ref()
                                .map(|p| Box::new(serde_json::to_value(p).unwrap_or_default())),
                            error: None,
                            execution_order: order,
                            metadata: Box::new(serde_json::json!({"round": turn.round})),
                        });
                        turn.parts.extend(out.part);
                        row.output = Some(out.for_model);
                    }
                    Err(why) => {
                        emit.emit(EventKind::ChatToolResult {
                            tool: call.name.clone(),
                            success: false,
                            outcome: wright_events::chat::Outcome::Error,
                            message_type: "error".into(),
                            content: None,
                            structured_data: None,
                            error: Some(why.clone()),
                            execution_order: order,
                            metadata: Box::new(serde_json::json!({"round": turn.round})),
                        });
                        row.error = Some(why);
                    }
                }
            }
            (Ok(args), None, Some(def)) => match wright_tools::schema::validate(&def.parameters, &args) {
                Ok(()) => {
                    row.side = Side::Client;
                    row.read_only = def.read_only;
                    row.status = CallStatus::Pending;
                    row.arguments = args.to_string();
                }
                Err(why) => row.error = Some(format!("invalid arguments for {}: {why}", def.name)),
            },
            (Ok(_), None, None) => {
                let names: Vec<String> = deps.specs(&turn.client_tools).into_iter().map(|s| s.name).collect();
                row.error = Some(format!("no tool is called `{}` here; use one of: {}", call.name, names.join(", ")));
            }
        }
        rows.push(row);
    }
    rows
}

/// Store the reply (when there are words or parts), end the turn's state, and say how it went.
async fn end(
    deps: &AssistantDeps,
    mut turn: AssistantTurn,
    finish: Finish,
    text: Option<String>,
    emit: &Emitter,
    usage: Usage,
) -> Stepped {
    turn.state = TurnState::Ended;
    if let Err(e) = deps.store.save_assistant_turn(&turn).await {
        tracing::warn!(run = %turn.run, "assistant turn not saved: {e}");
    }
    let mut parts = Vec::new();
    if let Some(t) = text.filter(|t| !t.is_empty()) {
        parts.push(Part::Text { text: t });
    }
    parts.append(&mut turn.parts);
    if let Finish::Error(why) = &finish {
        parts.push(Part::Error { tool: "reply".into(), message: why.clone() });
    }
    let reply = message(Role::Assistant, parts, &turn.run);
    let tools: Vec<String> = Vec::new();
    let mut finish = finish;
    if let Err(e) = deps.store.add_message(&turn.conversation, &reply, &tools).await
        && finish == Finish::Stop
    {
        finish = Finish::Error(format!("the reply could not be saved: {e}"));
    }
    emit.emit(EventKind::ChatMessage { message: Box::new(reply.public()) });
    Stepped { step: Step::Done { finish, reply: Some(reply) }, usage }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_cut_with_a_note() {
        let long = "x".repeat(MAX_OUTPUT_CHARS + 10);
        let cut = capped(&long);
        assert!(cut.starts_with(&"x".repeat(100)) && cut.ends_with("characters)"));
        assert_eq!(capped("short"), "short");
    }

    #[test]
    fn a_closed_call_reads_as_an_error_to_the_model() {
        let row = CallRow {
            id: "ac-1".into(),
            provider_id: "c1".into(),
            run: "r".into(),
            conversation: "c".into(),
            round: 1,
            pos: 0,
            name: "click_element".into(),
            arguments: "{}".into(),
            args_hash: hash("{}"),
            side: Side::Client,
            read_only: false,
            deadline: String::new(),
            status: CallStatus::Cancelled,
            output: None,
            error: Some("cancelled: the page was reloaded".into()),
        };
        let m = tool_message(&row);
        assert_eq!(m.content.as_deref(), Some("error: cancelled: the page was reloaded"));
        assert_eq!(m.tool_call_id.as_deref(), Some("c1"), "the provider hears of its own id");
    }

    #[test]
    fn calls_of_one_answer_get_distinct_provider_ids() {
        let call = |id: &str| wright_provider::ToolCall { id: id.into(), name: "f".into(), arguments: "{}".into() };
        let ids: Vec<String> = distinct_ids(&[call("call_0"), call("call_0"), call(""), call("call_1")])
            .into_iter()
            .map(|c| c.id)
            .collect();
        assert_eq!((ids[0].as_str(), ids[3].as_str()), ("call_0", "call_1"));
        assert!(ids[1].starts_with("call_") && ids[1] != "call_0" && ids[2].starts_with("call_"), "{ids:?}");
        assert_eq!(ids.iter().collect::<std::collections::HashSet<_>>().len(), 4);
    }
}
