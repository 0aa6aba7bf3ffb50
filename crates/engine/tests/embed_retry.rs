//! The engine's embedding model, loaded through its scheduler: a model file that cannot be
//! loaded is remembered with its reason (chat scores by patterns, `/v1/embeddings` is refused)
//! and tried again after the backoff, when the real e5 model is there.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::print_stdout, clippy::print_stderr)] // test code: what was measured or skipped goes to the test log

use std::time::Duration;
use wright_engine::config::FileConfig;
use wright_engine::embedq::EmbedError;
use wright_engine::{Engine, Overrides};

/// The real model, fetched once for the tests (as the chat and docs tests do); `None` where
/// Python cannot fetch it.
fn real_model() -> Option<std::path::PathBuf> {
    let data = std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"));
    match wright_local::pull_embedding_model(&data, &|_| {}) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("SKIPPED: the embedding model cannot be fetched on this machine: {e}");
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_failed_to_load_is_loaded_after_the_backoff() {
    let Some(real) = real_model() else { return };
    let dir = tempfile::tempdir().unwrap();
    // A download cut short and padded: the right size (so not fetched again), not a model.
    let spec = wright_local::EMBED_MODEL;
    let path = spec.path_in(dir.path());
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, vec![0u8; spec.gguf_bytes as usize]).unwrap();
    let file: FileConfig = toml::from_str("[chat]\nembedding_retry_secs = 2\n").unwrap();
    let o = Overrides { data_dir: Some(dir.path().to_path_buf()), ..Overrides::default() };
    let engine = Engine::new(file, o).await.unwrap();

    let first = engine.embed_texts("alice", vec!["what is osmosis?".into()]).await;
    assert!(matches!(&first, Err(EmbedError::Unavailable(why)) if why.contains("could not be loaded")), "{first:?}");
    let parts = engine.chat_parts().await.unwrap();
    let note = parts.embedding_note.clone().unwrap_or_default();
    assert!(note.contains("could not be loaded"), "the chat says why it scores by patterns: {note}");
    assert!(parts.scorer.embedder().is_none());

    // Someone puts the real model in place; within the backoff nothing changes yet.
    std::fs::copy(&real, &path).unwrap();
    let again = engine.embed_texts("alice", vec!["what is osmosis?".into()]).await;
    assert!(matches!(&again, Err(EmbedError::Unavailable(_))), "still within the backoff: {again:?}");

    tokio::time::sleep(Duration::from_millis(2100)).await;
    let (name, vectors) = engine.embed_texts("alice", vec!["what is osmosis?".into()]).await.unwrap();
    assert_eq!((name.as_str(), vectors.len(), vectors[0].len()), (spec.name, 1, 384));
    let parts = engine.chat_parts().await.unwrap();
    assert!(parts.embedding_note.is_none(), "{:?}", parts.embedding_note);
    assert!(parts.scorer.embedder().is_some(), "the chat's scorer has the model now");
    // A message is scored as the turn does it: on a blocking thread, as interactive work.
    let scorer = parts.scorer.clone();
    let v = tokio::task::spawn_blocking(move || scorer.embed_for("alice", "quiz me on cells")).await.unwrap();
    assert_eq!(v.map(|v| v.len()), Some(384));
}
