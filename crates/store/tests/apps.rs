//! Published apps through the `Store` trait only, on SQLite and on PostgreSQL: slugs given out
//! once (also to publishes at the same moment), renames that collide, unpublishing, a
//! continued build taking over its parent's app, and the order of related apps.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;
use wright_store::*;

fn new_build(id: &str) -> NewBuild {
    NewBuild {
        id: id.into(),
        kind: wright_events::RunKind::Build,
        parent_id: None,
        prompt: format!("request of {id}"),
        template: Some(Template::Static),
        lang: Lang::En,
        provider: "openai".into(),
        model: "m".into(),
        workspace: format!("/tmp/{id}"),
        started_at: now(),
    }
}

/// A build of `owner` (through the queue, as `wright serve` makes them), or a local one.
async fn build(store: &Arc<dyn Store>, id: &str, owner: Option<&str>) {
    match owner {
        None => store.create_build(&new_build(id)).await.unwrap(),
        Some(owner) => {
            let q = QueuedBuild {
                build: new_build(id),
                owner: owner.into(),
                job: QueuedJob::Build(BuildArgs { prompt: format!("{{\"prompt\":\"{id}\"}}"), ..Default::default() }),
                idempotency_key: None,
                dedup_key: format!("{owner}:{id}"),
                preview_key: format!("pk-{id}"),
                first_event: None,
                limits: None,
            };
            store.enqueue_build(&q).await.unwrap();
        }
    }
}

fn app(build: &str, title: &str, description: &str, prompt: &str) -> NewApp {
    NewApp {
        build_id: build.into(),
        title: title.into(),
        description: description.into(),
        prompt: prompt.into(),
        template: Template::Static,
    }
}

async fn slugs_are_given_out_once(store: Arc<dyn Store>) {
    for id in ["b1", "b2", "b3"] {
        build(&store, id, Some("u1")).await;
    }
    build(&store, "local", None).await;
    let a = store.publish_app(&app("b1", "My To-Do App", "Tasks.", "a todo app")).await.unwrap();
    assert_eq!((a.slug.as_str(), a.owner.as_deref()), ("my-to-do-app", Some("u1")));
    assert_eq!(a.url_path(), "/apps/my-to-do-app");
    assert!(a.is_published());
    let b = store.publish_app(&app("b2", "My to-do app!", "Tasks again.", "a todo app")).await.unwrap();
    assert_eq!(b.slug, "my-to-do-app-2");
    // Publishing a build again gives its app back, unchanged.
    let again = store.publish_app(&app("b1", "Another title", "x", "y")).await.unwrap();
    assert_eq!(again, a);
    let local = store.publish_app(&app("local", "Café Ação", "Local.", "p")).await.unwrap();
    assert_eq!((local.slug.as_str(), local.owner.as_deref()), ("cafe-acao", None));
    assert_eq!(store.app_of_build("local").await.unwrap(), Some(local.clone()));
    assert_eq!(store.app_of_build("b3").await.unwrap(), None);
    assert!(matches!(store.publish_app(&app("nope", "T", "d", "p")).await, Err(StoreError::NotFound(_))));
    assert!(matches!(store.app("missing").await, Err(StoreError::NotFound(_))));

    let mine = store.apps(&AppFilter { owner: Some("u1".into()), published_only: false, limit: 10 }).await.unwrap();
    assert_eq!(
        mine.iter().map(|a| a.slug.as_str()).collect::<BTreeSet<_>>(),
        BTreeSet::from(["my-to-do-app", "my-to-do-app-2"])
    );
    let all = store.apps(&AppFilter { owner: None, published_only: true, limit: 10 }).await.unwrap();
    assert_eq!(all.len(), 3);
    let one = store.apps(&AppFilter { owner: None, published_only: true, limit: 1 }).await.unwrap();
    assert_eq!(one.len(), 1);
}

async fn concurrent_publishes_take_distinct_slugs(store: Arc<dyn Store>) {
    const N: usize = 12;
    for i in 0..N {
        build(&store, &format!("c{i}"), Some("u1")).await;
    }
    let tasks: Vec<_> = (0..N)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.publish_app(&app(&format!("c{i}"), "Same Title", "d", "p")).await })
        })
        .collect();
    let mut slugs = BTreeSet::new();
    for t in tasks {
        slugs.insert(t.await.unwrap().unwrap().slug);
    }
    let expected: BTreeSet<String> =
        std::iter::once("same-title".to_string()).chain((2..=N).map(|n| format!("same-title-{n}"))).collect();
    assert_eq!(slugs, expected);
}

async fn renames_check_and_collide(store: Arc<dyn Store>) {
    build(&store, "r1", Some("u1")).await;
    build(&store, "r2", Some("u2")).await;
    store.publish_app(&app("r1", "Timer", "A timer.", "timer")).await.unwrap();
    store.publish_app(&app("r2", "Clock", "A clock.", "clock")).await.unwrap();
    let change = |slug: Option<&str>, title: Option<&str>| AppChange {
        slug: slug.map(String::from),
        title: title.map(String::from),
        description: None,
    };
    let taken = store.rename_app("timer", &change(Some("clock"), None)).await;
    assert!(matches!(&taken, Err(StoreError::Invalid(m)) if m.contains("taken")), "{taken:?}");
    let bad = store.rename_app("timer", &change(Some("Not A Slug"), None)).await;
    assert!(matches!(bad, Err(StoreError::Invalid(_))));
    let empty = store.rename_app("timer", &change(None, Some("  "))).await;
    assert!(matches!(empty, Err(StoreError::Invalid(_))));
    assert!(matches!(store.rename_app("nope", &change(Some("x"), None)).await, Err(StoreError::NotFound(_))));
    let renamed = store.rename_app("timer", &change(Some("pomodoro"), Some("Pomodoro"))).await.unwrap();
    assert_eq!(
        (renamed.slug.as_str(), renamed.title.as_str(), renamed.description.as_str()),
        ("pomodoro", "Pomodoro", "A timer.")
    );
    assert_eq!(renamed.build_id, "r1");
    assert!(matches!(store.app("timer").await, Err(StoreError::NotFound(_))), "the old slug is free again");
    // Only the description.
    let d = AppChange { description: Some("Focus in 25 minutes.".into()), ..AppChange::default() };
    assert_eq!(store.rename_app("pomodoro", &d).await.unwrap().description, "Focus in 25 minutes.");
}

async fn unpublished_apps_keep_their_slug(store: Arc<dyn Store>) {
    build(&store, "p1", Some("u1")).await;
    build(&store, "p2", Some("u1")).await;
    let a = store.publish_app(&app("p1", "Quiz", "A quiz.", "quiz")).await.unwrap();
    let down = store.unpublish_app("quiz").await.unwrap();
    assert!(!down.is_published());
    let at = down.unpublished_at.clone();
    assert_eq!(store.unpublish_app("quiz").await.unwrap().unpublished_at, at, "twice changes nothing");
    assert_eq!(store.app(&a.slug).await.unwrap().unpublished_at, at);
    // The slug stays reserved: the next app of that name gets another.
    assert_eq!(store.publish_app(&app("p2", "Quiz", "Another.", "quiz")).await.unwrap().slug, "quiz-2");
    let public = store.apps(&AppFilter { owner: None, published_only: true, limit: 10 }).await.unwrap();
    assert_eq!(public.iter().map(|a| a.slug.as_str()).collect::<Vec<_>>(), ["quiz-2"]);
    let mine = store.apps(&AppFilter { owner: Some("u1".into()), published_only: false, limit: 10 }).await.unwrap();
    assert_eq!(mine.len(), 2);
    assert!(matches!(store.unpublish_app("nope").await, Err(StoreError::NotFound(_))));
}

/// Retention takes down the app of a build whose files it removed, found by its build even
/// after a rename, and leaves the slug reserved like any unpublish.
async fn apps_of_pruned_builds_are_taken_down(store: Arc<dyn Store>) {
    build(&store, "old", Some("u1")).await;
    build(&store, "plain", Some("u1")).await;
    build(&store, "down", Some("u1")).await;
    store.publish_app(&app("old", "Weather Board", "Today's weather.", "weather")).await.unwrap();
    let renamed = AppChange { slug: Some("my-weather".into()), ..AppChange::default() };
    store.rename_app("weather-board", &renamed).await.unwrap();
    let other = store.publish_app(&app("down", "Quiz", "A quiz.", "quiz")).await.unwrap();
    let first_down = store.unpublish_app(&other.slug).await.unwrap().unpublished_at;

    let gone = store.unpublish_app_of_build("old").await.unwrap().unwrap();
    assert_eq!((gone.slug.as_str(), gone.is_published()), ("my-weather", false));
    assert_eq!(store.app("my-weather").await.unwrap(), gone);
    assert_eq!(store.unpublish_app_of_build("old").await.unwrap(), Some(gone.clone()), "twice changes nothing");
    assert_eq!(store.unpublish_app_of_build("plain").await.unwrap(), None, "a build that never published");
    assert_eq!(store.unpublish_app_of_build("nope").await.unwrap(), None);
    let still = store.unpublish_app_of_build("down").await.unwrap().unwrap();
    assert_eq!(still.unpublished_at, first_down, "an app already down keeps its time");
    // Its slug stays reserved: a new app of that name gets another.
    build(&store, "new", Some("u2")).await;
    let n = store.publish_app(&app("new", "My Weather", "Again.", "weather")).await.unwrap();
    assert_eq!(n.slug, "my-weather-2");
}

async fn related_apps_come_most_similar_first(store: Arc<dyn Store>) {
    let apps = [
        ("t1", "Pomodoro Timer", "A countdown timer for focused study sessions.", "a pomodoro countdown timer"),
        ("t2", "Countdown Timer", "Counts down to zero and rings.", "a countdown timer with an alarm"),
        ("t3", "Study Planner", "Plan your homework by week.", "a planner for school"),
        ("t4", "Pizza Menu", "Our pizzas and prices.", "a menu for my pizza place"),
        ("t5", "Egg Timer", "A countdown timer for boiling eggs.", "an egg countdown timer"),
    ];
    for (id, title, description, prompt) in apps {
        build(&store, id, Some("u1")).await;
        store.publish_app(&app(id, title, description, prompt)).await.unwrap();
    }
    let related = store.related_apps("pomodoro-timer", 3).await.unwrap();
    let slugs: Vec<&str> = related.iter().map(|a| a.slug.as_str()).collect();
    assert_eq!(slugs.len(), 3, "{slugs:?}");
    // Two words in common (rarer words weigh more; a shorter app is closer), then one.
    assert_eq!(slugs, ["egg-timer", "countdown-timer", "study-planner"]);
    assert!(!slugs.contains(&"pizza-menu") && !slugs.contains(&"pomodoro-timer"));
    // Unpublished apps are not suggested.
    store.unpublish_app("egg-timer").await.unwrap();
    let related = store.related_apps("pomodoro-timer", 5).await.unwrap();
    assert_eq!(related.iter().map(|a| a.slug.as_str()).collect::<Vec<_>>(), ["countdown-timer", "study-planner"]);
    assert!(store.related_apps("pizza-menu", 5).await.unwrap().is_empty(), "nothing in common");
}

async fn a_continuation_takes_over_its_parents_app(store: Arc<dyn Store>) {
    for (id, owner) in [("p1", "u1"), ("c1", "u1"), ("c2", "u1"), ("x1", "u2")] {
        build(&store, id, Some(owner)).await;
    }
    store.publish_app(&app("p1", "Dice Roller", "Roll dice.", "dice")).await.unwrap();
    // Another person's build never takes it.
    assert!(store.move_app("p1", "x1").await.unwrap().is_none());
    let moved = store.move_app("p1", "c1").await.unwrap().unwrap();
    assert_eq!(
        (moved.slug.as_str(), moved.build_id.as_str(), moved.title.as_str()),
        ("dice-roller", "c1", "Dice Roller")
    );
    assert!(store.app_of_build("p1").await.unwrap().is_none());
    // The parent has no app any more; a build that already has one keeps it.
    assert!(store.move_app("p1", "c2").await.unwrap().is_none());
    store.publish_app(&app("c2", "Other", "Other.", "other")).await.unwrap();
    assert!(store.move_app("c1", "c2").await.unwrap().is_none());
    assert_eq!(store.app("dice-roller").await.unwrap().build_id, "c1");
    // An app taken down stays with its build.
    store.unpublish_app("dice-roller").await.unwrap();
    build(&store, "c3", Some("u1")).await;
    assert!(store.move_app("c1", "c3").await.unwrap().is_none());
}

both!(
    a_continuation_takes_over_its_parents_app,
    slugs_are_given_out_once,
    concurrent_publishes_take_distinct_slugs,
    renames_check_and_collide,
    unpublished_apps_keep_their_slug,
    apps_of_pruned_builds_are_taken_down,
    related_apps_come_most_similar_first,
);
