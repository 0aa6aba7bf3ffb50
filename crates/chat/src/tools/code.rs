//! `code`: a worked example in a fenced block that names its language.

use crate::model::{structured, subject_line, text_field};
use crate::relevance::Cues;
use crate::tool::{ChatContext, ChatTool, ToolError, ToolOutput};
use async_trait::async_trait;
use serde_json::json;
use wright_events::chat::Part;
use wright_provider::ToolSpec;

/// A language tag as fenced blocks carry it: letters, digits, `+`, `#`, `-`, 1–20 chars.
pub fn check_language(lang: &str) -> Result<String, String> {
    let l = lang.trim().to_lowercase();
    let ok = !l.is_empty() && l.len() <= 20 && l.chars().all(|c| c.is_ascii_alphanumeric() || "+#-_.".contains(c));
    if ok { Ok(l) } else { Err(format!("`{lang}` is not a language name")) }
}

/// Code as the model wrote it, without a fence it may have added around it.
pub fn unfence(code: &str) -> String {
    let t = code.trim();
    match t.strip_prefix("```") {
        Some(rest) => {
            let body = rest.split_once('\n').map(|(_, b)| b).unwrap_or_default();
            body.trim_end().trim_end_matches("```").trim_end().to_string()
        }
        None => t.to_string(),
    }
}

/// The `code` tool.
pub struct Code;

#[async_trait]
impl ChatTool for Code {
    fn name(&self) -> &'static str {
        "code"
    }

    fn description(&self) -> &'static str {
        "Writes a short, runnable code example in the language asked for."
    }

    fn triggers(&self) -> &'static [&'static str] {
        &["code", "program", "function", "script", "python", "javascript", "código", "programa", "função"]
    }

    fn message_type(&self) -> &'static str {
        "code"
    }

    fn cues(&self) -> Cues {
        super::cues::code()
    }

    fn can_handle(&self, message: &str, ctx: &ChatContext) -> f32 {
        ctx.scorer.score(self.name(), message, ctx.embedding.as_deref().map(Vec::as_slice))
    }

    async fn execute(&self, message: &str, ctx: &ChatContext) -> Result<ToolOutput, ToolError> {
        let spec = ToolSpec {
            name: "showCode".into(),
            description: "Return one short, complete, runnable code example.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "language": {"type": "string", "maxLength": 20},
                    "code": {"type": "string", "maxLength": 6000}
                },
                "required": ["language", "code"]
            }),
        };
        let system = format!(
            "You write short, correct, runnable code examples for students, with brief comments in {}. \
             Use the language the student asks for (Python if they name none).",
            ctx.lang.name()
        );
        let ((language, code), warning) = structured(ctx, spec, system, subject_line(message), |v| {
            let language = check_language(&text_field(v, "language", 20)?)?;
            let code = unfence(&text_field(v, "code", 6000)?);
            if code.is_empty() {
                return Err("`code` is empty".into());
            }
            Ok((language, code))
        })
        .await?;
        Ok(ToolOutput {
            content: format!("A {language} example ({} lines) is shown to the user.", code.lines().count()),
            part: Part::Code { language, code },
            warning,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_and_fences() {
        assert_eq!(check_language(" Python ").as_deref(), Ok("python"));
        assert_eq!(check_language("c++").as_deref(), Ok("c++"));
        assert!(check_language("<script>").is_err() && check_language("").is_err());
        assert_eq!(unfence("```python\nprint(1)\n```"), "print(1)");
        assert_eq!(unfence("print(1)"), "print(1)");
    }
}
