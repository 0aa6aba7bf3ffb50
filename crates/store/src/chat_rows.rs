//! The chat's and the in-app assistant's records read back from a row of either backend
//! (see [`crate::rows`]).

use crate::assistant::{AssistantTurn, CallRow, CallStatus, EmbedKey, Side, TurnState};
use crate::chat::{Conversation, StoredCard};
use crate::rows::{Cols, n32, unjson};
use crate::{Result, StoreError};
use wright_events::chat::{ChatMessage, ContentFlags, Role};

/// A small number (a round, a position, an hourly rate) as a `u32`; 0 when out of range.
fn small(r: &impl Cols, col: &str) -> Result<u32> {
    Ok(u32::try_from(r.int(col)?).unwrap_or(0))
}

pub(crate) fn conversation_row(r: &impl Cols) -> Result<Conversation> {
    Ok(Conversation {
        id: r.text("id")?,
        user_id: r.text("user_id")?,
        title: r.text("title")?,
        created_at: r.text("created_at")?,
        updated_at: r.text("updated_at")?,
        messages: n32(r, "messages")?,
    })
}

pub(crate) fn message_row(r: &impl Cols) -> Result<ChatMessage> {
    let role = r.text("role")?;
    let feedback = r
        .opt_int("feedback")?
        .map(|v| i8::try_from(v).map_err(|_| StoreError::Corrupt(format!("message feedback {v}"))))
        .transpose()?;
    Ok(ChatMessage {
        id: r.text("id")?,
        role: Role::parse(&role).ok_or_else(|| StoreError::Corrupt(format!("message role `{role}`")))?,
        parts: unjson(&r.text("parts")?, "message parts")?,
        flags: ContentFlags {
            has_diagram: r.flag("has_diagram")?,
            has_quiz: r.flag("has_quiz")?,
            has_flashcards: r.flag("has_flashcards")?,
            has_videos: r.flag("has_videos")?,
            has_code: r.flag("has_code")?,
        },
        run: r.opt_text("run_id")?,
        created_at: r.text("created_at")?,
        feedback,
    })
}

pub(crate) fn card_row(r: &impl Cols) -> Result<StoredCard> {
    Ok(StoredCard {
        id: r.text("id")?,
        user_id: r.text("user_id")?,
        front: r.text("front")?,
        back: r.text("back")?,
        created_at: r.text("created_at")?,
        due: r.text("due")?,
        stability: r.real("stability")?,
        difficulty: r.real("difficulty")?,
        elapsed_days: r.int("elapsed_days")?,
        scheduled_days: r.int("scheduled_days")?,
        reps: n32(r, "reps")?,
        lapses: n32(r, "lapses")?,
        state: r.text("state")?,
        last_review: r.opt_text("last_review")?,
    })
}

pub(crate) fn assistant_turn_row(r: &impl Cols) -> Result<AssistantTurn> {
    let state = r.text("state")?;
    Ok(AssistantTurn {
        run: r.text("run_id")?,
        conversation: r.text("conversation_id")?,
        user: r.text("user_id")?,
        assistant: r.text("assistant")?,
        lang: crate::rows::lang(r, "lang")?,
        client_tools: unjson(&r.text("client_tools")?, "assistant turn tools")?,
        transcript: unjson(&r.text("transcript")?, "assistant turn transcript")?,
        parts: unjson(&r.text("parts")?, "assistant turn parts")?,
        round: small(r, "round")?,
        state: TurnState::parse(&state)
            .ok_or_else(|| StoreError::Corrupt(format!("assistant turn state `{state}`")))?,
    })
}

pub(crate) fn call_row(r: &impl Cols) -> Result<CallRow> {
    let status = r.text("status")?;
    Ok(CallRow {
        id: r.text("id")?,
        provider_id: r.text("provider_id")?,
        run: r.text("run_id")?,
        conversation: r.text("conversation_id")?,
        round: small(r, "round")?,
        pos: small(r, "pos")?,
        name: r.text("name")?,
        arguments: r.text("arguments")?,
        args_hash: r.text("args_hash")?,
        side: if r.text("side")? == "server" { Side::Server } else { Side::Client },
        read_only: r.flag("read_only")?,
        deadline: r.text("deadline")?,
        status: CallStatus::parse(&status).ok_or_else(|| StoreError::Corrupt(format!("call status `{status}`")))?,
        output: r.opt_text("output")?,
        error: r.opt_text("error")?,
    })
}

pub(crate) fn key_row(r: &impl Cols) -> Result<EmbedKey> {
    Ok(EmbedKey {
        id: r.text("id")?,
        owner_id: r.text("owner_id")?,
        name: r.text("name")?,
        origins: unjson(&r.text("origins")?, "embed key origins")?,
        tools: unjson(&r.text("tools")?, "embed key tools")?,
        docs_dir: r.opt_text("docs_dir")?,
        per_hour: small(r, "per_hour")?,
        created_at: r.text("created_at")?,
        revoked_at: r.opt_text("revoked_at")?,
    })
}
