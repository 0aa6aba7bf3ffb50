//! [`AssistantStore`] on PostgreSQL.

#![allow(unused_variables)]
use super::{PgStore, todo_pg};
use crate::Result;
use crate::assistant::*;
use async_trait::async_trait;

#[async_trait]
impl AssistantStore for PgStore {
    async fn begin_assistant_turn(&self, turn: &AssistantTurn) -> Result<()> {
        Err(todo_pg("AssistantStore"))
    }

    async fn assistant_turn(&self, run: &str) -> Result<AssistantTurn> {
        Err(todo_pg("AssistantStore"))
    }

    async fn save_assistant_turn(&self, turn: &AssistantTurn) -> Result<()> {
        Err(todo_pg("AssistantStore"))
    }

    async fn wait_for_page(&self, turn: &AssistantTurn, calls: &[CallRow]) -> Result<()> {
        Err(todo_pg("AssistantStore"))
    }

    async fn answer_calls(&self, conversation: &str, answers: &[(String, Answer)], answerer: &str) -> Result<Answered> {
        Err(todo_pg("AssistantStore"))
    }

    async fn round_calls(&self, run: &str, round: u32) -> Result<Vec<CallRow>> {
        Err(todo_pg("AssistantStore"))
    }

    async fn pending_calls(&self, conversation: &str) -> Result<Vec<CallRow>> {
        Err(todo_pg("AssistantStore"))
    }

    async fn close_pending(&self, conversation: &str, why: &str) -> Result<Vec<String>> {
        Err(todo_pg("AssistantStore"))
    }

    async fn expire_calls(&self, now: &str) -> Result<Vec<(String, String)>> {
        Err(todo_pg("AssistantStore"))
    }

    async fn create_embed_key(&self, key: &EmbedKey, key_hash: &str) -> Result<()> {
        Err(todo_pg("AssistantStore"))
    }

    async fn embed_key_by_hash(&self, key_hash: &str) -> Result<Option<EmbedKey>> {
        Err(todo_pg("AssistantStore"))
    }

    async fn embed_key(&self, id: &str) -> Result<Option<EmbedKey>> {
        Err(todo_pg("AssistantStore"))
    }

    async fn embed_keys(&self, owner: &str) -> Result<Vec<EmbedKey>> {
        Err(todo_pg("AssistantStore"))
    }

    async fn revoke_embed_key(&self, owner: &str, id: &str) -> Result<bool> {
        Err(todo_pg("AssistantStore"))
    }

    async fn create_visitor(&self, id: &str, token_hash: &str, key_id: &str) -> Result<()> {
        Err(todo_pg("AssistantStore"))
    }

    async fn visitor_by_hash(&self, token_hash: &str) -> Result<Option<(String, EmbedKey)>> {
        Err(todo_pg("AssistantStore"))
    }
}
