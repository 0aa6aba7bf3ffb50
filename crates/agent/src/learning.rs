//! Learning inside a build: the lessons retrieved for its prompts (and recorded as used),
//! and the LEARNING phase, which turns a fix (the error and the diff of the files) into a
//! lesson for later builds.

use crate::agent_loop::AgentLoop;
use crate::journal::Journal;
use crate::prompts::{self, Lang, Template};
use crate::run::{BuildRequest, Progress, enter};
use std::collections::BTreeMap;
use wright_events::{EventKind, Level, Phase};
use wright_memory::{LessonInput, Query};
use wright_provider::{ChatRequest, complete};
use wright_store::Note;
use wright_tools::ToolContext;

/// Retrieve notes for `q` not in `skip`, and record that the build uses them.
pub(crate) async fn find_notes(j: &Journal, q: &Query<'_>, budget: u32, skip: &[String], phase: &str) -> Vec<Note> {
    let notes = match wright_memory::retrieve(j.store().as_ref(), q, budget).await {
        Ok(n) => n.into_iter().filter(|n| !skip.contains(&n.id)).collect::<Vec<_>>(),
        Err(e) => {
            tracing::warn!("learning notes not available: {e}");
            return Vec::new();
        }
    };
    if !notes.is_empty() {
        let ids: Vec<String> = notes.iter().map(|n| n.id.clone()).collect();
        if let Err(e) = j.store().record_note_uses(j.build_id(), &ids, phase).await {
            tracing::warn!("note uses not stored: {e}");
        }
    }
    notes
}

pub(crate) fn knowledge_of(notes: &[Note], lang: Lang) -> Option<String> {
    let lines: Vec<String> = notes.iter().map(wright_memory::lesson_line).collect();
    prompts::knowledge_block(&lines, lang)
}

pub(crate) fn lessons_narration(lang: Lang, n: usize) -> String {
    match lang {
        Lang::En => format!("Using {n} lesson(s) learned in earlier builds."),
        Lang::Pt => format!("Usando {n} lição(ões) aprendida(s) em construções anteriores."),
    }
}

/// The LEARNING phase: ask the note model for the lesson of this fix and keep it.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn learn(
    req: &BuildRequest,
    template: Template,
    agent: &AgentLoop,
    ctx: &ToolContext,
    journal: &Journal,
    p: &mut Progress,
    error: &str,
    before: &Snapshot,
) {
    if req.max_cost_usd.is_some_and(|max| p.stats.cost_usd >= max) {
        return;
    }
    let message = match req.lang {
        Lang::En => "Learning a lesson from this fix for future builds.",
        Lang::Pt => "Aprendendo uma lição com esta correção para as próximas construções.",
    };
    enter(ctx, Some(journal), Phase::Learning, p.fix_attempts, message.into());
    let fix = diff(before, &snapshot(&ctx.workspace), 6000);
    let model = req.note_model.clone().unwrap_or_else(|| agent.model.clone());
    let request = ChatRequest {
        model: model.clone(),
        messages: wright_memory::extraction_messages(&LessonInput {
            request: &req.prompt,
            template: template.as_str(),
            error,
            fix: &fix,
        }),
        tools: Vec::new(),
        temperature: req.note_temperature,
        max_tokens: Some(700),
        tool_choice: Default::default(),
    };
    let emitter = &ctx.emitter;
    let answer = complete(agent.provider.as_ref(), &request, &agent.retry, &ctx.cancel, |_| {}, |_, _, _| {}).await;
    p.stats.turns += 1;
    let response = match answer {
        Ok(r) => r,
        Err(e) => {
            emitter.status(Level::Warning, format!("No lesson was learned this time: the note model failed ({e})."));
            return;
        }
    };
    let answered_by = response.model.clone().unwrap_or(model);
    agent.charge(&answered_by, response.usage, &mut p.stats).await;
    let draft = match wright_memory::parse_lesson(&response.content) {
        Ok(d) => d,
        Err(e) => {
            emitter.status(Level::Warning, format!("No lesson was learned this time: {e}."));
            return;
        }
    };
    match wright_memory::remember(journal.store().as_ref(), draft, journal.build_id(), error, &fix).await {
        Ok(learned) => {
            emitter.emit(EventKind::Learning {
                note_id: learned.note.id.clone(),
                trigger: learned.note.trigger.clone(),
                lesson: learned.note.lesson.clone(),
            });
            p.log.push(format!(
                "{} note {}: {}",
                if learned.reinforced { "Reinforced" } else { "Learned" },
                learned.note.id,
                learned.note.lesson
            ));
            p.learned = Some((learned.note, learned.reinforced));
        }
        Err(e) => emitter.status(Level::Warning, format!("The lesson could not be saved: {e}.")),
    }
}

/// Text files of the project, by path (what a lesson's diff is made from).
pub(crate) type Snapshot = BTreeMap<String, String>;

pub(crate) fn snapshot(ws: &wright_sandbox::Workspace) -> Snapshot {
    wright_tools::project_files(ws)
        .into_iter()
        .take(300)
        .filter_map(|f| {
            let bytes = ws.read(&f).ok().filter(|b| b.len() <= 100_000)?;
            String::from_utf8(bytes).ok().map(|text| (f, text))
        })
        .collect()
}

/// A unified diff of what changed between two snapshots, at most `max` characters.
fn diff(before: &Snapshot, after: &Snapshot, max: usize) -> String {
    let empty = String::new();
    let mut out = String::new();
    let paths: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for path in paths {
        let (a, b) = (before.get(path).unwrap_or(&empty), after.get(path).unwrap_or(&empty));
        if a == b {
            continue;
        }
        out.push_str(&format!("--- a/{path}\n+++ b/{path}\n"));
        let patch = diffy::create_patch(a, b).to_string();
        // diffy's own header names the files "original"/"modified"; keep the hunks only.
        out.extend(patch.lines().skip_while(|l| !l.starts_with("@@")).map(|l| format!("{l}\n")));
    }
    wright_tools::clip(&out, max)
}
