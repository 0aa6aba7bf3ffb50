//! Per-command control groups: a memory limit that counts what a command really uses (an
//! address-space rlimit cannot: V8 reserves gigabytes for WebAssembly that it never touches,
//! so Node's `fetch` fails under one), and a process limit that, unlike RLIMIT_NPROC, counts
//! only the command's own processes. Used where wright may create cgroups (root, or a
//! delegated cgroup v2 subtree); `wright doctor` says which.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

const ROOT: &str = "/sys/fs/cgroup";

/// Where wright can create per-command groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cgroups {
    /// Separate v1 hierarchies for memory and pids (each optional).
    V1 { memory: Option<PathBuf>, pids: Option<PathBuf> },
    /// One v2 folder whose children get the memory and pids controllers.
    V2 { base: PathBuf },
}

/// One command's groups; removed when dropped (after the command's processes are gone).
#[derive(Debug)]
pub struct CommandGroup {
    dirs: Vec<PathBuf>,
    /// The `cgroup.procs` files a process writes its pid to, to join.
    pub procs: Vec<PathBuf>,
}

impl Drop for CommandGroup {
    fn drop(&mut self) {
        // Whatever the command left running (a daemon that left its process group) goes now.
        // Repeated until the group is empty: a fork storm makes new members while it is killed.
        for procs in &self.procs {
            for _ in 0..200 {
                let pids: Vec<i32> = std::fs::read_to_string(procs)
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|p| p.trim().parse().ok())
                    .collect();
                if pids.is_empty() {
                    break;
                }
                for pid in pids {
                    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        for d in &self.dirs {
            // A group can only go once its last process has been reaped, which may take the
            // kernel a moment after a kill.
            for attempt in 0..5 {
                if std::fs::remove_dir(d).is_ok() || !d.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10 << attempt));
            }
        }
    }
}

/// `/proc/self/cgroup`'s path for a v1 controller, or the v2 path (controller "").
fn own_path(controller: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
        let hit = if controller.is_empty() { ctrls.is_empty() } else { ctrls.split(',').any(|c| c == controller) };
        hit.then(|| path.to_string())
    })
}

/// A folder under which this process may make groups: its own cgroup if visible, else the
/// hierarchy's root. Proven by making and removing a probe group.
fn usable_v1(controller: &str) -> Option<PathBuf> {
    let mount = Path::new(ROOT).join(controller);
    if !mount.join("cgroup.procs").exists() {
        return None;
    }
    let own = own_path(controller).map(|p| mount.join(p.trim_start_matches('/')));
    let candidates = own.into_iter().chain(std::iter::once(mount));
    candidates.into_iter().find(|base| probe_dir(base))
}

fn probe_dir(base: &Path) -> bool {
    let probe = base.join(format!("wright-probe-{}", std::process::id()));
    let ok = std::fs::create_dir(&probe).is_ok();
    if ok {
        let _ = std::fs::remove_dir(&probe);
    }
    ok
}

fn write(path: &Path, value: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new().write(true).open(path)?.write_all(value.as_bytes())
}

impl Cgroups {
    /// What this machine allows, if anything.
    pub fn detect() -> Option<Cgroups> {
        let root = Path::new(ROOT);
        if root.join("cgroup.controllers").exists() {
            // Pure v2: our own group's children, if we may enable memory and pids for them.
            let own = own_path("")?;
            let base = root.join(own.trim_start_matches('/'));
            let wanted = ["memory", "pids"];
            let have = std::fs::read_to_string(base.join("cgroup.subtree_control")).unwrap_or_default();
            if !wanted.iter().all(|c| have.split_whitespace().any(|h| h == *c)) {
                write(&base.join("cgroup.subtree_control"), "+memory +pids").ok()?;
            }
            return probe_dir(&base).then_some(Cgroups::V2 { base });
        }
        let (memory, pids) = (usable_v1("memory"), usable_v1("pids"));
        if memory.is_none() && pids.is_none() {
            return None;
        }
        Some(Cgroups::V1 { memory, pids })
    }

    /// Whether memory is limited by a group (else only by an address-space rlimit).
    pub fn limits_memory(&self) -> bool {
        match self {
            Cgroups::V1 { memory, .. } => memory.is_some(),
            Cgroups::V2 { .. } => true,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Cgroups::V1 { memory, pids } => format!(
                "cgroup v1 ({})",
                [memory.as_ref().map(|_| "memory"), pids.as_ref().map(|_| "pids")]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Cgroups::V2 { base } => format!("cgroup v2 under {}", base.display()),
        }
    }

    /// A fresh group named `name` (unique among this process's commands) with these limits.
    pub fn create(&self, name: &str, memory_bytes: u64, processes: u64) -> std::io::Result<CommandGroup> {
        let mut group = CommandGroup { dirs: Vec::new(), procs: Vec::new() };
        let mut make = |base: &Path, settings: &[(&str, String)]| -> std::io::Result<()> {
            let dir = base.join(name);
            std::fs::create_dir(&dir)?;
            group.dirs.push(dir.clone());
            for (file, value) in settings {
                write(&dir.join(file), value)?;
            }
            group.procs.push(dir.join("cgroup.procs"));
            Ok(())
        };
        match self {
            Cgroups::V1 { memory, pids } => {
                if let Some(m) = memory {
                    make(m, &[("memory.limit_in_bytes", memory_bytes.to_string())])?;
                    // Swap counts too where the kernel accounts it; absent files are fine.
                    let _ = write(&m.join(name).join("memory.memsw.limit_in_bytes"), &memory_bytes.to_string());
                }
                if let Some(p) = pids {
                    make(p, &[("pids.max", processes.to_string())])?;
                }
            }
            Cgroups::V2 { base } => {
                make(base, &[("memory.max", memory_bytes.to_string()), ("pids.max", processes.to_string())])?;
                let _ = write(&base.join(name).join("memory.swap.max"), "0");
            }
        }
        Ok(group)
    }
}
