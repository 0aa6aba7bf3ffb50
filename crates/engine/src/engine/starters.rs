//! Which tested starter a new build begins from, and how (`docs/starters.md`): the built-in
//! starters plus the user's own in `DATA/starters/`, matched against the request; the built-in
//! model fills a starter's slots, a capable one follows it as a reference. `--starter off` (or
//! `starter = "off"` in wright.toml) builds from nothing as before.

use super::Engine;
use crate::EngineError;
use crate::config::ProviderKind;
use wright_agent::{StarterChoice, StarterMode};
use wright_events::Template;
use wright_starters::Library;

/// How builds use starters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StarterUse {
    /// Fill with the built-in model, follow as a reference with any other.
    Auto,
    Fill,
    Reference,
    Off,
}

impl StarterUse {
    pub fn parse(s: &str) -> Result<Self, EngineError> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "fill" => Ok(Self::Fill),
            "reference" => Ok(Self::Reference),
            "off" => Ok(Self::Off),
            other => {
                Err(EngineError::Usage(format!("unknown starter use `{other}`; use auto, fill, reference or off")))
            }
        }
    }
}

impl Engine {
    /// The starters builds can begin from: the built-in ones and the user's own.
    pub fn starters(&self) -> Result<Library, EngineError> {
        let builtin = Library::builtin().map_err(|e| EngineError::Usage(format!("the built-in starters: {e}")))?;
        builtin
            .with_dir(&self.starters_dir())
            .map_err(|e| EngineError::Usage(format!("{e}; fix or remove it (`wright starters remove ID`)")))
    }

    /// Where the user's own starters live.
    pub fn starters_dir(&self) -> std::path::PathBuf {
        self.data_dir.join("starters")
    }

    fn starter_use(&self) -> Result<StarterUse, EngineError> {
        match self.o.starter.as_deref().or(self.file.starter.as_deref()) {
            Some(s) => StarterUse::parse(s),
            None => Ok(StarterUse::Auto),
        }
    }

    /// The starter a new build of `prompt` begins from, if one matches well enough.
    pub(crate) fn choose_starter(
        &self,
        prompt: &str,
        template: Template,
    ) -> Result<Option<StarterChoice>, EngineError> {
        let mode = match self.starter_use()? {
            StarterUse::Off => return Ok(None),
            StarterUse::Fill => StarterMode::Fill,
            StarterUse::Reference => StarterMode::Reference,
            StarterUse::Auto if self.kind == ProviderKind::Local => StarterMode::Fill,
            StarterUse::Auto => StarterMode::Reference,
        };
        let library = self.starters()?;
        Ok(library.pick(prompt, template).map(|p| StarterChoice { starter: p.starter.clone(), score: p.score, mode }))
    }
}

impl Engine {
    /// Check a starter as a build of its template is checked: rendered with its defaults (in
    /// each language it has defaults for) in a scratch folder, its tests run in this machine's
    /// sandbox, its page opened in the browser. The failures, in words, when it does not pass.
    pub async fn check_starter(&self, starter: &wright_starters::Starter) -> Result<(), EngineError> {
        let mut langs = vec![wright_events::Lang::En];
        if starter.manifest.defaults.contains_key("pt") {
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
