//! Which tested starter a new build begins from, and how (`docs/starters.md`): the built-in
//! starters plus the user's own in `DATA/starters/`, matched against the request; the built-in
//! model fills a starter's slots, a capable one follows it as a reference. `--starter off` (or
//! `starter = "off"` in wright.toml) builds from nothing as before.

use super::Engine;
use super::meanings;
use crate::EngineError;
use crate::config::ProviderKind;
use crate::embedq::Class;
use crate::variants::StarterUse;
use std::sync::Arc;
use wright_agent::{StarterChoice, StarterMode};
use wright_events::Template;
use wright_starters::meaning::{Meanings, passages};
use wright_starters::{Library, MODEL};

/// What a new build begins from.
#[derive(Debug)]
pub(crate) enum StarterPlan {
    Use(Box<StarterChoice>),
    /// The built-in model and no starter that fits: the build ends saying so.
    NoFit(wright_agent::nofit::NoFit),
    /// From nothing (a capable model writes it).
    None,
}

/// How many starters a build no starter fits suggests.
const SUGGESTED: usize = 3;

impl Engine {
    /// The starters builds can begin from: the built-in ones and the user's own.
    pub fn starters(&self) -> Result<Library, EngineError> {
        starter_library(&self.data_dir)
    }

    /// Where the user's own starters live.
    pub fn starters_dir(&self) -> std::path::PathBuf {
        starters_dir(&self.data_dir)
    }

    /// Refuse an experiment's variants this engine cannot build with: a prompt version its
    /// `wright.toml` lacks, a starter policy that does not parse or a starter it does not have.
    pub fn check_variants(&self, variants: &[wright_experiments::Variant]) -> Result<(), EngineError> {
        crate::variants::check_variants(&self.file.prompt_versions, &self.starters()?, variants)
    }

    /// How builds use starters: an experiment variant's policy, else `--starter`, else
    /// `wright.toml`, else `auto`.
    fn starter_use(&self, policy: Option<&str>) -> Result<StarterUse, EngineError> {
        match policy.or(self.o.starter.as_deref()).or(self.file.starter.as_deref()) {
            Some(s) => StarterUse::parse(s),
            None => Ok(StarterUse::Auto),
        }
    }

    /// The library's meanings and the request's vector, or why there are none (the embedding
    /// model is off or could not be loaded).
    async fn meanings_for(&self, library: &Library, prompt: &str) -> Result<(Arc<Meanings>, Vec<f32>), String> {
        let key = meanings::key(library, self.embedq.name());
        let meanings = {
            let mut cached = self.starter_meanings.0.lock().await;
            match cached.as_ref().filter(|(k, _)| *k == key) {
                Some((_, m)) => m.clone(),
                None => {
                    let dir = meanings::dir(&self.data_dir);
                    let m = match meanings::load(&dir, &key, library) {
                        Some(m) => Arc::new(m),
                        None => {
                            let mut vectors = Vec::new();
                            for s in library.list() {
                                let texts = passages(s);
                                vectors.push(
                                    self.embedq
                                        .embed("system", Class::Interactive, texts)
                                        .await
                                        .map_err(|e| e.to_string())?,
                                );
                            }
                            meanings::save(&dir, &key, &vectors);
                            Arc::new(Meanings::from_vectors(library, vectors)?)
                        }
                    };
                    *cached = Some((key, m.clone()));
                    m
                }
            }
        };
        let asked = self
            .embedq
            .embed("system", Class::Interactive, vec![prompt.to_string()])
            .await
            .map_err(|e| e.to_string())?
            .into_iter()
            .next()
            .ok_or("no vector for the request")?;
        Ok((meanings, asked))
    }

    /// What a new build of `prompt` begins from (`docs/starters.md`): a starter the request
    /// means, filled by the built-in model or followed by a capable one; for the built-in
    /// model, when none fits, an honest end with the closest ones; else nothing.
    pub(crate) async fn choose_starter(
        &self,
        prompt: &str,
        template: Template,
        policy: Option<&str>,
    ) -> Result<StarterPlan, EngineError> {
        let local = self.kind == ProviderKind::Local;
        let mode = match self.starter_use(policy)? {
            StarterUse::Off => return Ok(StarterPlan::None),
            StarterUse::Force(id) => {
                let library = self.starters()?;
                let starter = crate::variants::forced_starter(&library, &id)?;
                let mode = if local { StarterMode::Fill } else { StarterMode::Reference };
                return Ok(StarterPlan::Use(Box::new(StarterChoice { starter: starter.clone(), score: 1.0, mode })));
            }
            StarterUse::Fill => StarterMode::Fill,
            StarterUse::Reference => StarterMode::Reference,
            StarterUse::Auto if local => StarterMode::Fill,
            StarterUse::Auto => StarterMode::Reference,
        };
        let library = self.starters()?;
        let choice = |p: wright_starters::Pick<'_>| StarterChoice { starter: p.starter.clone(), score: p.score, mode };
        // A capable model writes what nothing fits itself: starters are references it may follow.
        if mode == StarterMode::Reference {
            return Ok(library
                .pick(prompt, template)
                .map_or(StarterPlan::None, |p| StarterPlan::Use(Box::new(choice(p)))));
        }
        let (picked, closest): (Option<StarterChoice>, Vec<wright_starters::Starter>) = match self
            .meanings_for(&library, prompt)
            .await
        {
            Ok((meanings, asked)) => (
                library.pick_by_meaning(prompt, &asked, &meanings, &MODEL, template).map(choice),
                library.closest_by_meaning(prompt, &asked, &meanings, &MODEL, SUGGESTED).into_iter().cloned().collect(),
            ),
            Err(why) => {
                tracing::warn!("starters are picked by their words only: {why}");
                (
                    library.pick(prompt, template).map(choice),
                    library.scores(prompt).into_iter().take(SUGGESTED).map(|(s, _)| s.clone()).collect(),
                )
            }
        };
        Ok(match picked {
            Some(c) => StarterPlan::Use(Box::new(c)),
            None if local => StarterPlan::NoFit(wright_agent::nofit::NoFit { closest }),
            None => StarterPlan::None,
        })
    }
}

impl Engine {
    /// Check a starter as a build of its template is checked: rendered with its defaults (in
    /// each language it has defaults for) in a scratch folder, its tests run in this machine's
    /// sandbox, its page opened in the browser. The failures, in words, when it does not pass.
    pub async fn check_starter(&self, starter: &wright_starters::Starter) -> Result<(), EngineError> {
        let mut langs = vec![wright_events::Lang::En];
        if starter.manifest.defaults.contains_key(wright_events::Lang::Pt.as_str()) {
            langs.push(wright_events::Lang::Pt);
        }
        for lang in langs {
            self.check_starter_in(starter, lang).await?;
        }
        Ok(())
    }

    async fn check_starter_in(
        &self,
        starter: &wright_starters::Starter,
        lang: wright_events::Lang,
    ) -> Result<(), EngineError> {
        use std::sync::Arc;
        let usage = |e: String| EngineError::Usage(format!("starter {} ({lang}): {e}", starter.id()));
        let scratch = self.scratch(&format!("starter-{}", starter.id()))?;
        let workspace = wright_sandbox::Workspace::open(scratch.path().join("project"), self.workspace_limits())
            .map_err(|e| usage(e.to_string()))?;
        let values = starter.defaults_in(lang);
        for (path, text) in starter.render(&values).map_err(|e| usage(e.to_string()))? {
            workspace.write(&path, text.as_bytes()).map_err(|e| usage(e.to_string()))?;
        }
        let (exec, choice) = self.sandbox(&workspace, scratch.path())?;
        let settings = self.browser_settings(&exec.env)?;
        let ctx = wright_tools::ToolContext {
            workspace,
            runner: Arc::new(wright_sandbox::ProcessRunner::new(choice.isolation)),
            emitter: wright_events::Emitter::new(starter.id(), vec![]),
            cancel: Default::default(),
            exec,
        };
        let browser = wright_agent::verify::BrowserCheck { settings: &settings, screenshot: None };
        let v = wright_agent::verify(&ctx, starter.manifest.template, &[], 0, &browser).await;
        if v.passed() {
            return Ok(());
        }
        let why: Vec<String> = v.failures.iter().map(|f| format!("{}: {}", f.kind, f.summary)).collect();
        Err(usage(format!("with its defaults it does not pass verification: {}", why.join("; "))))
    }
}

/// The starters builds with data folder `data_dir` can begin from: the built-in ones and the
/// user's own (for commands that need them without an engine).
pub fn starter_library(data_dir: &std::path::Path) -> Result<Library, EngineError> {
    let builtin = Library::builtin().map_err(|e| EngineError::Usage(format!("the built-in starters: {e}")))?;
    builtin
        .with_dir(&starters_dir(data_dir))
        .map_err(|e| EngineError::Usage(format!("{e}; fix or remove it (`wright starters remove ID`)")))
}

fn starters_dir(data_dir: &std::path::Path) -> std::path::PathBuf {
    data_dir.join("starters")
}
