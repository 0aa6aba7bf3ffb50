//! Settings (`wright.toml`): flags beat environment variables, which beat `wright.toml`, which beats
//! the defaults. Clap already merges flags with the environment; the file fills what is left.

use crate::EngineError;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use wright_agent::Pricing;

/// The optional `wright.toml`. Every key is optional; unknown keys are an error so typos show.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// `starter = "auto" | "fill" | "reference" | "off"`: how new builds use tested starters.
    pub starter: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub template: Option<String>,
    pub lang: Option<String>,
    pub data_dir: Option<PathBuf>,
    pub max_fix_attempts: Option<u32>,
    pub max_turns: Option<u32>,
    pub timeout: Option<u64>,
    pub call_timeout: Option<u64>,
    /// Longest wait for a whole (non-streamed) answer, in seconds [default: 600].
    pub generation_timeout: Option<u64>,
    pub max_retries: Option<u32>,
    /// Most tokens one model answer may have; 0 for no cap [default: a quarter of the context
    /// of a local server that says its size (llama-server), else none].
    pub max_tokens: Option<u32>,
    pub stream: Option<bool>,
    pub temperature: Option<f32>,
    pub command_timeout: Option<u64>,
    /// Longest TRANSPILING pass (type-check and bundle), in seconds [default: 10].
    pub transpile_timeout: Option<u64>,
    /// Where npm packages are cached for builds [default: `deps` in the artifacts' root]; several data
    /// folders (or test runs) may share one.
    pub package_cache: Option<PathBuf>,
    /// Largest file the model may write, in bytes (default 1 MiB).
    pub max_file_bytes: Option<u64>,
    /// Most bytes the model's file writes may add to the project, in all (default 50 MiB).
    pub max_workspace_bytes: Option<u64>,
    /// End a build once it has cost this much (USD).
    pub max_cost: Option<f64>,
    /// Model for fix attempts.
    pub fix_model: Option<String>,
    /// Model that writes a lesson after a successful fix (default: the fix model).
    pub note_model: Option<String>,
    /// Tokens of learning notes a prompt may carry (default 800; 0 turns notes off).
    pub note_budget: Option<u32>,
    /// Where builds, events and notes are kept: `sqlite://PATH` (default: wright.db in the data
    /// dir) or `postgres://…`. `[store] url` says the same and wins when both are set.
    pub database_url: Option<String>,
    /// How commands are confined: auto, bwrap, landlock or none (see `wright doctor`).
    pub sandbox: Option<String>,
    /// Whether sandboxed commands reach the network: deny (loopback only) or allow.
    pub network: Option<String>,
    /// Address space per sandboxed process, in MiB [default: 2048].
    pub memory_limit_mb: Option<u64>,
    /// Largest file a sandboxed command may write, in MiB [default: 512].
    pub file_size_limit_mb: Option<u64>,
    /// Processes a sandboxed command may have at once [default: 256].
    pub process_limit: Option<u64>,
    /// CPU seconds per sandboxed process [default: 600].
    pub cpu_limit_secs: Option<u64>,
    /// Providers to fall back to when the primary keeps failing: `["openai:gpt-4o-mini", "local"]`.
    #[serde(default)]
    pub fallback: Vec<String>,
    /// Extra price table file (TOML).
    pub prices_file: Option<PathBuf>,
    #[serde(default)]
    pub checks: Vec<String>,
    #[serde(default)]
    pub pricing: Pricing,
    /// `wright serve` settings (`[serve]`).
    #[serde(default)]
    pub serve: ServeFile,
    /// The browser check of VERIFYING (`[browser]`).
    #[serde(default)]
    pub browser: BrowserFile,
    /// The chat agent (`[chat]`, `docs/chat.md`).
    #[serde(default)]
    pub chat: ChatFile,
    /// The in-app assistant (`[assistant]`, `docs/assistant.md`).
    #[serde(default)]
    pub assistant: AssistantFile,
    /// Where state is kept (`[store]`, `docs/scale.md`).
    #[serde(default)]
    pub store: StoreFile,
    /// Where builds' files are kept (`[artifacts]`, `docs/scale.md`).
    #[serde(default)]
    pub artifacts: ArtifactsFile,
    /// `wright serve`'s periodic jobs (`[maintenance]`, `docs/api.md`).
    #[serde(default)]
    pub maintenance: MaintenanceFile,
    /// What builds may reach outside their sandbox (`[egress]`, `docs/egress.md`).
    #[serde(default)]
    pub egress: EgressFile,
    /// Who may read `GET /metrics` and what its labels say (`[metrics]`, `docs/api.md`).
    #[serde(default)]
    pub metrics: MetricsFile,
    /// Each model-backed route's requests an hour per user (`[limits]`, `docs/limits.md`).
    #[serde(default)]
    pub limits: crate::route_limits::LimitsFile,
    /// Tools from MCP servers, one table per server (`[mcp_servers.NAME]`, `docs/mcp.md`).
    #[serde(default)]
    pub mcp_servers: std::collections::BTreeMap<String, wright_mcp::ServerConfig>,
    /// Sampling per phase (`[sampling.generate]`, …; `docs/configuration.md`).
    #[serde(default)]
    pub sampling: crate::sampling::SamplingFile,
    /// Token budgets per template (`[budgets]`, `[budgets.static]`, …; `docs/configuration.md`).
    #[serde(default)]
    pub budgets: crate::sampling::BudgetsFile,
    /// Python, Rust and Go packages: the cache's bound, sdists, fetch time (`[packages]`,
    /// `docs/packages.md`).
    #[serde(default)]
    pub packages: crate::packages::PackagesFile,
    /// Named additions to the system prompt that experiment variants choose between
    /// (`[prompt_versions.NAME]`, `docs/experiments.md`).
    #[serde(default)]
    pub prompt_versions: crate::variants::PromptVersions,
    /// Variants `wright eval` may compare when a suite does not define them
    /// (`[variants.NAME]`, `docs/eval.md`).
    #[serde(default)]
    pub variants: std::collections::BTreeMap<String, wright_experiments::Variant>,
}

/// The `[metrics]` table of `wright serve`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsFile {
    /// When set, `GET /metrics` answers only `Authorization: Bearer <token>` (401 otherwise)
    /// [default: unset, open to anyone who reaches the port].
    pub token: Option<String>,
    /// Whether the per-server series name the server (`worker="host-pid-…"`, `host="…"`);
    /// otherwise each server is an opaque `worker` id [default: false].
    pub host_labels: Option<bool>,
}

/// The `[egress]` table: set by the admin; a build's request may only narrow it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EgressFile {
    /// Hosts builds may reach through the proxy: `host` (ports 80 and 443) or `host:port`.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Outside requests per build [default: 200].
    pub max_requests: Option<u64>,
    /// Body bytes per build, both ways summed [default: 20 MiB].
    pub max_bytes: Option<u64>,
    /// Named APIs (`[egress.apis.<name>]`), called at `WRIGHT_API_<NAME>` with the key added.
    #[serde(default)]
    pub apis: std::collections::BTreeMap<String, ApiFile>,
}

/// One `[egress.apis.<name>]`: where it is and how its key (read from `key_env` on the host)
/// is sent: `header = "Authorization: Bearer {key}"` or `query = "appid"`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiFile {
    pub base_url: String,
    pub key_env: String,
    pub header: Option<String>,
    pub query: Option<String>,
}

/// The `[store]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreFile {
    /// `sqlite://PATH` or `postgres://user[:password]@host[:port]/database`; `--db` and
    /// `WRIGHT_DATABASE_URL` win over it.
    pub url: Option<String>,
}

/// The `[artifacts]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactsFile {
    /// The folder builds' files (`builds/`), screenshots, the copies re-runs start from and the
    /// package cache are kept in [default: the data folder]. The store records a build's folder
    /// relative to it, so hosts may mount one shared folder at different paths; `--artifacts`
    /// and `WRIGHT_ARTIFACTS` win over it.
    pub root: Option<PathBuf>,
}

/// The `[maintenance]` table: the jobs `wright serve` runs, one server at a time.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaintenanceFile {
    /// Seconds between runs of each job, across every server sharing the store [default: 3600].
    pub every_secs: Option<u64>,
    /// Days after which an unused lesson's record counts half when confidence is recalculated;
    /// 0 turns the decay off [default: 90].
    pub decay_half_life_days: Option<f64>,
    /// Days a finished build's files are kept (fractions allowed); unset keeps them for ever
    /// [default: unset].
    pub retention_days: Option<f64>,
}

/// The `[assistant]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssistantFile {
    /// Rounds of tool calls one message may take [default: 10].
    pub max_rounds: Option<u32>,
    /// Seconds the page has to answer a round of tool calls [default: 300].
    pub page_timeout_secs: Option<u64>,
    /// The documents wright's own assistant searches [default: wright's own docs].
    pub docs: Option<PathBuf>,
    /// Hours an app visitor's session lasts unused; each message moves it on [default: 24].
    pub visitor_idle_hours: Option<u64>,
    /// Visitor sessions one embed key may have open at once [default: 10000].
    pub max_visitors_per_key: Option<u32>,
}

/// The `[chat]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChatFile {
    /// Tools scoring at or above this run [default: 0.7].
    pub confidence_threshold: Option<f32>,
    /// At most this many tools per message [default: 5].
    pub max_tools_per_message: Option<usize>,
    /// A tool still running after this many seconds is reported as failed [default: 30].
    pub tool_timeout_secs: Option<u64>,
    /// Tokens of earlier messages the reply's prompt may carry [default: 3000].
    pub history_tokens: Option<usize>,
    /// The environment variable holding a YouTube Data API key [default: YOUTUBE_API_KEY].
    pub youtube_api_key_env: Option<String>,
    /// Where YouTube's Data API answers [default: https://www.googleapis.com].
    pub youtube_base_url: Option<String>,
    /// `auto` (fetch and use the embedding model) or `off` (patterns only) [default: auto].
    pub embedding: Option<String>,
    /// Threads that call the embedding model [default: 1: e5 serves one call at a time].
    pub embedding_workers: Option<usize>,
    /// Seconds before a failed load of the embedding model is tried again; the wait doubles
    /// after each failure, up to 30 minutes [default: 30].
    pub embedding_retry_secs: Option<u64>,
    /// Shortest and longest message, in characters [default: 1 and 4000].
    pub message_max_chars: Option<usize>,
    /// Messages one user may send per hour over `wright serve` [default: 120].
    pub messages_per_hour: Option<u32>,
}

/// The `[browser]` table. Flags beat it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrowserFile {
    /// on, off or auto (when a Chromium is installed) [default: auto].
    pub check: Option<String>,
    /// The Chromium binary [default: chromium on PATH].
    pub chromium: Option<PathBuf>,
    /// Most clicks and form submissions after load [default: 12].
    pub max_actions: Option<u32>,
    /// Longest the whole check may take, in seconds [default: 30].
    pub time_limit_secs: Option<u64>,
}

/// The `[serve]` table: how `wright serve` shares itself between users. Flags beat it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeFile {
    pub bind: Option<String>,
    pub preview_bind: Option<String>,
    pub workers: Option<usize>,
    /// Builds one user may start per hour [default: 10].
    pub builds_per_hour: Option<u32>,
    /// Builds one user may have queued or running at once [default: 2].
    pub max_concurrent_builds: Option<u32>,
    /// Shortest and longest prompt, in characters [default: 10 and 2000].
    pub prompt_min_chars: Option<usize>,
    pub prompt_max_chars: Option<usize>,
    /// Models a request may pick with `model`; empty means only the configured one.
    #[serde(default)]
    pub models: Vec<String>,
    /// A command that reads a prompt on stdin and exits 0 to allow it; anything else (or no
    /// answer within 10 s) refuses the build. Off when unset.
    pub moderation_command: Option<String>,
    /// Seconds between SSE heartbeat comments [default: 15].
    pub heartbeat_secs: Option<u64>,
    /// Seconds running builds get to finish on shutdown before they go back to the queue [default: 30].
    pub grace_secs: Option<u64>,
    /// Times an interrupted build (crash, kill -9, shutdown past the grace time) runs again
    /// before it ends failed with `server_stopped` [default: 2].
    pub max_restarts: Option<u32>,
    /// Requests without valid credentials one client address may make per minute; 0 turns
    /// the limit off [default: 120].
    pub unauthenticated_per_minute: Option<u32>,
    /// How many of those may come at once [default: half the per-minute number].
    pub unauthenticated_burst: Option<u32>,
    /// Proxies (addresses or ranges such as `10.0.0.0/8`) whose `X-Forwarded-For` names the
    /// client; without them the header is ignored.
    #[serde(default)]
    pub trusted_proxies: Vec<String>,
}

impl FileConfig {
    /// Each model-backed route's hourly limit: `[limits]`, over the older keys, under
    /// `builds_flag` (`--builds-per-hour`).
    pub fn route_limits(&self, builds_flag: Option<u32>) -> crate::route_limits::RouteLimits {
        crate::route_limits::RouteLimits::resolve(
            &self.limits,
            self.serve.builds_per_hour,
            self.chat.messages_per_hour,
            builds_flag,
        )
    }

    /// The longest wait for a model response to start or go on: the flag, else wright.toml, else 45 s.
    pub fn call_timeout(&self, flag: Option<u64>) -> std::time::Duration {
        std::time::Duration::from_secs(flag.or(self.call_timeout).unwrap_or(45).max(1))
    }

    /// The longest wait for a whole (non-streamed) answer: the flag, else wright.toml, else 600 s.
    pub fn generation_timeout(&self, flag: Option<u64>) -> std::time::Duration {
        std::time::Duration::from_secs(flag.or(self.generation_timeout).unwrap_or(600).max(1))
    }

    /// Whether model responses stream: not with `--no-stream` or `stream = false`.
    pub fn stream(&self, no_stream: bool) -> bool {
        !no_stream && self.stream.unwrap_or(true)
    }

    /// The data folder: the flag (or `WRIGHT_DATA_DIR`), else wright.toml, else the XDG one.
    pub fn data_dir(&self, flag: Option<PathBuf>) -> PathBuf {
        flag.or(self.data_dir.clone()).unwrap_or_else(|| default_data_dir(&|k| std::env::var(k).ok()))
    }

    /// The artifacts' root: the flag (or `WRIGHT_ARTIFACTS`), else `[artifacts] root`, else the
    /// data folder.
    pub fn artifacts_root(&self, flag: Option<PathBuf>, data_dir: &Path) -> PathBuf {
        flag.or(self.artifacts.root.clone()).unwrap_or_else(|| data_dir.to_path_buf())
    }

    /// Load `path` if given (it must exist), else `./wright.toml` if present.
    pub fn load(path: Option<&Path>) -> Result<(Self, Option<PathBuf>), EngineError> {
        let candidate = match path {
            Some(p) => {
                if !p.exists() {
                    return Err(EngineError::Usage(format!("config file {} does not exist", p.display())));
                }
                p.to_path_buf()
            }
            None => {
                let p = PathBuf::from("wright.toml");
                if !p.exists() {
                    return Ok((Self::default(), None));
                }
                p
            }
        };
        let text = std::fs::read_to_string(&candidate)
            .map_err(|e| EngineError::Usage(format!("reading {}: {e}", candidate.display())))?;
        let cfg: Self = toml::from_str(&text)
            .map_err(|e| EngineError::Usage(format!("{} is not a valid wright.toml: {e}", candidate.display())))?;
        Ok((cfg, Some(candidate)))
    }
}

/// Which wire to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Local,
    OpenAi,
    Anthropic,
    Gemini,
}

impl ProviderKind {
    pub fn parse(s: &str) -> Result<Self, EngineError> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "local" => Self::Local,
            "openai" | "openai-compatible" | "openrouter" | "vllm" | "ollama" | "llamacpp" | "llama.cpp" => {
                Self::OpenAi
            }
            "anthropic" | "claude" => Self::Anthropic,
            "gemini" | "google" => Self::Gemini,
            other => {
                return Err(EngineError::Usage(format!(
                    "unknown provider `{other}`; use local, openai, anthropic or gemini"
                )));
            }
        })
    }

    /// Guess the provider from a model id, the way people name them.
    pub fn from_model(model: &str) -> Option<Self> {
        let m = model.to_ascii_lowercase();
        if m.starts_with("gpt-")
            || m.starts_with("chatgpt")
            || (m.starts_with('o') && m.chars().nth(1).is_some_and(|c| c.is_ascii_digit()))
        {
            Some(Self::OpenAi)
        } else if m.starts_with("claude") {
            Some(Self::Anthropic)
        } else if m.starts_with("gemini") {
            Some(Self::Gemini)
        } else {
            None
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }
}

/// Choose the provider: explicit setting, else the model's family, else whichever key is set,
/// else the offline model.
pub fn choose_provider(
    explicit: Option<&str>,
    model: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ProviderKind, EngineError> {
    if let Some(p) = explicit {
        return ProviderKind::parse(p);
    }
    if let Some(kind) = model.and_then(ProviderKind::from_model) {
        return Ok(kind);
    }
    let has = |k: &str| env(k).is_some_and(|v| !v.trim().is_empty());
    Ok(if has("OPENAI_API_KEY") {
        ProviderKind::OpenAi
    } else if has("ANTHROPIC_API_KEY") {
        ProviderKind::Anthropic
    } else if has("GEMINI_API_KEY") {
        ProviderKind::Gemini
    } else {
        ProviderKind::Local
    })
}

/// Where wright keeps its builds: `WRIGHT_DATA_DIR`, else the XDG data folder.
pub fn default_data_dir(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    // Every command, including those whose flags do not name the variable (`wright starters`).
    if let Some(d) = env("WRIGHT_DATA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = env("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("wright");
    }
    if let Some(h) = env("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(h).join(".local/share/wright");
    }
    PathBuf::from(".wright")
}

#[cfg(test)]
mod sections_tests;

#[cfg(test)]
mod tests {
    #[test]
    fn the_data_folder_is_wright_data_dir_then_xdg_then_home() {
        fn env<'a>(vars: &'a [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> + 'a {
            move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        }
        let all = [("WRIGHT_DATA_DIR", "/d/w"), ("XDG_DATA_HOME", "/x"), ("HOME", "/home/a")];
        assert_eq!(default_data_dir(&env(&all)), PathBuf::from("/d/w"));
        assert_eq!(default_data_dir(&env(&all[1..])), PathBuf::from("/x/wright"));
        assert_eq!(default_data_dir(&env(&all[2..])), PathBuf::from("/home/a/.local/share/wright"));
        assert_eq!(
            default_data_dir(&env(&[("WRIGHT_DATA_DIR", ""), ("HOME", "/h")])),
            PathBuf::from("/h/.local/share/wright")
        );
    }

    use super::*;

    #[test]
    fn provider_choice_order() {
        let none = |_: &str| None;
        let openai_key = |k: &str| (k == "OPENAI_API_KEY").then(|| "sk".to_string());
        assert_eq!(choose_provider(None, None, &none).unwrap(), ProviderKind::Local);
        assert_eq!(choose_provider(None, None, &openai_key).unwrap(), ProviderKind::OpenAi);
        assert_eq!(choose_provider(None, Some("claude-sonnet-4-5"), &openai_key).unwrap(), ProviderKind::Anthropic);
        assert_eq!(choose_provider(None, Some("o3-mini"), &none).unwrap(), ProviderKind::OpenAi);
        assert_eq!(choose_provider(None, Some("gemini-2.5-flash"), &none).unwrap(), ProviderKind::Gemini);
        assert_eq!(choose_provider(None, Some("qwen2.5-coder"), &none).unwrap(), ProviderKind::Local);
        assert_eq!(choose_provider(Some("openai"), Some("claude-x"), &none).unwrap(), ProviderKind::OpenAi);
        assert!(choose_provider(Some("bogus"), None, &none).is_err());
    }

    #[test]
    fn file_config_rejects_typos() {
        let e = toml::from_str::<FileConfig>("modle = \"x\"").unwrap_err().to_string();
        assert!(e.contains("modle"), "{e}");
        let c: FileConfig =
            toml::from_str("model = \"m\"\nchecks = [\"true\"]\n[pricing.m]\ninput = 1.0\noutput = 2.0\n").unwrap();
        assert_eq!(c.pricing.models["m"].output, 2.0);
    }
}
