//! The attack suite: hostile commands run through the real bubblewrap sandbox, each one
//! contained, bounded and turned into an ordinary outcome (never a hang or a crash).
//! Needs `bwrap`, `node` and `perl` (`.ci/run` installs them); fails loudly without them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::Path;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use wright_sandbox::{
    Bwrap, CommandOutcome, CommandRunner, CommandSpec, Policy, ProcessRunner, SANDBOX_UID, Workspace, WorkspaceLimits,
};

struct Sandbox {
    dir: tempfile::TempDir,
    runner: ProcessRunner,
    /// Whether a memory cgroup counts the command's memory (else an address-space limit).
    memory_cgroup: bool,
}

impl Sandbox {
    fn new() -> Self {
        Self::with(|_| {})
    }

    fn with(tune: impl FnOnce(&mut Policy)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut policy = Policy { writable: vec![dir.path().to_path_buf()], ..Policy::default() };
        tune(&mut policy);
        let bwrap = Bwrap::new(policy).unwrap_or_else(|e| panic!("the attack suite needs bubblewrap: {e}"));
        bwrap.probe().unwrap_or_else(|e| panic!("bubblewrap cannot sandbox here: {e}"));
        let memory_cgroup = bwrap.cgroups().is_some_and(|c| c.limits_memory());
        Self { dir, runner: ProcessRunner::new(Box::new(bwrap)), memory_cgroup }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    async fn sh(&self, script: &str) -> CommandOutcome {
        self.sh_for(script, Duration::from_secs(30)).await
    }

    async fn sh_for(&self, script: &str, timeout: Duration) -> CommandOutcome {
        let env = vec![
            ("PATH".to_string(), "/usr/local/bin:/usr/bin:/bin".to_string()),
            ("HOME".to_string(), self.root().display().to_string()),
        ];
        let mut spec = CommandSpec::new("sh", vec!["-c".into(), script.into()], self.root().to_path_buf(), env);
        spec.timeout = timeout;
        self.runner.run(spec, &(), &CancellationToken::new()).await.unwrap()
    }
}

fn out(o: &CommandOutcome) -> String {
    format!("{}{}", o.stdout.render(), o.stderr.render())
}

/// Processes whose command line contains `needle`, anywhere on the host.
fn host_processes_with(needle: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " ").contains(needle))
                .unwrap_or(false)
        })
        .count()
}

#[tokio::test]
async fn host_secrets_are_out_of_reach() {
    // SAFETY: test-only; set before any sandboxed command starts and only read by children.
    unsafe { std::env::set_var("WRIGHT_ATTACK_SECRET", "sk-attack-0123456789") };
    let s = Sandbox::new();
    let o = s
        .sh("cat /etc/shadow; cat /etc/passwd; cat /proc/1/environ; env; ls /root /home; \
             cat /proc/self/root/etc/shadow; ls /proc/self/root/; echo done")
        .await;
    let text = out(&o);
    assert!(text.contains("done"), "{text}");
    assert!(!text.contains("sk-attack"), "a host secret leaked: {text}");
    assert!(!text.contains("root:"), "account files leaked: {text}");
    // /proc/self/root is the sandbox's own root: system folders, the workspace, nothing else.
    let listing = s.sh("ls /proc/self/root/").await.stdout.render();
    for absent in ["root", "home", "work", "var", "srv"] {
        assert!(!listing.lines().any(|l| l == absent), "/{absent} is visible: {listing}");
    }
}

#[tokio::test]
async fn commands_run_unprivileged_and_cannot_change_the_system() {
    let s = Sandbox::new();
    let o =
        s.sh("id -u; touch /usr/evil 2>&1; mknod dev c 1 3 2>&1; ls /dev; cat /sys/kernel/notes 2>&1; echo end").await;
    let text = out(&o);
    let uid = text.lines().next().unwrap_or_default().trim().to_string();
    assert_ne!(uid, "0", "runs as root: {text}");
    if nix::unistd::geteuid().is_root() {
        assert_eq!(uid, SANDBOX_UID.to_string());
    }
    assert!(!Path::new("/usr/evil").exists());
    assert!(!s.root().join("dev").exists(), "mknod worked: {text}");
    assert!(!text.contains("sda") && !text.contains("nvme"), "block devices visible: {text}");
}

#[tokio::test]
async fn escapes_through_paths_symlinks_and_hardlinks_fail() {
    let s = Sandbox::new();
    let o = s
        .sh("cat ../../../../../etc/hostname; echo x > ../../../escaped; echo x > /tmp/private; \
             ln -s /etc/hostname sym; ln -s / rootlink; ln /usr/bin/sh hard 2>&1; ln /etc/hostname hard2 2>&1; true")
        .await;
    assert!(o.success(), "{}", out(&o));
    assert!(!Path::new("/escaped").exists() && !Path::new("/tmp/escaped").exists());
    assert!(!Path::new("/tmp/private").exists(), "the sandbox's /tmp is its own");
    assert!(!s.root().join("hard").exists() && !s.root().join("hard2").exists(), "hardlink out of the workspace");
    // The links the command left behind do not let the file tools out either.
    let ws = Workspace::open(s.root(), WorkspaceLimits::default()).unwrap();
    assert!(ws.read("sym").is_err());
    assert!(ws.read("rootlink/etc/hostname").is_err());
    assert!(ws.write("rootlink/tmp/planted", b"x").is_err());
    assert!(ws.read("../../etc/hostname").is_err());
    assert!(ws.read("/etc/hostname").is_err());
}

#[tokio::test]
async fn the_network_is_off_but_loopback_serves_the_app() {
    let s = Sandbox::new();
    let script = r#"
const http = require('node:http');
const net = require('node:net');
const srv = http.createServer((q, r) => r.end('local ok')).listen(0, '127.0.0.1', () => {
  http.get({ host: '127.0.0.1', port: srv.address().port }, (r) => {
    r.on('data', (d) => console.log(String(d)));
    r.on('end', () => {
      srv.close();
      const c = net.connect({ host: '1.1.1.1', port: 80, timeout: 3000 });
      c.on('connect', () => { console.log('OUTSIDE REACHED'); process.exit(0); });
      c.on('error', (e) => { console.log('outside blocked: ' + e.code); process.exit(0); });
      c.on('timeout', () => { console.log('outside blocked: timeout'); process.exit(0); });
    });
  });
});
"#;
    std::fs::write(s.root().join("net.js"), script).unwrap();
    let o = s.sh("node net.js").await;
    let text = out(&o);
    assert!(text.contains("local ok"), "{text}");
    assert!(text.contains("outside blocked"), "{text}");
    assert!(!text.contains("OUTSIDE REACHED"), "{text}");
}

#[tokio::test]
async fn a_fork_storm_is_bounded_and_cleaned_up() {
    let s = Sandbox::with(|p| p.limits.processes = 64);
    let started = Instant::now();
    let o = s.sh_for("storm() { storm | storm & }; storm; sleep 3; echo survived", Duration::from_secs(8)).await;
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    assert!(!o.success() || out(&o).contains("survived"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(host_processes_with("storm"), 0, "fork storm processes outlived the command");
}

#[tokio::test]
async fn a_detached_daemon_dies_with_its_command() {
    let s = Sandbox::new();
    let o = s.sh("setsid sh -c 'sleep 987654' > /dev/null 2>&1 & echo started").await;
    assert!(o.success(), "{}", out(&o));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(host_processes_with("sleep 987654"), 0, "a setsid daemon escaped the sandbox");
}

#[tokio::test]
async fn a_huge_file_stops_at_the_file_size_limit() {
    let s = Sandbox::with(|p| p.limits.file_size = 16 << 20);
    let o = s.sh("head -c 3000000000 /dev/zero > big; echo exit=$?").await;
    let size = std::fs::metadata(s.root().join("big")).map(|m| m.len()).unwrap_or(0);
    assert!(size <= 16 << 20, "wrote {size} bytes");
    assert!(!out(&o).contains("exit=0"), "{}", out(&o));
}

#[tokio::test]
async fn floods_of_output_are_captured_within_bounds() {
    let s = Sandbox::new();
    let o = s.sh("head -c 60000000 /dev/zero | tr '\\0' a").await;
    assert!(o.success());
    assert_eq!(o.stdout.total(), 60_000_000);
    assert!(o.stdout.render().len() < 64 * 1024);
}

#[tokio::test]
async fn an_infinite_loop_is_stopped_by_time_or_cpu() {
    let s = Sandbox::with(|p| p.limits.cpu_seconds = 1);
    let started = Instant::now();
    let o = s.sh_for("while :; do :; done", Duration::from_secs(15)).await;
    assert!(!o.success());
    assert!(!o.timed_out, "the CPU limit should stop it before the wall clock");
    assert!(started.elapsed() < Duration::from_secs(10));
    let o = Sandbox::new().sh_for("while :; do :; done", Duration::from_millis(500)).await;
    assert!(o.timed_out);
}

#[tokio::test]
async fn an_8_gib_allocation_is_stopped_at_the_memory_limit() {
    let s = Sandbox::with(|p| p.limits.memory = 512 << 20);
    // With a memory cgroup, 8 GiB of touched memory is stopped at 512 MiB. Without one only
    // the address space is bounded (16 GiB, for V8's WebAssembly reservations), so 24 GiB of
    // untouched buffers must fail instead.
    let script = if s.memory_cgroup {
        "node -e \"const b=[]; for (let i = 0; i < 64; i++) b.push(Buffer.allocUnsafe(128 * 1024 * 1024).fill(1)); console.log('ALLOCATED')\""
    } else {
        "node -e \"const b=[]; for (let i = 0; i < 192; i++) b.push(Buffer.allocUnsafe(128 * 1024 * 1024)); console.log('ALLOCATED')\""
    };
    let o = s.sh(script).await;
    let text = out(&o);
    assert!(!o.success(), "{text}");
    assert!(!text.contains("ALLOCATED"), "{text}");
    // Node itself still starts under the limit.
    let o = s.sh("node -e \"console.log(6 * 7)\"").await;
    assert_eq!(o.stdout.render().trim(), "42", "{}", out(&o));
}

#[tokio::test]
async fn seccomp_denies_ptrace_io_uring_and_namespaces() {
    let s = Sandbox::new();
    // perl's syscall() calls the raw number: -1 with ENOSYS means the filter said no.
    let script = format!(
        "perl -e 'print \"ptrace=\", syscall({}, 0, 0, 0, 0), \" $!\\n\"; \
                  print \"io_uring=\", syscall({}, 1, 0), \" $!\\n\"; \
                  print \"unshare=\", syscall({}, 0x10000000), \" $!\\n\";'",
        libc::SYS_ptrace,
        libc::SYS_io_uring_setup,
        libc::SYS_unshare
    );
    let o = s.sh(&script).await;
    let text = out(&o);
    for name in ["ptrace", "io_uring", "unshare"] {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name}: {text}"));
        assert!(line.starts_with(&format!("{name}=-1 Function not implemented")), "{line}");
    }
}

#[tokio::test]
async fn an_oversized_create_file_is_refused() {
    let s = Sandbox::new();
    let ws = Workspace::open(s.root(), WorkspaceLimits::default()).unwrap();
    let err = ws.write("huge.txt", &vec![b'a'; 5 * 1024 * 1024]).unwrap_err();
    assert!(err.to_string().contains("huge.txt"), "{err}");
    assert!(!s.root().join("huge.txt").exists());
}
