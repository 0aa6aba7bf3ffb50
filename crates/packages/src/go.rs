//! Go modules: `go.mod` (and `go.sum`) checked, the modules downloaded on the host by the
//! host's `go mod download` into a module download cache, and `go` inside the sandbox pointed
//! at that cache as its module proxy (`GOPROXY=file://…`), so `go build`/`go test` work with
//! the network off.
//!
//! The host's `go` never runs in the project: it reads a clean `go.mod` of wright's making in a
//! staging folder under the cache ([`gomod::GoMod::clean`]), with `GOTOOLCHAIN=local` (never a
//! toolchain download) and `GOWORK=off`. The entry keeps only `mod/cache/download` (the proxy
//! layout); the sandbox extracts modules into the build's own module cache under its HOME.

mod fetch;
mod gomod;

use crate::cache;
use crate::types::{Ecosystem, PackagesError, Prepared, Refusal, Settings, sandbox_home};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;
use wright_beneath::Dir;

/// Bumped when what an entry holds changes, so old entries are not reused.
const KEY_VERSION: u32 = 1;
/// The placeholder module name of the `go.mod` the host's `go` reads.
const FETCH_MODULE: &str = "wright.invalid/fetch";
/// Larger manifests are refused rather than read.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;
/// Where an entry keeps the downloaded modules, in the module proxy layout.
const DOWNLOAD_DIR: &str = "mod/cache/download";

pub(crate) async fn prepare(
    project: &Dir,
    settings: &Settings,
    sandbox_env: &[(String, String)],
    cancel: &CancellationToken,
) -> Result<Prepared, PackagesError> {
    let checked = check(project)?;
    let toolchain = Toolchain::find(&settings.host_env)?;
    let version = toolchain.version(&settings.host_env, cancel).await?;
    if let Some(refusal) = too_new(&checked.module, &version) {
        return Err(PackagesError::Refused(vec![refusal]));
    }
    let key = key(&checked, &version);
    let entry = cache::entry(&settings.cache_root, Ecosystem::Go, &key);
    let fetched = if entry.is_dir() {
        cache::touch(&entry);
        false
    } else {
        let staging = cache::staging(&settings.cache_root, Ecosystem::Go, &key)?;
        let filled = fill(&staging, &checked, &toolchain, settings, cancel).await;
        if let Err(e) = filled {
            cache::remove_tree(&staging);
            return Err(e);
        }
        cache::publish(&staging, &entry)?;
        true
    };
    Ok(Prepared {
        key,
        packages: checked.module.requires.iter().map(|(p, v)| format!("{p}@{v}")).collect(),
        fetched,
        bytes: cache::size(&entry),
        env: sandbox_env_for(&entry, &toolchain, sandbox_env)?,
        setup: Vec::new(),
    })
}

/// What passed the checks: the project's `go.mod`, its `go.sum` lines, and the `go.mod` of
/// each folder that replaces a module (relative folder, checked file).
#[derive(Debug)]
struct Checked {
    module: gomod::GoMod,
    sum: Vec<String>,
    local: Vec<(String, gomod::GoMod)>,
}

/// Read and check everything the host's `go` will see, through the no-follow handle; every
/// problem at once.
fn check(project: &Dir) -> Result<Checked, PackagesError> {
    let mut refusals = Vec::new();
    if project.meta("go.work").is_ok() {
        refusals.push(Refusal {
            file: "go.work".into(),
            spec: "go.work".into(),
            reason: "is a Go workspace file, which makes `go` build from folders wright did not check; remove it \
                     (a project is one module, with `replace … => ./folder` for local modules)"
                .into(),
        });
    }
    let text = read(project, "go.mod")?;
    let (module, found) = gomod::parse(&text, "go.mod");
    refusals.extend(found);
    let sum = if project.meta("go.sum").is_ok() {
        let (lines, found) = gomod::parse_sum(&read(project, "go.sum")?);
        refusals.extend(found);
        lines
    } else {
        Vec::new()
    };
    let mut local = Vec::new();
    for r in &module.replaces {
        let gomod::Target::Local(dir) = &r.to else { continue };
        let file = format!("{dir}/go.mod");
        match project.read(&file) {
            Ok(bytes) => {
                let (m, found) = gomod::parse(&String::from_utf8_lossy(&bytes), &file);
                // A replacement's own `replace` lines are ignored by go: only its requirements count.
                refusals.extend(found);
                local.push((dir.clone(), m));
            }
            Err(e) => refusals.push(Refusal {
                file: "go.mod".into(),
                spec: format!("replace {} => ./{dir}", r.from),
                reason: format!("replaces a module with a folder that has no readable go.mod ({e})"),
            }),
        }
    }
    if refusals.is_empty() { Ok(Checked { module, sum, local }) } else { Err(PackagesError::Refused(refusals)) }
}

fn read(project: &Dir, file: &str) -> Result<String, PackagesError> {
    let bad = |message: String| PackagesError::BadManifest { file: file.to_string(), message };
    let meta = project.meta(file).map_err(|e| bad(e.to_string()))?;
    if meta.len > MAX_MANIFEST_BYTES {
        return Err(bad(format!("it is larger than {MAX_MANIFEST_BYTES} bytes")));
    }
    let bytes = project.read(file).map_err(|e| bad(e.to_string()))?;
    String::from_utf8(bytes).map_err(|_| bad("it is not UTF-8 text".to_string()))
}

/// The `go` line asks for a newer Go than this machine's: a newer `go` would fetch a toolchain
/// for it, and this one would fail to build it.
fn too_new(module: &gomod::GoMod, machine: &str) -> Option<Refusal> {
    let wanted = module.go.as_deref()?;
    let (want, have) = (gomod::go_version(wanted)?, gomod::go_version(machine)?);
    (want > have).then(|| Refusal {
        file: "go.mod".into(),
        spec: format!("go {wanted}"),
        reason: format!(
            "asks for Go {wanted}, newer than this machine's {machine} (go would try to download a newer \
             toolchain, which wright does not allow); write `go {}.{}`",
            have.0, have.1
        ),
    })
}

/// SHA-256 of the clean `go.mod`, the replacing folders' `go.mod`s, the `go.sum` lines and
/// the Go version, with [`KEY_VERSION`].
fn key(checked: &Checked, go_version: &str) -> String {
    let mut h = Sha256::new();
    h.update(checked.module.clean(FETCH_MODULE));
    for (dir, m) in &checked.local {
        h.update(format!("\n--local {dir}--\n"));
        h.update(local_go_mod(m));
    }
    h.update("\n--go.sum--\n");
    h.update(checked.sum.join("\n"));
    h.update(format!("\n--go--\n{go_version}\n"));
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("v{KEY_VERSION}-{}", &hex[..40])
}

/// The `go.mod` put in place of a replacing folder's: its module name and requirements only.
fn local_go_mod(m: &gomod::GoMod) -> String {
    let name = m.module.clone().unwrap_or_else(|| FETCH_MODULE.to_string());
    gomod::GoMod { replaces: Vec::new(), ..m.clone() }.clean(&name)
}

/// Fill a staging folder: the clean files, then the host's `go mod download`, then only the
/// download cache kept.
async fn fill(
    staging: &Path,
    checked: &Checked,
    toolchain: &Toolchain,
    settings: &Settings,
    cancel: &CancellationToken,
) -> Result<(), PackagesError> {
    let write = |rel: &str, text: &str| {
        let path = staging.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(crate::types::io_err("creating", parent))?;
        }
        std::fs::write(&path, text).map_err(crate::types::io_err("writing", &path))
    };
    write("go.mod", &checked.module.clean(FETCH_MODULE))?;
    if !checked.sum.is_empty() {
        write("go.sum", &(checked.sum.join("\n") + "\n"))?;
    }
    for (dir, m) in &checked.local {
        write(&format!("{dir}/go.mod"), &local_go_mod(m))?;
    }
    let download = staging.join(DOWNLOAD_DIR);
    std::fs::create_dir_all(&download).map_err(crate::types::io_err("creating", &download))?;
    let has_modules = !checked.module.requires.is_empty()
        || checked.module.replaces.iter().any(|r| matches!(r.to, gomod::Target::Module { .. }));
    if has_modules {
        fetch::download(toolchain, staging, settings, cancel).await?;
    }
    fetch::keep_only_downloads(staging)
}

/// What the project's commands get inside the sandbox: the entry as a read-only module proxy,
/// caches in the build's private HOME (kept across fix attempts), and this machine's Go first
/// on PATH.
fn sandbox_env_for(
    entry: &Path,
    toolchain: &Toolchain,
    sandbox_env: &[(String, String)],
) -> Result<Vec<(String, String)>, PackagesError> {
    let home = sandbox_home(sandbox_env)?;
    let gopath = home.join("go");
    let pairs = [
        ("PATH", toolchain.bin.display().to_string()),
        ("GOPROXY", format!("file://{}", entry.join(DOWNLOAD_DIR).display())),
        ("GOPATH", gopath.display().to_string()),
        ("GOMODCACHE", gopath.join("pkg/mod").display().to_string()),
        ("GOCACHE", home.join(".cache/go-build").display().to_string()),
        ("GOFLAGS", "-mod=mod".to_string()),
        // The sums were checked on the host when the modules were fetched.
        ("GOSUMDB", "off".to_string()),
        ("GOTOOLCHAIN", "local".to_string()),
        ("GOTELEMETRY", "off".to_string()),
        ("GOWORK", "off".to_string()),
    ];
    Ok(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// This machine's Go, found on the host's PATH.
#[derive(Debug, Clone)]
pub(crate) struct Toolchain {
    /// The `go` program, links resolved (`/usr/lib/go-1.19/bin/go`).
    pub go: PathBuf,
    /// Its folder, put first on the sandbox's PATH.
    pub bin: PathBuf,
}

impl Toolchain {
    fn find(host_env: &[(String, String)]) -> Result<Toolchain, PackagesError> {
        let path = host_env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str()).unwrap_or("");
        let go = std::env::split_paths(path)
            .filter(|d| d.is_absolute())
            .map(|d| d.join("go"))
            .find(|p| is_executable(p))
            .ok_or(PackagesError::Missing("go"))?;
        let go = go.canonicalize().unwrap_or(go);
        let bin = go.parent().map(Path::to_path_buf).ok_or(PackagesError::Missing("go"))?;
        Ok(Toolchain { go, bin })
    }

    /// `go1.19.8`: from the toolchain's `VERSION` file when it has one (no program runs),
    /// else from `go env GOVERSION`.
    async fn version(
        &self,
        host_env: &[(String, String)],
        cancel: &CancellationToken,
    ) -> Result<String, PackagesError> {
        if let Some(root) = self.bin.parent() {
            if let Ok(text) = std::fs::read_to_string(root.join("VERSION")) {
                if let Some(v) = text.lines().next().filter(|l| l.starts_with("go")) {
                    return Ok(v.trim().to_string());
                }
            }
        }
        fetch::go_env_version(self, host_env, cancel).await
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
