//! A stored chat message as the model reads it in a history: the reply's prompt, the tools
//! that look back at the conversation and the in-app assistant all quote messages this way.

use wright_events::chat::{ChatMessage, Part};

/// A stored message as plain text for the model: its text, and one line per other part.
pub fn as_text(m: &ChatMessage) -> String {
    let lines: Vec<String> = m
        .parts
        .iter()
        .map(|p| match p {
            Part::Text { text } => text.clone(),
            Part::Diagram { title, .. } => format!("[showed a diagram: {title}]"),
            Part::Quiz { quiz } => format!("[gave a quiz: {} ({} questions)]", quiz.title, quiz.questions.len()),
            Part::Flashcards { cards } => format!("[added {} flashcards]", cards.len()),
            Part::Videos { query, videos } => format!("[listed {} videos about {query}]", videos.len()),
            Part::Code { language, .. } => format!("[showed a {language} code example]"),
            Part::BackgroundProcess { summary, .. } => format!("[in the background: {summary}]"),
            Part::Documents { hits, .. } => {
                let sources: Vec<String> = hits.iter().map(|h| format!("{} › {}", h.source, h.heading)).collect();
                format!("[sources: {}]", sources.join("; "))
            }
            Part::ToolOutput { tool, text } => {
                format!("[{tool} answered: {}]", wright_text::head(text, 500, wright_text::Unit::Chars))
            }
            Part::Error { tool, message } => format!("[{tool} failed: {message}]"),
        })
        .collect();
    lines.join("\n")
}
