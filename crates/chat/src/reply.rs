//! The reply's shape as a rule in code (seed 001, "contextual reply"): several tools worked → a
//! brief coordinating message of one or two sentences; one → a two- or three-sentence
//! explanation; none → a normal answer. And the prompt that asks for it, with the recent
//! history inside a token budget.

use crate::tool::ToolResult;
pub use crate::transcript::as_text;
use wright_events::Lang;
use wright_events::chat::{ChatMessage, Role};
use wright_provider::Message;

/// How the reply is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyForm {
    /// Several tools worked: 1–2 sentences tying them together.
    Brief,
    /// One tool worked: 2–3 sentences explaining its result.
    Explain,
    /// No tool worked or none ran: a normal answer.
    Conversation,
}

impl ReplyForm {
    /// The rule: by the number of tools that succeeded.
    pub fn for_successes(n: usize) -> Self {
        match n {
            0 => ReplyForm::Conversation,
            1 => ReplyForm::Explain,
            _ => ReplyForm::Brief,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ReplyForm::Brief => "brief",
            ReplyForm::Explain => "explain",
            ReplyForm::Conversation => "conversation",
        }
    }

    fn instruction(self) -> &'static str {
        match self {
            ReplyForm::Brief => {
                "Several learning materials were made for the student and are shown beside your reply. Write a \
                 brief coordinating message of 1 to 2 sentences that says what they are and how to use them \
                 together. Do not repeat their content."
            }
            ReplyForm::Explain => {
                "A learning material was made for the student and is shown beside your reply. Write a 2 to 3 \
                 sentence explanation that introduces it and the key idea behind it. Do not repeat its content."
            }
            ReplyForm::Conversation => {
                "Answer as a patient tutor: clear, correct and concise, with Markdown where it helps (short lists, \
                 bold key terms). No raw HTML."
            }
        }
    }

    /// A cap on the reply's length that fits its shape.
    pub fn max_tokens(self) -> u32 {
        match self {
            ReplyForm::Brief => 120,
            ReplyForm::Explain => 220,
            ReplyForm::Conversation => 900,
        }
    }
}

/// Roughly how many tokens a text costs (4 characters each), for the history budget.
pub fn tokens_of(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// The model's messages for the reply: the rules, the history that fits in `budget` tokens
/// (newest kept), and the user's message.
pub fn prompt(
    form: ReplyForm,
    lang: Lang,
    results: &[ToolResult],
    history: &[ChatMessage],
    message: &str,
    budget: usize,
) -> Vec<Message> {
    let mut system = format!(
        "You are wright's tutor, helping a student learn. Always answer in {}. {}",
        lang.name(),
        form.instruction()
    );
    let worked: Vec<&ToolResult> = results.iter().filter(|r| r.success).collect();
    let failed: Vec<&ToolResult> = results.iter().filter(|r| !r.success).collect();
    if !worked.is_empty() {
        system.push_str("\n\nShown to the student now:");
        for r in &worked {
            system.push_str(&format!("\n- {}", r.content));
        }
    }
    if !failed.is_empty() {
        system.push_str("\n\nThese could not be made (say so in a few words, without technical detail):");
        for r in &failed {
            system.push_str(&format!("\n- {}: {}", r.tool, r.error.as_deref().unwrap_or("failed")));
        }
    }
    let mut kept = Vec::new();
    let mut used = tokens_of(&system) + tokens_of(message);
    for m in history.iter().rev() {
        let text = as_text(m);
        let cost = tokens_of(&text);
        if used + cost > budget {
            break;
        }
        used += cost;
        kept.push(match m.role {
            Role::User => Message::user(text),
            Role::Assistant => Message::assistant(text),
        });
    }
    kept.reverse();
    let mut out = vec![Message::system(system)];
    out.extend(kept);
    out.push(Message::user(message.to_string()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use wright_events::chat::{ContentFlags, Outcome};

    fn msg(role: Role, text: &str) -> ChatMessage {
        ChatMessage {
            id: text.into(),
            role,
            parts: vec![wright_events::chat::Part::Text { text: text.into() }],
            flags: ContentFlags::default(),
            run: None,
            created_at: String::new(),
            feedback: None,
        }
    }

    #[test]
    fn the_form_follows_the_number_of_successes() {
        assert_eq!(ReplyForm::for_successes(0), ReplyForm::Conversation);
        assert_eq!(ReplyForm::for_successes(1), ReplyForm::Explain);
        assert_eq!(ReplyForm::for_successes(3), ReplyForm::Brief);
        assert!(ReplyForm::Brief.max_tokens() < ReplyForm::Conversation.max_tokens());
    }

    #[test]
    fn history_is_cut_to_the_budget_newest_first() {
        let long = "x".repeat(800);
        let history = vec![msg(Role::User, &long), msg(Role::Assistant, "recent answer")];
        let failed = ToolResult {
            tool: "quiz".into(),
            success: false,
            outcome: Outcome::Error,
            content: String::new(),
            part: None,
            message_type: "error".into(),
            metadata: serde_json::json!({}),
            error: Some("timed out".into()),
            execution_order: 1,
        };
        let p = prompt(ReplyForm::Conversation, Lang::Pt, &[failed], &history, "oi", 200);
        assert_eq!(p.len(), 3, "the long old message does not fit: {p:?}");
        let system = p[0].content.clone().unwrap_or_default();
        assert!(system.contains("Portuguese") && system.contains("quiz: timed out"), "{system}");
        assert_eq!(p[1].content.as_deref(), Some("recent answer"));
    }
}
