//! Judging a descriptive criterion ("an empty email shows an error") with the model: it sees
//! the criterion, the task, the project's tree and the files the task names (its outputs
//! first), and answers `{"met": true|false, "reasoning": "…"}`. An answer that is not such a
//! verdict, or a model that cannot be reached, is "not met", with the reason kept: a criterion
//! is never passed by default.

use crate::handlers::Judge;
use crate::{Judgement, Task};
use wright_agent::{AgentLoop, LoopStats};
use wright_provider::{ChatRequest, Message, complete};
use wright_tools::ToolContext;

const SYSTEM: &str = "You check whether a software project meets one criterion. Judge only from the files \
shown; if they do not show it, it is not met. Answer with one JSON object and nothing else: \
{\"met\": true or false, \"reasoning\": \"one or two sentences naming the file and lines that decide\"}.";

/// Most characters of one file shown to the judge.
const MAX_FILE_CHARS: usize = 8_000;
/// Most files shown.
const MAX_FILES: usize = 8;

/// A [`Judge`] that asks the run's model (its provider, model, retries and pricing).
pub struct ModelJudge {
    pub agent: AgentLoop,
}

#[async_trait::async_trait]
impl Judge for ModelJudge {
    async fn judge(&self, task: &Task, criterion: &str, ctx: &ToolContext) -> Judgement {
        let request = ChatRequest {
            model: task.model.clone().unwrap_or_else(|| self.agent.model.clone()),
            messages: vec![Message::system(SYSTEM), Message::user(prompt(task, criterion, ctx))],
            tools: Vec::new(),
            temperature: Some(0.0),
            max_tokens: Some(600),
            tool_choice: Default::default(),
        };
        let answer =
            complete(self.agent.provider.as_ref(), &request, &self.agent.retry, &ctx.cancel, |_| {}, |_, _, _| {})
                .await;
        match answer {
            Ok(r) => {
                let mut stats = LoopStats::default();
                self.agent.charge(r.model.as_deref().unwrap_or(&request.model), r.usage, &mut stats).await;
                verdict(criterion, &r.content)
            }
            Err(e) => Judgement {
                criterion: criterion.to_string(),
                met: false,
                reasoning: format!("not judged: the model service failed ({e})"),
            },
        }
    }
}

/// What the judge reads.
fn prompt(task: &Task, criterion: &str, ctx: &ToolContext) -> String {
    let mut p = format!(
        "Criterion: {criterion}\n\nTask `{}`: {}\n\nProject files:\n```\n{}```\n",
        task.id,
        task.description.trim(),
        crate::codegen::tree(wright_tools::project_files(&ctx.workspace))
    );
    let named = task.output_artifacts.iter().chain(&task.input_artifacts);
    let mut shown = 0;
    for path in named {
        if shown == MAX_FILES {
            break;
        }
        let Ok(bytes) = ctx.workspace.read(path) else { continue };
        shown += 1;
        let text = String::from_utf8_lossy(&bytes);
        p.push_str(&format!("\nFile `{path}`:\n```\n{}\n```\n", wright_tools::clip(&text, MAX_FILE_CHARS)));
    }
    p
}

/// The verdict in an answer: the outermost `{…}` read as `{met, reasoning}`.
pub(crate) fn verdict(criterion: &str, answer: &str) -> Judgement {
    #[derive(serde::Deserialize)]
    struct Verdict {
        met: bool,
        #[serde(default)]
        reasoning: String,
    }
    let parsed = match (answer.find('{'), answer.rfind('}')) {
        (Some(a), Some(b)) if a < b => serde_json::from_str::<Verdict>(&answer[a..=b]).ok(),
        _ => None,
    };
    match parsed {
        Some(v) => Judgement { criterion: criterion.to_string(), met: v.met, reasoning: v.reasoning },
        None => Judgement {
            criterion: criterion.to_string(),
            met: false,
            reasoning: format!("not judged: the model's answer was not a verdict: {}", wright_tools::clip(answer, 300)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read_from_json_even_inside_prose_and_anything_else_is_not_met() {
        let j = verdict("shows an error", "```json\n{\"met\": true, \"reasoning\": \"form.js line 4\"}\n```");
        assert!(j.met);
        assert_eq!(j.reasoning, "form.js line 4");
        let j = verdict("shows an error", "{\"met\": false}");
        assert!(!j.met);
        for garbage in ["yes", "{\"met\": \"yes\"}", "}{", ""] {
            let j = verdict("c", garbage);
            assert!(!j.met && j.reasoning.starts_with("not judged"), "{garbage}: {j:?}");
        }
    }

    proptest::proptest! {
        /// Whatever the model says, reading it never panics and never passes without `"met": true`.
        #[test]
        fn any_answer_is_read_safely(answer in ".{0,200}") {
            let j = verdict("c", &answer);
            if j.met {
                proptest::prop_assert!(answer.contains("true"));
            }
        }
    }
}
