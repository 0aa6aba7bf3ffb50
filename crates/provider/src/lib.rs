//! LLM providers behind one streaming-first trait.
//!
//! A [`Provider`] turns a [`ChatRequest`] into a stream of [`Delta`]s; a whole answer is derived
//! from that stream by [`ResponseAssembler`] (see [`complete`]), so every adapter implements one
//! code path and streaming is never an afterthought. [`complete`] also owns the retry policy,
//! because retrying is the same decision whatever the wire.

pub mod anthropic;
mod assemble;
pub mod compact;
mod error;
pub mod fallback;
pub mod gemini;
mod http;
pub mod local_server;
pub mod openai;
mod retry;
pub mod scripted;
mod seam;
mod types;

pub use assemble::ResponseAssembler;
pub use error::ProviderError;
pub use retry::{RetryPolicy, complete};
pub use seam::{DeltaStream, Provider};
pub use types::*;
