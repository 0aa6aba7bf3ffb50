use super::*;
use serde_json::json;
use wright_provider::ToolCall;

/// A build that wrote and read big files for `turns` turns.
fn long_build(turns: usize) -> Vec<Message> {
    let mut msgs =
        vec![Message::system("You build web pages. ".repeat(40)), Message::user("Build this: a bakery page")];
    for i in 0..turns {
        let path = format!("page{i}.html");
        let write = ToolCall {
            id: format!("w{i}"),
            name: "createFile".into(),
            arguments: json!({"path": path, "content": "<p>bread</p>\n".repeat(400)}).to_string(),
        };
        msgs.push(Message::assistant_calls(Some("Writing it.".into()), vec![write]));
        msgs.push(Message::tool_result(format!("w{i}"), "createFile", json!({"ok": true, "path": path}).to_string()));
        let read =
            ToolCall { id: format!("r{i}"), name: "readFile".into(), arguments: json!({"path": path}).to_string() };
        msgs.push(Message::assistant_calls(None, vec![read]));
        let body = json!({"ok": true, "path": path, "content": "<p>bread</p>\n".repeat(400)}).to_string();
        msgs.push(Message::tool_result(format!("r{i}"), "readFile", body));
    }
    msgs
}

fn enforced(budget: TokenBudget) -> Budgeting {
    Budgeting { enforce: true, ..Budgets { static_page: budget, ..Budgets::default() }.for_template(Template::Static) }
}

#[test]
fn measuring_only_sends_the_conversation_as_it_is() {
    let msgs = long_build(5);
    let b = Budgets::default().for_template(Template::Static);
    let f = b.fit(&msgs, Some(900));
    assert_eq!(f.messages, msgs);
    assert_eq!(f.max_tokens, Some(900));
    let r = f.answered(1500, &b.budget);
    assert!(!r.enforced);
    assert_eq!(r.name, "static");
    assert_eq!(r.total, 3200);
    assert_eq!(r.answer, 1500);
    assert_eq!(r.used, msgs.iter().map(message_tokens).sum::<u32>() + 1500);
    assert_eq!(r.system, message_tokens(&msgs[0]));
    assert_eq!(r.user, message_tokens(&msgs[1]));
    assert!(r.over.contains(&"total".to_string()) && r.over.contains(&"tool_results".to_string()), "{:?}", r.over);
}

#[test]
fn a_long_build_is_kept_within_the_total_with_the_request_and_the_latest_turn_whole() {
    let msgs = long_build(12);
    let before: u32 = msgs.iter().map(message_tokens).sum();
    let b = enforced(TokenBudget::STATIC);
    let f = b.fit(&msgs, None);
    let sent: u32 = f.messages.iter().map(message_tokens).sum();
    assert_eq!(f.max_tokens, Some(2000), "the answer's share");
    assert!(sent + 2000 <= 3200, "prompt {sent} + answer over the total (was {before})");
    assert_eq!(f.messages[0], msgs[0], "the system prompt is never cut");
    assert_eq!(f.messages[1], msgs[1], "the request is always kept");
    // The latest call is still answered by its result (trimmed, with a note).
    let last = f.messages.last().unwrap();
    assert_eq!(last.tool_call_id.as_deref(), Some("r11"));
    assert!(last.content.as_deref().unwrap().contains("characters shown, to keep within the token budget]"));
    assert!(f.report.tool_results <= 500, "{:?}", f.report);
    assert!(f.report.trimmed > 0);
    // No orphaned results: every tool result follows the call it answers.
    for (i, m) in f.messages.iter().enumerate().filter(|(_, m)| m.role == Role::Tool) {
        let id = m.tool_call_id.as_deref().unwrap();
        assert!(f.messages[..i].iter().any(|a| a.tool_calls.iter().any(|c| c.id == id)), "orphan {id}");
    }
    let r = f.answered(1800, &b.budget);
    assert!(r.used <= 3200 && !r.over.contains(&"total".to_string()), "{r:?}");
}

#[test]
fn earlier_file_contents_become_a_line_that_says_how_to_see_them() {
    let msgs = long_build(3);
    let b = enforced(TokenBudget { system: 5000, user: 5000, answer: 1000, tool_results: 50_000, total: 100_000 });
    let f = b.fit(&msgs, None);
    assert_eq!(f.messages.len(), msgs.len(), "all within the total: nothing dropped");
    let args: Value = serde_json::from_str(&f.messages[2].tool_calls[0].arguments).unwrap();
    assert_eq!(args["content"], "[page0.html: 5,200 bytes written earlier; readFile to see it]");
    let read: Value = serde_json::from_str(f.messages[5].content.as_deref().unwrap()).unwrap();
    assert_eq!(read["content"], "[page0.html: 5,200 bytes read earlier; readFile to see it]");
    // The latest exchange keeps what it read.
    assert_eq!(f.messages.last(), msgs.last());
}

#[test]
fn only_the_last_turns_are_sent() {
    let msgs = long_build(10);
    let b = Budgeting {
        keep_turns: 4,
        ..enforced(TokenBudget { system: 5000, user: 5000, answer: 1000, tool_results: 50_000, total: 100_000 })
    };
    let f = b.fit(&msgs, None);
    assert_eq!(f.messages.len(), 2 + 8, "system, request and four exchanges of two messages");
    assert_eq!(f.messages[2].tool_calls[0].id, "w8");
}

#[test]
fn notes_go_first_when_the_system_prompt_is_over_its_share_and_the_rest_is_reported() {
    let notes = "Lessons from earlier builds:\n- close every tag\n".to_string();
    let msgs = vec![Message::system("x".repeat(4000)), Message::user(format!("{notes}\n\nBuild this: a clock"))];
    let b = Budgeting { optional: vec![notes], ..enforced(TokenBudget::STATIC) };
    let f = b.fit(&msgs, Some(50_000));
    assert_eq!(f.messages[0], msgs[0], "the core is never cut");
    assert_eq!(f.messages[1].content.as_deref(), Some("Build this: a clock"));
    assert_eq!(f.max_tokens, Some(2000), "a larger cap is brought down to the share");
    let r = f.answered(10, &b.budget);
    assert_eq!(r.over, vec!["system".to_string()]);
    // Within its shares, nothing optional goes.
    let small = vec![Message::system("s"), msgs[1].clone()];
    assert_eq!(b.fit(&small, None).messages, small);
}

#[test]
fn a_smaller_cap_of_the_run_stays() {
    let b = enforced(TokenBudget::STATIC);
    assert_eq!(b.fit(&long_build(1), Some(700)).max_tokens, Some(700));
    assert_eq!(b.fit(&long_build(1), Some(0)).max_tokens, Some(2000));
}

#[test]
fn thousands_are_grouped() {
    assert_eq!(thousands(5), "5");
    assert_eq!(thousands(2345), "2,345");
    assert_eq!(thousands(1_234_567), "1,234,567");
}
