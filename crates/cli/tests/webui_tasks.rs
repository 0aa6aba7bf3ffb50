//! A task run's page in the web UI: a task file pasted into the form runs (`POST /api/tasks`),
//! its tasks are listed with their state as its events arrive, and a plan with a mistake is
//! refused with the field named. Debian's Chromium, headless, against a real `wright serve`
//! with a scripted model.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::json;
use support::browser::{js, launch, shot, until};
use support::server::Server;
use support::{MockLlm, Turn};

const PLAN: &str = r#"{"goal": "a math module", "tasks": [
  {"id": "notes", "type": "validation", "description": "the project has notes",
   "depends_on": ["make-add"], "validation_criteria": ["test -f NOTES.md"]},
  {"id": "make-add", "type": "code_generation", "description": "write math.js with an add function",
   "output_artifacts": ["math.js"], "validation_criteria": ["node --check math.js"]}
]}"#;

/// The task list as the page shows it: `id=status` per row.
const ROWS: &str =
    "[...document.querySelectorAll('#task-list li')].map(li => `${li.dataset.task}=${li.dataset.status}`)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_file_pasted_in_the_page_runs_and_its_tasks_show_their_state() {
    let mock = MockLlm::start(vec![
        Turn::calls(&[("createFile", json!({"path": "math.js", "content": "exports.add = (a, b) => a + b;\n"}))]),
        Turn::text("math.js has add."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &mock.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    let login = s.login_url.clone().expect("a first start prints a login link");
    let (mut browser, events, _profile) = launch().await;
    let page = browser.new_page(login.as_str()).await.unwrap();

    until(&page, "!document.getElementById('ask-tasks').hidden", "the task form").await;
    // The suggestions under the prompt arrive on their own and push the task form down: wait
    // for them, so a click lands where the button is.
    until(&page, "!document.getElementById('try').hidden", "the suggestions").await;
    page.find_element("#tasks-open summary").await.unwrap().click().await.unwrap();
    until(&page, "document.getElementById('tasks-open').open", "the task form open").await;
    // A mistake is refused before anything runs, with the field at fault.
    let bad = PLAN.replace("\"make-add\"]", "\"nope\"]");
    js(&page, &format!("document.getElementById('task-plan').value = {}", json!(bad))).await;
    page.find_element("button#task-go").await.unwrap().click().await.unwrap();
    until(&page, "/depends_on/.test(document.getElementById('task-error').textContent)", "the field named").await;
    assert_eq!(js(&page, "location.hash").await, json!(""), "nothing was opened");
    js(&page, "document.getElementById('task-plan').value = '{not json'").await;
    page.find_element("button#task-go").await.unwrap().click().await.unwrap();
    until(&page, "/not valid JSON/.test(document.getElementById('task-error').textContent)", "the JSON error").await;

    let textbox = page.find_element("textarea[aria-label='Task file']").await.unwrap();
    js(&page, "document.getElementById('task-plan').value = ''").await;
    textbox.click().await.unwrap();
    textbox.type_str(PLAN.replace('\n', " ")).await.unwrap(); // typed as a person types it
    page.find_element("button#task-go").await.unwrap().click().await.unwrap();
    until(&page, "location.hash.startsWith('#build=')", "the task run's page").await;
    until(&page, "/Not every task passed/.test(document.getElementById('narration').innerText)", "its end").await;
    until(&page, &format!("JSON.stringify({ROWS}) === '[\"make-add=passed\",\"notes=failed\"]'"), "the tasks' states")
        .await;
    let narration = js(&page, "document.getElementById('narration').innerText").await.as_str().unwrap().to_string();
    assert!(narration.contains("Task 1 of 2: make-add (code_generation)"), "{narration}");
    assert!(narration.contains("notes: failed."), "{narration}");
    assert!(
        js(&page, "document.getElementById('terminal').innerText").await.as_str().unwrap().contains("test -f NOTES.md")
    );
    assert_eq!(js(&page, "document.getElementById('more').hidden").await, json!(true), "no prompt to keep working");
    assert_eq!(js(&page, "document.getElementById('cancel').hidden").await, json!(true));
    let id = js(&page, "location.hash.replace('#build=', '')").await.as_str().unwrap().to_string();
    // The next task file is offered this run's project.
    assert_eq!(js(&page, "document.getElementById('task-project').value").await, json!(id));
    shot(&page, "task-run.png").await;

    // A reload rebuilds the page from the server: the same tasks, the same states.
    page.reload().await.unwrap();
    until(&page, &format!("JSON.stringify({ROWS}) === '[\"make-add=passed\",\"notes=failed\"]'"), "the states again")
        .await;
    // The history lists it as a task run.
    until(&page, "[...document.querySelectorAll('#history-rows td')].some(td => td.textContent === 'task')", "history")
        .await;

    browser.close().await.unwrap();
    events.await.unwrap();
}
