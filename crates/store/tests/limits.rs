//! The limits every server of a store shares, on both backends: quotas over a sliding window,
//! one-holder slots with a lease, all-or-nothing decisions, visitors' cap and expiry, and two
//! stores on one database (two servers) keeping one limit under a crowd of requests at once.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;
use std::time::Duration;
use wright_store::*;

mod support;

fn slot(key: &str, holder: &str, lease: Duration) -> SlotAsk {
    SlotAsk { key: key.into(), holder: holder.into(), lease }
}

async fn a_quota_counts_uses_in_its_window(store: Arc<dyn Store>) {
    let q = [Quota::per_hour("chat:ann", 2)];
    assert_eq!(store.admit(None, &q).await.unwrap(), Admit::Admitted);
    assert_eq!(store.admit(None, &q).await.unwrap(), Admit::Admitted);
    match store.admit(None, &q).await.unwrap() {
        Admit::Over { key, count, max, retry_after } => {
            assert_eq!((key.as_str(), count, max), ("chat:ann", 2, 2));
            assert!(
                retry_after > Duration::from_secs(3500) && retry_after <= Duration::from_secs(3600),
                "{retry_after:?}"
            );
        }
        other => panic!("a third use in the hour: {other:?}"),
    }
    assert_eq!(store.admit(None, &[Quota::per_hour("chat:bob", 2)]).await.unwrap(), Admit::Admitted, "bob's own");
    // A short window lets uses go again once it has passed.
    let short = [Quota { key: "burst".into(), max: 1, window: Duration::from_millis(300) }];
    assert_eq!(store.admit(None, &short).await.unwrap(), Admit::Admitted);
    assert!(matches!(store.admit(None, &short).await.unwrap(), Admit::Over { .. }));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(store.admit(None, &short).await.unwrap(), Admit::Admitted, "the first use left the window");
    assert!(matches!(store.admit(None, &[Quota::per_hour("none", 0)]).await.unwrap(), Admit::Over { .. }));
}

async fn a_slot_has_one_holder_until_released_or_lapsed(store: Arc<dyn Store>) {
    let minute = Duration::from_secs(60);
    assert_eq!(store.admit(Some(&slot("turn:ann", "h1", minute)), &[]).await.unwrap(), Admit::Admitted);
    match store.admit(Some(&slot("turn:ann", "h2", minute)), &[]).await.unwrap() {
        Admit::Busy { retry_after } => assert!(retry_after > Duration::from_secs(50), "{retry_after:?}"),
        other => panic!("a second holder: {other:?}"),
    }
    assert_eq!(
        store.admit(Some(&slot("turn:ann", "h1", minute)), &[]).await.unwrap(),
        Admit::Admitted,
        "its holder again"
    );
    assert_eq!(store.admit(Some(&slot("turn:bob", "h2", minute)), &[]).await.unwrap(), Admit::Admitted);
    store.release_slot("turn:ann", "h2").await.unwrap();
    assert!(
        matches!(store.admit(Some(&slot("turn:ann", "h2", minute)), &[]).await.unwrap(), Admit::Busy { .. }),
        "not h2's"
    );
    store.release_slot("turn:ann", "h1").await.unwrap();
    assert_eq!(store.admit(Some(&slot("turn:ann", "h2", minute)), &[]).await.unwrap(), Admit::Admitted);
    assert!(!store.renew_slot("turn:ann", "h1", minute).await.unwrap(), "h1 let go");
    // A holder that stops renewing (its server died) lets go when its lease runs out.
    let short = Duration::from_millis(300);
    assert_eq!(store.admit(Some(&slot("turn:cy", "dead", short)), &[]).await.unwrap(), Admit::Admitted);
    assert!(store.renew_slot("turn:cy", "dead", short).await.unwrap());
    assert!(matches!(store.admit(Some(&slot("turn:cy", "next", minute)), &[]).await.unwrap(), Admit::Busy { .. }));
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(store.admit(Some(&slot("turn:cy", "next", minute)), &[]).await.unwrap(), Admit::Admitted);
    assert!(!store.renew_slot("turn:cy", "dead", short).await.unwrap(), "taken over");
}

async fn a_refusal_takes_nothing(store: Arc<dyn Store>) {
    let minute = Duration::from_secs(60);
    let quotas = [Quota::per_hour("key:ek", 5), Quota::per_hour("chat:v1", 1)];
    assert_eq!(store.admit(Some(&slot("turn:v1", "a", minute)), &quotas).await.unwrap(), Admit::Admitted);
    // Busy: neither quota is counted.
    assert!(matches!(store.admit(Some(&slot("turn:v1", "b", minute)), &quotas).await.unwrap(), Admit::Busy { .. }));
    store.release_slot("turn:v1", "a").await.unwrap();
    // Over on the second quota: the first is not counted, nor the slot taken.
    assert!(matches!(store.admit(Some(&slot("turn:v1", "b", minute)), &quotas).await.unwrap(), Admit::Over { .. }));
    for _ in 0..4 {
        assert_eq!(store.admit(None, &[Quota::per_hour("key:ek", 5)]).await.unwrap(), Admit::Admitted);
    }
    assert!(matches!(store.admit(None, &[Quota::per_hour("key:ek", 5)]).await.unwrap(), Admit::Over { count: 5, .. }));
    assert_eq!(
        store.admit(Some(&slot("turn:v1", "c", minute)), &[]).await.unwrap(),
        Admit::Admitted,
        "the slot was free"
    );
}

async fn visitors_are_capped_and_expire(store: Arc<dyn Store>) {
    let key = EmbedKey {
        id: "ek-1".into(),
        owner_id: "ann".into(),
        name: "Tips".into(),
        origins: vec!["https://tips.example".into()],
        tools: vec![],
        docs_dir: None,
        per_hour: 50,
        created_at: now(),
        revoked_at: None,
    };
    store.create_embed_key(&key, "hash-1").await.unwrap();
    let (short, day) = (Duration::from_millis(400), Duration::from_secs(86_400));
    assert!(store.create_visitor("v-1", "vh-1", "ek-1", short, 2).await.unwrap());
    assert!(store.create_visitor("v-2", "vh-2", "ek-1", day, 2).await.unwrap());
    assert!(!store.create_visitor("v-3", "vh-3", "ek-1", day, 2).await.unwrap(), "two live visitors is the cap");
    assert!(store.visitor_by_hash("vh-3").await.unwrap().is_none(), "the refused one was not made");
    assert!(store.visitor_by_hash("vh-1").await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(store.visitor_by_hash("vh-1").await.unwrap().is_none(), "an idle session ends");
    assert!(store.create_visitor("v-3", "vh-3", "ek-1", day, 2).await.unwrap(), "an ended session frees its place");
    // Use moves the end on.
    store.touch_visitor("v-2", short).await.unwrap();
    assert!(store.visitor_by_hash("vh-2").await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(store.visitor_by_hash("vh-2").await.unwrap().is_none());
    assert!(store.sweep_limits().await.unwrap() >= 2, "the ended sessions are removed");
    assert!(store.visitor_by_hash("vh-3").await.unwrap().is_some(), "a live one stays");
}

both!(
    a_quota_counts_uses_in_its_window,
    a_slot_has_one_holder_until_released_or_lapsed,
    a_refusal_takes_nothing,
    visitors_are_capped_and_expire,
);

/// Two servers' stores on one database, 40 requests at once for one user (limit 7 an hour):
/// exactly 7 get through, and while one holds the user's turn the other server's asks are busy.
async fn two_stores_keep_one_limit(a: Arc<dyn Store>, b: Arc<dyn Store>) {
    let mut asks = Vec::new();
    for i in 0..40 {
        let s = if i % 2 == 0 { a.clone() } else { b.clone() };
        asks.push(tokio::spawn(async move { s.admit(None, &[Quota::per_hour("chat:ann", 7)]).await.unwrap() }));
    }
    let mut admitted = 0;
    for t in asks {
        if t.await.unwrap() == Admit::Admitted {
            admitted += 1;
        }
    }
    assert_eq!(admitted, 7, "one limit across both");
    let minute = Duration::from_secs(60);
    let mut turns = Vec::new();
    for i in 0..20 {
        let s = if i % 2 == 0 { a.clone() } else { b.clone() };
        let holder = format!("h{i}");
        turns.push(tokio::spawn(async move { s.admit(Some(&slot("turn:ann", &holder, minute)), &[]).await.unwrap() }));
    }
    let mut held = 0;
    for t in turns {
        if t.await.unwrap() == Admit::Admitted {
            held += 1;
        }
    }
    assert_eq!(held, 1, "one turn at a time across both");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_sqlite_stores_on_one_file_keep_one_limit() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("wright.db").display());
    let a: Arc<dyn Store> = Arc::new(SqliteStore::open(&url).await.unwrap());
    let b: Arc<dyn Store> = Arc::new(SqliteStore::open(&url).await.unwrap());
    two_stores_keep_one_limit(a, b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_postgres_stores_on_one_database_keep_one_limit() {
    let url = support::postgres_url();
    let a: Arc<dyn Store> = Arc::new(PgStore::open_with(&url, 8).await.unwrap());
    let b: Arc<dyn Store> = Arc::new(PgStore::open_with(&url, 8).await.unwrap());
    two_stores_keep_one_limit(a, b).await;
}
