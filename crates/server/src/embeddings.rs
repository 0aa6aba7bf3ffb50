//! `POST /v1/embeddings` on the OpenAI wire, from the embedding model the chat and the docs
//! search already use (multilingual e5, 384 dimensions), for any client with a user token.
//! Every text is embedded as an e5 query (the model adds `query: `), which suits a search where
//! both sides are embedded the same way.

use crate::auth::Caller;
use crate::error::{ApiError, ApiJson, ApiResult};
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use wright_store::Quota;

/// Texts one request may embed.
const MAX_INPUTS: usize = 256;
/// Longest text, in characters (e5 reads 512 tokens; longer text is cut by the model).
const MAX_CHARS: usize = 8_000;

/// One text or several.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum Input {
    One(String),
    Many(Vec<String>),
}

/// The request, as OpenAI's `embeddings.create` takes it.
#[derive(Debug, Deserialize, ToSchema)]
pub struct EmbeddingsBody {
    pub input: Input,
    /// Only this server's model is served; any name is accepted and the answer names the model.
    #[serde(default)]
    #[allow(dead_code)]
    pub model: Option<String>,
    /// `float` only.
    #[serde(default)]
    pub encoding_format: Option<String>,
    /// Accepted for compatibility; limits follow the token's user.
    #[serde(default)]
    #[allow(dead_code)]
    pub user: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Embedding {
    pub object: &'static str,
    pub index: usize,
    pub embedding: Vec<f32>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EmbeddingsUsage {
    pub prompt_tokens: u64,
    pub total_tokens: u64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EmbeddingsList {
    pub object: &'static str,
    pub data: Vec<Embedding>,
    pub model: String,
    pub usage: EmbeddingsUsage,
}

/// Embed texts (OpenAI-compatible). Limited per user like chat messages (one request counts
/// one).
#[utoipa::path(post, path = "/v1/embeddings", request_body = EmbeddingsBody, security(("bearer" = [])),
    responses((status = 200, body = EmbeddingsList), (status = 401, body = crate::api::ErrorBody),
        (status = 422, body = crate::api::ErrorBody), (status = 429, body = crate::api::ErrorBody),
        (status = 503, body = crate::api::ErrorBody)))]
pub async fn embeddings(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<EmbeddingsBody>,
) -> ApiResult<Json<EmbeddingsList>> {
    if body.encoding_format.as_deref().is_some_and(|f| f != "float") {
        return Err(ApiError::invalid("invalid_fields", "encoding_format: only `float` is served"));
    }
    let texts = match body.input {
        Input::One(t) => vec![t],
        Input::Many(ts) => ts,
    };
    if texts.is_empty() || texts.len() > MAX_INPUTS {
        return Err(ApiError::invalid("invalid_fields", format!("input: 1 to {MAX_INPUTS} texts")));
    }
    if let Some((i, t)) = texts.iter().enumerate().find(|(_, t)| t.trim().is_empty() || t.chars().count() > MAX_CHARS) {
        return Err(ApiError::invalid(
            "invalid_fields",
            format!("input[{i}]: {} characters; give 1 to {MAX_CHARS}", t.chars().count()),
        ));
    }
    let asked = Quota::per_hour(
        format!("embeddings:{}", caller.0.id),
        state.cfg.limits.chat_messages_per_hour.saturating_mul(10),
    );
    state.limits.count(&[asked], "embeddings_rate").await?;
    let prompt_tokens: u64 = texts.iter().map(|t| t.chars().count().div_ceil(4) as u64).sum();
    let (model, vectors) = state.engine.embed_texts(&caller.0.id, texts).await.map_err(|e| match e {
        // This user's share of the embedding queue is full: their own earlier batches wait.
        wright_engine::embedq::EmbedError::Busy { .. } => {
            state.metrics.refused("embeddings_queue");
            ApiError::too_many("rate_limited", format!("embeddings: {e}"), 5)
        }
        e => ApiError::unavailable("embedding_unavailable", e.to_string()),
    })?;
    Ok(Json(EmbeddingsList {
        object: "list",
        data: vectors
            .into_iter()
            .enumerate()
            .map(|(index, embedding)| Embedding { object: "embedding", index, embedding })
            .collect(),
        model,
        usage: EmbeddingsUsage { prompt_tokens, total_tokens: prompt_tokens },
    }))
}
