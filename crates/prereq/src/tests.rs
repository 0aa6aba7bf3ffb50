use super::*;
use proptest::prelude::*;
use std::ffi::OsString;
use std::path::Path;

fn host_with_path(dirs: &[&Path]) -> Host {
    Host {
        path: std::env::join_paths(dirs).unwrap_or_else(|_| OsString::new()),
        lib_dirs: vec![],
        libclang_path: None,
        python: "python3".into(),
        root: false,
        project_pythons: vec![],
    }
}

fn fake_command(dir: &Path, name: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_path_without_cmake_names_cmake() {
    let bin = tempfile::tempdir().unwrap();
    for c in ["c++", "make", "clang"] {
        fake_command(bin.path(), c);
    }
    let host = host_with_path(&[bin.path()]);
    let names: Vec<_> = missing(&host, &[Stage::Build]).iter().map(|r| r.name).collect();
    assert_eq!(names, ["cmake", "libclang"]);
    fake_command(bin.path(), "cmake");
    let names: Vec<_> = missing(&host, &[Stage::Build]).iter().map(|r| r.name).collect();
    assert_eq!(names, ["libclang"]);
}

#[test]
fn a_file_that_is_not_executable_does_not_count() {
    let bin = tempfile::tempdir().unwrap();
    std::fs::write(bin.path().join("node"), "not a program").unwrap();
    let host = host_with_path(&[bin.path()]);
    assert!(host.find("node").is_none());
    assert!(!host.has(requirement("node.js").unwrap()));
}

#[test]
fn libclang_is_found_two_levels_down_or_through_libclang_path() {
    let root = tempfile::tempdir().unwrap();
    let lib = root.path().join("llvm-14").join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("libclang-cpp.so.14"), "").unwrap();
    let mut host = host_with_path(&[]);
    host.lib_dirs = vec![root.path().to_path_buf()];
    assert_eq!(host.libclang(), None, "libclang-cpp is not libclang");
    std::fs::write(lib.join("libclang.so.1"), "").unwrap();
    assert_eq!(host.libclang(), Some(lib.join("libclang.so.1")));

    host.lib_dirs = vec![];
    host.libclang_path = Some(lib.clone());
    assert_eq!(host.libclang(), Some(lib.join("libclang.so.1")));
    host.libclang_path = Some(root.path().join("nowhere"));
    assert_eq!(host.libclang(), None);
}

#[test]
fn pip_is_missing_when_the_python_is() {
    let host = Host { python: "python-that-does-not-exist-here".into(), ..host_with_path(&[]) };
    assert!(!host.has(requirement("pip").unwrap()));
    let line = explain_missing(requirement("pip").unwrap(), &host);
    assert!(line.starts_with("pip is missing, so the built-in model cannot be fetched"), "{line}");
}

#[test]
fn a_python_whose_pip_fails_has_no_pip() {
    let bin = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    let py = bin.path().join("python3");
    std::fs::write(&py, "#!/bin/sh\necho 'No module named pip' >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    let host = host_with_path(&[bin.path(), Path::new("/bin"), Path::new("/usr/bin")]);
    assert!(!host.has(requirement("pip").unwrap()));
    std::fs::write(&py, "#!/bin/sh\necho 'pip 23'\n").unwrap();
    assert!(host.has(requirement("pip").unwrap()));
}

#[test]
fn the_manager_comes_from_the_path_and_names_its_own_packages() {
    let bin = tempfile::tempdir().unwrap();
    fake_command(bin.path(), "dnf");
    let mut host = host_with_path(&[bin.path()]);
    let m = Manager::detect(&host).unwrap();
    assert_eq!(m, Manager::Dnf);
    let build = missing(&host, &[Stage::Build]);
    assert_eq!(m.packages_for(&build), ["gcc-c++", "make", "cmake", "clang", "clang-devel"]);
    assert_eq!(m.install_command(&["cmake"], false), "sudo dnf install -y cmake");
    fake_command(bin.path(), "apt-get");
    let m = Manager::detect(&host).unwrap();
    assert_eq!(m, Manager::Apt);
    // build-essential provides both the compiler and make: listed once.
    assert_eq!(m.packages_for(&build), ["build-essential", "cmake", "clang", "libclang-dev"]);
    host.root = true;
    let line = explain_missing(requirement("bubblewrap").unwrap(), &host);
    assert_eq!(
        line,
        "bubblewrap is missing, so commands run in wright's weaker Landlock sandbox instead \
         (no loopback network for servers) (install it: apt-get install -y bubblewrap)"
    );
}

#[test]
fn every_requirement_says_why_and_run_time_ones_say_what_still_works() {
    for r in REQUIREMENTS {
        assert!(!r.why.is_empty(), "{}", r.name);
        if r.stage == Stage::Run {
            assert!(!r.without.is_empty(), "{} needs a `without`", r.name);
        }
        assert!(!r.packages.apt.is_empty(), "{} has no Debian package", r.name);
    }
}

#[test]
fn a_build_kind_names_its_missing_toolchain_in_one_line() {
    let bin = tempfile::tempdir().unwrap();
    fake_command(bin.path(), "apt-get");
    let mut host = host_with_path(&[bin.path()]);
    host.root = true;
    host.project_pythons = vec![bin.path().join("python3")];
    let line = missing_for("go", &host).unwrap();
    assert_eq!(
        line,
        "Go is missing, so Go projects cannot be built or verified (other kinds still work) \
         (install it: apt-get install -y golang-go)"
    );
    assert!(!line.contains('\n'));
    let line = missing_for("Python", &host).unwrap();
    assert!(line.starts_with("Python venv is missing, so Python projects cannot be set up"), "{line}");
    assert!(line.contains("apt-get install -y python3-venv") && line.contains("python3-pytest"), "{line}");
    assert!(missing_for("rust", &host).unwrap().contains("apt-get install -y cargo"));
    assert_eq!(missing_for("static", &host), None);
    fake_command(bin.path(), "go");
    fake_command(bin.path(), "cargo");
    assert_eq!(missing_for("go", &host), None);
    assert_eq!(missing_for("rust", &host), None);
    // A python that imports venv, ensurepip and pytest has the Python toolchain.
    use std::os::unix::fs::PermissionsExt;
    let py = bin.path().join("python3");
    std::fs::write(&py, "#!/bin/sh\n[ \"$1\" = -c ] && exit 0\nexit 1\n").unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(missing_for("python", &host), None);
    // A pip-less model Python elsewhere does not matter: the projects' Python is probed.
    host.python = "python-that-does-not-exist-here".into();
    assert_eq!(missing_for("python", &host), None);
    let m = Manager::Pacman;
    assert_eq!(m.packages_for(&requirements_for("go")), ["go"]);
    assert_eq!(Manager::Dnf.packages_for(&requirements_for("go")), ["golang"]);
    assert_eq!(Manager::Zypper.packages_for(&requirements_for("python")), ["python3", "python3-pytest"]);
}

proptest! {
    #[test]
    fn libclang_names_are_recognised(version in proptest::option::of(1u8..30), sover in proptest::collection::vec(0u8..20, 0..3)) {
        let mut name = String::from("libclang");
        if let Some(v) = version {
            name.push_str(&format!("-{v}"));
        }
        name.push_str(".so");
        for part in &sover {
            name.push_str(&format!(".{part}"));
        }
        prop_assert!(is_libclang_name(&name), "{}", name);
    }

    #[test]
    fn other_libraries_are_not_libclang(suffix in "[a-z0-9._-]{0,12}") {
        let cpp = format!("libclang-cpp{suffix}");
        let cpp_rejected = !is_libclang_name(&cpp);
        prop_assert!(cpp_rejected);
        let other = format!("libclangx{suffix}");
        let other_rejected = !is_libclang_name(&other);
        prop_assert!(other_rejected);
    }
}
