//! Building the provider a run talks to: one wire, or a fallback chain of several.

use crate::config::ProviderKind;
use crate::{EngineError, local};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use wright_provider::Provider;
use wright_provider::anthropic::{AnthropicConfig, AnthropicProvider};
use wright_provider::fallback::{BreakerConfig, CircuitBreaker, FallbackProvider, Link};
use wright_provider::gemini::{GeminiConfig, GeminiProvider};
use wright_provider::openai::{EndpointMemory, OpenAiConfig, OpenAiProvider};

/// Settings shared by every provider of a run.
pub struct Wire<'a> {
    pub stream: bool,
    pub call_timeout: Duration,
    /// Longest wait for a whole (non-streamed) answer.
    pub generation_timeout: Duration,
    /// Let OpenAI-compatible servers that say their context size cap answers at a quarter of
    /// it (off when the user set a cap of their own).
    pub auto_max_tokens: bool,
    /// What the process learned about endpoints (e.g. one that cannot stream tool calls).
    pub memory: Arc<EndpointMemory>,
    pub data_dir: &'a Path,
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// The offline model once loaded: llama.cpp's backend is process-wide, so `local` as both
    /// primary and fallback must share one engine.
    pub local: std::sync::Mutex<Option<(Arc<wright_local::LocalEngine>, String)>>,
    /// Where loading the offline model is told.
    pub notices: Arc<dyn crate::notice::Notices>,
}

fn key(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    env(name).filter(|k| !k.trim().is_empty())
}

/// One provider and the model id to use with it.
pub async fn build(
    kind: ProviderKind,
    model: Option<String>,
    base_url: Option<String>,
    wire: &Wire<'_>,
) -> Result<(Arc<dyn Provider>, String), EngineError> {
    let unusable = |e: wright_provider::ProviderError| EngineError::Provider(e.to_string());
    Ok(match kind {
        ProviderKind::OpenAi => {
            let base = base_url.unwrap_or_else(|| "https://api.openai.com/v1".into());
            let api_key = key(wire.env, "OPENAI_API_KEY");
            if api_key.is_none() && base.contains("api.openai.com") {
                return Err(EngineError::Provider("OPENAI_API_KEY is not set. Set it, or point --base-url at an OpenAI-compatible server (llama.cpp, Ollama, vLLM) that needs no key.".into()));
            }
            let p = OpenAiProvider::new(OpenAiConfig {
                base_url: base,
                api_key,
                stream: wire.stream,
                call_timeout: wire.call_timeout,
                generation_timeout: wire.generation_timeout,
                memory: wire.memory.clone(),
                auto_max_tokens: wire.auto_max_tokens,
            })
            .map_err(unusable)?;
            (Arc::new(p), model.unwrap_or_else(|| "gpt-4o-mini".into()))
        }
        ProviderKind::Anthropic => {
            let api_key = key(wire.env, "ANTHROPIC_API_KEY");
            if api_key.is_none() && base_url.is_none() {
                return Err(EngineError::Provider("ANTHROPIC_API_KEY is not set.".into()));
            }
            let cfg = AnthropicConfig {
                base_url: base_url.unwrap_or_else(|| AnthropicConfig::default().base_url),
                api_key,
                stream: wire.stream,
                call_timeout: wire.call_timeout,
                ..AnthropicConfig::default()
            };
            (
                Arc::new(AnthropicProvider::new(cfg).map_err(unusable)?),
                model.unwrap_or_else(|| "claude-sonnet-4-5".into()),
            )
        }
        ProviderKind::Gemini => {
            let api_key = key(wire.env, "GEMINI_API_KEY");
            if api_key.is_none() && base_url.is_none() {
                return Err(EngineError::Provider("GEMINI_API_KEY is not set.".into()));
            }
            let cfg = GeminiConfig {
                base_url: base_url.unwrap_or_else(|| GeminiConfig::default().base_url),
                api_key,
                stream: wire.stream,
                call_timeout: wire.call_timeout,
            };
            (Arc::new(GeminiProvider::new(cfg).map_err(unusable)?), model.unwrap_or_else(|| "gemini-2.5-flash".into()))
        }
        ProviderKind::Local => {
            let loaded = wire.local.lock().ok().and_then(|l| l.clone());
            let (engine, name) = match loaded {
                Some(pair) => pair,
                None => {
                    let pair = local::load(model.as_deref(), wire.data_dir, wire.notices.clone()).await?;
                    if let Ok(mut l) = wire.local.lock() {
                        *l = Some(pair.clone());
                    }
                    pair
                }
            };
            (Arc::new(wright_local::LocalProvider::new(engine)), name)
        }
    })
}

/// A fallback entry: `local`, `openai:gpt-4o-mini`, `anthropic:claude-haiku-4-5`, or with an
/// endpoint: `openai:qwen2.5-coder@http://127.0.0.1:8080/v1`.
pub fn parse_entry(s: &str) -> Result<(ProviderKind, Option<String>, Option<String>), EngineError> {
    let (spec, url) = match s.split_once('@') {
        Some((spec, url)) => (spec, Some(url.trim().to_string()).filter(|u| !u.is_empty())),
        None => (s, None),
    };
    let (p, m) = match spec.split_once(':') {
        Some((p, m)) => (p, Some(m.trim().to_string()).filter(|m| !m.is_empty())),
        None => (spec, None),
    };
    let kind = ProviderKind::parse(p.trim()).map_err(|e| EngineError::Usage(format!("fallback entry `{s}`: {e}")))?;
    Ok((kind, m, url))
}

/// The primary provider, wrapped with circuit breakers and the fallback chain when one is
/// configured (a single provider needs no breaker: retries already cover it).
pub async fn chain(
    primary: Arc<dyn Provider>,
    label: String,
    fallbacks: &[String],
    wire: &Wire<'_>,
) -> Result<Arc<dyn Provider>, EngineError> {
    if fallbacks.is_empty() {
        return Ok(primary);
    }
    let breaker = || Arc::new(CircuitBreaker::new(BreakerConfig::default()));
    let mut links = vec![Link { label, provider: primary, model: None, breaker: breaker() }];
    for entry in fallbacks {
        let (kind, model, url) = parse_entry(entry)?;
        let (provider, model) = build(kind, model, url, wire).await?;
        links.push(Link { label: entry.clone(), provider, model: Some(model), breaker: breaker() });
    }
    Ok(Arc::new(FallbackProvider::new(links)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fallback_entries() {
        let ok = |s: &str| parse_entry(s).ok().unwrap();
        assert_eq!(ok("local"), (ProviderKind::Local, None, None));
        assert_eq!(ok("openai:gpt-4o-mini"), (ProviderKind::OpenAi, Some("gpt-4o-mini".into()), None));
        assert_eq!(
            ok("openai:qwen2.5-coder@http://127.0.0.1:8080/v1"),
            (ProviderKind::OpenAi, Some("qwen2.5-coder".into()), Some("http://127.0.0.1:8080/v1".into()))
        );
        assert!(parse_entry("bogus:x").is_err());
    }
}
