//! Token budgets per template (`[budgets.*]` in `wright.toml`, `docs/configuration.md`).
//!
//! A class running wright pays per token, so each model call is measured against the budget
//! of its template: the system prompt, the request, the tool results and the answer each have
//! a share, and the call a total. Measured always (the `usage` event says how close each call
//! came); kept to when `enforce` is on, and then only in what is *sent*: the build's own
//! conversation stays whole, so its record and later phases lose nothing. Keeping to it means
//! the last turns only (the request always stays), file contents written or read in earlier
//! turns replaced by a line that says how to see them again, tool results trimmed to their
//! share with a note, and the answer's `max_tokens` from its share. wright's own system prompt
//! is never cut (a build must still work): optional layers such as learning notes go first,
//! and whatever is still over is reported as over.

use crate::prompts::Template;
use serde::Deserialize;
use serde_json::Value;
use wright_events::CallBudget;
use wright_provider::{Message, Role};

/// Characters per estimated token: the usual rule of thumb for English prose and code, and
/// what the chat's history budget uses too. An estimate, not a tokenizer.
const CHARS_PER_TOKEN: usize = 4;
/// Tokens counted per message for its role and framing.
const PER_MESSAGE: u32 = 4;
/// File contents shorter than this (characters) are left as they are: the line that would
/// replace them is not much shorter.
const SUMMARISE_OVER: usize = 200;
/// A trimmed tool result keeps at least this many characters, so it still says something.
const TRIM_KEEP_MIN: usize = 160;
/// Characters of the note a trimmed tool result ends with, and of its message framing.
const TRIM_NOTE_ROOM: usize = 140;

/// Estimated tokens of a text.
pub fn tokens(text: &str) -> u32 {
    u32::try_from(text.chars().count().div_ceil(CHARS_PER_TOKEN)).unwrap_or(u32::MAX)
}

/// Estimated tokens of one message: its text, its tool calls and their arguments.
pub fn message_tokens(m: &Message) -> u32 {
    let calls: u32 = m.tool_calls.iter().map(|c| tokens(&c.name) + tokens(&c.arguments)).sum();
    PER_MESSAGE + m.content.as_deref().map_or(0, tokens) + calls
}

/// One template's shares, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenBudget {
    pub system: u32,
    pub user: u32,
    pub answer: u32,
    pub tool_results: u32,
    pub total: u32,
}

impl TokenBudget {
    /// The seed's Lab 1 (a static page).
    pub const STATIC: Self = Self { system: 500, user: 200, answer: 2000, tool_results: 500, total: 3200 };
    /// The seed's Lab 2 (JavaScript).
    pub const INTERACTIVE: Self = Self { system: 600, user: 200, answer: 3000, tool_results: 800, total: 4600 };
    /// The seed's Lab 3 (front end and back end).
    pub const FULLSTACK: Self = Self { system: 800, user: 300, answer: 5000, tool_results: 1200, total: 7300 };
}

/// The budgets of every kind of run, and whether they are kept to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budgets {
    pub static_page: TokenBudget,
    pub interactive: TokenBudget,
    pub fullstack: TokenBudget,
    /// React apps: front end with a build step, so the full-stack numbers by default.
    pub react: TokenBudget,
    /// Task runs (`wright task`).
    pub task: TokenBudget,
    /// Keep calls within the budgets (otherwise they are only measured).
    pub enforce: bool,
    /// Exchanges after the request that are sent when enforcing (an assistant turn with its
    /// tool results counts as one).
    pub keep_turns: usize,
}

/// Exchanges kept by default: the latest few, as the seed's "last N messages".
pub const DEFAULT_KEEP_TURNS: usize = 6;

impl Default for Budgets {
    fn default() -> Self {
        Self {
            static_page: TokenBudget::STATIC,
            interactive: TokenBudget::INTERACTIVE,
            fullstack: TokenBudget::FULLSTACK,
            react: TokenBudget::FULLSTACK,
            task: TokenBudget::INTERACTIVE,
            enforce: false,
            keep_turns: DEFAULT_KEEP_TURNS,
        }
    }
}

impl Budgets {
    /// The budget for a build of `template` (already resolved; `Auto` counts as interactive).
    pub fn for_template(&self, template: Template) -> Budgeting {
        let (name, budget) = match template {
            Template::Static => ("static", self.static_page),
            Template::Fullstack => ("fullstack", self.fullstack),
            Template::React => ("react", self.react),
            // A Python, Rust or Go project is about the size of an interactive app.
            Template::Interactive | Template::Auto | Template::Python | Template::Rust | Template::Go => {
                ("interactive", self.interactive)
            }
        };
        self.budgeting(name, budget)
    }

    /// The budget for a task run.
    pub fn for_task(&self) -> Budgeting {
        self.budgeting("task", self.task)
    }

    fn budgeting(&self, name: &str, budget: TokenBudget) -> Budgeting {
        Budgeting {
            name: name.to_string(),
            budget,
            enforce: self.enforce,
            keep_turns: self.keep_turns.max(1),
            optional: Vec::new(),
        }
    }
}

/// The budget one run keeps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budgeting {
    pub name: String,
    pub budget: TokenBudget,
    pub enforce: bool,
    pub keep_turns: usize,
    /// Texts in the system prompt or the request that may go when those are over their share
    /// (the learning notes), first to go first.
    pub optional: Vec<String>,
}

/// What is sent for one call, and how it measures.
#[derive(Debug, Clone)]
pub struct Fitted {
    pub messages: Vec<Message>,
    pub max_tokens: Option<u32>,
    /// Every part but the answer, which [`Fitted::answered`] adds.
    pub report: CallBudget,
}

impl Fitted {
    /// The report once the answer's size is known.
    pub fn answered(mut self, output_tokens: u64, budget: &TokenBudget) -> CallBudget {
        let r = &mut self.report;
        r.answer = u32::try_from(output_tokens).unwrap_or(u32::MAX);
        r.used = r.system + r.user + r.history + r.tool_results + r.answer;
        r.over.clear();
        for (part, n, share) in [
            ("system", r.system, budget.system),
            ("user", r.user, budget.user),
            ("tool_results", r.tool_results, budget.tool_results),
            ("answer", r.answer, budget.answer),
            ("total", r.used, budget.total),
        ] {
            if n > share {
                r.over.push(part.to_string());
            }
        }
        self.report
    }
}

/// The index of the request: the first user message.
fn request_index(messages: &[Message]) -> Option<usize> {
    messages.iter().position(|m| m.role == Role::User)
}

/// Half-open ranges of the exchanges after the request: an assistant turn with its tool
/// results, or one other message.
fn exchanges(messages: &[Message], from: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = from;
    while i < messages.len() {
        let mut end = i + 1;
        if messages[i].role == Role::Assistant && !messages[i].tool_calls.is_empty() {
            while end < messages.len() && messages[end].role == Role::Tool {
                end += 1;
            }
        }
        out.push((i, end));
        i = end;
    }
    out
}

/// The parts of a conversation, measured.
fn measure(messages: &[Message], name: &str, total: u32, enforced: bool, trimmed: u32) -> CallBudget {
    let request = request_index(messages);
    let mut r = CallBudget { name: name.to_string(), total, enforced, trimmed, ..CallBudget::default() };
    for (i, m) in messages.iter().enumerate() {
        let t = message_tokens(m);
        match (m.role, Some(i) == request) {
            (_, true) => r.user += t,
            (Role::System, false) if request.is_none_or(|q| i < q) => r.system += t,
            (Role::Tool, false) => r.tool_results += t,
            _ => r.history += t,
        }
    }
    r
}

impl Budgeting {
    /// What to send for a call on `messages` with the run's `max_tokens`, and its measure.
    pub fn fit(&self, messages: &[Message], max_tokens: Option<u32>) -> Fitted {
        if !self.enforce {
            let report = measure(messages, &self.name, self.budget.total, false, 0);
            return Fitted { messages: messages.to_vec(), max_tokens, report };
        }
        let b = &self.budget;
        let mut out = messages.to_vec();
        let mut trimmed = 0u32;
        self.drop_optional_layers(&mut out);
        let Some(request) = request_index(&out) else {
            let report = measure(&out, &self.name, b.total, true, 0);
            return Fitted { messages: out, max_tokens: Some(answer_cap(b.answer, max_tokens)), report };
        };
        // The last N exchanges.
        let all = exchanges(&out, request + 1);
        if all.len() > self.keep_turns {
            let (start, end) = (all[0].0, all[all.len() - self.keep_turns].0);
            trimmed += u32::try_from(end - start).unwrap_or(u32::MAX);
            out.drain(start..end);
        }
        // File contents: what the model wrote is on disk (its result said so), so a line stands
        // for it in every exchange; what it read stays in the latest exchange only.
        let latest = exchanges(&out, request + 1).last().map_or(out.len(), |e| e.0);
        for (i, m) in out.iter_mut().enumerate().skip(request + 1) {
            trimmed += summarise_files(m, i < latest);
        }
        // The total: the answer's share is kept for the answer, and tool results get their
        // share of what is left, the newest first served; older exchanges go until that fits.
        // The latest exchange always stays.
        let answer = answer_cap(b.answer, max_tokens);
        let room = b.total.saturating_sub(answer);
        loop {
            let said: u32 = out.iter().filter(|m| m.role != Role::Tool).map(message_tokens).sum();
            let share = b.tool_results.min(room.saturating_sub(said));
            let mut sent = out.clone();
            let cut = trim_tool_results(&mut sent, share);
            let results: u32 = sent.iter().filter(|m| m.role == Role::Tool).map(message_tokens).sum();
            let now = exchanges(&out, request + 1);
            if (said + results <= room && results <= b.tool_results) || now.len() <= 1 {
                out = sent;
                trimmed += cut;
                break;
            }
            let (start, end) = now[0];
            trimmed += u32::try_from(end - start).unwrap_or(u32::MAX);
            out.drain(start..end);
        }
        let report = measure(&out, &self.name, b.total, true, trimmed);
        Fitted { messages: out, max_tokens: Some(answer), report }
    }

    /// Optional layers out of the system prompt and the request while those are over their
    /// shares, in order.
    fn drop_optional_layers(&self, messages: &mut [Message]) {
        for layer in self.optional.iter().filter(|l| !l.trim().is_empty()) {
            let m = measure(messages, &self.name, self.budget.total, true, 0);
            if m.system <= self.budget.system && m.user <= self.budget.user {
                return;
            }
            let end = request_index(messages).map_or(messages.len(), |r| r + 1);
            for msg in &mut messages[..end] {
                if let Some(c) = msg.content.as_mut().filter(|c| c.contains(layer.as_str())) {
                    *c = c.replacen(layer.as_str(), "", 1).trim_start().to_string();
                }
            }
        }
    }
}

/// The answer's share, or the run's own cap when that is smaller.
fn answer_cap(share: u32, max_tokens: Option<u32>) -> u32 {
    max_tokens.filter(|m| *m > 0).map_or(share, |m| m.min(share))
}

/// A `content` string in a JSON object, replaced by a line that says how to see it again;
/// whether it changed.
fn summarise_content(json: &str, verb: &str) -> Option<String> {
    let mut v: Value = serde_json::from_str(json).ok()?;
    let content = v.get("content")?.as_str()?;
    if content.chars().count() <= SUMMARISE_OVER {
        return None;
    }
    let path = v.get("path").and_then(Value::as_str).unwrap_or("the file").to_string();
    let line = format!("[{path}: {} bytes {verb} earlier; readFile to see it]", thousands(content.len()));
    v["content"] = Value::String(line);
    serde_json::to_string(&v).ok()
}

/// File contents in one message: what createFile/updateFile wrote (in the call's arguments,
/// kept valid JSON) and, with `reads`, what readFile returned. How many were replaced.
fn summarise_files(m: &mut Message, reads: bool) -> u32 {
    let mut n = 0;
    for call in &mut m.tool_calls {
        if matches!(call.name.as_str(), "createFile" | "updateFile")
            && let Some(s) = summarise_content(&call.arguments, "written")
        {
            call.arguments = s;
            n += 1;
        }
    }
    if reads
        && m.role == Role::Tool
        && m.name.as_deref() == Some("readFile")
        && let Some(s) = m.content.as_deref().and_then(|c| summarise_content(c, "read"))
    {
        m.content = Some(s);
        n += 1;
    }
    n
}

/// Tool results within `share` tokens (framing included): the newest keep theirs first, older
/// ones are cut to what is left (never below [`TRIM_KEEP_MIN`] characters) with a note. How
/// many were cut.
fn trim_tool_results(messages: &mut [Message], share: u32) -> u32 {
    let mut left = share;
    let mut n = 0;
    for m in messages.iter_mut().rev().filter(|m| m.role == Role::Tool) {
        let Some(text) = m.content.as_mut() else { continue };
        let t = tokens(text) + PER_MESSAGE;
        if t <= left {
            left -= t;
            continue;
        }
        let keep = (left as usize * CHARS_PER_TOKEN).saturating_sub(TRIM_NOTE_ROOM).max(TRIM_KEEP_MIN);
        let len = text.chars().count();
        if len > keep {
            let head = wright_text::head(text, keep, wright_text::Unit::Chars);
            *text = format!(
                "{head}… [trimmed: {} of {} characters shown, to keep within the token budget]",
                thousands(keep),
                thousands(len)
            );
            n += 1;
        }
        left = left.saturating_sub(tokens(text) + PER_MESSAGE);
    }
    n
}

/// `12345` as `12,345`.
fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
