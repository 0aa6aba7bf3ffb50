//! Python, Rust and Go projects end to end: the real `wright` binary, a scripted model, and the
//! real toolchains in the sandbox (pytest, `cargo test`, `go test -json`). Each build's first
//! test run fails, one fix makes it pass, the program answers `--help`, and the build ends
//! PUBLISHED.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use serde_json::{Value, json};
use support::{MockLlm, Run, Turn, assert_contract, wright};

/// Whether `program` runs here. `cargo xtask setup` installs every toolchain these tests use
/// (they are wright's prerequisites for these kinds), so a missing one fails the test with the
/// reason rather than passing it unseen.
fn have(program: &str, args: &[&str]) -> bool {
    let ok = std::process::Command::new(program).args(args).output().is_ok_and(|o| o.status.success());
    assert!(ok, "`{program} {}` does not work here; `cargo xtask setup` installs it", args.join(" "));
    ok
}

/// A build that writes `files`, is told its tests fail, writes `fix`, and is done.
fn turns(files: &[(&str, &str)], fix: (&str, &str)) -> Vec<Turn> {
    let writes: Vec<(&str, Value)> =
        files.iter().map(|(path, content)| ("createFile", json!({"path": path, "content": content}))).collect();
    vec![
        Turn::calls(&writes),
        Turn::text("I wrote the program and its tests."),
        Turn::calls(&[("updateFile", json!({"path": fix.0, "content": fix.1}))]),
        Turn::text("Fixed."),
    ]
}

/// Red, one fix, green, published; the failing test named with its file.
fn assert_red_then_green(run: &Run, failing: &str, file: &str) {
    assert_eq!(run.code, 0, "stderr: {}\nstdout: {}", run.stderr, run.stdout);
    assert_contract(run);
    assert_eq!(
        run.phases(),
        vec!["PLANNING:0", "GENERATING:0", "VERIFYING:0", "FIXING:1", "VERIFYING:1", "LEARNING:1", "PUBLISHED:1"],
        "{}",
        run.stdout
    );
    let tests = run.of_type("tests_finished");
    let first = tests[0];
    assert_eq!(first["failed"], 1, "{first}");
    let error = &first["errors"][0];
    assert!(error["test"].as_str().unwrap().contains(failing), "{error}");
    assert!(error["location"].as_str().unwrap_or_default().contains(file), "{error}");
    let last = tests.last().unwrap();
    assert_eq!(last["failed"], 0, "{last}");
    assert!(last["passed"].as_u64().unwrap() >= 2, "{last}");
    assert_eq!(run.of_type("error_detected").len(), 1);
    assert_eq!(run.of_type("error_detected")[0]["kind"], "test_failure");
    // The program was started the way a person would: with --help.
    let helps = run
        .of_type("command_started")
        .into_iter()
        .filter(|e| e["args"].as_array().unwrap().iter().any(|a| a == "--help"))
        .count();
    assert!(helps > 0, "no --help run");
    assert_eq!(run.of_type("complete")[0]["success"], true);
    assert_eq!(run.of_type("packages_ready").len(), 1, "installed once for the whole build");
}

const WORDCOUNT_BUGGY: &str = "def count_words(text: str) -> int:\n    return len(text.split(\" \"))\n";
const WORDCOUNT_FIXED: &str = "def count_words(text: str) -> int:\n    return len(text.split())\n";
const WORDCOUNT_MAIN: &str = r#"import argparse

from wordcount import count_words


def main() -> None:
    parser = argparse.ArgumentParser(description="Count the words in a file.")
    parser.add_argument("file")
    args = parser.parse_args()
    with open(args.file, encoding="utf-8") as f:
        print(count_words(f.read()))


if __name__ == "__main__":
    main()
"#;
const WORDCOUNT_TESTS: &str = r#"from wordcount import count_words


def test_counts_words():
    assert count_words("one two three") == 3


def test_extra_spaces_and_empty_text():
    assert count_words("hello   world\n") == 2
    assert count_words("") == 0
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_script_with_tests_is_fixed_once_and_published() {
    if !have("/usr/bin/python3", &["-c", "import venv, ensurepip"])
        || !have("/usr/bin/python3", &["-m", "pytest", "--version"])
    {
        return;
    }
    let mock = MockLlm::start(turns(
        &[("wordcount.py", WORDCOUNT_BUGGY), ("main.py", WORDCOUNT_MAIN), ("tests/test_wordcount.py", WORDCOUNT_TESTS)],
        ("wordcount.py", WORDCOUNT_FIXED),
    ))
    .await;
    let run = wright(&mock.base_url, "a python script that counts words in a file, with tests", &[]).await;
    assert_red_then_green(&run, "test_extra_spaces_and_empty_text", "tests/test_wordcount.py");
    // Planned as a Python program (auto), with the Python rules in the system prompt.
    let planning = run.of_type("phase")[0]["message"].as_str().unwrap().to_string();
    assert!(planning.contains("Python"), "{planning}");
    let system = mock.requests()[0]["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(system.contains("pytest") && !system.contains("<meta name=\"description\""), "{system}");
    // The runner is pytest, and nothing was published at an address: a program has no page.
    let results: Vec<String> =
        run.of_type("tool_result").iter().map(|e| e["summary"].as_str().unwrap_or_default().to_string()).collect();
    assert!(run.stdout.contains("pytest"), "{results:?}");
    assert!(run.of_type("complete")[0].get("app").is_none_or(Value::is_null));

    // The narration a person reads says the same: pytest's results, the fix, done.
    let mock = MockLlm::start(turns(
        &[("wordcount.py", WORDCOUNT_BUGGY), ("main.py", WORDCOUNT_MAIN), ("tests/test_wordcount.py", WORDCOUNT_TESTS)],
        ("wordcount.py", WORDCOUNT_FIXED),
    ))
    .await;
    let run = wright(
        &mock.base_url,
        "a python script that counts words in a file, with tests",
        &["--events", "human", "--lang", "en"],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    for line in [
        "Planning a Python program",
        "Tests: 1 passed, 1 failed",
        "test_extra_spaces_and_empty_text",
        "Tests: 2/2 passed",
        "--help",
        "Fixed!",
        "Done!",
    ] {
        assert!(run.stdout.contains(line), "missing {line:?} in:\n{}", run.stdout);
    }
    assert!(!run.stdout.contains(".pytest_cache"), "pytest's cache is not the person's code:\n{}", run.stdout);
}

const CARGO_TOML: &str = "[package]\nname = \"durations\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
const LIB_BUGGY: &str = r#"/// Seconds in a duration written like "1h30m" or "45s".
pub fn seconds(text: &str) -> Option<u64> {
    let mut total = 0;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let n: u64 = number.parse().ok()?;
        number.clear();
        total += match c {
            'h' => n * 60,
            'm' => n * 60,
            's' => n,
            _ => return None,
        };
    }
    number.is_empty().then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_and_seconds() {
        assert_eq!(seconds("2m5s"), Some(125));
    }

    #[test]
    fn hours_and_minutes() {
        assert_eq!(seconds("1h30m"), Some(5400));
    }
}
"#;
const RUST_MAIN: &str = r#"fn main() {
    let Some(arg) = std::env::args().nth(1) else {
        eprintln!("usage: durations DURATION");
        std::process::exit(2);
    };
    if arg == "--help" {
        println!("Print the seconds in a duration like 1h30m.\nusage: durations DURATION");
        return;
    }
    match durations::seconds(&arg) {
        Some(s) => println!("{s}"),
        None => {
            eprintln!("not a duration: {arg}");
            std::process::exit(1);
        }
    }
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_library_with_a_failing_cargo_test_is_fixed_once_and_published() {
    if !have("cargo", &["--version"]) {
        return;
    }
    let fixed = LIB_BUGGY.replace("'h' => n * 60,", "'h' => n * 3600,");
    let mock = MockLlm::start(turns(
        &[("Cargo.toml", CARGO_TOML), ("src/lib.rs", LIB_BUGGY), ("src/main.rs", RUST_MAIN)],
        ("src/lib.rs", &fixed),
    ))
    .await;
    let run = wright(&mock.base_url, "a Rust tool that turns durations like 1h30m into seconds, with tests", &[]).await;
    assert_red_then_green(&run, "hours_and_minutes", "src/lib.rs");
}

const GO_MOD: &str = "module wordcount\n\ngo 1.19\n";
const GO_BUGGY: &str = "package main\n\nimport \"strings\"\n\n// CountWords counts the words in text.\nfunc CountWords(text string) int {\n\treturn len(strings.Split(text, \" \"))\n}\n";
const GO_FIXED: &str = "package main\n\nimport \"strings\"\n\n// CountWords counts the words in text.\nfunc CountWords(text string) int {\n\treturn len(strings.Fields(text))\n}\n";
const GO_TESTS: &str = r#"package main

import "testing"

func TestCountsWords(t *testing.T) {
	if got := CountWords("one two three"); got != 3 {
		t.Fatalf("CountWords = %d, want 3", got)
	}
}

func TestExtraSpacesAndEmptyText(t *testing.T) {
	if got := CountWords("hello   world\n"); got != 2 {
		t.Errorf("CountWords(spaces) = %d, want 2", got)
	}
	if got := CountWords(""); got != 0 {
		t.Errorf("CountWords(empty) = %d, want 0", got)
	}
}
"#;
const GO_MAIN: &str = r#"package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	flag.Usage = func() { fmt.Println("Count the words in a file.\nusage: wordcount FILE") }
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	data, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(CountWords(string(data)))
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_go_program_with_failing_tests_parsed_per_test_is_fixed_once_and_published() {
    if !have("go", &["version"]) {
        return;
    }
    let mock = MockLlm::start(turns(
        &[("go.mod", GO_MOD), ("wordcount.go", GO_BUGGY), ("wordcount_test.go", GO_TESTS), ("main.go", GO_MAIN)],
        ("wordcount.go", GO_FIXED),
    ))
    .await;
    let run = wright(&mock.base_url, "a word counter in Go that counts words in a file, with tests", &[]).await;
    assert_red_then_green(&run, "TestExtraSpacesAndEmptyText", "wordcount_test.go");
    // Both failed checks of the one test are in its error, from go test -json's output.
    let error = run.of_type("tests_finished")[0]["errors"][0]["error"].as_str().unwrap().to_string();
    assert!(
        error.contains("CountWords(spaces) = 4, want 2") && error.contains("CountWords(empty) = 1, want 0"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_dependency_is_refused_with_its_reason_and_the_model_corrects_it() {
    if !have("/usr/bin/python3", &["-c", "import venv, ensurepip"])
        || !have("/usr/bin/python3", &["-m", "pytest", "--version"])
    {
        return;
    }
    let mock = MockLlm::start(vec![
        Turn::calls(&[
            ("createFile", json!({"path": "requirements.txt", "content": "git+https://example.invalid/evil.git\n"})),
            ("createFile", json!({"path": "wordcount.py", "content": WORDCOUNT_FIXED})),
            ("createFile", json!({"path": "main.py", "content": WORDCOUNT_MAIN})),
            ("createFile", json!({"path": "tests/test_wordcount.py", "content": WORDCOUNT_TESTS})),
            ("runTests", json!({})),
        ]),
        Turn::calls(&[("deleteFile", json!({"path": "requirements.txt"})), ("runTests", json!({}))]),
        Turn::text("Done: it needs no packages."),
    ])
    .await;
    let run = wright(&mock.base_url, "a python script that counts words in a file, with tests", &[]).await;
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, run.stdout);
    let refused = run.of_type("packages_refused");
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0]["ecosystem"], "python");
    let r = &refused[0]["refusals"][0];
    assert_eq!(r["file"], "requirements.txt");
    assert!(r["spec"].as_str().unwrap().contains("git+https://example.invalid/evil.git"), "{r}");
    assert!(!r["reason"].as_str().unwrap().is_empty());
    // The model read the refusal in the test run's result, and nothing of the project ran.
    let reqs = mock.requests();
    let second = serde_json::to_string(&reqs[1]["messages"]).unwrap();
    assert!(second.contains("refused") && second.contains("evil.git"), "{second}");
    let first_tests = run.of_type("tests_finished");
    assert_eq!(first_tests.len(), 2, "the refused run had no test results; the next two did (its own, then wright's)");
    assert_eq!(run.of_type("complete")[0]["success"], true);
}

const API_FIXED_PORT: &str = r#"import json
import os
from http.server import BaseHTTPRequestHandler, HTTPServer

from notes import add_note, NOTES


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps(NOTES).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", PORT_CHOICE), Handler).serve_forever()
"#;
const NOTES: &str = "NOTES = []\n\n\ndef add_note(text):\n    NOTES.append(text.strip())\n    return len(NOTES)\n";
const NOTES_TESTS: &str = "from notes import add_note, NOTES\n\n\ndef test_add_note_strips_and_counts():\n    assert add_note('  hi ') == 1\n    assert NOTES == ['hi']\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_api_must_start_on_its_port_and_answer() {
    if !have("/usr/bin/python3", &["-c", "import venv, ensurepip"])
        || !have("/usr/bin/python3", &["-m", "pytest", "--version"])
    {
        return;
    }
    let wrong = API_FIXED_PORT.replace("PORT_CHOICE", "1");
    let right = API_FIXED_PORT.replace("PORT_CHOICE", "int(os.environ.get(\"PORT\", 8000))");
    let mock = MockLlm::start(turns(
        &[("notes.py", NOTES), ("app.py", &wrong), ("tests/test_notes.py", NOTES_TESTS)],
        ("app.py", &right),
    ))
    .await;
    let run = wright(&mock.base_url, "a small Python API that keeps notes, with tests", &[]).await;
    assert_eq!(run.code, 0, "{}\n{}", run.stderr, run.stdout);
    let phases = run.phases();
    assert_eq!(phases.last().unwrap(), "PUBLISHED:1", "{phases:?}");
    // The first round: tests passed, but the API did not start where it was told to.
    let detected = run.of_type("error_detected");
    assert_eq!(detected.len(), 1, "{detected:?}");
    assert_eq!(detected[0]["kind"], "server_check");
    let fix = serde_json::to_string(&mock.requests()[2]["messages"]).unwrap();
    assert!(fix.contains("python3 app.py") && fix.contains("PORT"), "{fix}");
}
