//! End-to-end: detect a plan, run it with the real tool, parse what it wrote.
//!
//! Ignored by default because it needs node 20 + npm, python3 with pytest, cargo and go
//! on PATH. Run with `cargo test -p wright-testreport --test real_tools -- --ignored`.
//! The jest case also needs `WRIGHT_JEST_NODE_MODULES` pointing at a `node_modules`
//! that contains jest (it is symlinked into the scratch project).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::Path;
use std::process::Command;

use wright_testreport::{REPORT_DIR, RunPlan, TestReport, detect, parse};

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
    dir
}

/// What wright does: create the report dir, run without a shell, parse file or stdout.
fn run(root: &Path, plan: &RunPlan) -> TestReport {
    std::fs::create_dir_all(root.join(REPORT_DIR)).unwrap();
    let output = Command::new(&plan.program)
        .args(&plan.args)
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .env_remove("RUST_BACKTRACE")
        .env_remove("CARGO_TARGET_DIR")
        .current_dir(root)
        .output()
        .unwrap();
    let text = match &plan.report_file {
        Some(file) => std::fs::read_to_string(root.join(file)).unwrap_or_default(),
        None => String::from_utf8_lossy(&output.stdout).into_owned(),
    };
    parse(plan.format, &text).unwrap_or_else(|e| {
        panic!(
            "{e}\nplan: {plan:?}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

const NODE_TESTS: &str = "const test = require('node:test');\nconst assert = require('node:assert');\n\
test('ok', () => {});\ntest('bad', () => { assert.strictEqual(1, 2); });\n";

#[test]
#[ignore = "needs node, npm, python3 + pytest and cargo"]
fn node_test_script() {
    let dir = project(&[
        ("package.json", r#"{"scripts":{"test":"node --test test/"}}"#),
        ("test/a.test.js", NODE_TESTS),
        ("test/broken.test.js", "let x = ;\n"),
    ]);
    let plan = detect(dir.path(), None).unwrap().unwrap();
    let r = run(dir.path(), &plan);
    assert_eq!((r.passed, r.failed, r.total), (1, 2, 3), "{r:#?}");
    assert!(r.errors.iter().any(|f| f.error.contains("SyntaxError")), "{r:#?}");
}

#[test]
#[ignore = "needs node, npm, python3 + pytest and cargo"]
fn npm_script_with_node_options() {
    let dir =
        project(&[("package.json", r#"{"scripts":{"test":"echo start && node run.js"}}"#), ("run.js", NODE_TESTS)]);
    let plan = detect(dir.path(), None).unwrap().unwrap();
    let r = run(dir.path(), &plan);
    assert_eq!((r.passed, r.failed, r.total), (1, 1, 2), "{r:#?}");
}

#[test]
#[ignore = "needs node, npm, python3 + pytest and cargo"]
fn loose_node_files_and_single_file() {
    let dir = project(&[("test/a.test.js", NODE_TESTS), ("b.test.js", NODE_TESTS)]);
    let plan = detect(dir.path(), None).unwrap().unwrap();
    assert_eq!(run(dir.path(), &plan).total, 4);
    let plan = detect(dir.path(), Some("b.test.js")).unwrap().unwrap();
    assert_eq!(run(dir.path(), &plan).total, 2);
}

#[test]
#[ignore = "needs node, npm, python3 + pytest and cargo"]
fn jest_project() {
    let Ok(modules) = std::env::var("WRIGHT_JEST_NODE_MODULES") else {
        eprintln!("WRIGHT_JEST_NODE_MODULES not set; skipping");
        return;
    };
    let dir = project(&[
        ("package.json", r#"{"scripts":{"test":"jest"},"devDependencies":{"jest":"*"}}"#),
        ("sum.test.js", "test('adds', () => expect(1 + 1).toBe(2));\ntest('fails', () => expect(1).toBe(2));\n"),
    ]);
    std::os::unix::fs::symlink(modules, dir.path().join("node_modules")).unwrap();
    let plan = detect(dir.path(), None).unwrap().unwrap();
    let r = run(dir.path(), &plan);
    assert_eq!((r.passed, r.failed, r.total), (1, 1, 2), "{r:#?}");
    assert!(r.errors[0].location.as_deref().unwrap_or("").ends_with("sum.test.js:2:1"));
    let plan = detect(dir.path(), Some("sum.test.js")).unwrap().unwrap();
    assert_eq!(run(dir.path(), &plan).total, 2);
}

#[test]
#[ignore = "needs node, npm, python3 + pytest and cargo"]
fn pytest_project() {
    let dir = project(&[("tests/test_a.py", "def test_ok():\n    pass\n\ndef test_bad():\n    assert 1 == 2\n")]);
    let plan = detect(dir.path(), None).unwrap().unwrap();
    let r = run(dir.path(), &plan);
    assert_eq!((r.passed, r.failed, r.total), (1, 1, 2), "{r:#?}");
    assert_eq!(r.errors[0].test, "tests/test_a.py::test_bad");
    assert_eq!(r.errors[0].location.as_deref(), Some("tests/test_a.py:5"));
}

#[test]
#[ignore = "needs node, npm, python3 + pytest and cargo"]
fn cargo_project() {
    let dir = project(&[
        ("Cargo.toml", "[package]\nname = \"scratch\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        ("src/lib.rs", "#[test]\nfn ok() {}\n#[test]\nfn bad() { assert_eq!(1, 2); }\n"),
        ("tests/it.rs", "#[test]\nfn it_ok() {}\n"),
    ]);
    let plan = detect(dir.path(), None).unwrap().unwrap();
    let r = run(dir.path(), &plan);
    assert_eq!((r.passed, r.failed, r.total), (2, 1, 3), "{r:#?}");
    assert_eq!(r.errors[0].location.as_deref(), Some("src/lib.rs:4:12"));
    let plan = detect(dir.path(), Some("tests/it.rs")).unwrap().unwrap();
    assert_eq!(run(dir.path(), &plan).total, 1);
}

#[test]
#[ignore = "needs node, npm, python3 + pytest, cargo and go"]
fn go_project() {
    let dir = project(&[
        ("go.mod", "module example.com/scratch\n\ngo 1.19\n"),
        ("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n"),
        (
            "calc_test.go",
            "package calc\n\nimport \"testing\"\n\nfunc TestOk(t *testing.T) {}\n\nfunc TestBad(t *testing.T) {\n\tif Add(1, 1) != 3 {\n\t\tt.Errorf(\"Add(1, 1) = %d\", Add(1, 1))\n\t}\n}\n",
        ),
        ("broken/b.go", "package broken\n\nfunc F() int { return missing }\n"),
        ("broken/b_test.go", "package broken\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { F() }\n"),
    ]);
    let plan = detect(dir.path(), None).unwrap().unwrap();
    let r = run(dir.path(), &plan);
    assert_eq!((r.passed, r.failed, r.total), (1, 2, 3), "{r:#?}");
    let bad = r.errors.iter().find(|f| f.test == "example.com/scratch > TestBad").unwrap();
    assert_eq!(bad.location.as_deref(), Some("calc_test.go:9"));
    let broken = r.errors.iter().find(|f| f.test == "example.com/scratch/broken").unwrap();
    assert!(broken.error.contains("undefined: missing"), "{broken:?}");
    assert_eq!(broken.location.as_deref(), Some("broken/b.go:3:23"));
    let plan = detect(dir.path(), Some("calc_test.go")).unwrap().unwrap();
    assert_eq!(run(dir.path(), &plan).total, 2);
}
