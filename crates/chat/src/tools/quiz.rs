//! `quiz`: multiple-choice questions as JSON checked against a schema, each with its correct
//! answer and an explanation. Clients get the questions without the answers; the server
//! scores the answers ([`wright_events::chat::Quiz::score`]).

use crate::model::{structured, subject_line};
use crate::relevance::Cues;
use crate::tool::{ChatContext, ChatTool, ToolError, ToolOutput};
use async_trait::async_trait;
use serde_json::{Value, json};
use wright_events::chat::{Part, Question, Quiz};
use wright_provider::ToolSpec;

/// The schema a quiz must meet, given to the model and checked on its answer.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": 120},
            "questions": {
                "type": "array",
                "maxItems": 10,
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "maxLength": 400},
                        "options": {"type": "array", "maxItems": 6, "items": {"type": "string", "maxLength": 200}},
                        "answer": {"type": "integer", "minimum": 0},
                        "explanation": {"type": "string", "maxLength": 600}
                    },
                    "required": ["question", "options", "answer", "explanation"]
                }
            }
        },
        "required": ["title", "questions"]
    })
}

/// Check a quiz beyond its schema: at least one question, 2–6 distinct non-empty options, the
/// answer one of them, an explanation for each.
pub fn check_quiz(v: &Value) -> Result<Quiz, String> {
    wright_tools::schema::validate(&schema(), v)?;
    let quiz: Quiz = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    if quiz.title.trim().is_empty() {
        return Err("the quiz has no title".into());
    }
    if quiz.questions.is_empty() {
        return Err("the quiz has no questions".into());
    }
    for (i, q) in quiz.questions.iter().enumerate() {
        let n = i + 1;
        if q.question.trim().is_empty() {
            return Err(format!("question {n} is empty"));
        }
        if !(2..=6).contains(&q.options.len()) {
            return Err(format!("question {n} needs 2 to 6 options, not {}", q.options.len()));
        }
        let mut seen = std::collections::HashSet::new();
        if q.options.iter().any(|o| o.trim().is_empty() || !seen.insert(o.trim().to_lowercase())) {
            return Err(format!("question {n} has an empty or repeated option"));
        }
        match q.answer {
            Some(a) if a < q.options.len() => {}
            _ => return Err(format!("question {n}'s answer is not the index of one of its options")),
        }
        if q.explanation.as_deref().is_none_or(|e| e.trim().is_empty()) {
            return Err(format!("question {n} has no explanation"));
        }
    }
    Ok(Quiz {
        title: quiz.title.trim().to_string(),
        questions: quiz
            .questions
            .into_iter()
            .map(|q| Question { question: q.question.trim().to_string(), ..q })
            .collect(),
    })
}

/// The `quiz` tool.
pub struct QuizTool;

#[async_trait]
impl ChatTool for QuizTool {
    fn name(&self) -> &'static str {
        "quiz"
    }

    fn description(&self) -> &'static str {
        "Makes a multiple-choice quiz on a topic, answered and scored in the chat."
    }

    fn triggers(&self) -> &'static [&'static str] {
        &["quiz", "test me", "multiple choice", "questions", "teste", "perguntas", "múltipla escolha", "simulado"]
    }

    fn message_type(&self) -> &'static str {
        "quiz"
    }

    fn cues(&self) -> Cues {
        super::cues::quiz()
    }

    fn can_handle(&self, message: &str, ctx: &ChatContext) -> f32 {
        ctx.scorer.score(self.name(), message, ctx.embedding.as_deref().map(Vec::as_slice))
    }

    async fn execute(&self, message: &str, ctx: &ChatContext) -> Result<ToolOutput, ToolError> {
        let spec = ToolSpec {
            name: "makeQuiz".into(),
            description: "Return a multiple-choice quiz: 3 to 5 questions, each with 4 options, the index of the \
                          correct option (from 0) and a one-sentence explanation."
                .into(),
            parameters: schema(),
        };
        let system = format!(
            "You write short multiple-choice quizzes for students. Exactly one option per question is correct; \
             `answer` is its index from 0. Write in {}.",
            ctx.lang.name()
        );
        let (quiz, warning) = structured(ctx, spec, system, subject_line(message), check_quiz).await?;
        Ok(ToolOutput {
            content: format!(
                "A quiz \"{}\" with {} questions is shown to the user, who answers it in the chat.",
                quiz.title,
                quiz.questions.len()
            ),
            part: Part::Quiz { quiz },
            warning,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> Value {
        json!({"title": "Cells", "questions": [
            {"question": "Powerhouse?", "options": ["Nucleus", "Mitochondria"], "answer": 1, "explanation": "ATP."}
        ]})
    }

    #[test]
    fn a_good_quiz_passes() {
        let q = check_quiz(&good()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(q.questions[0].answer, Some(1));
    }

    #[test]
    fn schema_and_sense_violations_are_named() {
        let mut cases = Vec::new();
        let mut v = good();
        v["questions"][0]["answer"] = json!(5);
        cases.push((v, "answer"));
        let mut v = good();
        v["questions"][0]["options"] = json!(["Only"]);
        cases.push((v, "2 to 6 options"));
        let mut v = good();
        v["questions"][0]["options"] = json!(["A", "a"]);
        cases.push((v, "repeated"));
        let mut v = good();
        v["questions"][0].as_object_mut().map(|o| o.remove("explanation"));
        cases.push((v, "explanation"));
        let mut v = good();
        v["questions"] = json!([]);
        cases.push((v, "no questions"));
        cases.push((json!({"title": "x", "questions": "nope"}), "questions"));
        cases.push((json!({"questions": []}), "title"));
        let mut v = good();
        v["questions"][0]["answer"] = json!("1");
        cases.push((v, "answer"));
        for (v, why) in cases {
            let err = check_quiz(&v).err().unwrap_or_default();
            assert!(err.contains(why), "{v}: {err}");
        }
    }
}
