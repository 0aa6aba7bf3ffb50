//! The way out of a sandbox that has no network: a bridge process in front of the command
//! listens on loopback inside the command's network namespace and carries each connection to
//! wright's filtering proxy through a Unix socket mounted into the sandbox. Commands keep
//! their own namespace (no raw sockets out); only what the proxy allows gets through.

use std::path::PathBuf;

/// Where the proxy's socket appears inside the sandbox (a short path on the sandbox's own
/// `/run`, whatever the length of the host folder it lives in).
pub const SOCKET_INSIDE: &str = "/run/wright-egress.sock";
/// Where the bridge script appears inside the sandbox.
pub const SCRIPT_INSIDE: &str = "/run/wright-bridge.js";

/// A build's bridge to its egress proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressBridge {
    /// The proxy's Unix socket on the host (any length: it is mounted, not connected to).
    pub socket: PathBuf,
    /// The bridge script on the host (`wright_egress::BRIDGE_JS`, written by the caller).
    pub script: PathBuf,
    /// The Node.js that runs the bridge.
    pub node: PathBuf,
    /// The loopback port the bridge listens on inside the sandbox.
    pub port: u16,
}

impl EgressBridge {
    /// bubblewrap arguments that mount the socket and the script (after `/run` is made).
    pub(crate) fn mounts(&self) -> Vec<String> {
        let s = |p: &std::path::Path| p.to_string_lossy().into_owned();
        vec![
            "--bind".into(),
            s(&self.socket),
            SOCKET_INSIDE.into(),
            "--ro-bind".into(),
            s(&self.script),
            SCRIPT_INSIDE.into(),
        ]
    }

    /// What goes before the command: `node <script> <port> <socket>`.
    pub(crate) fn prefix(&self) -> Vec<String> {
        vec![
            self.node.to_string_lossy().into_owned(),
            SCRIPT_INSIDE.into(),
            self.port.to_string(),
            SOCKET_INSIDE.into(),
        ]
    }
}
