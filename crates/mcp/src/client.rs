//! One connection to one server, on rmcp's client: a stdio server started inside wright's
//! sandbox (cleared environment, the allow-listed variables only, the workspace bound in, no
//! network unless its table allows it), or a Streamable HTTP server reached with its token.

use crate::config::{Server, Transport};
use crate::error::McpError;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ServiceExt, model::JsonObject};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;
use wright_sandbox::{CommandSpec, Isolation, Piped};

/// The confinement a stdio server runs in, made for each server by whoever owns the sandbox
/// (the engine): its own policy, since a server's network and readable folders are its own.
pub trait Confine: Send + Sync {
    /// An isolation with `network` as the table says and `read_only` folders mounted.
    fn isolation(&self, network: bool, read_only: &[PathBuf]) -> Result<Box<dyn Isolation>, String>;
}

/// What starting a server needs besides its table.
pub struct Launch<'a> {
    pub confine: &'a dyn Confine,
    /// The run's workspace: a stdio server's default working folder, and writable.
    pub workspace: PathBuf,
    /// A private HOME (and TMPDIR) for the server, writable.
    pub home: PathBuf,
    /// wright's own environment, for `env_vars` and `bearer_token_env_var` (and only those).
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// Hides secrets in what a server printed before it is told (a failure's reason).
    pub redactor: &'a wright_sandbox::Redactor,
}

/// The `PATH` a stdio server gets.
const SERVER_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// A started server, ready for calls.
pub struct Connection {
    pub server: Server,
    service: RunningService<RoleClient, ()>,
    /// The sandboxed process of a stdio server (killed with its group when dropped).
    process: Option<Mutex<Piped>>,
}

impl Connection {
    /// Start (or reach) `server` and finish MCP's handshake, within its startup timeout.
    pub async fn connect(server: &Server, launch: &Launch<'_>) -> Result<Arc<Self>, McpError> {
        let failed = |why: String| McpError::Server { server: server.name.clone(), why };
        let started = tokio::time::timeout(server.startup_timeout, Self::open(server, launch)).await;
        match started {
            Ok(Ok(c)) => Ok(Arc::new(c)),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(failed(format!("it did not answer within {:?}", server.startup_timeout))),
        }
    }

    async fn open(server: &Server, launch: &Launch<'_>) -> Result<Self, McpError> {
        let failed = |why: String| McpError::Server { server: server.name.clone(), why };
        match &server.transport {
            Transport::Stdio { command, args, env, env_vars, cwd, read_only, network } => {
                let mut vars = vec![
                    ("PATH".to_string(), SERVER_PATH.to_string()),
                    ("HOME".to_string(), launch.home.display().to_string()),
                    ("TMPDIR".to_string(), launch.home.display().to_string()),
                    ("LANG".to_string(), "C.UTF-8".to_string()),
                ];
                vars.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
                for name in env_vars {
                    if let Some(v) = (launch.env)(name) {
                        vars.push((name.clone(), v));
                    }
                }
                let mut readable: Vec<PathBuf> = read_only.clone();
                readable.extend(cwd.iter().cloned());
                if let Some(dir) = std::path::Path::new(command).parent().filter(|p| p.is_absolute()) {
                    readable.push(dir.to_path_buf());
                }
                let isolation = launch.confine.isolation(*network, &readable).map_err(failed)?;
                let mut spec = CommandSpec::new(
                    command.clone(),
                    args.clone(),
                    cwd.clone().unwrap_or_else(|| launch.workspace.clone()),
                    vars,
                );
                spec.timeout = std::time::Duration::MAX;
                let mut process = Piped::spawn(isolation.as_ref(), spec).map_err(|e| failed(e.to_string()))?;
                let Some((stdout, stdin)) = process.take_io() else {
                    return Err(failed("its pipes could not be opened".into()));
                };
                match ().serve((stdout, stdin)).await {
                    Ok(service) => Ok(Self { server: server.clone(), service, process: Some(Mutex::new(process)) }),
                    Err(e) => {
                        // What it printed says more than the broken handshake.
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        let said = process.stderr_tail();
                        let tail = said.trim().lines().rev().take(5).collect::<Vec<_>>();
                        let tail: Vec<&str> = tail.into_iter().rev().collect();
                        Err(failed(if tail.is_empty() {
                            format!("the MCP handshake failed: {e}")
                        } else {
                            format!("the MCP handshake failed ({e}); it said: {}", tail.join(" | "))
                        }))
                    }
                }
            }
            Transport::Http { url, bearer_token_env_var, headers } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(var) = bearer_token_env_var {
                    let token = (launch.env)(var).ok_or_else(|| failed(format!("`{var}` is not set")))?;
                    config = config.auth_header(token);
                }
                let mut custom = HashMap::new();
                for (k, v) in headers {
                    let name = http::HeaderName::try_from(k.as_str()).map_err(|e| failed(e.to_string()))?;
                    let value = http::HeaderValue::try_from(v.as_str()).map_err(|e| failed(e.to_string()))?;
                    custom.insert(name, value);
                }
                config = config.custom_headers(custom);
                let transport = StreamableHttpClientTransport::with_client(http_client().map_err(failed)?, config);
                let service = ().serve(transport).await.map_err(|e| failed(format!("the MCP handshake failed: {e}")))?;
                Ok(Self { server: server.clone(), service, process: None })
            }
        }
    }

    /// Every tool the server lists.
    pub async fn tools(&self) -> Result<Vec<Tool>, McpError> {
        let listed = tokio::time::timeout(self.server.startup_timeout, self.service.list_all_tools()).await;
        match listed {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => Err(self.failed(format!("listing its tools failed: {e}"))),
            Err(_) => Err(self.failed(format!("it did not list its tools within {:?}", self.server.startup_timeout))),
        }
    }

    /// Call `tool` with `args`, within the server's tool timeout; `cancel` (the run's stop)
    /// ends the wait early.
    pub async fn call(
        &self,
        tool: &str,
        args: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, McpError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        tokio::select! {
            r = tokio::time::timeout(self.server.tool_timeout, self.service.call_tool(params)) => match r {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(e)) => Err(self.failed(format!("the call failed: {e}{}", self.said()))),
                Err(_) => Err(McpError::Timeout { server: self.server.name.clone(), after: self.server.tool_timeout }),
            },
            _ = cancel.cancelled() => Err(self.failed("the run was stopped during the call".into())),
        }
    }

    fn failed(&self, why: String) -> McpError {
        McpError::Server { server: self.server.name.clone(), why }
    }

    /// The end of what a stdio server printed on stderr, when it has exited.
    fn said(&self) -> String {
        let Some(p) = &self.process else { return String::new() };
        let Ok(mut p) = p.lock() else { return String::new() };
        match p.exited() {
            Some(code) => {
                let tail = p.stderr_tail();
                let last = tail.trim().lines().last().unwrap_or("").to_string();
                format!(
                    " (the server exited with {code:?}{})",
                    if last.is_empty() { String::new() } else { format!(": {last}") }
                )
            }
            None => String::new(),
        }
    }
}

/// An HTTP client with TLS by rustls over ring and the Mozilla roots (as wright's other
/// clients), made here since the SDK's reqwest is another major version than the providers'.
/// Always build the SDK's clients with this (`with_client`): that reqwest has no crypto
/// provider of its own, so its default client cannot be built.
pub fn http_client() -> Result<reqwest_mcp::Client, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest_mcp::Client::builder().tls_backend_preconfigured(tls).build().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_http_client_is_built_with_its_own_crypto_provider() {
        // No provider is installed for the process: the client brings its own.
        assert!(rustls::crypto::CryptoProvider::get_default().is_none());
        assert!(super::http_client().is_ok());
    }
}
