//! The diagnosis fixtures are real tool output (`tests/fixtures/diagnose`, recorded by
//! `record.sh`).

use super::paths::*;
use super::patterns::*;
use super::*;

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!("../../tests/fixtures/diagnose/", $name, ".txt"))
    };
}

/// What one diagnosis should be; `None` fields must be absent.
struct Want {
    kind: ErrorKind,
    message: &'static str,
    file: Option<&'static str>,
    line: Option<u32>,
    library: Option<&'static str>,
    pattern: &'static str,
}

fn check(d: &Diagnosis, w: &Want) {
    assert_eq!(d.kind, w.kind, "kind of {d:?}");
    assert_eq!(d.message, w.message, "message of {d:?}");
    assert_eq!(d.file.as_deref(), w.file, "file of {d:?}");
    assert_eq!(d.line, w.line, "line of {d:?}");
    assert_eq!(d.library.as_deref(), w.library, "library of {d:?}");
    assert_eq!(d.pattern, w.pattern, "pattern of {d:?}");
}

fn only(text: &str, w: Want) -> Diagnosis {
    let all = diagnose(text);
    assert_eq!(all.len(), 1, "{all:#?}");
    check(&all[0], &w);
    all[0].clone()
}

const ASSERT_TEST: Want = Want {
    kind: ErrorKind::TestAssertion,
    message: "AssertionError: Expected values to be strictly equal:",
    file: Some("tests/assert.test.js"),
    line: Some(6),
    library: None,
    pattern: "Expected values to be strictly equal:",
};
const TYPE_TEST: Want = Want {
    kind: ErrorKind::Type,
    message: "TypeError: count.toFixed is not a function",
    file: Some("src/counter.js"),
    line: Some(2),
    library: None,
    pattern: "* is not a function",
};
const REF_TEST: Want = Want {
    kind: ErrorKind::Runtime,
    message: "ReferenceError: totl is not defined",
    file: Some("tests/ref.test.js"),
    line: Some(5),
    library: None,
    pattern: "* is not defined",
};
const MISSING_TEST: Want = Want {
    kind: ErrorKind::ModuleNotFound,
    message: "Error: Cannot find module 'express'",
    file: Some("tests/missing.test.js"),
    line: Some(2),
    library: Some("express"),
    pattern: "Cannot find module '*'",
};
const SYNTAX_TEST: Want = Want {
    kind: ErrorKind::Syntax,
    message: "SyntaxError: missing ) after argument list",
    file: Some("tests/syntax.test.js"),
    line: Some(5),
    library: None,
    pattern: "missing ) after argument list",
};
const LIB_TEST: Want = Want {
    kind: ErrorKind::Type,
    message: "TypeError: Cannot read properties of null (reading 'querySelector')",
    file: Some("tests/lib.test.js"),
    line: Some(5),
    library: Some("@acme/widgets"),
    pattern: "Cannot read properties of null (reading '*')",
};

#[test]
fn node_test_failing_assertion() {
    let d = only(fixture!("node_test_assert"), ASSERT_TEST);
    assert_eq!(d.column, Some(10));
}

#[test]
fn node_test_type_error_points_at_the_throwing_source_file() {
    let d = only(fixture!("node_test_type"), TYPE_TEST);
    assert_eq!(d.column, Some(39));
}

#[test]
fn node_test_reference_error() {
    only(fixture!("node_test_ref"), REF_TEST);
}

#[test]
fn node_test_missing_module_is_read_from_the_file_output_not_the_wrapper() {
    let d = only(fixture!("node_test_missing"), MISSING_TEST);
    assert_eq!(d.column, Some(17));
}

#[test]
fn node_test_syntax_error_uses_the_header_and_caret() {
    let d = only(fixture!("node_test_syntax"), SYNTAX_TEST);
    assert_eq!(d.column, Some(13));
}

#[test]
fn node_test_error_inside_a_scoped_package() {
    let d = only(fixture!("node_test_lib"), LIB_TEST);
    assert_eq!(d.column, Some(3));
}

#[test]
fn node_test_whole_run_keeps_order_and_skips_roll_ups() {
    let all = diagnose(fixture!("node_test_all"));
    let wants = [ASSERT_TEST, LIB_TEST, MISSING_TEST, REF_TEST, SYNTAX_TEST, TYPE_TEST];
    assert_eq!(all.len(), wants.len(), "{all:#?}");
    for (d, w) in all.iter().zip(&wants) {
        check(d, w);
    }
}

#[test]
fn parsed_test_failures_give_the_same_diagnoses_as_raw_tap() {
    // The failures of node_test_all.txt as the TAP parser reports them (and verification
    // hands them on): typed values, each diagnosed from its error text and location.
    let mut report = crate::parse_tap(fixture!("node_test_all")).unwrap();
    report.relativize_paths(std::path::Path::new("/tmp/wright-fixtures/src/todo-app"));
    let evidence: Vec<Evidence<'_>> = report.errors.iter().map(Evidence::Test).collect();
    let detail = diagnose_all(&evidence);
    let raw = diagnose(fixture!("node_test_all"));
    let key = |d: &Diagnosis| (d.kind, d.pattern.clone(), d.file.clone(), d.line, d.column);
    assert_eq!(detail.iter().map(key).collect::<Vec<_>>(), raw.iter().map(key).collect::<Vec<_>>());
    let libraries = |all: &[Diagnosis]| all.iter().map(|d| d.library.clone()).collect::<Vec<_>>();
    let mut expected = libraries(&raw);
    // The detail keeps only the project's own stack frame, so the package in the
    // node_modules frame above it is gone; a missing module is still named by its message.
    expected[1] = None;
    assert_eq!(libraries(&detail), expected);
    assert_eq!(detail[0].message, "Expected values to be strictly equal:");
    assert_eq!(detail[5].message, "TypeError: count.toFixed is not a function");
}

#[test]
fn node_type_error_in_a_server() {
    let d = only(
        fixture!("node_type_server"),
        Want {
            kind: ErrorKind::Type,
            message: "TypeError: Cannot read properties of undefined (reading 'reduce')",
            file: Some("server/index.js"),
            line: Some(3),
            library: None,
            pattern: "Cannot read properties of undefined (reading '*')",
        },
    );
    assert_eq!(d.column, Some(15));
}

#[test]
fn node_type_error_thrown_inside_a_package_blames_the_package_and_the_calling_file() {
    let d = only(
        fixture!("node_type_in_library"),
        Want {
            kind: ErrorKind::Type,
            message: "TypeError: s.padStart is not a function",
            file: Some("src/uselib.js"),
            line: Some(2),
            library: Some("left-pad"),
            pattern: "* is not a function",
        },
    );
    assert_eq!(d.column, Some(13));
}

#[test]
fn node_syntax_error_commonjs() {
    let d = only(
        fixture!("node_syntax_cjs"),
        Want {
            kind: ErrorKind::Syntax,
            message: "SyntaxError: Unexpected token ';'",
            file: Some("public/js/app.js"),
            line: Some(6),
            library: None,
            pattern: "Unexpected token '*'",
        },
    );
    assert_eq!(d.column, Some(3));
}

#[test]
fn node_syntax_error_esm_file_url_without_caret() {
    let d = only(
        fixture!("node_syntax_esm"),
        Want {
            kind: ErrorKind::Syntax,
            message: "SyntaxError: Unexpected end of input",
            file: Some("src/esm_syntax.mjs"),
            line: Some(5),
            library: None,
            pattern: "Unexpected end of input",
        },
    );
    assert_eq!(d.column, None);
}

#[test]
fn node_esm_missing_package() {
    only(
        fixture!("node_esm_missing_package"),
        Want {
            kind: ErrorKind::ModuleNotFound,
            message: "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'express' imported from /tmp/wright-fixtures/src/todo-app/server/esm.mjs",
            file: Some("server/esm.mjs"),
            line: None,
            library: Some("express"),
            pattern: "Cannot find package '*' imported from *",
        },
    );
}

#[test]
fn node_esm_missing_relative_file_has_no_library() {
    only(
        fixture!("node_esm_missing_relative"),
        Want {
            kind: ErrorKind::ModuleNotFound,
            message: "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/tmp/wright-fixtures/src/todo-app/src/helpers.js' imported from /tmp/wright-fixtures/src/todo-app/src/esm_rel.mjs",
            file: Some("src/esm_rel.mjs"),
            line: None,
            library: None,
            pattern: "Cannot find module '*' imported from *",
        },
    );
}

#[test]
fn node_esm_throw_with_file_url_frames() {
    let d = only(
        fixture!("node_esm_throw"),
        Want {
            kind: ErrorKind::Runtime,
            message: "Error: user 42 not found",
            file: Some("src/reject.mjs"),
            line: Some(1),
            library: None,
            pattern: "user * not found",
        },
    );
    assert_eq!(d.column, Some(38));
}

#[test]
fn node_range_error() {
    only(
        fixture!("node_range"),
        Want {
            kind: ErrorKind::Runtime,
            message: "RangeError: Invalid array length",
            file: Some("src/range.js"),
            line: Some(1),
            library: None,
            pattern: "Invalid array length",
        },
    );
}

#[test]
fn node_uncaught_assertion_outside_a_test_runner() {
    only(
        fixture!("node_assert_uncaught"),
        Want {
            kind: ErrorKind::TestAssertion,
            message: "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
            file: Some("src/plain_assert.js"),
            line: Some(2),
            library: None,
            pattern: "Expected values to be strictly equal:",
        },
    );
}

#[test]
fn node_thrown_string() {
    let d = only(
        fixture!("node_throw_string"),
        Want {
            kind: ErrorKind::Runtime,
            message: "boom",
            file: Some("src/throw_string.js"),
            line: Some(1),
            library: None,
            pattern: "boom",
        },
    );
    assert_eq!(d.column, Some(17));
}

#[test]
fn node_unhandled_rejection() {
    let d = only(
        fixture!("node_unhandled_rejection"),
        Want {
            kind: ErrorKind::Runtime,
            message: "UnhandledPromiseRejection: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason \"oops\".",
            file: None,
            line: None,
            library: None,
            pattern: "This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason '*'.",
        },
    );
    assert!(d.pattern.chars().count() <= MAX_PATTERN_CHARS);
}

#[test]
fn jest_failed_expectation() {
    let d = only(
        fixture!("jest_assertion"),
        Want {
            kind: ErrorKind::TestAssertion,
            message: "expect(received).toBe(expected) // Object.is equality",
            file: Some("tests/cart.test.js"),
            line: Some(3),
            library: None,
            pattern: "expect(received).toBe(expected) // Object.is equality",
        },
    );
    assert_eq!(d.column, Some(47));
}

#[test]
fn jest_missing_module_ignores_jest_resolve_frames() {
    only(
        fixture!("jest_missing"),
        Want {
            kind: ErrorKind::ModuleNotFound,
            message: "Cannot find module 'dayjs' from 'tests/missing.test.js'",
            file: Some("tests/missing.test.js"),
            line: Some(1),
            library: Some("dayjs"),
            pattern: "Cannot find module '*' from '*'",
        },
    );
}

#[test]
fn jest_babel_syntax_error_takes_the_place_from_the_message() {
    let d = only(
        fixture!("jest_syntax"),
        Want {
            kind: ErrorKind::Syntax,
            message: "SyntaxError: /tmp/wright-fixtures/src/todo-app/jest/tests/syntax.test.js: Unexpected token (2:12)",
            file: Some("tests/syntax.test.js"),
            line: Some(2),
            library: None,
            pattern: "Unexpected token",
        },
    );
    assert_eq!(d.column, Some(12));
}

#[test]
fn npm_missing_script() {
    only(
        fixture!("npm_missing_script"),
        Want {
            kind: ErrorKind::Other,
            message: "npm error Missing script: \"start\"",
            file: None,
            line: None,
            library: None,
            pattern: "Missing script: '*'",
        },
    );
}

#[test]
fn npm_broken_package_json() {
    only(
        fixture!("npm_bad_json"),
        Want {
            kind: ErrorKind::Syntax,
            message: "npm error JSON.parse Invalid package.json: JSONParseError: Expected property name or '}' in JSON at position 27 while parsing near \"...:\\\"np\\\", \\\"scripts\\\": {\\n\"",
            file: Some("package.json"),
            line: None,
            library: None,
            pattern: "JSON.parse Invalid package.json: JSONParseError: Expected property name or '*' in JSON at position *",
        },
    );
}

#[test]
fn every_fixture_serialises_and_round_trips() {
    let all = diagnose(fixture!("node_test_all"));
    let json = serde_json::to_string(&all).unwrap_or_default();
    assert!(json.contains("\"kind\":\"module_not_found\""), "{json}");
    let back: Vec<Diagnosis> = serde_json::from_str(&json).unwrap_or_default();
    assert_eq!(back, all);
}

#[test]
fn every_pattern_compiles() {
    let all: Vec<&Pattern> = vec![
        &ANSI,
        &ERROR_LINE,
        &BARE_LINE,
        &FRAME,
        &YAML_FRAME,
        &HEADER,
        &LOCATION,
        &NPM_LINE,
        &PATH_PREFIXED,
        &IMPORTED_FROM,
        &NODE_MODULES_ROOT,
        &MISSING_MODULE_NAME,
        &NPM_NOT_IN_REGISTRY,
        &MODULE_MISSING,
        &ASSERTION,
        &SYNTAX,
        &TYPE,
        &RUNTIME,
        &QUOTED,
        &PATH_TOKEN,
        &SUBJECT_IS_NOT,
        &NUMBER,
        &SPACES,
        &PACKAGE_NAME,
        &REQUIRE,
        &IMPORT_FROM,
        &DYNAMIC_IMPORT,
    ];
    for (i, p) in all.iter().enumerate() {
        assert!(p.is_some(), "pattern #{i} does not compile");
    }
}

#[test]
fn kinds_have_stable_names_matching_serde() {
    for kind in [
        ErrorKind::TestAssertion,
        ErrorKind::Syntax,
        ErrorKind::Runtime,
        ErrorKind::Type,
        ErrorKind::ModuleNotFound,
        ErrorKind::Other,
    ] {
        assert_eq!(serde_json::to_value(kind).ok(), Some(serde_json::json!(kind.as_str())));
        assert!(!kind.describe().is_empty());
    }
}

#[test]
fn classification_follows_the_message() {
    let kind = |text: &str| diagnose(text).first().map(|d| d.kind);
    assert_eq!(kind("Uncaught TypeError: x.map is not a function"), Some(ErrorKind::Type));
    assert_eq!(kind("SyntaxError: Invalid or unexpected token"), Some(ErrorKind::Syntax));
    assert_eq!(kind("Error: listen EADDRINUSE: address already in use :::3000"), Some(ErrorKind::Runtime));
    assert_eq!(kind("✘ [ERROR] Could not resolve \"react\""), Some(ErrorKind::ModuleNotFound));
    assert_eq!(kind("Module not found: Error: Can't resolve 'lodash/fp' in '/w/src'"), Some(ErrorKind::ModuleNotFound));
    assert_eq!(kind("all good\nnothing to see"), None);
}

#[test]
fn library_comes_from_the_message_for_resolver_errors() {
    let lib = |text: &str| diagnose(text).first().and_then(|d| d.library.clone());
    assert_eq!(lib("Module not found: Error: Can't resolve 'lodash/fp' in '/w/src'"), Some("lodash".into()));
    assert_eq!(lib("✘ [ERROR] Could not resolve \"@scope/pkg/sub\""), Some("@scope/pkg".into()));
    assert_eq!(lib("Error: Cannot find module './app'"), None);
    assert_eq!(lib("Error: Cannot find module 'node:fs'"), None);
}

#[test]
fn project_relative_paths() {
    let rel = |p: &str| project_file(p, &[]);
    assert_eq!(rel("/home/me/code/app/tests/x.test.js"), Some("tests/x.test.js".into()));
    // The last project dir wins over one in the workspace path…
    assert_eq!(rel("/home/me/src/app/server/index.js"), Some("server/index.js".into()));
    // …and project dirs right before it stay.
    assert_eq!(rel("/home/me/app/src/tests/x.test.js"), Some("src/tests/x.test.js".into()));
    assert_eq!(rel("/home/me/app/public/js/app.js"), Some("public/js/app.js".into()));
    assert_eq!(rel("/home/me/app/app.js"), Some("app.js".into()));
    assert_eq!(rel("/data/wright/builds/b-123/index.js"), Some("index.js".into()));
    assert_eq!(rel("/data/wright/builds/b-123/src/x/y.js"), Some("src/x/y.js".into()));
    assert_eq!(rel("file:///C:/Users/me/app/src/app.js"), Some("src/app.js".into()));
    assert_eq!(rel("C:\\Users\\me\\app\\tests\\a.test.js"), Some("tests/a.test.js".into()));
    assert_eq!(rel("http://127.0.0.1:8080/js/app.js"), Some("js/app.js".into()));
    assert_eq!(rel("./tests/a.test.js"), Some("tests/a.test.js".into()));
    assert_eq!(rel("node:internal/modules/cjs/loader"), None);
    assert_eq!(rel("/w/node_modules/x/index.js"), None);
    assert_eq!(rel("<anonymous>"), None);
    // A root the text reveals beats the directory rule.
    let roots = vec!["/home/me/src/app".to_string()];
    assert_eq!(project_file("/home/me/src/app/server.js", &roots), Some("server.js".into()));
}

#[test]
fn a_node_modules_path_in_the_text_reveals_the_root() {
    let text = "TypeError: s.padStart is not a function\n    at leftPad (/home/me/src/shop/node_modules/left-pad/index.js:1:52)\n    at Object.<anonymous> (/home/me/src/shop/app.js:3:13)\n";
    let d = &diagnose(text)[0];
    assert_eq!((d.file.as_deref(), d.line, d.library.as_deref()), (Some("app.js"), Some(3), Some("left-pad")));
}

#[test]
fn duplicates_are_dropped_and_the_list_is_capped() {
    let once = "TypeError: a.b is not a function\n    at f (/w/src/app.js:3:1)\n";
    assert_eq!(diagnose(&once.repeat(5)).len(), 1);
    assert_eq!(diagnose("TypeError: x\n(Use `node --trace-uncaught ...` to show where)\n").len(), 1);
    let many: String = (0..50).map(|i| format!("Error: boom\n    at f (/w/src/app.js:{i}:1)\n")).collect();
    assert_eq!(diagnose(&many).len(), MAX_DIAGNOSES);
}

#[test]
fn big_odd_input_stays_fast() {
    // Unterminated, ever deeper YAML blocks and error lines without frames: bounded windows
    // keep this linear-ish (it once could rescan the rest of the text from every line).
    let text: String = (0..20_000)
        .map(|i| format!("{}---\n{}key: v\nTypeError: x\n", " ".repeat(i % 300), " ".repeat(i % 300 + 1)))
        .collect();
    let started = std::time::Instant::now();
    assert_eq!(diagnose(&text).len(), 1);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
}

#[test]
fn patterns_generalise_values() {
    let p = |body: &str| generalise(body, ErrorKind::Other);
    assert_eq!(p("(intermediate value).map is not a function"), "* is not a function");
    assert_eq!(p("Cannot access 'total' before initialization"), "Cannot access '*' before initialization");
    assert_eq!(p("test timed out after 100ms"), "test timed out after *ms");
    assert_eq!(
        p("listen EADDRINUSE: address already in use :::3000"),
        "listen EADDRINUSE: address already in use :::*"
    );
    assert_eq!(p("Can't resolve 'x' in '/w/src'"), "Can't resolve '*' in '*'");
    assert_eq!(p("   "), "other");
}

#[test]
fn libraries_in_source_files() {
    let src = r#"
        import express from 'express';
        import { useState, useEffect } from "react";
        import * as fp from 'lodash/fp';
        import './styles.css';
        import test from 'node:test';
        import fs from 'fs';
        export { x } from '@scope/pkg/sub';
        const chalk = require('chalk');
        const local = require('./local');
        const again = require("express");
        const lazy = await import('dayjs');
        import {
          a,
          b,
        } from 'multi-line';
    "#;
    assert_eq!(libraries_in_source(src), ["express", "react", "lodash", "@scope/pkg", "chalk", "dayjs", "multi-line"]);
}

#[test]
fn libraries_in_package_json() {
    let manifest = r#"{"name":"app","dependencies":{"express":"^4","@acme/ui":"1"},"devDependencies":{"jest":"^29"}}"#;
    assert_eq!(libraries_in_source(manifest), ["express", "@acme/ui", "jest"]);
    assert!(libraries_in_source("{ not json").is_empty());
}
