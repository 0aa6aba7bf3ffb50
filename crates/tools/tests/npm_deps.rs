//! npm installs through wright's package cache, with the real host npm and a local package (no
//! network needed): filled once, reused, linked into the project, loadable by node.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use wright_events::{Emitter, MemorySink};
use wright_provider::ToolCall;
use wright_sandbox::{ProcessRunner, Workspace, WorkspaceLimits};
use wright_tools::{ExecConfig, ToolContext, ToolOutcome, builtin_registry};

fn require_npm() {
    let ok = std::process::Command::new("npm").arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(ok, "these tests need Node.js and npm on the PATH (Debian: apt-get install nodejs npm)");
}

struct Project {
    ctx: ToolContext,
    sink: Arc<MemorySink>,
}

fn project(dir: &Path, name: &str, cache: &Path) -> Project {
    let ws = Workspace::open(dir.join(name), WorkspaceLimits::default()).unwrap();
    let sink = Arc::new(MemorySink::new());
    let emitter = Emitter::new("test", vec![sink.clone()]);
    let mut exec = ExecConfig::for_build(&dir.join(format!("{name}-home")), &dir.join(format!("{name}-tmp"))).unwrap();
    exec.deps_cache = Some(cache.to_path_buf());
    let ctx = ToolContext {
        workspace: ws,
        runner: Arc::new(ProcessRunner::default()),
        emitter,
        cancel: CancellationToken::new(),
        exec,
    };
    Project { ctx, sink }
}

fn write(p: &Project, rel: &str, text: &str) {
    p.ctx.workspace.write(rel, text.as_bytes()).unwrap();
}

/// A tiny package inside the project, so npm needs no registry.
fn tiny_package(p: &Project, answer: u32) {
    write(p, "vendor/tinypkg/package.json", r#"{"name": "tinypkg", "version": "1.2.3", "main": "index.js"}"#);
    write(p, "vendor/tinypkg/index.js", &format!("module.exports = {answer};\n"));
}

async fn run(p: &Project, command: &str, args: &[&str]) -> ToolOutcome {
    let call = ToolCall {
        id: "c".into(),
        name: "runCommand".into(),
        arguments: json!({"command": command, "args": args}).to_string(),
    };
    builtin_registry().dispatch(&call, &p.ctx).await
}

/// Complete entries and leftover staging folders in the cache.
fn cache_dirs(cache: &Path) -> (Vec<PathBuf>, usize) {
    let mut entries = Vec::new();
    let mut staging = 0;
    for e in std::fs::read_dir(cache.join("npm")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(".staging-") {
            staging += 1;
        } else if !e.file_type().unwrap().is_symlink() {
            entries.push(e.path());
        }
    }
    (entries, staging)
}

#[tokio::test]
async fn local_package_is_installed_once_and_linked_from_the_cache() {
    require_npm();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let a = project(dir.path(), "a", &cache);
    tiny_package(&a, 42);
    write(
        &a,
        "package.json",
        r#"{"name": "a", "version": "1.0.0", "dependencies": {"tinypkg": "file:vendor/tinypkg"}}"#,
    );

    // First install: npm runs outside the sandbox, fills the cache.
    let o = run(&a, "npm", &["install"]).await;
    assert!(o.ok, "{:?}", o.value);
    assert_eq!(o.value["cached"], false, "{:?}", o.value);
    assert_eq!(o.value["installed"], json!({"tinypkg": "1.2.3"}));
    assert!(o.value["stdout"].as_str().unwrap().contains("tinypkg 1.2.3"), "{:?}", o.value);
    let (entries, staging) = cache_dirs(&cache);
    assert_eq!((entries.len(), staging), (1, 0));
    let link = a.ctx.workspace.root().join("node_modules");
    let target = std::fs::read_link(&link).expect("node_modules is a symlink");
    // Relative, as the project and the cache share a folder: it holds wherever that is mounted.
    assert!(target.is_relative(), "{}", target.display());
    assert_eq!(std::fs::canonicalize(&link).unwrap(), std::fs::canonicalize(entries[0].join("node_modules")).unwrap());
    assert!(a.ctx.workspace.root().join("package-lock.json").is_file());
    let lock: Value =
        serde_json::from_slice(&std::fs::read(a.ctx.workspace.root().join("package-lock.json")).unwrap()).unwrap();
    assert_eq!(lock["name"], "a", "the lockfile is named after the project");

    // The project can load it.
    let o = run(&a, "node", &["-e", "process.stdout.write(String(require('tinypkg')))"]).await;
    assert!(o.ok, "{:?}", o.value);
    assert_eq!(o.value["stdout"], "42");

    // Second install of the same set (now with the lockfile): a hit, npm does not run.
    let o = run(&a, "npm", &["install"]).await;
    assert!(o.ok, "{:?}", o.value);
    assert_eq!(o.value["cached"], true, "{:?}", o.value);
    assert_eq!(cache_dirs(&cache), (entries.clone(), 0));

    // Another project with the same dependencies, installed by name: also a hit.
    let b = project(dir.path(), "b", &cache);
    tiny_package(&b, 42);
    let o = run(&b, "sh", &["-c", "npm install ./vendor/tinypkg"]).await;
    assert!(o.ok, "{:?}", o.value);
    assert_eq!(o.value["cached"], true, "{:?}", o.value);
    let pkg: Value =
        serde_json::from_slice(&std::fs::read(b.ctx.workspace.root().join("package.json")).unwrap()).unwrap();
    assert_eq!(pkg["dependencies"], json!({"tinypkg": "file:vendor/tinypkg"}));
    assert_eq!(cache_dirs(&cache).0.len(), 1);

    // Changing the local package's code makes a new entry.
    tiny_package(&b, 7);
    let o = run(&b, "npm", &["i"]).await;
    assert_eq!(o.value["cached"], false, "{:?}", o.value);
    assert_eq!(cache_dirs(&cache).0.len(), 2);
    let o = run(&b, "node", &["-p", "require('tinypkg')"]).await;
    assert_eq!(o.value["stdout"], "7\n");

    // The file tools do not follow the link out of the project.
    let files = wright_tools::project_files(&b.ctx.workspace);
    assert!(files.iter().all(|f| !f.starts_with("node_modules")), "{files:?}");
    let call = ToolCall { id: "l".into(), name: "listFiles".into(), arguments: "{}".into() };
    let listed = builtin_registry().dispatch(&call, &b.ctx).await;
    assert!(listed.ok);
    let nm = listed.value["entries"].as_array().unwrap().iter().find(|e| e["path"] == "node_modules").cloned();
    assert_eq!(nm.unwrap()["kind"], "symlink");

    // The usual command events were emitted.
    let types: Vec<String> = a.sink.events().iter().map(|e| e.kind.type_name().to_string()).collect();
    for t in ["command_started", "command_output", "command_finished", "file_written"] {
        assert!(types.iter().any(|x| x == t), "{t} missing from {types:?}");
    }
}

#[tokio::test]
async fn refusals_are_clean_errors_and_change_nothing() {
    require_npm();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let p = project(dir.path(), "p", &cache);
    write(&p, "package.json", r#"{"name": "p"}"#);
    for (args, says) in [
        (vec!["install", "git+https://example.com/x.git"], "git, URL and tarball"),
        (vec!["install", "-g", "typescript"], "global installs"),
        (vec!["install", "file:../outside"], "not usable"),
        (vec!["install", "--", "-rf"], "not a valid npm package name"),
    ] {
        let o = run(&p, "npm", &args).await;
        assert!(!o.ok, "{args:?}: {:?}", o.value);
        assert!(o.value["error"].as_str().unwrap().contains(says), "{args:?}: {:?}", o.value);
    }
    // A dependency in package.json that points outside the registry is refused too.
    write(&p, "package.json", r#"{"name": "p", "dependencies": {"x": "https://example.com/x.tgz"}}"#);
    let o = run(&p, "npm", &["install"]).await;
    assert!(o.value["error"].as_str().unwrap().contains("not supported"), "{:?}", o.value);
    // A real node_modules folder is left alone.
    tiny_package(&p, 1);
    write(&p, "package.json", r#"{"name": "p", "dependencies": {"tinypkg": "file:vendor/tinypkg"}}"#);
    std::fs::create_dir_all(p.ctx.workspace.root().join("node_modules/own")).unwrap();
    let o = run(&p, "npm", &["install"]).await;
    assert!(o.value["error"].as_str().unwrap().contains("its own node_modules"), "{:?}", o.value);
    assert!(p.ctx.workspace.root().join("node_modules/own").is_dir());
    assert!(!cache.join("npm").exists() || cache_dirs(&cache).0.is_empty());
    // Broken package.json.
    std::fs::remove_dir_all(p.ctx.workspace.root().join("node_modules")).unwrap();
    write(&p, "package.json", "{ broken");
    let o = run(&p, "npm", &["install"]).await;
    assert!(o.value["error"].as_str().unwrap().contains("package.json is not a valid JSON"), "{:?}", o.value);
}

#[tokio::test]
async fn without_a_cache_npm_runs_as_a_normal_command() {
    require_npm();
    let dir = tempfile::tempdir().unwrap();
    let mut p = project(dir.path(), "p", &dir.path().join("cache"));
    p.ctx.exec.deps_cache = None;
    write(&p, "package.json", r#"{"name": "p", "version": "1.0.0"}"#);
    let o = run(&p, "npm", &["install", "--offline", "--no-audit", "--no-fund"]).await;
    assert!(o.ok, "{:?}", o.value);
    assert!(o.value.get("cached").is_none(), "{:?}", o.value);
    assert!(!dir.path().join("cache").exists());
}

/// Needs the registry the host's npm is configured for.
#[tokio::test]
#[ignore = "downloads from the npm registry"]
async fn registry_package_installs_by_name() {
    require_npm();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let p = project(dir.path(), "p", &cache);
    let o = run(&p, "npm", &["install", "express", "cors"]).await;
    assert!(o.ok, "{:?}", o.value);
    assert!(o.value["installed"]["express"].is_string(), "{:?}", o.value);
    let pkg: Value =
        serde_json::from_slice(&std::fs::read(p.ctx.workspace.root().join("package.json")).unwrap()).unwrap();
    assert!(pkg["dependencies"]["express"].as_str().unwrap().starts_with('^'));
    let o = run(&p, "node", &["-e", "require('express'); require('cors')"]).await;
    assert!(o.ok, "{:?}", o.value);
    let o = run(&p, "npm", &["install", "no-such-package-wright-test-zz9"]).await;
    assert!(o.value["error"].as_str().unwrap().contains("does not exist"), "{:?}", o.value);
}

/// A local package is read through the workspace's capability: a link in it (to a file or a
/// folder outside the project) brings nothing from outside into the package cache, which the
/// sandbox mounts.
#[tokio::test]
async fn a_local_package_with_links_brings_nothing_from_outside_into_the_cache() {
    require_npm();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let outside = dir.path().join("home-of-the-user");
    std::fs::create_dir_all(outside.join("keys")).unwrap();
    std::fs::write(outside.join("secret.txt"), "the-secret-outside").unwrap();
    std::fs::write(outside.join("keys/id.txt"), "the-secret-outside").unwrap();
    let p = project(dir.path(), "p", &cache);
    tiny_package(&p, 5);
    let pkg = p.ctx.workspace.root().join("vendor/tinypkg");
    std::os::unix::fs::symlink(outside.join("secret.txt"), pkg.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink(outside.join("keys"), pkg.join("keys")).unwrap();
    write(&p, "package.json", r#"{"name": "p", "dependencies": {"tinypkg": "file:vendor/tinypkg"}}"#);
    let o = run(&p, "npm", &["install"]).await;
    assert!(o.ok, "{:?}", o.value);
    let (entries, _) = cache_dirs(&cache);
    assert_eq!(entries.len(), 1);
    for e in walkdir::WalkDir::new(&entries[0]).follow_links(false).into_iter().flatten() {
        if e.file_type().is_file() {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            assert!(!text.contains("the-secret-outside"), "{} holds the secret", e.path().display());
        }
    }
}
