//! The index on real files and a real SQLite file: keyword search, refreshes that follow the
//! folder, skipped files, the watcher, and the vector path with a stand-in embedder.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod common;

use common::{HashEmbedder, fixture};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use wright_docs::{DocsError, DocsIndex, Embed, Hit, SearchMode};

async fn keyword_index(dir: &std::path::Path) -> DocsIndex {
    let docs = fixture(dir);
    DocsIndex::open(&dir.join("data/docs-index/help.sqlite"), &docs, None).await.unwrap()
}

fn top(hits: &[Hit]) -> (&str, &str, Option<&str>) {
    let h = hits.first().expect("at least one hit");
    (h.source.as_str(), h.heading.as_str(), h.anchor.as_deref())
}

#[tokio::test]
async fn keyword_search_finds_the_right_section() {
    let dir = tempfile::tempdir().unwrap();
    let index = keyword_index(dir.path()).await;
    let stats = index.refresh().await.unwrap();
    assert_eq!((stats.files_indexed, stats.files_removed, stats.embedded), (5, 0, 0), "{stats:?}");
    assert!(stats.chunks >= 10, "{stats:?}");

    let hits = index.search("keyboard shortcut to stop an answer", 5).await.unwrap();
    assert_eq!(top(&hits), ("chat.md", "Chat › Keyboard shortcuts", Some("keyboard-shortcuts")));
    assert!(hits[0].snippet.starts_with("Press Ctrl+K"), "{}", hits[0].snippet);
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));

    let hits = index.search("How do I add a new tool?", 5).await.unwrap();
    assert_eq!(top(&hits), ("chat.md", "Chat › Adding a tool", Some("adding-a-tool")));
    // The code block stayed with its section.
    assert!(hits[0].snippet.contains("curl wttr.in"), "{}", hits[0].snippet);

    // Accents folded both ways; Portuguese heading path and slug.
    let hits = index.search("configuracao avancada", 3).await.unwrap();
    assert_eq!(top(&hits), ("ferramentas.md", "Ferramentas › Configuração avançada", Some("configuração-avançada")));
    let hits = index.search("DEFINIÇÕES", 3).await.unwrap();
    assert_eq!(top(&hits).1, "Ferramentas › Adicionar uma ferramenta");

    // HTML: title heads the path, the id is the anchor, entities decoded, scripts and menus out.
    let hits = index.search("export a conversation as PDF", 3).await.unwrap();
    assert_eq!(top(&hits), ("guide/export.html", "User guide › Exporting your work", Some("export")));
    assert!(hits[0].snippet.contains("File › Export"), "{}", hits[0].snippet);
    let hits = index.search("delete conversations privacy", 3).await.unwrap();
    assert_eq!(top(&hits), ("guide/export.html", "User guide › Exporting your work › Privacy", Some("privacy")));
    assert!(hits[0].snippet.contains("Settings & Data"));
    for hidden in ["secretToken", "frontmatterword", "Home"] {
        let hits = index.search(hidden, 5).await.unwrap();
        assert!(hits.iter().all(|h| !h.snippet.contains(hidden)), "{hidden} was indexed: {hits:?}");
    }

    // Nested folders use '/' paths.
    assert_eq!(top(&index.search("monthly spending limit", 3).await.unwrap()).0, "notes/billing.md");
}

#[tokio::test]
async fn odd_queries_are_safe() {
    let dir = tempfile::tempdir().unwrap();
    let index = keyword_index(dir.path()).await;
    index.refresh().await.unwrap();
    for q in ["", "   ", "?!…", "\"", "*", "NEAR(", "chat:", "^", "(((", "\u{0}", "AND OR NOT"] {
        index.search(q, 5).await.unwrap_or_else(|e| panic!("{q:?}: {e}"));
    }
    assert!(index.search("?!… ---", 5).await.unwrap().is_empty());
    // FTS5 syntax in the question is just words.
    let hits = index.search("tool\" OR \"NEAR(dark", 5).await.unwrap();
    assert!(!hits.is_empty());
    // top_n is clamped to 1..=20.
    assert_eq!(index.search("the", 0).await.unwrap().len(), 1);
    assert!(index.search("a the e o", 500).await.unwrap().len() <= wright_docs::MAX_TOP_N);
    let long = "settings ".repeat(10_000);
    assert!(!index.search(&long, 5).await.unwrap().is_empty());
}

#[tokio::test]
async fn skipped_files_stay_out() {
    let dir = tempfile::tempdir().unwrap();
    let index = keyword_index(dir.path()).await;
    index.refresh().await.unwrap();
    for word in ["hugeword", "latinword", "textfileword", "hiddenword", "outsideword"] {
        assert!(index.search(word, 5).await.unwrap().is_empty(), "{word} was indexed");
    }
    assert_eq!(index.status().await.unwrap().files, 5);

    // A link to a file inside the folder is followed.
    let docs = dir.path().join("docs");
    std::os::unix::fs::symlink(docs.join("themes.md"), docs.join("notes/appearance-link.md")).unwrap();
    let stats = index.refresh().await.unwrap();
    assert_eq!(stats.files_indexed, 1);
    let sources: Vec<String> = index.search("dark themes", 5).await.unwrap().into_iter().map(|h| h.source).collect();
    assert!(sources.contains(&"notes/appearance-link.md".to_string()), "{sources:?}");
}

#[tokio::test]
async fn refresh_follows_changes_and_deletions() {
    let dir = tempfile::tempdir().unwrap();
    let index = keyword_index(dir.path()).await;
    let docs = dir.path().join("docs");
    index.refresh().await.unwrap();
    assert_eq!(index.refresh().await.unwrap().files_indexed, 0, "nothing changed");

    // Rewritten with the same content: read again, but not re-chunked.
    std::fs::write(docs.join("themes.md"), common::THEMES_MD).unwrap();
    assert_eq!(index.refresh().await.unwrap().files_indexed, 0);

    std::fs::write(
        docs.join("themes.md"),
        "# Appearance\n\n## High contrast\n\nTurn on high contrast for bolder outlines.\n",
    )
    .unwrap();
    let stats = index.refresh().await.unwrap();
    assert_eq!((stats.files_indexed, stats.chunks, stats.files_removed), (1, 1, 0), "{stats:?}");
    assert_eq!(top(&index.search("high contrast", 3).await.unwrap()).1, "Appearance › High contrast");
    assert!(index.search("dark mode", 5).await.unwrap().iter().all(|h| h.source != "themes.md"));

    std::fs::remove_file(docs.join("notes/billing.md")).unwrap();
    let stats = index.refresh().await.unwrap();
    assert_eq!((stats.files_indexed, stats.files_removed), (0, 1));
    assert!(index.search("monthly spending limit", 5).await.unwrap().iter().all(|h| h.source != "notes/billing.md"));

    // A file that stops being UTF-8 leaves the index.
    std::fs::write(docs.join("themes.md"), b"# Appearance\n\n\xff\xfe high contrast\n").unwrap();
    assert_eq!(index.refresh().await.unwrap().files_removed, 1);
    assert!(index.search("high contrast", 5).await.unwrap().is_empty());

    let status = index.status().await.unwrap();
    assert_eq!(status.files, 3);
    let stamp = status.last_refresh.expect("a refresh time");
    chrono::DateTime::parse_from_rfc3339(&stamp).unwrap();
    assert_eq!((status.embedded, status.embedder), (0, None));
}

#[tokio::test]
async fn the_index_survives_a_reopen_and_rebuilds_when_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let docs = fixture(dir.path());
    let db = dir.path().join("index.sqlite");
    let index = DocsIndex::open(&db, &docs, None).await.unwrap();
    index.refresh().await.unwrap();
    let before = index.status().await.unwrap();
    drop(index);

    let index = DocsIndex::open(&db, &docs, None).await.unwrap();
    assert_eq!(index.status().await.unwrap(), before);
    assert!(!index.search("dark mode", 3).await.unwrap().is_empty(), "searchable before any refresh");
    assert_eq!(index.refresh().await.unwrap().files_indexed, 0);
    drop(index);

    // Not a database at all: replaced, and rebuilt by the next refresh.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    std::fs::write(&db, vec![0x42u8; 8192]).unwrap();
    let index = DocsIndex::open(&db, &docs, None).await.unwrap();
    assert_eq!(index.status().await.unwrap().files, 0);
    assert_eq!(index.refresh().await.unwrap().files_indexed, 5);
    // Moved aside, not deleted.
    assert_eq!(std::fs::read(format!("{}.damaged", db.display())).unwrap(), vec![0x42u8; 8192]);
}

#[tokio::test]
async fn another_database_is_refused_and_left_alone() {
    use sqlx::Connection;
    let dir = tempfile::tempdir().unwrap();
    let docs = fixture(dir.path());
    let store = dir.path().join("wright.sqlite");
    let url = format!("sqlite://{}?mode=rwc", store.display());
    let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::query("CREATE TABLE builds (id TEXT PRIMARY KEY)").execute(&mut c).await.unwrap();
    sqlx::query("INSERT INTO builds VALUES ('b1')").execute(&mut c).await.unwrap();
    c.close().await.unwrap();

    let err = DocsIndex::open(&store, &docs, None).await.err().expect("refused");
    assert!(matches!(err, DocsError::NotAnIndex { .. }), "{err:?}");
    assert!(err.to_string().contains("file of its own"), "{err}");
    let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM builds").fetch_one(&mut c).await.unwrap();
    assert_eq!(n, 1);
}

#[tokio::test]
async fn a_missing_folder_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let index = DocsIndex::open(&dir.path().join("i.sqlite"), &dir.path().join("nope"), None).await.unwrap();
    let err = index.refresh().await.unwrap_err();
    assert!(matches!(err, DocsError::SourceMissing { .. }), "{err:?}");
    assert!(err.to_string().contains("create it"), "{err}");
    assert!(index.search("anything", 5).await.unwrap().is_empty());
    assert_eq!(index.status().await.unwrap().last_refresh, None);
}

#[tokio::test]
async fn watch_picks_up_new_files_and_stops_when_told() {
    let dir = tempfile::tempdir().unwrap();
    let index = Arc::new(keyword_index(dir.path()).await);
    let stop = tokio_util::sync::CancellationToken::new();
    let handle = index.clone().watch(Duration::from_millis(50), stop.clone());
    std::fs::write(dir.path().join("docs/new.md"), "# Fresh\n\nA brandnewword appears.\n").unwrap();
    let found = async {
        while index.search("brandnewword", 1).await.unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), found).await.expect("the watcher indexed the new file");
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), handle).await.expect("the watcher stopped").unwrap();
}

#[tokio::test]
async fn vectors_are_computed_stored_and_searched() {
    let dir = tempfile::tempdir().unwrap();
    let docs = fixture(dir.path());
    let db = dir.path().join("index.sqlite");
    let index = DocsIndex::open(&db, &docs, Some(Arc::new(HashEmbedder::default()))).await.unwrap();
    let stats = index.refresh().await.unwrap();
    assert_eq!(stats.embedded, stats.chunks);
    let status = index.status().await.unwrap();
    assert_eq!((status.embedded, status.embedder.as_deref()), (status.chunks, Some("hash-64")));

    let meaning = index.search_with("spending limit monthly", 3, SearchMode::Meaning).await.unwrap();
    assert_eq!(top(&meaning).0, "notes/billing.md");
    let fused = index.search("spending limit monthly", 3).await.unwrap();
    assert_eq!(top(&fused).0, "notes/billing.md");
    // In both lists, so above a hit that is only in one.
    assert!(fused[0].score > 1.0 / 61.0);

    // A changed file gets new vectors, and searches see them at once.
    std::fs::write(docs.join("themes.md"), "# Appearance\n\n## Fonts\n\nPick a serif typeface.\n").unwrap();
    assert_eq!(index.refresh().await.unwrap().embedded, 1);
    assert_eq!(
        top(&index.search_with("serif typeface", 1, SearchMode::Meaning).await.unwrap()).1,
        "Appearance › Fonts"
    );
    drop(index);

    // Same embedder: vectors kept. Another one: recomputed.
    let index = DocsIndex::open(&db, &docs, Some(Arc::new(HashEmbedder::default()))).await.unwrap();
    assert_eq!(index.refresh().await.unwrap().embedded, 0);
    drop(index);
    let other = HashEmbedder { name: "hash-64-v2".into() };
    let index = DocsIndex::open(&db, &docs, Some(Arc::new(other))).await.unwrap();
    assert_eq!(index.status().await.unwrap().embedded, 0);
    let stats = index.refresh().await.unwrap();
    assert_eq!(stats.embedded, index.status().await.unwrap().chunks);
}

/// Holds every batch until let go, so a test can look at the index mid-embedding.
struct Gated {
    open: AtomicBool,
    calls: AtomicUsize,
}

impl Embed for Gated {
    fn name(&self) -> &str {
        "gated"
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        while !self.open.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(texts.iter().map(|t| common::hash_vector(t, 32)).collect())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keywords_answer_while_vectors_are_being_computed() {
    let dir = tempfile::tempdir().unwrap();
    let docs = fixture(dir.path());
    let gated = Arc::new(Gated { open: AtomicBool::new(false), calls: AtomicUsize::new(0) });
    let index = DocsIndex::open(&dir.path().join("i.sqlite"), &docs, Some(gated.clone())).await.unwrap();
    let refresh = tokio::spawn({
        let index = index.clone();
        async move { index.refresh().await }
    });
    while gated.calls.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Stored but not embedded: found by keywords; the query is not embedded (nothing to compare).
    let hits = index.search("keyboard shortcuts", 3).await.unwrap();
    assert_eq!(top(&hits).1, "Chat › Keyboard shortcuts");
    assert_eq!(index.status().await.unwrap().embedded, 0);
    gated.open.store(true, Ordering::SeqCst);
    let stats = refresh.await.unwrap().unwrap();
    assert_eq!(stats.embedded, stats.chunks);
    assert_eq!(top(&index.search("keyboard shortcuts", 3).await.unwrap()).1, "Chat › Keyboard shortcuts");
}

struct Broken;

impl Embed for Broken {
    fn name(&self) -> &str {
        "broken"
    }
    fn embed(&self, _: &[String]) -> Result<Vec<Vec<f32>>, String> {
        Err("the model file is missing".into())
    }
}

#[tokio::test]
async fn a_failing_embedder_leaves_keyword_search_working() {
    let dir = tempfile::tempdir().unwrap();
    let docs = fixture(dir.path());
    let index = DocsIndex::open(&dir.path().join("i.sqlite"), &docs, Some(Arc::new(Broken))).await.unwrap();
    let err = index.refresh().await.unwrap_err();
    assert!(matches!(err, DocsError::Embed { .. }), "{err:?}");
    assert!(err.to_string().contains("Keyword search still works"), "{err}");
    assert_eq!(top(&index.search("dark mode", 3).await.unwrap()).1, "Appearance › Dark mode");
    let status = index.status().await.unwrap();
    assert_eq!((status.files, status.embedded), (5, 0));
}
