//! The event stream of a build, exactly as `CONTRACT.md` names it.
//!
//! Every producer (agent loop, tools, command runner) emits an [`EventKind`] through an
//! [`Emitter`], which stamps the build id, a gapless per-build `seq` and an RFC 3339 time, then
//! hands the finished [`Event`] to every [`EventSink`] in order. Sinks are the seam where the
//! terminal renderer, the JSONL writer and (later) the store and the SSE server plug in.

use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

pub mod api;
mod app;
mod budget;
pub mod chat;
pub mod chat_sse;
pub mod job;
mod run;
pub mod words;
pub use app::AppRef;
pub use budget::CallBudget;
pub use run::{BrowserOutcome, EndReason, Lang, RestartReason, RunKind, RunStatus, TaskStatus, Template};

/// The build state machine's phases; serialised in upper case as the contract shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Phase {
    Planning,
    Generating,
    /// Type-check and bundle, for templates with a build step (`react`).
    Transpiling,
    Verifying,
    Fixing,
    Learning,
    Published,
    Failed,
}

impl Phase {
    /// The contract's spelling, for logs and human output.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Planning => "PLANNING",
            Phase::Generating => "GENERATING",
            Phase::Transpiling => "TRANSPILING",
            Phase::Verifying => "VERIFYING",
            Phase::Fixing => "FIXING",
            Phase::Learning => "LEARNING",
            Phase::Published => "PUBLISHED",
            Phase::Failed => "FAILED",
        }
    }
}

/// Narration levels; `announceStatus` types map onto these one to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    #[default]
    Info,
    Success,
    Warning,
    Error,
}

/// Which pipe a chunk of command output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// One failing test inside a `tests_finished` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestError {
    pub test: String,
    pub error: String,
    pub location: Option<String>,
}

/// The payload of an event; `type` is the tag, the variant's fields sit beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    Phase {
        phase: Phase,
        iteration: u32,
        message: String,
    },
    Status {
        message: String,
        level: Level,
    },
    ToolCall {
        id: String,
        name: String,
        arguments: serde_json::Value,
    },
    ToolResult {
        id: String,
        name: String,
        ok: bool,
        summary: String,
    },
    FileWritten {
        path: String,
        bytes: u64,
        created: bool,
    },
    FileDeleted {
        path: String,
    },
    CommandStarted {
        command: String,
        args: Vec<String>,
    },
    CommandOutput {
        stream: Stream,
        chunk: String,
    },
    CommandFinished {
        exit_code: Option<i32>,
        duration_ms: u64,
        timed_out: bool,
    },
    TestsFinished {
        passed: u32,
        failed: u32,
        total: u32,
        errors: Vec<TestError>,
    },
    ErrorDetected {
        iteration: u32,
        kind: String,
        error: String,
        /// Where it happened, when known (a `runtime` error's file, line and column).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        column: Option<u32>,
    },
    /// What the browser check saw in one verification round.
    BrowserCheck {
        iteration: u32,
        /// `checked`, or `skipped` / `failed` with `reason`.
        outcome: BrowserOutcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        console_errors: u32,
        exceptions: u32,
        failed_requests: u32,
        blocked_requests: u32,
        blank: bool,
        actions: u32,
        /// The PNG taken after the interactions, where wright keeps it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        screenshot: Option<String>,
        duration_ms: u64,
    },
    /// A request from the build's sandbox (or its page) to the outside, through wright's
    /// egress proxy: let through or refused. Never holds a key, a path or a query.
    OutsideRequest {
        /// `host`, or `host:port` when the port is not 80 or 443.
        host: String,
        /// `GET`, `POST`, … or `CONNECT` for an HTTPS tunnel.
        method: String,
        status: u16,
        /// Body bytes both ways (request body sent plus response body received).
        bytes: u64,
        duration_ms: u64,
        allowed: bool,
        /// The named API (`[egress.apis.<name>]`) when the call went through `/_api/<name>`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        api: Option<String>,
        /// Why it was refused or cut short.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    ErrorFixed {
        iteration: u32,
    },
    Learning {
        note_id: String,
        trigger: String,
        lesson: String,
    },
    Usage {
        input_tokens: u64,
        output_tokens: u64,
        cached_tokens: u64,
        cost_usd: f64,
        /// How the call measured against its token budget (beyond the contract's fields).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<CallBudget>,
    },
    Complete {
        success: bool,
        files: Vec<String>,
        iterations: u32,
        fix_attempts: u32,
        duration_ms: u64,
        /// Totals over the whole build (beyond the contract's fields; readers ignore unknowns).
        #[serde(default)]
        input_tokens: u64,
        #[serde(default)]
        output_tokens: u64,
        #[serde(default)]
        cached_tokens: u64,
        #[serde(default)]
        cost_usd: f64,
        /// Whether the page was opened in a real browser at the last verification. False for a
        /// web project whose page could not be opened (then `browser_reason` says why), for
        /// projects with no page, and for builds that never got that far.
        #[serde(default)]
        browser_checked: bool,
        /// Why a web project's page was not opened in a browser, when it was not.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        browser_reason: Option<String>,
        /// Why a run that did not publish stopped (a chat turn's `done` says it as
        /// `finish_reason`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        end_reason: Option<run::EndReason>,
        /// The app a published build became (docs/apps.md); absent otherwise. Boxed: every
        /// event is as large as its largest kind.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        app: Option<Box<AppRef>>,
    },
    Error {
        message: String,
        /// The technical reason behind `message`, when its words are for a person and not a
        /// developer (a provider's error): shown on request (`--verbose`, a web UI's details).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// A task of a task run (`wright task run`) begins.
    TaskStarted {
        task: String,
        /// Its `type`.
        kind: String,
        description: String,
        /// Where it comes in the run (dependencies first), from 1, and of how many.
        position: u32,
        total: u32,
    },
    /// A task of a task run ended: `passed`, `failed`, `skipped` (nothing to check) or
    /// `not_run` (a dependency failed, or the run stopped first).
    TaskFinished {
        task: String,
        status: TaskStatus,
        message: String,
        duration_ms: u64,
        /// The task's result in the seed's shape: `{message, ai_result, validation_details}`.
        result: serde_json::Value,
    },
    /// A build asked of `wright serve` waits in its queue: `position` builds are ahead of it (0:
    /// it is next). Each client words it in its own language.
    Queued {
        position: u64,
    },
    /// A worker of `wright serve` took the build (`worker` names it, for operators).
    Started {
        worker: String,
    },
    /// A build that was interrupted (its server crashed, was killed or stopped) is back in the
    /// queue and runs again from the start, so the user still gets the build they asked for.
    Restarted {
        /// Which run of the build comes next: 2 for the first re-run.
        attempt: u32,
        /// `worker_lost` (the server died: crash, kill -9) or `shutdown` (stopped past its grace time).
        reason: RestartReason,
    },
    /// Every tool's relevance to a chat message and what was decided (logged each turn).
    ToolScores {
        scores: Vec<chat::ToolScore>,
        /// How long scoring every tool took, in microseconds.
        micros: u64,
    },
    /// A chat tool that will run for this message, best first.
    ToolSelected {
        tool: String,
        confidence: f32,
    },
    /// A chat tool's result (SSE `tool_result`). `metadata` holds `started_ms`/`ended_ms`
    /// (since the turn began), `background` and `cached`.
    ChatToolResult {
        tool: String,
        success: bool,
        outcome: chat::Outcome,
        message_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        structured_data: Option<Box<serde_json::Value>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        execution_order: u32,
        #[serde(default)]
        metadata: Box<serde_json::Value>,
    },
    /// The model's calls of tools the user's page runs (the in-app assistant): the turn waits,
    /// holding nothing, until the page posts their results.
    ClientToolCalls {
        /// From 1; the server refuses a round past its cap.
        round: u32,
        calls: Vec<chat::ClientCall>,
    },
    /// A piece of the assistant's reply as the model writes it.
    TextDelta {
        text: String,
    },
    /// A stored message of the conversation (SSE `message`): the user's, then the reply.
    ChatMessage {
        message: Box<chat::ChatMessage>,
    },
    /// The build starts from a tested starter app (`docs/starters.md`): `fill` (the model fills
    /// its slots, wright writes the files) or `reference` (the model follows it).
    Starter {
        id: String,
        title: String,
        /// How well the request matched it, 0 to 1.
        score: f32,
        mode: String,
    },
    /// wright's own process met a link where it was to read, write or copy inside the
    /// workspace, and refused it: nothing was read, written or copied through it.
    LinkRefused {
        /// The path of the link (or of the path through it), relative to the workspace.
        path: String,
        step: LinkStep,
    },
    /// The build runs under one variant of an experiment (an online experiment of `wright
    /// serve`, or a variant `wright eval` compares): what the variant changes, in words.
    ExperimentAssigned {
        experiment: String,
        variant: String,
        /// `model gpt-4o, note budget 0`, or `as configured`.
        changes: String,
    },
    /// A Python, Rust or Go project's declared packages are ready in the cache (fetched by the
    /// host's tool now, or already there) and installed offline in the sandbox.
    PackagesReady {
        /// `python`, `rust` or `go`.
        ecosystem: String,
        /// What was declared, as written (`requests==2.32.3`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        packages: Vec<String>,
        /// Whether the host fetched them for this build (false: from the cache).
        fetched: bool,
        duration_ms: u64,
        /// Size of the set in the cache.
        bytes: u64,
    },
    /// Declared packages wright will not fetch, each with the reason (a URL, a git source, a
    /// path outside the project, an index option…); nothing was fetched or run.
    PackagesRefused {
        ecosystem: String,
        refusals: Vec<PackageRefusal>,
    },
    /// An MCP server of `wright.toml` started and offered these tools (`mcp__<server>__<tool>`)
    /// to the run: the ones enabled, pinned and unchanged.
    McpServerStarted {
        server: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tools: Vec<String>,
    },
    /// An MCP server could not be started or listed; the run goes on without its tools unless
    /// it is `required`, and then it ends.
    McpServerFailed {
        server: String,
        reason: String,
        required: bool,
    },
}

/// One declared package that was refused (see [`EventKind::PackagesRefused`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageRefusal {
    /// The manifest it is declared in (`requirements.txt`).
    pub file: String,
    /// The spec as written.
    pub spec: String,
    pub reason: String,
}

/// The step of wright's own that refused a link (`link_refused`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkStep {
    /// A file tool the model called (createFile, readFile, patchFile, …).
    Tool,
    /// The React pass copying `public/` into `dist/`.
    CopyPublic,
    /// The React pass writing `dist/index.html`.
    PageWrite,
}

impl EventKind {
    /// The contract's `type` string (also the SSE `event:` name).
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::Phase { .. } => "phase",
            EventKind::Status { .. } => "status",
            EventKind::ToolCall { .. } => "tool_call",
            EventKind::ToolResult { .. } => "tool_result",
            EventKind::FileWritten { .. } => "file_written",
            EventKind::FileDeleted { .. } => "file_deleted",
            EventKind::CommandStarted { .. } => "command_started",
            EventKind::CommandOutput { .. } => "command_output",
            EventKind::CommandFinished { .. } => "command_finished",
            EventKind::TestsFinished { .. } => "tests_finished",
            EventKind::ErrorDetected { .. } => "error_detected",
            EventKind::ErrorFixed { .. } => "error_fixed",
            EventKind::BrowserCheck { .. } => "browser_check",
            EventKind::OutsideRequest { .. } => "outside_request",
            EventKind::Learning { .. } => "learning",
            EventKind::Usage { .. } => "usage",
            EventKind::Complete { .. } => "complete",
            EventKind::Error { .. } => "error",
            EventKind::TaskStarted { .. } => "task_started",
            EventKind::TaskFinished { .. } => "task_finished",
            EventKind::Restarted { .. } => "restarted",
            EventKind::Starter { .. } => "starter",
            EventKind::LinkRefused { .. } => "link_refused",
            EventKind::ExperimentAssigned { .. } => "experiment_assigned",
            EventKind::PackagesReady { .. } => "packages_ready",
            EventKind::PackagesRefused { .. } => "packages_refused",
            EventKind::McpServerStarted { .. } => "mcp_server_started",
            EventKind::McpServerFailed { .. } => "mcp_server_failed",
            EventKind::Queued { .. } => "queued",
            EventKind::Started { .. } => "started",
            EventKind::ToolScores { .. } => "tool_scores",
            EventKind::ToolSelected { .. } => "tool_selected",
            EventKind::ChatToolResult { .. } => "chat_tool_result",
            EventKind::ClientToolCalls { .. } => "client_tool_calls",
            EventKind::TextDelta { .. } => "text_delta",
            EventKind::ChatMessage { .. } => "chat_message",
        }
    }
}

/// An event's place in its run's stream: 1, 2, 3… per run with no gaps (the SSE `id:` and
/// `Last-Event-ID`). A number on the wire, as it always was; typed so a count, a position in
/// the queue or a row id is never taken for one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seq(pub u64);

impl Seq {
    /// The seq after this one.
    pub fn next(self) -> Seq {
        Seq(self.0 + 1)
    }
}

impl std::fmt::Display for Seq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl From<u64> for Seq {
    fn from(n: u64) -> Self {
        Seq(n)
    }
}

impl PartialEq<u64> for Seq {
    fn eq(&self, other: &u64) -> bool {
        self.0 == *other
    }
}

/// A stamped event: what sinks receive and what goes over the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub seq: Seq,
    pub build: String,
    pub ts: String,
    #[serde(flatten)]
    pub kind: EventKind,
}

impl Event {
    /// One line of JSON, as `--events jsonl` prints it.
    pub fn to_json_line(&self) -> String {
        // Serialising plain data with string keys cannot fail; fall back to an error event
        // rather than panic if that ever changes.
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(
                r#"{{"seq":{},"build":{:?},"ts":{:?},"type":"error","message":"event not serialisable: {}"}}"#,
                self.seq, self.build, self.ts, e
            )
        })
    }
}

/// Receives every event of a build, in `seq` order.
///
/// Called while the emitter holds its ordering lock, so implementations must be quick and must
/// not emit events themselves. A sink that persists must do so before returning, which is what
/// makes "persist before you emit" hold for the sinks registered after it.
pub trait EventSink: Send + Sync {
    fn accept(&self, event: &Event);
}

/// A sink that keeps events in memory (tests, summaries, replay).
#[derive(Default)]
pub struct MemorySink {
    events: Mutex<Vec<Event>>,
}

impl MemorySink {
    pub fn new() -> Self {
        Self::default()
    }
    /// A copy of everything received so far.
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

impl EventSink for MemorySink {
    fn accept(&self, event: &Event) {
        if let Ok(mut v) = self.events.lock() {
            v.push(event.clone());
        }
    }
}

struct EmitterState {
    next_seq: u64,
    closed: bool,
}

/// Now, as events (and the store) write it: RFC 3339 UTC with milliseconds, which sorts as
/// text.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Stamps and fans out the events of one build. Cheap to clone; clones share the sequence.
#[derive(Clone)]
pub struct Emitter {
    build: Arc<str>,
    state: Arc<Mutex<EmitterState>>,
    sinks: Arc<Vec<Arc<dyn EventSink>>>,
}

impl Emitter {
    pub fn new(build: impl Into<String>, sinks: Vec<Arc<dyn EventSink>>) -> Self {
        Self::starting_at(build, 1, sinks)
    }

    /// An emitter whose first event gets `seq` `first_seq`: for a build whose stream already
    /// holds events (the server's queue notices), so the sequence stays gapless.
    pub fn starting_at(build: impl Into<String>, first_seq: u64, sinks: Vec<Arc<dyn EventSink>>) -> Self {
        Self {
            build: Arc::from(build.into()),
            state: Arc::new(Mutex::new(EmitterState { next_seq: first_seq.max(1), closed: false })),
            sinks: Arc::new(sinks),
        }
    }

    /// The build id every event carries.
    pub fn build_id(&self) -> &str {
        &self.build
    }

    /// Stamp and deliver one event. After a `complete` event the stream is closed and further
    /// events are dropped, so `complete` is always the last one readers see.
    pub fn emit(&self, kind: EventKind) {
        // A poisoned lock only means another thread panicked mid-emit; the counter is still valid.
        let mut state = match self.state.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        };
        if state.closed {
            return;
        }
        let is_complete = matches!(kind, EventKind::Complete { .. });
        let event = Event { seq: Seq(state.next_seq), build: self.build.to_string(), ts: now(), kind };
        state.next_seq += 1;
        state.closed = is_complete;
        for sink in self.sinks.iter() {
            sink.accept(&event);
        }
    }

    /// Shorthand for a narration line.
    pub fn status(&self, level: Level, message: impl Into<String>) {
        self.emit(EventKind::Status { message: message.into(), level });
    }

    /// Whether `complete` has been emitted.
    pub fn is_closed(&self) -> bool {
        self.state.lock().map(|s| s.closed).unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_with_contract_names() {
        let sink = Arc::new(MemorySink::new());
        let em = Emitter::new("b1", vec![sink.clone()]);
        em.emit(EventKind::Phase { phase: Phase::Generating, iteration: 0, message: "go".into() });
        em.emit(EventKind::CommandOutput { stream: Stream::Stderr, chunk: "x".into() });
        let evs = sink.events();
        let v: serde_json::Value = serde_json::from_str(&evs[0].to_json_line()).unwrap();
        assert_eq!(v["type"], "phase");
        assert_eq!(v["phase"], "GENERATING");
        assert_eq!(v["seq"], 1);
        assert_eq!(v["build"], "b1");
        assert!(v["ts"].as_str().unwrap().ends_with('Z'));
        let v: serde_json::Value = serde_json::from_str(&evs[1].to_json_line()).unwrap();
        assert_eq!(v["type"], "command_output");
        assert_eq!(v["stream"], "stderr");
        assert_eq!(v["seq"], 2);
        // round trip
        let back: Event = serde_json::from_value(v).unwrap();
        assert_eq!(back, evs[1]);
    }

    #[test]
    fn seq_is_gapless_across_threads_and_complete_closes() {
        let sink = Arc::new(MemorySink::new());
        let em = Emitter::new("b2", vec![sink.clone()]);
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let em = em.clone();
                std::thread::spawn(move || {
                    for _ in 0..250 {
                        em.status(Level::Info, "hi");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        em.emit(EventKind::Complete {
            success: true,
            files: vec![],
            iterations: 1,
            fix_attempts: 0,
            duration_ms: 1,
            input_tokens: 0,
            output_tokens: 0,
            cached_tokens: 0,
            cost_usd: 0.0,
            browser_checked: false,
            browser_reason: None,
            end_reason: None,
            app: None,
        });
        em.status(Level::Info, "after complete");
        let evs = sink.events();
        assert_eq!(evs.len(), 1001);
        for (i, e) in evs.iter().enumerate() {
            assert_eq!(e.seq, i as u64 + 1);
        }
        assert_eq!(evs.last().unwrap().kind.type_name(), "complete");
        assert!(em.is_closed());
    }
}
