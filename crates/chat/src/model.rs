//! Asking the model for structured data: one tool spec, the answer read from its call (or from
//! JSON in its text, for models that answer in prose), checked, and re-asked once with the
//! reason when the check fails.

use crate::tool::{ChatContext, ToolError};
use serde_json::Value;
use wright_events::Lang;
use wright_events::words::{Said, say};
use wright_provider::{ChatRequest, Message, ProviderError, ToolChoice, ToolSpec, complete};

/// Kind words in `lang` for a provider failure, telling a beginner what to do (a rate limit
/// with its wait). The technical reason is the error's own text, kept for whoever looks.
pub fn provider_words(lang: Lang, e: &ProviderError) -> String {
    match e {
        ProviderError::RateLimited { retry_after: Some(d), .. } => say(lang, Said::ModelBusy { seconds: d.as_secs() }),
        _ => say(lang, Said::ModelUnavailable),
    }
}

/// The first JSON object in `text` (inside a fenced block or bare), for models that reply in
/// prose instead of calling the tool.
pub fn json_in(text: &str) -> Option<Value> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    (end > start).then(|| serde_json::from_str(&text[start..=end]).ok()).flatten()
}

/// Ask for `spec`'s arguments and check them with `check`; re-asks once with what was wrong.
/// Returns the checked value and, when a re-ask was needed, a warning saying why.
pub async fn structured<T>(
    ctx: &ChatContext,
    spec: ToolSpec,
    system: String,
    user: String,
    check: impl Fn(&Value) -> Result<T, String>,
) -> Result<(T, Option<String>), ToolError> {
    let recent = ctx.recent_text(1500);
    let system = if recent.is_empty() {
        system
    } else {
        format!("{system}\n\nThe conversation so far (the request may refer to it):\n{recent}")
    };
    let mut messages = vec![Message::system(system), Message::user(user)];
    let mut why = String::new();
    for attempt in 0..2 {
        let req = ChatRequest {
            model: ctx.model.clone(),
            messages: messages.clone(),
            tools: vec![spec.clone()],
            temperature: Some(0.2),
            max_tokens: Some(1500),
            tool_choice: ToolChoice::Required,
        };
        let answer = complete(ctx.provider.as_ref(), &req, &ctx.retry, &ctx.cancel, |_| {}, |_, _, _| {})
            .await
            .map_err(|e| ToolError::Provider(provider_words(ctx.lang, &e)))?;
        ctx.add_usage(answer.usage);
        let args = match answer.tool_calls.iter().find(|c| c.name == spec.name) {
            Some(call) => serde_json::from_str::<Value>(&call.arguments).ok(),
            None => json_in(&answer.content),
        };
        let verdict = match &args {
            Some(v) => check(v),
            None => Err(format!("the model did not call {}", spec.name)),
        };
        match verdict {
            Ok(t) => return Ok((t, (attempt > 0).then(|| format!("re-asked the model once: {why}")))),
            Err(e) => {
                why = e;
                messages
                    .push(Message::assistant(args.map(|v| v.to_string()).unwrap_or_else(|| answer.content.clone())));
                messages.push(Message::user(format!(
                    "That answer is not valid: {why}. Call {} again with a corrected answer.",
                    spec.name
                )));
            }
        }
    }
    Err(ToolError::Invalid(why))
}

/// A required string field, trimmed and non-empty, at most `max` characters.
pub fn text_field(v: &Value, key: &str, max: usize) -> Result<String, String> {
    let s = v.get(key).and_then(Value::as_str).map(str::trim).unwrap_or_default();
    if s.is_empty() {
        return Err(format!("`{key}` is missing or empty"));
    }
    if s.chars().count() > max {
        return Err(format!("`{key}` is longer than {max} characters"));
    }
    Ok(s.to_string())
}

/// What the message asks about, for the tool's prompt (the whole message: the model reads it).
pub fn subject_line(message: &str) -> String {
    message.trim().chars().take(2000).collect()
}
