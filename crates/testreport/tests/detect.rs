//! `detect` on throwaway project directories, one per rule.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use wright_testreport::{DetectError, Format, RunPlan, Runner, detect};

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
    dir
}

fn plan(dir: &tempfile::TempDir, test_file: Option<&str>) -> RunPlan {
    detect(dir.path(), test_file).unwrap().expect("a plan")
}

fn args(plan: &RunPlan) -> Vec<&str> {
    plan.args.iter().map(String::as_str).collect()
}

const JEST_ARGS: [&str; 4] = ["--json", "--outputFile=.wright/jest-report.json", "--ci", "--testLocationInResults"];

#[test]
fn empty_project_has_no_tests() {
    let dir = project(&[("README.md", "hi"), ("src/app.js", "")]);
    assert_eq!(detect(dir.path(), None).unwrap(), None);
}

#[test]
fn missing_root_is_an_error() {
    let err = detect(Path::new("/nonexistent/wright/project"), None).unwrap_err();
    assert!(matches!(err, DetectError::Io { .. }));
}

// ---------- rule 1: explicit test file ----------

#[test]
fn test_file_js_runs_node_on_it() {
    let dir = project(&[("test/a.test.js", ""), ("package.json", r#"{"scripts":{"test":"node --test"}}"#)]);
    let p = plan(&dir, Some("test/a.test.js"));
    assert_eq!(p.runner, Runner::NodeTest);
    assert_eq!(p.program, "node");
    assert_eq!(args(&p), ["--test", "--test-reporter=tap", "test/a.test.js"]);
    assert_eq!(p.format, Format::Tap);
    assert_eq!(p.report_file, None);
    // ./ prefix tolerated
    assert_eq!(args(&plan(&dir, Some("./test/a.test.js")))[2], "test/a.test.js");
}

#[test]
fn test_file_js_in_jest_project_runs_jest_on_it() {
    let dir = project(&[
        ("sum.test.mjs", ""),
        ("package.json", r#"{"devDependencies":{"jest":"^30"}}"#),
        ("node_modules/jest/bin/jest.js", ""),
    ]);
    let p = plan(&dir, Some("sum.test.mjs"));
    assert_eq!(p.runner, Runner::Jest);
    assert_eq!(p.program, "node");
    let mut expected = vec!["node_modules/jest/bin/jest.js"];
    expected.extend(JEST_ARGS);
    expected.extend(["--runTestsByPath", "sum.test.mjs"]);
    assert_eq!(args(&p), expected);
    // TypeScript only makes sense with jest
    let dir = project(&[("a.test.ts", ""), ("package.json", r#"{"devDependencies":{"jest":"1"}}"#)]);
    assert_eq!(plan(&dir, Some("a.test.ts")).runner, Runner::Jest);
    let dir = project(&[("a.test.ts", "")]);
    assert!(matches!(detect(dir.path(), Some("a.test.ts")), Err(DetectError::UnsupportedTestFile(_))));
}

#[test]
fn test_file_py_runs_pytest_on_it() {
    let dir = project(&[("tests/test_x.py", "")]);
    let p = plan(&dir, Some("tests/test_x.py"));
    assert_eq!(p.runner, Runner::Pytest);
    assert_eq!(p.program, "python3");
    assert_eq!(
        args(&p),
        [
            "-m",
            "pytest",
            "-q",
            "-o",
            "junit_family=xunit1",
            "-p",
            "no:cacheprovider",
            "--junitxml=.wright/pytest-report.xml",
            "tests/test_x.py"
        ]
    );
    assert_eq!(p.format, Format::JunitXml);
    assert_eq!(p.report_file, Some(PathBuf::from(".wright/pytest-report.xml")));
}

#[test]
fn test_file_rs_runs_cargo_test() {
    let dir = project(&[
        ("Cargo.toml", "[package]"),
        ("src/lib.rs", ""),
        ("tests/api.rs", ""),
        ("crates/sub/Cargo.toml", "[package]"),
        ("crates/sub/tests/deep.rs", ""),
        ("crates/sub/src/lib.rs", ""),
    ]);
    let p = plan(&dir, Some("tests/api.rs"));
    assert_eq!(p.runner, Runner::Cargo);
    assert_eq!(args(&p), ["test", "--color", "never", "--no-fail-fast", "--test", "api"]);
    assert_eq!(p.format, Format::Libtest);
    assert_eq!(args(&plan(&dir, Some("src/lib.rs"))), ["test", "--color", "never", "--no-fail-fast"]);
    assert_eq!(
        args(&plan(&dir, Some("crates/sub/tests/deep.rs"))),
        ["test", "--color", "never", "--no-fail-fast", "--manifest-path", "crates/sub/Cargo.toml", "--test", "deep"]
    );
}

#[test]
fn test_file_errors() {
    let dir = project(&[("a.test.js", ""), ("notes.txt", ""), ("sub/x.py", "")]);
    let err = |f: &str| detect(dir.path(), Some(f)).unwrap_err();
    assert!(matches!(err("/etc/passwd"), DetectError::UnsafeTestFile(_)));
    assert!(matches!(err("../a.test.js"), DetectError::UnsafeTestFile(_)));
    assert!(matches!(err("sub/../a.test.js"), DetectError::UnsafeTestFile(_)));
    assert!(matches!(err(""), DetectError::UnsafeTestFile(_)));
    assert!(matches!(err("missing.test.js"), DetectError::TestFileNotFound(_)));
    assert!(matches!(err("sub"), DetectError::TestFileNotFound(_)));
    assert!(matches!(err("notes.txt"), DetectError::UnsupportedTestFile(_)));
    let message = err("../a.test.js").to_string();
    assert!(message.contains("relative path inside the project"), "{message}");
}

// ---------- rule 2: package.json ----------

#[test]
fn broken_package_json_is_an_error_the_model_can_fix() {
    let dir = project(&[("package.json", "{\"scripts\": {\"test\": \"jest\",}}")]);
    let err = detect(dir.path(), None).unwrap_err();
    assert!(matches!(err, DetectError::BrokenPackageJson(_)));
    let message = err.to_string();
    assert!(message.contains("package.json") && message.contains("line 1"), "{message}");
    let dir = project(&[("package.json", r#"{"scripts": {"test": ["jest"]}}"#)]);
    assert!(detect(dir.path(), None).unwrap_err().to_string().contains("scripts.test"));
    let dir = project(&[("package.json", "[]")]);
    assert!(matches!(detect(dir.path(), None), Err(DetectError::BrokenPackageJson(_))));
}

#[test]
fn jest_from_script_via_npx_keeps_script_options() {
    let dir = project(&[(
        "package.json",
        r#"{"scripts":{"test":"NODE_OPTIONS=--experimental-vm-modules jest --config jest.config.js --watchAll"}}"#,
    )]);
    let p = plan(&dir, None);
    assert_eq!(p.runner, Runner::Jest);
    assert_eq!(p.program, "npx");
    let mut expected = vec!["--no-install", "jest"];
    expected.extend(JEST_ARGS);
    expected.extend(["--config", "jest.config.js"]);
    assert_eq!(args(&p), expected);
    assert_eq!(p.env, [("NODE_OPTIONS".to_string(), "--experimental-vm-modules".to_string())]);
    assert_eq!(p.format, Format::JestJson);
    assert_eq!(p.report_file, Some(PathBuf::from(".wright/jest-report.json")));
}

#[test]
fn jest_from_dependencies_with_local_install() {
    let dir = project(&[
        ("package.json", r#"{"scripts":{"test":"npm run lint && run-tests"},"devDependencies":{"jest":"^30.0.0"}}"#),
        ("node_modules/jest/bin/jest.js", ""),
    ]);
    let p = plan(&dir, None);
    assert_eq!(p.runner, Runner::Jest);
    assert_eq!(p.program, "node");
    let mut expected = vec!["node_modules/jest/bin/jest.js"];
    expected.extend(JEST_ARGS);
    assert_eq!(args(&p), expected);
    assert!(p.env.is_empty());
}

#[test]
fn node_test_script_runs_node_directly() {
    let dir = project(&[("package.json", r#"{"scripts":{"test":"node --test"}}"#), ("test/a.js", "")]);
    let p = plan(&dir, None);
    assert_eq!(p.runner, Runner::NodeTest);
    assert_eq!(p.program, "node");
    assert_eq!(args(&p), ["--test", "--test-reporter=tap"]);
    assert!(p.env.is_empty());
    assert_eq!(p.format, Format::Tap);
}

#[test]
fn node_test_script_keeps_paths_and_flags_but_not_reporters() {
    let dir = project(&[(
        "package.json",
        r#"{"scripts":{"test":"NODE_ENV=test node --require ./setup.js --test --test-reporter spec --test-reporter-destination=stdout test/ 'other dir/x.test.js'"}}"#,
    )]);
    let p = plan(&dir, None);
    assert_eq!(p.runner, Runner::NodeTest);
    assert_eq!(args(&p), ["--test", "--test-reporter=tap", "--require", "./setup.js", "test/", "other dir/x.test.js"]);
    assert_eq!(p.env, [("NODE_ENV".to_string(), "test".to_string())]);
}

#[test]
fn node_test_script_globs_are_expanded_like_sh() {
    let dir = project(&[
        ("package.json", r#"{"scripts":{"test":"node --test test/*.test.js lib/*.nomatch.js"}}"#),
        ("test/b.test.js", ""),
        ("test/a.test.js", ""),
        ("test/.hidden.test.js", ""),
        ("test/helper.js", ""),
    ]);
    let p = plan(&dir, None);
    // node 20 does not expand globs; sh does, and leaves unmatched words alone
    assert_eq!(args(&p), ["--test", "--test-reporter=tap", "test/a.test.js", "test/b.test.js", "lib/*.nomatch.js"]);
}

#[test]
fn other_test_script_goes_through_npm_with_tap_reporter() {
    let dir = project(&[("package.json", r#"{"scripts":{"test":"npm run build && node test/run.js"}}"#)]);
    let p = plan(&dir, None);
    assert_eq!(p.runner, Runner::NpmScript);
    assert_eq!(p.program, "npm");
    assert_eq!(args(&p), ["test", "--silent"]);
    assert_eq!(p.env, [("NODE_OPTIONS".to_string(), "--test-reporter=tap".to_string())]);
    assert_eq!(p.format, Format::Tap);
    assert_eq!(p.report_file, None);
    assert!(p.description.contains("npm run build && node test/run.js"));
}

#[test]
fn npm_script_with_its_own_reporter_gets_no_node_options() {
    // node 20 refuses two --test-reporter values without matching destinations.
    let dir = project(&[("package.json", r#"{"scripts":{"test":"node --test --test-reporter=spec > out.txt"}}"#)]);
    let p = plan(&dir, None);
    assert_eq!(p.runner, Runner::NpmScript);
    assert!(p.env.is_empty());
}

#[test]
fn placeholder_script_with_js_test_files_lists_them() {
    let dir = project(&[
        ("package.json", r#"{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}"#),
        ("src/sum.test.js", ""),
        ("src/sum.spec.mjs", ""),
        ("src/sum.js", ""),
        ("tests/api.cjs", ""),
        ("test/fixtures/data.json", ""),
        ("node_modules/dep/index.test.js", ""),
        (".cache/x.test.js", ""),
    ]);
    let p = plan(&dir, None);
    assert_eq!(p.runner, Runner::NodeTest);
    assert_eq!(args(&p), ["--test", "--test-reporter=tap", "src/sum.spec.mjs", "src/sum.test.js", "tests/api.cjs"]);
}

#[test]
fn package_json_without_tests_falls_through_to_python() {
    let dir = project(&[("package.json", r#"{"name":"tooling"}"#), ("test_app.py", "")]);
    assert_eq!(plan(&dir, None).runner, Runner::Pytest);
}

// ---------- rule 3: python ----------

#[test]
fn python_markers() {
    for files in [
        vec![("pytest.ini", "[pytest]")],
        vec![("pyproject.toml", "[tool.pytest.ini_options]\n")],
        vec![("setup.cfg", "[tool:pytest]\n")],
        vec![("conftest.py", "")],
        vec![("tests/test_api.py", "")],
        vec![("pkg/api_test.py", "")],
    ] {
        let dir = project(&files);
        let p = plan(&dir, None);
        assert_eq!(p.runner, Runner::Pytest, "{files:?}");
        assert_eq!(
            args(&p),
            [
                "-m",
                "pytest",
                "-q",
                "-o",
                "junit_family=xunit1",
                "-p",
                "no:cacheprovider",
                "--junitxml=.wright/pytest-report.xml"
            ]
        );
    }
}

#[test]
fn python_files_in_venvs_and_dot_dirs_do_not_count() {
    let dir = project(&[
        ("venv/pyvenv.cfg", ""),
        ("venv/lib/site/test_thing.py", ""),
        (".tox/test_x.py", ""),
        ("node_modules/x/test_y.py", ""),
        ("pyproject.toml", "[project]\nname='x'\n"),
    ]);
    assert_eq!(detect(dir.path(), None).unwrap(), None);
}

// ---------- rule 4: cargo ----------

#[test]
fn cargo_project() {
    let dir = project(&[("Cargo.toml", "[package]\nname='x'"), ("src/lib.rs", "")]);
    let p = plan(&dir, None);
    assert_eq!(p.runner, Runner::Cargo);
    assert_eq!(p.program, "cargo");
    assert_eq!(args(&p), ["test", "--color", "never", "--no-fail-fast"]);
    assert_eq!(p.report_file, None);
}

// ---------- rule 5 and leftovers ----------

#[test]
fn loose_js_tests_without_package_json() {
    let dir = project(&[("test/basic.mjs", "")]);
    let p = plan(&dir, None);
    assert_eq!(p.runner, Runner::NodeTest);
    assert_eq!(args(&p), ["--test", "--test-reporter=tap", "test/basic.mjs"]);
}

#[test]
fn broken_package_json_only_matters_for_js_test_files() {
    let dir = project(&[("package.json", "{oops"), ("test_a.py", ""), ("a.test.js", "")]);
    assert_eq!(plan(&dir, Some("test_a.py")).runner, Runner::Pytest);
    assert!(matches!(detect(dir.path(), Some("a.test.js")), Err(DetectError::BrokenPackageJson(_))));
}

#[test]
fn jest_config_key_means_jest() {
    let dir = project(&[("package.json", r#"{"scripts":{"test":"run-my-tests"},"jest":{"testEnvironment":"node"}}"#)]);
    assert_eq!(plan(&dir, None).runner, Runner::Jest);
}

#[test]
fn vitest_script_runs_vitest_once_with_a_json_report_keeping_its_options() {
    let dir = project(&[(
        "package.json",
        r#"{"scripts":{"test":"vitest --environment happy-dom --reporter verbose"},"devDependencies":{"vitest":"4.1.12"}}"#,
    )]);
    let p = plan(&dir, None);
    assert_eq!(p.runner, Runner::Vitest);
    assert_eq!(p.program, "node");
    assert_eq!(
        args(&p),
        [
            "node_modules/vitest/vitest.mjs",
            "run",
            "--environment",
            "happy-dom",
            "--reporter=json",
            "--outputFile=.wright/vitest-report.json"
        ]
    );
    assert_eq!(p.report_file, Some(PathBuf::from(".wright/vitest-report.json")));
    assert_eq!(p.format, wright_testreport::Format::JestJson);
}

#[test]
fn a_tsx_test_file_in_a_vitest_project_runs_vitest_on_that_file_alone() {
    let dir = project(&[
        ("package.json", r#"{"scripts":{"test":"vitest run src/"},"devDependencies":{"vitest":"4"}}"#),
        ("src/App.test.tsx", ""),
    ]);
    let p = plan(&dir, Some("src/App.test.tsx"));
    assert_eq!(p.runner, Runner::Vitest);
    assert_eq!(
        args(&p),
        [
            "node_modules/vitest/vitest.mjs",
            "run",
            "--reporter=json",
            "--outputFile=.wright/vitest-report.json",
            "src/App.test.tsx"
        ]
    );
    // jest wins when both are there: its configuration says which runner the project uses.
    let dir = project(&[("package.json", r#"{"devDependencies":{"vitest":"4","jest":"30"}}"#)]);
    assert_eq!(plan(&dir, None).runner, Runner::Jest);
}

// ---------- Go ----------

#[test]
fn a_go_module_runs_go_test_json_on_every_package() {
    let dir = project(&[
        ("go.mod", "module example.com/app\n\ngo 1.19\n"),
        ("app.go", "package app\n"),
        ("sub/x_test.go", "package sub\n"),
    ]);
    let p = plan(&dir, None);
    assert_eq!(p.runner, Runner::GoTest);
    assert_eq!(p.format, Format::GoTestJson);
    assert_eq!(p.program, "sh");
    assert_eq!(args(&p), ["-c", "exec go test -json \"$1\" 2>&1", "sh", "./..."]);
    // One test file: its package only.
    assert_eq!(args(&plan(&dir, Some("sub/x_test.go")))[3], "./sub");
    std::fs::write(dir.path().join("app_test.go"), "package app\n").unwrap();
    assert_eq!(args(&plan(&dir, Some("app_test.go")))[3], ".");
    // A Go file that is not a test is not run alone.
    assert!(matches!(detect(dir.path(), Some("app.go")), Err(DetectError::UnsupportedTestFile(_))));
}

#[test]
fn a_linked_go_mod_is_not_a_go_module() {
    let outside = project(&[("go.mod", "module example.com/x\n")]);
    let dir = project(&[("README.md", "")]);
    std::os::unix::fs::symlink(outside.path().join("go.mod"), dir.path().join("go.mod")).unwrap();
    assert_eq!(detect(dir.path(), None).unwrap(), None);
}
