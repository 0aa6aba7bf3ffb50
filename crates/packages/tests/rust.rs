//! Rust dependencies end to end: a project depending on a real crate from the registry is
//! prepared (fetched with the host's cargo, then served from the cache), and a real `cargo
//! test` in the bubblewrap sandbox with the network off builds it offline from the vendored
//! entry; hostile manifests are refused before the host's cargo runs.
//!
//! Skips (saying why) only when the sandbox cannot run here or the registry cannot be reached.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use wright_packages::{Ecosystem, PackagesError, Prepared, Settings, prepare, toolchain_dirs};
mod support;

const MANIFEST: &str = r#"[package]
name = "digits"
version = "0.1.0"
edition = "2021"

[dependencies]
itoa = "1"
"#;

const LIB: &str = r#"/// The decimal text of `n`, through the `itoa` crate.
pub fn digits(n: u64) -> String {
    itoa::Buffer::new().format(n).to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats() {
        assert_eq!(super::digits(1234), "1234");
    }
}
"#;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The sandbox's own environment, as a build gets it: a private HOME and the host's PATH.
fn sandbox_env(home: &Path) -> Vec<(String, String)> {
    let path = std::env::var("PATH").unwrap_or_default();
    let path: Vec<&str> = path.split(':').filter(|p| p.starts_with('/')).collect();
    vec![("PATH".into(), path.join(":")), ("HOME".into(), home.display().to_string())]
}

#[tokio::test]
async fn a_registry_crate_is_vendored_once_and_cargo_test_builds_offline_in_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let (project, home, cache) = (dir.path().join("digits"), dir.path().join("home"), dir.path().join("cache"));
    for d in [&project, &home, &cache] {
        std::fs::create_dir(d).unwrap();
    }
    write(&project, "Cargo.toml", MANIFEST);
    write(&project, "src/lib.rs", LIB);
    write(&project, "src/main.rs", "fn main() {\n    println!(\"{}\", digits::digits(4096));\n}\n");
    // A project-local cargo configuration that would send the host's cargo elsewhere: the fetch
    // never reads it.
    write(
        &project,
        ".cargo/config.toml",
        "[source.crates-io]\nreplace-with = \"evil\"\n[source.evil]\ndirectory = \"/nonexistent\"\n",
    );
    let mut settings = Settings::new(cache.clone());
    settings.fetch_timeout = Duration::from_secs(300);
    let env = sandbox_env(&home);
    let cancel = CancellationToken::new();

    let started = Instant::now();
    let cold = match prepare(Ecosystem::Rust, &project, &settings, &env, &cancel).await {
        Ok(p) => p,
        Err(PackagesError::Unreachable(why)) => {
            println!("SKIPPED: the registry cannot be reached from this machine ({why})");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let cold_time = started.elapsed();
    assert!(cold.fetched);
    assert_eq!(cold.packages, vec!["itoa 1"]);
    let entry = cache.join("rust").join(&cold.key);
    let vendored: Vec<String> = std::fs::read_dir(entry.join("vendor"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into())
        .collect();
    assert!(vendored.iter().any(|n| n.starts_with("itoa-1.")), "{vendored:?}");
    assert!(entry.join("Cargo.lock").is_file(), "the resolved lockfile is kept");

    // A hit runs no cargo: the host's `cargo` is now one that records being called (the real
    // rustc stays, it keys the entry).
    let (recorder, log) = recording_tools(dir.path(), &["cargo"]);
    let mut warm_settings = settings.clone();
    for (k, v) in &mut warm_settings.host_env {
        if k == "PATH" {
            *v = format!("{}:{v}", recorder.display());
        }
    }
    let started = Instant::now();
    let warm = prepare(Ecosystem::Rust, &project, &warm_settings, &env, &cancel).await.unwrap();
    let warm_time = started.elapsed();
    assert!(!warm.fetched);
    assert!(!log.exists(), "cargo ran on a hit");
    assert_eq!(warm.key, cold.key);
    println!(
        "prepare: cold {:.2}s, warm {:.3}s; cache entry {} KiB",
        cold_time.as_secs_f64(),
        warm_time.as_secs_f64(),
        cold.bytes >> 10
    );

    // The sandbox: network off, the project and home writable, the cache and the toolchain
    // read-only.
    let mut read_only = vec![cache.clone()];
    read_only.extend(toolchain_dirs(&settings.host_env));
    let runner = support::sandbox(&[&project, &home], &read_only);
    let env = warm.env_over(&env);
    for argv in &warm.setup {
        let o = support::run_in(&runner, argv, &project, &env).await;
        assert!(o.success(), "{argv:?}: {}", support::shown(&o));
    }
    // The project's own `.cargo/config.toml` would replace the vendored source: inside the
    // sandbox it is the model's to keep or drop; this project drops it.
    std::fs::remove_dir_all(project.join(".cargo")).unwrap();
    let cargo_test: Vec<String> = vec!["cargo".into(), "test".into()];
    let o = support::run_in(&runner, &cargo_test, &project, &env).await;
    let first = o.duration;
    assert!(o.success(), "{}", support::shown(&o));
    assert!(support::shown(&o).contains("test result: ok. 1 passed"), "{}", support::shown(&o));
    assert!(
        support::shown(&o).contains("Compiling itoa v1."),
        "built from the vendored source: {}",
        support::shown(&o)
    );
    let o = support::run_in(&runner, &cargo_test, &project, &env).await;
    assert!(o.success(), "{}", support::shown(&o));
    println!(
        "sandboxed cargo test: first {:.1}s, second {:.1}s (build cache in the build's home)",
        first.as_secs_f64(),
        o.duration.as_secs_f64()
    );
    assert!(o.duration < first, "the second run reuses the build");
    // cargo wrote Cargo.lock into the project: the same entry still serves it.
    assert!(project.join("Cargo.lock").is_file());
    let again = prepare(Ecosystem::Rust, &project, &warm_settings, &sandbox_env(&home), &cancel).await.unwrap();
    assert_eq!((again.key.as_str(), again.fetched), (cold.key.as_str(), false));
    let cargo_run: Vec<String> = vec!["cargo".into(), "run".into(), "-q".into()];
    let o = support::run_in(&runner, &cargo_run, &project, &env).await;
    assert!(o.success(), "{}", support::shown(&o));
    assert_eq!(o.stdout.render().trim(), "4096");
    assert!(!project.join("target").exists(), "build products stay out of the project");
}

/// A folder of `tools` that only record that they were called (in the returned log).
fn recording_tools(dir: &Path, tools: &[&str]) -> (PathBuf, PathBuf) {
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.join("host-tools-called");
    for tool in tools {
        let path = bin.join(tool);
        std::fs::write(&path, format!("#!/bin/sh\necho \"{tool} $*\" >> '{}'\nexit 1\n", log.display())).unwrap();
        let mut perm = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&path, perm).unwrap();
    }
    (bin, log)
}

/// A project's name, its files, and a word its refusal must say.
type Case = (&'static str, &'static [(&'static str, &'static str)], &'static str);

#[tokio::test]
async fn hostile_manifests_are_refused_before_the_host_cargo_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, log) = recording_tools(dir.path(), &["cargo", "rustc"]);
    let host_env = vec![("PATH".to_string(), format!("{}:/usr/bin:/bin", bin.display()))];
    let head = "[package]\nname = \"h\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n";
    let cases: &[Case] = &[
        ("git", &[("Cargo.toml", "[dependencies]\nitoa = { git = \"https://example.invalid/itoa\" }\n")], "git"),
        ("outside", &[("Cargo.toml", "[dependencies]\nx = { path = \"../../x\" }\n")], "outside the project"),
        (
            "registry",
            &[("Cargo.toml", "[dependencies]\nitoa = { version = \"1\", registry = \"evil\" }\n")],
            "registry",
        ),
        (
            "patch",
            &[(
                "Cargo.toml",
                "[dependencies]\nitoa = \"1\"\n\n[patch.crates-io]\nitoa = { git = \"https://example.invalid/itoa\" }\n",
            )],
            "[patch]",
        ),
        (
            "lock",
            &[
                ("Cargo.toml", "[dependencies]\nitoa = \"1\"\n"),
                (
                    "Cargo.lock",
                    "version = 4\n\n[[package]]\nname = \"itoa\"\nversion = \"1.0.0\"\nsource = \"git+https://example.invalid/itoa#0123\"\n",
                ),
            ],
            "git",
        ),
    ];
    for (name, files, reason) in cases {
        let project = dir.path().join(name);
        for (rel, body) in *files {
            let body = if *rel == "Cargo.toml" { format!("{head}{body}") } else { body.to_string() };
            write(&project, rel, &body);
        }
        let mut settings = Settings::new(dir.path().join("cache"));
        settings.host_env = host_env.clone();
        let env = sandbox_env(&dir.path().join("home"));
        let got = prepare(Ecosystem::Rust, &project, &settings, &env, &CancellationToken::new()).await;
        let Err(PackagesError::Refused(refusals)) = &got else { panic!("{name}: {got:?}") };
        assert!(refusals.iter().any(|r| r.reason.contains(reason)), "{name}: {refusals:#?}");
        println!("{name}: {}", got.as_ref().map(|_: &Prepared| String::new()).unwrap_or_else(|e| e.to_string()));
    }
    assert!(!log.exists(), "a host tool ran: {:?}", std::fs::read_to_string(&log));
    assert!(!dir.path().join("cache").join("rust").exists(), "nothing was staged");
}

#[tokio::test]
async fn a_workspace_with_members_and_inner_paths_is_vendored_from_clean_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("ws");
    write(
        &project,
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/*\"]\nresolver = \"2\"\n\n[workspace.dependencies]\nitoa = \"1\"\n",
    );
    write(
        &project,
        "crates/app/Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\nbuild = \"build.rs\"\n\n\
         [dependencies]\nitoa = { workspace = true }\nutil = { path = \"../util\" }\n",
    );
    write(&project, "crates/app/build.rs", "fn main() { panic!(\"a build script ran on the host\") }\n");
    write(&project, "crates/app/src/lib.rs", "");
    write(&project, "crates/util/Cargo.toml", "[package]\nname = \"util\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    write(&project, "crates/util/src/lib.rs", "");
    let settings = Settings::new(dir.path().join("cache"));
    let env = sandbox_env(&dir.path().join("home"));
    let prepared = match prepare(Ecosystem::Rust, &project, &settings, &env, &CancellationToken::new()).await {
        Ok(p) => p,
        Err(PackagesError::Unreachable(why)) => {
            println!("SKIPPED: the registry cannot be reached from this machine ({why})");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    assert_eq!(prepared.packages, vec!["itoa 1"]);
    let entry = dir.path().join("cache/rust").join(&prepared.key);
    let lock = std::fs::read_to_string(entry.join("Cargo.lock")).unwrap();
    for name in ["\"app\"", "\"util\"", "\"itoa\""] {
        assert!(lock.contains(name), "{name} in {lock}");
    }
    assert!(!entry.join("project/crates/app/build.rs").exists(), "no build script is staged");
}
