//! Arbitrary input must never panic the checker: it runs on whatever a model wrote.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use proptest::prelude::*;
use wright_webcheck::{check_html, local_references};

/// Fragments that exercise the interesting tokenizer and tree-building paths.
fn markupish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<".to_string()),
        Just(">".to_string()),
        Just("</".to_string()),
        Just("/>".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("=".to_string()),
        Just("<!--".to_string()),
        Just("-->".to_string()),
        Just("<!DOCTYPE html>".to_string()),
        Just("<![CDATA[".to_string()),
        Just("{{".to_string()),
        Just("}}".to_string()),
        Just("{%".to_string()),
        Just("\n".to_string()),
        Just(" ".to_string()),
        Just("é€𝄞".to_string()),
        prop::sample::select(vec![
            "div",
            "p",
            "li",
            "ul",
            "script",
            "style",
            "title",
            "svg",
            "td",
            "tr",
            "table",
            "option",
            "select",
            "b",
            "i",
            "img",
            "br",
            "body",
            "head",
            "html",
            "a",
            "src",
            "href",
            "rel",
            "stylesheet",
            "textarea",
        ])
        .prop_map(str::to_string),
        "[a-z]{1,3}",
    ];
    prop::collection::vec(piece, 0..80).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn arbitrary_strings_do_not_panic(text in any::<String>()) {
        let problems = check_html("x.html", &text);
        prop_assert!(problems.iter().all(|p| p.line.is_none_or(|l| l >= 1)));
        let _ = local_references(&text);
    }

    #[test]
    fn markup_like_strings_do_not_panic(text in markupish()) {
        let problems = check_html("x.html", &text);
        let lines = u32::try_from(text.lines().count().max(1)).unwrap_or(u32::MAX);
        prop_assert!(problems.iter().all(|p| p.line.is_none_or(|l| l >= 1 && l <= lines + 1)));
        for (_, line) in local_references(&text) {
            prop_assert!(line >= 1 && line <= lines + 1);
        }
    }
}

#[test]
fn pathological_inputs_finish_quickly() {
    let inputs = [
        format!("{}{}", "<span>".repeat(500), "<li>".repeat(100_000)),
        "<a b=\"x> ".repeat(100_000),
        "<a b=\"".repeat(100_000),
        "</x>".repeat(200_000),
        "<!x".repeat(100_000),
        "<p>a < b".repeat(100_000),
        "{{".repeat(200_000),
        "<div {{".repeat(100_000),
    ];
    for text in &inputs {
        let start = std::time::Instant::now();
        let problems = check_html("x.html", text);
        let _ = local_references(text);
        assert!(problems.len() <= 51);
        assert!(start.elapsed() < std::time::Duration::from_secs(10), "too slow on input starting {:?}", &text[..20]);
    }
}
