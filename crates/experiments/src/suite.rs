//! Eval suites (`docs/eval.md`): the requests `wright eval` builds under each variant, from a
//! TOML file (requests and variants) or JSONL (one request per line; variants from
//! `wright.toml`). Errors name the file's line.

use crate::Variant;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One request of a suite: what a person would type, and optionally how it is built.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteRequest {
    pub prompt: String,
    #[serde(default)]
    pub template: Option<String>,
    #[serde(default)]
    pub lang: Option<String>,
    /// Acceptance commands, as `--check` takes.
    #[serde(default)]
    pub checks: Vec<String>,
}

/// A suite: its name, its requests, and the variants it defines (by name).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Suite {
    pub name: String,
    pub requests: Vec<SuiteRequest>,
    pub variants: BTreeMap<String, Variant>,
}

/// Why a suite cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SuiteError {
    #[error("line {line}: {reason}")]
    Line { line: usize, reason: String },
    #[error("{0}")]
    Toml(String),
    #[error("the suite has no requests")]
    Empty,
    #[error("request {0} has an empty prompt")]
    EmptyPrompt(usize),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlSuite {
    name: Option<String>,
    #[serde(default)]
    request: Vec<SuiteRequest>,
    #[serde(default)]
    variant: BTreeMap<String, Variant>,
}

fn checked(mut suite: Suite) -> Result<Suite, SuiteError> {
    if suite.requests.is_empty() {
        return Err(SuiteError::Empty);
    }
    if let Some(i) = suite.requests.iter().position(|r| r.prompt.trim().is_empty()) {
        return Err(SuiteError::EmptyPrompt(i + 1));
    }
    for (name, v) in suite.variants.iter_mut() {
        v.name = name.clone();
    }
    Ok(suite)
}

/// A TOML suite: `name`, `[[request]]` tables and `[variant.NAME]` tables.
pub fn parse_toml(text: &str, default_name: &str) -> Result<Suite, SuiteError> {
    let t: TomlSuite = toml::from_str(text).map_err(|e| SuiteError::Toml(e.to_string().trim().to_string()))?;
    checked(Suite {
        name: t.name.unwrap_or_else(|| default_name.to_string()),
        requests: t.request,
        variants: t.variant,
    })
}

/// A JSONL suite: one request object per line; blank lines and `#` lines are skipped.
pub fn parse_jsonl(text: &str, name: &str) -> Result<Suite, SuiteError> {
    let mut requests = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let r: SuiteRequest =
            serde_json::from_str(line).map_err(|e| SuiteError::Line { line: i + 1, reason: e.to_string() })?;
        requests.push(r);
    }
    checked(Suite { name: name.to_string(), requests, variants: BTreeMap::new() })
}

/// A suite by its file name's extension (`.jsonl` is JSONL; anything else TOML).
pub fn parse(file_name: &str, text: &str) -> Result<Suite, SuiteError> {
    let stem = std::path::Path::new(file_name).file_stem().and_then(|s| s.to_str()).unwrap_or("suite");
    if file_name.ends_with(".jsonl") { parse_jsonl(text, stem) } else { parse_toml(text, stem) }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn toml_and_jsonl_suites_read_and_errors_name_the_line() {
        let s = parse(
            "pages.toml",
            r#"
name = "pages"
[[request]]
prompt = "a landing page"
template = "static"
checks = ["test -f index.html"]
[[request]]
prompt = "a counter"
[variant.lean]
note_budget = 0
starter_policy = "off"
[variant.big]
model = "gpt-4o"
"#,
        )
        .unwrap();
        assert_eq!(s.name, "pages");
        assert_eq!(s.requests.len(), 2);
        assert_eq!(s.requests[0].checks, ["test -f index.html"]);
        assert_eq!(s.variants["lean"].name, "lean");
        assert_eq!(s.variants["lean"].note_budget, Some(0));
        assert_eq!(s.variants["big"].model.as_deref(), Some("gpt-4o"));
        let j = parse(
            "mine.jsonl",
            "# two requests\n{\"prompt\": \"a timer\"}\n\n{\"prompt\": \"a quiz\", \"lang\": \"pt\"}\n",
        )
        .unwrap();
        assert_eq!((j.name.as_str(), j.requests.len()), ("mine", 2));
        assert_eq!(j.requests[1].lang.as_deref(), Some("pt"));
        let bad = parse("x.jsonl", "{\"prompt\": \"ok\"}\n{\"prompt\": 3}\n").unwrap_err();
        assert!(matches!(bad, SuiteError::Line { line: 2, .. }), "{bad}");
        assert_eq!(parse("x.jsonl", "\n").unwrap_err(), SuiteError::Empty);
        assert_eq!(parse("x.toml", "[[request]]\nprompt = \" \"\n").unwrap_err(), SuiteError::EmptyPrompt(1));
        assert!(
            parse("x.toml", "[[request]]\nprompt = \"a\"\nbudget = 3\n").unwrap_err().to_string().contains("budget")
        );
    }

    proptest! {
        #[test]
        fn any_text_is_read_or_refused_never_a_panic(text in ".{0,200}") {
            let _ = parse("s.jsonl", &text);
            let _ = parse("s.toml", &text);
        }
    }
}
