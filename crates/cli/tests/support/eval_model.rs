//! The scripted model and suite of `wright eval`'s tests and bench: two models told apart by
//! name, one that always needs a fix.

use super::Turn;
use serde_json::json;

const PAGE: &str = "<!DOCTYPE html>\n<html><body><p>hi</p></body></html>\n";

/// A model that is told apart by name: `strong` writes the page and the file the check wants
/// at once; `weak` forgets the file and writes it only when the failing check comes back.
pub fn scripted_model() -> Turn {
    let strong = Turn::when(
        "tool_call_id",
        Turn::text("Made the page."),
        Turn::calls(&[
            ("createFile", json!({"path": "index.html", "content": PAGE})),
            ("createFile", json!({"path": "READY", "content": "yes"})),
        ]),
    );
    let weak = Turn::when(
        "fixed-marker",
        Turn::text("Fixed."),
        Turn::when(
            "Made the page.",
            Turn::calls(&[("createFile", json!({"path": "READY", "content": "fixed-marker"}))]),
            Turn::when(
                "tool_call_id",
                Turn::text("Made the page."),
                Turn::calls(&[("createFile", json!({"path": "index.html", "content": PAGE}))]),
            ),
        ),
    );
    Turn::when("\"model\":\"weak\"", weak, strong)
}

/// Three static pages that must leave a `READY` file, and the two variants.
pub const SUITE: &str = r#"
name = "pages"
[[request]]
prompt = "a landing page for a bakery"
template = "static"
checks = ["test -f READY"]
[[request]]
prompt = "a page about my cat"
template = "static"
checks = ["test -f READY"]
[[request]]
prompt = "a page announcing a school fair"
template = "static"
checks = ["test -f READY"]

[variant.strong]
model = "strong"
starter_policy = "off"
[variant.weak]
model = "weak"
starter_policy = "off"
"#;

/// A suite of `n` such requests with the same two variants.
pub fn suite_of(n: usize) -> String {
    let mut s = String::from("name = \"bench\"\n");
    for i in 0..n {
        s.push_str(&format!(
            "[[request]]\nprompt = \"page number {i}\"\ntemplate = \"static\"\nchecks = [\"test -f READY\"]\n"
        ));
    }
    s.push_str("[variant.strong]\nmodel = \"strong\"\nstarter_policy = \"off\"\n[variant.weak]\nmodel = \"weak\"\nstarter_policy = \"off\"\n");
    s
}
