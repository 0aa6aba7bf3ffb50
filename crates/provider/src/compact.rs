//! Making a conversation fit a model's context window: one set of rules for every provider.
//!
//! The in-process engine measures exactly (it has the tokenizer) and calls the steps one at a
//! time; the HTTP wires learn of an overflow from the server's answer, read the sizes it
//! reports, and shrink to a character budget before trying once more. Either way: old tool
//! output is shortened first, then the oldest exchanges are dropped whole (an assistant turn
//! with its tool results, so no wire sees an orphaned call or result); the system prompt, the
//! request and the latest turns always stay.

use crate::{Message, Role};

/// The latest messages that are never shortened or dropped.
pub const KEEP_TAIL: usize = 4;
/// Tool output longer than this (bytes) is shortened…
const LONG_OUTPUT: usize = 300;
/// …to its first this many characters.
const SHORTENED_TO: usize = 200;
const MARKER: &str = "… [shortened to fit the context window]";

/// What a compaction did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Compaction {
    pub shortened: usize,
    pub dropped: usize,
    pub chars_before: usize,
    pub chars_after: usize,
}

impl Compaction {
    pub fn changed(&self) -> bool {
        self.shortened + self.dropped > 0
    }
}

/// The size of a conversation in characters of text, call arguments included.
pub fn chars(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| {
            m.content.as_ref().map_or(0, |c| c.chars().count())
                + m.tool_calls.iter().map(|c| c.name.len() + c.arguments.chars().count()).sum::<usize>()
        })
        .sum()
}

/// Shorten tool results outside the last `keep_tail` messages; returns how many changed.
pub fn shorten_old_tool_output(messages: &mut [Message], keep_tail: usize) -> usize {
    let cut = messages.len().saturating_sub(keep_tail);
    let mut n = 0;
    for m in messages.iter_mut().take(cut) {
        if m.role != Role::Tool {
            continue;
        }
        if let Some(c) = m.content.as_mut().filter(|c| c.len() > LONG_OUTPUT && !c.ends_with(MARKER)) {
            let head: String = c.chars().take(SHORTENED_TO).collect();
            *c = format!("{head}{MARKER}");
            n += 1;
        }
    }
    n
}

/// Index of the first message that may be dropped: after the leading system messages and the
/// first user message (the request).
fn first_removable(messages: &[Message]) -> Option<usize> {
    let request = messages.iter().position(|m| m.role == Role::User)?;
    Some(request + 1)
}

/// Drop the oldest exchange that lies wholly before the last `keep_tail` messages: an
/// assistant turn with its tool results, or one other message. `false`: nothing can go.
pub fn drop_oldest_exchange(messages: &mut Vec<Message>, keep_tail: usize) -> bool {
    let Some(start) = first_removable(messages) else { return false };
    let limit = messages.len().saturating_sub(keep_tail);
    if start >= limit {
        return false;
    }
    let mut end = start + 1;
    if messages[start].role == Role::Assistant && !messages[start].tool_calls.is_empty() {
        while end < messages.len() && messages[end].role == Role::Tool {
            end += 1;
        }
    }
    if end > limit {
        return false;
    }
    messages.drain(start..end);
    true
}

/// Shrink `messages` to at most `target_chars` (or as close as the rules allow).
pub fn compact_to(messages: &mut Vec<Message>, target_chars: usize) -> Compaction {
    let chars_before = chars(messages);
    let mut out = Compaction { chars_before, ..Compaction::default() };
    out.shortened = shorten_old_tool_output(messages, KEEP_TAIL);
    while chars(messages) > target_chars && drop_oldest_exchange(messages, KEEP_TAIL) {
        out.dropped += 1;
    }
    out.chars_after = chars(messages);
    out
}

fn numbers(s: &str) -> Vec<u64> {
    s.split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty() && w.len() < 12)
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// The sizes an overflow answer reports, as `(requested, allowed)` tokens, from the wordings
/// of llama.cpp, llama-cpp-python, vLLM, OpenAI, Anthropic and Gemini. Numbers are read around
/// the wording itself, so a prefix such as "HTTP 400:" is never taken for a size.
pub fn reported_sizes(message: &str) -> Option<(u64, u64)> {
    let m = message.to_ascii_lowercase();
    let split = |pivot: &str| m.find(pivot).map(|at| (numbers(&m[..at]), numbers(&m[at + pivot.len()..])));
    let (requested, allowed) = if let Some((before, after)) =
        split("exceeds the available context size").or_else(|| split("exceed context window of"))
    {
        // llama.cpp "request (8278 tokens) exceeds … (8192 tokens)"; llama-cpp-python
        // "Requested tokens (9000) exceed context window of 2048".
        (*before.last()?, *after.first()?)
    } else if m.contains("too large") {
        // vLLM's "'max_tokens' … is too large": the answer's budget, not the conversation.
        return None;
    } else if let Some((_, after)) = split("maximum context length is") {
        // OpenAI / vLLM / llama-cpp-python: "maximum context length is N tokens. However, you
        // requested M tokens" or "your request has M input tokens".
        (*after.get(1)?, *after.first()?)
    } else if let Some((_, after)) = split("prompt is too long").or_else(|| split("input token count")) {
        // Anthropic "prompt is too long: 215000 tokens > 200000 maximum"; Gemini "The input
        // token count (1054016) exceeds the maximum number of tokens allowed (1048576)".
        (*after.first()?, *after.get(1)?)
    } else {
        return None;
    };
    (requested > allowed && allowed > 0).then_some((requested, allowed))
}

/// How many characters to shrink to after an overflow answer: in proportion to what the server
/// reported, with a fifth left for the answer; half the conversation when it said no sizes.
pub fn target_after_overflow(messages: &[Message], error: &str) -> usize {
    let now = chars(messages);
    match reported_sizes(error) {
        Some((requested, allowed)) => ((now as f64) * (allowed as f64 / requested as f64) * 0.8) as usize,
        None => now / 2,
    }
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
