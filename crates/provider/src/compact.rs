//! Making a conversation fit a model's context window: one set of rules for every provider.
//!
//! The in-process engine measures exactly (it has the tokenizer) and calls the steps one at a
//! time; the HTTP wires learn of an overflow from the server's answer, read the sizes it
//! reports, and shrink to a character budget before trying once more. Either way: old tool
//! output is shortened first, then the oldest exchanges are dropped whole (an assistant turn
//! with its tool results, so no wire sees an orphaned call or result), and last the longest
//! text left is clipped in its middle (a runaway prose answer or a huge tool result in the
//! latest turns, which nothing else may touch). The system prompt and the request always
//! stay whole, and so do the latest turns unless one of them is the oversized one.

use crate::{Message, Role};
use wright_text::Unit;

/// The latest messages that are never shortened or dropped.
pub const KEEP_TAIL: usize = 4;
/// Tool output longer than this (bytes) is shortened…
const LONG_OUTPUT: usize = 300;
/// …to its first this many characters.
const SHORTENED_TO: usize = 200;
const MARKER: &str = "… [shortened to fit the context window]";

/// A clipped message keeps at least this many characters, head and tail together.
const CLIP_KEEP_MIN: usize = 2_000;
/// Room for the clip marker: a clip must cut more than this, or it would not shrink anything.
const CLIP_MARKER_ROOM: usize = 80;

/// What a compaction did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Compaction {
    pub shortened: usize,
    pub dropped: usize,
    /// Messages clipped in their middle ([`clip_longest`]).
    pub clipped: usize,
    pub chars_before: usize,
    pub chars_after: usize,
}

impl Compaction {
    pub fn changed(&self) -> bool {
        self.shortened + self.dropped + self.clipped > 0
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

/// Clip the longest message text by about `excess` characters, keeping its head and its tail
/// around a marker that says how much was cut, and at least [`CLIP_KEEP_MIN`] characters.
/// Never the system prompt or the request, and never a tool call's arguments (they must stay
/// valid JSON). `false` when no message is long enough to shrink.
pub fn clip_longest(messages: &mut [Message], excess: usize) -> bool {
    let request = messages.iter().position(|m| m.role == Role::User);
    let longest = messages
        .iter_mut()
        .enumerate()
        .filter(|(i, m)| m.role != Role::System && Some(*i) != request)
        .filter_map(|(_, m)| m.content.as_mut())
        .map(|c| (c.chars().count(), c))
        .filter(|(n, _)| *n > CLIP_KEEP_MIN + CLIP_MARKER_ROOM)
        .max_by_key(|(n, _)| *n);
    let Some((len, text)) = longest else { return false };
    let keep = len.saturating_sub(excess.saturating_add(CLIP_MARKER_ROOM)).max(CLIP_KEEP_MIN);
    *text = clip_middle(text, len, keep);
    true
}

/// `text` (of `len` characters) cut to its first and last `keep / 2` characters or so, with a
/// marker in between.
fn clip_middle(text: &str, len: usize, keep: usize) -> String {
    let head = keep / 2;
    let tail = keep - head;
    let cut = len - head - tail;
    let (head, tail) = (wright_text::head(text, head, Unit::Chars), wright_text::tail(text, tail, Unit::Chars));
    format!("{head}\n[… {cut} characters cut here to fit the context window …]\n{tail}")
}

/// Shrink `messages` to at most `target_chars` (or as close as the rules allow).
pub fn compact_to(messages: &mut Vec<Message>, target_chars: usize) -> Compaction {
    let chars_before = chars(messages);
    let mut out = Compaction { chars_before, ..Compaction::default() };
    out.shortened = shorten_old_tool_output(messages, KEEP_TAIL);
    while chars(messages) > target_chars && drop_oldest_exchange(messages, KEEP_TAIL) {
        out.dropped += 1;
    }
    loop {
        let now = chars(messages);
        if now <= target_chars || !clip_longest(messages, now - target_chars) {
            break;
        }
        out.clipped += 1;
    }
    out.chars_after = chars(messages);
    out
}

/// Characters per token that no common tokenizer reaches on prose, code or JSON (they give
/// 2.5–4.5), so a token count estimated with it errs low.
const GENEROUS_CHARS_PER_TOKEN: usize = 6;
/// Prompts smaller than this (estimated tokens, at the least) are too small to judge.
const TRUNCATION_MIN_TOKENS: u64 = 1_500;
/// Reported counts below this are not judged: a context that small is rare, and some server
/// versions (Ollama's, at times) count only the prompt tokens their cache did not hold, which
/// for one more tool result is a few hundred.
const TRUNCATION_MIN_REPORTED: u64 = 1_000;

/// Whether a server's count of prompt tokens shows that it dropped part of the prompt (as
/// Ollama does when the conversation is longer than its `num_ctx`): fewer than half of the
/// fewest tokens the messages can hold. Tools are not counted, since some servers leave them
/// out of a prompt whose template has no place for them; a server that reports no usage (0)
/// is never suspected. Pass the prompt tokens with the cached ones added, so a server that
/// leaves cache hits out of its count is not taken for one that cut the prompt.
pub fn prompt_was_truncated(messages: &[Message], reported_prompt_tokens: u64) -> bool {
    let at_least = (chars(messages) / GENEROUS_CHARS_PER_TOKEN) as u64;
    reported_prompt_tokens >= TRUNCATION_MIN_REPORTED
        && at_least >= TRUNCATION_MIN_TOKENS
        && reported_prompt_tokens * 2 < at_least
}

/// The character budget that fits a server which kept only `reported_prompt_tokens` of a
/// prompt: that many tokens at three characters each (code and JSON seldom pack fewer), less
/// a fifth for the answer.
pub fn budget_after_truncation(reported_prompt_tokens: u64) -> usize {
    (reported_prompt_tokens as usize).saturating_mul(3) / 5 * 4
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
