//! What the commands share: the store and model flags, the events format, the failure with
//! its exit code, and the small steps every command takes (open the store, stop on Ctrl-C).

use anyhow::anyhow;
use clap::ValueEnum;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_agent::Lang;
use wright_engine::EngineError;
use wright_engine::config::{FileConfig, ProviderKind, choose_provider};
use wright_engine::env_var;

/// Where the store is.
#[derive(clap::Args, Clone, Default)]
pub struct DbArgs {
    /// Database: sqlite://PATH or postgres://user[:password]@host[:port]/db (shared by many servers
    /// and workers, docs/scale.md) [default: wright.db in the data dir].
    #[arg(long, global = true, env = "WRIGHT_DATABASE_URL", value_name = "URL")]
    pub db: Option<String>,
    /// Data folder [default: $XDG_DATA_HOME/wright].
    #[arg(long, global = true, env = "WRIGHT_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Where builds' files, screenshots and copies are kept; the store records paths relative
    /// to it, so servers that mount the same shared folder at different paths all serve them
    /// (docs/scale.md) [default: the data folder].
    #[arg(long, global = true, env = "WRIGHT_ARTIFACTS", value_name = "DIR")]
    pub artifacts: Option<PathBuf>,
}

/// Which model answers: shared by every command that talks to one.
#[derive(clap::Args, Clone, Default)]
pub struct ModelArgs {
    /// AI provider: local (built-in, offline), openai (any OpenAI-compatible server), anthropic, gemini.
    /// Default: from the model name, else whichever API key is set, else local.
    #[arg(long, env = "WRIGHT_PROVIDER", value_name = "NAME")]
    pub provider: Option<String>,
    /// Model id for the provider; for local, a path to a GGUF file (default: the built-in model).
    #[arg(long, env = "WRIGHT_MODEL", value_name = "NAME")]
    pub model: Option<String>,
    /// The provider's endpoint root, e.g. http://127.0.0.1:8000/v1 for an OpenAI-compatible server.
    #[arg(long, env = "WRIGHT_BASE_URL", value_name = "URL")]
    pub base_url: Option<String>,
    /// Most tokens one model answer may have in a build; 0 for no cap [default: a quarter of the
    /// context of a local server that says its size (llama-server), else none].
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
}

impl ModelArgs {
    /// Flags over wright.toml: the provider kind, the model and the endpoint root.
    pub fn resolve(self, file: &FileConfig) -> Result<(ProviderKind, Option<String>, Option<String>), Exit> {
        let model = self.model.or(file.model.clone());
        let kind = choose_provider(self.provider.as_deref().or(file.provider.as_deref()), model.as_deref(), &env_var)?;
        Ok((kind, model, self.base_url.or(file.base_url.clone())))
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum EventsFormat {
    Human,
    Jsonl,
}

/// A failure with its exit code: 2 for usage/configuration, 3 for an unusable provider.
pub struct Exit(pub u8, pub anyhow::Error);

pub fn usage<E: Into<anyhow::Error>>(e: E) -> Exit {
    Exit(2, e.into())
}

impl From<EngineError> for Exit {
    fn from(e: EngineError) -> Self {
        Exit(e.exit_code(), anyhow!(e))
    }
}

/// The store a history command names with its `--db`/`--data-dir`.
pub async fn open_store(
    db: DbArgs,
    config_path: Option<&std::path::Path>,
) -> Result<Arc<dyn wright_store::Store>, Exit> {
    let (file, _) = FileConfig::load(config_path)?;
    Ok(wright_engine::open_store(&wright_engine::database_url(db.db, &file, &file.data_dir(db.data_dir))).await?)
}

/// Where builds' folders are, for a history command's `--artifacts`/`--data-dir`.
pub fn artifacts_of(db: &DbArgs, config_path: Option<&std::path::Path>) -> Result<wright_engine::LocalArtifacts, Exit> {
    let (file, _) = FileConfig::load(config_path)?;
    Ok(wright_engine::LocalArtifacts::new(
        file.artifacts_root(db.artifacts.clone(), &file.data_dir(db.data_dir.clone())),
    ))
}

/// A history command's result as an exit code: its errors (unknown id, bad file) exit 1.
pub fn done(r: anyhow::Result<()>) -> Result<u8, Exit> {
    r.map(|_| 0).map_err(|e| Exit(1, e))
}

/// The stop button of a run: the first Ctrl-C cancels (the run still ends with `complete`),
/// a second one quits at once.
pub fn stop_on_ctrl_c() -> CancellationToken {
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\nwright: stopping (press Ctrl-C again to quit at once)…");
            token.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
    cancel
}

pub fn parse_lang(name: &str) -> Result<Lang, Exit> {
    Ok(wright_engine::parse_lang(name)?)
}
