//! Looking at the machine: commands on a PATH, libclang in the folders bindgen searches, pip.

use crate::requirement::{Probe, Requirement};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The parts of the machine the probes look at. [`Host::from_env`] reads the real ones; tests
/// build one with another PATH or library folders.
#[derive(Debug, Clone)]
pub struct Host {
    /// Searched for commands, like the shell does.
    pub path: OsString,
    /// Folders searched (two levels deep) for a libclang shared library.
    pub lib_dirs: Vec<PathBuf>,
    /// `LIBCLANG_PATH`, which bindgen honours before anything else.
    pub libclang_path: Option<PathBuf>,
    /// The Python that fetches the offline model (`WRIGHT_PYTHON`, default `python3`).
    pub python: String,
    /// Whether this process runs as root (so no `sudo` is needed).
    pub root: bool,
    /// Where the Python that projects run is looked for, in order ([`PROJECT_PYTHONS`]); the
    /// first that exists is probed for venv and pytest. The sandbox sees the system's folders,
    /// never a user's pyenv shim, so the `python3` first on PATH is only the last resort.
    pub project_pythons: Vec<PathBuf>,
}

/// Where the sandbox's Python is: the same list the Python package support uses.
pub const PROJECT_PYTHONS: &[&str] = &["/usr/local/bin/python3", "/usr/bin/python3"];

/// Where clang-sys looks for libclang on Linux and macOS when nothing points at it.
const LIB_DIRS: &[&str] = &[
    "/usr/lib",
    "/usr/lib64",
    "/usr/local/lib",
    "/usr/local/lib64",
    "/opt/homebrew/opt/llvm/lib",
    "/usr/local/opt/llvm/lib",
    "/Library/Developer/CommandLineTools/usr/lib",
    "/Applications/Xcode.app/Contents/Developer/Toolchains/XcodeDefault.xctoolchain/usr/lib",
];

impl Host {
    /// This process's machine, from its environment.
    pub fn from_env() -> Host {
        Host {
            path: std::env::var_os("PATH").unwrap_or_default(),
            lib_dirs: LIB_DIRS.iter().map(PathBuf::from).collect(),
            libclang_path: std::env::var_os("LIBCLANG_PATH").filter(|p| !p.is_empty()).map(PathBuf::from),
            python: std::env::var("WRIGHT_PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into()),
            root: running_as_root(),
            project_pythons: PROJECT_PYTHONS.iter().map(PathBuf::from).collect(),
        }
    }

    pub fn is_root(&self) -> bool {
        self.root
    }

    /// The executable `name` on this host's PATH (or `name` itself when it is a path).
    pub fn find(&self, name: &str) -> Option<PathBuf> {
        if name.contains('/') {
            let p = PathBuf::from(name);
            return is_executable(&p).then_some(p);
        }
        std::env::split_paths(&self.path).map(|dir| dir.join(name)).find(|p| is_executable(p))
    }

    /// Whether `req` is met here.
    pub fn has(&self, req: &Requirement) -> bool {
        match req.probe {
            Probe::Command(names) => names.iter().any(|n| self.find(n).is_some()),
            Probe::Libclang => self.libclang().is_some(),
            Probe::Pip => self.pip_works(),
            Probe::PythonModules(modules) => self.python_imports(modules),
        }
    }

    /// A libclang library bindgen would load: under `LIBCLANG_PATH` if set, else in the
    /// usual library folders and one or two levels below them (`/usr/lib/llvm-14/lib`).
    pub fn libclang(&self) -> Option<PathBuf> {
        if let Some(p) = &self.libclang_path {
            if p.is_file() {
                return Some(p.clone());
            }
            return find_libclang_in(p);
        }
        for root in &self.lib_dirs {
            if let Some(found) = find_libclang_in(root) {
                return Some(found);
            }
            for sub in subdirs(root) {
                if let Some(found) = find_libclang_in(&sub).or_else(|| subdirs(&sub).find_map(|d| find_libclang_in(&d)))
                {
                    return Some(found);
                }
            }
        }
        None
    }

    /// `python -m pip --version` exits 0, with the host's PATH.
    fn pip_works(&self) -> bool {
        self.python_succeeds(&["-m", "pip", "--version"])
    }

    /// The projects' Python ([`Host::project_pythons`]) runs `-c "import a, b"` and exits 0.
    fn python_imports(&self, modules: &[&str]) -> bool {
        let names = modules.iter().all(|m| !m.is_empty() && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        let python = self.project_pythons.iter().find(|p| is_executable(p)).cloned().or_else(|| self.find("python3"));
        names && python.is_some_and(|p| run_ok(&p, &["-c", &format!("import {}", modules.join(", "))], &self.path))
    }

    fn python_succeeds(&self, args: &[&str]) -> bool {
        self.find(&self.python).is_some_and(|p| run_ok(&p, args, &self.path))
    }
}

/// `program args…` exits 0, with `path` as its PATH and no input or output.
fn run_ok(program: &Path, args: &[&str], path: &OsString) -> bool {
    Command::new(program)
        .args(args)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `libclang.so`, `libclang.so.1`, `libclang-14.so.1`, `libclang.dylib`; not `libclang-cpp`.
pub fn is_libclang_name(name: &str) -> bool {
    let version_like = |s: &str| s.chars().all(|c| c.is_ascii_digit() || c == '.');
    let Some(rest) = name.strip_prefix("libclang") else {
        return false;
    };
    let (version, suffix) = match rest.find(".so").or_else(|| rest.find(".dylib")) {
        Some(at) => rest.split_at(at),
        None => return false,
    };
    let version_ok = version.is_empty()
        || version.strip_prefix('-').is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()) && version_like(v));
    let suffix_ok = suffix == ".dylib"
        || suffix.strip_prefix(".so").is_some_and(|v| v.is_empty() || (v.starts_with('.') && version_like(v)));
    version_ok && suffix_ok
}

fn find_libclang_in(dir: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut names: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(is_libclang_name))
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    names.sort();
    names.into_iter().next()
}

fn subdirs(dir: &Path) -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.is_dir())
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// Root, from `/proc/self/status` (Linux) or `id -u` elsewhere.
fn running_as_root() -> bool {
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        return status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|rest| rest.split_whitespace().nth(1))
            .is_some_and(|euid| euid == "0");
    }
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}
