//! The tool-calling loop: ask the model, run its calls, feed results back by call id, until it
//! answers without calls or a limit is reached.

use crate::journal::Journal;
use crate::pricing::Pricing;
use crate::stuck::{Stuck, StuckDetector};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use wright_events::{EventKind, Level};
use wright_provider::{
    ChatRequest, FinishReason, Message, Provider, ProviderError, RetryPolicy, Usage, compact, complete,
};
use wright_tools::{Registry, ToolContext};

/// Why a phase of the loop ended.
#[derive(Debug, Clone, PartialEq)]
pub enum PhaseEnd {
    /// The model answered without tool calls; its final text.
    Finished(String),
    MaxTurns,
    Stuck(String),
    Cancelled,
    Provider(ProviderError),
    /// The build's cost budget is spent (total USD so far).
    BudgetSpent(f64),
}

/// Running totals across the phases of a build.
#[derive(Debug, Clone, Default)]
pub struct LoopStats {
    pub turns: u32,
    pub usage: Usage,
    pub cost_usd: f64,
}

/// Everything one loop needs. Cheap to clone (a fix phase may use another model).
#[derive(Clone)]
pub struct AgentLoop {
    pub provider: Arc<dyn Provider>,
    pub registry: Arc<Registry>,
    pub ctx: ToolContext,
    pub model: String,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
    pub retry: RetryPolicy,
    /// Model calls per phase before giving up.
    pub max_turns: u32,
    pub pricing: Pricing,
    /// Stop once the build's model calls have cost this much (USD).
    pub max_cost_usd: Option<f64>,
    /// Where the conversation and usage are recorded, when the build has a store.
    pub journal: Option<Arc<Journal>>,
    /// What the build learned about how much conversation the model really reads; shared by
    /// its phases (clones share it).
    pub fit: Arc<ContextFit>,
    /// The token budget each call is measured against (and kept to, when enforced); none
    /// measures nothing.
    pub budget: Option<Arc<crate::budget::Budgeting>>,
}

/// A server that cuts prompts silently (Ollama with a small `num_ctx`) shows it only in the
/// prompt tokens it reports. Once seen, conversations are kept within what it reads, so later
/// answers are not made from a prompt missing its beginning; the user is told once.
#[derive(Debug, Default)]
pub struct ContextFit {
    /// Characters a conversation may have before it is compacted ahead of a call.
    budget: Mutex<Option<usize>>,
    warned: AtomicBool,
    /// An answer was cut at its length limit, and the user was told.
    cut_said: AtomicBool,
    /// The prompt tokens reported by the last call that looked cut, waiting for a second.
    suspect: Mutex<Option<u64>>,
}

impl ContextFit {
    fn budget(&self) -> Option<usize> {
        self.budget.lock().ok().and_then(|b| *b)
    }

    fn shrink_to(&self, chars: usize) {
        if let Ok(mut b) = self.budget.lock() {
            *b = Some(b.map_or(chars, |old| old.min(chars)));
        }
    }

    /// `true` the first time only.
    fn first_warning(&self) -> bool {
        !self.warned.swap(true, Ordering::Relaxed)
    }

    /// Whether a call that looked cut (`reported` prompt tokens) confirms an earlier one: a
    /// server that really cuts prompts reports about the same count, its context, call after
    /// call while the conversation grows. One that counts only the new, uncached part of each
    /// prompt (some Ollama versions) reports counts that vary with each turn's new text, so a
    /// single low count proves nothing.
    fn confirms(&self, reported: u64) -> bool {
        let Ok(mut last) = self.suspect.lock() else { return false };
        let same = last.is_some_and(|p| p.abs_diff(reported) * 10 <= p.max(reported));
        *last = Some(reported);
        same
    }

    /// A call that did not look cut: the next suspicion starts over.
    fn clear_suspicion(&self) {
        if let Ok(mut last) = self.suspect.lock() {
            *last = None;
        }
    }

    /// `true` the first time an answer was cut at its length limit.
    fn first_cut(&self) -> bool {
        !self.cut_said.swap(true, Ordering::Relaxed)
    }
}

/// Compactions after context overflows in one phase; each must shrink the conversation.
const MAX_COMPACTIONS: u32 = 3;

const STUCK_NOTICE: &str = "You seem to be repeating yourself: you";

impl AgentLoop {
    /// Run one phase on `messages` (which it extends with everything said and done).
    /// Account one model call: its price, the stats, the usage log and a `usage` event.
    /// Returns the price.
    pub async fn charge(&self, answered_by: &str, usage: Usage, stats: &mut LoopStats) -> f64 {
        self.charge_measured(answered_by, usage, None, stats).await
    }

    /// [`AgentLoop::charge`] for a call measured against its token budget.
    pub async fn charge_measured(
        &self,
        answered_by: &str,
        usage: Usage,
        budget: Option<wright_events::CallBudget>,
        stats: &mut LoopStats,
    ) -> f64 {
        let cost = self.pricing.cost(answered_by, usage);
        if let Some(j) = &self.journal {
            j.usage(answered_by, usage, cost).await;
        }
        stats.usage.add(usage);
        stats.cost_usd += cost;
        self.ctx.emitter.emit(EventKind::Usage {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cached_tokens: usage.cached_tokens,
            cost_usd: cost,
            budget,
        });
        cost
    }

    pub async fn run(&self, messages: &mut Vec<Message>, stats: &mut LoopStats) -> PhaseEnd {
        let tools = self.registry.specs();
        let mut stuck = StuckDetector::new(3);
        let mut compactions = 0u32;
        let mut turns = 0u32;
        loop {
            if self.ctx.cancel.is_cancelled() {
                return PhaseEnd::Cancelled;
            }
            if turns >= self.max_turns {
                return PhaseEnd::MaxTurns;
            }
            if let Some(budget) = self.fit.budget().filter(|b| compact::chars(messages) > *b) {
                let done = compact::compact_to(messages, budget);
                tracing::info!(?done, budget, "conversation kept within what the server reads");
            }
            if let Some(j) = &self.journal {
                j.sync(messages, None).await;
            }
            // What is sent: the conversation as it is, or kept to the budget (the conversation
            // itself stays whole).
            let fitted = self.budget.as_ref().map(|b| b.fit(messages, self.max_tokens));
            let request = ChatRequest {
                model: self.model.clone(),
                messages: fitted.as_ref().map_or_else(|| messages.clone(), |f| f.messages.clone()),
                tools: tools.clone(),
                temperature: self.temperature,
                max_tokens: fitted.as_ref().map_or(self.max_tokens, |f| f.max_tokens),
                tool_choice: Default::default(),
            };
            let emitter = &self.ctx.emitter;
            let result = complete(
                self.provider.as_ref(),
                &request,
                &self.retry,
                &self.ctx.cancel,
                |_| {},
                |err, n, wait| {
                    emitter.status(
                        Level::Warning,
                        format!(
                            "The model service had a problem ({}); trying again in {:.1}s (retry {n}).",
                            err.class(),
                            wait.as_secs_f32()
                        ),
                    );
                },
            )
            .await;
            turns += 1;
            stats.turns += 1;
            let response = match result {
                Ok(r) => r,
                Err(ProviderError::Cancelled) => return PhaseEnd::Cancelled,
                Err(ProviderError::ContextTooLong(m)) if compactions < MAX_COMPACTIONS => {
                    // The same rules as the in-process engine: shorten old tool output, then
                    // drop the oldest exchanges, to the size the server's answer implies.
                    let target = compact::target_after_overflow(messages, &m);
                    let done = compact::compact_to(messages, target);
                    if !done.changed() {
                        return PhaseEnd::Provider(ProviderError::ContextTooLong(m));
                    }
                    compactions += 1;
                    tracing::warn!(?done, "context too long ({m}); conversation compacted");
                    emitter.status(
                        Level::Warning,
                        format!(
                            "The conversation got too long for the model; wright shortened {} old tool output(s), dropped {} old exchange(s) and clipped {} long message(s) ({} → {} characters).",
                            done.shortened, done.dropped, done.clipped, done.chars_before, done.chars_after
                        ),
                    );
                    continue;
                }
                Err(e) => return PhaseEnd::Provider(e),
            };
            for notice in &response.notices {
                emitter.status(Level::Warning, notice.clone());
            }
            // An answer stopped by its length limit is used as it is, but the user should know
            // why it may end mid-sentence (said once a build).
            if response.finish_reason == Some(FinishReason::Length) && self.fit.first_cut() {
                emitter.status(
                    Level::Warning,
                    format!(
                        "The model's answer stopped at its length limit ({} tokens), so it may be cut short; --max-tokens N (or max_tokens in wright.toml) gives answers more room.",
                        response.usage.output_tokens
                    ),
                );
            }
            let usage = response.usage;
            self.notice_truncation(&request.messages, usage.input_tokens + usage.cached_tokens);
            let answered_by = response.model.clone().unwrap_or_else(|| self.model.clone());
            let measured = fitted.zip(self.budget.as_ref()).map(|(f, b)| f.answered(usage.output_tokens, &b.budget));
            let cost = self.charge_measured(&answered_by, response.usage, measured, stats).await;
            let call_usage = (response.usage, cost);
            if let Some(max) = self.max_cost_usd {
                if stats.cost_usd >= max {
                    messages.push(Message::assistant_calls(
                        (!response.content.is_empty()).then_some(response.content),
                        vec![],
                    ));
                    self.record(messages, call_usage).await;
                    return PhaseEnd::BudgetSpent(stats.cost_usd);
                }
            }
            let text = response.content.trim().to_string();
            if !text.is_empty() {
                emitter.status(Level::Info, wright_tools::clip(&text, 600));
            }
            if response.tool_calls.is_empty() {
                messages.push(Message::assistant(response.content));
                self.record(messages, call_usage).await;
                return PhaseEnd::Finished(text);
            }
            let content = (!response.content.is_empty()).then_some(response.content);
            messages.push(Message::assistant_calls(content, response.tool_calls.clone()));
            self.record(messages, call_usage).await;
            let mut verdict = Stuck::No;
            for call in &response.tool_calls {
                let outcome = self.registry.dispatch(call, &self.ctx).await;
                let body = serde_json::to_string(&outcome.value).unwrap_or_else(|_| "{\"ok\":false}".into());
                messages.push(Message::tool_result(&call.id, &call.name, body));
                let error = outcome.value.get("error").and_then(|e| e.as_str());
                match stuck.observe(&call.name, &call.arguments, outcome.ok, error) {
                    Stuck::No => {}
                    s @ Stuck::Warn(_) if verdict == Stuck::No => verdict = s,
                    s @ Stuck::Stop(_) => verdict = s,
                    Stuck::Warn(_) => {}
                }
            }
            match verdict {
                Stuck::No => {}
                Stuck::Warn(reason) => {
                    emitter.status(
                        Level::Warning,
                        format!("The model seems stuck ({reason}); asking it to try something else."),
                    );
                    messages.push(Message::user(format!(
                        "{STUCK_NOTICE} {reason}. Doing the same thing again will not change the result. Read the error, try a different approach, or stop calling tools if the work is done."
                    )));
                }
                Stuck::Stop(reason) => {
                    emitter.status(
                        Level::Error,
                        format!("Stopping this step: the model keeps repeating itself ({reason})."),
                    );
                    return PhaseEnd::Stuck(reason);
                }
            }
        }
    }
}

impl AgentLoop {
    /// A prompt the server read only part of ([`compact::prompt_was_truncated`]), twice in a
    /// row at about the same count ([`ContextFit::confirms`]): the answers stand, but later
    /// calls are compacted to what it reads, and the user hears of it once.
    fn notice_truncation(&self, sent: &[Message], prompt_tokens: u64) {
        if !compact::prompt_was_truncated(sent, prompt_tokens) {
            self.fit.clear_suspicion();
            return;
        }
        if !self.fit.confirms(prompt_tokens) {
            return;
        }
        let budget = compact::budget_after_truncation(prompt_tokens);
        tracing::warn!(prompt_tokens, chars = compact::chars(sent), budget, "the server truncated the prompt");
        self.fit.shrink_to(budget);
        if self.fit.first_warning() {
            self.ctx.emitter.status(
                Level::Warning,
                format!(
                    "The model server read only {prompt_tokens} tokens of a conversation of {} characters: it cut the rest silently (as Ollama does when its num_ctx is small), so the model did not see all of it. wright keeps the conversation within what the server reads from now on; a larger context on the server gives the model more to work with.",
                    compact::chars(sent)
                ),
            );
        }
    }

    async fn record(&self, messages: &[Message], usage: (Usage, f64)) {
        if let Some(j) = &self.journal {
            j.sync(messages, Some(usage)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wright_events::{Emitter, MemorySink};
    use wright_provider::scripted::{ScriptStep, ScriptedProvider};
    use wright_provider::{ChatResponse, Role};
    use wright_sandbox::{ProcessRunner, Workspace, WorkspaceLimits};
    use wright_tools::{ExecConfig, builtin_registry};

    fn setup(steps: Vec<ScriptStep>) -> (tempfile::TempDir, AgentLoop, Arc<MemorySink>, ScriptedProvider) {
        let dir = tempfile::tempdir().unwrap();
        let sink = Arc::new(MemorySink::new());
        let ctx = ToolContext {
            workspace: Workspace::open(dir.path().join("ws"), WorkspaceLimits::default()).unwrap(),
            runner: Arc::new(ProcessRunner::default()),
            emitter: Emitter::new("t", vec![sink.clone()]),
            cancel: Default::default(),
            exec: ExecConfig::for_build(&dir.path().join("h"), &dir.path().join("t")).unwrap(),
        };
        let provider = ScriptedProvider::new(steps);
        let l = AgentLoop {
            provider: Arc::new(provider.clone()),
            registry: Arc::new(builtin_registry()),
            ctx,
            model: "m".into(),
            temperature: None,
            max_tokens: None,
            retry: RetryPolicy::default(),
            max_turns: 10,
            pricing: Pricing::default(),
            max_cost_usd: None,
            journal: None,
            fit: Arc::default(),
            budget: None,
        };
        (dir, l, sink, provider)
    }

    #[tokio::test]
    async fn results_are_fed_back_by_call_id() {
        let (_d, l, _s, p) = setup(vec![
            ScriptStep::calls(&[
                ("createFile", json!({"path": "a.txt", "content": "hi"})),
                ("readFile", json!({"path": "a.txt"})),
            ]),
            ScriptStep::text("all done"),
        ]);
        let mut msgs = vec![Message::system("s"), Message::user("u")];
        let mut stats = LoopStats::default();
        assert_eq!(l.run(&mut msgs, &mut stats).await, PhaseEnd::Finished("all done".into()));
        let second = &p.requests()[1].messages;
        assert_eq!(second[3].tool_call_id.as_deref(), Some("call_0"));
        assert_eq!(second[4].tool_call_id.as_deref(), Some("call_1"));
        assert!(second[4].content.as_deref().unwrap().contains("\"content\":\"hi\""));
        assert_eq!(stats.turns, 2);
    }

    #[tokio::test]
    async fn a_repeating_model_is_warned_then_stopped() {
        let same = ScriptStep::calls(&[("readFile", json!({"path": "missing.txt"}))]);
        let (_d, l, sink, _) = setup(vec![]);
        // The fallback step repeats forever.
        let l = AgentLoop { provider: Arc::new(ScriptedProvider::new(vec![]).with_fallback(same)), ..l };
        let mut msgs = vec![Message::user("u")];
        let mut stats = LoopStats::default();
        let end = l.run(&mut msgs, &mut stats).await;
        assert!(matches!(end, PhaseEnd::Stuck(_)), "{end:?}");
        assert_eq!(stats.turns, 6);
        assert_eq!(
            msgs.iter()
                .filter(|m| m.role == Role::User && m.content.as_deref().unwrap_or("").starts_with(STUCK_NOTICE))
                .count(),
            1
        );
        assert!(sink.events().iter().any(|e| matches!(&e.kind, EventKind::Status { level: Level::Error, .. })));
    }

    #[tokio::test]
    async fn max_turns_and_provider_errors_end_the_phase() {
        let (_d, l, _s, _p) = setup(vec![]);
        let busy = ScriptStep::calls(&[("listFiles", json!({}))]);
        let l = AgentLoop { provider: Arc::new(ScriptedProvider::new(vec![]).with_fallback(busy)), max_turns: 2, ..l };
        assert_eq!(l.run(&mut vec![Message::user("u")], &mut LoopStats::default()).await, PhaseEnd::MaxTurns);
        let l = AgentLoop {
            provider: Arc::new(ScriptedProvider::new(vec![ScriptStep::Fail(ProviderError::Auth("401".into()))])),
            ..l
        };
        assert_eq!(
            l.run(&mut vec![Message::user("u")], &mut LoopStats::default()).await,
            PhaseEnd::Provider(ProviderError::Auth("401".into()))
        );
    }

    #[tokio::test]
    async fn context_overflow_compacts_with_the_shared_rules_until_nothing_more_can_go() {
        let (_d, l, sink, _p) = setup(vec![]);
        let overflow = || {
            ScriptStep::Fail(ProviderError::ContextTooLong(
                "request (9000 tokens) exceeds the available context size (8192 tokens)".into(),
            ))
        };
        let p = ScriptedProvider::new(vec![overflow(), overflow(), ScriptStep::text("ok")]);
        let l = AgentLoop { provider: Arc::new(p.clone()), ..l };
        let mut msgs: Vec<Message> = vec![Message::system("s"), Message::user("u")];
        for i in 0..10 {
            let id = format!("c{i}");
            let call = wright_provider::ToolCall { id: id.clone(), name: "readFile".into(), arguments: "{}".into() };
            msgs.push(Message::assistant_calls(None, vec![call]));
            msgs.push(Message::tool_result(id, "readFile", "x".repeat(1000)));
        }
        assert_eq!(l.run(&mut msgs, &mut LoopStats::default()).await, PhaseEnd::Finished("ok".into()));
        let first_retry = &p.requests()[1].messages;
        assert!(first_retry[3].content.as_deref().unwrap().contains("shortened to fit"), "old output shortened");
        assert_eq!(first_retry.last().unwrap().content.as_deref().unwrap().len(), 1000, "latest output kept");
        assert!(p.requests()[2].messages.len() < first_retry.len(), "the second overflow dropped old exchanges");
        let said = sink.events().iter().filter(|e| matches!(&e.kind, EventKind::Status { level: Level::Warning, message } if message.contains("too long for the model"))).count();
        assert_eq!(said, 2);

        // A conversation that cannot shrink any more ends the phase with the overflow.
        let p = ScriptedProvider::new(vec![]).with_fallback(overflow());
        let l = AgentLoop { provider: Arc::new(p.clone()), ..l };
        let end = l.run(&mut vec![Message::system("s"), Message::user("u")], &mut LoopStats::default()).await;
        assert!(matches!(end, PhaseEnd::Provider(ProviderError::ContextTooLong(_))), "{end:?}");
        assert_eq!(p.requests().len(), 1);
    }

    #[tokio::test]
    async fn a_runaway_answer_in_the_latest_turns_is_clipped_after_an_overflow() {
        let (_d, l, sink, _p) = setup(vec![]);
        let overflow = ScriptStep::Fail(ProviderError::ContextTooLong(
            "HTTP 400: request (8256 tokens) exceeds the available context size (8192 tokens), try increasing it"
                .into(),
        ));
        let p = ScriptedProvider::new(vec![overflow, ScriptStep::text("fixed")]);
        let l = AgentLoop { provider: Arc::new(p.clone()), ..l };
        let prose = "The app will have a button. ".repeat(1200);
        let mut msgs =
            vec![Message::system("s"), Message::user("u"), Message::assistant(prose.clone()), Message::user("fix it")];
        assert_eq!(l.run(&mut msgs, &mut LoopStats::default()).await, PhaseEnd::Finished("fixed".into()));
        let retry = &p.requests()[1].messages;
        let clipped = retry[2].content.as_deref().unwrap();
        assert!(clipped.contains("characters cut here") && clipped.len() < prose.len(), "{}", clipped.len());
        assert_eq!(retry[3].content.as_deref(), Some("fix it"));
        assert!(sink.events().iter().any(
            |e| matches!(&e.kind, EventKind::Status { message, .. } if message.contains("clipped 1 long message"))
        ));
    }

    /// A conversation of twelve 5,000-character tool results (over 60,000 characters).
    fn long_conversation() -> Vec<Message> {
        let mut msgs: Vec<Message> = vec![Message::system("s"), Message::user("u")];
        for i in 0..12 {
            let id = format!("c{i}");
            let call = wright_provider::ToolCall { id: id.clone(), name: "readFile".into(), arguments: "{}".into() };
            msgs.push(Message::assistant_calls(None, vec![call]));
            msgs.push(Message::tool_result(id, "readFile", "y".repeat(5000)));
        }
        msgs
    }

    /// `step`, with the server reporting `prompt_tokens` for it.
    fn reporting(prompt_tokens: u64, step: ScriptStep) -> ScriptStep {
        match step {
            ScriptStep::Reply(r) => ScriptStep::Reply(ChatResponse {
                usage: Usage { input_tokens: prompt_tokens, output_tokens: 10, cached_tokens: 0 },
                ..r
            }),
            other => other,
        }
    }

    #[tokio::test]
    async fn a_server_that_reads_part_of_the_prompt_gets_less_and_is_told_of_once() {
        let (_d, l, sink, _p) = setup(vec![]);
        // Ollama with num_ctx 2048: whatever it is sent, it reads (and reports) 2,048 tokens.
        let read_part = |step| reporting(2048, step);
        let busy = || read_part(ScriptStep::calls(&[("listFiles", json!({}))]));
        let p = ScriptedProvider::new(vec![busy(), busy(), busy(), read_part(ScriptStep::text("done"))]);
        let l = AgentLoop { provider: Arc::new(p.clone()), ..l };
        let mut msgs = long_conversation();
        assert_eq!(l.run(&mut msgs, &mut LoopStats::default()).await, PhaseEnd::Finished("done".into()));
        let sizes: Vec<usize> = p.requests().iter().map(|r| compact::chars(&r.messages)).collect();
        let budget = compact::budget_after_truncation(2048);
        assert!(sizes[0] > 60_000 && sizes[1] > 60_000, "one low count proves nothing: {sizes:?}");
        assert!(sizes[2] <= budget && sizes[3] <= budget, "once confirmed, calls fit what the server reads: {sizes:?}");
        let warned = sink
            .events()
            .iter()
            .filter(
                |e| matches!(&e.kind, EventKind::Status { message, .. } if message.contains("read only 2048 tokens")),
            )
            .count();
        assert_eq!(warned, 1, "said once");
        // The answer made from the cut prompt was kept, and its calls ran.
        assert!(msgs.iter().any(|m| m.tool_calls.iter().any(|c| c.name == "listFiles")));
    }

    /// Counts of only the new part of each prompt (some Ollama versions): low, but different
    /// every call, so nothing is taken for a cut prompt and nothing is compacted.
    #[tokio::test]
    async fn counts_of_only_the_new_part_of_a_prompt_are_not_taken_for_a_cut() {
        let (_d, l, sink, _p) = setup(vec![]);
        let counted = reporting;
        let busy = |t| counted(t, ScriptStep::calls(&[("listFiles", json!({}))]));
        let p =
            ScriptedProvider::new(vec![busy(1200), busy(3100), busy(1500), counted(2600, ScriptStep::text("done"))]);
        let l = AgentLoop { provider: Arc::new(p.clone()), ..l };
        let mut msgs = long_conversation();
        assert_eq!(l.run(&mut msgs, &mut LoopStats::default()).await, PhaseEnd::Finished("done".into()));
        let sizes: Vec<usize> = p.requests().iter().map(|r| compact::chars(&r.messages)).collect();
        assert!(sizes.iter().all(|s| *s > 60_000), "nothing was compacted: {sizes:?}");
        assert!(
            !sink
                .events()
                .iter()
                .any(|e| matches!(&e.kind, EventKind::Status { message, .. } if message.contains("read only"))),
            "no warning"
        );
    }

    #[tokio::test]
    async fn an_answer_cut_at_its_length_limit_is_said_once() {
        let (_d, l, sink, _p) = setup(vec![]);
        let cut = |step: ScriptStep| match step {
            ScriptStep::Reply(r) => ScriptStep::Reply(ChatResponse {
                finish_reason: Some(FinishReason::Length),
                usage: Usage { input_tokens: 100, output_tokens: 2048, cached_tokens: 0 },
                ..r
            }),
            other => other,
        };
        let p = ScriptedProvider::new(vec![
            cut(ScriptStep::calls(&[("listFiles", json!({}))])),
            cut(ScriptStep::calls(&[("listFiles", json!({}))])),
            ScriptStep::text("done"),
        ]);
        let l = AgentLoop { provider: Arc::new(p), ..l };
        assert_eq!(
            l.run(&mut vec![Message::user("u")], &mut LoopStats::default()).await,
            PhaseEnd::Finished("done".into())
        );
        let said: Vec<String> = sink
            .events()
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Status { message, .. } if message.contains("length limit") => Some(message.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("2048 tokens") && said[0].contains("--max-tokens"), "{}", said[0]);
    }

    #[tokio::test]
    async fn what_the_wire_adapted_to_is_said_as_status() {
        let (_d, l, sink, _p) = setup(vec![]);
        let reply = ChatResponse {
            content: "done".into(),
            notices: vec!["whole answers from now on".into()],
            ..Default::default()
        };
        let l = AgentLoop { provider: Arc::new(ScriptedProvider::new(vec![ScriptStep::Reply(reply)])), ..l };
        l.run(&mut vec![Message::user("u")], &mut LoopStats::default()).await;
        assert!(
            sink.events().iter().any(
                |e| matches!(&e.kind, EventKind::Status { message, .. } if message == "whole answers from now on")
            )
        );
    }
}
