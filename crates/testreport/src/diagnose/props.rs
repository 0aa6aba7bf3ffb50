//! No text makes diagnosis panic: any string, and text made of error-shaped fragments.

use super::{MAX_DIAGNOSES, MAX_PATTERN_CHARS, diagnose, libraries_in_source};
use proptest::prelude::*;

const FRAGMENTS: &[&str] = &[
    "\n",
    "  ",
    "# ",
    "---",
    "...",
    "  error: |-",
    "  error: '",
    "  name: 'TypeError'",
    "  stack: |-",
    "  location: '",
    "TypeError: ",
    "SyntaxError: ",
    "Error [ERR_MODULE_NOT_FOUND]: ",
    "Cannot find module '",
    "'",
    "\"",
    "`",
    "    at f (",
    "at ",
    "/abs/tests/x.test.js",
    "file:///C:/a/src/b.mjs",
    "node_modules/",
    "@scope/",
    "node:internal/x",
    ":12",
    ":5",
    ")",
    "^^^",
    "- t (at x.js:1):",
    "npm error ",
    "code E404",
    "(Use `node --trace-uncaught",
    "é",
    "\u{1b}[31m",
    "require('",
    "import x from '",
    "{\"dependencies\":{\"",
    "9999999999999",
];

proptest! {
    #[test]
    fn never_panics_on_any_text(text in any::<String>()) {
        for d in diagnose(&text) {
            prop_assert!(!d.pattern.is_empty());
            prop_assert!(d.pattern.chars().count() <= MAX_PATTERN_CHARS);
        }
        let _ = libraries_in_source(&text);
    }

    #[test]
    fn never_panics_on_error_shaped_text(parts in prop::collection::vec(prop::sample::select(FRAGMENTS), 0..60)) {
        let text = parts.concat();
        let all = diagnose(&text);
        prop_assert!(all.len() <= MAX_DIAGNOSES);
        for d in all {
            prop_assert!(!d.pattern.is_empty());
            prop_assert!(d.pattern.chars().count() <= MAX_PATTERN_CHARS);
        }
        let _ = libraries_in_source(&text);
    }
}
