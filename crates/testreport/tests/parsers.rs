//! Parser tests against output recorded from the real tools (see tests/fixtures/README.md).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use wright_testreport::{
    Format, ParseError, TestFailure, TestReport, parse, parse_jest_json, parse_junit_xml, parse_libtest, parse_tap,
};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn counts(r: &TestReport) -> (u32, u32, u32, u32) {
    (r.passed, r.failed, r.skipped, r.total)
}

fn failure<'a>(r: &'a TestReport, test: &str) -> &'a TestFailure {
    r.errors.iter().find(|f| f.test == test).unwrap_or_else(|| panic!("no failure named {test:?} in {:#?}", r.errors))
}

// ---------- node 20 TAP ----------

#[test]
fn node_passing_test() {
    let r = parse_tap(&fixture("node20_pass.tap")).unwrap();
    assert_eq!(counts(&r), (1, 0, 0, 1));
    assert!(r.errors.is_empty());
}

#[test]
fn node_failing_strict_equal() {
    let r = parse_tap(&fixture("node20_fail.tap")).unwrap();
    assert_eq!(counts(&r), (1, 1, 0, 2));
    let f = failure(&r, "compares values");
    assert_eq!(
        f.error,
        "Expected values to be strictly equal:\n1 !== 2\nexpected: 2\nactual: 1\n\
         operator: strictEqual\nat /tmp/tr/node/fail.test.js:7:10"
    );
    assert_eq!(f.location.as_deref(), Some("/tmp/tr/node/fail.test.js:6:1"));
}

#[test]
fn node_syntax_error_file_reports_what_node_printed() {
    let r = parse_tap(&fixture("node20_syntax.tap")).unwrap();
    assert_eq!(counts(&r), (0, 1, 0, 1));
    let f = failure(&r, "/tmp/tr/node/syntax.test.js");
    assert!(f.error.starts_with("test file failed (exit code 1)\n"), "{}", f.error);
    assert!(f.error.contains("SyntaxError: Unexpected token ';'"), "{}", f.error);
    assert!(f.error.contains("  let x = ;"), "{}", f.error);
    // node's own frames and version banner are noise
    assert!(!f.error.contains("node:internal"), "{}", f.error);
    assert!(!f.error.contains("Node.js v20"), "{}", f.error);
    // the line node pointed at, not the useless 1:1 of the synthetic file test
    assert_eq!(f.location.as_deref(), Some("/tmp/tr/node/syntax.test.js:3"));
}

#[test]
fn node_esm_load_error_among_passing_files() {
    let r = parse_tap(&fixture("node20_dir_esm_error.tap")).unwrap();
    assert_eq!(counts(&r), (2, 1, 0, 3));
    let f = failure(&r, "/tmp/tr/dirs/test/helper.mjs");
    assert!(f.error.contains("ReferenceError: require is not defined in ES module scope"), "{}", f.error);
    assert!(f.error.contains("at file:///tmp/tr/dirs/test/helper.mjs:1:1"));
    assert!(!f.error.contains("ModuleJob.run"), "{}", f.error);
    assert_eq!(f.location.as_deref(), Some("/tmp/tr/dirs/test/helper.mjs:1"));
}

#[test]
fn node_nested_describe_counts_leaves_only() {
    let r = parse_tap(&fixture("node20_nested.tap")).unwrap();
    // suites `math` and `division` fail with subtestsFailed: no extra failures
    assert_eq!(counts(&r), (2, 2, 0, 4));
    assert_eq!(r.errors.len(), 2);
    let f = failure(&r, "math > division > fails to divide");
    assert!(f.error.starts_with("Expected values to be strictly deep-equal:\n+ actual - expected"));
    assert!(f.error.contains("expected:\n  a: 2\nactual:\n  a: 1\noperator: deepStrictEqual"));
    assert_eq!(f.location.as_deref(), Some("/tmp/tr/node/nested.test.js:7:5"));
    let f = failure(&r, "math > throws plain error");
    assert_eq!(f.error, "boom\nat /tmp/tr/node/nested.test.js:9:42");
    assert_eq!(f.location.as_deref(), Some("/tmp/tr/node/nested.test.js:9:3"));
}

#[test]
fn node_test_parents_are_not_counted_as_tests() {
    // node's own counters say tests 6 / pass 1 / fail 4 / todo 1: they count the two
    // test() parents; leaves are child ok, child bad, inner and the todo.
    let r = parse_tap(&fixture("node20_subtests.tap")).unwrap();
    assert_eq!(counts(&r), (1, 2, 1, 4));
    let f = failure(&r, "parent > child bad");
    assert!(f.error.starts_with("TypeError: Cannot read properties of undefined (reading 'call')"));
    assert!(f.error.ends_with("at /tmp/tr/node/subtests.test.js:7:9"));
    let f = failure(&r, "with hook > inner");
    assert!(f.error.starts_with("hook exploded"));
    // a failing todo test is not a failure
    assert!(r.errors.iter().all(|f| f.test != "todo failing"));
}

#[test]
fn node_suite_hook_failure_and_cancelled_tests() {
    let r = parse_tap(&fixture("node20_suitehook.tap")).unwrap();
    // 2 cancelled tests + the suite whose before() hook threw + a throwing describe body
    assert_eq!(counts(&r), (0, 4, 0, 4));
    assert_eq!(failure(&r, "db > reads").error, "test did not finish before its parent and was cancelled");
    assert!(failure(&r, "db").error.starts_with("cannot connect"));
    assert_eq!(failure(&r, "bad suite").location.as_deref(), Some("/tmp/tr/node/suitehook.test.js:7:1"));
}

#[test]
fn node_skip_and_todo() {
    let r = parse_tap(&fixture("node20_skip.tap")).unwrap();
    assert_eq!(counts(&r), (1, 0, 3, 4));
}

#[test]
fn node_run_without_tests_is_an_empty_report() {
    let r = parse_tap(&fixture("node20_notests.tap")).unwrap();
    assert_eq!(r, TestReport::default());
}

#[test]
fn npm_script_with_node_options_reporter() {
    // The script's own console.log line comes before the TAP.
    let r = parse_tap(&fixture("npm_node_options.tap")).unwrap();
    assert_eq!(counts(&r), (1, 1, 0, 2));
    let f = failure(&r, "shouts");
    assert!(f.error.contains("'HI' !== 'HI!'"));
    assert!(f.error.contains("expected: 'HI!'\nactual: 'HI'"), "{}", f.error);
}

#[test]
fn tap_of_something_else_is_no_results() {
    assert!(matches!(parse_tap(""), Err(ParseError::NoResults)));
    assert!(matches!(parse_tap("> wright@1.0.0 test\n> mocha\n\n  3 passing\n"), Err(ParseError::NoResults)));
}

// ---------- jest 30 --json ----------

#[test]
fn jest_pass_fail_skip_todo_and_broken_suite() {
    let r = parse_jest_json(&fixture("jest30_report.json")).unwrap();
    // 2 passed, 1 failed assertion + 1 suite that failed to run, 1 skipped + 1 todo
    assert_eq!(counts(&r), (2, 2, 2, 6));
    let f = failure(&r, "math subtracts wrongly");
    assert_eq!(
        f.error,
        "Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 1\n\
         Received: 2\n    at Object.toBe (/tmp/tr/jest/math.test.js:6:19)"
    );
    assert_eq!(f.location.as_deref(), Some("/tmp/tr/jest/math.test.js:5:3"));
    let f = failure(&r, "/tmp/tr/jest/broken.test.js");
    assert!(f.error.starts_with("Test suite failed to run\nJest encountered an unexpected token\n"));
    assert!(f.error.contains("SyntaxError: /tmp/tr/jest/broken.test.js: Unexpected token (2:12)"));
    assert!(f.error.contains("> 2 |   const x = ;"));
    // jest's advice paragraphs are dropped
    assert!(!f.error.contains("transformIgnorePatterns"), "{}", f.error);
    assert_eq!(f.location.as_deref(), Some("/tmp/tr/jest/broken.test.js"));
}

#[test]
fn jest_colours_are_stripped() {
    let text = fixture("jest30_force_color.json");
    assert!(text.contains("\\u001b["), "fixture should carry real ANSI codes");
    let r = parse_jest_json(&text).unwrap();
    assert_eq!(counts(&r), (1, 1, 2, 4));
    let f = failure(&r, "math subtracts wrongly");
    assert!(!f.error.contains('\u{1b}'));
    assert!(f.error.starts_with("Error: expect(received).toBe(expected) // Object.is equality"));
}

#[test]
fn jest_without_tests_and_with_noise_around_the_json() {
    let json = fixture("jest30_no_tests.json");
    assert_eq!(parse_jest_json(&json).unwrap(), TestReport::default());
    let noisy = format!("console.log output\n{}\ntrailing text\n", fixture("jest30_report.json"));
    assert_eq!(counts(&parse_jest_json(&noisy).unwrap()), (2, 2, 2, 6));
}

#[test]
fn jest_bad_input() {
    assert!(matches!(parse_jest_json("  "), Err(ParseError::NoResults)));
    assert!(matches!(parse_jest_json("FAIL ./a.test.js"), Err(ParseError::NoResults)));
    assert!(matches!(parse_jest_json("{\"testResults\": [1,"), Err(ParseError::Malformed(_))));
    assert!(matches!(parse_jest_json("{\"a\": 1}"), Err(ParseError::Malformed(_))));
}

// ---------- pytest 9 --junitxml ----------

#[test]
fn pytest_xunit1_pass_fail_error_skip() {
    let r = parse_junit_xml(&fixture("pytest9_xunit1.xml")).unwrap();
    assert_eq!(counts(&r), (2, 2, 1, 5));
    let f = failure(&r, "tests/test_calc.py::test_add_wrong");
    assert!(f.error.starts_with("assert 4 == 5\n +  where 4 = add(2, 2)\n\ndef test_add_wrong():"));
    assert!(f.error.contains(">       assert add(2, 2) == 5"));
    assert_eq!(f.location.as_deref(), Some("tests/test_calc.py:13"));
    let f = failure(&r, "tests/test_calc.py::test_uses_fixture");
    assert!(f.error.starts_with("failed on setup with \"RuntimeError: database unavailable\""));
    assert_eq!(f.location.as_deref(), Some("tests/test_calc.py:18"));
}

#[test]
fn pytest_xunit2_names_from_classname() {
    let r = parse_junit_xml(&fixture("pytest9_xunit2.xml")).unwrap();
    assert_eq!(counts(&r), (2, 2, 1, 5));
    let f = failure(&r, "tests.test_calc::test_add_wrong");
    assert_eq!(f.location.as_deref(), Some("tests/test_calc.py:13"));
}

#[test]
fn pytest_collection_errors() {
    let r = parse_junit_xml(&fixture("pytest9_collection_error.xml")).unwrap();
    assert_eq!(counts(&r), (0, 2, 0, 2));
    let f = failure(&r, "test_bad");
    assert!(f.error.starts_with("collection failure"));
    assert!(f.error.contains("E   SyntaxError: invalid syntax"));
    // pytest's import machinery frames are dropped
    assert!(!f.error.contains("_pytest/python.py"), "{}", f.error);
    assert_eq!(f.location.as_deref(), Some("/tmp/tr/py2/test_bad.py:1"));
    let f = failure(&r, "test_imp");
    assert!(f.error.contains("ModuleNotFoundError: No module named 'missing_mod'"));
    assert_eq!(f.location.as_deref(), Some("test_imp.py:1"));
}

#[test]
fn pytest_no_tests() {
    let r = parse_junit_xml(&fixture("pytest9_no_tests.xml")).unwrap();
    assert_eq!(r, TestReport::default());
}

#[test]
fn junit_bad_input() {
    assert!(matches!(parse_junit_xml(""), Err(ParseError::NoResults)));
    assert!(matches!(parse_junit_xml("no xml here"), Err(ParseError::NoResults)));
    assert!(matches!(parse_junit_xml("<testsuite><testcase name=\"a\"></testsuite>"), Err(ParseError::Malformed(_))));
}

#[test]
fn junit_location_falls_back_to_file_and_zero_based_line() {
    let xml = r#"<testsuite><testcase classname="m" name="t" file="t.py" line="4"><failure message="boom"/></testcase></testsuite>"#;
    let r = parse_junit_xml(xml).unwrap();
    assert_eq!(counts(&r), (0, 1, 0, 1));
    assert_eq!(r.errors[0].error, "boom");
    assert_eq!(r.errors[0].location.as_deref(), Some("t.py:5"));
}

// ---------- cargo test (libtest) ----------

#[test]
fn cargo_all_binaries_are_summed() {
    let r = parse_libtest(&fixture("cargo_no_fail_fast.stdout")).unwrap();
    // lib: 1 passed 2 failed 1 ignored; tests/integration.rs: 1 passed 1 failed; doc-tests: 0
    assert_eq!(counts(&r), (2, 3, 1, 6));
    let f = failure(&r, "tests::adds_wrong");
    assert_eq!(f.error, "panicked at src/lib.rs:16:9:\nassertion `left == right` failed\n  left: 4\n right: 5");
    assert_eq!(f.location.as_deref(), Some("src/lib.rs:16:9"));
    let f = failure(&r, "tests::prints_then_panics");
    assert_eq!(f.error, "some debug output\n\npanicked at src/lib.rs:26:9:\ncustom failure message");
    let f = failure(&r, "integration_fail");
    assert_eq!(f.error, "panicked at tests/integration.rs:8:5:\nsum was 2");
    assert_eq!(f.location.as_deref(), Some("tests/integration.rs:8:5"));
}

#[test]
fn cargo_backtraces_are_dropped() {
    let r = parse_libtest(&fixture("cargo_fail_fast_backtrace.stdout")).unwrap();
    assert_eq!(counts(&r), (1, 2, 1, 4));
    let f = failure(&r, "tests::adds_wrong");
    assert!(!f.error.contains("stack backtrace"), "{}", f.error);
    assert!(!f.error.contains("rust_begin_unwind"), "{}", f.error);
    assert!(f.error.ends_with("right: 5"));
}

#[test]
fn cargo_should_panic_result_err_and_doctest() {
    let r = parse_libtest(&fixture("cargo_doctest_should_panic.stdout")).unwrap();
    assert_eq!(counts(&r), (0, 3, 0, 3));
    let f = failure(&r, "tests::should_have_panicked");
    assert_eq!(f.error, "note: test did not panic as expected at src/lib.rs:14:8");
    assert_eq!(f.location.as_deref(), Some("src/lib.rs:14:8"));
    let f = failure(&r, "tests::returns_err");
    assert_eq!(f.error, "Error: \"bad result\"");
    assert_eq!(f.location, None);
    let f = failure(&r, "src/lib.rs - double (line 3)");
    assert!(f.error.contains("assertion `left == right` failed"));
    assert_eq!(f.location.as_deref(), Some("src/lib.rs:5:1"));
}

#[test]
fn cargo_build_error_is_no_results() {
    // Compiler errors go to stderr; stdout stays empty.
    assert!(fixture("cargo_build_error.stdout").is_empty());
    assert!(fixture("cargo_build_error.stderr").contains("error[E0308]: mismatched types"));
    assert!(matches!(parse_libtest(&fixture("cargo_build_error.stdout")), Err(ParseError::NoResults)));
    assert!(matches!(parse_libtest(&fixture("cargo_build_error.stderr")), Err(ParseError::NoResults)));
}

#[test]
fn cargo_binary_that_dies_mid_run() {
    let text = "\nrunning 3 tests\ntest a ... ok\ntest b ... \n";
    let r = parse_libtest(text).unwrap();
    assert_eq!(counts(&r), (1, 1, 0, 2));
    assert_eq!(r.errors[0].test, "b");
    assert!(r.errors[0].error.contains("stopped while this test was running"));
}

// ---------- shared behaviour ----------

#[test]
fn dispatch_by_format() {
    let r = parse(Format::Tap, &fixture("node20_fail.tap")).unwrap();
    assert_eq!(r.failed, 1);
    let r = parse(Format::JestJson, &fixture("jest30_report.json")).unwrap();
    assert_eq!(r.failed, 2);
    let r = parse(Format::JunitXml, &fixture("pytest9_xunit1.xml")).unwrap();
    assert_eq!(r.failed, 2);
    let r = parse(Format::Libtest, &fixture("cargo_no_fail_fast.stdout")).unwrap();
    assert_eq!(r.failed, 3);
}

#[test]
fn long_errors_are_cut() {
    let long = "x".repeat(10_000);
    let tap = format!("not ok 1 - big\n  ---\n  error: '{long}'\n  ...\n1..1\n");
    let r = parse_tap(&tap).unwrap();
    let error = &r.errors[0].error;
    assert!(error.chars().count() < 2_100);
    assert!(error.ends_with("[cut: 8000 more characters]"), "{}", &error[error.len() - 60..]);
}

#[test]
fn report_serialises_as_the_model_sees_it() {
    let r = parse_tap(&fixture("node20_fail.tap")).unwrap();
    let json = serde_json::to_value(&r.errors[0]).unwrap();
    assert_eq!(json["test"], "compares values");
    assert_eq!(json["location"], "/tmp/tr/node/fail.test.js:6:1");
    let back: TestReport = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back, r);
}

#[test]
fn paths_can_be_made_project_relative() {
    let mut r = parse_tap(&fixture("node20_fail.tap")).unwrap();
    r.relativize_paths(std::path::Path::new("/tmp/tr/node/"));
    assert_eq!(r.errors[0].location.as_deref(), Some("fail.test.js:6:1"));
    assert!(r.errors[0].error.ends_with("at fail.test.js:7:10"));
}

#[test]
fn absurd_counters_saturate() {
    let max = u64::MAX;
    let tap = format!("# tests {max}\n# pass {max}\n# fail {max}\n# cancelled 5\n# todo {max}\n# skipped 1\n");
    let r = parse_tap(&tap).unwrap();
    assert_eq!((r.failed, r.total), (u32::MAX, u32::MAX));
    let line = format!("test result: ok. {max} passed; {max} failed; {max} ignored; 0 measured\n");
    let r = parse_libtest(&format!("running 1 test\n{line}running 1 test\n{line}")).unwrap();
    assert_eq!((r.passed, r.total), (u32::MAX, u32::MAX));
}

// ---------- Vitest 4 --reporter=json (jest's format) ----------

#[test]
fn vitest_json_report_reads_as_jest_with_the_failing_line() {
    let r = parse(Format::JestJson, &fixture("vitest4_report.json")).unwrap();
    assert_eq!(counts(&r), (1, 1, 0, 2));
    let f = failure(&r, "counter adds one");
    assert!(f.error.starts_with("AssertionError: expected '1 clicks' to contain '2'"), "{}", f.error);
    // Vitest gives no `location`; the first stack frame in the test file does.
    assert_eq!(f.location.as_deref(), Some("/tmp/tr/vitest/src/App.test.tsx:15:56"));
}

// ---------- go test -json (Go 1.19, stderr merged) ----------

#[test]
fn go_passing_package_counts_subtests_not_their_parent() {
    let r = parse(Format::GoTestJson, &fixture("go119_pass.jsonl")).unwrap();
    // TestAdd, and TestAddTable's two subtests (the parent is not a test of its own).
    assert_eq!(counts(&r), (3, 0, 0, 3));
    assert!(r.errors.is_empty());
}

#[test]
fn go_failing_tests_carry_their_output_and_line() {
    let r = wright_testreport::parse_go_test_json(&fixture("go119_fail.jsonl")).unwrap();
    // pass: TestAdd, TestTable/ok; fail: TestAddWrong, TestTable/bad; skip: TestLater.
    assert_eq!(counts(&r), (2, 2, 1, 5));
    let f = failure(&r, "example.com/fail > TestAddWrong");
    assert_eq!(f.error, "calc_test.go:12: checking 2+2\ncalc_test.go:14: Add(2, 2) = 4, want 5");
    assert_eq!(f.location.as_deref(), Some("calc_test.go:12"));
    let f = failure(&r, "example.com/fail > TestTable/bad");
    assert_eq!(f.error, "calc_test.go:22: Add(2, 3) = 5, want 6");
    assert_eq!(f.location.as_deref(), Some("calc_test.go:22"));
    assert_eq!(r.errors.len(), 2, "the failing parent is not reported again: {:#?}", r.errors);
}

#[test]
fn go_build_failure_is_the_packages_error_with_the_compilers_place() {
    let r = parse(Format::GoTestJson, &fixture("go119_builderr.jsonl")).unwrap();
    // The other package's test passed; the broken package is one failure.
    assert_eq!(counts(&r), (1, 1, 0, 2));
    let f = failure(&r, "example.com/builderr");
    assert_eq!(f.error, "the package does not compile:\n./greet.go:4:9: undefined: undefinedName");
    assert_eq!(f.location.as_deref(), Some("greet.go:4:9"));
}

#[test]
fn go_panic_keeps_the_message_and_the_tests_own_frame() {
    let r = parse(Format::GoTestJson, &fixture("go119_panic.jsonl")).unwrap();
    assert_eq!(counts(&r), (1, 1, 0, 2));
    let f = failure(&r, "example.com/panic > TestIndex");
    assert!(f.error.starts_with("panic: runtime error: index out of range [3] with length 0"), "{}", f.error);
    assert!(
        f.error.contains("example.com/panic.TestIndex(0xc000007ba0?)\n\t/tmp/tr/go/panic/calc_test.go:9"),
        "{}",
        f.error
    );
    assert!(!f.error.contains("testing.go"), "go's own frames are noise: {}", f.error);
    assert_eq!(f.location.as_deref(), Some("/tmp/tr/go/panic/calc_test.go:9"));
    let mut r = r;
    r.relativize_paths(std::path::Path::new("/tmp/tr/go/panic"));
    assert_eq!(r.errors[0].location.as_deref(), Some("calc_test.go:9"));
}

#[test]
fn go_package_that_cannot_load_is_one_failure_with_gos_words() {
    let r = parse(Format::GoTestJson, &fixture("go119_missing_module.jsonl")).unwrap();
    assert_eq!(counts(&r), (0, 1, 0, 1));
    let f = &r.errors[0];
    assert!(f.error.contains("cannot find module providing package example.com/nope"), "{}", f.error);
    assert_eq!(f.location.as_deref(), Some("lib.go:3:8"));
}

#[test]
fn go_test_stopped_by_its_timeout_is_the_failure_at_its_line() {
    let r = parse(Format::GoTestJson, &fixture("go119_timeout.jsonl")).unwrap();
    assert_eq!(counts(&r), (1, 1, 0, 2));
    let f = failure(&r, "example.com/hang > TestForever");
    assert_eq!(
        f.error,
        "panic: test timed out after 1s\nexample.com/hang.TestForever(0xc000096680?)\n\t/tmp/tr/go/hang/h_test.go:10"
    );
    assert_eq!(f.location.as_deref(), Some("/tmp/tr/go/hang/h_test.go:10"));
}

#[test]
fn go_vet_failure_reads_as_a_build_failure() {
    let r = parse(Format::GoTestJson, &fixture("go119_vet.jsonl")).unwrap();
    assert_eq!(counts(&r), (0, 1, 0, 1));
    let f = failure(&r, "example.com/vet");
    assert!(f.error.contains("fmt.Printf format %d has arg \"x\" of wrong type string"), "{}", f.error);
    assert_eq!(f.location.as_deref(), Some("v_test.go:8:28"));
}

#[test]
fn go_package_failing_after_its_tests_is_a_failure() {
    let r = parse(Format::GoTestJson, &fixture("go119_testmain_exit.jsonl")).unwrap();
    assert_eq!(counts(&r), (1, 1, 0, 2));
    let f = failure(&r, "example.com/exit");
    assert_eq!(f.error, "the package's test binary failed outside any test (TestMain, an init function or os.Exit)");
}

#[test]
fn go_newer_build_events_are_read_too() {
    // Go 1.24 reports compile errors as events.
    let text = r##"{"ImportPath":"example.com/b [example.com/b.test]","Action":"build-output","Output":"# example.com/b [example.com/b.test]\n"}
{"ImportPath":"example.com/b [example.com/b.test]","Action":"build-output","Output":"./b.go:3:9: undefined: y\n"}
{"ImportPath":"example.com/b [example.com/b.test]","Action":"build-fail"}
{"Action":"start","Package":"example.com/b"}
{"Action":"output","Package":"example.com/b","Output":"FAIL\texample.com/b [build failed]\n"}
{"Action":"fail","Package":"example.com/b","Elapsed":0,"FailedBuild":"example.com/b [example.com/b.test]"}
"##;
    let r = parse(Format::GoTestJson, text).unwrap();
    assert_eq!(counts(&r), (0, 1, 0, 1), "{r:#?}");
    assert_eq!(r.errors[0].location.as_deref(), Some("b.go:3:9"));
    assert!(matches!(parse(Format::GoTestJson, "nothing to see\n"), Err(ParseError::NoResults)));
}
