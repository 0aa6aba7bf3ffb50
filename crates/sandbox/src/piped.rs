//! A long-lived sandboxed process that wright talks to over its stdin and stdout (an MCP
//! server), confined by the same [`Isolation`] as a one-shot command. It runs in its own
//! process group, which is killed whole when the handle is dropped, and what it prints on
//! stderr is kept (its last few KiB) to say why it failed.

use crate::spec::{CommandSpec, Held, Isolation, RunError};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout};

/// How much of the process's stderr is kept.
const STDERR_KEPT: usize = 4096;

/// A started process: take its pipes with [`Piped::take_io`]; dropping it kills the group.
pub struct Piped {
    child: Child,
    pgid: Option<u32>,
    io: Option<(ChildStdout, ChildStdin)>,
    stderr: Arc<Mutex<String>>,
    /// What the isolation keeps alive while the process runs (its cgroup).
    _held: Vec<Held>,
}

impl Piped {
    /// Start `spec` through `isolation` with stdin and stdout piped. `spec.timeout` does not
    /// apply: the process lives until it exits or the handle is dropped.
    pub fn spawn(isolation: &dyn Isolation, spec: CommandSpec) -> Result<Self, RunError> {
        let mut spec = isolation.wrap(spec)?;
        let mut child = crate::runner::spawn(&spec, Stdio::piped())?;
        drop(std::mem::take(&mut spec.inherit));
        let pgid = child.id();
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut err) = child.stderr.take() {
            let kept = stderr.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 2048];
                while let Ok(n) = err.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut k) = kept.lock() {
                        k.push_str(&String::from_utf8_lossy(&buf[..n]));
                        if k.len() > STDERR_KEPT {
                            let mut cut = k.len() - STDERR_KEPT;
                            while !k.is_char_boundary(cut) {
                                cut += 1;
                            }
                            k.drain(..cut);
                        }
                    }
                }
            });
        }
        let io = match (child.stdout.take(), child.stdin.take()) {
            (Some(out), Some(inp)) => Some((out, inp)),
            _ => None,
        };
        Ok(Self { child, pgid, io, stderr, _held: std::mem::take(&mut spec.held) })
    }

    /// The process's stdout and stdin, once.
    pub fn take_io(&mut self) -> Option<(ChildStdout, ChildStdin)> {
        self.io.take()
    }

    /// The last few KiB the process printed on stderr.
    pub fn stderr_tail(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Whether it has exited, and how: `Some(code)` (`None` inside for a signal).
    pub fn exited(&mut self) -> Option<Option<i32>> {
        self.child.try_wait().ok().flatten().map(|s| s.code())
    }
}

impl Drop for Piped {
    fn drop(&mut self) {
        if let Some(pid) = self.pgid.and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::NoIsolation;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    #[tokio::test]
    async fn talks_over_its_pipes_and_keeps_its_stderr() {
        let spec = CommandSpec::new(
            "sh",
            vec!["-c".into(), "echo starting >&2; read line; echo \"got $line\"".into()],
            std::env::temp_dir(),
            vec![("PATH".into(), "/usr/bin:/bin".into())],
        );
        let mut p = Piped::spawn(&NoIsolation, spec).unwrap();
        let (out, mut inp) = p.take_io().unwrap();
        inp.write_all(b"hello\n").await.unwrap();
        let mut line = String::new();
        BufReader::new(out).read_line(&mut line).await.unwrap();
        assert_eq!(line, "got hello\n");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert!(p.stderr_tail().contains("starting"));
    }

    #[tokio::test]
    async fn dropping_it_kills_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let spec = CommandSpec::new(
            "sh",
            vec!["-c".into(), format!("sleep 300 & echo $! > {}; wait", pidfile.display())],
            dir.path().to_path_buf(),
            vec![("PATH".into(), "/usr/bin:/bin".into())],
        );
        let p = Piped::spawn(&NoIsolation, spec).unwrap();
        let mut pid = String::new();
        for _ in 0..100 {
            pid = std::fs::read_to_string(&pidfile).unwrap_or_default();
            if !pid.trim().is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let proc_dir = std::path::PathBuf::from(format!("/proc/{}", pid.trim()));
        assert!(proc_dir.exists());
        drop(p);
        for _ in 0..100 {
            let gone = std::fs::read_to_string(proc_dir.join("stat"))
                .map(|s| s.split_whitespace().nth(2) == Some("Z"))
                .unwrap_or(true);
            if gone {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("the background sleep outlived the handle");
    }
}
