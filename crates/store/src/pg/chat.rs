//! [`ChatStore`] on PostgreSQL, as [`crate::SqliteStore`] keeps it: a message's parts are one
//! JSON column beside flags computed from them on every write. A message's place is given out
//! inside the writing transaction after it has locked the conversation's row (`FOR NO KEY UPDATE`),
//! so writers of one conversation on any number of servers take turns and never take the same
//! place. Times the store stamps come from the database's clock (`wright_now()`), one clock
//! for every server.

use super::PgStore;
use crate::chat::{ChatStore, Conversation, StoredCard, check_feedback, title_from};
use crate::chat_rows::{card_row, conversation_row, message_row};
use crate::rows::{json, u};
use crate::{Result, StoreError};
use async_trait::async_trait;
use sqlx::Row;
use std::time::Duration;
use wright_events::chat::{ChatMessage, ContentFlags, Part, Role};

/// `SELECT` of a conversation with its message count; callers add `WHERE …`.
const CONVERSATION: &str = "SELECT c.*, (SELECT COUNT(*) FROM chat_messages m WHERE m.conversation_id = c.id) \
                            AS messages FROM conversations c";

/// A unique-key refusal said as "already exists"; any other error as [`refused`] says it.
pub(super) fn taken(e: sqlx::Error, what: impl FnOnce() -> String) -> StoreError {
    match &e {
        sqlx::Error::Database(d) if d.is_unique_violation() => {
            StoreError::Invalid(format!("{} already exists", what()))
        }
        _ => refused(e),
    }
}

/// PostgreSQL's text cannot hold a NUL character (SQLite's can): a value with one is refused
/// as invalid input, not reported as a failing database. Any other error as it is.
pub(super) fn refused(e: sqlx::Error) -> StoreError {
    match &e {
        // character_not_in_repertoire, untranslatable_character
        sqlx::Error::Database(d) if matches!(d.code().as_deref(), Some("22021" | "22P05")) => {
            StoreError::Invalid(format!("text with a NUL character cannot be stored: {d}"))
        }
        _ => e.into(),
    }
}

#[async_trait]
impl ChatStore for PgStore {
    async fn create_conversation(&self, id: &str, user: &str, title: &str) -> Result<()> {
        if id.trim().is_empty() || user.trim().is_empty() {
            return Err(StoreError::Invalid("a conversation needs an id and a user".into()));
        }
        // One reading of the clock for both times (a subquery with a volatile call runs once).
        sqlx::query(
            "INSERT INTO conversations (id, user_id, title, created_at, updated_at) \
             SELECT $1, $2, $3, n.now, n.now FROM (SELECT wright_now() AS now) n",
        )
        .bind(id)
        .bind(user)
        .bind(title)
        .execute(&self.pool)
        .await
        .map_err(|e| taken(e, || format!("conversation {id}")))?;
        Ok(())
    }

    async fn conversation(&self, id: &str) -> Result<Conversation> {
        let row = sqlx::query(&format!("{CONVERSATION} WHERE c.id = $1")).bind(id).fetch_optional(&self.pool).await?;
        row.as_ref()
            .map(conversation_row)
            .transpose()?
            .ok_or_else(|| StoreError::NotFound(format!("conversation {id}")))
    }

    async fn conversations(&self, user: &str, limit: u32) -> Result<Vec<Conversation>> {
        let rows = sqlx::query(&format!(
            "{CONVERSATION} WHERE c.user_id = $1 ORDER BY c.updated_at DESC, c.id COLLATE \"C\" DESC LIMIT $2"
        ))
        .bind(user)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(conversation_row).collect()
    }

    async fn add_message(&self, conversation: &str, m: &ChatMessage, tools: &[String]) -> Result<()> {
        check_feedback(m.role, m.feedback)?;
        let flags = ContentFlags::of(&m.parts);
        let parts = json(&m.parts)?;
        let tools = json(&tools)?;
        let mut tx = self.pool.begin().await?;
        // The conversation's row is locked first; the next place is read after the lock, in its
        // own statement, so it sees the message of the writer that held the lock before.
        let title: String = sqlx::query_scalar("SELECT title FROM conversations WHERE id = $1 FOR NO KEY UPDATE")
            .bind(conversation)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("conversation {conversation}")))?;
        let next: i64 =
            sqlx::query_scalar("SELECT COALESCE(MAX(pos), -1) + 1 FROM chat_messages WHERE conversation_id = $1")
                .bind(conversation)
                .fetch_one(&mut *tx)
                .await?;
        sqlx::query(
            "INSERT INTO chat_messages (id, conversation_id, pos, role, parts, has_diagram, has_quiz, has_flashcards, \
             has_videos, has_code, tools, run_id, feedback, created_at) \
             VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)",
        )
        .bind(&m.id)
        .bind(conversation)
        .bind(next)
        .bind(m.role.as_str())
        .bind(parts)
        .bind(flags.has_diagram)
        .bind(flags.has_quiz)
        .bind(flags.has_flashcards)
        .bind(flags.has_videos)
        .bind(flags.has_code)
        .bind(tools)
        .bind(&m.run)
        .bind(m.feedback.map(i64::from))
        .bind(&m.created_at)
        .execute(&mut *tx)
        .await
        .map_err(|e| taken(e, || format!("message {}", m.id)))?;
        // The first user message names an untitled conversation, in the same step, so a list
        // never shows it with messages but no title. (A NUL, which PostgreSQL's text cannot
        // hold, is left out of the title; the message itself keeps it in its JSON.)
        let named = (title.is_empty() && m.role == Role::User)
            .then(|| title_from(&m.parts))
            .flatten()
            .map(|t| t.replace('\0', ""))
            .filter(|t| !t.is_empty());
        // GREATEST: a clock stepping back never moves a conversation down the list.
        sqlx::query(
            "UPDATE conversations SET updated_at = GREATEST(updated_at, wright_now()), title = COALESCE($1, title) \
             WHERE id = $2",
        )
        .bind(named)
        .bind(conversation)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn replace_parts(&self, conversation: &str, message_id: &str, parts: &[Part]) -> Result<()> {
        let flags = ContentFlags::of(parts);
        let done = sqlx::query(
            "UPDATE chat_messages SET parts = $1, has_diagram = $2, has_quiz = $3, has_flashcards = $4, \
             has_videos = $5, has_code = $6 WHERE id = $7 AND conversation_id = $8",
        )
        .bind(json(&parts)?)
        .bind(flags.has_diagram)
        .bind(flags.has_quiz)
        .bind(flags.has_flashcards)
        .bind(flags.has_videos)
        .bind(flags.has_code)
        .bind(message_id)
        .bind(conversation)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("message {message_id}")));
        }
        Ok(())
    }

    async fn messages(&self, conversation: &str, last: Option<u32>) -> Result<Vec<ChatMessage>> {
        let rows = match last {
            // The newest `n` by the index, then put back in order.
            Some(n) => {
                sqlx::query(
                    "SELECT * FROM (SELECT * FROM chat_messages WHERE conversation_id = $1 ORDER BY pos DESC \
                     LIMIT $2) newest ORDER BY pos",
                )
                .bind(conversation)
                .bind(i64::from(n))
                .fetch_all(&self.pool)
                .await?
            }
            None => {
                sqlx::query("SELECT * FROM chat_messages WHERE conversation_id = $1 ORDER BY pos")
                    .bind(conversation)
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        rows.iter().map(message_row).collect()
    }

    async fn message(&self, conversation: &str, id: &str) -> Result<ChatMessage> {
        let row = sqlx::query("SELECT * FROM chat_messages WHERE id = $1 AND conversation_id = $2")
            .bind(id)
            .bind(conversation)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(message_row).transpose()?.ok_or_else(|| StoreError::NotFound(format!("message {id}")))
    }

    async fn clear_messages(&self, conversation: &str) -> Result<u64> {
        let done = sqlx::query("DELETE FROM chat_messages WHERE conversation_id = $1")
            .bind(conversation)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }

    async fn open_chat_runs(&self) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query(
            "SELECT id, workspace FROM builds WHERE kind = 'chat' AND status = 'running' \
             AND id NOT IN (SELECT run_id FROM assistant_turns WHERE state = 'waiting') ORDER BY started_at",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|r| Ok((r.try_get::<String, _>("id")?, r.try_get::<String, _>("workspace")?))).collect()
    }

    async fn hold_turn(&self, run: &str, lease: Duration) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE builds SET lease_until = wright_now($1) WHERE id = $2 AND kind = 'chat' AND status = 'running' \
             AND worker IS NULL",
        )
        .bind(lease.as_secs_f64())
        .bind(run)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn release_turn(&self, run: &str) -> Result<()> {
        sqlx::query(
            "UPDATE builds SET lease_until = NULL WHERE id = $1 AND kind = 'chat' AND status = 'running' \
             AND worker IS NULL",
        )
        .bind(run)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn lapsed_turns(&self) -> Result<Vec<String>> {
        let rows = sqlx::query(
            "SELECT id FROM builds WHERE kind = 'chat' AND status = 'running' AND worker IS NULL \
             AND lease_until IS NOT NULL AND lease_until < wright_now() \
             AND id NOT IN (SELECT run_id FROM assistant_turns WHERE state = 'waiting') ORDER BY started_at",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|r| Ok(r.try_get::<String, _>("id")?)).collect()
    }

    async fn set_feedback(&self, conversation: &str, message_id: &str, value: Option<i8>) -> Result<()> {
        let role: String = sqlx::query_scalar("SELECT role FROM chat_messages WHERE id = $1 AND conversation_id = $2")
            .bind(message_id)
            .bind(conversation)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("message {message_id}")))?;
        let role = Role::parse(&role).ok_or_else(|| StoreError::Corrupt(format!("message role `{role}`")))?;
        // A user's message is refused even when the rating is being taken back: it never had one.
        if role != Role::Assistant {
            return Err(StoreError::Invalid("only an assistant's reply can be rated".into()));
        }
        check_feedback(role, value)?;
        let done = sqlx::query("UPDATE chat_messages SET feedback = $1 WHERE id = $2 AND conversation_id = $3")
            .bind(value.map(i64::from))
            .bind(message_id)
            .bind(conversation)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            // Cleared between the two statements.
            return Err(StoreError::NotFound(format!("message {message_id}")));
        }
        Ok(())
    }

    async fn feedback_by_tool(&self) -> Result<Vec<(String, u64, u64)>> {
        // DISTINCT: a tool named twice in one reply still took part in it once. Only the string
        // elements of the array are names (SQLite's `json_each … type = 'text'`).
        let rows = sqlx::query(
            "SELECT t.tool AS tool, COUNT(*) FILTER (WHERE t.feedback = 1) AS up, \
             COUNT(*) FILTER (WHERE t.feedback = -1) AS down FROM \
             (SELECT DISTINCT m.id, j.value #>> '{}' AS tool, m.feedback \
              FROM chat_messages m CROSS JOIN LATERAL jsonb_array_elements(m.tools::jsonb) AS j(value) \
              WHERE m.role = 'assistant' AND m.feedback IS NOT NULL AND jsonb_typeof(j.value) = 'string') t \
             GROUP BY t.tool ORDER BY t.tool COLLATE \"C\"",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("tool")?, u(r.try_get::<i64, _>("up")?), u(r.try_get::<i64, _>("down")?))))
            .collect()
    }

    async fn add_cards(&self, cards: &[StoredCard]) -> Result<u64> {
        if let Some(c) = cards.iter().find(|c| c.user_id.trim().is_empty() || c.front.trim().is_empty()) {
            return Err(StoreError::Invalid(format!("card {} needs a user and a front", c.id)));
        }
        // One transaction: a batch from one reply lands whole or not at all.
        let mut tx = self.pool.begin().await?;
        let mut added = 0;
        for c in cards {
            added += sqlx::query(
                "INSERT INTO flashcards (id, user_id, front, back, created_at, due, stability, difficulty, \
                 elapsed_days, scheduled_days, reps, lapses, state, last_review) \
                 VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14) ON CONFLICT (user_id, front) DO NOTHING",
            )
            .bind(&c.id)
            .bind(&c.user_id)
            .bind(&c.front)
            .bind(&c.back)
            .bind(&c.created_at)
            .bind(&c.due)
            .bind(c.stability)
            .bind(c.difficulty)
            .bind(c.elapsed_days)
            .bind(c.scheduled_days)
            .bind(i64::from(c.reps))
            .bind(i64::from(c.lapses))
            .bind(&c.state)
            .bind(&c.last_review)
            .execute(&mut *tx)
            .await
            .map_err(|e| taken(e, || format!("card {}", c.id)))?
            .rows_affected();
        }
        tx.commit().await?;
        Ok(added)
    }

    async fn cards(&self, user: &str, due_before: Option<&str>, limit: u32) -> Result<Vec<StoredCard>> {
        let rows = sqlx::query(
            "SELECT * FROM flashcards WHERE user_id = $1 AND ($2::text IS NULL OR due <= $2) \
             ORDER BY due, created_at, id COLLATE \"C\" LIMIT $3",
        )
        .bind(user)
        .bind(due_before)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(card_row).collect()
    }

    async fn card(&self, user: &str, id: &str) -> Result<StoredCard> {
        let row = sqlx::query("SELECT * FROM flashcards WHERE id = $1 AND user_id = $2")
            .bind(id)
            .bind(user)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(card_row).transpose()?.ok_or_else(|| StoreError::NotFound(format!("card {id}")))
    }

    async fn save_card(&self, c: &StoredCard) -> Result<()> {
        let done = sqlx::query(
            "UPDATE flashcards SET due = $1, stability = $2, difficulty = $3, elapsed_days = $4, \
             scheduled_days = $5, reps = $6, lapses = $7, state = $8, last_review = $9 \
             WHERE id = $10 AND user_id = $11",
        )
        .bind(&c.due)
        .bind(c.stability)
        .bind(c.difficulty)
        .bind(c.elapsed_days)
        .bind(c.scheduled_days)
        .bind(i64::from(c.reps))
        .bind(i64::from(c.lapses))
        .bind(&c.state)
        .bind(&c.last_review)
        .bind(&c.id)
        .bind(&c.user_id)
        .execute(&self.pool)
        .await
        .map_err(refused)?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("card {}", c.id)));
        }
        Ok(())
    }
}
