//! Artifacts any host can serve: a `wright worker` builds into a shared folder it knows at one
//! path, and a `wright serve --no-workers` on the same (real, throwaway) PostgreSQL knows that
//! folder at another path (`--artifacts`), as two machines mounting one share at different
//! places would. The store records each build's folder relative to the artifacts' root, so the
//! API server finds the build's files, its archive and its static preview under its own root.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod support;

use serde_json::Value;
use std::io::Read;
use std::time::Duration;
use support::MockLlm;
use support::server::{PAGE, Server, Worker, client, create_ok, get_json, preview_client, stateless_model, stream};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_api_server_mounting_the_shared_folder_elsewhere_serves_files_archive_and_preview() {
    let pg = wright_pgtemp::PgServer::shared().expect("a throwaway PostgreSQL (Debian's `postgresql` package)");
    let db = pg.database().unwrap();
    let llm = MockLlm::start_with_fallback(vec![], stateless_model(0)).await;
    let (worker_data, api_data, mounts) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The worker's view of the share, and the API server's: the same folder, once moved.
    let on_worker = mounts.path().join("worker-host").join("shared-wright");
    let on_api = mounts.path().join("api-host").join("mnt").join("wright");
    std::fs::create_dir_all(on_api.parent().unwrap()).unwrap();
    let api_flags = ["--no-workers", "--browser-check", "off", "--artifacts", on_api.to_str().unwrap()];
    let api = Server::start_db(api_data.path(), &llm.base_url, &db, &api_flags).await;
    let alice = api.add_user("alice", false).await;
    let worker_flags = ["--workers", "1", "--browser-check", "off", "--artifacts", on_worker.to_str().unwrap()];
    let log = worker_data.path().join("worker.log");
    let mut worker = Worker::start(worker_data.path(), &llm.base_url, &db, &log, &worker_flags).await;

    let c = client();
    let id = create_ok(&c, &api, &alice, "a landing page for a dog walker").await;
    let events = tokio::time::timeout(Duration::from_secs(90), stream(&c, &api, &alice, &id, None))
        .await
        .expect("the build did not end");
    assert_eq!(events.last().unwrap().data["success"], true, "{}", worker.log());
    assert!(on_worker.join("builds").join(&id).join("index.html").is_file());
    // Before the share reaches the API host, it has no files to serve for the build: it looks
    // under its own root, not where the worker wrote.
    assert_eq!(get_json(&c, &api, &alice, &format!("/api/builds/{id}/files")).await, serde_json::json!([]));
    let page = c.get(api.url(&format!("/api/builds/{id}/files/index.html"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(page.status(), 404);

    worker.kill9().await;
    std::fs::rename(&on_worker, &on_api).unwrap();

    let listed = get_json(&c, &api, &alice, &format!("/api/builds/{id}/files")).await;
    assert!(listed.to_string().contains("index.html"), "{listed}");
    let page = c.get(api.url(&format!("/api/builds/{id}/files/index.html"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.text().await.unwrap(), PAGE);

    let res = c.get(api.url(&format!("/api/builds/{id}/archive"))).bearer_auth(&alice).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/zip");
    let zip = res.bytes().await.unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip.to_vec())).unwrap();
    let mut text = String::new();
    archive.by_name("index.html").unwrap().read_to_string(&mut text).unwrap();
    assert_eq!(text, PAGE);

    let view: Value = get_json(&c, &api, &alice, &format!("/api/builds/{id}")).await;
    let preview_url = view["preview_url"].as_str().unwrap().to_string();
    let (pc, _) = preview_client(&api, &preview_url);
    let shown = pc.get(&preview_url).send().await.unwrap();
    assert_eq!(shown.status(), 200);
    assert!(shown.text().await.unwrap().contains("Happy Paws dog walking"));
}
