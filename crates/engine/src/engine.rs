//! [`Engine`]: configuration in, prepared builds out.

pub(crate) mod assistant;
pub(crate) mod chat;
mod lent;
mod meanings;
mod settings;
pub(crate) mod starters;
pub(crate) mod tasks;
pub(crate) mod turns;

use crate::EngineError;
use crate::config::{FileConfig, ProviderKind, choose_provider};
use crate::notice::{Warning, WarningKind};
use crate::providers::{self, Wire};
use crate::sampling::Phase as SamplingPhase;
use crate::sandbox::{self, Mode};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;
use wright_agent::{BuildDeps, BuildReport, BuildRequest, Lang, Pricing, Template, run_build};
use wright_events::{Emitter, EventSink};
use wright_provider::Provider;
use wright_provider::openai::EndpointMemory;
use wright_sandbox::{ProcessRunner, Workspace};
use wright_store::{LogWriter, RunId, Store};
use wright_tools::{ExecConfig, ToolContext, builtin_registry};

/// Settings given on the command line (or by the server's own flags); each beats `wright.toml`.
/// `None` means "from the file, else the default".
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub sandbox: Option<String>,
    pub network: Option<String>,
    pub db: Option<String>,
    pub data_dir: Option<PathBuf>,
    /// `--artifacts DIR`: where builds' files, screenshots and copies are kept.
    pub artifacts: Option<PathBuf>,
    pub max_fix_attempts: Option<u32>,
    pub max_turns: Option<u32>,
    pub timeout: Option<u64>,
    pub call_timeout: Option<u64>,
    pub generation_timeout: Option<u64>,
    pub max_retries: Option<u32>,
    /// `--max-tokens N` (0: no cap).
    pub max_tokens: Option<u32>,
    pub no_stream: bool,
    pub command_timeout: Option<u64>,
    pub temperature: Option<f32>,
    pub max_cost: Option<f64>,
    pub fix_model: Option<String>,
    pub prices: Option<PathBuf>,
    pub note_budget: Option<u32>,
    pub note_model: Option<String>,
    /// `--browser-check on|off|auto`.
    pub browser_check: Option<String>,
    /// `--starter auto|fill|reference|off`.
    pub starter: Option<String>,
    pub chromium: Option<PathBuf>,
    /// Who hears of models being fetched and loaded (the log, when not set).
    pub notices: crate::notice::NoticeSink,
}

/// One build to prepare: what the user asked for. Everything else comes from the engine.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: RunId,
    pub prompt: String,
    /// `None`: the continued build's, else the configured one, else `auto`.
    pub template: Option<Template>,
    /// `None`: the configured one, else the continued build's, else English.
    pub lang: Option<Lang>,
    /// Extra acceptance commands, after the configured ones.
    pub checks: Vec<String>,
    /// Keep working on this earlier build (id or prefix), in its folder and conversation.
    pub continue_from: Option<String>,
    /// Where to build; a new folder under the data dir when `None`. With `continue_from`, the
    /// folder to work in instead of the earlier build's (a copy of it).
    pub workspace: Option<PathBuf>,
    /// A model other than the configured one, for the same provider.
    pub model: Option<String>,
    /// The server worker that claimed the build; its ending is recorded only while it still
    /// holds it (a worker that lost its lease must not overwrite the next run). `None` locally.
    pub holder: Option<String>,
    /// Outside access this build asks for (`--allow-host`, `allow_hosts`): hosts and API names.
    /// It can only narrow the admin's `[egress]`; `None` takes that as it is.
    pub allow_hosts: Option<Vec<String>>,
    /// The lease of a server worker's claim, as a [`Leash`](wright_sandbox::Leash): its
    /// commands are killed, and its model calls refused, once the worker's deadline passes
    /// (even while the worker is frozen). `None` locally.
    pub leash: Option<wright_sandbox::Leash>,
    /// Invisible characters already removed from `prompt` as it arrived (a server's request);
    /// [`Engine::prepare`] removes any left and the build's narration says how many in all.
    pub hidden_removed: u32,
    /// The experiment variant this build runs under: its model, prompt version, note budget
    /// and starter policy beat the configured ones (`docs/experiments.md`).
    pub variant: Option<wright_experiments::Assignment>,
}

/// The provider chain, its default model and the label builds are recorded under.
struct Connected {
    provider: Arc<dyn Provider>,
    model: String,
    label: String,
}

/// The long-lived parts every build shares: the store, the provider chain, the price table and
/// the sandbox choice. Cheap to share behind an `Arc`; builds are prepared concurrently.
pub struct Engine {
    file: FileConfig,
    o: Overrides,
    data_dir: PathBuf,
    /// Builds' folders, screenshots and re-run copies (`[artifacts] root`, `--artifacts`).
    artifacts: crate::LocalArtifacts,
    db_url: String,
    store: Arc<dyn Store>,
    sandbox_mode: Mode,
    network: bool,
    /// What builds may reach outside (`[egress]`), keys read once at start.
    egress: Option<wright_egress::EgressPolicy>,
    pricing: Pricing,
    kind: ProviderKind,
    model: Option<String>,
    base_url: Option<String>,
    memory: Arc<EndpointMemory>,
    env: fn(&str) -> Option<String>,
    connected: OnceCell<Connected>,
    /// The chat agent, built on the first chat turn.
    chat: tokio::sync::Mutex<Option<Arc<chat::ChatParts>>>,
    /// Chat turns' background tools, running after their turn's `done`.
    background: std::sync::Mutex<tokio::task::JoinSet<()>>,
    /// The embedding model's scheduler: everything embedded goes through it.
    embedq: crate::embedq::EmbedQueue,
    /// The in-app assistants' document indexes, one per folder.
    docs: assistant::DocsIndexes,
    /// wright's own docs folder, once they are written into the data dir.
    wright_docs: std::sync::OnceLock<PathBuf>,
    /// The starters' passages embedded, for picking by meaning (made again when the library
    /// changes: a user's starter added or removed).
    starter_meanings: meanings::MeaningsCache,
    /// The MCP servers of `wright.toml`, checked at start.
    mcp: Vec<wright_mcp::Server>,
}

/// A template name as users type it.
pub fn parse_template(name: &str) -> Result<Template, EngineError> {
    Template::parse_loose(name).ok_or_else(|| {
        EngineError::Usage(format!("unknown template `{name}`; use static, interactive, fullstack, react or auto"))
    })
}

/// A narration language as users type it.
pub fn parse_lang(name: &str) -> Result<Lang, EngineError> {
    Lang::parse_loose(name).ok_or_else(|| EngineError::Usage(format!("unknown language `{name}`; use en or pt")))
}

/// Sortable, readable, unique enough: `20261121-153501-3fa2`.
pub fn new_build_id() -> String {
    format!("{}-{:04x}", chrono::Utc::now().format("%Y%m%d-%H%M%S"), fastrand::u16(..))
}

impl Engine {
    /// Check the settings and open the store. The provider is connected on first use
    /// ([`Engine::provider`]), so configuration errors come first and cost nothing.
    pub async fn new(file: FileConfig, o: Overrides) -> Result<Self, EngineError> {
        Self::with_env(file, o, crate::error::env_var).await
    }

    /// [`Engine::new`] with the environment (API keys) read through `env`.
    pub async fn with_env(
        file: FileConfig,
        o: Overrides,
        env: fn(&str) -> Option<String>,
    ) -> Result<Self, EngineError> {
        if let Some(t) = &file.template {
            parse_template(t)?;
        }
        if let Some(l) = &file.lang {
            parse_lang(l)?;
        }
        file.sampling.check(o.temperature.or(file.temperature))?;
        file.budgets.resolve()?;
        let sandbox_mode = Mode::parse(o.sandbox.as_deref().or(file.sandbox.as_deref()).unwrap_or("auto"))?;
        let network = sandbox::parse_network(o.network.as_deref().or(file.network.as_deref()).unwrap_or("deny"))?;
        let egress = crate::egress::configured(&file.egress, &env)?;
        let mcp = wright_mcp::servers(&file.mcp_servers).map_err(|e| EngineError::Usage(e.to_string()))?;
        let data_dir = file.data_dir(o.data_dir.clone());
        let artifacts = crate::LocalArtifacts::new(file.artifacts_root(o.artifacts.clone(), &data_dir));
        let db_url = database_url(o.db.clone(), &file, &data_dir);
        let store = open_store(&db_url).await?;
        let model = o.model.clone().or(file.model.clone());
        let kind = choose_provider(o.provider.as_deref().or(file.provider.as_deref()), model.as_deref(), &env)?;
        let base_url = o.base_url.clone().or(file.base_url.clone());
        let mut pricing = Pricing::builtin();
        if let Some(path) = o.prices.as_ref().or(file.prices_file.as_ref()) {
            let bad = |e: String| EngineError::Usage(format!("price table {}: {e}", path.display()));
            let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
            pricing.extend(Pricing::parse(&text).map_err(bad)?);
        }
        pricing.extend(file.pricing.clone());
        // A task run killed mid-way leaves its project with the sandbox user: give it back now.
        lent::give_back_abandoned(store.as_ref()).await;
        let embedq = chat::embed_queue(&file, &data_dir, o.notices.0.clone());
        Ok(Self {
            file,
            o,
            data_dir,
            artifacts,
            db_url,
            store,
            sandbox_mode,
            network,
            egress,
            pricing,
            kind,
            model,
            base_url,
            memory: Default::default(),
            env,
            connected: OnceCell::new(),
            chat: Default::default(),
            embedq,
            background: Default::default(),
            docs: Default::default(),
            wright_docs: std::sync::OnceLock::new(),
            starter_meanings: Default::default(),
            mcp,
        })
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Which store this is, for start-up lines: `SQLite` or `PostgreSQL host/db` (no password).
    pub fn store_kind(&self) -> String {
        if self.db_url.starts_with("sqlite:") {
            "SQLite".into()
        } else {
            let url = wright_store::redact_url(&self.db_url);
            format!("PostgreSQL {}", url.rsplit('@').next().unwrap_or(&url))
        }
    }

    pub fn file(&self) -> &FileConfig {
        &self.file
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Where builds' files, screenshots and re-run copies are kept, and how the store names
    /// a build's folder.
    pub fn artifacts(&self) -> &crate::LocalArtifacts {
        &self.artifacts
    }

    pub fn db_url(&self) -> &str {
        &self.db_url
    }

    /// What model calls cost, by model (built-in prices, the prices file, `[pricing]`).
    pub fn pricing(&self) -> &Pricing {
        &self.pricing
    }

    pub fn provider_kind(&self) -> ProviderKind {
        self.kind
    }

    /// The model builds use unless a job names another.
    pub async fn default_model(&self) -> Result<String, EngineError> {
        Ok(self.connect().await?.model.clone())
    }

    /// The provider chain and its default model, connected once (loading the offline model
    /// the first time, saying so to the engine's notices).
    pub async fn provider(&self) -> Result<(Arc<dyn Provider>, String), EngineError> {
        let c = self.connect().await?;
        Ok((c.provider.clone(), c.model.clone()))
    }

    async fn connect(&self) -> Result<&Connected, EngineError> {
        self.connected
            .get_or_try_init(|| async {
                let wire = Wire {
                    stream: self.file.stream(self.o.no_stream),
                    call_timeout: self.file.call_timeout(self.o.call_timeout),
                    generation_timeout: self.file.generation_timeout(self.o.generation_timeout),
                    // A cap the user set (0 included) replaces the one taken from the server.
                    auto_max_tokens: self.max_tokens_setting().is_none(),
                    memory: self.memory.clone(),
                    data_dir: &self.data_dir,
                    env: &self.env,
                    local: Default::default(),
                    notices: self.o.notices.0.clone(),
                };
                let (primary, model) =
                    providers::build(self.kind, self.model.clone(), self.base_url.clone(), &wire).await?;
                let label = format!("{}:{model}", self.kind.as_str());
                let provider = providers::chain(primary, label.clone(), &self.file.fallback, &wire).await?;
                Ok(Connected { provider, model, label })
            })
            .await
    }

    /// Everything a build needs, made ready: its workspace (new, or the continued build's),
    /// scratch home, confinement, tools and request. Nothing runs yet.
    pub async fn prepare(&self, mut job: Job) -> Result<Prepared, EngineError> {
        let file = &self.file;
        let o = &self.o;
        // What a person cannot see never reaches the model (nor the store: PostgreSQL refuses NUL).
        let stripped = wright_text::hidden::strip(&job.prompt);
        job.prompt = stripped.text;
        let hidden_removed = job.hidden_removed.saturating_add(u32::try_from(stripped.removed).unwrap_or(u32::MAX));
        if job.prompt.trim().is_empty() {
            return Err(EngineError::Usage(
                "the prompt is empty; say what to build, e.g. wright run \"a counter app\"".into(),
            ));
        }
        let parent = match &job.continue_from {
            Some(id) => Some(
                self.store
                    .resolve_build(id)
                    .await
                    .map_err(|e| EngineError::Usage(format!("--continue {id}: {e}; see `wright builds list`")))?,
            ),
            None => None,
        };
        let configured_template = file.template.as_deref().map(parse_template).transpose()?;
        let template = job
            .template
            .or(parent.as_ref().and_then(|p| p.start.template))
            .or(configured_template)
            .unwrap_or(Template::Auto);
        // The built-in model cannot write a React app (it fills tested starters, which are plain
        // pages); a request that merely names React gets a working plain app instead, said so.
        // Asked for explicitly (`--template react`), react it is.
        let mut local_react = None;
        let template = if self.kind == ProviderKind::Local
            && parent.is_none()
            && template == Template::Auto
            && template.resolve(&job.prompt) == Template::React
        {
            local_react = Some(Warning::new(
                WarningKind::NoReact,
                "the built-in model cannot write React apps, so this one is built in plain HTML and JavaScript from a tested starter; with a stronger model (--provider, docs/react.md) it is a React + TypeScript + Tailwind app",
            ));
            Template::Interactive
        } else {
            template
        };
        let configured_lang = file.lang.as_deref().map(parse_lang).transpose()?;
        let lang = job.lang.or(configured_lang).or(parent.as_ref().map(|p| p.start.lang)).unwrap_or_default();
        // The model first: a provider that cannot be used is said before anything else is
        // fetched (picking a starter by meaning loads the embedding model).
        let connected = self.connect().await?;
        // A new build may begin from a tested starter; its template is then the starter's. The
        // starters are plain pages: a template with a build step sets up its own project.
        let plan = match &parent {
            None if !template.resolve(&job.prompt).has_build_step() => {
                // A request for a Python, Rust or Go program is only ever matched with a
                // starter of its own kind, never a page that shares its words.
                let resolved = template.resolve(&job.prompt);
                let wanted = if resolved.is_code() { resolved } else { template };
                let policy = job.variant.as_ref().and_then(|a| a.variant.starter_policy.as_deref());
                self.choose_starter(&job.prompt, wanted, policy).await?
            }
            _ => starters::StarterPlan::None,
        };
        let (starter, no_fit) = match plan {
            starters::StarterPlan::Use(choice) => (Some(*choice), None),
            starters::StarterPlan::NoFit(nf) => (None, Some(nf)),
            starters::StarterPlan::None => (None, None),
        };
        let template = starter.as_ref().map_or(template, |c| c.starter.manifest.template);
        let knobs = job.variant.as_ref().map(|a| &a.variant);
        let model = job
            .model
            .clone()
            .or_else(|| knobs.and_then(|v| v.model.clone()))
            .unwrap_or_else(|| connected.model.clone());
        let prompt_extra = match knobs.and_then(|v| v.prompt_version.as_deref()) {
            Some(name) => crate::variants::prompt_extra(&file.prompt_versions, name)?,
            None => None,
        };
        let build_id = job.id.to_string();
        let (ws_path, history) = match &parent {
            Some(p) => {
                // A follow-up works in its parent's folder, or in the folder given: a server's
                // claim after a lost one works in a copy of it, so the stale run keeps its own.
                let path =
                    job.workspace.clone().unwrap_or_else(|| self.artifacts.resolve(Path::new(&p.start.workspace)));
                if !path.is_dir() {
                    return Err(EngineError::Usage(format!(
                        "build {} had its files in {}, which no longer exists",
                        p.start.id,
                        path.display()
                    )));
                }
                let turns = self
                    .store
                    .turns(&p.start.id)
                    .await
                    .map_err(|e| EngineError::Usage(format!("reading build {}: {e}", p.start.id)))?;
                (path, wright_agent::journal::conversation_from_turns(&turns))
            }
            None => (job.workspace.clone().unwrap_or_else(|| self.artifacts.build_folder(&build_id)), Vec::new()),
        };
        let workspace = Workspace::open(&ws_path, self.workspace_limits())
            .map_err(|e| EngineError::Usage(format!("workspace {}: {e}", ws_path.display())))?;
        let (egress, egress_notes) = self.egress(&build_id, job.allow_hosts.as_deref())?;
        let outside_apis = egress.as_ref().map(|e| e.apis()).unwrap_or_default();
        let (mut parts, confinement) = self.parts(&build_id, &workspace, connected, egress.as_ref(), job.leash)?;
        parts.egress = egress;
        let mut warnings: Vec<Warning> = confinement.warnings.into_iter().chain(local_react).collect();
        warnings.extend(egress_notes);
        warnings.extend(parts.egress.as_ref().map(egress_line));
        // Apps with JavaScript tests need Node.js; say so now rather than after three failed fixes.
        let resolved = template.resolve(&job.prompt);
        if resolved.is_web() && resolved != Template::Static {
            let host = wright_prereq::Host::from_env();
            if let Some(node) = wright_prereq::requirement("Node.js").filter(|r| !host.has(r)) {
                warnings.push(Warning::new(WarningKind::Missing, wright_prereq::explain_missing(node, &host)));
            }
        }
        // A program's toolchain (python3 with venv and pytest, cargo, go), in one line.
        if resolved.is_code() {
            if let Some(line) = wright_prereq::missing_for(resolved.as_str(), &wright_prereq::Host::from_env()) {
                warnings.push(Warning::new(WarningKind::Missing, line));
            }
        }
        let mut checks = file.checks.clone();
        checks.extend(job.checks);
        let max_fix_attempts = o.max_fix_attempts.or(file.max_fix_attempts).unwrap_or(3);
        let req = BuildRequest {
            prompt: job.prompt,
            hidden_removed,
            template,
            lang,
            checks,
            max_fix_attempts,
            max_turns: self.max_turns(),
            timeout: Duration::from_secs(self.timeout_secs()),
            model: model.clone(),
            temperature: Some(self.temperature(SamplingPhase::Generate)),
            fix_temperature: Some(self.temperature(SamplingPhase::Fix)),
            note_temperature: Some(self.temperature(SamplingPhase::Note)),
            budgets: file.budgets.resolve()?,
            max_tokens: self.max_tokens(),
            retry: self.retry_policy(),
            pricing: self.pricing.clone(),
            max_cost_usd: o.max_cost.or(file.max_cost),
            fix_model: o.fix_model.clone().or(file.fix_model.clone()),
            note_budget: knobs
                .and_then(|v| v.note_budget)
                .or(o.note_budget)
                .or(file.note_budget)
                .unwrap_or(BuildRequest::default().note_budget),
            note_model: o.note_model.clone().or(file.note_model.clone()),
            parent: parent.as_ref().map(|p| p.start.id.to_string()),
            history,
            browser: wright_browser::BrowserSettings {
                outside: parts.egress.as_ref().map(crate::egress::BuildEgress::browser_access),
                ..self.browser_settings(&parts.exec.env)?
            },
            screenshot: Some(Arc::new(crate::artifacts::BuildScreenshots {
                artifacts: self.artifacts.clone(),
                run: build_id.clone(),
            })),
            workspace_record: Some(self.artifacts.record(&ws_path)),
            starter,
            no_fit,
            transpile_limit: file
                .transpile_timeout
                .map_or(wright_agent::BuildRequest::default().transpile_limit, |s| Duration::from_secs(s.max(1))),
            outside_apis,
            experiment: job.variant,
            prompt_extra,
        };
        Ok(Prepared {
            id: build_id,
            provider_kind: self.kind.as_str(),
            model,
            lang,
            max_fix_attempts,
            sandbox: confinement.summary,
            warnings,
            workspace,
            req,
            parts,
            holder: job.holder,
            refused: CancellationToken::new(),
        })
    }

    /// The MCP servers a run in `workspace` starts, confined like its commands (same sandbox
    /// mode and limits), with the workspace and a home in `scratch` writable.
    fn mcp_prelude(&self, workspace: &Workspace, scratch: &Path) -> Option<Arc<crate::mcp::McpPrelude>> {
        if self.mcp.is_empty() {
            return None;
        }
        let home = scratch.join("mcp-home");
        self.mcp_prelude_at(workspace, home)
    }

    /// [`Engine::mcp_prelude`] with the servers' home at `home`.
    fn mcp_prelude_at(&self, workspace: &Workspace, home: PathBuf) -> Option<Arc<crate::mcp::McpPrelude>> {
        if self.mcp.is_empty() {
            return None;
        }
        Some(Arc::new(crate::mcp::McpPrelude {
            servers: self.mcp.clone(),
            confine: crate::mcp::RunConfine {
                mode: self.sandbox_mode,
                limits: sandbox::limits(&self.file),
                writable: vec![workspace.root().to_path_buf(), home.clone()],
            },
            data_dir: self.data_dir.clone(),
            home,
            env: self.env,
            redactor: Arc::new(crate::host_redactor(true)),
        }))
    }

    /// The MCP servers of `wright.toml`.
    pub fn mcp_servers(&self) -> &[wright_mcp::Server] {
        &self.mcp
    }

    /// Each server of `wright.toml` started once, in a throwaway workspace, and what it lists
    /// (judged against the pins, which are only read): for `wright mcp list` and `doctor`.
    pub async fn mcp_inspect(
        &self,
    ) -> Result<Vec<(wright_mcp::Server, Result<Vec<wright_mcp::Listed>, String>)>, EngineError> {
        let (scratch, ws) = self.mcp_scratch()?;
        let Some(prelude) = self.mcp_prelude(&ws, scratch.path()) else { return Ok(vec![]) };
        Ok(crate::mcp::inspect(&prelude, ws.root()).await)
    }

    /// Approve what `server` lists now: its enabled tools' descriptions and schemas become
    /// their pins (`wright mcp approve SERVER`).
    pub async fn mcp_approve(&self, server: &str) -> Result<Vec<wright_mcp::Listed>, EngineError> {
        let Some(s) = self.mcp.iter().find(|s| s.name == server) else {
            let known: Vec<&str> = self.mcp.iter().map(|s| s.name.as_str()).collect();
            return Err(EngineError::Usage(format!(
                "no MCP server `{server}` in wright.toml (the servers: {})",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            )));
        };
        let (scratch, ws) = self.mcp_scratch()?;
        let Some(prelude) = self.mcp_prelude(&ws, scratch.path()) else { return Ok(vec![]) };
        crate::mcp::approve(&prelude, ws.root(), s).await.map_err(EngineError::Usage)
    }

    /// A scratch folder with an empty workspace in it, for starting servers outside a run.
    fn mcp_scratch(&self) -> Result<(tempfile::TempDir, Workspace), EngineError> {
        let scratch = self.scratch("mcp")?;
        let root = scratch.path().join("workspace");
        let ws = Workspace::open(&root, Default::default())
            .map_err(|e| EngineError::Usage(format!("making a workspace: {e}")))?;
        Ok((scratch, ws))
    }

    /// The parts every prepared run holds: its scratch folder, its confinement (and one line
    /// on it), the store with the writer that persists its events first, and the model.
    fn parts(
        &self,
        run_id: &str,
        workspace: &Workspace,
        connected: &Connected,
        egress: Option<&crate::egress::BuildEgress>,
        leash: Option<wright_sandbox::Leash>,
    ) -> Result<(RunParts, Confinement), EngineError> {
        let scratch = self.scratch(run_id)?;
        let scratch_path = scratch.path().to_path_buf();
        let scratch_path = scratch_path.as_path();
        let (exec, choice) = self.sandbox_with(workspace, scratch.path(), egress)?;
        // A leashed run's commands start through its leash, and its model calls are refused
        // once the deadline has passed, whichever of the run's tasks wakes first after a freeze.
        let provider = match &leash {
            Some(l) => {
                Arc::new(crate::leashed::Leashed::new(connected.provider.clone(), l.clone())) as Arc<dyn Provider>
            }
            None => connected.provider.clone(),
        };
        let parts = RunParts {
            exec,
            runner: Arc::new(ProcessRunner::new(choice.isolation).with_leash(leash)),
            scratch,
            store: self.store.clone(),
            provider,
            label: connected.label.clone(),
            egress: None,
            mcp: self.mcp_prelude(workspace, scratch_path),
        };
        Ok((parts, Confinement { summary: choice.summary, warnings: choice.warnings }))
    }
}

/// How a prepared run's commands are confined, in words: one line, and a warning when they
/// are not confined or cannot run.
pub(crate) struct Confinement {
    pub(crate) summary: String,
    pub(crate) warnings: Vec<Warning>,
}

/// What a prepared build or task run holds until it runs: the commands' settings and runner,
/// the scratch folder (removed when dropped), the store and its event writer, the model.
pub(crate) struct RunParts {
    pub(crate) exec: ExecConfig,
    pub(crate) runner: Arc<ProcessRunner>,
    pub(crate) scratch: tempfile::TempDir,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) label: String,
    /// The build's outside-access proxy, stopped when the run ends.
    pub(crate) egress: Option<crate::egress::BuildEgress>,
    /// The MCP servers the run starts once its record exists (none configured: `None`).
    pub(crate) mcp: Option<Arc<crate::mcp::McpPrelude>>,
}

/// One narration line on what a build may reach outside.
fn egress_line(e: &crate::egress::BuildEgress) -> Warning {
    let mut parts: Vec<String> = e.apis().iter().map(|a| format!("API {}", a.name)).collect();
    parts.extend(e.hosts());
    Warning::new(
        WarningKind::OutsideAccess,
        format!("outside access through a filtering proxy: {} (everything else stays closed)", parts.join(", ")),
    )
}

/// The redactor for what builds show: the values of secret-looking host variables, token
/// shapes, and (with `home`) the host's home folder.
pub fn host_redactor(home: bool) -> wright_sandbox::Redactor {
    let host_vars = std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
    let host_home = if home { std::env::var_os("HOME").map(PathBuf::from) } else { None };
    wright_sandbox::Redactor::from_host_env(host_vars, host_home.as_deref())
}

/// The database URL: flag/env, then wright.toml, then `wright.db` in the data dir.
pub fn database_url(db: Option<String>, file: &FileConfig, data_dir: &Path) -> String {
    db.or(file.store.url.clone())
        .or(file.database_url.clone())
        .unwrap_or_else(|| format!("sqlite://{}", data_dir.join("wright.db").display()))
}

/// Open the store at `url`; one that cannot be opened is a configuration error.
pub async fn open_store(url: &str) -> Result<Arc<dyn Store>, EngineError> {
    wright_store::open(url)
        .await
        .map_err(|e| EngineError::Usage(format!("database {}: {e}", wright_store::redact_url(url))))
}

/// A build made ready by [`Engine::prepare`]. Its fields say what it will run with, for the
/// front end's header; [`Prepared::run`] runs it.
pub struct Prepared {
    pub id: String,
    pub provider_kind: &'static str,
    pub model: String,
    pub lang: Lang,
    pub max_fix_attempts: u32,
    /// One line on how commands are confined.
    pub sandbox: String,
    /// Things the user should know before it starts (weaker sandbox, Node.js missing).
    pub warnings: Vec<Warning>,
    pub workspace: Workspace,
    pub req: BuildRequest,
    parts: RunParts,
    holder: Option<String>,
    /// Cancelled when the store refuses this run's holder (see [`Prepared::refusal`]).
    refused: CancellationToken,
}

/// How a prepared build ended.
pub struct Finished {
    pub report: BuildReport,
    /// Events that could not be stored (each is also logged).
    pub unsaved_events: u64,
    /// The store refused the holder an event or the run's end: the run is not its own any
    /// more (its lease ran out by the database's clock, or another worker took it), so its
    /// ending did not count and whoever runs it now (or the queue) decides how it ends.
    pub refused: bool,
}

impl Prepared {
    /// The template this build will use, once `auto` is resolved from the prompt.
    pub fn template(&self) -> Template {
        self.req.template.resolve(&self.req.prompt)
    }

    /// A token cancelled when the store refuses this run's holder an event or its ending: the
    /// holder has lost the run, and should drop it as it would a lease it could not renew.
    pub fn refusal(&self) -> CancellationToken {
        self.refused.clone()
    }

    /// Run the build to its end. Every event is stored first (numbered by the store, after any
    /// it holds already, such as the queue's), then given to `sinks` in order. `cancel` is the
    /// stop button; the stream still ends with `complete`.
    pub async fn run(self, sinks: Vec<Arc<dyn EventSink>>, cancel: CancellationToken) -> Finished {
        let p = self.parts;
        let log = LogWriter::fenced(p.store.clone(), &self.id, self.holder.as_deref(), sinks, self.refused.clone());
        let emitter = Emitter::new(self.id.clone(), vec![log.clone()]);
        if let Some(egress) = &p.egress {
            egress.attach(emitter.clone());
        }
        let ctx = ToolContext { workspace: self.workspace.clone(), runner: p.runner, emitter, cancel, exec: p.exec };
        let deps = BuildDeps {
            provider: p.provider,
            registry: Arc::new(builtin_registry()),
            ctx,
            store: Some(p.store),
            provider_label: p.label,
            holder: self.holder,
            log: Some(log.clone()),
            prelude: p.mcp.clone().map(|m| m as Arc<dyn wright_agent::Prelude>),
        };
        let report = run_build(self.req, deps).await;
        drop(p.egress);
        log.flush().await;
        drop(p.scratch);
        Finished { report, unsaved_events: log.failures(), refused: self.refused.is_cancelled() }
    }
}
