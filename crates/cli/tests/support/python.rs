//! A Python with the PyPI `mcp` package, for the MCP tests' fixture servers and clients: a
//! virtual environment made once per target folder (the pinned version is in its name, so a
//! new pin makes a new one) and shared by every test binary.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The pinned version of the PyPI `mcp` package the tests run against.
pub const MCP_VERSION: &str = "2.3.0";

/// The venv's `python`, with `mcp` importable. Made on first use (about 15 s); a venv another
/// test binary is making at the same moment is not disturbed: each makes its own beside it and
/// the first to finish is kept.
pub fn mcp_python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(make).clone()
}

fn make() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let venv = root.join(format!("mcp-venv-{MCP_VERSION}"));
    let python = venv.join("bin/python");
    if importable(&python) {
        return python;
    }
    let building = root.join(format!("mcp-venv-{MCP_VERSION}.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    run(Command::new("python3").arg("-m").arg("venv").arg(&building));
    run(Command::new(building.join("bin/pip")).args([
        "install",
        "--quiet",
        "--disable-pip-version-check",
        &format!("mcp=={MCP_VERSION}"),
    ]));
    // A venv's scripts name its own folder, so it is made under its final name's sibling and
    // renamed whole: a rename over an existing folder fails, and then the other one is used.
    if std::fs::rename(&building, &venv).is_err() {
        let _ = std::fs::remove_dir_all(&building);
    }
    assert!(importable(&python), "the venv at {} has no `mcp` package", venv.display());
    python
}

fn importable(python: &Path) -> bool {
    python.exists() && Command::new(python).args(["-c", "import mcp"]).status().is_ok_and(|s| s.success())
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// The pinned version of npm's `@modelcontextprotocol/server-everything`, the reference server.
pub const EVERYTHING_VERSION: &str = "2026.8.31";

/// The reference server's entry point (`dist/index.js`, run with `node … stdio`), installed
/// once per target folder with npm, the same way as the venv.
pub fn everything_server() -> PathBuf {
    static SERVER: OnceLock<PathBuf> = OnceLock::new();
    SERVER.get_or_init(install_everything).clone()
}

fn install_everything() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = root.join(format!("mcp-everything-{EVERYTHING_VERSION}"));
    let entry = |d: &Path| d.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if entry(&dir).exists() {
        return entry(&dir);
    }
    let building = root.join(format!("mcp-everything-{EVERYTHING_VERSION}.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    std::fs::create_dir_all(&building).unwrap();
    run(Command::new("npm").current_dir(&building).args([
        "install",
        "--no-audit",
        "--no-fund",
        "--silent",
        &format!("@modelcontextprotocol/server-everything@{EVERYTHING_VERSION}"),
    ]));
    if std::fs::rename(&building, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&building);
    }
    assert!(entry(&dir).exists(), "npm did not install the reference server in {}", dir.display());
    entry(&dir)
}
