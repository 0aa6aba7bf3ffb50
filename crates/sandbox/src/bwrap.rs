//! Confinement with bubblewrap: each command sees a read-only system (`/usr` and the few `/etc`
//! files programs need), its workspace and scratch folders read-write, a private `/tmp`,
//! `/proc` and `/dev`, no network unless allowed, its own PID namespace (so nothing outlives
//! it, not even a `setsid` daemon), a seccomp filter, resource limits, and no privileges.
//!
//! When wright runs as root the command additionally drops to an unprivileged host identity
//! (uid/gid 65534) with `setpriv`: inside a user namespace that root creates, "nobody" maps
//! back to root and could read root's files. The writable folders are handed to that identity
//! before each command.

use crate::cgroup::Cgroups;
use crate::spec::{CommandSpec, Held, Isolation, RunError, find_program};
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The host identity sandboxed commands run as when wright is root.
pub const SANDBOX_UID: u32 = 65534;

/// Whether wright runs as root (and so must drop commands to [`SANDBOX_UID`]).
pub fn running_as_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Resource bounds of one sandboxed command (and everything it starts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of memory the command may use, all its processes together. Enforced by a memory
    /// cgroup where wright may create one; elsewhere only by a generous address-space limit
    /// (V8 reserves about 10 GiB of address space for WebAssembly, which Node's `fetch` uses).
    pub memory: u64,
    /// Largest file a process may write, in bytes.
    pub file_size: u64,
    pub open_files: u64,
    /// Processes the sandbox identity may have at once, beyond those it already has.
    pub processes: u64,
    /// CPU seconds per process.
    pub cpu_seconds: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self { memory: 2 << 30, file_size: 512 << 20, open_files: 1024, processes: 256, cpu_seconds: 600 }
    }
}

/// What a sandboxed command may see and use.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Whether commands reach the network (`--network allow`); loopback works either way.
    pub network: bool,
    pub limits: Limits,
    /// Folders mounted read-write at the same path: the workspace, the build's HOME and TMPDIR.
    pub writable: Vec<PathBuf>,
    /// Extra folders mounted read-only at the same path (a dependency cache, a toolchain
    /// installed outside `/usr`).
    pub read_only: Vec<PathBuf>,
    /// With the network off, a bridge to an egress proxy (bubblewrap only; the Landlock
    /// fallback has no network namespace to put it in).
    pub egress: Option<crate::egress::EgressBridge>,
}

/// Why bubblewrap cannot be used here.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Unavailable {
    #[error("bubblewrap (`bwrap`) is not installed; on Debian or Ubuntu: apt-get install bubblewrap")]
    NoBwrap,
    #[error("`{0}` is not installed (it is part of util-linux)")]
    NoTool(&'static str),
    #[error("bubblewrap is installed but cannot create a sandbox here: {0}")]
    Broken(String),
    #[error("{0}")]
    Seccomp(String),
}

/// The bubblewrap [`Isolation`].
#[derive(Debug, Clone)]
pub struct Bwrap {
    bwrap: PathBuf,
    /// Where per-command memory and process groups go, when wright may make them.
    cgroups: Option<Cgroups>,
    names: GroupNames,
    prlimit: PathBuf,
    /// Set when wright runs as root: the command drops to [`SANDBOX_UID`] through it.
    setpriv: Option<PathBuf>,
    policy: Policy,
    seccomp: Arc<Vec<u8>>,
    /// Whether Node is told to check WebAssembly bounds itself ([`node_takes_wasm_flag`]).
    wasm_flag: bool,
}

/// The smallest address-space limit: enough for V8's WebAssembly reservations.
const ADDRESS_SPACE_FLOOR: u64 = 16 << 30;

/// Joins the cgroups named by its first arguments, then becomes the sandbox.
const JOIN: &str =
    r#"n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@""#;

const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Top-level system folders: mounted read-only, or recreated as the symlinks they are on
/// merged-/usr systems.
pub(crate) const SYSTEM_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// The `/etc` files programs need to start, resolve names and verify TLS; nothing with
/// accounts or secrets in it.
pub(crate) const ETC_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/localtime",
    "/etc/mime.types",
    "/etc/host.conf",
    // Font configuration, so a browser check renders text.
    "/etc/fonts",
];

/// Added when the network is allowed.
pub(crate) const ETC_NETWORK: &[&str] = &["/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf"];

fn tool(name: &'static str) -> Result<PathBuf, Unavailable> {
    let env = vec![("PATH".to_string(), SYSTEM_PATH.to_string())];
    find_program(name, &env).ok_or(Unavailable::NoTool(name))
}

impl Bwrap {
    /// Finds bubblewrap and its helpers; [`Bwrap::probe`] tells whether it actually works.
    pub fn new(policy: Policy) -> Result<Self, Unavailable> {
        let bwrap = tool("bwrap").map_err(|_| Unavailable::NoBwrap)?;
        let prlimit = tool("prlimit")?;
        let setpriv = if running_as_root() { Some(tool("setpriv")?) } else { None };
        let seccomp = crate::seccomp::program_bytes().map_err(|e| Unavailable::Seccomp(e.to_string()))?;
        let cgroups = Cgroups::detect();
        Ok(Self {
            bwrap,
            wasm_flag: node_takes_wasm_flag(cgroups.as_ref()),
            cgroups,
            names: GroupNames::new(),
            prlimit,
            setpriv,
            policy,
            seccomp: Arc::new(seccomp),
        })
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Whether commands drop to [`SANDBOX_UID`] (wright runs as root).
    pub fn drops_root(&self) -> bool {
        self.setpriv.is_some()
    }

    pub fn bwrap_path(&self) -> &Path {
        &self.bwrap
    }

    /// The control groups commands get, if any.
    pub fn cgroups(&self) -> Option<&Cgroups> {
        self.cgroups.as_ref()
    }

    /// Runs `true` in a sandbox with this policy's shape; returns how long that took.
    pub fn probe(&self) -> Result<Duration, Unavailable> {
        let policy = Policy { writable: Vec::new(), egress: None, ..self.policy.clone() };
        let probe = Self { policy, ..self.clone() };
        probe_with(&probe).map_err(Unavailable::Broken)
    }

    /// A pipe holding the seccomp program, its read end inheritable by bwrap.
    fn seccomp_fd(&self) -> Result<OwnedFd, RunError> {
        let io = |e: std::io::Error| RunError::Isolation(format!("seccomp pipe: {e}"));
        let (reader, mut writer) = std::io::pipe().map_err(io)?;
        writer.write_all(&self.seccomp).map_err(io)?;
        drop(writer);
        let fd = OwnedFd::from(reader);
        nix::fcntl::fcntl(&fd, nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()))
            .map_err(|e| RunError::Isolation(format!("seccomp pipe: {e}")))?;
        Ok(fd)
    }

    fn args(&self, spec: &CommandSpec, program: &Path, seccomp_fd: i32) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        let mut push = |parts: &[&str]| a.extend(parts.iter().map(|s| s.to_string()));
        push(&["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]);
        push(&["--unshare-cgroup-try", "--hostname", "wright"]);
        if !self.policy.network {
            push(&["--unshare-net"]);
        }
        if self.setpriv.is_none() {
            // Unprivileged: a user namespace makes the mounts possible; no capabilities in it.
            push(&["--unshare-user", "--cap-drop", "ALL"]);
        }
        for dir in SYSTEM_DIRS {
            let p = Path::new(dir);
            match std::fs::read_link(p) {
                Ok(target) => push(&["--symlink", &target.to_string_lossy(), dir]),
                Err(_) if p.is_dir() => push(&["--ro-bind", dir, dir]),
                Err(_) => {}
            }
        }
        push(&["--perms", "0755", "--dir", "/etc"]);
        let etc = ETC_FILES.iter().chain(if self.policy.network { ETC_NETWORK } else { &[] });
        for f in etc {
            push(&["--ro-bind-try", f, f]);
        }
        // A private /tmp open to whoever runs inside (the sandbox user when wright is root): a
        // short folder for programs that must keep their own sockets there (Chromium's
        // process singleton refuses a socket path over 107 bytes, and TMPDIR can be long).
        push(&["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp", "--tmpfs", "/run"]);
        let bridge = self.policy.egress.as_ref().filter(|_| !self.policy.network);
        if let Some(b) = bridge {
            push(&b.mounts().iter().map(String::as_str).collect::<Vec<_>>());
        }
        // bwrap copies the modes of the host's parent folders when it creates mount points; a
        // 0700 parent (a temp dir, a home) would lock the sandbox user out of its own workspace.
        let mut parents: Vec<PathBuf> = Vec::new();
        for p in self.policy.read_only.iter().chain(&self.policy.writable) {
            for anc in p.ancestors().skip(1) {
                let system = SYSTEM_DIRS.iter().any(|d| anc.starts_with(d)) || anc == Path::new("/");
                if !system && !parents.iter().any(|q| q == anc) {
                    parents.push(anc.to_path_buf());
                }
            }
        }
        parents.sort_by_key(|p| p.components().count());
        for p in &parents {
            push(&["--perms", "0755", "--dir", &p.to_string_lossy()]);
        }
        let mut visible: Vec<PathBuf> = Vec::new();
        for p in &self.policy.read_only {
            push(&["--ro-bind-try", &p.to_string_lossy(), &p.to_string_lossy()]);
            visible.push(p.clone());
        }
        for p in &self.policy.writable {
            push(&["--bind", &p.to_string_lossy(), &p.to_string_lossy()]);
            visible.push(p.clone());
        }
        // A program outside the mounted folders (a toolchain under /root, say) is mounted
        // read-only by its folder so the command can start; so is the bridge's Node.js.
        for program in std::iter::once(program).chain(bridge.map(|b| b.node.as_path())) {
            if let Some(dir) = program.parent() {
                let system = SYSTEM_DIRS.iter().any(|d| program.starts_with(d));
                if !system && !visible.iter().any(|v| program.starts_with(v)) {
                    push(&["--ro-bind", &dir.to_string_lossy(), &dir.to_string_lossy()]);
                    visible.push(dir.to_path_buf());
                }
            }
        }
        push(&["--chdir", &spec.cwd.to_string_lossy()]);
        push(&["--seccomp", &seccomp_fd.to_string()]);
        push(&["--", &self.prlimit.to_string_lossy()]);
        let l = self.policy.limits;
        let processes = process_limit(&self.policy);
        let address_space = address_space(&self.policy, self.cgroups.as_ref()).filter(|_| !spec.reserves_address_space);
        a.push(format!("--as={}", address_space.map_or("unlimited".to_string(), |b| b.to_string())));
        let data = data_limit(&self.policy, self.cgroups.as_ref(), spec);
        a.push(format!("--data={}", data.map_or("unlimited".to_string(), |b| b.to_string())));
        a.push(format!("--fsize={}", l.file_size));
        a.push(format!("--nofile={}", l.open_files));
        a.push(format!("--nproc={processes}"));
        a.push(format!("--cpu={}", l.cpu_seconds));
        a.push("--core=0".into());
        a.push("--".into());
        if let Some(setpriv) = &self.setpriv {
            a.push(setpriv.to_string_lossy().into_owned());
            a.extend([
                format!("--reuid={SANDBOX_UID}"),
                format!("--regid={SANDBOX_UID}"),
                "--clear-groups".into(),
                "--inh-caps=-all".into(),
                "--bounding-set=-all".into(),
                "--no-new-privs".into(),
                "--".into(),
            ]);
        }
        if let Some(b) = bridge {
            a.extend(b.prefix());
        }
        a.push(program.to_string_lossy().into_owned());
        a.extend(spec.args.iter().cloned());
        a
    }
}

/// Node's flag that makes V8 check WebAssembly memory bounds in code instead of reserving
/// ~10 GiB of guard pages per instance: under an address-space limit a few instances (Node's
/// own `fetch` has one; Vitest loads several) exhaust it ("Cannot allocate Wasm memory").
const NODE_WASM_FLAG: &str = "--disable-wasm-trap-handler";

/// Whether commands need [`NODE_WASM_FLAG`] (memory is bounded by address space, not a memory
/// cgroup) and the host's `node` accepts it in NODE_OPTIONS (Node 20.15 and later; older ones
/// refuse to start with a flag they do not know, so it is asked once, not assumed).
pub(crate) fn node_takes_wasm_flag(cgroups: Option<&Cgroups>) -> bool {
    if cgroups.is_some_and(Cgroups::limits_memory) {
        return false;
    }
    std::process::Command::new("node")
        .args(["-e", "0"])
        .env("NODE_OPTIONS", NODE_WASM_FLAG)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Add [`NODE_WASM_FLAG`] to the command's NODE_OPTIONS, keeping what it had.
fn with_wasm_flag(env: &mut Vec<(String, String)>) {
    match env.iter_mut().find(|(k, _)| k == "NODE_OPTIONS") {
        Some((_, v)) if v.split_whitespace().any(|f| f == NODE_WASM_FLAG) => {}
        Some((_, v)) => *v = format!("{NODE_WASM_FLAG} {v}"),
        None => env.push(("NODE_OPTIONS".to_string(), NODE_WASM_FLAG.to_string())),
    }
}

/// The address-space limit: none needed when a memory cgroup counts real use.
pub(crate) fn address_space(policy: &Policy, cgroups: Option<&Cgroups>) -> Option<u64> {
    match cgroups {
        Some(c) if c.limits_memory() => None,
        _ => Some(policy.limits.memory.max(ADDRESS_SPACE_FLOOR)),
    }
}

/// RLIMIT_DATA for each process of a command where no memory cgroup counts them together: the
/// memory limit. It counts the private memory a process can write (heap, `mmap`ed buffers),
/// not what it merely reserves, so unlike RLIMIT_AS it bounds what Node and Chromium really
/// use while leaving V8's WebAssembly and pointer-cage reservations alone.
///
/// Measured with Debian's Chromium 156: under RLIMIT_AS it dies at start below about 100 GiB
/// (its 32 GiB and 16 GiB `PROT_NONE` reservations for its allocator pools and Oilpan's heap
/// cage fail: SIGTRAP at 16–40 GiB, "Oilpan: CagedHeap reservation" at 64–80 GiB), and from
/// 100 GiB up the limit bounds nothing. Under RLIMIT_DATA it starts and renders even at
/// 512 MiB, and sizes V8's heap from the limit. But each renderer keeps 600–700 MB of
/// writable mappings it never touches (VmData 620–730 MB, 50 MB resident, when idle), so a
/// command that [reserves address space](CommandSpec::reserves_address_space) gets 1 GiB more:
/// at the plain limit a page's `Float64Array`s failed ("Array buffer allocation failed") at
/// 1.4 GiB resident, before the check's watchdog (three quarters of the limit, counting
/// resident memory of all its processes) could name the page. Per process only: a program of
/// several processes is bounded as a whole by [`CommandSpec::memory_watch`].
pub(crate) fn data_limit(policy: &Policy, cgroups: Option<&Cgroups>, spec: &CommandSpec) -> Option<u64> {
    match cgroups {
        Some(c) if c.limits_memory() => None,
        _ if spec.reserves_address_space => Some(policy.limits.memory + UNTOUCHED_MAPPINGS),
        _ => Some(policy.limits.memory),
    }
}

/// Headroom of RLIMIT_DATA for a program's writable mappings that it never touches (see
/// [`data_limit`]).
const UNTOUCHED_MAPPINGS: u64 = 1 << 30;

/// RLIMIT_NPROC for a command: it counts every process of the identity the command runs as
/// (65534 when wright is root, else the user), so the limit is set above what it has now.
pub(crate) fn process_limit(policy: &Policy) -> u64 {
    let uid = if running_as_root() { SANDBOX_UID } else { nix::unistd::getuid().as_raw() };
    policy.limits.processes + processes_of(uid)
}

/// How many processes `uid` has now.
fn processes_of(uid: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    let mut n = 0;
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        use std::os::unix::fs::MetadataExt;
        if e.metadata().map(|m| m.uid() == uid).unwrap_or(false) {
            n += 1;
        }
    }
    n
}

/// Gives `root` and everything in it to the sandbox identity, so a command that runs as it
/// can write there. Symlinks themselves change owner; their targets never do.
fn hand_over(root: &Path) -> std::io::Result<()> {
    chown_all(root, SANDBOX_UID, SANDBOX_UID)
}

/// Give `root` and all beneath it to `uid`/`gid` through `wright-beneath`: the tree is walked
/// by descriptors, so a folder that code in the sandbox swaps for a link mid-walk is never
/// entered (a walk by paths would follow it and give away files outside the project).
fn chown_all(root: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    wright_beneath::Dir::open(root).and_then(|d| d.chown_all(uid, gid)).map_err(std::io::Error::other)
}

/// Gives `root` and everything in it back to `uid`/`gid` after commands ran in it as the
/// sandbox identity: an existing project (`wright task run` as root) is only lent to the
/// sandbox, and its owner gets it back. Symlinks change owner themselves, never their targets.
///
/// A shared folder is refused: it was never handed over (see [`shared_folder`]), and giving
/// it "back" would give every other program's files in it to `uid` (a run with its project at
/// `/home` would make root own every home).
pub fn give_back(root: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    if shared_folder(root) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is a shared folder: it was never lent to the sandbox user", root.display()),
        ));
    }
    chown_all(root, uid, gid)
}

/// Names per-command cgroups apart: across the sandboxes of this process and across processes.
#[derive(Debug, Clone)]
pub(crate) struct GroupNames {
    seq: Arc<AtomicU64>,
    instance: u64,
}

impl GroupNames {
    pub(crate) fn new() -> Self {
        use std::hash::{BuildHasher, Hasher};
        let instance = std::collections::hash_map::RandomState::new().build_hasher().finish();
        Self { seq: Arc::new(AtomicU64::new(0)), instance }
    }

    fn next(&self) -> String {
        format!("wright-{}-{:x}-{}", std::process::id(), self.instance, self.seq.fetch_add(1, Ordering::Relaxed))
    }
}

/// Folders that hold other programs' files: the file system's root, the system's folders, the
/// shared temp folders and homes. Handing one over would give every file in it to the sandbox
/// identity (a `wright doctor` that once handed over `/tmp` broke every other program using it),
/// and giving one back would give them all to its owner: the engine asks this before it records
/// a project as lent, so the two sides agree on what is never lent.
pub fn shared_folder(dir: &Path) -> bool {
    const SHARED: &[&str] = &[
        "/tmp", "/var", "/var/tmp", "/etc", "/home", "/root", "/srv", "/opt", "/mnt", "/media", "/run", "/dev",
        "/proc", "/sys", "/boot",
    ];
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let dir = real(dir);
    let is = |other: &Path| dir == real(other);
    dir.parent().is_none()
        || SYSTEM_DIRS.iter().any(|d| dir.starts_with(d))
        || SHARED.iter().any(|d| is(Path::new(d)))
        || is(&std::env::temp_dir())
        || std::env::var_os("HOME").is_some_and(|h| is(Path::new(&h)))
}

/// The sandbox user gets the writable folders (as root; a normal user already owns them).
/// A shared folder is refused, whatever the policy says: a build gets folders of its own.
pub(crate) fn hand_over_writable(policy: &Policy) -> Result<(), RunError> {
    if running_as_root() {
        if let Some(dir) = policy.writable.iter().find(|d| shared_folder(d)) {
            return Err(RunError::Isolation(format!(
                "{} is a shared folder: handing it to the sandbox user would change the owner of every \
                 file in it; give the build a folder of its own (e.g. a new folder inside it)",
                dir.display()
            )));
        }
        for dir in &policy.writable {
            hand_over(dir).map_err(|e| {
                RunError::Isolation(format!("could not hand {} to the sandbox user: {e}", dir.display()))
            })?;
        }
    }
    Ok(())
}

/// Sets `spec` to run `launcher args…`, inside a fresh cgroup with the policy's memory and
/// process limits when wright may make one (the group is removed after the command).
pub(crate) fn launch(
    mut spec: CommandSpec,
    policy: &Policy,
    cgroups: Option<&Cgroups>,
    names: &GroupNames,
    wasm_flag: bool,
    launcher: String,
    mut args: Vec<String>,
) -> Result<CommandSpec, RunError> {
    if wasm_flag && !spec.reserves_address_space && address_space(policy, cgroups).is_some() {
        with_wasm_flag(&mut spec.env);
    }
    spec.program = launcher;
    if let Some(cgroups) = cgroups {
        let l = policy.limits;
        let group = cgroups
            .create(&names.next(), l.memory, l.processes)
            .map_err(|e| RunError::Isolation(format!("could not make the command's cgroup: {e}")))?;
        let mut joined = vec!["-c".to_string(), JOIN.to_string(), "wright-join".into(), group.procs.len().to_string()];
        joined.extend(group.procs.iter().map(|p| p.to_string_lossy().into_owned()));
        joined.push(std::mem::take(&mut spec.program));
        joined.append(&mut args);
        args = joined;
        spec.program = "/bin/sh".into();
        spec.held.push(Held(Arc::new(group)));
    }
    spec.args = args;
    Ok(spec)
}

/// Runs `true` through `isolation` and says how long that took, or why it failed.
pub(crate) fn probe_with(isolation: &dyn Isolation) -> Result<Duration, String> {
    let spec = CommandSpec::new("true", Vec::new(), "/".into(), vec![("PATH".into(), SYSTEM_PATH.into())]);
    let spec = isolation.wrap(spec).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let out = std::process::Command::new(&spec.program)
        .args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    drop(spec);
    if out.status.success() {
        Ok(started.elapsed())
    } else {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        Err(if why.is_empty() { format!("exit status {}", out.status) } else { why })
    }
}

impl Isolation for Bwrap {
    fn name(&self) -> &str {
        "bwrap"
    }

    fn wrap(&self, mut spec: CommandSpec) -> Result<CommandSpec, RunError> {
        let program = find_program(&spec.program, &spec.env)
            .ok_or_else(|| RunError::NotFound { program: spec.program.clone() })?;
        hand_over_writable(&self.policy)?;
        let fd = self.seccomp_fd()?;
        let args = self.args(&spec, &program, fd.as_raw_fd());
        spec.inherit.push(Arc::new(fd));
        let bwrap = self.bwrap.to_string_lossy().into_owned();
        launch(spec, &self.policy, self.cgroups.as_ref(), &self.names, self.wasm_flag, bwrap, args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sandbox as [`Bwrap::new`] makes it, without needing the tools on this machine.
    fn fake(policy: Policy) -> Bwrap {
        Bwrap {
            bwrap: "/usr/bin/bwrap".into(),
            cgroups: None,
            names: GroupNames::new(),
            prlimit: "/usr/bin/prlimit".into(),
            setpriv: None,
            policy,
            seccomp: Arc::new(Vec::new()),
            wasm_flag: false,
        }
    }

    #[test]
    fn node_is_told_to_check_wasm_bounds_only_under_an_address_space_limit() {
        let spec = || {
            CommandSpec::new("node", vec![], "/tmp".into(), vec![("NODE_OPTIONS".into(), "--test-reporter=tap".into())])
        };
        let policy = Policy::default();
        let names = GroupNames::new();
        let opts = |s: &CommandSpec| s.env.iter().find(|(k, _)| k == "NODE_OPTIONS").map(|(_, v)| v.clone());
        // No memory cgroup: the limit is by address space, so the flag goes first, kept once.
        let s = launch(spec(), &policy, None, &names, true, "bwrap".into(), vec![]).unwrap();
        assert_eq!(opts(&s).as_deref(), Some("--disable-wasm-trap-handler --test-reporter=tap"));
        let again = launch(s, &policy, None, &names, true, "bwrap".into(), vec![]).unwrap();
        assert_eq!(opts(&again).as_deref(), Some("--disable-wasm-trap-handler --test-reporter=tap"));
        let mut bare = CommandSpec::new("node", vec![], "/tmp".into(), vec![]);
        with_wasm_flag(&mut bare.env);
        assert_eq!(opts(&bare).as_deref(), Some("--disable-wasm-trap-handler"));
        // A node that does not know the flag, or a program with no address-space limit, is left alone.
        let s = launch(spec(), &policy, None, &names, false, "bwrap".into(), vec![]).unwrap();
        assert_eq!(opts(&s).as_deref(), Some("--test-reporter=tap"));
        let mut browser = spec();
        browser.reserves_address_space = true;
        let s = launch(browser, &policy, None, &names, true, "bwrap".into(), vec![]).unwrap();
        assert_eq!(opts(&s).as_deref(), Some("--test-reporter=tap"));
    }

    #[test]
    fn the_command_line_confines_by_default() {
        let ws = PathBuf::from("/tmp/ws-example");
        let b = fake(Policy { writable: vec![ws.clone()], ..Policy::default() });
        let spec = CommandSpec::new(
            "sh",
            vec!["-c".into(), "true".into()],
            ws.clone(),
            vec![("PATH".into(), SYSTEM_PATH.into())],
        );
        let a = b.args(&spec, Path::new("/usr/bin/sh"), 9);
        let joined = a.join(" ");
        for want in ["--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session", "--seccomp 9"] {
            assert!(joined.contains(want), "{want} missing from {joined}");
        }
        assert!(joined.contains("--bind /tmp/ws-example /tmp/ws-example"));
        assert!(!joined.contains("/etc/resolv.conf"), "no name resolution without network");
        assert!(joined.ends_with("/usr/bin/sh -c true"));
        let tail = &a[a.iter().position(|s| s == "--").unwrap()..];
        assert!(tail.iter().any(|s| s.starts_with("--as=")), "limits come before the command");
    }

    #[test]
    fn a_browser_gets_no_address_space_limit_and_every_command_a_private_open_tmp() {
        let ws = PathBuf::from("/tmp/ws-example");
        let b = fake(Policy { writable: vec![ws.clone()], ..Policy::default() });
        let mut spec = CommandSpec::new("chromium", vec![], ws, vec![]);
        let as_limit = |a: &[String]| a.iter().find(|s| s.starts_with("--as=")).cloned().unwrap();
        let no_cgroup = format!("--as={}", Policy::default().limits.memory.max(ADDRESS_SPACE_FLOOR));
        assert_eq!(as_limit(&b.args(&spec, Path::new("/usr/bin/chromium"), 9)), no_cgroup);
        spec.reserves_address_space = true;
        let a = b.args(&spec, Path::new("/usr/bin/chromium"), 9);
        assert_eq!(as_limit(&a), "--as=unlimited");
        assert!(a.join(" ").contains("--perms 1777 --tmpfs /tmp"), "{a:?}");
    }

    #[test]
    fn shared_folders_are_never_handed_to_the_sandbox_user() {
        for d in ["/", "/tmp", "/tmp/", "/usr", "/usr/local/lib", "/home", "/root", "/var/tmp", "/etc"] {
            assert!(shared_folder(Path::new(d)), "{d}");
        }
        assert!(shared_folder(&std::env::temp_dir()));
        if let Some(home) = std::env::var_os("HOME") {
            assert!(shared_folder(Path::new(&home)));
        }
        // A build's own folders, even inside the shared ones, are its to hand over.
        let own = tempfile::tempdir().unwrap();
        assert!(!shared_folder(own.path()));
        assert!(!shared_folder(&own.path().join("workspace")));
        assert!(!shared_folder(Path::new("/library/ws")), "component-wise, not by prefix");
    }

    #[test]
    fn a_shared_folder_is_never_given_back() {
        // A folder of this test's own inside /usr is shared (a system folder) yet harmless to
        // touch: were it chowned, only the test's file would change owner.
        let Ok(dir) = tempfile::Builder::new().prefix("wright-give-back-").tempdir_in("/usr/local") else {
            return eprintln!("skipped: /usr/local is not writable here (CI runs as root)");
        };
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        use std::os::unix::fs::MetadataExt;
        let before = std::fs::metadata(&file).unwrap().uid();
        let to = before.wrapping_add(4242);
        let err = give_back(dir.path(), to, to).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
        assert_eq!(std::fs::metadata(&file).unwrap().uid(), before);
    }

    #[test]
    fn network_allowed_shares_it_and_adds_resolver_files() {
        let b = fake(Policy { network: true, ..Policy::default() });
        let spec = CommandSpec::new("true", vec![], "/".into(), vec![]);
        let joined = b.args(&spec, Path::new("/usr/bin/true"), 3).join(" ");
        assert!(!joined.contains("--unshare-net"));
        assert!(joined.contains("/etc/resolv.conf"));
    }

    #[test]
    fn a_program_outside_the_system_is_mounted_by_its_folder() {
        let b = fake(Policy::default());
        let spec = CommandSpec::new("tool", vec![], "/".into(), vec![]);
        let joined = b.args(&spec, Path::new("/opt2/tools/bin/tool"), 3).join(" ");
        assert!(joined.contains("--ro-bind /opt2/tools/bin /opt2/tools/bin"));
    }
}
