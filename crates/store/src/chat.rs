//! What the tutoring chat keeps: conversations and their messages (typed parts, see
//! [`wright_events::chat`]), the user's 👍/👎 on replies, and each user's flashcard deck with
//! its scheduling state.
//!
//! A chat turn is also a run of kind `chat` (its events replay the reply); the message only
//! points at it (`ChatMessage::run`), so the conversation reads back without replaying runs.

use crate::{Result, StoreError};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use wright_events::chat::{ChatMessage, Part, Role};

/// Longest title taken from a first message, in characters.
pub const TITLE_CHARS: usize = 60;

/// A conversation as stored, with how many messages it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    pub id: String,
    pub user_id: String,
    /// Empty until the first user message names it.
    pub title: String,
    pub created_at: String,
    /// When a message was last added (lists show the most recently active first).
    pub updated_at: String,
    pub messages: u32,
}

/// A flashcard in a user's deck with the scheduler's state (FSRS fields), stored as the
/// scheduler gives it so a review is one read and one write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredCard {
    pub id: String,
    pub user_id: String,
    pub front: String,
    pub back: String,
    pub created_at: String,
    /// When it is next due (RFC 3339 UTC, so due dates sort as text).
    pub due: String,
    pub stability: f64,
    pub difficulty: f64,
    pub elapsed_days: i64,
    pub scheduled_days: i64,
    pub reps: u32,
    pub lapses: u32,
    /// `new`, `learning`, `review` or `relearning`.
    pub state: String,
    pub last_review: Option<String>,
}

/// The chat's persistence. Every [`crate::Store`] is one, so the server needs a single handle.
#[async_trait]
pub trait ChatStore: Send + Sync {
    /// A new, empty conversation of `user`; [`StoreError::Invalid`] when the id is taken.
    async fn create_conversation(&self, id: &str, user: &str, title: &str) -> Result<()>;
    /// [`StoreError::NotFound`] when there is none.
    async fn conversation(&self, id: &str) -> Result<Conversation>;
    /// `user`'s conversations, the most recently active (`updated_at`) first; at most `limit`.
    async fn conversations(&self, user: &str, limit: u32) -> Result<Vec<Conversation>>;
    /// Append `message` to `conversation` as its next message, with the names of the tools
    /// that took part in it (for [`ChatStore::feedback_by_tool`]). Its flags are computed from
    /// its parts; a conversation without a title takes it from its first user message.
    async fn add_message(&self, conversation: &str, message: &ChatMessage, tools: &[String]) -> Result<()>;
    /// Replace a message's parts (a quiz answered, a part filled in later); flags follow them.
    async fn replace_parts(&self, conversation: &str, message_id: &str, parts: &[Part]) -> Result<()>;
    /// The conversation's messages, oldest first; with `last`, only the last that many (still
    /// oldest first). An unknown conversation has none.
    async fn messages(&self, conversation: &str, last: Option<u32>) -> Result<Vec<ChatMessage>>;
    /// One message; [`StoreError::NotFound`] when absent or in another conversation.
    async fn message(&self, conversation: &str, id: &str) -> Result<ChatMessage>;
    /// Drop every message of the conversation (the conversation stays); how many there were.
    async fn clear_messages(&self, conversation: &str) -> Result<u64>;
    /// Chat turns (runs of kind `chat`) that have not ended: their ids and what their record
    /// says of who answers them (its `workspace`).
    async fn open_chat_runs(&self) -> Result<Vec<(String, String)>>;
    /// Say that the server answering chat turn `run` (a chat or assistant turn) is still at
    /// it: the turn's lease runs `lease` from now, by the store's clock. False when the turn
    /// is not open (it ended, or the sweep ended it: stop answering it).
    async fn hold_turn(&self, run: &str, lease: Duration) -> Result<bool>;
    /// Give turn `run`'s lease back: it waits for a page and no server answers it now, so
    /// the sweep leaves it alone until a server holds it again.
    async fn release_turn(&self, run: &str) -> Result<()>;
    /// Open chat turns whose lease ran out (the server answering them died, or lost the
    /// store): any server's sweep ends them. Turns waiting for a page, which hold no server,
    /// and turns that never took a lease are not listed.
    async fn lapsed_turns(&self) -> Result<Vec<String>>;
    /// The user's 👍 (`Some(1)`), 👎 (`Some(-1)`) or neither (`None`) on an assistant's reply;
    /// [`StoreError::Invalid`] for a user's message or another value.
    async fn set_feedback(&self, conversation: &str, message_id: &str, value: Option<i8>) -> Result<()>;
    /// Per tool name, how many rated replies it took part in got 👍 and how many 👎
    /// (`(tool, up, down)`), by name; tools with no rated reply are not listed.
    async fn feedback_by_tool(&self) -> Result<Vec<(String, u64, u64)>>;
    /// Add cards to their users' decks; a card whose user already has its front is skipped.
    /// Returns how many were added.
    async fn add_cards(&self, cards: &[StoredCard]) -> Result<u64>;
    /// `user`'s cards due at or before `due_before` (all when `None`), soonest due first, then
    /// oldest; at most `limit`.
    async fn cards(&self, user: &str, due_before: Option<&str>, limit: u32) -> Result<Vec<StoredCard>>;
    /// One of `user`'s cards; [`StoreError::NotFound`] when absent or another user's.
    async fn card(&self, user: &str, id: &str) -> Result<StoredCard>;
    /// Store a reviewed card's scheduling fields (front and back stay as added);
    /// [`StoreError::NotFound`] when its user has no such card.
    async fn save_card(&self, card: &StoredCard) -> Result<()>;
}

/// The title a conversation takes from a user's message: its first text part on one line,
/// cut to [`TITLE_CHARS`] characters (never inside one); `None` when it has no text.
pub fn title_from(parts: &[Part]) -> Option<String> {
    let text = parts.iter().find_map(|p| match p {
        Part::Text { text } => Some(text),
        _ => None,
    })?;
    // A title is shown on one line; newlines and runs of spaces from the message are noise.
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let title: String = line.chars().take(TITLE_CHARS).collect();
    (!title.is_empty()).then_some(title)
}

/// Check a feedback value for a message of `role`: only an assistant's reply is rated, and only
/// up (1) or down (-1).
pub(crate) fn check_feedback(role: Role, value: Option<i8>) -> Result<()> {
    match value {
        None => Ok(()),
        Some(_) if role != Role::Assistant => Err(StoreError::Invalid("only an assistant's reply can be rated".into())),
        Some(1 | -1) => Ok(()),
        Some(v) => Err(StoreError::Invalid(format!("feedback is 1 or -1, not {v}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Part {
        Part::Text { text: t.into() }
    }

    #[test]
    fn a_title_is_the_first_text_on_one_line_cut_at_a_char() {
        let code = Part::Code { language: "rust".into(), code: "fn main() {}".into() };
        assert_eq!(title_from(&[code.clone(), text("  What is\n a  monad? ")]), Some("What is a monad?".into()));
        let long = "é".repeat(100);
        let title = title_from(&[text(&long)]).unwrap_or_default();
        assert_eq!(title.chars().count(), TITLE_CHARS);
        assert_eq!(title_from(&[code]), None);
        assert_eq!(title_from(&[text(" \n ")]), None);
    }

    #[test]
    fn only_replies_are_rated_up_or_down() {
        assert!(check_feedback(Role::Assistant, Some(1)).is_ok());
        assert!(check_feedback(Role::Assistant, Some(-1)).is_ok());
        assert!(check_feedback(Role::Assistant, None).is_ok());
        assert!(check_feedback(Role::User, None).is_ok());
        assert!(matches!(check_feedback(Role::User, Some(1)), Err(StoreError::Invalid(_))));
        assert!(matches!(check_feedback(Role::Assistant, Some(2)), Err(StoreError::Invalid(_))));
    }
}
