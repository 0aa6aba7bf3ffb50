//! The chat view in a real browser: Debian's Chromium (headless, over DevTools with
//! chromiumoxide) against a real `wright serve` whose model is scripted on the OpenAI wire. The
//! chat tools' model calls each offer exactly one tool (`drawDiagram`, `makeQuiz`,
//! `addFlashcards`, `showCode`) and run concurrently, so the script answers by what a request
//! offers, not by order; the reply's call offers none. Diagrams are drawn by the Mermaid that
//! wright serves itself (fetched with npm into the data dir, never from a CDN). Screenshots go to
//! `target/tmp/ui-screenshots/`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use chromiumoxide::browser::Browser;
use chromiumoxide::cdp::browser_protocol::emulation::{SetDeviceMetricsOverrideParams, SetUserAgentOverrideParams};
use chromiumoxide::cdp::browser_protocol::input::InsertTextParams;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::browser::{js, launch, shot, until};
use support::server::Server;
use support::{MockLlm, Turn};

const ASK: &str = "make me a diagram and a quiz about photosynthesis";
const MERMAID: &str = "flowchart TD\n  Sun[\"Sunlight\"] --> Leaf[\"Leaf (chlorophyll)\"]\n  Water[\"Water\"] --> Leaf\n  \
    CO2[\"Carbon dioxide\"] --> Leaf\n  Leaf --> Glucose[\"Glucose\"]\n  Leaf --> Oxygen[\"Oxygen\"]";
const REPLY: &str = "Here is a **diagram** of how photosynthesis works and a short *quiz* to check yourself:\n\n\
1. Follow the arrows: light, water and `CO2` go into the leaf.\n2. Then answer the quiz.\n\n\
```python\n# what the leaf makes\nproducts = ['glucose', 'oxygen']\n```";
/// Markup in a message, and in a reply: both must stay text.
const MARKUP: &str = "Is this safe to paste? <img src=x onerror=\"window.pwned=1\"> **stays as typed**";
const MARKUP_REPLY: &str = "You typed <img src=x onerror=\"window.pwned=2\"> and it is only **text** here. \
See [MDN](https://developer.mozilla.org/en-US/docs/Web/HTML) and [this](javascript:window.pwned=3).";

fn quiz() -> Value {
    json!({"title": "Photosynthesis check", "questions": [
        {"question": "Which gas do plants take in for photosynthesis?", "options": ["Oxygen", "Carbon dioxide", "Nitrogen", "Helium"],
         "answer": 1, "explanation": "Plants take in carbon dioxide and give out oxygen."},
        {"question": "Where does photosynthesis mainly happen?", "options": ["Roots", "Stem", "Chloroplasts in leaves", "Flowers"],
         "answer": 2, "explanation": "Chloroplasts in leaf cells hold chlorophyll, which captures light."},
        {"question": "What sugar does photosynthesis make?", "options": ["Glucose", "Sucrose", "Lactose", "Fructose"],
         "answer": 0, "explanation": "It makes glucose, which the plant uses for energy."}
    ]})
}

/// Every policy violation and script error the page meets, from its first script on.
const WATCH: &str = "window.__csp = []; window.__errors = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample} at ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`));
window.addEventListener('error', (e) => window.__errors.push(String(e.message)));
window.addEventListener('unhandledrejection', (e) => window.__errors.push(String(e.reason)));";

/// A fresh page that watches for violations, optionally for a Portuguese-speaking visitor.
async fn new_page(browser: &Browser, accept_language: Option<&str>) -> chromiumoxide::Page {
    let page = browser.new_page("about:blank").await.unwrap();
    if let Some(language) = accept_language {
        let agent = page.user_agent().await.unwrap();
        let o = SetUserAgentOverrideParams::builder().user_agent(agent).accept_language(language).build().unwrap();
        page.execute(o).await.unwrap();
    }
    page.evaluate_on_new_document(WATCH).await.unwrap();
    page
}

/// A data dir whose chat scores tools by their patterns only (no embedding model to fetch).
fn data_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wright.toml"), "[chat]\nembedding = \"off\"\n").unwrap();
    dir
}

/// The pinned Mermaid in `data`: fetched once for this target dir with npm (and verified), then
/// copied in; `ensure_mermaid` on the server's data dir then finds it there.
fn vendor_mermaid(data: &Path) {
    static ONCE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = ONCE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("vendor-cache");
    let from = wright_webui::vendor::ensure_mermaid(&cache)
        .unwrap_or_else(|e| panic!("the chat UI test needs Mermaid, fetched with npm: {e}"));
    let to = wright_webui::vendor::mermaid_dir(data);
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
    assert_eq!(wright_webui::vendor::ensure_mermaid(data).unwrap(), to);
    assert!(wright_webui::vendor::mermaid_present(data));
}

/// Type `text` in the textbox named "Message" and press the button named "Send".
async fn say(page: &chromiumoxide::Page, text: &str) {
    let textbox = page.find_element("textarea[aria-label='Message']").await.unwrap();
    textbox.click().await.unwrap();
    // As a keyboard (or an IME, for letters like ç) types it.
    page.execute(InsertTextParams::new(text)).await.unwrap();
    page.find_element("button[aria-label='Send']").await.unwrap().click().await.unwrap();
}

/// The reply has ended (stored reply shown, Send enabled again).
const REPLIED: &str = "!document.querySelector('.msg.streaming') && !document.getElementById('chat-send').disabled \
    && document.querySelectorAll('.msg.assistant[data-id]').length > 0";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_diagram_and_a_quiz_are_drawn_scored_resumed_after_a_reload_and_markup_stays_text() {
    let mock = MockLlm::start_with_fallback(
        vec![],
        Turn::when(
            "drawDiagram",
            Turn::calls(&[("drawDiagram", json!({"title": "How photosynthesis works", "mermaid": MERMAID}))]),
            Turn::when(
                "makeQuiz",
                Turn::calls(&[("makeQuiz", quiz())]),
                Turn::when("window.pwned", Turn::text(MARKUP_REPLY), Turn::slow(6000, Turn::text(REPLY))),
            ),
        ),
    )
    .await;
    let dir = data_dir();
    let mermaid = {
        let data = dir.path().to_path_buf();
        tokio::task::spawn_blocking(move || vendor_mermaid(&data))
    };
    mermaid.await.unwrap();
    let s = Server::start(dir.path(), &mock.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    let login = s.login_url.clone().expect("a first start prints a login link");

    // wright serves the renderer itself, with its licence.
    let c = support::server::client();
    let licence = c.get(s.url("/ui/vendor/mermaid.LICENSE")).send().await.unwrap();
    assert_eq!(licence.status(), 200);
    assert!(licence.text().await.unwrap().contains("MIT License"));
    let script = c.get(s.url("/ui/vendor/mermaid.min.js")).send().await.unwrap();
    assert_eq!(script.status(), 200);
    assert!(script.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    let tag = script.headers()["etag"].to_str().unwrap().to_string();
    let again = c.get(s.url("/ui/vendor/mermaid.min.js")).header("if-none-match", &tag).send().await.unwrap();
    assert_eq!(again.status(), 304, "a browser that has it keeps it");
    assert_eq!(c.get(s.url("/ui/vendor/VERSION")).send().await.unwrap().status(), 404);

    let (mut browser, events, _profile) = launch().await;
    let page = new_page(&browser, None).await;
    page.goto(login.as_str()).await.unwrap();
    until(&page, "!document.getElementById('ask').hidden", "the signed-in page").await;
    // Nothing is fetched for diagrams until one appears.
    assert_eq!(js(&page, "typeof window.mermaid").await, "undefined");
    page.find_element("#nav-chat").await.unwrap().click().await.unwrap();
    until(&page, "!document.getElementById('chat').hidden && document.getElementById('ask').hidden", "the chat view")
        .await;
    assert_eq!(js(&page, "document.getElementById('nav-chat').getAttribute('aria-current')").await, "page");
    assert_eq!(
        js(&page, "document.querySelector('#chat [role=log]').getAttribute('aria-label')").await,
        "Conversation"
    );
    shot(&page, "chat-empty.png").await;

    say(&page, ASK).await;
    // While the reply streams, Send waits.
    until(&page, "document.getElementById('chat-send').disabled", "Send disabled while streaming").await;
    until(
        &page,
        "[...document.querySelectorAll('.diagram img')].some((i) => i.complete && i.naturalWidth > 0)",
        "the diagram drawn",
    )
    .await;
    until(&page, "document.querySelectorAll('.quiz fieldset').length === 3", "the quiz").await;
    let streaming = js(&page, "!!document.querySelector('.msg.streaming')").await;
    assert_eq!(streaming, true, "the diagram and the quiz show before the reply is written");
    assert_eq!(js(&page, "document.getElementById('chat-send').disabled").await, true);
    let id = js(&page, "location.hash.replace('#chat=', '')").await.as_str().unwrap().to_string();
    assert!(id.starts_with("c-"), "{id}");
    let saved = js(&page, "JSON.parse(sessionStorage.getItem('wright.chat.turn'))").await;
    assert_eq!(saved["conversation"], id.as_str(), "the turn in flight is remembered: {saved}");
    shot(&page, "chat-streaming.png").await;

    // Reload mid-reply: the stream is picked up again and the answer shows, once.
    page.reload().await.unwrap();
    until(&page, "!document.getElementById('chat').hidden", "the chat view after the reload").await;
    until(&page, "!!document.querySelector('.msg.streaming')", "the reply followed again").await;
    shot(&page, "chat-resumed.png").await;
    until(&page, REPLIED, "the reply after the reload").await;
    assert_eq!(js(&page, "document.querySelectorAll('.msg.user').length").await, 1);
    assert_eq!(js(&page, "document.querySelectorAll('.msg.assistant').length").await, 1);
    assert_eq!(js(&page, "sessionStorage.getItem('wright.chat.turn')").await, Value::Null);
    assert_eq!(js(&page, "document.querySelector('.msg.user .bubble').textContent").await, ASK);
    let reply = js(&page, "document.querySelector('.msg.assistant .md').textContent").await;
    assert!(reply.as_str().unwrap().starts_with("Here is a diagram of how photosynthesis works"), "{reply}");
    assert_eq!(js(&page, "document.querySelector('.msg.assistant .md strong').textContent").await, "diagram");
    assert_eq!(js(&page, "document.querySelectorAll('.msg.assistant .md ol li').length").await, 2);
    assert_eq!(js(&page, "document.querySelector('.msg.assistant .md li code').textContent").await, "CO2");
    assert!(js(&page, "document.querySelectorAll('.md pre .tok-string').length").await.as_u64().unwrap() >= 2);

    // The diagram is a picture of real size with something drawn on it, made without breaking
    // the page's policy.
    until(
        &page,
        "[...document.querySelectorAll('.diagram img')].some((i) => i.complete && i.naturalWidth > 0)",
        "the diagram drawn again",
    )
    .await;
    let size = js(
        &page,
        "(() => { const i = document.querySelector('.diagram img'); const r = i.getBoundingClientRect(); \
         return [i.naturalWidth, i.naturalHeight, Math.round(r.width), Math.round(r.height), i.src.slice(0, 27)]; })()",
    )
    .await;
    assert!(size[0].as_u64().unwrap() >= 150 && size[1].as_u64().unwrap() >= 150, "{size}");
    assert!(size[2].as_u64().unwrap() >= 150 && size[3].as_u64().unwrap() >= 150, "{size}");
    assert_eq!(size[4], "data:image/svg+xml;charset=", "{size}");
    let inked = js(
        &page,
        "(() => { const i = document.querySelector('.diagram img'); const c = document.createElement('canvas'); \
         c.width = i.naturalWidth; c.height = i.naturalHeight; const g = c.getContext('2d'); g.drawImage(i, 0, 0); \
         const d = g.getImageData(0, 0, c.width, c.height).data; let n = 0; let colour = 0; \
         for (let k = 0; k < d.length; k += 4) { if (d[k + 3] > 0 && (d[k] < 235 || d[k + 1] < 235 || d[k + 2] < 235)) n += 1; \
         if (Math.abs(d[k] - d[k + 2]) > 12 || Math.abs(d[k + 1] - d[k + 2]) > 12) colour += 1; } \
         return [n / (c.width * c.height), colour]; })()",
    )
    .await;
    assert!(inked[0].as_f64().unwrap() > 0.01, "the picture has lines and boxes on it: {inked}");
    assert_eq!(js(&page, "document.querySelectorAll('#chat-log svg, #chat-log style').length").await, 0);
    assert_eq!(js(&page, "typeof window.mermaid").await, "object", "loaded once a diagram appeared");
    shot(&page, "chat-answered.png").await;

    // The quiz is answered in the page and scored by the server (which alone knows the answers).
    assert_eq!(js(&page, "document.querySelector('.quiz .check').disabled").await, false);
    for (question, option) in [(0, 1), (1, 0), (2, 0)] {
        js(
            &page,
            &format!(
                "document.querySelectorAll('.quiz fieldset')[{question}].querySelectorAll('input')[{option}].click()"
            ),
        )
        .await;
    }
    page.find_element(".quiz button.check").await.unwrap().click().await.unwrap();
    until(&page, "document.querySelector('.quiz .score').textContent === 'Score: 2 of 3'", "the score").await;
    let results = js(&page, "[...document.querySelectorAll('.quiz .result')].map((r) => r.textContent)").await;
    assert_eq!(
        results,
        json!([
            "✓ Correct. Plants take in carbon dioxide and give out oxygen.",
            "✗ The answer is: Chloroplasts in leaves. Chloroplasts in leaf cells hold chlorophyll, which captures light.",
            "✓ Correct. It makes glucose, which the plant uses for energy."
        ])
    );
    assert_eq!(js(&page, "document.querySelector('.quiz .option.answer').textContent").await, "Carbon dioxide ✓");
    assert_eq!(js(&page, "document.querySelectorAll('.quiz .option.chosen-wrong').length").await, 1);
    page.find_element(".quiz button.check").await.unwrap().scroll_into_view().await.unwrap();
    shot(&page, "chat-quiz-scored.png").await;

    // 👍 on the reply is stored; pressed again, it is taken back.
    js(&page, "document.querySelector('.msg.assistant .fb.up').click()").await;
    until(&page, "document.querySelector('.msg.assistant .fb.up').getAttribute('aria-pressed') === 'true'", "👍").await;
    let stored = js(
        &page,
        &format!(
            "fetch('/api/chat/{id}/messages').then((r) => r.json()).then((m) => m.find((x) => x.role === 'assistant').feedback)"
        ),
    )
    .await;
    assert_eq!(stored, 1);
    js(&page, "document.querySelector('.msg.assistant .fb.up').click()").await;
    until(&page, "document.querySelector('.msg.assistant .fb.up').getAttribute('aria-pressed') === 'false'", "👍 back")
        .await;

    // A new conversation: markup in a message and in a reply stays text, and nothing runs.
    page.find_element("#chat-new").await.unwrap().click().await.unwrap();
    until(&page, "document.querySelectorAll('#chat-log .msg').length === 0", "an empty conversation").await;
    say(&page, MARKUP).await;
    until(&page, REPLIED, "the reply to the markup").await;
    assert_eq!(js(&page, "document.querySelector('.msg.user .bubble').textContent").await, MARKUP);
    assert_eq!(js(&page, "document.querySelectorAll('.msg.user .bubble *').length").await, 0);
    let md = js(&page, "document.querySelector('.msg.assistant .md').textContent").await;
    assert!(
        md.as_str().unwrap().contains("You typed <img src=x onerror=\"window.pwned=2\"> and it is only text here."),
        "{md}"
    );
    assert_eq!(
        js(&page, "document.querySelectorAll('#chat-log img, #chat-log script, #chat-log iframe').length").await,
        0
    );
    assert_eq!(js(&page, "document.querySelector('.msg.assistant .md strong').textContent").await, "text");
    let links = js(
        &page,
        "[...document.querySelectorAll('.msg.assistant .md a')].map((a) => [a.textContent, a.href, a.rel, a.target])",
    )
    .await;
    assert_eq!(
        links,
        json!([["MDN", "https://developer.mozilla.org/en-US/docs/Web/HTML", "noopener noreferrer", "_blank"]]),
        "only the http(s) link is a link"
    );
    assert_eq!(js(&page, "typeof window.pwned").await, "undefined");
    shot(&page, "chat-markup.png").await;

    // Both conversations are listed; the first one comes back from its history.
    until(&page, "document.querySelectorAll('#chat-list a').length === 2", "two conversations").await;
    js(&page, &format!("document.querySelector('#chat-list a[href=\"#chat={id}\"]').click()")).await;
    until(&page, "document.querySelectorAll('.quiz fieldset').length === 3", "the first conversation again").await;
    until(&page, "!!document.querySelector('.diagram img')", "its diagram").await;
    assert_eq!(js(&page, "document.querySelectorAll('.quiz .result:not(:empty)').length").await, 0, "answers unseen");
    assert_eq!(
        js(&page, "document.querySelector('#chat-list a[aria-current=page]').getAttribute('href')").await,
        format!("#chat={id}")
    );

    // Clear empties it, on the server too.
    page.find_element("#chat-clear").await.unwrap().click().await.unwrap();
    until(&page, "document.querySelectorAll('#chat-log .msg').length === 0", "the cleared conversation").await;
    let left =
        js(&page, &format!("fetch('/api/chat/{id}/messages').then((r) => r.json()).then((m) => m.length)")).await;
    assert_eq!(left, 0);

    // 375 px wide: nothing wider than the screen.
    let other =
        format!("[...document.querySelectorAll('#chat-list a')].find((a) => a.getAttribute('href') !== '#chat={id}')");
    js(&page, &format!("{other}.click()")).await;
    until(&page, "document.querySelectorAll('#chat-log .msg').length === 2", "the markup conversation").await;
    page.execute(SetDeviceMetricsOverrideParams::new(375, 800, 1.0, true)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let width = js(&page, "document.documentElement.scrollWidth").await.as_u64().unwrap();
    assert!(width <= 375, "the page is {width} px wide at 375");
    shot(&page, "chat-375.png").await;

    // Other kinds of diagram draw as pictures the same way, within the policy.
    let kinds = js(
        &page,
        r#"(async () => {
            const { draw } = await import('/ui/diagram.js');
            const sources = [
                'sequenceDiagram\n  Leaf->>Sun: needs light\n  Sun-->>Leaf: photons',
                'mindmap\n  root((Photosynthesis))\n    Light\n    Water\n    CO2',
                'classDiagram\n  class Leaf {\n    +chlorophyll\n    +make(glucose)\n  }',
                'pie title Air\n  "Nitrogen" : 78\n  "Oxygen" : 21',
                'stateDiagram-v2\n  [*] --> Light\n  Light --> Dark\n  Dark --> [*]',
                'timeline\n  title Day\n  Morning : light\n  Night : dark',
            ];
            const out = [];
            for (const src of sources) {
                try {
                    const p = await draw(src);
                    const img = new Image();
                    await new Promise((ok, no) => { img.onload = ok; img.onerror = () => no(new Error('not an image')); img.src = p.src; });
                    out.push(img.naturalWidth > 50 && img.naturalHeight > 20 ? 'ok' : `small ${img.naturalWidth}x${img.naturalHeight}`);
                } catch (e) { out.push(`failed: ${e.message}`); }
            }
            return out;
        })()"#,
    )
    .await;
    assert_eq!(kinds, json!(["ok", "ok", "ok", "ok", "ok", "ok"]));

    assert_eq!(js(&page, "window.__csp").await, json!([]), "no policy violations");
    assert_eq!(js(&page, "window.__errors").await, json!([]), "no script errors");
    browser.close().await.unwrap();
    let _ = browser.wait().await;
    events.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_portuguese_flashcards_are_reviewed_code_is_highlighted_and_a_missing_renderer_shows_the_source() {
    let cards = json!({"cards": [
        {"front": "O que a clorofila faz?", "back": "Absorve a luz usada na fotossíntese."},
        {"front": "Que gás as plantas liberam?", "back": "Oxigênio."}
    ]});
    let code = json!({"language": "python", "code": "# o que a folha produz\nprodutos = ['glicose', 'oxigênio']\nfor p in produtos:\n    print(p)\n"});
    let mock = MockLlm::start_with_fallback(
        vec![],
        Turn::when(
            "drawDiagram",
            Turn::calls(&[(
                "drawDiagram",
                json!({"title": "Fotossíntese", "mermaid": "flowchart LR\n  Luz --> Folha\n  Folha --> Glicose"}),
            )]),
            Turn::when(
                "makeQuiz",
                // Never a valid quiz: the tool fails, beside the ones that work.
                Turn::calls(&[("makeQuiz", json!({"title": "Fotossíntese", "questions": []}))]),
                Turn::when(
                    "addFlashcards",
                    Turn::calls(&[("addFlashcards", cards)]),
                    Turn::when(
                        "showCode",
                        Turn::calls(&[("showCode", code)]),
                        Turn::text("Preparei um **diagrama**, flashcards e um exemplo em Python."),
                    ),
                ),
            ),
        ),
    )
    .await;
    let dir = data_dir();
    let s = Server::start(dir.path(), &mock.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    // Whatever the start fetched, this server has no renderer now: it says so.
    let _ = std::fs::remove_dir_all(dir.path().join("vendor"));
    let res = support::server::client().get(s.url("/ui/vendor/mermaid.min.js")).send().await.unwrap();
    assert_eq!(res.status(), 404);
    let body: Value = res.json().await.unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("has not been fetched"), "{body}");

    let (mut browser, events, _profile) = launch().await;
    let page = new_page(&browser, Some("pt-BR,pt")).await;
    page.goto(s.login_url.clone().unwrap().as_str()).await.unwrap();
    until(&page, "!document.getElementById('ask').hidden", "the signed-in page").await;
    js(&page, "location.hash = 'chat'").await;
    until(&page, "!document.getElementById('chat').hidden", "the chat view").await;
    let words = js(
        &page,
        "['nav-chat', 'chat-h', 'chat-new', 'chat-clear', 'chat-send', 'chat-hint'].map((id) => document.getElementById(id).textContent)",
    )
    .await;
    assert_eq!(
        words,
        json!([
            "Conversa",
            "Conversas",
            "Nova conversa",
            "Limpar",
            "Enviar",
            "Enter envia; Shift+Enter começa uma nova linha."
        ])
    );
    let placeholder = js(&page, "document.getElementById('chat-input').placeholder").await;
    assert!(placeholder.as_str().unwrap().starts_with("Pergunte sobre o que está aprendendo"), "{placeholder}");
    assert_eq!(js(&page, "document.documentElement.lang").await, "pt-BR");

    say(&page, "faça um diagrama e um quiz da fotossíntese, crie flashcards e escreva um código em python sobre isso")
        .await;
    until(&page, REPLIED, "the reply").await;
    assert_eq!(js(&page, "document.querySelector('.msg.assistant .who').textContent").await, "wright");
    assert_eq!(js(&page, "document.querySelector('.msg.user .who').textContent").await, "Você");

    // No renderer: the diagram's source, with a note.
    until(&page, "document.querySelector('.diagram')?.dataset.drawn === 'false'", "the diagram's source").await;
    let note = js(&page, "document.querySelector('.diagram .note').textContent").await;
    assert_eq!(
        note,
        "Não foi possível desenhar o diagrama aqui (o programa que desenha diagramas não está instalado neste servidor). \
         O código Mermaid dele:"
    );
    assert_eq!(
        js(&page, "document.querySelector('.diagram pre').textContent").await,
        "flowchart LR\n  Luz --> Folha\n  Folha --> Glicose"
    );

    // The quiz that failed is a warning beside the parts that worked.
    let warning = js(&page, "document.querySelector('.msg.assistant .part.warn').textContent").await;
    assert!(warning.as_str().unwrap().starts_with("⚠ o quiz não funcionou:"), "{warning}");

    // Code: highlighted, with its language.
    assert_eq!(js(&page, "document.querySelector('.code-part .lang').textContent").await, "python");
    assert!(js(&page, "document.querySelectorAll('.code-part .tok-keyword').length").await.as_u64().unwrap() >= 2);

    // A flashcard flips, is reviewed, and says when it comes back.
    assert_eq!(js(&page, "document.querySelectorAll('.flashcard').length").await, 2);
    assert_eq!(
        js(&page, "document.querySelector('.flashcard .face-text').textContent").await,
        "O que a clorofila faz?"
    );
    page.find_element(".flashcard button.flip").await.unwrap().click().await.unwrap();
    assert_eq!(
        js(&page, "document.querySelector('.flashcard .face-text').textContent").await,
        "Absorve a luz usada na fotossíntese."
    );
    assert_eq!(js(&page, "document.querySelector('.flashcard button.flip').textContent").await, "Mostrar pergunta");
    let ratings = js(
        &page,
        "[...document.querySelectorAll('.flashcard')[0].querySelectorAll('.rating')].map((b) => b.textContent)",
    )
    .await;
    assert_eq!(ratings, json!(["De novo", "Difícil", "Bom", "Fácil"]));
    page.find_element(".flashcard .rating.good").await.unwrap().click().await.unwrap();
    until(&page, "/^Próxima revisão: /.test(document.querySelector('.flashcard .next').textContent)", "the next date")
        .await;
    let deck = js(&page, "fetch('/api/flashcards').then((r) => r.json())").await;
    let reviewed: Vec<&Value> = deck.as_array().unwrap().iter().filter(|c| c["reps"] == 1).collect();
    assert_eq!(reviewed.len(), 1, "{deck}");
    assert_eq!(reviewed[0]["front"], "O que a clorofila faz?");
    shot(&page, "chat-pt.png").await;

    // The deck: the card reviewed is not due any more; the other one is.
    page.find_element("#deck-review").await.unwrap().click().await.unwrap();
    until(
        &page,
        "!document.getElementById('deck').hidden && document.querySelectorAll('#deck .flashcard').length === 1",
        "the due cards",
    )
    .await;
    assert_eq!(
        js(&page, "document.querySelector('#deck .face-text').textContent").await,
        "Que gás as plantas liberam?"
    );
    assert_eq!(js(&page, "document.getElementById('deck-title').textContent").await, "Cartões para revisar");

    assert_eq!(js(&page, "window.__csp").await, json!([]), "no policy violations");
    browser.close().await.unwrap();
    let _ = browser.wait().await;
    events.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_card_comes_into_the_conversation_after_done_without_a_reload() {
    // The card takes the model 3 s; the reply comes at once.
    let card = Turn::calls(&[(
        "addFlashcard",
        json!({"cards": [{"front": "Osmosis", "back": "Water crossing a membrane."}]}),
    )]);
    let mock = MockLlm::start_with_fallback(
        vec![],
        Turn::when("addFlashcard", Turn::slow(3000, card), Turn::text("Osmosis is water crossing a membrane.")),
    )
    .await;
    let dir = data_dir();
    let s = Server::start(dir.path(), &mock.base_url, &["--workers", "1", "--browser-check", "off"]).await;
    let login = s.login_url.clone().expect("a first start prints a login link");
    let (mut browser, events, _profile) = launch().await;
    let page = new_page(&browser, None).await;
    page.goto(login.as_str()).await.unwrap();
    until(&page, "!document.getElementById('ask').hidden", "the signed-in page").await;
    page.find_element("#nav-chat").await.unwrap().click().await.unwrap();
    until(&page, "!document.getElementById('chat').hidden", "the chat view").await;
    js(&page, "window.__same_page = true").await;

    say(&page, "what is osmosis? I need to remember it").await;
    until(&page, REPLIED, "the reply, with `done`").await;
    let note =
        "[...document.querySelectorAll('.msg.assistant .part.note')].some((p) => p.textContent.includes('Osmosis'))";
    assert_eq!(js(&page, note).await, json!(false), "at `done` the card is still being written");
    until(&page, note, "the card's note, fetched after `done`").await;
    // Shown in its own message after the reply, on the same page (no reload).
    assert_eq!(js(&page, "document.querySelectorAll('.msg.assistant[data-id]').length").await, json!(2));
    assert_eq!(
        js(&page, "document.querySelector('.msg.assistant[data-id]:last-child .part.note') !== null").await,
        json!(true)
    );
    assert_eq!(js(&page, "window.__same_page === true").await, json!(true));
    assert_eq!(js(&page, "window.__errors").await, json!([]), "no script errors");
    browser.close().await.unwrap();
    let _ = browser.wait().await;
    events.abort();
}
