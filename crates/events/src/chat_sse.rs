//! A chat turn's events as `/api/chat` streams them: the contract's SSE names (`tool_result`,
//! `message`, `done`) and data (the variant's fields; a message as the client may see it).

use crate::EventKind;

/// The SSE `event:` name of a chat turn's event, as the contract names it.
pub fn sse_name(kind: &EventKind) -> &'static str {
    match kind {
        EventKind::ChatToolResult { .. } => "tool_result",
        EventKind::ChatMessage { .. } => "message",
        EventKind::Complete { .. } => "done",
        other => other.type_name(),
    }
}

/// `done`'s `finish_reason`: `stop` (answered), `round_limit`, `cancelled` or `error`.
pub fn finish_reason(success: bool, end: Option<crate::EndReason>) -> &'static str {
    match (success, end) {
        (true, _) => "stop",
        (false, Some(crate::EndReason::RoundLimit)) => "round_limit",
        (false, Some(crate::EndReason::Cancelled)) => "cancelled",
        _ => "error",
    }
}

/// The SSE `data:` of a chat turn's event: the variant's fields (no `type`), a message as the
/// client may see it.
pub fn sse_data(kind: &EventKind) -> serde_json::Value {
    let mut v = match kind {
        EventKind::ChatMessage { message } => serde_json::to_value(message.as_ref().public()).unwrap_or_default(),
        EventKind::Complete { success, end_reason, .. } => {
            let mut v = serde_json::to_value(kind).unwrap_or_default();
            v["finish_reason"] = finish_reason(*success, *end_reason).into();
            v
        }
        other => serde_json::to_value(other).unwrap_or_default(),
    };
    if let Some(map) = v.as_object_mut() {
        map.remove("type");
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::Outcome;

    #[test]
    fn chat_events_take_the_contract_names() {
        let done = EventKind::ChatToolResult {
            tool: "quiz".into(),
            success: true,
            outcome: Outcome::Success,
            message_type: "quiz".into(),
            content: None,
            structured_data: None,
            error: None,
            execution_order: 1,
            metadata: Box::new(serde_json::json!({})),
        };
        assert_eq!(sse_name(&done), "tool_result");
        let data = sse_data(&done);
        assert!(data.get("type").is_none() && data["tool"] == "quiz", "{data}");
    }
}
