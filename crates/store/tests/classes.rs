//! Classes through the `Store` trait only, on SQLite and on PostgreSQL: teachers and members,
//! who is whose teacher or classmate (and no longer once removed), builds shared within a
//! class, and what each member's runs cost this month.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::sync::Arc;
use wright_store::*;

async fn user(store: &Arc<dyn Store>, name: &str, role: Role) -> User {
    let u = new_user(name, role);
    store.create_user(&u, &format!("hash-{name}")).await.unwrap();
    u
}

/// A build of `owner` through the queue, ended with `cost` dollars and 100 + 10 tokens.
async fn build(store: &Arc<dyn Store>, id: &str, owner: &str, cost: f64) {
    let q = QueuedBuild {
        build: NewBuild {
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
        },
        owner: owner.into(),
        job: QueuedJob::Build(BuildArgs { prompt: id.into(), ..Default::default() }),
        idempotency_key: None,
        dedup_key: format!("{owner}:{id}"),
        preview_key: format!("pk-{id}"),
        first_event: None,
        limits: None,
    };
    store.enqueue_build(&q).await.unwrap();
    let tokens = Tokens { input_tokens: 100, output_tokens: 10, cached_tokens: 0, cost_usd: cost };
    let record = BuildFinish {
        status: RunStatus::Published,
        end_reason: None,
        fix_attempts: 0,
        turns: 1,
        tokens,
        duration_ms: 5,
        files: vec![],
        report: None,
        finished_at: now(),
    };
    store.finish(id, None, RunEnd::of(record, vec![])).await.unwrap();
}

async fn teachers_and_members_make_relations(store: Arc<dyn Store>) {
    let t = user(&store, "tess", Role::Teacher).await;
    let (a, b, c) = (
        user(&store, "ana", Role::User).await,
        user(&store, "ben", Role::User).await,
        user(&store, "cy", Role::User).await,
    );
    let class = store.create_class("lab-1", std::slice::from_ref(&t.id)).await.unwrap();
    assert_eq!(class.teachers.iter().map(|u| u.name.as_str()).collect::<Vec<_>>(), ["tess"]);
    assert!(store.create_class("lab-1", &[]).await.is_err(), "a taken name is refused");
    assert!(store.create_class("lab 1", &[]).await.is_err(), "a name with a space is refused");
    let class =
        store.change_class("lab-1", &[(a.id.clone(), Part::Member), (b.id.clone(), Part::Member)], &[]).await.unwrap();
    assert_eq!(class.members.iter().map(|u| u.name.as_str()).collect::<Vec<_>>(), ["ana", "ben"]);

    assert_eq!(store.relation(&t.id, &a.id).await.unwrap(), Relation { teaches: true, classmates: false });
    assert_eq!(store.relation(&a.id, &b.id).await.unwrap(), Relation { teaches: false, classmates: true });
    assert_eq!(store.relation(&a.id, &c.id).await.unwrap(), Relation::default(), "cy is in no class");
    assert_eq!(store.relation(&t.id, &c.id).await.unwrap(), Relation::default());
    assert_eq!(store.relation(&a.id, &t.id).await.unwrap(), Relation::default(), "a member is not a teacher");

    // Removing a member ends both relations at once.
    let class = store.change_class("lab-1", &[], std::slice::from_ref(&b.id)).await.unwrap();
    assert_eq!(class.members.len(), 1);
    assert_eq!(store.relation(&a.id, &b.id).await.unwrap(), Relation::default());
    assert_eq!(store.relation(&t.id, &b.id).await.unwrap(), Relation::default());
    assert!(matches!(store.change_class("nope", &[], &[]).await, Err(StoreError::NotFound(_))));
    assert_eq!(store.classes().await.unwrap().len(), 1);
}

async fn shared_builds_reach_classmates_only(store: Arc<dyn Store>) {
    let (a, b, c) = (
        user(&store, "ana", Role::User).await,
        user(&store, "ben", Role::User).await,
        user(&store, "cy", Role::User).await,
    );
    store.create_class("lab-1", &[]).await.unwrap();
    store.change_class("lab-1", &[(a.id.clone(), Part::Member), (b.id.clone(), Part::Member)], &[]).await.unwrap();
    build(&store, "b-ana", &a.id, 0.0).await;
    build(&store, "b-ana-2", &a.id, 0.0).await;
    assert_eq!(store.shared("b-ana").await.unwrap(), None);
    store.set_shared("b-ana", true).await.unwrap();
    store.set_shared("b-ana", true).await.unwrap();
    assert_eq!(store.shared("b-ana").await.unwrap().unwrap().by, "ana");

    let seen = store.shared_with(&b.id, 10).await.unwrap();
    assert_eq!(seen.iter().map(|s| s.build.start.id.as_str()).collect::<Vec<_>>(), ["b-ana"]);
    assert_eq!(seen[0].shared.by, "ana");
    assert!(store.shared_with(&a.id, 10).await.unwrap().is_empty(), "one's own are not shared with oneself");
    assert!(store.shared_with(&c.id, 10).await.unwrap().is_empty(), "not a classmate");

    store.set_shared("b-ana", false).await.unwrap();
    assert_eq!(store.shared("b-ana").await.unwrap(), None);
    assert!(store.shared_with(&b.id, 10).await.unwrap().is_empty());
}

async fn a_class_spend_sums_its_members_runs(store: Arc<dyn Store>) {
    let (a, b, c) = (
        user(&store, "ana", Role::User).await,
        user(&store, "ben", Role::User).await,
        user(&store, "cy", Role::User).await,
    );
    let class = store.create_class("lab-1", &[]).await.unwrap();
    store.change_class("lab-1", &[(a.id.clone(), Part::Member), (b.id.clone(), Part::Member)], &[]).await.unwrap();
    build(&store, "b1", &a.id, 0.25).await;
    build(&store, "b2", &a.id, 0.5).await;
    build(&store, "b3", &c.id, 9.0).await;
    let spend = store.class_spend(&class.id, "2000-01-01T00:00:00.000Z").await.unwrap();
    assert_eq!(spend.len(), 2, "members only: {spend:?}");
    assert_eq!((spend[0].user.name.as_str(), spend[0].runs), ("ana", 2));
    assert!((spend[0].cost_usd - 0.75).abs() < 1e-9);
    assert_eq!((spend[0].input_tokens, spend[0].output_tokens), (200, 20));
    assert_eq!((spend[1].user.name.as_str(), spend[1].runs, spend[1].cost_usd), ("ben", 0, 0.0));
    let later = store.class_spend(&class.id, "2999-01-01T00:00:00.000Z").await.unwrap();
    assert_eq!(later[0].runs, 0, "runs before `since` are left out");
}

both!(teachers_and_members_make_relations, shared_builds_reach_classmates_only, a_class_spend_sums_its_members_runs);
