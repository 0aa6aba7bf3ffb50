//! Turning an error and its fix into a lesson.

use serde::Deserialize;
use std::collections::HashSet;
use wright_provider::Message;
use wright_store::note::{tag_key, tag_words};
use wright_store::{Note, Store, StoreError};

/// What the note model is shown.
#[derive(Debug, Clone, Copy, Default)]
pub struct LessonInput<'a> {
    pub request: &'a str,
    pub template: &'a str,
    /// What verification reported before the fix.
    pub error: &'a str,
    /// The change that turned verification green (a unified diff).
    pub fix: &'a str,
}

/// The trigger kinds a lesson may have (seed 002); anything else is read as `pattern`.
const TRIGGER_TYPES: &[&str] = &["library", "pattern", "error_class", "component_type", "universal"];

/// Ask for one lesson as a JSON object. The system text is fixed so providers can cache it.
pub fn extraction_messages(input: &LessonInput<'_>) -> Vec<Message> {
    let system = "You turn one error and the fix that solved it into a short lesson that helps future builds \
avoid the same error. Reply with ONLY one JSON object, no prose, no code fences:
{\"trigger\": \"what situation the lesson is about, a few words\", \
\"triggerType\": \"library | pattern | error_class | component_type | universal\", \
\"lesson\": \"one or two imperative sentences that would have prevented the error\", \
\"libraries\": [\"npm packages involved, lower case; empty if none\"], \
\"tags\": [\"2-5 lower-case words for the kind of project or feature, e.g. timer, form, server\"], \
\"errorPatterns\": [\"short stable pieces of the error message, without paths, numbers or names; * for a variable part\"]}
Make the lesson general: no file names or details of this one project. Use triggerType universal only for a lesson that applies to every project.";
    let user = format!(
        "Request: {}\nKind of project: {}\n\nThe error:\n{}\n\nThe fix:\n{}\n",
        clip(input.request, 500),
        input.template,
        clip(input.error, 2500),
        clip(input.fix, 3500)
    );
    vec![Message::system(system), Message::user(user)]
}

/// `s` within `max` characters, a marked cut on its own line.
fn clip(s: &str, max: usize) -> String {
    wright_text::clip_with(s, max, wright_text::Unit::Chars, "\n[…cut]")
}

/// A lesson as the model proposed it, checked and normalised.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LessonDraft {
    pub trigger: String,
    #[serde(default)]
    pub trigger_type: String,
    pub lesson: String,
    #[serde(default)]
    pub libraries: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub error_patterns: Vec<String>,
}

/// Why a model's answer is not a usable lesson.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LessonError {
    #[error("the answer holds no JSON object")]
    NoJson,
    #[error("the lesson is not usable: {0}")]
    Invalid(String),
}

/// Read a lesson from a model's answer: the JSON object itself, one inside code fences or
/// prose, or one wrapped as `{"answer": "…"}` (the offline model's reply form).
pub fn parse_lesson(text: &str) -> Result<LessonDraft, LessonError> {
    let value = find_object(text).ok_or(LessonError::NoJson)?;
    if value.get("lesson").is_none() {
        if let Some(inner) = value.get("answer").and_then(|a| a.as_str()) {
            return parse_lesson(inner);
        }
    }
    let draft: LessonDraft = serde_json::from_value(value).map_err(|e| LessonError::Invalid(e.to_string()))?;
    normalise(draft)
}

/// The first balanced `{…}` in `text` that parses as a JSON object.
fn find_object(text: &str) -> Option<serde_json::Value> {
    let bytes = text.as_bytes();
    let mut start = 0;
    while let Some(off) = text[start..].find('{') {
        let open = start + off;
        let (mut depth, mut in_str, mut esc) = (0i32, false, false);
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            if in_str {
                match (esc, b) {
                    (true, _) => esc = false,
                    (false, b'\\') => esc = true,
                    (false, b'"') => in_str = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_str = true,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if let Ok(v @ serde_json::Value::Object(_)) = serde_json::from_str(&text[open..=i]) {
                            return Some(v);
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
        start = open + 1;
    }
    None
}

fn clean_list(items: Vec<String>, lower: bool, max_len: usize) -> Vec<String> {
    let mut seen = HashSet::new();
    items
        .into_iter()
        .map(|s| s.trim().to_string())
        .map(|s| if lower { s.to_lowercase() } else { s })
        .filter(|s| !s.is_empty() && s.chars().count() <= max_len && seen.insert(s.to_lowercase()))
        .take(8)
        .collect()
}

fn normalise(mut d: LessonDraft) -> Result<LessonDraft, LessonError> {
    d.trigger = d.trigger.trim().to_string();
    d.lesson = d.lesson.trim().to_string();
    let (t, l) = (d.trigger.chars().count(), d.lesson.chars().count());
    if !(3..=160).contains(&t) {
        return Err(LessonError::Invalid(format!("trigger must be 3–160 characters, got {t}")));
    }
    if !(12..=700).contains(&l) {
        return Err(LessonError::Invalid(format!("lesson must be 12–700 characters, got {l}")));
    }
    let tt = d.trigger_type.trim().to_lowercase().replace([' ', '-'], "_");
    d.trigger_type = if TRIGGER_TYPES.contains(&tt.as_str()) { tt } else { "pattern".into() };
    d.libraries = clean_list(d.libraries, true, 80)
        .into_iter()
        .filter(|l| !l.starts_with('.') && !l.starts_with('/') && !l.contains(' '))
        .collect();
    d.tags = clean_list(d.tags, true, 40);
    d.error_patterns = clean_list(d.error_patterns, false, 160)
        .into_iter()
        .filter(|p| p.chars().filter(|c| c.is_alphabetic()).count() >= 4)
        .collect();
    Ok(d)
}

/// What [`remember`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Learned {
    pub note: Note,
    /// An existing similar note was reinforced instead of storing a new one.
    pub reinforced: bool,
}

fn words(text: &str) -> HashSet<String> {
    tag_words(text).into_iter().filter(|w| !w.contains('-') && w.len() > 2).collect()
}

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 { 0.0 } else { a.intersection(b).count() as f64 / union as f64 }
}

/// Whether a stored note already says what the draft says.
fn similar(n: &Note, d: &LessonDraft) -> bool {
    if n.trigger.trim().eq_ignore_ascii_case(d.trigger.trim()) {
        return true;
    }
    let a = words(&format!("{} {}", n.trigger, n.lesson));
    let b = words(&format!("{} {}", d.trigger, d.lesson));
    let shared_pattern =
        n.error_patterns.iter().any(|p| d.error_patterns.iter().any(|q| p.trim().eq_ignore_ascii_case(q.trim())));
    let j = jaccard(&a, &b);
    j >= 0.6 || (shared_pattern && j >= 0.3)
}

/// Store a lesson: reinforce (`help+1`) a similar note if there is one, else add a new
/// CANDIDATE carrying where it came from.
pub async fn remember(
    store: &dyn Store,
    draft: LessonDraft,
    source_build: &str,
    source_error: &str,
    source_fix: &str,
) -> Result<Learned, StoreError> {
    let note = Note {
        trigger_type: draft.trigger_type.clone(),
        libraries: draft.libraries.clone(),
        error_patterns: draft.error_patterns.clone(),
        tags: draft.tags.clone(),
        source_build: Some(source_build.to_string()),
        source_error: Some(clip(source_error, 2000)),
        source_fix: Some(clip(source_fix, 4000)),
        ..Note::new(wright_store::new_id("n"), draft.trigger.clone(), draft.lesson.clone())
    };
    let mut keys = note.keys();
    keys.extend(tag_words(&note.trigger).iter().map(|w| tag_key(w)));
    for hit in store.find_notes(&keys, 20).await? {
        if similar(&hit.note, &draft) {
            let updated = store.record_note_outcome(std::slice::from_ref(&hit.note.id), true).await?;
            let note = updated.into_iter().next().unwrap_or(hit.note);
            return Ok(Learned { note, reinforced: true });
        }
    }
    store.put_note(&note).await?;
    Ok(Learned { note, reinforced: false })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"trigger":"countdown display","triggerType":"pattern","lesson":"Pad minutes and seconds with String(n).padStart(2, '0') so 5 seconds shows as 00:05.","libraries":[],"tags":["Timer","countdown","timer"],"errorPatterns":["Expected values to be strictly equal","'0:5' !== '00:05'", "12"]}"#;

    #[test]
    fn parses_plain_fenced_and_wrapped_answers() {
        let d = parse_lesson(GOOD).unwrap();
        assert_eq!(d.tags, ["timer", "countdown"], "lower-cased and deduplicated");
        assert_eq!(d.error_patterns.len(), 1, "patterns without enough letters are dropped");
        assert_eq!(parse_lesson(&format!("Here you go:\n```json\n{GOOD}\n```\nThanks")).unwrap(), d);
        let wrapped = serde_json::json!({ "answer": GOOD }).to_string();
        assert_eq!(parse_lesson(&wrapped).unwrap(), d);
        let braces =
            r#"note {not json} then {"trigger":"a } b","lesson":"Always close your braces } properly.","tags":[]}"#;
        assert_eq!(parse_lesson(braces).unwrap().trigger, "a } b");
    }

    #[test]
    fn rejects_garbage_and_empty_lessons() {
        assert_eq!(parse_lesson("I could not find a lesson."), Err(LessonError::NoJson));
        assert!(matches!(parse_lesson(r#"{"trigger":"x","lesson":""}"#), Err(LessonError::Invalid(_))));
        assert!(matches!(parse_lesson(r#"{"lesson":"Use padStart for zero padding."}"#), Err(LessonError::Invalid(_))));
        let odd = parse_lesson(r#"{"trigger":"dom in tests","triggerType":"weird","lesson":"Guard DOM code with typeof document checks.","libraries":["./app", "Express"]}"#).unwrap();
        assert_eq!(odd.trigger_type, "pattern");
        assert_eq!(odd.libraries, ["express"]);
    }

    #[test]
    fn similarity_is_about_meaning_not_ids() {
        let d = parse_lesson(GOOD).unwrap();
        let mut n = Note::new("n-x", "Countdown display", "something else");
        assert!(similar(&n, &d), "same trigger");
        n.trigger = "timer text".into();
        n.lesson = "Pad minutes and seconds with padStart(2, '0') so the countdown shows 00:05.".into();
        assert!(similar(&n, &d), "same lesson in other words");
        n.lesson = "Use fetch with async/await for the weather API.".into();
        assert!(!similar(&n, &d));
    }
}
