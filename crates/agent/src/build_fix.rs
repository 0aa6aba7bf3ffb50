//! The build's side of the fix loop ([`crate::fixing::fix_loop`]): TRANSPILING and VERIFYING
//! as its verification, and as its fix message the failures, what wright read in them
//! (diagnosis) and the lessons about them; the lesson of a fix is learned when it passes.

use crate::agent_loop::{AgentLoop, PhaseEnd};
use crate::diagnose::{diagnose, diagnosis_block};
use crate::fixing::{FixAttempt, FixLoop, Round};
use crate::journal::Journal;
use crate::learning::{Snapshot, find_notes, knowledge_of, learn, lessons_narration, snapshot};
use crate::prompts::{self, Narration, Template};
use crate::run::{BuildEnd, BuildRequest, Progress, enter};
use crate::verify::{Failure, Verification, verify};
use wright_events::{EventKind, Level, Phase};
use wright_memory::Query;
use wright_provider::{Message, ProviderError};
use wright_store::AttemptError;
use wright_tools::ToolContext;

/// A build between writing the project and its end.
pub(crate) struct BuildFixing<'a> {
    pub(crate) req: &'a BuildRequest,
    pub(crate) template: Template,
    pub(crate) ctx: &'a ToolContext,
    pub(crate) journal: Option<&'a Journal>,
    pub(crate) p: &'a mut Progress,
    pub(crate) fix_agent: &'a AgentLoop,
    pub(crate) system: String,
    /// Packages the project uses, for finding lessons.
    pub(crate) libraries: Vec<String>,
    /// One line per failed verification, for the fresh attempt's opening.
    pub(crate) history: Vec<String>,
    /// What failed first and the files at that moment: the lesson is the difference.
    pub(crate) before_fix: Option<(String, Snapshot)>,
}

impl FixLoop for BuildFixing<'_> {
    type End = BuildEnd;
    type Failed = Verification;

    async fn verify(&mut self, made: u32) -> Round<BuildEnd, Verification> {
        let (req, ctx, journal) = (self.req, self.ctx, self.journal);
        if ctx.cancel.is_cancelled() {
            return Round::Done(BuildEnd::Cancelled);
        }
        let mut transpiled = None;
        if self.template.has_build_step() {
            let words = prompts::narrate(req.lang, Narration::Transpiling);
            enter(ctx, journal, Phase::Transpiling, made, words);
            transpiled = crate::transpiling::transpile(ctx, req.transpile_limit, made).await;
        }
        let v = match transpiled {
            Some(failed) => failed,
            None => {
                let words = prompts::narrate(req.lang, Narration::Verifying);
                enter(ctx, journal, Phase::Verifying, made, words);
                let browser =
                    crate::verify::BrowserCheck { settings: &req.browser, screenshot: req.screenshot.as_deref() };
                verify(ctx, self.template, &req.checks, made, &browser).await
            }
        };
        let p = &mut *self.p;
        p.browser = v.browser.clone();
        if ctx.cancel.is_cancelled() {
            return Round::Done(BuildEnd::Cancelled);
        }
        if v.passed() {
            p.log.push(format!("Verification {}: passed.", made + 1));
            if made > 0 {
                ctx.emitter.emit(EventKind::ErrorFixed { iteration: made });
                for e in &mut p.errors {
                    e.fixed = true;
                }
                if let (Some(j), Some((error, snapshot))) = (journal, self.before_fix.as_ref()) {
                    learn(req, self.template, self.fix_agent, ctx, j, p, error, snapshot).await;
                }
            }
            return Round::Done(BuildEnd::Published);
        }
        p.log.push(format!("Verification {}: {}.", made + 1, summarize(&v.failures)));
        for f in &v.failures {
            p.errors.push(AttemptError {
                iteration: made,
                kind: f.kind.as_str().to_string(),
                error: wright_tools::clip(&f.summary, 500),
                fixed: false,
            });
        }
        Round::Failed(v)
    }

    fn exhausted(&mut self, _: Verification, _: u32) -> BuildEnd {
        BuildEnd::VerificationFailed
    }

    async fn fix_message(&mut self, v: &Verification, next: FixAttempt) -> String {
        let (req, ctx, journal) = (self.req, self.ctx, self.journal);
        let summary = summarize(&v.failures);
        let details = failure_text(&v.failures);
        if self.before_fix.is_none() && journal.is_some() {
            self.before_fix = Some((details.clone(), snapshot(&ctx.workspace)));
        }
        let p = &mut *self.p;
        p.fix_attempts = next.number;
        let attempt = next.number;
        self.history.push(format!("verification {}: {}", attempt, summary));
        enter(ctx, journal, Phase::Fixing, attempt, format!("Fixing: {}", wright_tools::clip(&summary, 300)));
        p.log.push(format!("Fix attempt {attempt} of {}.", req.max_fix_attempts));

        let diagnoses = diagnose(&v.failures);
        // Lessons about these errors that the opening prompt did not carry.
        let mut extra = Vec::new();
        if let Some(j) = journal {
            let mut libs = self.libraries.clone();
            libs.extend(diagnoses.iter().filter_map(|d| d.library.clone()));
            let q = Query { prompt: &req.prompt, template: self.template.as_str(), libraries: &libs, errors: &details };
            let known: Vec<String> = p.applied.iter().map(|n| n.id.clone()).collect();
            extra = find_notes(j, &q, req.note_budget, &known, "FIXING").await;
            if !extra.is_empty() {
                ctx.emitter.status(Level::Info, lessons_narration(req.lang, extra.len()));
                p.log.push(format!(
                    "Used {} more lesson(s) for this error: {}.",
                    extra.len(),
                    extra.iter().map(|n| n.id.as_str()).collect::<Vec<_>>().join(", ")
                ));
                p.applied.extend(extra.iter().cloned());
            }
        }
        let diagnosis = diagnosis_block(&diagnoses);
        // The last attempt starts afresh: long failed transcripts make models worse at debugging.
        if next.fresh {
            let files = wright_tools::project_files(&ctx.workspace);
            let mut opening = String::new();
            if let Some(k) = knowledge_of(&p.applied, req.lang) {
                opening.push_str(&k);
                opening.push('\n');
            }
            opening.push_str(&prompts::fresh_fix_message(
                &req.prompt,
                &files,
                &self.history,
                &v.failures,
                attempt,
                req.max_fix_attempts,
            ));
            opening.push_str(&diagnosis);
            if let Some(j) = journal {
                j.restart();
            }
            opening
        } else {
            let mut m = prompts::fix_message(&v.failures, attempt, req.max_fix_attempts);
            m.push_str(&diagnosis);
            if let Some(k) = knowledge_of(&extra, req.lang) {
                m.push('\n');
                m.push_str(&k);
            }
            m
        }
    }

    fn system(&self) -> String {
        self.system.clone()
    }

    async fn run(&mut self, messages: &mut Vec<Message>) -> Option<BuildEnd> {
        let end = phase_end(self.fix_agent.run(messages, &mut self.p.stats).await, &self.ctx.emitter);
        if let Some(j) = self.journal {
            j.sync(messages, None).await;
        }
        end
    }
}

/// Every failure's detail, for diagnosis, note matching and the lesson.
fn failure_text(failures: &[Failure]) -> String {
    failures.iter().map(|f| format!("{}\n{}", f.summary, f.text())).collect::<Vec<_>>().join("\n\n")
}

/// Map a loop phase's end to a build end when it ends the build; narrate the others.
pub(crate) fn phase_end(end: PhaseEnd, emitter: &wright_events::Emitter) -> Option<BuildEnd> {
    match end {
        PhaseEnd::Finished(_) => None,
        PhaseEnd::MaxTurns => {
            emitter.status(Level::Warning, "The model used all its turns for this step; checking what it has so far.");
            None
        }
        PhaseEnd::Stuck(_) => None,
        PhaseEnd::Cancelled => Some(BuildEnd::Cancelled),
        PhaseEnd::BudgetSpent(c) => Some(BuildEnd::BudgetSpent(c)),
        // The loop compacted what it could before giving up on an overflow.
        PhaseEnd::Provider(ProviderError::ContextTooLong(m)) => Some(BuildEnd::ContextFull(m)),
        PhaseEnd::Provider(e) => Some(BuildEnd::ProviderUnusable(e)),
    }
}

fn summarize(failures: &[Failure]) -> String {
    failures.iter().map(|f| f.summary.clone()).collect::<Vec<_>>().join("; ")
}
