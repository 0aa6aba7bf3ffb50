//! The build state machine.

use crate::agent_loop::AgentLoop;
use crate::build_fix::{BuildFixing, phase_end};
use crate::ending::{Ending, narrate_findings};
use crate::fixing::{FixPlan, fix_loop};
use crate::journal::Journal;
use crate::learning::{find_notes, knowledge_of, lessons_narration};
use crate::prompts::{self, Narration, Template};
pub use crate::run::{BuildEnd, BuildReport, BuildRequest};
use crate::run::{Progress, enter};
use crate::scan;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use wright_events::{EventKind, Level, Phase};
use wright_memory::Query;
use wright_provider::{Message, Provider, Role};
use wright_store::{NewBuild, Store};
use wright_tools::{Registry, ToolContext};

/// The parts a build runs on. `ctx.cancel` is the caller's stop button (Ctrl-C).
pub struct BuildDeps {
    pub provider: Arc<dyn Provider>,
    pub registry: Arc<Registry>,
    pub ctx: ToolContext,
    /// Where the build, its conversation, the notes and the statistics live. Without one the
    /// build runs with no memory: no notes in, no lesson out, no record.
    pub store: Option<Arc<dyn Store>>,
    /// Which provider and model, for the record (`openai:gpt-4o-mini`).
    pub provider_label: String,
    /// The worker that holds the build (`wright serve`), so its ending changes the record only
    /// while it still holds it; `None` for a build no worker claims (a local run).
    pub holder: Option<String>,
    /// The writer that stores the build's events (the emitter's sink) and ends the run: the
    /// record and `complete` in one transaction, after every event emitted before. Without one
    /// `complete` goes to the emitter's sinks, and a store (if any) is ended directly.
    pub log: Option<Arc<wright_store::LogWriter>>,
    /// What the run sets up once its record exists, before the model's first turn: the MCP
    /// servers of `wright.toml` (their events are the run's). `None`: nothing.
    pub prelude: Option<Arc<dyn Prelude>>,
}

/// Set-up a run does once its record exists (so what it says is stored as the run's), before
/// the model's first turn: tools it adds to the registry, or why the run cannot go on (it
/// then ends at once, its record and `complete` stored as for any ending).
#[async_trait::async_trait]
pub trait Prelude: Send + Sync {
    async fn prepare(&self, ctx: &ToolContext) -> Result<Vec<Arc<dyn wright_tools::Tool>>, String>;
}

/// Run one build to its end. Always emits `complete` last, whatever happens; with a store,
/// the build's record is final before `complete` is emitted.
pub async fn run_build(req: BuildRequest, deps: BuildDeps) -> BuildReport {
    let started = Instant::now();
    let user_cancel = deps.ctx.cancel.clone();
    let cancel = user_cancel.child_token();
    let timed_out = Arc::new(AtomicBool::new(false));
    let timer = {
        let (cancel, timed_out, timeout) = (cancel.clone(), timed_out.clone(), req.timeout);
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            timed_out.store(true, Ordering::SeqCst);
            cancel.cancel();
        })
    };
    let mut ctx = deps.ctx;
    ctx.cancel = cancel.clone();
    let emitter = ctx.emitter.clone();
    let build_id = emitter.build_id().to_string();
    let template = req.template.resolve(&req.prompt);
    let journal = deps
        .store
        .as_ref()
        .map(|s| Arc::new(Journal::for_writer(s.clone(), &build_id, &deps.provider_label, deps.holder.clone())));
    if let Some(store) = &deps.store {
        let record = NewBuild {
            id: build_id.clone().into(),
            kind: wright_events::RunKind::Build,
            parent_id: req.parent.clone().map(Into::into),
            prompt: req.prompt.clone(),
            template: Some(template),
            lang: req.lang,
            provider: deps.provider_label.clone(),
            model: req.model.clone(),
            workspace: req.workspace_record.clone().unwrap_or_else(|| ctx.workspace.root().display().to_string()),
            started_at: wright_store::now(),
        };
        if let Err(e) = store.create_build(&record).await {
            tracing::warn!(build = %build_id, "build record not created: {e}");
        }
    }
    if let Some(a) = &req.experiment {
        emitter.emit(EventKind::ExperimentAssigned {
            experiment: a.experiment.clone(),
            variant: a.variant.name.clone(),
            changes: a.variant.describe(),
        });
    }
    let mut registry = deps.registry;
    let mut cannot_start = None;
    if let Some(prelude) = &deps.prelude {
        match prelude.prepare(&ctx).await {
            Ok(tools) if tools.is_empty() => {}
            Ok(tools) => {
                let mut more = (*registry).clone();
                tools.into_iter().for_each(|t| more.register(t));
                registry = Arc::new(more);
            }
            Err(why) => cannot_start = Some(why),
        }
    }
    let agent = AgentLoop {
        provider: deps.provider,
        registry,
        ctx: ctx.clone(),
        model: req.model.clone(),
        temperature: req.temperature,
        max_tokens: req.max_tokens,
        retry: req.retry.clone(),
        max_turns: req.max_turns,
        pricing: req.pricing.clone(),
        max_cost_usd: req.max_cost_usd,
        journal: journal.clone(),
        fit: Arc::default(),
        budget: Some(Arc::new(req.budgets.for_template(template))),
    };
    let mut p = Progress::default();

    let end = match cannot_start {
        Some(why) => BuildEnd::ToolServerFailed(why),
        None => drive(&req, template, &agent, &ctx, journal.as_deref(), &mut p).await,
    };
    timer.abort();
    // A cancel that came from the timer is a timeout, not the user's stop.
    let end = match end {
        BuildEnd::Cancelled if timed_out.load(Ordering::SeqCst) => BuildEnd::TimedOut(req.timeout),
        other => other,
    };

    // Whatever the outcome, the files are kept, so say what is risky in them; once per build,
    // on the final files, so fix attempts do not repeat the same warnings.
    // Blocking file reads, so off the async workers.
    let root = ctx.workspace.root().to_path_buf();
    let skip: &[&str] = if template.has_build_step() { &[wright_transpile::OUT_DIR] } else { &[] };
    p.security = tokio::task::spawn_blocking(move || scan::scan_project_except(&root, skip)).await.unwrap_or_default();
    narrate_findings(&emitter, &p.security.findings, req.lang);
    if !p.security.findings.is_empty() {
        p.log.push(format!(
            "Security scan: {} warning(s) in {} file(s) of web code.",
            p.security.findings.len(),
            p.security.files_scanned
        ));
    }

    let files = wright_tools::project_files(&ctx.workspace);
    let success = end == BuildEnd::Published;
    let closing = match &end {
        BuildEnd::Published => {
            let done = match &p.browser {
                crate::verify::BrowserStatus::NotRun(why) => {
                    prompts::narrate(req.lang, Narration::PublishedUnchecked(why.clone()))
                }
                _ => prompts::narrate(req.lang, Narration::Published),
            };
            match &p.from_starter {
                Some((title, defaults)) => {
                    let what = prompts::narrate(req.lang, Narration::FromStarter(title.clone(), *defaults));
                    format!("{what} {done}")
                }
                None => done,
            }
        }
        BuildEnd::VerificationFailed => prompts::narrate(
            req.lang,
            Narration::StillFailing(p.fix_attempts, ctx.workspace.root().display().to_string()),
        ),
        BuildEnd::ProviderUnusable(_) => prompts::narrate(req.lang, Narration::ProviderFailed),
        BuildEnd::ContextFull(e) => prompts::narrate(req.lang, Narration::ContextFull(e.clone())),
        BuildEnd::TimedOut(t) => prompts::narrate(req.lang, Narration::TimedOut(t.as_secs())),
        BuildEnd::Cancelled => prompts::narrate(req.lang, Narration::Stopped),
        BuildEnd::BudgetSpent(c) => prompts::narrate(req.lang, Narration::BudgetSpent(*c)),
        BuildEnd::NoFittingStarter => prompts::narrate(req.lang, Narration::NoFittingStarter),
        BuildEnd::ToolServerFailed(why) => prompts::narrate(req.lang, Narration::ToolServerFailed(why.clone())),
    };
    if let Some(j) = &journal {
        j.set_phase(if success { Phase::Published } else { Phase::Failed });
    }
    if success {
        emitter.emit(EventKind::Phase { phase: Phase::Published, iteration: p.fix_attempts, message: closing.clone() });
    } else {
        emitter.emit(EventKind::Phase { phase: Phase::Failed, iteration: p.fix_attempts, message: closing.clone() });
        // The technical reason, for whoever looks (`--verbose`, the web UI's details).
        let detail = match &end {
            BuildEnd::ProviderUnusable(e) => Some(e.to_string()),
            _ => None,
        };
        emitter.emit(EventKind::Error { message: closing.clone(), detail });
    }
    p.log.push(match &end {
        BuildEnd::ProviderUnusable(e) => format!("{closing} ({e})"),
        _ => closing,
    });
    let duration = started.elapsed();
    let ending = Ending { req: &req, template, build_id: &build_id, end: &end, p: &p, files: &files, duration };
    let report = ending.report(ctx.workspace.root());
    // A published build becomes an app with an address of its own (docs/apps.md).
    let app = match (&deps.store, success) {
        (Some(store), true) => {
            let parent = req.parent.as_deref();
            crate::publish::publish(store.as_ref(), &build_id, parent, &req.prompt, template, ctx.workspace.root())
                .await
                .map(Box::new)
        }
        _ => None,
    };
    // `complete` is made from the record (the store refuses one that is not), with the browser
    // check and the app that only the build knows.
    let run_end = wright_store::RunEnd::of(ending.finish(&report), vec![])
        .checked(p.browser == crate::verify::BrowserStatus::Checked, p.browser.reason().map(str::to_string))
        .with_app(app);
    // The build's record is whole before it ends.
    if let Some(j) = &journal {
        j.flush().await;
    }
    let ended_here = match &deps.store {
        Some(store) => {
            ending.record(store.as_ref(), deps.log.as_deref(), &emitter, deps.holder.as_deref(), run_end).await
        }
        None => {
            emitter.emit(run_end.complete);
            true
        }
    };
    BuildReport {
        ended_here,
        end,
        template,
        files,
        fix_attempts: p.fix_attempts,
        turns: p.stats.turns,
        usage: p.stats.usage,
        cost_usd: p.stats.cost_usd,
        duration,
        notes_applied: p.applied.iter().map(|n| n.id.clone()).collect(),
        learned: p.learned.map(|(n, _)| n),
        security_warnings: p.security.findings,
        report,
    }
}

/// The phases, up to (not including) the terminal one.
async fn drive(
    req: &BuildRequest,
    template: Template,
    agent: &AgentLoop,
    ctx: &ToolContext,
    journal: Option<&Journal>,
    p: &mut Progress,
) -> BuildEnd {
    let emitter = &ctx.emitter;
    enter(ctx, journal, Phase::Planning, 0, prompts::narrate(req.lang, Narration::Planning(template)));
    if req.hidden_removed > 0 {
        emitter.status(Level::Warning, prompts::narrate(req.lang, Narration::HiddenRemoved(req.hidden_removed)));
    }
    let existing = wright_tools::project_files(&ctx.workspace);
    // The built-in model and no starter that fits: said, and nothing is written.
    if let Some(nf) = req.no_fit.as_ref().filter(|_| req.history.is_empty() && existing.is_empty()) {
        emitter.status(Level::Info, crate::nofit::explain(req.lang, nf, &req.prompt));
        p.log.push("No tested starter fits the request; the built-in model built nothing.".into());
        return BuildEnd::NoFittingStarter;
    }
    // Libraries and snapshots only serve lessons, which need a store.
    let libraries =
        if journal.is_some() { project_libraries(&ctx.workspace, &existing, &req.prompt) } else { Vec::new() };
    if let Some(j) = journal {
        let q = Query { prompt: &req.prompt, template: template.as_str(), libraries: &libraries, errors: "" };
        let notes = find_notes(j, &q, req.note_budget, &[], "GENERATING").await;
        if !notes.is_empty() {
            emitter.status(Level::Info, lessons_narration(req.lang, notes.len()));
            p.log.push(format!(
                "Used {} lesson(s) from earlier builds: {}.",
                notes.len(),
                notes.iter().map(|n| n.id.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        p.applied = notes;
    }
    let mut system = prompts::system_prompt(template, req.lang);
    if let Some(suppliers) = prompts::suppliers_section(template, req.lang, &req.outside_apis) {
        system = format!("{system}\n{suppliers}");
    }
    if let Some(extra) = req.prompt_extra.as_deref().filter(|e| !e.trim().is_empty()) {
        system = format!("{system}\n{extra}");
    }
    let knowledge = knowledge_of(&p.applied, req.lang);
    // The learning notes are the layer a budget drops first when the prompt is over its share.
    let with_notes = agent.budget.as_ref().zip(knowledge.as_ref()).map(|(b, k)| AgentLoop {
        budget: Some(Arc::new(crate::budget::Budgeting { optional: vec![k.clone()], ..(**b).clone() })),
        ..agent.clone()
    });
    let agent = with_notes.as_ref().unwrap_or(agent);
    // A tested starter, for a new build: said first, then filled or followed.
    // (The starters are plain web pages: a template with a build step sets up its own project.)
    let starter =
        req.starter.as_ref().filter(|_| req.history.is_empty() && existing.is_empty() && !template.has_build_step());
    if let Some(choice) = starter {
        let title = choice.starter.manifest.title.get(req.lang).to_string();
        emitter.emit(EventKind::Starter {
            id: choice.starter.id().to_string(),
            title: title.clone(),
            score: choice.score,
            mode: choice.mode.as_str().to_string(),
        });
        emitter.status(Level::Info, prompts::narrate(req.lang, Narration::Starter(title)));
        p.log.push(format!(
            "Started from the {} starter (match {:.2}, {}).",
            choice.starter.id(),
            choice.score,
            choice.mode.as_str()
        ));
    }
    let opening = match starter.filter(|c| c.mode == crate::StarterMode::Reference) {
        Some(choice) => {
            Some([knowledge.clone().unwrap_or_default(), crate::starting::reference(choice, req.lang)].join("\n"))
        }
        None => knowledge.clone(),
    };
    let mut messages = if req.history.is_empty() {
        vec![
            Message::system(system.clone()),
            Message::user(prompts::request_message_with_knowledge(
                opening.as_deref(),
                &req.prompt,
                &existing,
                &req.checks,
            )),
        ]
    } else {
        p.log.push(format!("Continued build {}.", req.parent.as_deref().unwrap_or("?")));
        continuation(&req.history, &system, knowledge.as_deref(), &req.prompt, &existing, &req.checks)
    };

    enter(ctx, journal, Phase::Generating, 0, prompts::narrate(req.lang, Narration::Generating));
    if template.has_build_step() && req.history.is_empty() {
        let written = crate::transpiling::prepare(ctx, req.lang).await;
        if !written.is_empty() {
            p.log.push(format!("Set up the {} project ({}).", template.as_str(), written.join(", ")));
        }
    }
    let filled = match starter.filter(|c| c.mode == crate::StarterMode::Fill) {
        Some(choice) => match crate::starting::fill(agent, choice, &req.prompt, req.lang, ctx, &mut p.stats).await {
            Ok((files, said, kept_defaults)) => {
                p.log.push(said);
                p.from_starter = Some((choice.starter.manifest.title.get(req.lang).to_string(), kept_defaults));
                // The conversation the fix attempts continue says what was done.
                messages.push(Message::assistant(format!(
                    "I started from the tested \"{}\" starter and filled in its slots for the request; the project has {}.",
                    choice.starter.manifest.title.en,
                    files.join(", ")
                )));
                true
            }
            Err(e) => {
                emitter.status(
                    Level::Warning,
                    format!("The starter could not be used ({e}); writing the project instead."),
                );
                false
            }
        },
        None => false,
    };
    if !filled && let Some(end) = phase_end(agent.run(&mut messages, &mut p.stats).await, emitter) {
        return end;
    }
    if let Some(j) = journal {
        j.sync(&messages, None).await;
    }
    p.log.push(format!("Wrote the project ({} file(s)).", wright_tools::project_files(&ctx.workspace).len()));

    let fix_agent = AgentLoop {
        model: req.fix_model.clone().unwrap_or_else(|| agent.model.clone()),
        temperature: req.fix_temperature,
        ..agent.clone()
    };
    let fix_agent = &fix_agent;
    let mut fixing = BuildFixing {
        req,
        template,
        ctx,
        journal,
        p,
        fix_agent,
        system,
        libraries,
        history: Vec::new(),
        before_fix: None,
    };
    fix_loop(&mut fixing, FixPlan::new(req.max_fix_attempts), &mut messages).await
}

/// A continued build: the earlier conversation (old tool output shortened) under today's
/// system prompt, then the change request.
fn continuation(
    history: &[Message],
    system: &str,
    knowledge: Option<&str>,
    prompt: &str,
    files: &[String],
    checks: &[String],
) -> Vec<Message> {
    let mut messages: Vec<Message> = history.to_vec();
    match messages.first_mut() {
        Some(m) if m.role == Role::System => m.content = Some(system.to_string()),
        _ => messages.insert(0, Message::system(system)),
    }
    for m in messages.iter_mut().filter(|m| m.role == Role::Tool) {
        if let Some(c) = m.content.as_mut().filter(|c| c.len() > 1200) {
            *c = format!("{} […earlier output shortened]", wright_tools::clip(c, 300));
        }
    }
    let mut change = String::new();
    if let Some(k) = knowledge {
        change.push_str(k);
        change.push('\n');
    }
    change.push_str(&format!(
        "The project above is built. Now change it as asked: {}\nRead the files you need first, change only what the request needs, and keep the tests passing (update or add tests for the change).\n",
        prompt.trim()
    ));
    if !files.is_empty() {
        change.push_str("\nThe project folder has these files:\n");
        for f in files.iter().take(200) {
            change.push_str(&format!("- {f}\n"));
        }
    }
    if !checks.is_empty() {
        change.push_str("\nThese acceptance commands must also succeed:\n");
        for c in checks {
            change.push_str(&format!("- `{c}`\n"));
        }
    }
    messages.push(Message::user(change));
    messages
}

/// Packages the project and the request name: package.json dependencies, imports in its
/// scripts, and words of the request that are known package names there.
fn project_libraries(ws: &wright_sandbox::Workspace, files: &[String], prompt: &str) -> Vec<String> {
    let mut libs = Vec::new();
    for f in files.iter().filter(|f| f.ends_with("package.json") || f.ends_with(".js") || f.ends_with(".mjs")).take(50)
    {
        if let Ok(bytes) = ws.read(f) {
            libs.extend(crate::diagnose::libraries_in_source(&String::from_utf8_lossy(&bytes)));
        }
    }
    libs.extend(crate::diagnose::libraries_in_source(prompt));
    libs.sort();
    libs.dedup();
    libs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PhaseEnd;
    use wright_provider::ProviderError;

    /// A page with risky code still publishes; its warnings are narrated and reported.
    #[tokio::test]
    async fn security_warnings_are_narrated_and_reported_without_failing() {
        use wright_events::MemorySink;
        use wright_provider::scripted::{ScriptStep, ScriptedProvider};
        use wright_sandbox::{ProcessRunner, Workspace, WorkspaceLimits};
        use wright_tools::{ExecConfig, builtin_registry};

        let dir = tempfile::tempdir().unwrap();
        let sink = Arc::new(MemorySink::new());
        let ctx = ToolContext {
            workspace: Workspace::open(dir.path().join("ws"), WorkspaceLimits::default()).unwrap(),
            runner: Arc::new(ProcessRunner::default()),
            emitter: wright_events::Emitter::new("b", vec![sink.clone()]),
            cancel: Default::default(),
            exec: ExecConfig::for_build(&dir.path().join("h"), &dir.path().join("t")).unwrap(),
        };
        let page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Calc</title>\n</head>\n<body>\n<p id=\"out\"></p>\n<script>\n// eval(old)\ndocument.getElementById('out').textContent = eval(location.hash.slice(1));\n</script>\n</body>\n</html>\n";
        let provider = ScriptedProvider::new(vec![
            ScriptStep::calls(&[("createFile", serde_json::json!({"path": "index.html", "content": page}))]),
            ScriptStep::text("done"),
        ]);
        let req = BuildRequest {
            prompt: "a calculator page".into(),
            template: Template::Static,
            lang: crate::Lang::Pt,
            model: "m".into(),
            // This test is about the scan; the browser check has tests of its own.
            browser: wright_browser::BrowserSettings { mode: wright_browser::BrowserMode::Off, ..Default::default() },
            ..Default::default()
        };
        let deps = BuildDeps {
            provider: Arc::new(provider),
            registry: Arc::new(builtin_registry()),
            ctx,
            store: None,
            provider_label: "scripted:m".into(),
            holder: None,
            log: None,
            prelude: None,
        };
        let report = run_build(req, deps).await;
        assert!(report.success(), "{}", report.report);
        let ids: Vec<(&str, usize, &str)> =
            report.security_warnings.iter().map(|f| (f.file.as_str(), f.line, f.rule.id())).collect();
        assert_eq!(ids, vec![("index.html", 11, "eval")]);
        let warnings: Vec<String> = sink
            .events()
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::Status { message, level: Level::Warning } => Some(message),
                _ => None,
            })
            .collect();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("Aviso de segurança: index.html:11 [eval] eval() executa"), "{}", warnings[0]);
        assert!(report.report.contains("\n## Security warnings\n1 risky pattern(s) in 1 file(s)"), "{}", report.report);
        assert!(
            report.report.contains("- index.html:11 [eval, high] eval() runs a string as code"),
            "{}",
            report.report
        );
    }

    #[test]
    fn an_overflow_left_after_compaction_fails_the_build_without_blaming_the_provider() {
        let emitter = wright_events::Emitter::new("b", vec![]);
        let full = PhaseEnd::Provider(ProviderError::ContextTooLong("exceeds the context".into()));
        assert_eq!(phase_end(full, &emitter), Some(BuildEnd::ContextFull("exceeds the context".into())));
        assert_eq!(BuildEnd::ContextFull(String::new()).reason(), Some(wright_events::EndReason::ContextFull));
        let auth = PhaseEnd::Provider(ProviderError::Auth("401".into()));
        assert_eq!(phase_end(auth, &emitter), Some(BuildEnd::ProviderUnusable(ProviderError::Auth("401".into()))));
    }
}
