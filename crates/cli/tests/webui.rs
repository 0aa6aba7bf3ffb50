//! The web UI in a real browser: Debian's Chromium (headless, driven over DevTools by
//! chromiumoxide) against a real `wright serve` with a scripted model on the OpenAI wire.
//! Screenshots of what a person sees are written to `target/tmp/ui-screenshots/` (kept by CI
//! as artefacts, never committed).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use chromiumoxide::cdp::browser_protocol::emulation::{SetDeviceMetricsOverrideParams, SetUserAgentOverrideParams};
use serde_json::{Value, json};
use std::time::Duration;
use support::browser::{js, launch, shot, until};
use support::server::Server;
use support::{MockLlm, Turn};

const PAGE: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Countdown</title></head>\n\
<body>\n  <h1>Countdown</h1>\n  <p id=\"left\">10</p>\n  <button id=\"start\">Start</button>\n  <script src=\"app.js\"></script>\n</body>\n</html>\n";
/// Throws on load: `#count` does not exist (the page says `#left`).
const CRASHES: &str = "const start = document.getElementById('start');\ndocument.getElementById('count').textContent = '10';\nstart.addEventListener('click', () => {});\n";
const FIXED: &str = "const start = document.getElementById('start');\nconst left = document.getElementById('left');\nstart.addEventListener('click', () => { left.textContent = String(Number(left.textContent) - 1); });\n";
/// Markup in a prompt must come back as text.
const PROMPT: &str = "a countdown <script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\"> timer";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_build_comes_alive_in_the_browser_survives_a_reload_and_shows_markup_as_text() {
    let mock = MockLlm::start_with_fallback(
        vec![
            Turn::calls(&[
                ("createFile", json!({"path": "index.html", "content": PAGE})),
                ("createFile", json!({"path": "app.js", "content": CRASHES})),
                ("runCommand", json!({"command": "sleep", "args": ["2"]})),
            ]),
            Turn::text("A countdown page."),
            Turn::calls(&[("updateFile", json!({"path": "app.js", "content": FIXED}))]),
            Turn::text("Fixed the element id."),
        ],
        Turn::text(
            &json!({"trigger": "element looked up by id", "triggerType": "pattern",
                "lesson": "Look elements up by the id the page defines.", "libraries": [], "tags": ["dom"],
                "errorPatterns": ["Cannot set properties of null"]})
            .to_string(),
        ),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &mock.base_url, &["--workers", "1", "--browser-check", "on"]).await;
    let login = s.login_url.clone().expect("a first start prints a login link");

    let (mut browser, events, _profile) = launch().await;
    let page = browser.new_page(login.as_str()).await.unwrap();

    // Signed in through the one-time link; the form is there with its accessible names.
    until(&page, "!document.getElementById('ask').hidden", "the prompt form").await;
    let textbox = page.find_element("textarea[aria-label='What should wright build?']").await.unwrap();
    textbox.click().await.unwrap();
    textbox.type_str(PROMPT).await.unwrap();
    js(&page, "document.getElementById('template').value = 'static'").await;
    page.find_element("button#build").await.unwrap().click().await.unwrap();

    // Mid-build: the browser check found the crash (red).
    until(&page, "/Problem found/.test(document.getElementById('narration').innerText)", "a problem found").await;
    shot(&page, "build-mid.png").await;
    let id = js(&page, "location.hash.replace('#build=', '')").await.as_str().unwrap().to_string();

    // A reload mid-build rebuilds the page from the stored events and goes on live.
    page.reload().await.unwrap();
    until(&page, "document.getElementById('phase').dataset.phase === 'PUBLISHED'", "PUBLISHED").await;
    until(&page, "!!document.getElementById('preview').src", "the preview").await;
    tokio::time::sleep(Duration::from_millis(800)).await; // the preview's page paints
    shot(&page, "build-published.png").await;

    // Every narrated event once, in order: the page's lines are the stored events' lines.
    let shown: Vec<u64> = serde_json::from_value(
        js(&page, "[...document.querySelectorAll('#narration li')].map(li => Number(li.dataset.seq))").await,
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wright"))
        .args(["builds", "events", &id, "--data-dir"])
        .arg(&s.data)
        .output()
        .unwrap();
    let narrated = [
        "queued",
        "started",
        "status",
        "phase",
        "file_written",
        "file_deleted",
        "command_started",
        "tests_finished",
        "error_detected",
        "error_fixed",
        "learning",
        "browser_check",
        "complete",
        "error",
    ];
    let stored: Vec<u64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| narrated.contains(&e["type"].as_str().unwrap_or("")))
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert!(!stored.is_empty(), "stored events: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(shown, stored, "no line lost or repeated across the reload");

    // Red then green, in words.
    let narration = js(&page, "document.getElementById('narration').innerText").await.as_str().unwrap().to_string();
    assert!(narration.contains("Problem found in app.js:2"), "{narration}");
    assert!(narration.contains("Fixed!") && narration.contains("Learned:"), "{narration}");
    assert_eq!(js(&page, "document.getElementById('phase').textContent").await, "Done");

    // Markup from the prompt is text: shown as written, nothing ran.
    assert_eq!(js(&page, "document.getElementById('view-title').textContent").await, PROMPT);
    assert_eq!(
        js(&page, "document.querySelectorAll('#view-title *, #history-rows img, #history-rows script').length").await,
        0
    );
    assert_eq!(js(&page, "typeof window.pwned").await, "undefined");

    // The code view followed the latest write (the fix), highlighted.
    assert_eq!(js(&page, "document.getElementById('code-h').textContent").await, "Code · app.js");
    let code = js(&page, "document.getElementById('code').innerText").await;
    assert!(code.as_str().unwrap().contains("left.textContent = String("), "{code}");
    assert!(js(&page, "document.querySelectorAll('#code .tok-keyword').length").await.as_u64().unwrap() > 0);

    // Files, code, preview on its own origin, history.
    let files = js(&page, "[...document.querySelectorAll('#files [role=treeitem]')].map(i => i.textContent)").await;
    assert_eq!(files, json!(["app.js", "index.html"]));
    let src = js(&page, "document.getElementById('preview').src").await.as_str().unwrap().to_string();
    let preview_port = s.preview.rsplit(':').next().unwrap().trim_end_matches('/').to_string();
    assert!(src.starts_with(&format!("http://{id}-")) && src.contains(&format!(".localhost:{preview_port}/")), "{src}");
    let history = js(&page, "[...document.querySelectorAll('#history-rows a')].map(a => a.textContent)").await;
    assert_eq!(history, json!([PROMPT]));
    // The published build's address, named after its page's title (docs/apps.md).
    let link = js(
        &page,
        "(l => l.hidden ? null : [l.getAttribute('href'), l.textContent])(document.getElementById('app-link'))",
    )
    .await;
    assert_eq!(link, json!(["/apps/countdown", "Open the app: /apps/countdown"]));

    // The admin dashboard: figures, charts, and the lesson this build taught, which an admin
    // can retire from there.
    js(&page, "location.hash = '#admin'").await;
    // Five charts of builds, then this month's spend per day and the published builds' duration
    // per day (docs/spend.md).
    until(&page, "document.querySelectorAll('#dashboard svg.chart').length === 7", "the dashboard's charts").await;
    let spend = js(&page, "[...document.querySelectorAll('table.spend td')].map(t => t.textContent)").await;
    assert_eq!(
        (spend[0].as_str(), spend[5].as_str()),
        (Some("admin"), Some("none")),
        "the admin's month, no cap: {spend}"
    );
    assert!(spend[2].as_str().unwrap().parse::<u64>().unwrap() > 0, "the build's tokens: {spend}");
    let line = js(&page, "document.getElementById('spend').textContent").await;
    assert_eq!(line, "This month: $0.00", "the header's line (the mock model has no price)");
    let tiles = js(&page, "[...document.querySelectorAll('.tile-value')].map(t => t.textContent)").await;
    assert_eq!(tiles[0], "1", "one finished build: {tiles}");
    assert_eq!((tiles[1].as_str(), tiles[2].as_str()), (Some("100%"), Some("0%")), "published, after a fix: {tiles}");
    let errors = js(&page, "document.querySelectorAll('#dashboard svg.chart')[4].textContent").await;
    assert!(errors.as_str().unwrap().contains("runtime"), "{errors}");
    assert_eq!(
        js(
            &page,
            "document.getElementById('view').hidden && getComputedStyle(document.getElementById('view')).display"
        )
        .await,
        "none"
    );
    let record = js(&page, "document.querySelector('tr.note').children[2].textContent").await;
    assert_eq!(record, "0 / 0", "helped / failed");
    let lesson = js(&page, "document.querySelector('tr.note .lesson').textContent").await;
    assert_eq!(lesson, "Look elements up by the id the page defines.");
    shot(&page, "dashboard.png").await;
    js(&page, "document.querySelector('tr.note .note-actions button').click()").await;
    until(&page, "document.querySelector('tr.note').classList.contains('deprecated')", "the lesson retired").await;
    let note_id = js(&page, "fetch('/api/notes').then(r => r.json()).then(n => n[0].id + ' ' + n[0].status)").await;
    let note_id = note_id.as_str().unwrap().to_string();
    assert!(note_id.to_lowercase().ends_with(" deprecated"), "{note_id}");
    let note_id = note_id.split(' ').next().unwrap().to_string();
    // Only admins edit lessons, and only with sensible values.
    let c = support::server::client();
    let bob = s.add_user("bob", false).await;
    let r = c
        .patch(s.url(&format!("/api/notes/{note_id}")))
        .bearer_auth(&bob)
        .json(&json!({"status": "active"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let root = s.add_user("root", true).await;
    let r = c
        .patch(s.url(&format!("/api/notes/{note_id}")))
        .bearer_auth(&root)
        .json(&json!({"status": "gone"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let r = c.get(s.url("/api/admin/dashboard")).bearer_auth(&bob).send().await.unwrap();
    assert_eq!(r.status(), 403);
    js(&page, "location.hash = ''").await;

    // 375 px wide: nothing wider than the screen.
    page.execute(SetDeviceMetricsOverrideParams::new(375, 800, 1.0, true)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let width = js(&page, "document.documentElement.scrollWidth").await.as_u64().unwrap();
    assert!(width <= 375, "the page is {width} px wide at 375");
    shot(&page, "build-375.png").await;

    browser.close().await.unwrap();
    let _ = browser.wait().await;
    events.abort();
}

/// A TCP relay between the browser and the server whose connections can all be cut at once:
/// a real dropped connection, as a closed laptop lid or a restarted proxy makes one. Like a
/// proxy in front of `wright serve`, it is the address people use (`--public-url`), so it
/// listens before the server it relays to has started.
struct Relay {
    port: u16,
    to: std::sync::Arc<std::sync::OnceLock<String>>,
    conns: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Relay {
    async fn start() -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let conns = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let to = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
        let (held, target) = (conns.clone(), to.clone());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let Some(to) = target.get().cloned() else { continue };
                let task = tokio::spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(&to).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                held.lock().unwrap().push(task.abort_handle());
            }
        });
        Relay { port, to, conns }
    }

    /// Where the relay sends what it takes (the server's `host:port`).
    fn to(&self, server: &str) {
        self.to.set(server.to_string()).unwrap();
    }

    /// Drop every open connection.
    fn cut(&self) {
        for c in self.conns.lock().unwrap().drain(..) {
            c.abort();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_resumes_in_portuguese_and_a_follow_up_keeps_working_on_the_project() {
    let mock = MockLlm::start(vec![
        Turn::calls(&[
            (
                "createFile",
                json!({"path": "index.html", "content": PAGE.replace("  <script src=\"app.js\"></script>\n", "")}),
            ),
            ("runCommand", json!({"command": "sleep", "args": ["4"]})),
        ]),
        Turn::text("Uma página de contagem."),
        Turn::calls(&[("updateFile", json!({"path": "index.html", "content": PAGE.replace("app.js", "rodape.js")}))]),
        Turn::calls(&[("createFile", json!({"path": "rodape.js", "content": "console.log('rodapé');\n"}))]),
        Turn::text("Rodapé adicionado."),
        Turn::text("O index.html é o esqueleto da página. <b>Experimente</b> mudar o título."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let relay = Relay::start().await;
    let public = format!("http://127.0.0.1:{}", relay.port);
    let s = Server::start(
        dir.path(),
        &mock.base_url,
        &["--workers", "1", "--browser-check", "off", "--public-url", public.as_str()],
    )
    .await;
    relay.to(s.api.trim_start_matches("http://").trim_end_matches('/'));
    let login = s.login_url.clone().unwrap();
    assert!(login.starts_with(&public), "the login link names the public address: {login}");

    let (mut browser, events, _profile) = launch().await;
    // A visitor whose browser prefers Portuguese.
    let page = browser.new_page("about:blank").await.unwrap();
    let agent = page.user_agent().await.unwrap();
    let language = SetUserAgentOverrideParams::builder().user_agent(agent).accept_language("pt-BR,pt").build().unwrap();
    page.execute(language).await.unwrap();
    page.goto(login.as_str()).await.unwrap();
    until(&page, "!document.getElementById('ask').hidden", "the prompt form").await;
    assert_eq!(
        js(&page, "document.querySelector('label[for=prompt]').textContent").await,
        "O que o wright deve construir?"
    );
    let textbox = page.find_element("textarea[aria-label='What should wright build?']").await.unwrap();
    textbox.click().await.unwrap();
    textbox.type_str("uma pagina de contagem regressiva").await.unwrap();
    // A draft survives a reload.
    page.reload().await.unwrap();
    until(&page, "!document.getElementById('ask').hidden", "the prompt form again").await;
    assert_eq!(js(&page, "document.getElementById('prompt').value").await, "uma pagina de contagem regressiva");
    js(&page, "document.getElementById('template').value = 'static'").await;
    page.find_element("button#build").await.unwrap().click().await.unwrap();

    // The build is running its 4 s command: cut the connection under the page.
    until(&page, "/Executando sleep 4/.test(document.getElementById('narration').innerText)", "the command").await;
    relay.cut();
    until(&page, "document.getElementById('conn').dataset.state === 'reconnecting'", "reconnecting").await;
    assert_eq!(js(&page, "document.getElementById('conn').textContent").await, "Reconectando…");
    shot(&page, "build-reconnecting.png").await;
    until(&page, "document.getElementById('phase').dataset.phase === 'PUBLISHED'", "PUBLISHED").await;
    assert_eq!(js(&page, "document.getElementById('phase').textContent").await, "Pronto");
    // The ending's line comes with `complete`, just after the phase.
    until(&page, "/Terminado/.test(document.getElementById('narration').innerText)", "the ending").await;
    let first = js(&page, "location.hash.replace('#build=', '')").await.as_str().unwrap().to_string();

    // Every narrated event once, in order, across the drop.
    let shown: Vec<u64> = serde_json::from_value(
        js(&page, "[...document.querySelectorAll('#narration li')].map(li => Number(li.dataset.seq))").await,
    )
    .unwrap();
    let mut sorted = shown.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(shown, sorted, "in order, none twice");
    let narration = js(&page, "document.getElementById('narration').innerText").await.as_str().unwrap().to_string();
    assert!(narration.contains("Criou index.html") && narration.contains("Uma página de contagem."), "{narration}");
    assert!(
        narration.contains("Um trabalhador começou a construção."),
        "wright's own queue line in Portuguese: {narration}"
    );
    assert!(narration.contains("Terminado: funciona."), "{narration}");

    // Keep working on it: a follow-up on the same project.
    until(&page, "!document.getElementById('more').hidden", "the follow-up form").await;
    let more = page.find_element("input[aria-label='What should change?']").await.unwrap();
    more.click().await.unwrap();
    more.type_str("adicione um rodape com o telefone").await.unwrap();
    page.find_element("button#more-go").await.unwrap().click().await.unwrap();
    until(&page, &format!("location.hash !== '#build={first}'"), "the follow-up build").await;
    until(&page, "document.getElementById('phase').dataset.phase === 'PUBLISHED'", "the follow-up PUBLISHED").await;
    until(&page, "document.querySelectorAll('#history-rows a').length === 2", "two builds in the history").await;
    let files = js(&page, "[...document.querySelectorAll('#files [role=treeitem]')].map(i => i.textContent)").await;
    assert_eq!(files, json!(["index.html", "rodape.js"]), "the follow-up worked in the first build's project");
    // Explain the code: the server's model, in the viewer's language, shown as text.
    page.find_element("button#explain").await.unwrap().click().await.unwrap();
    until(&page, "!document.getElementById('explain-box').hidden", "the explanation").await;
    assert_eq!(
        js(&page, "document.getElementById('explanation').textContent").await,
        "O index.html é o esqueleto da página. <b>Experimente</b> mudar o título."
    );
    assert_eq!(js(&page, "document.querySelectorAll('#explanation *').length").await, 0);
    let asked = mock.requests().last().unwrap()["messages"].to_string();
    assert!(asked.contains("Você explica") && asked.contains("rodape.js"), "{asked}");
    shot(&page, "build-follow-up.png").await;

    // Opening a build from the history replays it from its stored events.
    js(&page, &format!("document.querySelector('#history-rows a[href=\"#build={first}\"]').click()")).await;
    until(
        &page,
        "document.getElementById('view-title').textContent === 'uma pagina de contagem regressiva'",
        "the first build",
    )
    .await;
    until(&page, "document.getElementById('phase').dataset.phase === 'PUBLISHED'", "its replay").await;
    let replayed = js(&page, "document.getElementById('narration').innerText").await.as_str().unwrap().to_string();
    assert!(replayed.contains("Criou index.html") && !replayed.contains("Criou rodape.js"), "{replayed}");

    browser.close().await.unwrap();
    let _ = browser.wait().await;
    events.abort();
}

/// A page with a title and a description: a build of it publishes an app named after them.
fn titled_page(title: &str, description: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n  <title>{title}</title>\n  \
         <meta name=\"description\" content=\"{description}\">\n</head>\n<body>\n  <h1>{title}</h1>\n</body>\n</html>\n"
    )
}

/// Ask for a static build through the form and wait for it to be published; its id.
async fn build_through_the_form(page: &chromiumoxide::Page, prompt: &str) -> String {
    js(page, "location.hash = ''").await;
    until(page, "!document.getElementById('ask').hidden", "the prompt form").await;
    let before = js(page, "location.hash").await;
    js(page, &format!("document.getElementById('prompt').value = {}", json!(prompt))).await;
    js(page, "document.getElementById('template').value = 'static'").await;
    page.find_element("button#build").await.unwrap().click().await.unwrap();
    until(page, &format!("location.hash.startsWith('#build=') && location.hash !== {before}"), "the new build").await;
    until(page, "document.getElementById('phase').dataset.phase === 'PUBLISHED'", "PUBLISHED").await;
    until(page, "!document.getElementById('app-link').hidden", "its address").await;
    js(page, "location.hash.replace('#build=', '')").await.as_str().unwrap().to_string()
}

/// Click the element `selector` finds (a real mouse click, as a person makes one).
async fn click(page: &chromiumoxide::Page, selector: &str) {
    page.find_element(selector).await.unwrap_or_else(|e| panic!("{selector}: {e}")).click().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn my_apps_lists_renames_and_unpublishes_the_apps_of_the_signed_in_person() {
    let dice = titled_page("Dice Roller", "Roll two dice and see the sum.");
    let board = titled_page("Board Game Dice", "Roll dice for your board game nights.");
    // Each build writes its page on its first call and says it is done once it saw a result.
    let model = Turn::when(
        "\"role\":\"tool\"",
        Turn::text("Done: the page is ready."),
        Turn::when(
            "board games",
            Turn::calls(&[("createFile", json!({"path": "index.html", "content": board}))]),
            Turn::calls(&[("createFile", json!({"path": "index.html", "content": dice}))]),
        ),
    );
    let mock = MockLlm::start_with_fallback(vec![], model).await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &mock.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    let login = s.login_url.clone().expect("a first start prints a login link");
    let (mut browser, events, _profile) = launch().await;
    let page = browser.new_page(login.as_str()).await.unwrap();
    let c = support::server::client();

    let first = build_through_the_form(&page, "a dice roller").await;
    build_through_the_form(&page, "a dice roller for board games").await;

    // My apps: both, newest first, each with its title (a link to its address), description,
    // address and when it was published; the builds' form and list make way.
    click(&page, "#nav-apps").await;
    until(&page, "document.querySelectorAll('#apps-list .app-item').length === 2", "two apps listed").await;
    assert_eq!(
        js(&page, "[...document.querySelectorAll('#apps-list .app-item')].map(i => i.dataset.slug)").await,
        json!(["board-game-dice", "dice-roller"])
    );
    let item = js(
        &page,
        "(i => [i.querySelector('h3 a').textContent, i.querySelector('h3 a').getAttribute('href'), \
         i.querySelector('.app-description').textContent, i.querySelector('.app-facts').textContent])\
         (document.querySelector('.app-item[data-slug=dice-roller]'))",
    )
    .await;
    assert_eq!(
        json!([item[0], item[1], item[2]]),
        json!(["Dice Roller", "/apps/dice-roller", "Roll two dice and see the sum."])
    );
    assert!(item[3].as_str().unwrap().starts_with("/apps/dice-roller · published "), "{item}");
    assert_eq!(
        js(&page, "['ask', 'history', 'view'].map(id => document.getElementById(id).hidden)").await,
        json!([true, true, true])
    );
    assert_eq!(js(&page, "document.getElementById('nav-apps').getAttribute('aria-current')").await, "page");

    // Its related apps: the other dice app.
    click(&page, "button[aria-label='Apps related to Dice Roller']").await;
    until(&page, "/Board Game Dice/.test(document.getElementById('app-related-dice-roller').innerText)", "related")
        .await;
    assert_eq!(
        js(&page, "document.querySelector('#app-related-dice-roller a').getAttribute('href')").await,
        "/apps/board-game-dice"
    );

    // Rename: the server's refusals come back in plain words, then a new title and address.
    click(&page, "button[aria-label='Rename Dice Roller']").await;
    until(&page, "document.activeElement?.id === 'app-title-dice-roller'", "the rename form, its title focused").await;
    let labels = js(&page, "[...document.querySelectorAll('.app-edit label')].map(l => l.control?.name)").await;
    assert_eq!(labels, json!(["title", "description", "slug"]), "every field has its label");
    let error = "document.querySelector('.app-edit [role=alert]').textContent";
    js(&page, "document.getElementById('app-slug-dice-roller').value = 'board-game-dice'").await;
    click(&page, ".app-edit button[type=submit]").await;
    until(&page, &format!("{error} !== ''"), "the taken address refused").await;
    assert_eq!(
        js(&page, error).await,
        "The address /apps/board-game-dice already belongs to another app. Pick another one."
    );
    shot(&page, "my-apps-rename.png").await;
    js(&page, "document.getElementById('app-slug-dice-roller').value = 'Bad Slug'").await;
    click(&page, ".app-edit button[type=submit]").await;
    until(&page, &format!("/^“Bad Slug” cannot be an address/.test({error})"), "the malformed address refused").await;
    let title = page.find_element("#app-title-dice-roller").await.unwrap();
    js(&page, "(t => { t.focus(); t.select(); })(document.getElementById('app-title-dice-roller'))").await;
    title.type_str("Lucky Dice").await.unwrap();
    js(&page, "document.getElementById('app-slug-dice-roller').value = 'lucky-dice'").await;
    click(&page, ".app-edit button[type=submit]").await;
    until(&page, "!!document.querySelector('.app-item[data-slug=lucky-dice]')", "the renamed app").await;
    assert_eq!(
        js(&page, "document.querySelector('.app-item[data-slug=lucky-dice] h3 a').textContent").await,
        "Lucky Dice"
    );
    // The API says the same, and the old address is free.
    let shown = js(&page, "fetch('/api/apps/lucky-dice').then(r => r.json())").await;
    assert_eq!(
        (shown["title"].as_str(), shown["build_id"].as_str(), shown["published"].as_bool()),
        (Some("Lucky Dice"), Some(first.as_str()), Some(true)),
        "{shown}"
    );
    assert_eq!(c.get(s.url("/apps/dice-roller")).send().await.unwrap().status(), 404);
    assert_eq!(c.get(s.url("/apps/lucky-dice")).send().await.unwrap().status(), 307);
    click(&page, "button[aria-label='Apps related to Lucky Dice']").await;
    until(&page, "/Board Game Dice/.test(document.getElementById('app-related-lucky-dice').innerText)", "related")
        .await;
    shot(&page, "my-apps.png").await;

    // Unpublish asks first; keeping it changes nothing.
    click(&page, "button[aria-label='Unpublish Lucky Dice']").await;
    until(&page, "!!document.querySelector('.app-confirm')", "the confirmation").await;
    let ask = js(&page, "document.querySelector('.app-confirm p').textContent").await;
    assert!(ask.as_str().unwrap().starts_with("Unpublish “Lucky Dice”? Its address /apps/lucky-dice"), "{ask}");
    click(&page, ".app-confirm button:not(.danger)").await;
    until(&page, "!document.querySelector('.app-confirm')", "the confirmation gone").await;
    assert_eq!(c.get(s.url("/apps/lucky-dice")).send().await.unwrap().status(), 307, "still published");
    click(&page, "button[aria-label='Unpublish Lucky Dice']").await;
    until(&page, "!!document.querySelector('.app-confirm')", "the confirmation again").await;
    shot(&page, "my-apps-unpublish.png").await;
    click(&page, ".app-confirm button.danger").await;
    until(&page, "!!document.querySelector('.app-item.unpublished[data-slug=lucky-dice]')", "marked unpublished").await;
    let marked = js(
        &page,
        "(i => [i.querySelector('.badge').textContent, !!i.querySelector('a, button')])\
         (document.querySelector('.app-item[data-slug=lucky-dice]'))",
    )
    .await;
    assert_eq!(marked, json!(["Unpublished", false]), "marked, with no link to follow and nothing left to do");
    let shown = js(&page, "fetch('/api/apps/lucky-dice').then(r => r.json())").await;
    assert_eq!(shown["published"], false, "{shown}");
    assert_eq!(c.get(s.url("/apps/lucky-dice")).send().await.unwrap().status(), 410);

    // A reload shows the list as the server has it; 375 px wide: nothing wider than the screen.
    page.reload().await.unwrap();
    until(&page, "document.querySelectorAll('#apps-list .app-item').length === 2", "the list after a reload").await;
    assert_eq!(js(&page, "document.querySelectorAll('.app-item.unpublished').length").await, 1);
    page.execute(SetDeviceMetricsOverrideParams::new(375, 800, 1.0, true)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let width = js(&page, "document.documentElement.scrollWidth").await.as_u64().unwrap();
    assert!(width <= 375, "My apps is {width} px wide at 375");
    shot(&page, "my-apps-375.png").await;

    browser.close().await.unwrap();
    let _ = browser.wait().await;
    events.abort();
}

/// A Python program built from the page: its pytest results in the tests pane, its commands in
/// the terminal, the narration of its environment, and no preview (a program has no page).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_program_is_built_from_the_page_with_its_tests_and_no_preview() {
    let logic = "def count_words(text):\n    return len(text.split())\n";
    let cli = "import argparse\nfrom wordcount import count_words\n\nif __name__ == '__main__':\n    p = argparse.ArgumentParser(description='Count words.')\n    p.add_argument('file')\n    print(count_words(open(p.parse_args().file).read()))\n";
    let tests = "from wordcount import count_words\n\n\ndef test_counts():\n    assert count_words('a b  c') == 3\n\n\ndef test_empty():\n    assert count_words('') == 0\n";
    let mock = MockLlm::start(vec![
        Turn::calls(&[
            ("createFile", json!({"path": "wordcount.py", "content": logic})),
            ("createFile", json!({"path": "main.py", "content": cli})),
            ("createFile", json!({"path": "tests/test_wordcount.py", "content": tests})),
        ]),
        Turn::text("A word counter for the terminal."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), &mock.base_url, &["--workers", "1"]).await;
    let (mut browser, _events, _profile) = launch().await;
    let page = browser.new_page(s.login_url.clone().unwrap().as_str()).await.unwrap();
    until(&page, "!document.getElementById('ask').hidden", "the prompt form").await;
    js(&page, "document.getElementById('prompt').value = 'a script that counts the words in a file'").await;
    js(&page, "document.getElementById('template').value = 'python'").await;
    page.find_element("button#build").await.unwrap().click().await.unwrap();
    until(&page, "document.getElementById('phase').dataset.phase === 'PUBLISHED'", "PUBLISHED").await;
    until(&page, "/2/.test(document.getElementById('tests').innerText)", "the tests pane").await;
    shot(&page, "program-published.png").await;
    let narration = js(&page, "document.getElementById('narration').innerText").await.as_str().unwrap().to_string();
    assert!(narration.contains("Set up the program's environment"), "{narration}");
    let terminal = js(&page, "document.getElementById('terminal').innerText").await.as_str().unwrap().to_string();
    assert!(terminal.contains("python3 -m pytest") && terminal.contains("main.py --help"), "{terminal}");
    let tests_pane = js(&page, "document.getElementById('tests').innerText").await.as_str().unwrap().to_string();
    assert!(!tests_pane.contains("failed") || tests_pane.contains("0 failed"), "{tests_pane}");
    assert_eq!(js(&page, "!!document.getElementById('preview').src").await, json!(false), "a program has no preview");
    browser.close().await.unwrap();
}
