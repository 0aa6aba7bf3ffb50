//! What a requirement is: its stage, its probe and its packages. The table of them is the
//! crate root's; the probes ([`crate::probe`]) read these types and nothing above them.

/// When a requirement is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Compiling wright (llama.cpp's C++ and its generated bindings).
    Build,
    /// Running builds: the sandbox, the projects' tests, the offline model's download.
    Run,
    /// Only wright's own test suite.
    Test,
}

/// How to tell that a requirement is met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// Any of these commands is on PATH.
    Command(&'static [&'static str]),
    /// A libclang shared library where bindgen (clang-sys) looks for one.
    Libclang,
    /// `PYTHON -m pip --version` succeeds.
    Pip,
    /// `PYTHON -c "import a, b"` succeeds for these modules (`venv` with `ensurepip`, which
    /// Debian ships apart in python3-venv; `pytest`).
    PythonModules(&'static [&'static str]),
}

/// The system packages that provide a requirement, per package manager. Empty: that system
/// has no package for it.
#[derive(Debug, Clone, Copy)]
pub struct Packages {
    pub apt: &'static [&'static str],
    pub dnf: &'static [&'static str],
    pub pacman: &'static [&'static str],
    pub zypper: &'static [&'static str],
    pub brew: &'static [&'static str],
}

/// One thing wright needs from the machine.
#[derive(Debug, Clone, Copy)]
pub struct Requirement {
    /// Short name, as people know it: `cmake`, `libclang`, `Node.js`.
    pub name: &'static str,
    pub stage: Stage,
    /// What wright uses it for.
    pub why: &'static str,
    /// What still works without it (run-time requirements), for the one-line warning.
    pub without: &'static str,
    pub probe: Probe,
    pub packages: Packages,
}
