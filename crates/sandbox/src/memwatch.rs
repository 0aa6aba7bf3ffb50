//! The memory a command's processes hold together, read from `/proc`: the watchdog the runner
//! keeps over a command that no address-space limit can bound (Chromium, see
//! [`CommandSpec::memory_watch`](crate::CommandSpec::memory_watch)).
//!
//! What counts is each process's anonymous and shared-memory resident pages (`RssAnon` +
//! `RssShmem` of `/proc/PID/status`): what the page's heap, its array buffers and the app's
//! server really take. File pages (`RssFile`) are left out: every Chromium process maps the
//! same 250 MB binary, and counting it once per process would count it six times. The status
//! file is readable for any process of the same user, and for root any process, even ones that
//! made themselves undumpable (Chromium's do, which closes `smaps` to an ordinary user).

use std::collections::{HashMap, HashSet};

/// One process of the tree and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessMemory {
    pub pid: i32,
    /// Its command line, arguments joined by spaces (at most 300 bytes).
    pub command: String,
    pub bytes: u64,
}

/// What a command's processes held together at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeMemory {
    pub total: u64,
    /// The process holding the most: who to name when the total is too much.
    pub largest: Option<ProcessMemory>,
    /// Every process counted.
    pub pids: Vec<i32>,
}

/// `(ppid, pgrp)` of a process, from `/proc/PID/stat` (its name, in parentheses, may hold
/// spaces and parentheses itself, so the fields are read after the last `)`).
fn parent_and_group(pid: i32) -> Option<(i32, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let _state = f.next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgrp = f.next()?.parse().ok()?;
    Some((ppid, pgrp))
}

/// Resident anonymous plus shared memory of `pid`, in bytes.
fn held_by(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |key: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    Some((kib("RssAnon:") + kib("RssShmem:")) * 1024)
}

fn command_of(pid: i32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let text = String::from_utf8_lossy(&raw).replace('\0', " ");
    let text = text.trim();
    wright_text::head(text, 300, wright_text::Unit::Bytes).to_string()
}

/// The processes of the tree rooted at `root`: its descendants (by parent), and whatever is in
/// its process group (a child that was reparented when its parent died is still the
/// command's). A bubblewrap sandbox's processes, in their own PID namespace, are listed here by
/// their host pids like any other.
pub fn tree(root: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let mut members: Vec<i32> = vec![root];
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if let Some((ppid, pgrp)) = parent_and_group(pid) {
            children.entry(ppid).or_default().push(pid);
            if pgrp == root && pid != root {
                members.push(pid);
            }
        }
    }
    let mut seen: HashSet<i32> = HashSet::new();
    let mut out = Vec::new();
    while let Some(pid) = members.pop() {
        if seen.insert(pid) {
            out.push(pid);
            members.extend(children.get(&pid).into_iter().flatten().copied());
        }
    }
    out
}

/// What the tree rooted at `root` holds now.
pub fn tree_memory(root: i32) -> TreeMemory {
    let mut m = TreeMemory::default();
    for pid in tree(root) {
        let Some(bytes) = held_by(pid) else { continue };
        m.total += bytes;
        m.pids.push(pid);
        if m.largest.as_ref().is_none_or(|l| bytes > l.bytes) {
            m.largest = Some(ProcessMemory { pid, command: String::new(), bytes });
        }
    }
    if let Some(l) = m.largest.as_mut() {
        l.command = command_of(l.pid);
    }
    m
}

/// SIGKILL to each of `pids`.
pub(crate) fn kill_pids(pids: &[i32]) {
    for &pid in pids {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    }
}

/// A command's [`CommandSpec::memory_watch`](crate::CommandSpec::memory_watch) while it runs.
pub(crate) struct Watch {
    limit: u64,
    root: Option<i32>,
    /// The most the tree held at one measurement.
    pub(crate) peak: u64,
    /// What it held when it passed the limit.
    pub(crate) exceeded: Option<TreeMemory>,
}

impl Watch {
    pub(crate) fn new(limit: u64, root: Option<u32>) -> Self {
        Self { limit, root: root.and_then(|p| i32::try_from(p).ok()), peak: 0, exceeded: None }
    }

    /// Measure once (off the async threads: a walk of `/proc`); true when over the limit.
    pub(crate) async fn measure(&mut self) -> bool {
        let Some(root) = self.root else { return false };
        let Ok(m) = tokio::task::spawn_blocking(move || tree_memory(root)).await else {
            return false;
        };
        self.peak = self.peak.max(m.total);
        if m.total > self.limit {
            self.exceeded = Some(m);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_and_its_children_are_counted_together() {
        // A child holding 64 MiB of touched memory (plus a grandchild that holds little).
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sh")
            .process_group(0)
            .args(["-c", "sleep 30 & exec perl -e '$x = \"a\" x (64 * 1024 * 1024); sleep 30'"])
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let mut m = TreeMemory::default();
        for _ in 0..100 {
            m = tree_memory(pid);
            if m.total >= 64 << 20 && m.pids.len() >= 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        let _ = child.wait();
        assert!(m.total >= 64 << 20, "{m:?}");
        assert!(m.pids.len() >= 2, "the background sleep is part of the tree: {m:?}");
        let largest = m.largest.unwrap();
        assert_eq!(largest.pid, pid);
        assert!(largest.command.starts_with("perl"), "{largest:?}");
    }

    #[test]
    fn a_process_that_is_gone_holds_nothing() {
        assert_eq!(tree_memory(i32::MAX).total, 0);
    }
}
