//! The one llama.cpp backend of the process.
//!
//! llama.cpp's backend is process-wide and `llama-cpp-2` lets it be initialised only once at a
//! time, so the chat model ([`crate::engine`]) and the embedding model ([`crate::embed`]) share
//! this one instead of each owning theirs: either can load while the other is running. It is
//! never freed; freeing it while another model still runs would pull the ground from under it.

use llama_cpp_2::llama_backend::LlamaBackend;
use std::sync::OnceLock;

static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

/// The shared backend, started on first use with llama.cpp's logging silenced (it writes
/// straight to stderr, which is wright's progress and the user's terminal).
pub(crate) fn shared() -> Result<&'static LlamaBackend, String> {
    BACKEND
        .get_or_init(|| {
            let mut backend = LlamaBackend::init().map_err(|e| format!("llama.cpp could not start: {e}"))?;
            backend.void_logs();
            Ok(backend)
        })
        .as_ref()
        .map_err(Clone::clone)
}
