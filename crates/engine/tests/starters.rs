//! Every built-in starter, rendered with its defaults, passes what a build of its template
//! must pass, checked the way `wright starters add` checks a user's own: in this machine's
//! sandbox, with wright's own verification (the project's tests, the template's checks) and
//! the browser check in a real headless Chromium (`on`: a check that cannot run fails here).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use wright_engine::config::FileConfig;
use wright_engine::{Engine, Overrides};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_built_in_starter_passes_verification_with_its_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let o = Overrides {
        data_dir: Some(dir.path().to_path_buf()),
        browser_check: Some("on".into()),
        ..Overrides::default()
    };
    let engine = Engine::new(FileConfig::default(), o).await.unwrap();
    let library = engine.starters().unwrap();
    assert!(library.list().len() >= 27, "the library has {} starters", library.list().len());
    // Two at a time: a check waits on node and Chromium for much of its time, and the library
    // grows (27 starters in two languages each).
    use futures::StreamExt;
    let results: Vec<Result<String, String>> =
        futures::stream::iter(library.list())
            .map(|starter| {
                let engine = &engine;
                async move {
                    engine.check_starter(starter).await.map(|()| starter.id().to_string()).map_err(|e| e.to_string())
                }
            })
            .buffer_unordered(2)
            .collect()
            .await;
    let failed: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    for id in results.iter().filter_map(|r| r.as_ref().ok()) {
        println!("{id}: passes");
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
