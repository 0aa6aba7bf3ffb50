//! wright as an MCP server (docs/mcp.md): its builds, task runs, apps and chat as tools an
//! editor or another agent calls, on the official Rust SDK (`rmcp`).
//!
//! - One handler, two transports: Streamable HTTP at `/mcp` on `wright serve` ([`http`]), and
//!   stdin/stdout for `wright mcp serve` ([`stdio`]), which runs the same service without HTTP.
//! - The caller is whoever the API says it is: over HTTP the bearer token's user, checked per
//!   request before rmcp sees it (and a session is its opener's only, [`sessions`]); over
//!   stdio the local user. Each tool calls the function its
//!   HTTP route is ([`calls`]), so the checks, limits, queue and sandbox are the API's.
//! - Bad input is a tool result with `isError: true` and a plain message, never a protocol
//!   error: the caller's model reads it and tries again.

mod calls;
pub(crate) mod http;
mod sessions;
mod tools;

use crate::auth::Caller;
use crate::state::AppState;
use calls::{Outcome, Progress, args};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use tokio_util::sync::CancellationToken;
use wright_store::{Role, User};

/// The id `wright mcp serve` acts as: the local user `wright chat` uses too, so a
/// conversation started in one goes on in the other.
pub const LOCAL_USER: &str = "local";

/// The MCP handler: the service's shared state, and the caller when the transport fixes it
/// (stdio); over HTTP each request names its own.
#[derive(Clone)]
pub(crate) struct WrightMcp {
    state: AppState,
    caller: Option<Caller>,
}

impl WrightMcp {
    pub fn new(state: AppState, caller: Option<Caller>) -> Self {
        Self { state, caller }
    }

    /// Who this request is from: the transport's fixed caller, or the user [`http::guard`]
    /// found for the HTTP request that carried it.
    fn caller_of(&self, cx: &RequestContext<RoleServer>) -> Option<Caller> {
        self.caller.clone().or_else(|| {
            cx.extensions.get::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<Caller>().cloned())
        })
    }

    async fn dispatch(&self, req: CallToolRequestParams, cx: RequestContext<RoleServer>) -> Outcome {
        let Some(caller) = self.caller_of(&cx) else {
            return Err("sign in first: send `Authorization: Bearer <token>` (from `wright users add NAME`)".into());
        };
        let state = &self.state;
        let cancelled: CancellationToken = cx.ct.clone();
        match req.name.as_ref() {
            tools::BUILD_APP => {
                let progress = Progress { peer: cx.peer.clone(), token: cx.meta.get_progress_token() };
                calls::build_app(state, caller, args(req.arguments)?, progress, cancelled).await
            }
            tools::GET_BUILD => calls::get_build(state, caller, args(req.arguments)?).await,
            tools::GET_BUILD_EVENTS => calls::get_build_events(state, caller, args(req.arguments)?).await,
            tools::LIST_BUILDS => calls::list_builds(state, caller, args(req.arguments)?).await,
            tools::CANCEL_BUILD => calls::cancel_build(state, caller, args(req.arguments)?).await,
            tools::RUN_TASK => calls::run_task(state, caller, args(req.arguments)?).await,
            tools::LIST_APPS => {
                let calls::NoArgs {} = args(req.arguments)?;
                calls::list_apps(state, caller).await
            }
            tools::CHAT => calls::chat(state, caller, args(req.arguments)?, cancelled).await,
            other => Err(format!(
                "no tool is called `{other}`; wright's tools are {}",
                tools::all().iter().map(|t| t.name.as_ref()).collect::<Vec<_>>().join(", ")
            )),
        }
    }
}

impl ServerHandler for WrightMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("wright", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "wright builds web apps from a description and verifies them. Call build_app with a prompt, then \
                 follow the build with get_build_events (until its `complete` event) or get_build.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::all().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.clone();
        let result = self.dispatch(request, cx).await.unwrap_or_else(|message| {
            tracing::info!(tool = %name, "MCP tool call refused: {message}");
            CallToolResult::error(vec![ContentBlock::text(message)])
        });
        Ok(result.into())
    }
}

/// `wright mcp serve`: the handler on stdin/stdout as the local user, until the client closes
/// stdin (or `stop` fires). Nothing else may write to stdout: it carries MCP messages only.
pub(crate) async fn stdio(state: AppState, stop: CancellationToken) -> Result<(), String> {
    let local =
        User { id: LOCAL_USER.into(), name: LOCAL_USER.into(), role: Role::User, created_at: wright_events::now() };
    let handler = WrightMcp::new(state, Some(Caller(local)));
    let running = handler.serve_with_ct(rmcp::transport::stdio(), stop).await.map_err(|e| e.to_string())?;
    running.waiting().await.map_err(|e| e.to_string())?;
    Ok(())
}
