//! A server's table in `wright.toml` (`[mcp_servers.NAME]`, the shape codex users know) and
//! the checks that turn it into a [`Server`] wright will start: a name tools can be called by,
//! exactly one transport, and an environment that cannot load code into the server's process.

use crate::error::McpError;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

/// How long a server has to start and list its tools, unless its table says otherwise.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(15);
/// How long one tool call may take, unless its table says otherwise.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// Environment variables a server may never be given, by `env` or `env_vars`: each makes a
/// program load code or options from somewhere the server's author did not choose.
const REFUSED_ENV: &[&str] = &[
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONINSPECT",
    "PERL5LIB",
    "PERL5OPT",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "GCONV_PATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "GIT_SSH_COMMAND",
];

/// Prefixes refused the same way (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `DYLD_INSERT_LIBRARIES`…).
const REFUSED_PREFIXES: &[&str] = &["LD_", "DYLD_"];

/// What wright sets itself; a table may not replace them.
const OWN_ENV: &[&str] = &["PATH", "HOME", "TMPDIR"];

/// One `[mcp_servers.NAME]` table as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// A stdio server: the program to start (inside wright's sandbox).
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for the server, with their values.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables passed through from wright's own environment, by name (nothing else is).
    #[serde(default)]
    pub env_vars: Vec<String>,
    /// Where the server starts (mounted read-only in the sandbox) [default: the workspace].
    pub cwd: Option<PathBuf>,
    /// Extra folders the server may read (its installation, when it lives outside `/usr`).
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    /// A Streamable HTTP server.
    pub url: Option<String>,
    /// The variable that holds the bearer token sent to `url`.
    pub bearer_token_env_var: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub startup_timeout_sec: Option<f64>,
    pub tool_timeout_sec: Option<f64>,
    /// The tools wright may call; every other tool of the server stays off.
    #[serde(default)]
    pub enabled_tools: Vec<String>,
    /// Whether a run fails when this server cannot be started.
    #[serde(default)]
    pub required: bool,
    /// Whether a stdio server may reach the network (loopback always works).
    #[serde(default)]
    pub network: bool,
    /// Requests this server's tools answer, for the chat's relevance scoring.
    #[serde(default)]
    pub examples: Vec<String>,
    /// Example requests per tool (`{ tool = ["…"] }`), for a server whose tools answer
    /// different requests; a tool not named here uses `examples`.
    #[serde(default)]
    pub tool_examples: BTreeMap<String, Vec<String>>,
    /// `false` keeps the table without starting the server.
    pub enabled: Option<bool>,
}

/// How wright reaches a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        /// Set values first, then the passed-through names (read when the server starts).
        env: BTreeMap<String, String>,
        env_vars: Vec<String>,
        cwd: Option<PathBuf>,
        read_only: Vec<PathBuf>,
        network: bool,
    },
    Http {
        url: String,
        bearer_token_env_var: Option<String>,
        headers: BTreeMap<String, String>,
    },
}

/// A checked server table.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    pub name: String,
    pub transport: Transport,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    pub enabled_tools: BTreeSet<String>,
    pub required: bool,
    pub examples: Vec<String>,
    pub tool_examples: BTreeMap<String, Vec<String>>,
}

/// Every enabled table of `wright.toml`, checked; the first bad one is the error.
pub fn servers(tables: &BTreeMap<String, ServerConfig>) -> Result<Vec<Server>, McpError> {
    tables.iter().filter(|(_, c)| c.enabled != Some(false)).map(|(name, c)| Server::check(name, c)).collect()
}

impl Server {
    /// Check one table: its name, one transport, its environment and timeouts.
    pub fn check(name: &str, c: &ServerConfig) -> Result<Self, McpError> {
        let bad = |why: String| McpError::Config { server: name.to_string(), why };
        check_name(name).map_err(bad)?;
        let transport = match (&c.command, &c.url) {
            (Some(command), None) => {
                if command.trim().is_empty() {
                    return Err(bad("`command` is empty".into()));
                }
                for key in c.env.keys().chain(c.env_vars.iter()) {
                    check_env_key(key).map_err(bad)?;
                }
                if c.bearer_token_env_var.is_some() || !c.headers.is_empty() {
                    return Err(bad("`bearer_token_env_var` and `headers` are for a server with a `url`".into()));
                }
                Transport::Stdio {
                    command: command.clone(),
                    args: c.args.clone(),
                    env: c.env.clone(),
                    env_vars: c.env_vars.clone(),
                    cwd: c.cwd.clone(),
                    read_only: c.read_only.clone(),
                    network: c.network,
                }
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(bad(format!("`url` must start with http:// or https://, not `{url}`")));
                }
                if !c.args.is_empty() || !c.env.is_empty() || !c.env_vars.is_empty() || c.cwd.is_some() {
                    return Err(bad("`args`, `env`, `env_vars` and `cwd` are for a server with a `command`".into()));
                }
                for key in c.headers.keys() {
                    http::HeaderName::try_from(key.as_str())
                        .map_err(|_| bad(format!("`{key}` is not a header name")))?;
                }
                Transport::Http {
                    url: url.clone(),
                    bearer_token_env_var: c.bearer_token_env_var.clone(),
                    headers: c.headers.clone(),
                }
            }
            (Some(_), Some(_)) => return Err(bad("give `command` or `url`, not both".into())),
            (None, None) => return Err(bad("give `command` (a stdio server) or `url` (an HTTP one)".into())),
        };
        Ok(Self {
            name: name.to_string(),
            transport,
            startup_timeout: seconds(c.startup_timeout_sec, STARTUP_TIMEOUT, "startup_timeout_sec").map_err(bad)?,
            tool_timeout: seconds(c.tool_timeout_sec, TOOL_TIMEOUT, "tool_timeout_sec").map_err(bad)?,
            enabled_tools: c.enabled_tools.iter().cloned().collect(),
            required: c.required,
            examples: c.examples.clone(),
            tool_examples: c.tool_examples.clone(),
        })
    }
}

/// Letters, digits, `-` and `_`, at most 32, and no `__` (it separates the parts of a tool's
/// name, `mcp__<server>__<tool>`).
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.contains("__");
    if ok {
        Ok(())
    } else {
        Err(format!("`{name}` cannot name a server: use up to 32 letters, digits, `-` or `_` (and no `__`)"))
    }
}

/// Refuse keys that load code into the server, and the ones wright sets itself.
pub fn check_env_key(key: &str) -> Result<(), String> {
    let upper = key.to_ascii_uppercase();
    if key.is_empty() || key.contains('=') || key.contains('\0') {
        return Err(format!("`{key}` is not a variable name"));
    }
    if REFUSED_ENV.contains(&upper.as_str()) || REFUSED_PREFIXES.iter().any(|p| upper.starts_with(p)) {
        return Err(format!("`{key}` is refused: it would make the server load code or options it did not choose"));
    }
    if OWN_ENV.contains(&upper.as_str()) {
        return Err(format!("`{key}` is set by wright for every server"));
    }
    Ok(())
}

fn seconds(given: Option<f64>, default: Duration, key: &str) -> Result<Duration, String> {
    match given {
        None => Ok(default),
        Some(s) if s.is_finite() && s > 0.0 && s <= 3600.0 => Ok(Duration::from_secs_f64(s)),
        Some(s) => Err(format!("`{key}` must be above 0 and at most 3600, not {s}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(toml_text: &str) -> BTreeMap<String, ServerConfig> {
        #[derive(Deserialize)]
        struct File {
            mcp_servers: BTreeMap<String, ServerConfig>,
        }
        toml::from_str::<File>(toml_text).unwrap().mcp_servers
    }

    #[test]
    fn a_stdio_and_an_http_server_are_read() {
        let t = table(
            r#"
            [mcp_servers.docs]
            command = "python3"
            args = ["server.py"]
            env = { MODE = "safe" }
            env_vars = ["DOCS_TOKEN"]
            enabled_tools = ["search"]
            tool_timeout_sec = 5
            [mcp_servers.remote]
            url = "https://tools.example/mcp"
            bearer_token_env_var = "REMOTE_TOKEN"
            required = true
            [mcp_servers.off]
            command = "x"
            enabled = false
            "#,
        );
        let s = servers(&t).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "docs");
        assert_eq!(s[0].tool_timeout, Duration::from_secs(5));
        assert!(s[0].enabled_tools.contains("search"));
        assert!(matches!(&s[1].transport, Transport::Http { url, .. } if url == "https://tools.example/mcp"));
        assert!(s[1].required);
    }

    #[test]
    fn keys_that_load_code_are_refused() {
        for key in ["LD_PRELOAD", "ld_library_path", "NODE_OPTIONS", "PYTHONPATH", "DYLD_INSERT_LIBRARIES", "PATH"] {
            let c = ServerConfig { command: Some("x".into()), env_vars: vec![key.into()], ..Default::default() };
            let e = Server::check("s", &c).unwrap_err().to_string();
            assert!(e.contains(key), "{key}: {e}");
        }
    }

    #[test]
    fn a_table_needs_exactly_one_transport_and_a_usable_name() {
        assert!(Server::check("s", &ServerConfig::default()).is_err());
        let both = ServerConfig { command: Some("x".into()), url: Some("http://h/mcp".into()), ..Default::default() };
        assert!(Server::check("s", &both).is_err());
        let stdio = ServerConfig { command: Some("x".into()), ..Default::default() };
        for name in ["a__b", "", "has space", "ünï", &"x".repeat(33)] {
            assert!(Server::check(name, &stdio).is_err(), "{name}");
        }
        let ftp = ServerConfig { url: Some("ftp://h".into()), ..Default::default() };
        assert!(Server::check("s", &ftp).is_err());
        let slow = ServerConfig { command: Some("x".into()), tool_timeout_sec: Some(-1.0), ..Default::default() };
        assert!(Server::check("s", &slow).is_err());
    }

    #[test]
    fn unknown_keys_are_an_error() {
        #[derive(Deserialize)]
        #[allow(dead_code)]
        struct File {
            mcp_servers: BTreeMap<String, ServerConfig>,
        }
        assert!(toml::from_str::<File>("[mcp_servers.s]\ncommand = \"x\"\nenviron = {}\n").is_err());
    }
}
