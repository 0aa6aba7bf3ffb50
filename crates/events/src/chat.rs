//! The chat protocol (`CONTRACT.md`, "Chat"): a message's typed parts ("mixed content"), what
//! a tool returns, and the request and response bodies of `/api/chat`.
//!
//! A chat turn is a run of kind `chat`: its events ([`crate::EventKind::ToolScores`],
//! `ToolSelected`, `ChatToolResult`, `TextDelta`, `ChatMessage`, `Error`, `Complete`) are stored
//! in the run log like a build's. [`sse_name`] gives each the contract's SSE `event:` name
//! (`chat_tool_result` goes out as `tool_result`, `chat_message` as `message`, `complete` as
//! `done`), so clients read the contract while the store keeps one event vocabulary.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        }
    }
}

/// One multiple-choice question. `answer` and `explanation` stay on the server until the
/// question is answered ([`Quiz::public`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Question {
    pub question: String,
    pub options: Vec<String>,
    /// Index into `options` of the correct one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
}

/// A quiz as the `quiz` tool makes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Quiz {
    pub title: String,
    pub questions: Vec<Question>,
}

impl Quiz {
    /// The quiz without its answers, as clients see it before answering.
    pub fn public(&self) -> Quiz {
        let questions =
            self.questions.iter().map(|q| Question { answer: None, explanation: None, ..q.clone() }).collect();
        Quiz { title: self.title.clone(), questions }
    }
}

/// A flashcard in a user's deck, with when it is next due (RFC 3339).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Card {
    pub id: String,
    pub front: String,
    pub back: String,
    pub due: String,
    /// `new`, `learning`, `review` or `relearning` (the scheduler's state).
    pub state: String,
    pub reps: u32,
}

/// A video found by `video_search` (only ever from the search API's answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Video {
    pub id: String,
    pub title: String,
    pub channel: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thumbnail: Option<String>,
}

/// One part of a message. Clients show a part of a type they do not know as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Markdown written by the model (rendered without raw HTML).
    Text {
        text: String,
    },
    /// Mermaid source, checked for a known diagram type and balanced structure.
    Diagram {
        title: String,
        mermaid: String,
    },
    Quiz {
        quiz: Quiz,
    },
    /// Cards added to the user's deck by this message.
    Flashcards {
        cards: Vec<Card>,
    },
    Videos {
        query: String,
        videos: Vec<Video>,
    },
    Code {
        language: String,
        code: String,
    },
    /// A background tool's result, which also feeds the next turn.
    BackgroundProcess {
        tool: String,
        summary: String,
    },
    /// What the in-app assistant's document search found (its sources, shown under the reply).
    Documents {
        query: String,
        hits: Vec<DocHit>,
    },
    /// What a tool from outside (an MCP server's) answered: plain text, never rendered as
    /// markup, under the tool's name.
    ToolOutput {
        tool: String,
        text: String,
    },
    /// A tool that failed, beside the ones that worked.
    Error {
        tool: String,
        message: String,
    },
}

impl Part {
    /// The part's type as it is serialised.
    pub fn type_name(&self) -> &'static str {
        match self {
            Part::Text { .. } => "text",
            Part::Diagram { .. } => "diagram",
            Part::Quiz { .. } => "quiz",
            Part::Flashcards { .. } => "flashcards",
            Part::Videos { .. } => "videos",
            Part::Code { .. } => "code",
            Part::BackgroundProcess { .. } => "background_process",
            Part::Documents { .. } => "documents",
            Part::ToolOutput { .. } => "tool_output",
            Part::Error { .. } => "error",
        }
    }

    /// The part as a client may see it (a quiz without its answers).
    pub fn public(&self) -> Part {
        match self {
            Part::Quiz { quiz } => Part::Quiz { quiz: quiz.public() },
            other => other.clone(),
        }
    }
}

/// What kinds of content a message holds, for lists and search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ContentFlags {
    pub has_diagram: bool,
    pub has_quiz: bool,
    pub has_flashcards: bool,
    pub has_videos: bool,
    pub has_code: bool,
}

impl ContentFlags {
    pub fn of(parts: &[Part]) -> Self {
        let has = |t: &str| parts.iter().any(|p| p.type_name() == t);
        Self {
            has_diagram: has("diagram"),
            has_quiz: has("quiz"),
            has_flashcards: has("flashcards"),
            has_videos: has("videos"),
            has_code: has("code"),
        }
    }
}

/// A stored message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChatMessage {
    pub id: String,
    pub role: Role,
    pub parts: Vec<Part>,
    #[serde(flatten)]
    pub flags: ContentFlags,
    /// The chat turn (run) that wrote it; its events replay the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    pub created_at: String,
    /// The user's 👍 (1) or 👎 (-1) on an assistant's reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<i8>,
}

impl ChatMessage {
    /// The message as a client may see it.
    pub fn public(&self) -> ChatMessage {
        ChatMessage { parts: self.parts.iter().map(Part::public).collect(), ..self.clone() }
    }
}

/// How a tool's run went, as logged beside its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Success,
    /// It worked, with something to say (re-asked the model, fewer items than asked).
    Warning,
    Error,
}

/// One tool's relevance to a message, as every turn logs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ToolScore {
    pub tool: String,
    pub confidence: f32,
    /// `selected`, `below_threshold`, `over_limit`, `switched_off`, `switched_on`, `unavailable`.
    pub decision: String,
}

/// Whether the user switched a tool on or off for one message (seed 001's `active_modes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    On,
    Off,
}

/// `POST /api/chat/{id}/messages`. Unknown fields are refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageBody {
    pub content: String,
    /// Tools switched on or off for this message by name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub modes: std::collections::BTreeMap<String, Mode>,
    /// Tools the caller's page runs itself (the in-app assistant).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_tools: Vec<serde_json::Value>,
}

/// A conversation in a user's list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ConversationView {
    pub id: String,
    pub title: String,
    pub created_at: String,
    pub updated_at: String,
    pub messages: u32,
}

/// `POST /api/chat/{id}/messages/{message}/quiz`: the chosen option per question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuizAnswers {
    pub answers: Vec<usize>,
}

/// One answered question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct QuestionResult {
    pub chosen: usize,
    pub correct: bool,
    pub answer: usize,
    pub explanation: String,
}

/// The quiz scored by the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct QuizScore {
    pub score: u32,
    pub total: u32,
    pub results: Vec<QuestionResult>,
}

impl Quiz {
    /// Score `answers` (one per question, in order); `None` when their number is wrong.
    pub fn score(&self, answers: &[usize]) -> Option<QuizScore> {
        if answers.len() != self.questions.len()
            || self.questions.iter().zip(answers).any(|(q, a)| *a >= q.options.len())
        {
            return None;
        }
        let results: Vec<QuestionResult> = self
            .questions
            .iter()
            .zip(answers)
            .map(|(q, &chosen)| {
                let answer = q.answer.unwrap_or(usize::MAX);
                QuestionResult {
                    chosen,
                    correct: chosen == answer,
                    answer,
                    explanation: q.explanation.clone().unwrap_or_default(),
                }
            })
            .collect();
        let score = results.iter().filter(|r| r.correct).count() as u32;
        Some(QuizScore { score, total: results.len() as u32, results })
    }
}

/// `POST /api/chat/{id}/messages/{message}/feedback`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackBody {
    /// `up` or `down`; `none` takes it back.
    pub value: String,
}

/// `POST /api/flashcards/{card}/review`: how well the user remembered (`again`, `hard`,
/// `good`, `easy`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewBody {
    pub rating: String,
}

/// A section of a document that `search_documents` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DocHit {
    /// The file, relative to the assistant's docs folder.
    pub source: String,
    /// Its heading path, e.g. `Chat › Adding a tool`.
    pub heading: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    pub snippet: String,
}

/// A tool the user's page runs for the assistant, as the server defines it. Clients name the
/// ones they run; they can neither add one nor change what it says to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ClientToolDef {
    pub name: String,
    pub description: String,
    /// JSON Schema of its arguments.
    #[schema(value_type = Object)]
    pub parameters: serde_json::Value,
    /// Whether it only reads the page: only those are run again after a reload.
    pub read_only: bool,
}

/// One call of a client tool, as `client_tool_calls` sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ClientCall {
    pub id: String,
    pub name: String,
    #[schema(value_type = Object)]
    pub arguments: serde_json::Value,
}

/// `GET /api/assistant`: the client tools the caller's assistant may use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AssistantView {
    pub tools: Vec<ClientToolDef>,
    /// Rounds of tool calls one message may take before the server ends the turn.
    pub max_rounds: u32,
    /// Whether this assistant can search documents.
    pub docs: bool,
    /// How far its documents are indexed (built in the background).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs_index: Option<DocsStatus>,
}

/// How far an assistant's documents are indexed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DocsStatus {
    pub files: u64,
    pub chunks: u64,
    /// Chunks with a vector (searchable by meaning); the others by keywords only.
    pub embedded: u64,
}

/// One result in `POST /api/chat/{id}/tool-results`: `output` or `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientResult {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Object)]
    pub output: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `POST /api/chat/{id}/tool-results`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolResultsBody {
    pub results: Vec<ClientResult>,
}

/// A client tool call still waiting for the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PendingCall {
    pub id: String,
    pub name: String,
    #[schema(value_type = Object)]
    pub arguments: serde_json::Value,
    pub read_only: bool,
    pub round: u32,
    /// RFC 3339; past it the call is closed as expired.
    pub deadline: String,
}

/// `GET /api/chat/{id}/pending`: the turn waiting for the page, if one is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PendingView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    pub calls: Vec<PendingCall>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiz() -> Quiz {
        Quiz {
            title: "t".into(),
            questions: vec![Question {
                question: "q".into(),
                options: vec!["a".into(), "b".into()],
                answer: Some(1),
                explanation: Some("because".into()),
            }],
        }
    }

    #[test]
    fn a_public_quiz_has_no_answers_and_scores_on_the_server() {
        let q = quiz();
        let public = serde_json::to_string(&Part::Quiz { quiz: q.clone() }.public()).unwrap_or_default();
        assert!(!public.contains("because") && !public.contains("\"answer\""), "{public}");
        let s = q.score(&[1]).unwrap_or_else(|| panic!("scored"));
        assert_eq!((s.score, s.total), (1, 1));
        assert!(q.score(&[0, 1]).is_none());
        assert_eq!(q.score(&[0]).map(|s| s.score), Some(0));
        assert!(q.score(&[7]).is_none(), "an option that does not exist");
    }

    #[test]
    fn parts_round_trip_with_their_type_and_set_flags() {
        let parts = vec![
            Part::Text { text: "hi".into() },
            Part::Diagram { title: "d".into(), mermaid: "graph TD; A-->B".into() },
            Part::Code { language: "rust".into(), code: "fn main(){}".into() },
        ];
        let json = serde_json::to_string(&parts).unwrap_or_default();
        assert!(json.contains(r#""type":"diagram""#), "{json}");
        let back: Vec<Part> = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, parts);
        let f = ContentFlags::of(&parts);
        assert!(f.has_diagram && f.has_code && !f.has_quiz);
    }
}
