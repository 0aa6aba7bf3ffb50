//! Deciding how to run a project's tests so that the output is machine-readable.
//!
//! Plans are run by wright itself, without a shell, with the project directory as the
//! working directory. Where a runner writes its report to a file, the file lives in
//! [`REPORT_DIR`], which **the caller must create** before running: jest does not create
//! it (it fails to write the report), pytest does.

use std::fs;
use std::path::{Path, PathBuf};

use crate::Format;
use crate::plan::{RunPlan, Runner};

/// Directory (relative to the project) for report files; created by the caller.
pub const REPORT_DIR: &str = ".wright";
/// Where the jest plan asks jest to write its `--json` report.
pub const JEST_REPORT_FILE: &str = ".wright/jest-report.json";
/// Where the Vitest plan asks Vitest to write its jest-compatible `--reporter=json` report.
pub const VITEST_REPORT_FILE: &str = ".wright/vitest-report.json";
/// Where the pytest plan asks pytest to write its JUnit XML report.
pub const PYTEST_REPORT_FILE: &str = ".wright/pytest-report.xml";

/// Stops a pathological tree (or a forgotten virtualenv) from stalling detection.
const MAX_SCAN_ENTRIES: usize = 50_000;
const MAX_SCAN_DEPTH: usize = 16;

/// Why no plan could be made; the messages are meant for the model to act on.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error("test file `{0}` must be a relative path inside the project, without `..`")]
    UnsafeTestFile(String),
    #[error("test file `{0}` does not exist (or is not a file)")]
    TestFileNotFound(String),
    #[error(
        "test file `{0}` is not a .js/.mjs/.cjs, .py, .rs or _test.go file (or a .ts/.jsx file in a jest project), so wright cannot run it"
    )]
    UnsupportedTestFile(String),
    #[error("package.json is broken ({0}); fix it so that the tests can run")]
    BrokenPackageJson(String),
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Decide how to run the tests. `test_file` is an optional path relative to `root` the
/// caller wants run alone. Returns `Ok(None)` when the project has no tests wright can find.
///
/// Order: an explicit `test_file`; package.json (jest, `node --test`, other `test`
/// script, or JS test files); `go.mod` (`go test -json ./...`); Python (pytest);
/// `Cargo.toml`; loose JS test files.
pub fn detect(root: &Path, test_file: Option<&str>) -> Result<Option<RunPlan>, DetectError> {
    let meta = fs::metadata(root).map_err(|source| DetectError::Io { path: root.to_path_buf(), source })?;
    if !meta.is_dir() {
        return Err(DetectError::Io { path: root.to_path_buf(), source: std::io::Error::other("not a directory") });
    }
    if let Some(file) = test_file {
        return plan_for_file(root, file).map(Some);
    }
    let package = read_package_json(root)?;
    if let Some(pkg) = &package {
        if let Some(plan) = plan_for_package(root, pkg) {
            return Ok(Some(plan));
        }
    }
    let scan = scan(root);
    if package.is_some() && !scan.js_tests.is_empty() {
        return Ok(Some(node_on_files(scan.js_tests)));
    }
    if crate::detect_go::is_go_module(root) {
        return Ok(Some(crate::detect_go::go_plan(None)));
    }
    if scan.python || has_pytest_config(root) {
        return Ok(Some(pytest_plan(None)));
    }
    if root.join("Cargo.toml").is_file() {
        return Ok(Some(cargo_plan(Vec::new())));
    }
    if !scan.js_tests.is_empty() {
        return Ok(Some(node_on_files(scan.js_tests)));
    }
    Ok(None)
}

/// What detection needs from package.json.
#[derive(Debug)]
struct Package {
    /// `scripts.test`, unless it is npm's "no test specified" placeholder.
    test_script: Option<String>,
    uses_jest: bool,
    /// Vitest is a dependency or the test script runs it (and jest is not used).
    uses_vitest: bool,
}

fn read_package_json(root: &Path) -> Result<Option<Package>, DetectError> {
    let path = root.join("package.json");
    if !path.exists() {
        return Ok(None);
    }
    // Read beneath the project with no link followed: the file is the generated code's.
    let text = read_beneath(root, "package.json")
        .map_err(|e| DetectError::Io { path: path.clone(), source: std::io::Error::other(e) })?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| DetectError::BrokenPackageJson(format!("invalid JSON: {e}")))?;
    let Some(obj) = value.as_object() else {
        return Err(DetectError::BrokenPackageJson("the top level must be a JSON object".to_string()));
    };
    let test_script = match obj.get("scripts") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::Object(scripts)) => match scripts.get("test") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(_) => {
                return Err(DetectError::BrokenPackageJson("`scripts.test` must be a string".to_string()));
            }
        },
        Some(_) => {
            return Err(DetectError::BrokenPackageJson("`scripts` must be an object".to_string()));
        }
    };
    let test_script = test_script.filter(|s| !s.trim().is_empty() && !s.contains("no test specified"));
    let in_deps = ["dependencies", "devDependencies"]
        .iter()
        .any(|key| obj.get(*key).and_then(|d| d.as_object()).is_some_and(|d| d.contains_key("jest")));
    // A top-level "jest" key is jest's own configuration.
    let uses_jest = in_deps || obj.contains_key("jest") || test_script.as_deref().is_some_and(mentions_jest);
    let vitest_dep = ["dependencies", "devDependencies"]
        .iter()
        .any(|key| obj.get(*key).and_then(|d| d.as_object()).is_some_and(|d| d.contains_key("vitest")));
    let uses_vitest = !uses_jest && (vitest_dep || test_script.as_deref().is_some_and(|s| mentions_word(s, "vitest")));
    Ok(Some(Package { test_script, uses_jest, uses_vitest }))
}

/// `jest`, `npx jest --ci`, `NODE_OPTIONS=… jest`; not `ts-jest` or `jest-cli-helper`.
fn mentions_jest(script: &str) -> bool {
    mentions_word(script, "jest")
}

/// Whether `script` runs `word` as a command word (not as part of another name).
fn mentions_word(script: &str, word: &str) -> bool {
    script.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '/')).any(|w| w == word)
}

fn plan_for_package(root: &Path, pkg: &Package) -> Option<RunPlan> {
    if pkg.uses_jest {
        return Some(jest_plan(root, pkg, None));
    }
    if pkg.uses_vitest {
        return Some(vitest_plan(pkg, None));
    }
    let script = pkg.test_script.as_deref()?;
    if let Some(command) = split_command(script) {
        let (env, words) = leading_env(&command);
        if words.first().map(|w| w.text.as_str()) == Some("node") && words.iter().any(|w| w.text == "--test") {
            return Some(node_from_script(root, script, env, &words[1..]));
        }
    }
    let mut env = Vec::new();
    // NODE_OPTIONS=--test-reporter=tap makes any node:test run in the script print TAP
    // (checked on node 20), but node refuses two reporters without destinations.
    if !script.contains("--test-reporter") {
        env.push(("NODE_OPTIONS".to_string(), "--test-reporter=tap".to_string()));
    }
    Some(RunPlan {
        runner: Runner::NpmScript,
        program: "npm".to_string(),
        args: vec!["test".to_string(), "--silent".to_string()],
        env,
        format: Format::Tap,
        report_file: None,
        description: format!("the project's `npm test` script (`{script}`)"),
    })
}

/// Runs the script's `node --test` directly with TAP, keeping its own flags and paths
/// (node 20 treats directory arguments as roots to search for its default test-file
/// patterns and, like no arguments at all, skips `node_modules`; it does not expand
/// globs itself, so globs are expanded here as `sh` would for `npm test`).
fn node_from_script(root: &Path, script: &str, env: Vec<(String, String)>, node_args: &[Word]) -> RunPlan {
    let mut args = vec!["--test".to_string(), "--test-reporter=tap".to_string()];
    let mut skip_next = false;
    for word in node_args {
        let text = word.text.as_str();
        if skip_next {
            skip_next = false;
            continue;
        }
        if text == "--test-reporter" || text == "--test-reporter-destination" {
            skip_next = true;
            continue;
        }
        if text == "--test"
            || text.starts_with("--test-reporter=")
            || text.starts_with("--test-reporter-destination=")
            || text.starts_with("--watch")
        {
            continue;
        }
        if word.glob {
            args.extend(expand_glob(root, text));
        } else {
            args.push(text.to_string());
        }
    }
    RunPlan {
        runner: Runner::NodeTest,
        program: "node".to_string(),
        args,
        env,
        format: Format::Tap,
        report_file: None,
        description: format!("node's built-in test runner (node --test), from the test script `{script}`"),
    }
}

fn node_on_files(files: Vec<String>) -> RunPlan {
    let description = if files.len() == 1 {
        format!("node's built-in test runner (node --test) on {}", files.join(""))
    } else {
        format!("node's built-in test runner (node --test) on the {} test files found", files.len())
    };
    let mut args = vec!["--test".to_string(), "--test-reporter=tap".to_string()];
    args.extend(files);
    RunPlan {
        runner: Runner::NodeTest,
        program: "node".to_string(),
        args,
        env: Vec::new(),
        format: Format::Tap,
        report_file: None,
        description,
    }
}

fn jest_plan(root: &Path, pkg: &Package, test_file: Option<&str>) -> RunPlan {
    let local = root.join("node_modules/jest/bin/jest.js").is_file();
    let (program, mut args, how) = if local {
        ("node", vec!["node_modules/jest/bin/jest.js".to_string()], "from node_modules")
    } else {
        ("npx", vec!["--no-install".to_string(), "jest".to_string()], "via npx")
    };
    args.extend([
        "--json".to_string(),
        format!("--outputFile={JEST_REPORT_FILE}"),
        "--ci".to_string(),
        // Without it every assertion's `location` is null.
        "--testLocationInResults".to_string(),
    ]);
    let mut env = Vec::new();
    if let Some(command) = pkg.test_script.as_deref().and_then(split_command) {
        let (script_env, words) = leading_env(&command);
        let words = match words.first().map(|w| w.text.as_str()) {
            Some("npx") => {
                let at = words.iter().position(|w| w.text == "jest").unwrap_or(words.len());
                &words[at..]
            }
            _ => words,
        };
        if words.first().map(|w| w.text.as_str()) == Some("jest") {
            // Keep the script's own options (e.g. --config, ESM's NODE_OPTIONS) but not
            // the ones that would hang (watch) or fight the report we ask for.
            env = script_env;
            let mut skip_next = false;
            for word in &words[1..] {
                let text = word.text.as_str();
                if skip_next {
                    skip_next = false;
                    continue;
                }
                if text == "--outputFile" {
                    skip_next = true;
                    continue;
                }
                if text.starts_with("--watch")
                    || text.starts_with("--outputFile=")
                    || matches!(text, "--json" | "--ci" | "--testLocationInResults")
                {
                    continue;
                }
                if word.glob {
                    args.extend(expand_glob(root, text));
                } else {
                    args.push(text.to_string());
                }
            }
        }
    }
    if let Some(file) = test_file {
        args.push("--runTestsByPath".to_string());
        args.push(file.to_string());
    }
    RunPlan {
        runner: Runner::Jest,
        program: program.to_string(),
        args,
        env,
        format: Format::JestJson,
        report_file: Some(PathBuf::from(JEST_REPORT_FILE)),
        description: match test_file {
            Some(file) => format!("jest ({how}) on {file}"),
            None => format!("jest ({how})"),
        },
    }
}

/// Vitest from the project's node_modules (`vitest run`, never watch mode), keeping the
/// script's own options except those that would fight the JSON report. Vitest's JSON report is
/// jest's format, so the jest parser reads it.
fn vitest_plan(pkg: &Package, test_file: Option<&str>) -> RunPlan {
    let mut args = vec!["node_modules/vitest/vitest.mjs".to_string(), "run".to_string()];
    let mut env = Vec::new();
    if let Some(command) = pkg.test_script.as_deref().and_then(split_command) {
        let (script_env, words) = leading_env(&command);
        let at = words.iter().position(|w| w.text == "vitest");
        if let Some(at) = at {
            env = script_env;
            let mut skip_next = false;
            for word in &words[at + 1..] {
                let text = word.text.as_str();
                if skip_next {
                    skip_next = false;
                    continue;
                }
                if matches!(text, "--reporter" | "--outputFile" | "--outputFile.json") {
                    skip_next = true;
                    continue;
                }
                if matches!(text, "run" | "watch" | "dev" | "--watch" | "-w" | "--ui")
                    || text.starts_with("--reporter=")
                    || text.starts_with("--outputFile")
                    || text.starts_with("--watch=")
                {
                    continue;
                }
                // A test file given to the tool replaces the script's own filters.
                if test_file.is_some() && !text.starts_with('-') {
                    continue;
                }
                args.push(text.to_string());
            }
        }
    }
    args.push("--reporter=json".to_string());
    args.push(format!("--outputFile={VITEST_REPORT_FILE}"));
    if let Some(file) = test_file {
        args.push(file.to_string());
    }
    RunPlan {
        runner: Runner::Vitest,
        program: "node".to_string(),
        args,
        env,
        format: Format::JestJson,
        report_file: Some(PathBuf::from(VITEST_REPORT_FILE)),
        description: match test_file {
            Some(file) => format!("Vitest on {file}"),
            None => "Vitest".to_string(),
        },
    }
}

fn pytest_plan(test_file: Option<&str>) -> RunPlan {
    let mut args: Vec<String> = [
        "-m",
        "pytest",
        "-q",
        // xunit1 adds file/line attributes to each testcase.
        "-o",
        "junit_family=xunit1",
        // No `.pytest_cache/` left in the project: it is not the person's code.
        "-p",
        "no:cacheprovider",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--junitxml={PYTEST_REPORT_FILE}"));
    let description = match test_file {
        Some(file) => {
            args.push(file.to_string());
            format!("pytest (python3 -m pytest) on {file}")
        }
        None => "pytest (python3 -m pytest)".to_string(),
    };
    RunPlan {
        runner: Runner::Pytest,
        program: "python3".to_string(),
        args,
        env: Vec::new(),
        format: Format::JunitXml,
        report_file: Some(PathBuf::from(PYTEST_REPORT_FILE)),
        description,
    }
}

fn cargo_plan(extra: Vec<String>) -> RunPlan {
    let mut args: Vec<String> = ["test", "--color", "never", "--no-fail-fast"].iter().map(|s| s.to_string()).collect();
    let description =
        if extra.is_empty() { "cargo test".to_string() } else { format!("cargo test {}", extra.join(" ")) };
    args.extend(extra);
    RunPlan {
        runner: Runner::Cargo,
        program: "cargo".to_string(),
        args,
        env: Vec::new(),
        format: Format::Libtest,
        report_file: None,
        description,
    }
}

/// package.json is only read for JS files, so a broken one does not block a Python or
/// Rust test file.
fn plan_for_file(root: &Path, file: &str) -> Result<RunPlan, DetectError> {
    let trimmed = file.trim();
    let rel = trimmed.strip_prefix("./").unwrap_or(trimmed);
    let path = Path::new(rel);
    if rel.is_empty()
        || path.is_absolute()
        || path.has_root()
        || rel.starts_with(['/', '\\'])
        || rel.split(['/', '\\']).any(|c| c == "..")
    {
        return Err(DetectError::UnsafeTestFile(file.to_string()));
    }
    if !root.join(path).is_file() {
        return Err(DetectError::TestFileNotFound(file.to_string()));
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let is_js = matches!(ext, "js" | "mjs" | "cjs" | "ts" | "tsx" | "jsx" | "mts" | "cts");
    let pkg = if is_js { read_package_json(root)? } else { None };
    let jest = pkg.as_ref().filter(|p| p.uses_jest);
    if let Some(pkg) = pkg.as_ref().filter(|p| p.uses_vitest && ext != "cjs") {
        return Ok(vitest_plan(pkg, Some(rel)));
    }
    match ext {
        "js" | "mjs" | "cjs" => Ok(match jest {
            Some(pkg) => jest_plan(root, pkg, Some(rel)),
            None => node_on_files(vec![rel.to_string()]),
        }),
        "ts" | "tsx" | "jsx" | "mts" | "cts" => match jest {
            Some(pkg) => Ok(jest_plan(root, pkg, Some(rel))),
            None => Err(DetectError::UnsupportedTestFile(file.to_string())),
        },
        "py" => Ok(pytest_plan(Some(rel))),
        "rs" => Ok(cargo_plan(cargo_file_args(root, rel))),
        "go" if rel.ends_with("_test.go") => Ok(crate::detect_go::go_plan(Some(rel))),
        _ => Err(DetectError::UnsupportedTestFile(file.to_string())),
    }
}

/// `tests/NAME.rs` → `--test NAME`; in a member crate also `--manifest-path crate/Cargo.toml`.
fn cargo_file_args(root: &Path, rel: &str) -> Vec<String> {
    let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let mut args = Vec::new();
    // Nearest ancestor directory (inside root) with a Cargo.toml.
    let dirs = &parts[..parts.len().saturating_sub(1)];
    let crate_dir =
        (0..=dirs.len()).rev().map(|n| dirs[..n].join("/")).find(|d| root.join(d).join("Cargo.toml").is_file());
    if let Some(dir) = crate_dir.as_deref().filter(|d| !d.is_empty()) {
        args.push("--manifest-path".to_string());
        args.push(format!("{dir}/Cargo.toml"));
    }
    let crate_depth = crate_dir.as_deref().map_or(0, |d| d.split('/').filter(|p| !p.is_empty()).count());
    if parts.len() == crate_depth + 2 && parts[crate_depth] == "tests" {
        if let Some(name) = parts[crate_depth + 1].strip_suffix(".rs") {
            args.push("--test".to_string());
            args.push(name.to_string());
        }
    }
    args
}

fn has_pytest_config(root: &Path) -> bool {
    let contains = |file: &str, needle: &str| read_beneath(root, file).is_ok_and(|t| t.contains(needle));
    root.join("pytest.ini").is_file()
        || contains("pyproject.toml", "[tool.pytest")
        || contains("setup.cfg", "[tool:pytest]")
        || contains("tox.ini", "[pytest]")
}

/// A project file's text, reached beneath `root` with no link followed.
fn read_beneath(root: &Path, file: &str) -> Result<String, wright_beneath::Error> {
    let bytes = wright_beneath::Dir::open(root)?.read(file)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[derive(Debug, Default)]
struct Scan {
    /// Project-relative, `/`-separated, sorted.
    js_tests: Vec<String>,
    python: bool,
    visited: usize,
}

fn scan(root: &Path) -> Scan {
    let mut scan = Scan::default();
    walk(root, "", 0, &mut scan);
    scan.js_tests.sort();
    scan
}

fn walk(dir: &Path, rel: &str, depth: usize, scan: &mut Scan) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        scan.visited += 1;
        if scan.visited > MAX_SCAN_ENTRIES {
            return;
        }
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') {
            continue;
        }
        // file_type() does not follow symlinks, so links cannot loop the walk.
        let Ok(kind) = entry.file_type() else { continue };
        let child_rel = if rel.is_empty() { name.to_string() } else { format!("{rel}/{name}") };
        if kind.is_dir() {
            let path = entry.path();
            let skip = matches!(name, "node_modules" | "__pycache__" | "site-packages")
                // virtualenvs and cargo's target/ mark themselves:
                || path.join("pyvenv.cfg").exists()
                || path.join("CACHEDIR.TAG").exists();
            if !skip && depth < MAX_SCAN_DEPTH {
                walk(&path, &child_rel, depth + 1, scan);
            }
        } else if kind.is_file() {
            if is_js_test(&child_rel, name) {
                scan.js_tests.push(child_rel);
            } else if name == "conftest.py"
                || (name.starts_with("test_") && name.ends_with(".py"))
                || name.ends_with("_test.py")
            {
                scan.python = true;
            }
        }
    }
}

fn is_js_test(rel: &str, name: &str) -> bool {
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    if !matches!(ext, "js" | "mjs" | "cjs") {
        return false;
    }
    let in_test_dir = rel.split('/').rev().skip(1).any(|dir| dir == "test" || dir == "tests");
    in_test_dir || stem.ends_with(".test") || stem.ends_with(".spec")
}

/// One shell word of a package.json script.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    text: String,
    /// Contains an unquoted `*`, `?` or `[`, which `sh` would expand.
    glob: bool,
}

/// Splits a script into words like `sh` would, or `None` when it uses anything beyond
/// plain words (operators, redirections, substitutions), which only a shell can run.
fn split_command(script: &str) -> Option<Vec<Word>> {
    let mut words = Vec::new();
    let mut current: Option<Word> = None;
    let mut chars = script.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(word) = current.take() {
                    words.push(word);
                }
            }
            '\'' => {
                let word = current.get_or_insert_with(empty_word);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        ch => word.text.push(ch),
                    }
                }
            }
            '"' => {
                let word = current.get_or_insert_with(empty_word);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' | '`' => return None,
                        '\\' => match chars.next()? {
                            ch @ ('"' | '\\' | '$' | '`') => word.text.push(ch),
                            '\n' => {}
                            ch => {
                                word.text.push('\\');
                                word.text.push(ch);
                            }
                        },
                        ch => word.text.push(ch),
                    }
                }
            }
            '\\' => {
                let next = chars.next()?;
                if next != '\n' {
                    current.get_or_insert_with(empty_word).text.push(next);
                }
            }
            '#' if current.is_none() => break,
            '~' if current.is_none() => return None,
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '$' | '`' | '{' | '}' => return None,
            '*' | '?' | '[' => {
                let word = current.get_or_insert_with(empty_word);
                word.glob = true;
                word.text.push(c);
            }
            _ => current.get_or_insert_with(empty_word).text.push(c),
        }
    }
    if let Some(word) = current.take() {
        words.push(word);
    }
    (!words.is_empty()).then_some(words)
}

fn empty_word() -> Word {
    Word { text: String::new(), glob: false }
}

/// Splits `A=1 B=2 cmd …` (and `cross-env A=1 cmd …`) into the env and the command.
fn leading_env(words: &[Word]) -> (Vec<(String, String)>, &[Word]) {
    let mut env = Vec::new();
    let mut rest = words;
    loop {
        match rest.first() {
            Some(w) if w.text == "cross-env" => rest = &rest[1..],
            Some(w) => match env_assignment(&w.text) {
                Some(pair) => {
                    env.push(pair);
                    rest = &rest[1..];
                }
                None => break,
            },
            None => break,
        }
    }
    (env, rest)
}

fn env_assignment(word: &str) -> Option<(String, String)> {
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| (name.to_string(), value.to_string()))
}

/// Expands a relative glob the way `sh` does for `npm test`: per path segment, `*`/`?`/
/// `[…]`, hidden files only when asked for, sorted; no match leaves the word as is.
fn expand_glob(root: &Path, pattern: &str) -> Vec<String> {
    if pattern.starts_with('/') {
        return vec![pattern.to_string()];
    }
    let mut candidates = vec![String::new()];
    for segment in pattern.split('/') {
        let mut next = Vec::new();
        for base in &candidates {
            let join = |name: &str| {
                if base.is_empty() { name.to_string() } else { format!("{base}/{name}") }
            };
            if segment.is_empty() || !segment.contains(['*', '?', '[']) {
                next.push(join(segment));
                continue;
            }
            let dir = if base.is_empty() { root.to_path_buf() } else { root.join(base) };
            let Ok(entries) = fs::read_dir(dir) else { continue };
            let mut names: Vec<String> = entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| !n.starts_with('.') || segment.starts_with('.'))
                .filter(|n| glob_match(segment.as_bytes(), n.as_bytes()))
                .collect();
            names.sort();
            next.extend(names.iter().map(|n| join(n)));
        }
        candidates = next;
    }
    let mut found: Vec<String> = candidates.into_iter().filter(|c| root.join(c).exists()).collect();
    found.sort();
    if found.is_empty() { vec![pattern.to_string()] } else { found }
}

/// Matches one path segment against a `sh` pattern (`*`, `?`, `[a-z]`, `[!x]`).
fn glob_match(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0usize, 0usize);
    let mut backtrack: Option<(usize, usize)> = None;
    while n < name.len() {
        let step = match pattern.get(p) {
            Some(b'*') => {
                backtrack = Some((p, n));
                p += 1;
                continue;
            }
            Some(b'?') => Some(p + 1),
            Some(b'[') => match class_match(pattern, p, name[n]) {
                Some((true, next_p)) => Some(next_p),
                Some((false, _)) => None,
                None => (name[n] == b'[').then_some(p + 1),
            },
            Some(&c) if c == name[n] => Some(p + 1),
            _ => None,
        };
        match step {
            Some(next_p) => {
                p = next_p;
                n += 1;
            }
            None => match backtrack {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    backtrack = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p.min(pattern.len())..].iter().all(|&c| c == b'*')
}

/// Matches `[…]` at `pattern[start]`: (matched, index after the class), or `None` when
/// the `[` is never closed and so, as in `sh`, a literal.
fn class_match(pattern: &[u8], start: usize, c: u8) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = matches!(pattern.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let first = i;
    let mut matched = false;
    loop {
        let &b = pattern.get(i)?;
        if b == b']' && i > first {
            break;
        }
        if pattern.get(i + 1) == Some(&b'-') && pattern.get(i + 2).is_some_and(|&e| e != b']') {
            let hi = pattern[i + 2];
            matched |= (b..=hi).contains(&c);
            i += 3;
        } else {
            matched |= b == c;
            i += 1;
        }
    }
    Some((matched != negate, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(script: &str) -> Option<Vec<String>> {
        split_command(script).map(|w| w.into_iter().map(|w| w.text).collect())
    }

    #[test]
    fn splits_scripts_like_sh() {
        assert_eq!(
            words("node --test 'test dir/' \"a b\" c\\ d"),
            Some(vec!["node", "--test", "test dir/", "a b", "c d"].into_iter().map(String::from).collect())
        );
        assert_eq!(words("npm run build && node --test"), None);
        assert_eq!(words("node --test > out.txt"), None);
        assert_eq!(words("node --test $DIR"), None);
        assert_eq!(words("node --test 'unterminated"), None);
        let glob = split_command("node --test test/*.test.js 'lit*'").unwrap_or_default();
        assert!(glob[2].glob);
        assert!(!glob[3].glob);
    }

    #[test]
    fn glob_matching() {
        assert!(glob_match(b"*.test.js", b"a.test.js"));
        assert!(!glob_match(b"*.test.js", b"a.spec.js"));
        assert!(glob_match(b"a?c", b"abc"));
        assert!(glob_match(b"[a-c]x", b"bx"));
        assert!(!glob_match(b"[!a-c]x", b"bx"));
        assert!(glob_match(b"*", b""));
        assert!(glob_match(b"**", b"abc"));
        assert!(glob_match(b"[x", b"[x"));
    }

    #[test]
    fn env_prefixes() {
        let command = split_command("cross-env NODE_ENV=test A_1=x jest --ci").unwrap_or_default();
        let (env, rest) = leading_env(&command);
        assert_eq!(env, vec![("NODE_ENV".to_string(), "test".to_string()), ("A_1".to_string(), "x".to_string())]);
        assert_eq!(rest[0].text, "jest");
        assert!(mentions_jest("npx jest --coverage"));
        assert!(mentions_jest("node node_modules/.bin/jest"));
        assert!(!mentions_jest("ts-jest-runner"));
    }
}
