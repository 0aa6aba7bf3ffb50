//! A published build becomes an app with an address of its own (docs/apps.md). Its title and
//! one-line description are the model's words, read from the project's entry page (the
//! template's [`Template::entry_page`], so a bundled page is read where it is served from); a
//! page without them gets names made from the request. The store gives out the slug.

use std::path::Path;
use wright_events::{AppRef, Template};
use wright_store::apps::{DESCRIPTION_CHARS, TITLE_CHARS, clip};
use wright_store::{NewApp, Store};

/// Words of the request a fallback title takes.
const TITLE_WORDS: usize = 6;
/// Largest entry page read for its names.
const MAX_PAGE_BYTES: u64 = 1 << 20;

/// Publish build `build_id`: its app's names from the entry page under `root`, its address
/// from the store. `None` (and a warning in the log) when the store could not publish it; the
/// build is published all the same.
/// A continued build (`parent`) keeps its parent's address: the app moves to it, with the names
/// it has (the owner may have renamed it).
pub async fn publish(
    store: &dyn Store,
    build_id: &str,
    parent: Option<&str>,
    prompt: &str,
    template: Template,
    root: &Path,
) -> Option<AppRef> {
    if let Some(parent) = parent {
        match store.move_app(parent, build_id).await {
            Ok(Some(app)) => return Some(app.to_ref()),
            Ok(None) => {}
            Err(e) => tracing::warn!(build = %build_id, "the parent's app could not move to this build: {e}"),
        }
    }
    if !template.is_web() && template != Template::Auto {
        // A Python, Rust or Go program has no page to serve at an address of its own; it is
        // published as a verified build whose files people download.
        return None;
    }
    let (root, page) = (root.to_path_buf(), template.entry_page().to_string());
    let meta = tokio::task::spawn_blocking(move || read_meta(&root, &page)).await.unwrap_or_default();
    let app = NewApp {
        build_id: build_id.to_string(),
        title: clip(&meta.title.unwrap_or_else(|| title_from(prompt)), TITLE_CHARS),
        description: clip(&meta.description.unwrap_or_else(|| prompt.to_string()), DESCRIPTION_CHARS),
        prompt: prompt.to_string(),
        template,
    };
    match store.publish_app(&app).await {
        Ok(app) => Some(app.to_ref()),
        Err(e) => {
            tracing::warn!(build = %build_id, "the app was not published: {e}");
            None
        }
    }
}

/// The entry page's title and description, read beneath the project with no link followed
/// (the page is the generated code's: a link there must not put another file's text in a
/// public title).
fn read_meta(root: &Path, page: &str) -> wright_webcheck::PageMeta {
    let Ok(dir) = wright_sandbox::Dir::open(root) else { return wright_webcheck::PageMeta::default() };
    let small = dir.meta(page).is_ok_and(|m| m.kind == wright_sandbox::EntryKind::File && m.len <= MAX_PAGE_BYTES);
    match dir.read(page) {
        Ok(bytes) if small => wright_webcheck::page_meta(&String::from_utf8_lossy(&bytes)),
        _ => wright_webcheck::PageMeta::default(),
    }
}

/// A title from the request's first words, its first letter capitalised ("a todo app for my
/// homework" → "A todo app for my homework").
pub fn title_from(prompt: &str) -> String {
    let words: Vec<&str> = prompt.split_whitespace().take(TITLE_WORDS).collect();
    let text = words.join(" ");
    let text = text.trim_end_matches(|c: char| c.is_ascii_punctuation());
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "App".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use wright_store::SqliteStore;

    #[test]
    fn titles_from_requests() {
        assert_eq!(title_from("a todo app to track my homework every day"), "A todo app to track my");
        assert_eq!(title_from("  "), "App");
        assert_eq!(title_from("ótimo relógio!"), "Ótimo relógio");
    }

    async fn store_with(id: &str) -> Arc<dyn Store> {
        let store: Arc<dyn Store> = Arc::new(SqliteStore::memory().await.unwrap());
        add_build(store.as_ref(), id, None).await;
        store
    }

    async fn add_build(store: &dyn Store, id: &str, parent: Option<&str>) {
        let b = wright_store::NewBuild {
            id: id.into(),
            kind: wright_events::RunKind::Build,
            parent_id: parent.map(Into::into),
            prompt: "p".into(),
            template: Some(wright_events::Template::Static),
            lang: wright_events::Lang::En,
            provider: "scripted".into(),
            model: "m".into(),
            workspace: "/tmp/x".into(),
            started_at: wright_store::now(),
        };
        store.create_build(&b).await.unwrap();
    }

    #[tokio::test]
    async fn names_come_from_the_entry_page_else_the_request() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("client")).unwrap();
        std::fs::write(
            dir.path().join("client/index.html"),
            "<html><head><title>Notes Board</title><meta name=\"description\" content=\"Sticky notes, shared.\"></head></html>",
        )
        .unwrap();
        std::fs::write(dir.path().join("index.html"), "<title>Wrong page</title>").unwrap();
        let store = store_with("b1").await;
        let app =
            publish(store.as_ref(), "b1", None, "a notes app with a server", Template::Fullstack, dir.path()).await;
        let app = app.unwrap();
        assert_eq!((app.slug.as_str(), app.title.as_str()), ("notes-board", "Notes Board"));
        assert_eq!((app.description.as_str(), app.url_path.as_str()), ("Sticky notes, shared.", "/apps/notes-board"));

        let bare = tempfile::tempdir().unwrap();
        let store = store_with("b2").await;
        let app =
            publish(store.as_ref(), "b2", None, "a dice roller for board games", Template::Static, bare.path()).await;
        let app = app.unwrap();
        assert_eq!(
            (app.title.as_str(), app.slug.as_str()),
            ("A dice roller for board games", "a-dice-roller-for-board")
        );
        assert_eq!(app.description, "a dice roller for board games");
        assert!(publish(store.as_ref(), "nope", None, "x", Template::Static, bare.path()).await.is_none());
    }

    #[tokio::test]
    async fn a_continued_build_keeps_its_parents_address_and_names() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), "<title>Dice</title>").unwrap();
        let store = store_with("b1").await;
        let first = publish(store.as_ref(), "b1", None, "a dice roller", Template::Static, dir.path()).await.unwrap();
        store
            .rename_app(&first.slug, &wright_store::AppChange { title: Some("Lucky".into()), ..Default::default() })
            .await
            .unwrap();
        // The continuation changed the page's title; the owner's name for the app stays.
        std::fs::write(dir.path().join("index.html"), "<title>Blue dice</title>").unwrap();
        add_build(store.as_ref(), "b2", Some("b1")).await;
        let next =
            publish(store.as_ref(), "b2", Some("b1"), "make it blue", Template::Static, dir.path()).await.unwrap();
        assert_eq!((next.slug.as_str(), next.title.as_str()), ("dice", "Lucky"));
        assert_eq!(store.app("dice").await.unwrap().build_id, "b2");
        assert!(store.app_of_build("b1").await.unwrap().is_none());
        // A parent whose app was taken down gives its continuation an address of its own.
        store.unpublish_app("dice").await.unwrap();
        add_build(store.as_ref(), "b3", Some("b2")).await;
        let third =
            publish(store.as_ref(), "b3", Some("b2"), "make it red", Template::Static, dir.path()).await.unwrap();
        assert_eq!(third.slug, "blue-dice");
    }
}
