//! The filtering proxy a build reaches the outside through.
//!
//! A build's commands run in a network namespace of their own, with loopback only. When the
//! admin allows some outside hosts or names some APIs, wright starts one [`Proxy`] per build
//! on the host; a tiny bridge inside the sandbox ([`BRIDGE_JS`]) carries connections to it
//! over a Unix socket. The proxy lets through only:
//!
//! - standard forward-proxy traffic (`CONNECT host:port` tunnels, with no TLS interception,
//!   and absolute-URI plain HTTP requests) to hosts on the [`AllowList`];
//! - calls to named APIs at `/_api/<name>/<rest>`, forwarded to the API's base URL with its
//!   key added on the host side, so the key never enters the sandbox, a prompt or an event.
//!
//! Every outside request, allowed or refused, is handed to the caller's [`Sink`] as an
//! [`OutsideRequest`] (which never holds a key), and per-build [`Limits`] bound how many
//! requests and bytes a build may use.

mod forward;
mod policy;
mod proxy;
mod report;
mod scrub;
mod shared;
mod tunnel;

pub use policy::{
    AllowList, Api, EgressPolicy, HostRule, KeyPlacement, Limits, PolicyError, Secret, env_name, normalize_host,
};
pub use proxy::{EgressError, Proxy, SOCKET_NAME};
pub use report::{OutsideRequest, Sink};
pub use scrub::Scrubber;

/// The Node script that runs inside the sandbox in front of a command: it listens on
/// `127.0.0.1:<port>` in the command's own network namespace, carries each connection to the
/// proxy's Unix socket, and runs the command (exiting as it exits). Arguments:
/// `<port> <socket path> <program> [args…]`.
pub const BRIDGE_JS: &str = include_str!("bridge.js");
