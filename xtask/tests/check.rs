//! The launcher's prerequisite check, run as the real binary with a PATH the test chooses.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::process::Command;

fn xtask(path: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .env("PATH", path)
        .env("LIBCLANG_PATH", path.join("no-libclang-here"))
        .env("WRIGHT_PYTHON", path.join("python3"))
        .output()
        .unwrap()
}

#[test]
fn check_names_every_missing_tool_and_exits_1() {
    let empty = tempfile::tempdir().unwrap();
    let out = xtask(empty.path(), &["check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for name in ["cmake", "clang", "libclang", "bubblewrap", "Node.js", "npm", "pip"] {
        assert!(
            text.lines().any(|l| l.starts_with("MISSING") && l.split_whitespace().any(|w| w == name)),
            "{name} not named as missing:\n{text}"
        );
    }
    // No package manager on this PATH: the launcher says so instead of guessing.
    assert!(text.contains("No package manager this launcher knows"), "{text}");
}

#[test]
fn without_permission_to_install_it_stops_before_cargo_with_the_exact_command() {
    let bin = tempfile::tempdir().unwrap();
    // A machine with apt but without cmake or libclang: the command names the Debian packages.
    for tool in ["apt-get", "c++", "make", "clang", "bwrap", "setpriv", "node", "npm", "perl"] {
        let p = bin.path().join(tool);
        std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(bin.path().join("python3"), "#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.path().join("python3"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = xtask(bin.path(), &["--no-install", "run", "a landing page"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("- cmake") && err.contains("- libclang"), "{err}");
    assert!(err.contains("apt-get install -y cmake libclang-dev"), "{err}");
    assert!(!err.contains("Building wright"), "cargo must not start: {err}");
}

#[test]
fn an_unknown_command_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask")).arg("frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown command `frobnicate`"));
}
