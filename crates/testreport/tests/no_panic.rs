//! Whatever a runner (or a broken project) prints, parsing must not panic.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use proptest::prelude::*;
use wright_testreport::{Format, parse};

const FORMATS: [Format; 5] = [Format::Tap, Format::JestJson, Format::JunitXml, Format::Libtest, Format::GoTestJson];

/// Bits of the real formats, so that random input reaches deep into the parsers.
const PIECES: &[&str] = &[
    "ok 1 - a\n",
    "not ok 2 - b # SKIP\n",
    "    # Subtest: s\n",
    "  ---\n",
    "  ...\n",
    "  error: |-\n",
    "    x\n",
    "  location: '/a.js:1:1'\n",
    "  exitCode: 1\n",
    "# tests 3\n",
    "# fail 1\n",
    "1..2\n",
    "Bail out!\n",
    "\u{1b}[31m",
    "\u{1b}]8;;",
    "{\"testResults\":[",
    "{\"status\":\"failed\",\"assertionResults\":[{\"status\":\"failed\",\"failureMessages\":[\"e\"]}]}",
    "]}",
    "<testsuite>",
    "<testcase name=\"t\" file=\"a.py\" line=\"3\">",
    "<failure message=\"m\">",
    "&gt;",
    "&#10;",
    "&bogus;",
    "</failure>",
    "</testcase>",
    "<![CDATA[x]]>",
    "running 2 tests\n",
    "test a ... ok\n",
    "test b ... FAILED\n",
    "---- b stdout ----\n",
    "thread 'b' (1) panicked at src/lib.rs:1:1:\n",
    "stack backtrace:\n",
    "failures:\n",
    "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n",
    "{\"Action\":\"run\",\"Package\":\"p\",\"Test\":\"T\"}\n",
    "{\"Action\":\"output\",\"Package\":\"p\",\"Test\":\"T/s\",\"Output\":\"    a_test.go:3: x\\n\"}\n",
    "{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"T\"}\n",
    "{\"Action\":\"fail\",\"Package\":\"p\",\"FailedBuild\":\"p\"}\n",
    "{\"Action\":\"build-output\",\"ImportPath\":\"p\",\"Output\":\"./a.go:1:2: e\\n\"}\n",
    "# p [p.test]\n",
    "./a.go:4:9: undefined: x\n",
    "FAIL\tp [build failed]\n",
    "goroutine 7 [running]:\n",
    "p.TestX(0x1)\n",
    "\t/w/a_test.go:9 +0x1a\n",
    "é",
    "\\#",
    "\\",
    "'",
    "\"",
    ":",
    " ",
    "\n",
    "[",
    "*",
];

fn stitched() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![prop::sample::select(PIECES).prop_map(str::to_string), any::<String>(),], 0..40)
        .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        for format in FORMATS {
            let _ = parse(format, &text);
        }
    }

    #[test]
    fn format_shaped_text_never_panics(text in stitched()) {
        for format in FORMATS {
            if let Ok(report) = parse(format, &text) {
                // every listed failure is counted, and totals add up
                prop_assert!(report.failed as usize >= report.errors.len());
                prop_assert!(report.total >= report.passed + report.failed + report.skipped);
                for failure in &report.errors {
                    prop_assert!(failure.error.chars().count() <= wright_testreport::MAX_ERROR_CHARS + 60);
                    prop_assert!(!failure.error.contains('\x1b'), "ANSI left in {:?}", failure.error);
                }
            }
        }
    }
}
