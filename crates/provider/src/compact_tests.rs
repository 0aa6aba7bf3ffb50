use super::*;
use crate::ToolCall;
use proptest::prelude::*;

fn call(id: &str) -> ToolCall {
    ToolCall { id: id.into(), name: "readFile".into(), arguments: "{\"path\":\"a.js\"}".into() }
}

fn conversation(exchanges: usize, output: usize) -> Vec<Message> {
    let mut m = vec![Message::system("rules"), Message::user("make a counter app")];
    for i in 0..exchanges {
        let ids: Vec<String> = (0..=i % 2).map(|k| format!("c{i}-{k}")).collect();
        m.push(Message::assistant_calls(None, ids.iter().map(|id| call(id)).collect()));
        for id in &ids {
            m.push(Message::tool_result(id, "readFile", "x".repeat(output)));
        }
    }
    m.push(Message::assistant("done"));
    m
}

/// Every tool result answers a call of the assistant turn right before its group.
fn well_formed(m: &[Message]) -> bool {
    let mut open: Vec<String> = Vec::new();
    for msg in m {
        match msg.role {
            Role::Assistant => open = msg.tool_calls.iter().map(|c| c.id.clone()).collect(),
            Role::Tool => {
                let Some(id) = &msg.tool_call_id else { return false };
                if !open.contains(id) {
                    return false;
                }
            }
            _ => open.clear(),
        }
    }
    true
}

#[test]
fn old_output_is_shortened_before_anything_is_dropped() {
    let mut m = conversation(4, 1000);
    let before = chars(&m);
    let c = compact_to(&mut m, before - 100);
    assert!(c.shortened > 0 && c.dropped == 0, "{c:?}");
    assert!(m.iter().any(|x| x.content.as_deref().is_some_and(|t| t.ends_with(MARKER))));
    // The latest messages are untouched.
    assert_eq!(m.last().unwrap().content.as_deref(), Some("done"));
    assert!(m[m.len() - 2].content.as_ref().unwrap().len() == 1000);
}

#[test]
fn exchanges_are_dropped_whole_oldest_first_keeping_system_request_and_tail() {
    let mut m = conversation(6, 50);
    let c = compact_to(&mut m, 0);
    assert!(c.dropped > 0);
    assert_eq!(m[0].content.as_deref(), Some("rules"));
    assert_eq!(m[1].content.as_deref(), Some("make a counter app"));
    assert!(m.len() <= 2 + KEEP_TAIL + 2, "{}", m.len());
    assert!(well_formed(&m), "{m:#?}");
    // Nothing more can go.
    assert!(!compact_to(&mut m, 0).changed());
}

#[test]
fn sizes_are_read_from_every_wires_overflow_answer() {
    let cases = [
        ("request (8278 tokens) exceeds the available context size (8192 tokens), try increasing it", (8278, 8192)),
        ("HTTP 400: request (9032 tokens) exceeds the available context size (8192 tokens)", (9032, 8192)),
        ("Requested tokens (9000) exceed context window of 2048", (9000, 2048)),
        (
            "This model's maximum context length is 2048 tokens. However, you requested 2600 tokens (2000 in the messages, 600 in the completion).",
            (2600, 2048),
        ),
        (
            "This model's maximum context length is 8192 tokens. However, your request has 9000 input tokens.",
            (9000, 8192),
        ),
        ("prompt is too long: 215000 tokens > 200000 maximum", (215000, 200000)),
        ("The input token count (1054016) exceeds the maximum number of tokens allowed (1048576).", (1054016, 1048576)),
    ];
    for (text, want) in cases {
        assert_eq!(reported_sizes(text), Some(want), "{text}");
    }
    assert_eq!(reported_sizes("the context is too long"), None);
    let m = conversation(3, 100);
    assert_eq!(target_after_overflow(&m, "no numbers here"), chars(&m) / 2);
    let t = target_after_overflow(&m, "request (200 tokens) exceeds the available context size (100 tokens)");
    assert_eq!(t, (chars(&m) as f64 * 0.5 * 0.8) as usize);
}

/// The number in a clip marker.
fn cut_in(text: &str) -> usize {
    let after = text.split("[… ").nth(1).unwrap();
    after.split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn one_runaway_answer_is_clipped_keeping_its_head_and_tail() {
    // What a small local model did: prose until the context was nearly full, then the fix
    // request; nothing old is left to shorten or drop.
    let prose: String = (0..4000).map(|i| format!("word{i} ")).collect();
    let mut m = vec![
        Message::system("rules"),
        Message::user("make a counter app"),
        Message::assistant(prose.clone()),
        Message::user("The tests failed: fix them."),
    ];
    let before = chars(&m);
    let c = compact_to(&mut m, before / 4);
    assert_eq!((c.shortened, c.dropped, c.clipped), (0, 0, 1), "{c:?}");
    assert!(c.chars_after <= before / 4, "{c:?}");
    let clipped = m[2].content.as_deref().unwrap();
    assert!(clipped.starts_with("word0 word1 "), "the head stays");
    assert!(clipped.ends_with("word3998 word3999 "), "the tail stays");
    assert!(clipped.contains("characters cut here to fit the context window"));
    let kept = clipped.chars().count() - clipped.lines().find(|l| l.starts_with("[… ")).unwrap().chars().count() - 2;
    assert_eq!(cut_in(clipped) + kept, prose.chars().count(), "the marker says exactly how much was cut");
    assert_eq!(m[3].content.as_deref(), Some("The tests failed: fix them."));
    assert_eq!(&m[..2], &[Message::system("rules"), Message::user("make a counter app")]);
}

#[test]
fn a_huge_tool_result_in_the_latest_turns_is_clipped_not_the_request() {
    let mut m = conversation(1, 50);
    m[1] = Message::user("é".repeat(10_000)); // a long request stays whole
    let id = m[2].tool_calls[0].id.clone();
    m[3] = Message::tool_result(&id, "readFile", "ü".repeat(30_000)); // multi-byte: cut on chars
    let before = chars(&m);
    let c = compact_to(&mut m, before - 20_000);
    assert_eq!(c.clipped, 1, "{c:?}");
    assert_eq!(m[1].content.as_ref().unwrap().chars().count(), 10_000);
    let result = m[3].content.as_deref().unwrap();
    assert!(result.chars().count() < 11_000, "{}", result.chars().count());
    assert!(well_formed(&m));
    // At its floor nothing more can be clipped: the call ends instead of looping.
    let c = compact_to(&mut m, 0);
    assert!(chars(&m) > 10_000 && c.clipped <= 1, "{c:?}");
    assert!(!compact_to(&mut m, 0).changed());
}

#[test]
fn a_server_that_read_a_fraction_of_the_prompt_truncated_it() {
    let big = vec![Message::system("rules"), Message::user("x".repeat(60_000))];
    // 60,000 characters are at least 10,000 tokens; Ollama with num_ctx 2048 reads 2,048.
    assert!(prompt_was_truncated(&big, 2_048));
    // A real count (about four characters a token) is no truncation, nor is a missing one.
    assert!(!prompt_was_truncated(&big, 15_000));
    assert!(!prompt_was_truncated(&big, 6_000));
    assert!(!prompt_was_truncated(&big, 0));
    // Nor a count that small: a server counting only what its cache did not hold.
    assert!(!prompt_was_truncated(&big, 400));
    // A small prompt is never judged.
    assert!(!prompt_was_truncated(&[Message::user("x".repeat(3_000))], 10));
    // The budget then fits what the server read, with room for the answer.
    let budget = budget_after_truncation(2_048);
    assert!(budget < 2_048 * 3 && budget > 2_048 * 2, "{budget}");
}

proptest! {
    #[test]
    fn compaction_never_breaks_the_conversation(exchanges in 0usize..12, output in 0usize..2000, target in 0usize..20_000) {
        let mut m = conversation(exchanges, output);
        let original = m.clone();
        let c = compact_to(&mut m, target);
        prop_assert!(well_formed(&m));
        prop_assert!(c.chars_after <= c.chars_before);
        prop_assert_eq!(&m[..2], &original[..2]);
        let tail = KEEP_TAIL.min(m.len() - 2);
        prop_assert_eq!(&m[m.len() - tail..], &original[original.len() - tail..]);
        prop_assert!(c.chars_after <= target || !compact_to(&mut m.clone(), target).changed());
    }

    /// With outputs big enough to clip: the same structure, every clipped text keeps its head
    /// and tail, and compaction ends.
    #[test]
    fn clipping_keeps_structure_heads_and_tails(exchanges in 0usize..6, output in 2_000usize..40_000, target in 0usize..60_000) {
        let mut m = conversation(exchanges, output);
        let original = m.clone();
        let c = compact_to(&mut m, target);
        prop_assert!(well_formed(&m));
        prop_assert!(c.chars_after <= c.chars_before);
        prop_assert_eq!(&m[..2], &original[..2]);
        let tail = KEEP_TAIL.min(m.len() - 2);
        for (now, was) in m[m.len() - tail..].iter().zip(&original[original.len() - tail..]) {
            prop_assert_eq!((now.role, &now.tool_call_id, &now.tool_calls), (was.role, &was.tool_call_id, &was.tool_calls));
            let (now, was) = (now.content.as_deref().unwrap_or(""), was.content.as_deref().unwrap_or(""));
            if now != was {
                prop_assert!(now.contains("characters cut here"));
                prop_assert!(was.starts_with(&now[..100]) && was.ends_with(&now[now.len() - 100..]));
            }
        }
        prop_assert!(c.chars_after <= target || !compact_to(&mut m.clone(), target).changed());
    }
}
