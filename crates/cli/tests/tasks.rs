//! `wright task` end to end: the real binary runs a task file against an existing project,
//! through the real sandbox, with a local server speaking the OpenAI wire as the model; the run
//! is stored, shown, and resumed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use std::path::Path;
use support::{MockLlm, Turn};

/// `wright task ARGS…` in `dir`, with the model at `llm` when given; the data dir is `dir/data`
/// for the commands that take one.
async fn task(dir: &Path, args: &[&str], llm: Option<&str>) -> std::process::Output {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.arg("task").args(args);
    if let Some(url) = llm {
        cmd.args(["--provider", "openai", "--base-url", url, "--model", "mock-model"]);
        cmd.env("OPENAI_API_KEY", support::OPENAI_KEY);
    }
    if matches!(args.first(), Some(&"run") | Some(&"list") | Some(&"show")) {
        cmd.arg("--data-dir").arg(dir.join("data"));
    }
    cmd.current_dir(dir);
    for k in support::HOST_ENV {
        cmd.env_remove(k);
    }
    cmd.output().await.unwrap()
}

fn events(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn of<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const ADD_WORKS: &str = "node -e \"process.exit(require('./math.js').add(2, 3) === 5 ? 0 : 1)\"";

fn plan() -> Value {
    json!({"goal": "make add add", "tasks": [
        {"id": "notes", "type": "validation", "description": "the project has notes",
         "depends_on": ["fix-add"], "validation_criteria": ["node --check math.js", "test -f NOTES.md"]},
        {"id": "fix-add", "type": "code_generation", "description": "add must add, not subtract",
         "instructions": ["Change only the add function"], "input_artifacts": ["math.js", "."],
         "output_artifacts": ["math.js"], "constraints": ["no dependencies"], "validation_criteria": [ADD_WORKS]}
    ]})
}

#[tokio::test]
async fn a_plan_runs_against_an_existing_project_is_stored_and_resumes_where_it_failed() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("math.js"), "exports.add = (a, b) => a - b;\n").unwrap();
    std::fs::write(dir.path().join("plan.json"), plan().to_string()).unwrap();
    let llm = MockLlm::start(vec![
        Turn::calls(&[("readFile", json!({"path": "math.js"}))]),
        Turn::calls(&[("updateFile", json!({"path": "math.js", "content": "exports.add = (a, b) => a + b;\n"}))]),
        Turn::text("add now adds."),
    ])
    .await;
    let ws = proj.to_str().unwrap();

    let first =
        task(dir.path(), &["run", "plan.json", "--workspace", ws, "--events", "jsonl"], Some(&llm.base_url)).await;
    assert_eq!(first.status.code(), Some(1), "the notes task fails; stderr: {}", stderr(&first));
    let ev = events(&first);
    for (i, e) in ev.iter().enumerate() {
        assert_eq!(e["seq"], (i + 1) as u64, "gapless seq");
    }
    assert_eq!(ev.last().unwrap()["type"], "complete");
    assert_eq!(ev.last().unwrap()["success"], false);
    assert_eq!(ev.last().unwrap()["files"], json!(["math.js"]));
    let started: Vec<&str> = of(&ev, "task_started").iter().map(|e| e["task"].as_str().unwrap()).collect();
    assert_eq!(started, ["fix-add", "notes"], "dependencies first");
    let finished: Vec<(&str, &str)> =
        of(&ev, "task_finished").iter().map(|e| (e["task"].as_str().unwrap(), e["status"].as_str().unwrap())).collect();
    assert_eq!(finished, [("fix-add", "passed"), ("notes", "failed")]);
    assert_eq!(std::fs::read_to_string(proj.join("math.js")).unwrap(), "exports.add = (a, b) => a + b;\n");
    // The model saw the task's context: the file, the folder's tree, the constraint.
    let first_prompt = llm.requests()[0]["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(
        first_prompt.contains("a - b") && first_prompt.contains("math.js") && first_prompt.contains("no dependencies")
    );
    // As root the sandbox user borrowed the project; its owner has it back.
    {
        use std::os::unix::fs::MetadataExt;
        let owner = std::fs::metadata(&proj).unwrap().uid();
        assert_eq!(std::fs::metadata(proj.join("math.js")).unwrap().uid(), owner);
    }
    let run_id = ev[0]["build"].as_str().unwrap().to_string();

    let shown = task(dir.path(), &["show", &run_id, "--json"], None).await;
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let doc: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(doc["status"], "failed");
    assert_eq!(doc["tasks"][0]["id"], "fix-add");
    assert_eq!(doc["tasks"][0]["result"]["message"], "Code generation completed and validation passed.");
    let cmds = &doc["tasks"][1]["result"]["validation_details"]["commands_executed"];
    assert_eq!(cmds[0]["exit_code"], 0);
    assert_eq!((cmds[1]["command"].as_str(), cmds[1]["exit_code"].as_i64()), (Some("test -f NOTES.md"), Some(1)));
    assert_eq!(doc["tasks"][1]["result"]["validation_details"]["overall_status"], "failed");

    // The person fixes what the failing task asked for and resumes: the passed task is kept
    // (no model call), the failed one runs again.
    std::fs::write(proj.join("NOTES.md"), "# Notes\n").unwrap();
    let calls_before = llm.requests().len();
    let resumed = task(
        dir.path(),
        &["run", "plan.json", "--workspace", ws, "--resume", &run_id[..10], "--events", "jsonl"],
        Some(&llm.base_url),
    )
    .await;
    assert_eq!(resumed.status.code(), Some(0), "stderr: {}", stderr(&resumed));
    let ev = events(&resumed);
    let started: Vec<&str> = of(&ev, "task_started").iter().map(|e| e["task"].as_str().unwrap()).collect();
    assert_eq!(started, ["notes"], "the task that passed is not run again");
    let kept = of(&ev, "task_finished")[0];
    assert_eq!((kept["task"].as_str(), kept["status"].as_str()), (Some("fix-add"), Some("passed")));
    assert!(kept["message"].as_str().unwrap().contains("kept from the earlier run"), "{kept}");
    assert_eq!(llm.requests().len(), calls_before, "no model call for a kept task");
    assert_eq!(ev.last().unwrap()["success"], true);
    let second_id = ev[0]["build"].as_str().unwrap().to_string();
    assert_ne!(second_id, run_id, "a resumed run is a run of its own");

    let shown = task(dir.path(), &["show", &second_id, "--json"], None).await;
    let doc: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(doc["resumed_from"], run_id.as_str());
    assert_eq!(doc["status"], "published");
    let listed = task(dir.path(), &["list", "--json"], None).await;
    let runs: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 2);
    let human = task(dir.path(), &["show", &run_id], None).await;
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("❌ notes (validation)") && text.contains("$ test -f NOTES.md (exit 1)"), "{text}");
}

#[tokio::test]
async fn bad_task_files_and_folders_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let bad = json!({"tasks": [{"id": "a", "type": "validation", "description": "x", "depends_on": ["nope"]}]});
    std::fs::write(dir.path().join("bad.json"), bad.to_string()).unwrap();
    std::fs::write(dir.path().join("plan.json"), plan().to_string()).unwrap();
    let llm = MockLlm::start(vec![]).await;

    let checked = task(dir.path(), &["check", "bad.json"], None).await;
    assert_eq!(checked.status.code(), Some(1));
    assert!(
        stderr(&checked).contains("tasks[0].depends_on") && stderr(&checked).contains("nope"),
        "{}",
        stderr(&checked)
    );

    let run = task(dir.path(), &["run", "bad.json", "--workspace", proj.to_str().unwrap()], Some(&llm.base_url)).await;
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    assert!(stderr(&run).contains("tasks[0].depends_on"));
    let missing = task(dir.path(), &["run", "plan.json", "--workspace", "/no/such/project"], Some(&llm.base_url)).await;
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("does not exist"), "{}", stderr(&missing));
    let rerun = task(
        dir.path(),
        &["run", "plan.json", "--workspace", proj.to_str().unwrap(), "--rerun", "notes"],
        Some(&llm.base_url),
    )
    .await;
    assert_eq!(rerun.status.code(), Some(2));
    assert!(stderr(&rerun).contains("--resume"), "{}", stderr(&rerun));
    assert!(llm.requests().is_empty(), "nothing reached the model");
    let listed = task(dir.path(), &["list", "--json"], None).await;
    assert_eq!(serde_json::from_slice::<Value>(&listed.stdout).unwrap(), json!([]), "nothing was recorded");

    let good = task(dir.path(), &["check", "plan.json"], None).await;
    assert_eq!(good.status.code(), Some(0));
    let text = String::from_utf8_lossy(&good.stdout);
    assert!(text.contains("1. fix-add") && text.contains("2. notes"), "{text}");
    let schema = task(dir.path(), &["schema"], None).await;
    let schema: Value = serde_json::from_slice(&schema.stdout).unwrap();
    assert!(schema.to_string().contains("validation_criteria"));
    let types = task(dir.path(), &["types"], None).await;
    let text = String::from_utf8_lossy(&types.stdout);
    for t in ["ai_interaction", "code_generation", "no_op", "planning", "validation"] {
        assert!(text.contains(t), "{t} missing from {text}");
    }
}

#[tokio::test]
async fn a_task_adds_a_function_node_test_fails_once_and_the_fix_makes_it_pass() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("repo");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("math.js"), "exports.add = (a, b) => a + b;\n").unwrap();
    std::fs::write(
        proj.join("math.test.js"),
        "const test = require('node:test');\nconst assert = require('node:assert');\n\
         const { add, mul } = require('./math.js');\n\
         test('add', () => assert.strictEqual(add(2, 3), 5));\n\
         test('mul', () => assert.strictEqual(mul(2, 3), 6));\n",
    )
    .unwrap();
    let task_file = json!({"id": "mul", "type": "code_generation", "description": "add a mul(a, b) function to math.js",
        "input_artifacts": ["math.js", "math.test.js", "docs/design.md"], "output_artifacts": ["math.js"],
        "validation_criteria": ["node --test"]});
    std::fs::write(dir.path().join("mul.json"), task_file.to_string()).unwrap();
    let wrong = "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a + b;\n";
    let right = "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n";
    let llm = MockLlm::start(vec![
        Turn::calls(&[("updateFile", json!({"path": "math.js", "content": wrong}))]),
        Turn::text("mul added."),
        Turn::calls(&[("updateFile", json!({"path": "math.js", "content": right}))]),
        Turn::text("mul multiplies now."),
    ])
    .await;
    let out = task(
        dir.path(),
        &["run", "mul.json", "--workspace", proj.to_str().unwrap(), "--events", "jsonl"],
        Some(&llm.base_url),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let ev = events(&out);
    // The missing input artifact was said and skipped; the rest of the context reached the model.
    assert!(
        ev.iter().any(|e| e["type"] == "status"
            && e["message"].as_str().is_some_and(|m| m.contains("docs/design.md") && m.contains("skipped"))),
        "no word about the missing artifact"
    );
    let first_prompt = llm.requests()[0]["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(first_prompt.contains("mul(2, 3)"), "the test file was in the context");
    // node --test ran twice: it failed on the first version, passed on the fix.
    let runs =
        ev.iter().filter(|e| e["type"] == "command_started" && e["args"].to_string().contains("node --test")).count();
    assert_eq!(runs, 2, "node --test ran once per version");
    let fix_request = llm.requests()[2]["messages"].to_string();
    assert!(fix_request.contains("!=="), "node's assertion went back to the model: {fix_request}");
    let done = of(&ev, "task_finished")[0];
    assert_eq!(done["status"], "passed");
    let cmds = &done["result"]["validation_details"]["commands_executed"];
    assert_eq!((cmds[0]["command"].as_str(), cmds[0]["exit_code"].as_i64()), (Some("node --test"), Some(0)));
    assert_eq!(std::fs::read_to_string(proj.join("math.js")).unwrap(), right);
}

/// A task on a Python project runs its checks in the project's own environment, made ready
/// like a build's: `python3` is the sandbox's Python in a venv, with pytest, network off.
#[tokio::test]
async fn a_task_on_a_python_project_checks_it_with_pytest_in_its_own_environment() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("repo");
    std::fs::create_dir_all(proj.join("tests")).unwrap();
    std::fs::write(proj.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    std::fs::write(
        proj.join("tests/test_calc.py"),
        "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    )
    .unwrap();
    let task_file = json!({"id": "mul", "type": "code_generation", "description": "add a mul(a, b) function to calc.py",
        "input_artifacts": ["calc.py", "tests/test_calc.py"], "output_artifacts": ["calc.py"],
        "validation_criteria": ["python3 -m pytest -q -p no:cacheprovider"]});
    std::fs::write(dir.path().join("mul.json"), task_file.to_string()).unwrap();
    let right = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n";
    let llm = MockLlm::start(vec![
        Turn::calls(&[("updateFile", json!({"path": "calc.py", "content": right}))]),
        Turn::text("mul added."),
    ])
    .await;
    let out = task(
        dir.path(),
        &["run", "mul.json", "--workspace", proj.to_str().unwrap(), "--events", "jsonl"],
        Some(&llm.base_url),
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}\nstdout: {}",
        stderr(&out),
        String::from_utf8_lossy(&out.stdout)
    );
    let ev = events(&out);
    let ready = of(&ev, "packages_ready");
    assert_eq!(ready.len(), 1, "the environment was made ready once: {ready:?}");
    assert_eq!(ready[0]["ecosystem"], "python");
    let done = of(&ev, "task_finished")[0];
    assert_eq!(done["status"], "passed", "{done}");
    let cmds = &done["result"]["validation_details"]["commands_executed"];
    assert_eq!(cmds[0]["exit_code"].as_i64(), Some(0), "{cmds}");
}

/// As root a task run lends the project to the sandbox user; killed with SIGKILL mid-run it
/// cannot give it back, so the next start of wright does.
#[tokio::test]
async fn a_project_lent_by_a_killed_run_is_given_back_on_the_next_start() {
    use std::os::unix::fs::MetadataExt;
    if !wright_sandbox::running_as_root() {
        println!("skipped: only root lends a project to the sandbox user (run as root to test this)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::write(proj.join("src/math.js"), "exports.add = (a, b) => a + b;\n").unwrap();
    let owner = 4321;
    for p in [proj.clone(), proj.join("src"), proj.join("src/math.js")] {
        std::os::unix::fs::lchown(&p, Some(owner), Some(owner)).unwrap();
    }
    let slow = json!({"tasks": [{"id": "wait", "type": "validation", "description": "a long check",
        "validation_criteria": ["sleep 60"]}]});
    std::fs::write(dir.path().join("slow.json"), slow.to_string()).unwrap();
    let llm = MockLlm::start(vec![]).await;

    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.args(["task", "run", "slow.json", "--workspace"]).arg(&proj).args(["--events", "jsonl"]);
    cmd.args(["--provider", "openai", "--base-url", &llm.base_url, "--model", "mock-model"]);
    cmd.arg("--data-dir").arg(dir.path().join("data")).env("OPENAI_API_KEY", support::OPENAI_KEY);
    cmd.current_dir(dir.path()).stdout(std::process::Stdio::piped()).kill_on_drop(true);
    for k in support::HOST_ENV {
        cmd.env_remove(k);
    }
    let mut run = cmd.spawn().unwrap();
    // Wait until the check runs in the sandbox: the sandbox user has the project then.
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(run.stdout.take().unwrap()).lines();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let uid = |p: &Path| std::fs::symlink_metadata(p).unwrap().uid();
    let lent = async {
        while uid(&proj.join("src/math.js")) != 65534 {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), lent).await.expect("the project was never lent");
    run.start_kill().unwrap();
    run.wait().await.unwrap();
    assert_eq!(uid(&proj.join("src/math.js")), 65534, "killed mid-run, the project stays lent");

    // The next start of wright (another task run, on another project) gives it back.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let quick = json!({"tasks": [{"id": "ok", "type": "validation", "description": "a quick check",
        "validation_criteria": ["true"]}]});
    std::fs::write(dir.path().join("quick.json"), quick.to_string()).unwrap();
    let out = task(
        dir.path(),
        &["run", "quick.json", "--workspace", other.to_str().unwrap(), "--events", "jsonl"],
        Some(&llm.base_url),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for p in [proj.clone(), proj.join("src"), proj.join("src/math.js")] {
        assert_eq!((uid(&p), std::fs::symlink_metadata(&p).unwrap().gid()), (owner, owner), "{}", p.display());
    }
}

/// `wright builds ARGS…` against `dir/data`.
async fn builds(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.arg("builds").args(args).arg("--data-dir").arg(dir.join("data"));
    cmd.output().await.unwrap()
}

/// The run's stored `complete`, checked against its stored record field by field; the
/// record's `end_reason`.
async fn complete_agrees_with_record(dir: &Path, run_id: &str, shown: &Value) -> Value {
    let stored = builds(dir, &["events", run_id]).await;
    assert_eq!(stored.status.code(), Some(0), "{}", stderr(&stored));
    let stored = events(&stored);
    let completes = of(&stored, "complete");
    assert_eq!(completes.len(), 1, "one complete");
    assert_eq!(stored.last().unwrap()["type"], "complete");
    assert_eq!(completes[0], shown, "the stream shown is the stream stored");
    let record = builds(dir, &["show", run_id, "--json"]).await;
    assert_eq!(record.status.code(), Some(0), "{}", stderr(&record));
    let record: Value = serde_json::from_slice(&record.stdout).unwrap();
    let b = &record["build"];
    let c = completes[0];
    assert_eq!(c["success"], b["status"] == "published", "{c} vs {b}");
    assert_eq!(c["end_reason"], b["end_reason"], "the stream ends as the record says: {c} vs {b}");
    assert_eq!(c["files"], b["files"]);
    assert_eq!(c["iterations"], b["turns"]);
    assert_eq!(c["duration_ms"], b["duration_ms"]);
    b["end_reason"].clone()
}

/// A task run that fails and one that is stopped (Ctrl-C) end with a `complete` that says what
/// their record says: `tasks_failed` and `cancelled`, not a bare failure.
#[tokio::test]
async fn a_task_runs_complete_is_its_record_when_it_fails_and_when_it_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let llm = MockLlm::start(vec![]).await;
    let ws = proj.to_str().unwrap();
    let checks = |cmd: &str| {
        json!({"goal": "check", "tasks": [{"id": "check", "type": "validation", "description": "the project checks",
            "validation_criteria": [cmd]}]})
    };
    std::fs::write(dir.path().join("fails.json"), checks("test -f NOTES.md").to_string()).unwrap();
    std::fs::write(dir.path().join("slow.json"), checks("sleep 60").to_string()).unwrap();

    let failed =
        task(dir.path(), &["run", "fails.json", "--workspace", ws, "--events", "jsonl"], Some(&llm.base_url)).await;
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    let ev = events(&failed);
    let run_id = ev[0]["build"].as_str().unwrap().to_string();
    let reason = complete_agrees_with_record(dir.path(), &run_id, ev.last().unwrap()).await;
    assert_eq!(reason, "tasks_failed");

    // Stopped while its check runs.
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_wright"));
    cmd.args(["task", "run", "slow.json", "--workspace", ws, "--events", "jsonl"]);
    cmd.args(["--provider", "openai", "--base-url", &llm.base_url, "--model", "mock-model"]);
    cmd.env("OPENAI_API_KEY", support::OPENAI_KEY).arg("--data-dir").arg(dir.path().join("data"));
    cmd.current_dir(dir.path()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    for k in support::HOST_ENV {
        cmd.env_remove(k);
    }
    let mut child = cmd.spawn().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(child.stdout.take().unwrap()));
    let mut shown = Vec::new();
    let started = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let e: Value = serde_json::from_str(&line).unwrap();
            let go = e["type"] == "task_started";
            shown.push(e);
            if go {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(started, Ok(true), "the task started: {shown:?}");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let pid = child.id().unwrap();
    assert!(std::process::Command::new("kill").args(["-INT", &pid.to_string()]).status().unwrap().success());
    let ended = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            shown.push(serde_json::from_str(&line).unwrap());
        }
        child.wait().await.unwrap()
    })
    .await
    .expect("a stopped task run ends");
    assert!(!ended.success());
    let run_id = shown[0]["build"].as_str().unwrap().to_string();
    let reason = complete_agrees_with_record(dir.path(), &run_id, shown.last().unwrap()).await;
    assert_eq!(reason, "cancelled");
}
