//! [`AssistantStore`] on PostgreSQL: turns, embed keys and visitors here; a round's calls
//! (waiting for the page, accepting results, closing and expiring) in `assistant_calls`.

use super::PgStore;
use super::chat::refused;
use crate::assistant::{Answer, Answered, AssistantStore, AssistantTurn, CallRow, EmbedKey};
use crate::chat_rows::{assistant_turn_row, call_row, key_row};
use crate::rows::json;
use crate::{Result, StoreError};
use async_trait::async_trait;
use sqlx::Row;

#[async_trait]
impl AssistantStore for PgStore {
    async fn begin_assistant_turn(&self, t: &AssistantTurn) -> Result<()> {
        sqlx::query(
            "INSERT INTO assistant_turns (run_id, conversation_id, user_id, assistant, lang, client_tools, transcript, \
             parts, round, state, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,wright_now())",
        )
        .bind(&t.run)
        .bind(&t.conversation)
        .bind(&t.user)
        .bind(&t.assistant)
        .bind(t.lang.as_str())
        .bind(json(&t.client_tools)?)
        .bind(json(&t.transcript)?)
        .bind(json(&t.parts)?)
        .bind(i64::from(t.round))
        .bind(t.state.as_str())
        .execute(&self.pool)
        .await
        .map_err(refused)?;
        Ok(())
    }

    async fn assistant_turn(&self, run: &str) -> Result<AssistantTurn> {
        let row =
            sqlx::query("SELECT * FROM assistant_turns WHERE run_id = $1").bind(run).fetch_optional(&self.pool).await?;
        row.as_ref()
            .map(assistant_turn_row)
            .transpose()?
            .ok_or_else(|| StoreError::NotFound(format!("assistant turn {run}")))
    }

    async fn save_assistant_turn(&self, t: &AssistantTurn) -> Result<()> {
        let done = sqlx::query(
            "UPDATE assistant_turns SET transcript = $1, parts = $2, round = $3, state = $4, updated_at = wright_now() \
             WHERE run_id = $5",
        )
        .bind(json(&t.transcript)?)
        .bind(json(&t.parts)?)
        .bind(i64::from(t.round))
        .bind(t.state.as_str())
        .bind(&t.run)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("assistant turn {}", t.run)));
        }
        Ok(())
    }

    async fn wait_for_page(&self, turn: &AssistantTurn, calls: &[CallRow]) -> Result<()> {
        self.wait_for_page_pg(turn, calls).await
    }

    async fn answer_calls(&self, conversation: &str, answers: &[(String, Answer)], answerer: &str) -> Result<Answered> {
        self.answer_calls_pg(conversation, answers, answerer).await
    }

    async fn round_calls(&self, run: &str, round: u32) -> Result<Vec<CallRow>> {
        let rows = sqlx::query("SELECT * FROM assistant_calls WHERE run_id = $1 AND round = $2 ORDER BY pos")
            .bind(run)
            .bind(i64::from(round))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(call_row).collect()
    }

    async fn pending_calls(&self, conversation: &str) -> Result<Vec<CallRow>> {
        let rows = sqlx::query(
            "SELECT * FROM assistant_calls WHERE conversation_id = $1 AND status = 'pending' ORDER BY round, pos",
        )
        .bind(conversation)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(call_row).collect()
    }

    async fn close_pending(&self, conversation: &str, why: &str) -> Result<Vec<String>> {
        self.close_pending_pg(conversation, why).await
    }

    async fn expire_calls(&self, now: &str) -> Result<Vec<(String, String)>> {
        self.expire_calls_pg(now).await
    }

    async fn create_embed_key(&self, k: &EmbedKey, key_hash: &str) -> Result<()> {
        sqlx::query(
            "INSERT INTO embed_keys (id, key_hash, owner_id, name, origins, tools, docs_dir, per_hour, created_at) \
             VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)",
        )
        .bind(&k.id)
        .bind(key_hash)
        .bind(&k.owner_id)
        .bind(&k.name)
        .bind(json(&k.origins)?)
        .bind(json(&k.tools)?)
        .bind(&k.docs_dir)
        .bind(i64::from(k.per_hour))
        .bind(&k.created_at)
        .execute(&self.pool)
        .await
        .map_err(refused)?;
        Ok(())
    }

    async fn embed_key_by_hash(&self, key_hash: &str) -> Result<Option<EmbedKey>> {
        let row = sqlx::query("SELECT * FROM embed_keys WHERE key_hash = $1 AND revoked_at IS NULL")
            .bind(key_hash)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(key_row).transpose()
    }

    async fn embed_key(&self, id: &str) -> Result<Option<EmbedKey>> {
        let row = sqlx::query("SELECT * FROM embed_keys WHERE id = $1").bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(key_row).transpose()
    }

    async fn embed_keys(&self, owner: &str) -> Result<Vec<EmbedKey>> {
        let rows =
            sqlx::query("SELECT * FROM embed_keys WHERE owner_id = $1 ORDER BY created_at DESC, id COLLATE \"C\" DESC")
                .bind(owner)
                .fetch_all(&self.pool)
                .await?;
        rows.iter().map(key_row).collect()
    }

    async fn revoke_embed_key(&self, owner: &str, id: &str) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE embed_keys SET revoked_at = wright_now() WHERE id = $1 AND owner_id = $2 AND revoked_at IS NULL",
        )
        .bind(id)
        .bind(owner)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn create_visitor(
        &self,
        id: &str,
        token_hash: &str,
        key_id: &str,
        idle: std::time::Duration,
        max_live: u32,
    ) -> Result<bool> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('wright-visitors:' || $1, 0))")
            .bind(key_id)
            .execute(&mut *tx)
            .await?;
        let live: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM visitors WHERE key_id = $1 AND expires_at > wright_now()")
                .bind(key_id)
                .fetch_one(&mut *tx)
                .await?;
        if live >= i64::from(max_live) {
            tx.rollback().await?;
            return Ok(false);
        }
        sqlx::query(
            "INSERT INTO visitors (id, token_hash, key_id, created_at, expires_at) \
             VALUES ($1, $2, $3, wright_now(), wright_now($4))",
        )
        .bind(id)
        .bind(token_hash)
        .bind(key_id)
        .bind(idle.as_secs_f64())
        .execute(&mut *tx)
        .await
        .map_err(refused)?;
        tx.commit().await?;
        Ok(true)
    }

    async fn touch_visitor(&self, id: &str, idle: std::time::Duration) -> Result<()> {
        sqlx::query("UPDATE visitors SET expires_at = wright_now($1) WHERE id = $2")
            .bind(idle.as_secs_f64())
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn visitor_by_hash(&self, token_hash: &str) -> Result<Option<(String, EmbedKey)>> {
        let row = sqlx::query(
            "SELECT v.id AS visitor, k.* FROM visitors v JOIN embed_keys k ON k.id = v.key_id \
             WHERE v.token_hash = $1 AND v.expires_at > wright_now() AND k.revoked_at IS NULL",
        )
        .bind(token_hash)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(|r| Ok((r.try_get::<String, _>("visitor")?, key_row(r)?))).transpose()
    }
}
