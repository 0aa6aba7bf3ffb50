//! A build travels typed from the queue to the row and back: its job (kind and typed args, not
//! the HTTP body), template and language, on both backends; rows written by earlier versions
//! (the HTTP body as the job, the request's own spelling of template and language) still read,
//! and a value no version wrote is a clear error, never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;
use wright_events::api::RunId;
use wright_store::*;

fn job() -> QueuedJob {
    QueuedJob::Build(BuildArgs {
        prompt: "a todo app with an API".into(),
        template: Some(Template::Fullstack),
        lang: Some(Lang::Pt),
        model: Some("m2".into()),
        checks: vec!["npm test".into()],
        continue_from: Some(RunId("b0".into())),
        assistant: true,
        allow_hosts: Some(vec!["api.example.test".into()]),
        hidden_removed: 0,
        variant: None,
    })
}

fn queued(id: &str) -> QueuedBuild {
    QueuedBuild {
        build: NewBuild {
            id: id.into(),
            kind: wright_events::RunKind::Build,
            parent_id: None,
            prompt: "a todo app with an API".into(),
            template: Some(Template::Fullstack),
            lang: Lang::Pt,
            provider: "openai".into(),
            model: "m2".into(),
            workspace: format!("/tmp/{id}"),
            started_at: now(),
        },
        owner: "u1".into(),
        job: job(),
        idempotency_key: None,
        dedup_key: format!("dedup-{id}"),
        preview_key: format!("pk-{id}"),
        first_event: None,
        limits: None,
    }
}

async fn a_queued_job_comes_back_typed(s: Arc<dyn Store>) {
    assert_eq!(s.enqueue_build(&queued("b1")).await.unwrap(), Enqueued::New);
    let claimed = s.claim_build("w1", Duration::from_secs(3600)).await.unwrap().unwrap();
    assert_eq!(claimed.job, Some(Ok(job())));
    assert_eq!(claimed.queued_job(), Ok(&job()));
    assert_eq!((claimed.start.template, claimed.start.lang), (Some(Template::Fullstack), Lang::Pt));
    let read = s.build("b1").await.unwrap();
    assert_eq!(read.job, Some(Ok(job())));
    // The record's JSON (`wright builds list --json`) keeps the strings it always had.
    let json = serde_json::to_value(&read).unwrap();
    assert_eq!((json["template"].as_str(), json["lang"].as_str()), (Some("fullstack"), Some("pt")));
}

/// Rows as an earlier version wrote them: the HTTP body as the job, the template and language
/// as the request spelled them (the server accepted any case and `pt-BR`).
async fn rows_from_before_still_read(s: Arc<dyn Store>, raw: impl Fn(&'static str) -> BoxFuture<'static, ()>) {
    s.enqueue_build(&queued("old")).await.unwrap();
    raw("UPDATE builds SET template = 'Full-Stack', lang = 'pt-BR', \
         request = '{\"prompt\":\"a todo app with an API\",\"template\":\"Full-Stack\",\"lang\":\"pt-BR\",\
         \"model\":\"m2\",\"checks\":[\"npm test\"],\"continue\":\"b0\",\"assistant\":true,\
         \"allow_hosts\":[\"api.example.test\"]}' WHERE id = 'old'")
    .await;
    let old = s.build("old").await.unwrap();
    assert_eq!((old.start.template, old.start.lang), (Some(Template::Fullstack), Lang::Pt));
    assert_eq!(old.job, Some(Ok(job())), "the stored body reads as the job it asked for");

    // A job no version can run is said, for the worker to end the build with.
    raw("UPDATE builds SET request = '{\"kind\":\"mcp\",\"args\":{}}' WHERE id = 'old'").await;
    let odd = s.build("old").await.unwrap();
    let e = odd.queued_job().unwrap_err();
    assert!(e.to_string().contains("cannot be read"), "{e}");

    // A template no version wrote is a clear error naming it.
    raw("UPDATE builds SET template = 'cobol' WHERE id = 'old'").await;
    let e = s.build("old").await.unwrap_err();
    assert!(matches!(&e, StoreError::Corrupt(m) if m.contains("template `cobol`")), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_rows_from_before_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("w.db").display());
    let s = open(&url).await.unwrap();
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    rows_from_before_still_read(s, move |sql| {
        let pool = pool.clone();
        Box::pin(async move {
            sqlx::query(sql).execute(&pool).await.unwrap();
        })
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_rows_from_before_still_read() {
    let pg = support::pg().await;
    let pool = pg.pool().clone();
    rows_from_before_still_read(Arc::new(pg), move |sql| {
        let pool = pool.clone();
        Box::pin(async move {
            sqlx::query(sql).execute(&pool).await.unwrap();
        })
    })
    .await
}

both!(a_queued_job_comes_back_typed);
