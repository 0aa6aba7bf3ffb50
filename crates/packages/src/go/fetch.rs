//! Running the host's `go` in a staging folder: bounded in time, stopped on cancellation, its
//! failures put in plain words.

use super::{DOWNLOAD_DIR, Toolchain};
use crate::cache;
use crate::types::{PackagesError, Settings};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// `go mod download -json all` in `staging`: every module of the build list (the modules the
/// project's packages and their tests can import) with its `go.mod`, into
/// `<staging>/mod/cache/download`, checked against `go.sum` and the host's checksum database.
pub(super) async fn download(
    toolchain: &Toolchain,
    staging: &Path,
    settings: &Settings,
    cancel: &CancellationToken,
) -> Result<(), PackagesError> {
    let gocache = staging.join(".gocache");
    let mut overrides = vec![
        ("GOMODCACHE", staging.join("mod").display().to_string()),
        ("GOCACHE", gocache.display().to_string()),
        ("GOTOOLCHAIN", "local".to_string()),
        ("GOFLAGS", "-mod=mod".to_string()),
        ("GOWORK", "off".to_string()),
        ("GOTELEMETRY", "off".to_string()),
    ];
    // Module proxies only: a module path the proxy does not know must not make the host clone
    // a repository from wherever that path points (`direct`), unless the admin set GOVCS.
    if !settings.host_env.iter().any(|(k, _)| k == "GOVCS") {
        overrides.push(("GOVCS", "*:off".to_string()));
    }
    let args = ["mod", "download", "-json", "all"];
    let out = run(toolchain, &args, staging, &settings.host_env, &overrides, settings.fetch_timeout, cancel).await?;
    cache::remove_tree(&gocache);
    let errors = json_errors(&out.stdout);
    if out.success && errors.is_empty() {
        return Ok(());
    }
    let stderr = out.stderr.trim();
    let mut text = errors.join("\n");
    if !stderr.is_empty() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(stderr);
    }
    Err(explain(&text))
}

/// The `Error` fields of the JSON objects `go mod download -json` prints, one per module.
fn json_errors(stdout: &str) -> Vec<String> {
    serde_json::Deserializer::from_str(stdout)
        .into_iter::<serde_json::Value>()
        .map_while(Result::ok)
        .filter_map(|v| {
            let error = v.get("Error")?.as_str()?.to_string();
            let module = match (v.get("Path").and_then(|p| p.as_str()), v.get("Version").and_then(|p| p.as_str())) {
                (Some(p), Some(ver)) => format!("{p}@{ver}: "),
                _ => String::new(),
            };
            Some(if error.starts_with(module.trim_end_matches(": ")) { error } else { format!("{module}{error}") })
        })
        .collect()
}

/// Go's failure, said plainly: the proxy unreachable, a module or version that does not
/// exist, a `go.sum` that does not match, or go's own words.
pub(super) fn explain(output: &str) -> PackagesError {
    let lower = output.to_lowercase();
    let first = output.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
    let unreachable = [
        "dial tcp",
        "no such host",
        "connection refused",
        "i/o timeout",
        "tls handshake",
        "network is unreachable",
        "temporary failure in name resolution",
    ];
    if unreachable.iter().any(|n| lower.contains(n)) {
        return PackagesError::Unreachable(format!("the Go module proxy did not answer: {first}"));
    }
    let output = cap(output);
    if lower.contains("checksum mismatch") || lower.contains("security error") {
        return PackagesError::Fetch {
            tool: "go",
            output: format!(
                "a downloaded module does not match its line in go.sum (remove the line, or the whole go.sum, \
                 to take the module as the proxy serves it):\n{output}"
            ),
        };
    }
    let missing = ["not found", "404", "410 gone", "unknown revision", "no such file or directory", "invalid version"];
    if missing.iter().any(|n| lower.contains(n)) {
        return PackagesError::Fetch {
            tool: "go",
            output: format!(
                "a required module or version does not exist on the module proxy (check the module path and \
                 that the version was published):\n{output}"
            ),
        };
    }
    PackagesError::Fetch { tool: "go", output }
}

fn cap(text: &str) -> String {
    const MAX: usize = 4000;
    if text.len() <= MAX {
        return text.trim().to_string();
    }
    let mut cut = MAX;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}\n… ({} more bytes)", text[..cut].trim_end(), text.len() - cut)
}

/// After a download only the proxy layout is kept: the extracted copies (read-only, and as
/// large again) are made in the sandbox from it.
pub(super) fn keep_only_downloads(staging: &Path) -> Result<(), PackagesError> {
    let mod_dir = staging.join("mod");
    let keep = staging.join(DOWNLOAD_DIR);
    let Ok(read) = std::fs::read_dir(&mod_dir) else { return Ok(()) };
    for e in read.flatten() {
        let path = e.path();
        if path == staging.join("mod/cache") {
            let Ok(inner) = std::fs::read_dir(&path) else { continue };
            for e in inner.flatten() {
                if e.path() != keep {
                    cache::remove_tree(&e.path());
                }
            }
        } else {
            cache::remove_tree(&path);
        }
    }
    readable(staging);
    Ok(())
}

/// Everyone may read the entry (files `a+r`, folders `a+rx`): as root, the sandbox runs commands
/// as another user, and a restrictive umask must not hide the modules from it. They are public
/// modules; the folders holding the cache decide who reaches them.
fn readable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else { return };
    let mode = meta.permissions().mode();
    let wanted = if meta.is_dir() {
        mode | 0o555
    } else if meta.is_file() {
        mode | 0o444
    } else {
        return;
    };
    if wanted != mode {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(wanted));
    }
    if meta.is_dir() {
        for e in std::fs::read_dir(path).into_iter().flatten().flatten() {
            readable(&e.path());
        }
    }
}

/// `go env GOVERSION`, for a Go installed without a `VERSION` file.
pub(super) async fn go_env_version(
    toolchain: &Toolchain,
    host_env: &[(String, String)],
    cancel: &CancellationToken,
) -> Result<String, PackagesError> {
    let dir = std::env::temp_dir();
    let overrides = [("GOTOOLCHAIN", "local".to_string()), ("GOWORK", "off".to_string())];
    let out =
        run(toolchain, &["env", "GOVERSION"], &dir, host_env, &overrides, Duration::from_secs(30), cancel).await?;
    let v = out.stdout.trim();
    if out.success && v.starts_with("go") {
        Ok(v.to_string())
    } else {
        Err(PackagesError::Fetch { tool: "go", output: format!("`go env GOVERSION` failed: {}", out.stderr.trim()) })
    }
}

struct Output {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Run the host's `go` with the host's environment and `overrides`, in `cwd`.
async fn run(
    toolchain: &Toolchain,
    args: &[&str],
    cwd: &Path,
    host_env: &[(String, String)],
    overrides: &[(&str, String)],
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<Output, PackagesError> {
    let mut cmd = tokio::process::Command::new(&toolchain.go);
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(host_env.iter().filter(|(k, _)| !overrides.iter().any(|(o, _)| o == k)).map(|(k, v)| (k, v)))
        .envs(overrides.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => PackagesError::Missing("go"),
        _ => PackagesError::Io { op: "starting", path: toolchain.go.display().to_string(), message: e.to_string() },
    })?;
    // Dropping the child (on a timeout or a cancel) kills it.
    tokio::select! {
        out = child.wait_with_output() => {
            let out = out.map_err(crate::types::io_err("running", &toolchain.go))?;
            Ok(Output {
                success: out.status.success(),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            })
        }
        () = tokio::time::sleep(timeout) => Err(PackagesError::Timeout("go mod download", timeout.as_secs())),
        () = cancel.cancelled() => Err(PackagesError::Cancelled),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_the_download_cache_is_kept_and_everyone_may_read_it() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let v = t.path().join("mod/cache/download/example.com/greet/@v");
        std::fs::create_dir_all(&v).unwrap();
        std::fs::write(v.join("v1.2.3.zip"), b"zip").unwrap();
        std::fs::set_permissions(v.join("v1.2.3.zip"), std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&v, std::fs::Permissions::from_mode(0o700)).unwrap();
        let extracted = t.path().join("mod/example.com/greet@v1.2.3");
        std::fs::create_dir_all(&extracted).unwrap();
        std::fs::set_permissions(&extracted, std::fs::Permissions::from_mode(0o555)).unwrap();
        std::fs::create_dir_all(t.path().join("mod/cache/vcs")).unwrap();
        keep_only_downloads(t.path()).unwrap();
        assert!(!t.path().join("mod/example.com").exists());
        assert!(!t.path().join("mod/cache/vcs").exists());
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&v.join("v1.2.3.zip")), 0o644);
        assert_eq!(mode(&v), 0o755);
    }

    #[test]
    fn failures_are_said_plainly() {
        let e = explain(
            "example.com/x@v1.0.0: reading https://proxy.example/x/@v/v1.0.0.info: dial tcp: lookup proxy.example: no such host",
        );
        assert!(matches!(e, PackagesError::Unreachable(_)), "{e}");
        let e = explain(
            "example.com/nope@v1.0.0: reading file:///p/example.com/nope/@v/v1.0.0.mod: no such file or directory",
        );
        assert!(e.to_string().contains("does not exist on the module proxy"), "{e}");
        let e = explain(
            "verifying example.com/x@v1.0.0: checksum mismatch\n\tdownloaded: h1:a\n\tgo.sum: h1:b\n\nSECURITY ERROR",
        );
        assert!(e.to_string().contains("does not match its line in go.sum"), "{e}");
        let errors = json_errors(
            "{\n\t\"Path\": \"example.com/x\",\n\t\"Version\": \"v1.0.0\",\n\t\"Error\": \"not found\"\n}\n{\"Path\": \"b.example/y\", \"Version\": \"v1.0.0\"}\n",
        );
        assert_eq!(errors, ["example.com/x@v1.0.0: not found"]);
    }
}
