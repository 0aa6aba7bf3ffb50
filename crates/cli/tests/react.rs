//! The react template end to end: the real `wright` binary, a scripted model on the real OpenAI
//! wire, TypeScript, esbuild, Tailwind and Vitest from wright's package cache run in wright's
//! real sandbox with the network denied, and Debian's Chromium opening the bundled page.
//!
//! The packages are installed once by the host's npm into a cache shared by the tests of this
//! run (`package_cache` in wright.toml), as a user's data folder would keep them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::json;
use support::server::{Server, client, create, get_json, preview_client, stream};
use support::{MockLlm, Turn, assert_contract, wright_in};

const FIXED: &str = include_str!("fixtures/react_todo/App.fixed.tsx");
const TESTS: &str = include_str!("fixtures/react_todo/App.test.tsx");
const PAGE: &str = "<!doctype html>\n<html lang=\"en\">\n  <head>\n    <meta charset=\"utf-8\">\n    <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n    <title>To-do list</title>\n    <meta name=\"description\" content=\"Write down what to do and tick it off.\">\n    <link rel=\"stylesheet\" href=\"app.css\">\n  </head>\n  <body class=\"bg-slate-100\">\n    <div id=\"root\"></div>\n    <script type=\"module\" src=\"/src/main.tsx\"></script>\n  </body>\n</html>\n";

/// The to-do app with a type error on line 12: the count of what is left made a string.
fn broken() -> String {
    let line = "const left: number = todos.filter((t) => !t.done).length;";
    assert!(FIXED.contains(line));
    FIXED.replace(line, "const left: number = `${todos.filter((t) => !t.done).length}`;")
}

/// A folder with a wright.toml that points at the shared package cache.
fn project_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("package-cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(dir.path().join("wright.toml"), format!("package_cache = {:?}\n", cache.display().to_string()))
        .unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_react_todo_app_with_a_type_error_is_transpiled_fixed_tested_and_published() {
    let mock = MockLlm::start_with_fallback(
        vec![
            Turn::calls(&[
                ("createFile", json!({"path": "src/App.tsx", "content": broken()})),
                ("createFile", json!({"path": "src/App.test.tsx", "content": TESTS})),
                ("updateFile", json!({"path": "index.html", "content": PAGE})),
            ]),
            Turn::text("A to-do list in React."),
            Turn::calls(&[("updateFile", json!({"path": "src/App.tsx", "content": FIXED}))]),
            Turn::text("The count of what is left is a number now."),
        ],
        Turn::text(
            &json!({
                "trigger": "a number typed variable given a template string",
                "triggerType": "pattern",
                "lesson": "Keep counts as numbers; format them only where they are shown.",
                "libraries": ["react"],
                "tags": ["typescript", "TS2322"],
                "errorPatterns": ["Type 'string' is not assignable to type 'number'"]
            })
            .to_string(),
        ),
    )
    .await;
    let run = wright_in(
        project_dir(),
        "openai",
        &mock.base_url,
        "a React to-do app with TypeScript and Tailwind",
        &["--browser-check", "on"],
        &[],
    )
    .await;
    assert_eq!(run.code, 0, "stderr: {}\nstdout: {}", run.stderr, run.stdout);
    assert_contract(&run);

    // auto picked react; the phases went through TRANSPILING before each verification.
    let phases = run.phases();
    assert_eq!(
        phases,
        [
            "PLANNING:0",
            "GENERATING:0",
            "TRANSPILING:0",
            "FIXING:1",
            "TRANSPILING:1",
            "VERIFYING:1",
            "LEARNING:1",
            "PUBLISHED:1"
        ],
        "{phases:?}"
    );

    // The type error, with its place, and nothing else.
    let detected = run.of_type("error_detected");
    assert_eq!(detected.len(), 1, "{detected:#?}");
    let e = detected[0];
    assert_eq!(
        (e["kind"].as_str(), e["file"].as_str(), e["line"].as_u64(), e["column"].as_u64()),
        (Some("type"), Some("src/App.tsx"), Some(12), Some(9)),
        "{e}"
    );
    assert!(e["error"].as_str().unwrap().contains("TS2322"), "{e}");
    // The fix request showed the model the line.
    let fix_request = mock.requests()[2].to_string();
    assert!(fix_request.contains("src/App.tsx:12:9") && fix_request.contains("const left: number"), "{fix_request}");
    assert_eq!(run.of_type("error_fixed").len(), 1);

    // Vitest's results, test by test.
    let tests = run.of_type("tests_finished");
    assert_eq!(tests.len(), 1, "{tests:#?}");
    assert_eq!((tests[0]["passed"].as_u64(), tests[0]["total"].as_u64()), (Some(3), Some(3)), "{}", tests[0]);

    // The bundled page is what the browser opened, and it is on disk beside the source.
    let checks = run.of_type("browser_check");
    assert_eq!(checks.len(), 1, "{checks:#?}");
    assert_eq!(checks[0]["outcome"], "checked", "{}", checks[0]);
    assert_eq!(checks[0]["exceptions"].as_u64(), Some(0), "{}", checks[0]);
    let ws = run.workspace();
    let page = std::fs::read_to_string(ws.join("dist/index.html")).unwrap();
    assert!(page.contains("src=\"app.js\"") && !page.contains("main.tsx"), "{page}");
    let css = std::fs::read_to_string(ws.join("dist/app.css")).unwrap();
    assert!(css.contains("bg-blue-600"), "Tailwind compiled the classes the code uses");
    let complete = run.of_type("complete");
    assert_eq!(complete[0]["success"], true);
    assert_eq!(complete[0]["browser_checked"], true);
    // Published at its own address, named by the page the model titled.
    let app = &complete[0]["app"];
    assert_eq!(
        (app["slug"].as_str(), app["url_path"].as_str()),
        (Some("to-do-list"), Some("/apps/to-do-list")),
        "{app}"
    );
    assert_eq!(app["description"], "Write down what to do and tick it off.");

    // Every command ran with the network denied: the build's commands are offline.
    assert!(run.of_type("command_started").iter().all(|c| c["command"] != "npm" || c["args"][0] == "install"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_that_does_not_exist_is_an_import_error_with_its_place() {
    let app = "import { useState } from \"react\";\nimport Header from \"./components/Header\";\n\nexport default function App() {\n  const [n] = useState<number>(0);\n  return <Header count={n} />;\n}\n";
    let mock = MockLlm::start(vec![
        Turn::calls(&[("createFile", json!({"path": "src/App.tsx", "content": app}))]),
        Turn::text("Done."),
    ])
    .await;
    let run = wright_in(
        project_dir(),
        "openai",
        &mock.base_url,
        "a counter",
        &["--template", "react", "--max-fix-attempts", "0"],
        &[],
    )
    .await;
    assert_eq!(run.code, 1, "stderr: {}\nstdout: {}", run.stderr, run.stdout);
    assert_contract(&run);
    let detected = run.of_type("error_detected");
    assert_eq!(detected.len(), 1, "{detected:#?}");
    let e = detected[0];
    assert_eq!(
        (e["kind"].as_str(), e["file"].as_str(), e["line"].as_u64(), e["column"].as_u64()),
        (Some("import"), Some("src/App.tsx"), Some(2), Some(20)),
        "{e}"
    );
    assert!(run.phases().iter().all(|p| !p.starts_with("VERIFYING")), "{:?}", run.phases());
    let complete = &run.of_type("complete")[0];
    assert_eq!(complete["success"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wright_serve_previews_a_react_build_from_its_bundle() {
    // The app imports an image, and has a file in public/ served as it is.
    let heading = "<h1 className=\"mb-4 text-2xl font-bold text-slate-800\">To-do list</h1>";
    assert!(FIXED.contains(heading));
    let with_logo = FIXED.replace(
        heading,
        "<h1 className=\"mb-4 text-2xl font-bold text-slate-800\"><img src={logo} alt=\"\" /> To-do list</h1>",
    );
    let app = format!("import logo from \"./logo.svg\";\n{with_logo}");
    let svg =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"8\" height=\"8\"><rect width=\"8\" height=\"8\"/></svg>";
    let llm = MockLlm::start(vec![
        Turn::calls(&[
            ("createFile", json!({"path": "src/logo.svg", "content": svg})),
            ("createFile", json!({"path": "public/robots.txt", "content": "User-agent: *\n"})),
            ("createFile", json!({"path": "src/App.tsx", "content": app})),
            ("createFile", json!({"path": "src/App.test.tsx", "content": TESTS})),
            ("updateFile", json!({"path": "index.html", "content": PAGE})),
        ]),
        Turn::text("A to-do list in React."),
    ])
    .await;
    let dir = project_dir();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let config = dir.path().join("wright.toml").display().to_string();
    let s = Server::start(&data, &llm.base_url, &["--workers", "1", "--config", &config]).await;
    let alice = s.add_user("alice", false).await;
    let c = client();
    let r = create(&c, &s, &alice, json!({"prompt": "a to-do list", "template": "react"})).await;
    assert_eq!(r.status(), 202);
    let id = r.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let events = stream(&c, &s, &alice, &id, None).await;
    let phases: Vec<_> = events.iter().filter(|e| e.event == "phase").map(|e| e.data["phase"].clone()).collect();
    assert_eq!(events.last().unwrap().data["success"], true, "{phases:?}");
    assert!(phases.contains(&json!("TRANSPILING")), "{phases:?}");

    let b = get_json(&c, &s, &alice, &format!("/api/builds/{id}")).await;
    assert_eq!(b["template"], "react", "{b}");
    let preview_url = b["preview_url"].as_str().unwrap().to_string();
    let (pc, _) = preview_client(&s, &preview_url);
    // The preview's root is the bundled page, and what it names is beside it.
    let page = pc.get(&preview_url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let page = page.text().await.unwrap();
    assert!(page.contains("<title>To-do list</title>") && page.contains("src=\"app.js\""), "{page}");
    assert!(!page.contains("main.tsx"), "{page}");
    for (file, kind) in [("app.js", "javascript"), ("app.css", "css"), ("robots.txt", "text/plain")] {
        let res = pc.get(format!("{preview_url}{file}")).send().await.unwrap();
        assert_eq!(res.status(), 200, "{file}");
        let ct = res.headers()["content-type"].to_str().unwrap().to_string();
        assert!(ct.contains(kind), "{file}: {ct}");
    }
    // The imported image is a file of the bundle, named by its content, and the bundle names it.
    let js = pc.get(format!("{preview_url}app.js")).send().await.unwrap().text().await.unwrap();
    let at = js.find("assets/logo-").expect("the bundle names the image");
    let name: String = js[at..].chars().take_while(|c| !matches!(c, '"' | '\'' | '`')).collect();
    let img = pc.get(format!("{preview_url}{name}")).send().await.unwrap();
    assert_eq!(img.status(), 200, "{name}");
    assert_eq!(img.text().await.unwrap(), svg);

    // Published at its address, which shows the same bundle on the app's own origin.
    assert_eq!(b["app"]["slug"], "to-do-list", "{b}");
    let res = c.get(s.url("/apps/to-do-list")).send().await.unwrap();
    assert_eq!(res.status(), 307);
    let to = res.headers()["location"].to_str().unwrap().to_string();
    let (ac, _) = preview_client(&s, &to);
    let page = ac.get(&to).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("<title>To-do list</title>") && page.contains("src=\"app.js\""), "{page}");
    let js = ac.get(format!("{to}app.js")).send().await.unwrap();
    assert_eq!(js.status(), 200);
}
