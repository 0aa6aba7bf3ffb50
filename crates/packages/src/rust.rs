//! Rust (cargo) dependencies: `Cargo.toml` checked ([`check`]), the crates vendored on the
//! host with `cargo vendor` from clean manifests wright wrote, and cargo in the sandbox pointed
//! at the vendored entry, offline.
//!
//! Inside the sandbox cargo runs from the host toolchain's sysroot (rustup's `cargo` is a proxy
//! that needs `~/.rustup`, which the sandbox does not see): [`toolchain_dirs`] names the folder
//! the sandbox mounts read-only, and [`Prepared::env`] puts its `bin` first on `PATH`. Build
//! scripts (`build.rs`) of the project and of its crates run only there, under the sandbox's
//! limits: `cargo vendor` on the host only downloads and unpacks sources.

mod check;
#[cfg(test)]
mod tests;
mod toml_out;

use crate::cache;
use crate::types::{Ecosystem, PackagesError, Prepared, Settings, io_err, sandbox_home};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;
use wright_beneath::Dir;
use wright_sandbox::{CommandRunner, CommandSpec, ProcessRunner, RunError};

/// Changes whenever what an entry holds or how it is keyed changes.
const KEY_VERSION: &str = "rust-1";
/// The name of the vendored source in the sandbox's cargo configuration.
const VENDORED: &str = "wright-vendored";
/// Folders under which a toolchain is already visible in the sandbox (its read-only system).
const SYSTEM: &[&str] = &["/usr", "/bin", "/lib", "/lib64"];

pub(crate) async fn prepare(
    project: &Dir,
    settings: &Settings,
    sandbox_env: &[(String, String)],
    cancel: &CancellationToken,
) -> Result<Prepared, PackagesError> {
    // Before any host tool: a refused manifest never reaches one.
    let checked = check::check(project)?;
    let home = sandbox_home(sandbox_env)?;
    // rustc and cargo come together: without the one the other is missing too.
    let rustc = |args: &'static [&'static str]| async move {
        host(settings, "rustc", args, Path::new("/"), cancel).await.map_err(|e| match e {
            PackagesError::Missing(_) => PackagesError::Missing("cargo"),
            other => other,
        })
    };
    let rustc_version = rustc(&["-vV"]).await?;
    let sysroot = PathBuf::from(rustc(&["--print", "sysroot"]).await?.trim());
    let (key, hit) = choose(&settings.cache_root, &checked, &rustc_version);
    let entry = cache::entry(&settings.cache_root, Ecosystem::Rust, &key);
    if hit {
        cache::touch(&entry);
    } else {
        fill(&checked, settings, &key, &entry, cancel).await?;
    }
    let cargo_home = home.join(".cargo");
    let text = |p: &Path| p.display().to_string();
    Ok(Prepared {
        key,
        packages: checked.crates.clone(),
        fetched: !hit,
        bytes: cache::size(&entry),
        env: vec![
            ("PATH".into(), text(&sysroot.join("bin"))),
            ("CARGO_HOME".into(), text(&cargo_home)),
            ("CARGO_NET_OFFLINE".into(), "true".into()),
            // In the build's home: a fix attempt rebuilds only what changed, and build products
            // never land in the published project.
            ("CARGO_TARGET_DIR".into(), text(&home.join("target"))),
        ],
        // cargo reads source replacement from a configuration file only (no variable for it).
        setup: vec![
            vec!["mkdir".into(), "-p".into(), text(&cargo_home)],
            vec!["cp".into(), text(&entry.join("cargo-config.toml")), text(&cargo_home.join("config.toml"))],
        ],
    })
}

/// The folders the sandbox must mount read-only for cargo and rustc to run: the host
/// toolchain's sysroot (`rustc --print sysroot` with `host_env`), unless it is part of the
/// system the sandbox already shows. Empty when there is no Rust toolchain.
pub fn toolchain_dirs(host_env: &[(String, String)]) -> Vec<PathBuf> {
    let out = std::process::Command::new("rustc")
        .args(["--print", "sysroot"])
        // Away from any `rust-toolchain.toml` (rustup would obey it, even install what it names).
        .current_dir("/")
        .env_clear()
        .envs(host_env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let Ok(out) = out else { return Vec::new() };
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let visible = sysroot.parent().is_none() || SYSTEM.iter().any(|s| sysroot.starts_with(s));
    if !out.status.success() || !sysroot.is_absolute() || visible {
        return Vec::new();
    }
    vec![sysroot]
}

/// The entry for a project, and whether it is already in the cache.
///
/// The first `cargo test` in the sandbox writes `Cargo.lock` into the project, so keying on the
/// lockfile's bytes would fetch every project twice. The key is the declarations' (clean
/// manifests and compiler) while the entry holds every version the project's lockfile pins
/// (vendored folders are named `name-version`); a lockfile that pins others gets an entry of
/// its own, keyed by those pins too.
fn choose(cache_root: &Path, checked: &check::Checked, rustc_version: &str) -> (String, bool) {
    let base = key(checked, rustc_version, None);
    let entry = cache::entry(cache_root, Ecosystem::Rust, &base);
    let holds_pins = checked.pinned.iter().all(|p| entry.join("vendor").join(p).is_dir());
    if entry.is_dir() && holds_pins {
        return (base, true);
    }
    if checked.pinned.is_empty() || !entry.is_dir() {
        return (base, false);
    }
    let pinned = key(checked, rustc_version, Some(&checked.pinned));
    let hit = cache::entry(cache_root, Ecosystem::Rust, &pinned).is_dir();
    (pinned, hit)
}

/// SHA-256 of what decides an entry: the clean manifests, the compiler, and the lockfile's
/// pinned registry versions when they are part of it.
fn key(checked: &check::Checked, rustc_version: &str, pins: Option<&[String]>) -> String {
    let mut h = Sha256::new();
    let mut part = |label: &str, bytes: &[u8]| {
        h.update(label.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    part("version", KEY_VERSION.as_bytes());
    for (dir, text) in &checked.manifests {
        part("manifest", dir.as_bytes());
        part("text", text.as_bytes());
    }
    part("rustc", rustc_version.as_bytes());
    for pin in pins.unwrap_or_default() {
        part("pin", pin.as_bytes());
    }
    let digest = h.finalize();
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Vendor the checked crates into a staging folder and publish it as `entry`.
async fn fill(
    checked: &check::Checked,
    settings: &Settings,
    key: &str,
    entry: &Path,
    cancel: &CancellationToken,
) -> Result<(), PackagesError> {
    let staging = cache::staging(&settings.cache_root, Ecosystem::Rust, key)?;
    let filled = vendor(checked, settings, &staging, entry, cancel).await;
    match filled {
        Ok(()) => cache::publish(&staging, entry),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(e)
        }
    }
}

async fn vendor(
    checked: &check::Checked,
    settings: &Settings,
    staging: &Path,
    entry: &Path,
    cancel: &CancellationToken,
) -> Result<(), PackagesError> {
    let work = staging.join("project");
    for (dir, text) in &checked.manifests {
        let folder = if dir.is_empty() { work.clone() } else { work.join(dir) };
        std::fs::create_dir_all(folder.join("src")).map_err(io_err("creating", &folder))?;
        let manifest = folder.join("Cargo.toml");
        std::fs::write(&manifest, text).map_err(io_err("writing", &manifest))?;
        if checked.packages_at.contains(dir) {
            let lib = folder.join("src/lib.rs");
            std::fs::write(&lib, "").map_err(io_err("writing", &lib))?;
        }
    }
    if let Some(lock) = &checked.lock {
        let path = work.join("Cargo.lock");
        std::fs::write(&path, lock).map_err(io_err("writing", &path))?;
    }
    let vendored = staging.join("vendor");
    if checked.crates.is_empty() {
        // Nothing from the registry: no host tool runs.
        std::fs::create_dir_all(&vendored).map_err(io_err("creating", &vendored))?;
    } else {
        let manifest = work.join("Cargo.toml").display().to_string();
        let target = vendored.display().to_string();
        // `--respect-source-config`: the host's own configuration (a mirror) applies. The
        // staging folder lies in the cache, so no project's `.cargo/config.toml` is above it.
        let args = ["vendor", "--versioned-dirs", "--respect-source-config", "--manifest-path", &manifest, &target];
        let out = host_run(settings, "cargo", &args, &work, cancel).await?;
        if out.code != Some(0) {
            return Err(explain(&out.stderr));
        }
        let lock = work.join("Cargo.lock");
        let kept = staging.join("Cargo.lock");
        std::fs::copy(&lock, &kept).map_err(io_err("keeping", &lock))?;
    }
    let config = format!(
        "# Written by wright: crates come from the vendored entry, never the network.\n\
         [source.crates-io]\nreplace-with = \"{VENDORED}\"\n\n[source.{VENDORED}]\ndirectory = {}\n\n\
         [net]\noffline = true\n",
        toml_out::inline(&toml::Value::String(entry.join("vendor").display().to_string()))
    );
    let path = staging.join("cargo-config.toml");
    std::fs::write(&path, config).map_err(io_err("writing", &path))
}

/// cargo's failure in plain words.
fn explain(stderr: &str) -> PackagesError {
    let tail: String = {
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    };
    let network = [
        "Couldn't resolve host",
        "failed to connect",
        "network failure",
        "spurious network error",
        "Connection refused",
        "timed out",
        "SSL connect error",
        "failed to download from",
    ];
    if let Some(line) = stderr.lines().find(|l| network.iter().any(|n| l.contains(n))) {
        return PackagesError::Unreachable(line.trim().trim_start_matches("error: ").to_string());
    }
    let quoted = |line: &str| line.split('`').nth(1).map(str::to_string);
    if let Some(name) = stderr.lines().find(|l| l.contains("no matching package named")).and_then(quoted) {
        return PackagesError::Fetch {
            tool: "cargo",
            output: format!("the crate `{name}` does not exist in the registry (check its name)\n{tail}"),
        };
    }
    if let Some(req) =
        stderr.lines().find(|l| l.contains("failed to select a version for the requirement")).and_then(quoted)
    {
        return PackagesError::Fetch {
            tool: "cargo",
            output: format!("no published version matches `{req}` (ask for a version that exists)\n{tail}"),
        };
    }
    PackagesError::Fetch { tool: "cargo", output: tail }
}

/// What a host command printed.
struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Run `program` on the host with the host's environment, in `cwd`, bounded by the fetch
/// timeout and the build's cancellation.
async fn host_run(
    settings: &Settings,
    program: &'static str,
    args: &[&str],
    cwd: &Path,
    cancel: &CancellationToken,
) -> Result<Output, PackagesError> {
    let mut spec = CommandSpec::new(
        program,
        args.iter().map(|a| a.to_string()).collect(),
        cwd.to_path_buf(),
        settings.host_env.clone(),
    );
    spec.timeout = settings.fetch_timeout;
    spec.capture_head = 16 * 1024;
    spec.capture_tail = 64 * 1024;
    let out = ProcessRunner::default().run(spec, &(), cancel).await.map_err(|e| match e {
        RunError::NotFound { .. } => PackagesError::Missing(program),
        other => PackagesError::Io { op: "starting", path: program.to_string(), message: other.to_string() },
    })?;
    if out.cancelled {
        return Err(PackagesError::Cancelled);
    }
    if out.timed_out {
        return Err(PackagesError::Timeout(program, settings.fetch_timeout.as_secs()));
    }
    Ok(Output { code: out.exit_code, stdout: out.stdout.render(), stderr: out.stderr.render() })
}

/// A host command's standard output, or why it failed.
async fn host(
    settings: &Settings,
    program: &'static str,
    args: &[&str],
    cwd: &Path,
    cancel: &CancellationToken,
) -> Result<String, PackagesError> {
    let out = host_run(settings, program, args, cwd, cancel).await?;
    if out.code != Some(0) {
        return Err(PackagesError::Fetch { tool: program, output: out.stderr });
    }
    Ok(out.stdout)
}
