//! [`ChatStore`] on PostgreSQL.

#![allow(unused_variables)]
use super::{PgStore, todo_pg};
use crate::{ChatStore, Conversation, Result, StoredCard};
use async_trait::async_trait;
use wright_events::chat::{ChatMessage, Part};

#[async_trait]
impl ChatStore for PgStore {
    async fn create_conversation(&self, id: &str, user: &str, title: &str) -> Result<()> {
        Err(todo_pg("ChatStore"))
    }

    async fn conversation(&self, id: &str) -> Result<Conversation> {
        Err(todo_pg("ChatStore"))
    }

    async fn conversations(&self, user: &str, limit: u32) -> Result<Vec<Conversation>> {
        Err(todo_pg("ChatStore"))
    }

    async fn add_message(&self, conversation: &str, message: &ChatMessage, tools: &[String]) -> Result<()> {
        Err(todo_pg("ChatStore"))
    }

    async fn replace_parts(&self, conversation: &str, message_id: &str, parts: &[Part]) -> Result<()> {
        Err(todo_pg("ChatStore"))
    }

    async fn messages(&self, conversation: &str, last: Option<u32>) -> Result<Vec<ChatMessage>> {
        Err(todo_pg("ChatStore"))
    }

    async fn message(&self, conversation: &str, id: &str) -> Result<ChatMessage> {
        Err(todo_pg("ChatStore"))
    }

    async fn clear_messages(&self, conversation: &str) -> Result<u64> {
        Err(todo_pg("ChatStore"))
    }

    async fn open_chat_runs(&self) -> Result<Vec<(String, String)>> {
        Err(todo_pg("ChatStore"))
    }

    async fn set_feedback(&self, conversation: &str, message_id: &str, value: Option<i8>) -> Result<()> {
        Err(todo_pg("ChatStore"))
    }

    async fn feedback_by_tool(&self) -> Result<Vec<(String, u64, u64)>> {
        Err(todo_pg("ChatStore"))
    }

    async fn add_cards(&self, cards: &[StoredCard]) -> Result<u64> {
        Err(todo_pg("ChatStore"))
    }

    async fn cards(&self, user: &str, due_before: Option<&str>, limit: u32) -> Result<Vec<StoredCard>> {
        Err(todo_pg("ChatStore"))
    }

    async fn card(&self, user: &str, id: &str) -> Result<StoredCard> {
        Err(todo_pg("ChatStore"))
    }

    async fn save_card(&self, card: &StoredCard) -> Result<()> {
        Err(todo_pg("ChatStore"))
    }
}
