//! The host side: which interpreter the sandbox runs, which host Python has pip, and running
//! `pip download` into a staging folder, with pip's failures turned into words.

use crate::types::{PackagesError, Settings};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use wright_sandbox::{CommandRunner, CommandSpec, ProcessRunner, RunError};

/// Where the sandbox's interpreter is looked for, in order: the sandbox sees the host's `/usr`,
/// never a user's pyenv or `~/.local`.
pub(crate) const SANDBOX_PYTHONS: &[&str] = &["/usr/local/bin/python3", "/usr/bin/python3"];

/// What the help for a source-only package says.
pub(crate) const ALLOW_SDISTS: &str = "an admin can allow sdists with `allow_sdists = true` under `[packages]` in wright.toml (building one runs its setup code on the computer, outside the sandbox)";

/// The Python the sandbox runs, for which wheels are fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// Its absolute path (`/usr/bin/python3`).
    pub python: PathBuf,
    /// `3.11`.
    pub version: String,
    /// pip's implementation tag (`cp` for CPython).
    pub implementation: String,
}

impl Target {
    /// The CPython ABI tag (`cp311`).
    pub fn abi(&self) -> String {
        format!("{}{}", self.implementation, self.version.replace('.', ""))
    }
}

/// The sandbox's interpreter: the first `python3` of [`SANDBOX_PYTHONS`]. Its version comes from
/// the file it links to (`python3.11`), so a cache hit runs nothing; only an interpreter named
/// otherwise is asked (once per call).
pub(crate) async fn sandbox_target(
    candidates: &[&str],
    host_env: &[(String, String)],
    cancel: &CancellationToken,
) -> Result<Target, PackagesError> {
    let Some(python) = candidates.iter().map(PathBuf::from).find(|p| executable(p)) else {
        return Err(PackagesError::Missing("python3"));
    };
    let real = std::fs::canonicalize(&python).unwrap_or_else(|_| python.clone());
    let from_name = real.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_prefix("python")).filter(|v| {
        let mut parts = v.split('.');
        parts.next() == Some("3")
            && parts.next().is_some_and(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
            && parts.next().is_none()
    });
    if let Some(v) = from_name {
        return Ok(Target { python, version: v.to_string(), implementation: "cp".into() });
    }
    let script = "import sys; print('%d.%d' % sys.version_info[:2]); print(sys.implementation.name)";
    let shown = python.display().to_string();
    let out = run(&shown, &["-c", script], Path::new("/"), host_env, Duration::from_secs(60), cancel).await?;
    let mut lines = out.stdout.lines();
    match (out.code, lines.next(), lines.next()) {
        (Some(0), Some(v), Some(imp)) => {
            let implementation = if imp.trim() == "cpython" { "cp" } else { "pp" };
            Ok(Target { python, version: v.trim().to_string(), implementation: implementation.into() })
        }
        _ => Err(PackagesError::Fetch {
            tool: "python3",
            output: format!("{shown} did not say its version: {}", out.stderr),
        }),
    }
}

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A host Python with pip, from the host's PATH (absolute entries only): the first
/// `python3.X` of the sandbox's version for which `-m pip --version` works (so markers such as
/// `python_version < "3.12"` are judged as the sandbox would), else the first such `python3`;
/// with the Python version pip reports.
pub(crate) async fn host_pip(
    host_env: &[(String, String)],
    version: &str,
    cwd: &Path,
    cancel: &CancellationToken,
) -> Result<(String, String), PackagesError> {
    let path = host_env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str()).unwrap_or("");
    let dirs: Vec<PathBuf> = std::env::split_paths(path).filter(|d| d.is_absolute()).collect();
    let exact = format!("python{version}");
    let names = [exact.as_str(), "python3"];
    // Collected first: an iterator of closures held across the await below would make this
    // future not `Send` for every caller's lifetimes.
    let candidates: Vec<PathBuf> = names.iter().flat_map(|n| dirs.iter().map(move |d| d.join(n))).collect();
    for candidate in candidates {
        if !executable(&candidate) {
            continue;
        }
        let shown = candidate.display().to_string();
        let out = run(&shown, &["-m", "pip", "--version"], cwd, host_env, Duration::from_secs(60), cancel).await?;
        if out.code == Some(0) {
            // `pip 23.2.1 from /…/pip (python 3.11)`
            let version = out.stdout.rsplit_once("(python ").map(|(_, v)| v.trim().trim_end_matches(')').to_string());
            return Ok((shown, version.unwrap_or_default()));
        }
    }
    Err(PackagesError::Missing("pip"))
}

/// What a host command printed.
pub(crate) struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Run a host program with the host's environment, outside the sandbox, bounded by `timeout`
/// and the build's cancel token (the runner ends the whole process group on either).
pub(crate) async fn run(
    program: &str,
    args: &[&str],
    cwd: &Path,
    env: &[(String, String)],
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<Output, PackagesError> {
    let mut spec =
        CommandSpec::new(program, args.iter().map(|a| a.to_string()).collect(), cwd.to_path_buf(), env.to_vec());
    spec.timeout = timeout;
    // pip's ERROR lines come last and matter.
    spec.capture_head = 64 * 1024;
    spec.capture_tail = 64 * 1024;
    let out = ProcessRunner::default().run(spec, &(), cancel).await.map_err(|e| match e {
        RunError::NotFound { .. } => PackagesError::Missing("python3"),
        other => PackagesError::Io { op: "start", path: program.to_string(), message: other.to_string() },
    })?;
    if out.timed_out {
        return Err(PackagesError::Timeout("pip", timeout.as_secs()));
    }
    if out.cancelled {
        return Err(PackagesError::Cancelled);
    }
    Ok(Output { code: out.exit_code, stdout: out.stdout.render(), stderr: out.stderr.render() })
}

/// Download what `<staging>/requirements.txt` names into `<staging>/wheelhouse` with the host's
/// pip, for `target`.
pub(crate) async fn download(
    staging: &Path,
    target: &Target,
    settings: &Settings,
    cancel: &CancellationToken,
) -> Result<(), PackagesError> {
    let (python, host_version) = host_pip(&settings.host_env, &target.version, staging, cancel).await?;
    let wheelhouse = staging.join("wheelhouse").display().to_string();
    let requirements = staging.join("requirements.txt").display().to_string();
    let mut args: Vec<String> =
        ["-m", "pip", "download", "--no-input", "--disable-pip-version-check", "--progress-bar", "off"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    args.extend(["--dest".into(), wheelhouse, "-r".into(), requirements]);
    if settings.allow_sdists {
        // pip only targets another interpreter when it fetches wheels alone, so a source
        // distribution needs a host Python of the sandbox's version.
        if host_version != target.version {
            return Err(PackagesError::Fetch {
                tool: "pip",
                output: format!(
                    "source distributions are allowed, but the computer's pip runs Python {host_version} and the sandbox runs Python {}; fetching source distributions needs a host python3 {} with pip on the PATH",
                    target.version, target.version
                ),
            });
        }
    } else {
        args.extend([
            "--only-binary=:all:".into(),
            "--python-version".into(),
            target.version.clone(),
            "--implementation".into(),
            target.implementation.clone(),
            "--abi".into(),
            target.abi(),
        ]);
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&python, &argv, staging, &settings.host_env, settings.fetch_timeout, cancel).await?;
    if out.code == Some(0) {
        return Ok(());
    }
    let text = format!("{}\n{}", out.stdout, out.stderr);
    let mut err = classify(&text, target, None);
    if let Some(name) = missing_name(&text) {
        // Tell "no such package" from "no wheel of it": ask the index for every version.
        let index = run(
            &python,
            &["-m", "pip", "index", "versions", "--disable-pip-version-check", "--no-input", &name],
            staging,
            &settings.host_env,
            Duration::from_secs(120),
            cancel,
        )
        .await?;
        let all = (index.code == Some(0)).then(|| {
            index.stdout.lines().find_map(|l| l.strip_prefix("Available versions:")).unwrap_or("").trim().to_string()
        });
        err = classify(&text, target, Some(all));
    }
    Err(err)
}

/// The name pip could not find (`No matching distribution found for NAME==1.0`).
pub(crate) fn missing_name(text: &str) -> Option<String> {
    let req = text.lines().find_map(|l| l.split_once("No matching distribution found for ").map(|(_, r)| r.trim()))?;
    let name: String = req.chars().take_while(|c| c.is_ascii_alphanumeric() || "._-".contains(*c)).collect();
    (!name.is_empty()).then_some(name)
}

/// pip's failure in words. `index` is what the index lists for the missing package: `None` when
/// not asked, `Some(None)` when it has no such package, `Some(Some(versions))` otherwise.
pub(crate) fn classify(text: &str, target: &Target, index: Option<Option<String>>) -> PackagesError {
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("ERROR:")).collect();
    let detail = if errors.is_empty() { tail(text, 1500) } else { tail(&errors.join("\n"), 1500) };
    let unreachable = [
        "NewConnectionError",
        "Failed to establish a new connection",
        "Temporary failure in name resolution",
        "Name or service not known",
        "Network is unreachable",
        "Max retries exceeded",
        "ProxyError",
        "ConnectTimeoutError",
        "ReadTimeoutError",
        "Connection refused",
    ];
    if unreachable.iter().any(|w| text.contains(w)) {
        let line = text.lines().rev().find(|l| unreachable.iter().any(|w| l.contains(w))).unwrap_or("");
        return PackagesError::Unreachable(tail(line.trim(), 400));
    }
    let Some(name) = missing_name(text) else {
        return PackagesError::Fetch { tool: "pip", output: detail };
    };
    // `(from versions: 1.10.0, 1.11.0)`: the versions with a wheel for the target.
    let with_wheels = text
        .lines()
        .find_map(|l| l.split_once("(from versions: ").map(|(_, v)| v.trim_end_matches(')').trim().to_string()))
        .unwrap_or_else(|| "none".into());
    let py = format!("Python {}", target.version);
    // `name==1.8.2` that the registry has, but not as a wheel: a source-only release.
    let pinned = text
        .lines()
        .find_map(|l| l.split_once("No matching distribution found for ").map(|(_, r)| r.trim()))
        .and_then(|r| r.split_once("=="))
        .map(|(_, v)| v.split([',', ';', ' ']).next().unwrap_or("").to_string())
        .filter(|v| !v.is_empty() && !v.contains('*'));
    let listed = |list: &str, v: &str| list.split(", ").any(|x| x.trim() == v);
    // `Ignored the following versions that require a different python version: 1.21.2
    // Requires-Python >=3.7,<3.11; …`
    let other_python = text
        .lines()
        .find_map(|l| l.split_once("require a different python version:").map(|(_, v)| v.trim().to_string()));
    let needs_other_python =
        |v: &str| other_python.as_deref().is_some_and(|o| o.contains(&format!("{v} Requires-Python")));
    let output = match index {
        _ if pinned.as_deref().is_some_and(needs_other_python) => format!(
            "`{name}` {} does not support the sandbox's {py} (its Requires-Python excludes it); choose another version{}",
            pinned.as_deref().unwrap_or_default(),
            if with_wheels == "none" { String::new() } else { format!(" ({})", clip_list(&with_wheels)) }
        ),
        Some(None) => format!("the package `{name}` does not exist in the package registry; check its name ({detail})"),
        Some(Some(all)) if pinned.as_deref().is_some_and(|v| listed(&all, v) && !listed(&with_wheels, v)) => format!(
            "`{name}` {} has no wheel for {py} on this platform: only a source distribution exists; {ALLOW_SDISTS}. Or choose a version that has a wheel ({}).",
            pinned.unwrap_or_default(),
            if with_wheels == "none" { "there is none".to_string() } else { clip_list(&with_wheels) }
        ),
        Some(Some(all)) if with_wheels == "none" => format!(
            "`{name}` has no wheel for {py} on this platform: only a source distribution exists; {ALLOW_SDISTS}. Or choose another package. (versions in the registry: {})",
            clip_list(&all)
        ),
        _ if with_wheels == "none" => format!("`{name}` has no wheel for {py} ({detail})"),
        _ => format!(
            "no version of `{name}` that matches what was asked has a wheel for {py}; the versions that have one are {}. If the version you need has only a source distribution, {ALLOW_SDISTS}. ({detail})",
            clip_list(&with_wheels)
        ),
    };
    PackagesError::Fetch { tool: "pip", output }
}

fn clip_list(list: &str) -> String {
    let items: Vec<&str> = list.split(", ").collect();
    if items.len() <= 12 {
        list.to_string()
    } else {
        format!("{}, … ({} in all)", items[..12].join(", "), items.len())
    }
}

fn tail(s: &str, max: usize) -> String {
    let s = s.trim();
    if s.len() <= max {
        return s.to_string();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &s[start..])
}
