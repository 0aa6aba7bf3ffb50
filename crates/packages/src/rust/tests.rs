#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use super::check::{Checked, beneath, check};
use crate::types::{PackagesError, Refusal};
use proptest::prelude::*;
use wright_beneath::Dir;

fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Dir) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("p");
    std::fs::create_dir(&root).unwrap();
    for (rel, text) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let dir = Dir::open(&root).unwrap();
    (t, dir)
}

fn checked(files: &[(&str, &str)]) -> Checked {
    let (_t, dir) = project(files);
    check(&dir).unwrap_or_else(|e| panic!("{e}"))
}

fn refused(files: &[(&str, &str)]) -> Vec<Refusal> {
    let (_t, dir) = project(files);
    match check(&dir) {
        Err(PackagesError::Refused(r)) => r,
        other => panic!("expected refusals, got {other:?}"),
    }
}

const HEAD: &str = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

#[test]
fn registry_dependencies_pass_and_the_clean_manifest_keeps_only_them() {
    let manifest = format!(
        "{HEAD}build = \"build.rs\"\n\n[lib]\npath = \"src/x.rs\"\n\n[profile.release]\nlto = true\n\n\
         [dependencies]\nitoa = \"1\"\nserde = {{ version = \"1.0\", features = [\"derive\"], default-features = false }}\n\
         json = {{ package = \"serde_json\", version = \"^1\", optional = true }}\n\n\
         [dev_dependencies]\nryu = \"1\"\n\n[target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n\n\
         [features]\nfast = [\"dep:json\", \"serde/std\"]\n"
    );
    let c = checked(&[("Cargo.toml", &manifest)]);
    assert_eq!(c.crates, vec!["itoa 1", "libc 0.2", "ryu 1", "serde 1.0", "serde_json ^1"]);
    assert_eq!(c.manifests.len(), 1);
    let text = &c.manifests[0].1;
    let back: toml::Table = toml::from_str(text).unwrap();
    for gone in ["build", "[lib]", "profile", "src/x.rs"] {
        assert!(!text.contains(gone), "{gone} in\n{text}");
    }
    assert!(back["dev-dependencies"]["ryu"].is_str(), "{text}");
    assert!(back["target"]["cfg(unix)"]["dependencies"]["libc"].is_str(), "{text}");
    assert!(back["workspace"].is_table(), "the root is a workspace of its own: {text}");
    assert_eq!(c.packages_at, vec![""]);
}

#[test]
fn each_hostile_declaration_is_refused_with_its_reason() {
    let manifest = format!(
        "{HEAD}links = \"z\"\n\n[dependencies]\na = {{ git = \"https://example.invalid/a\" }}\n\
         b = {{ version = \"1\", branch = \"main\" }}\nc = {{ version = \"1\", registry = \"evil\" }}\n\
         d = {{ path = \"../../x\" }}\ne = {{ path = \"/etc\" }}\nf = {{ version = \"1\", artifact = \"bin\" }}\n\
         g = \"https://example.invalid/g.tar.gz\"\nh = {{ features = [\"x\"] }}\n\n\
         [patch.crates-io]\nitoa = {{ git = \"https://example.invalid/itoa\" }}\n\n[replace]\n\"x:1.0.0\" = {{ path = \"x\" }}\n"
    );
    let r = refused(&[("Cargo.toml", &manifest)]);
    let find = |needle: &str| {
        r.iter().find(|r| r.spec.contains(needle)).unwrap_or_else(|| panic!("no refusal of {needle}: {r:#?}"))
    };
    assert!(find("] a = ").reason.contains("git"));
    assert!(find("] b = ").reason.contains("git"));
    assert!(find("] c = ").reason.contains("registry"));
    assert!(find("] d = ").reason.contains("outside the project"));
    assert!(find("] e = ").reason.contains("absolute"));
    assert!(find("] f = ").reason.contains("`artifact`"));
    assert!(find("] g = ").reason.contains("version requirement"));
    assert!(find("] h = ").reason.contains("no version"));
    assert!(find("[patch.crates-io]").reason.contains("[patch]"));
    assert!(find("[replace").reason.contains("[replace]"));
    assert!(find("links").reason.contains("native library"));
    assert!(r.iter().all(|r| r.file == "Cargo.toml"));
    assert_eq!(r.len(), 11, "{r:#?}");
}

#[test]
fn workspaces_members_and_inner_paths_are_followed() {
    let root = "[workspace]\nmembers = [\"crates/*\", \"tool\"]\nresolver = \"2\"\n\n\
                [workspace.package]\nversion = \"0.2.0\"\n\n[workspace.dependencies]\nitoa = \"1\"\n\
                shared = { path = \"shared\" }\n";
    let a = "[package]\nname = \"a\"\nversion.workspace = true\n\n[dependencies]\nitoa = { workspace = true }\n\
             shared = { workspace = true }\n";
    let b =
        "[package]\nname = \"b\"\nversion = \"0.1.0\"\n\n[dependencies]\na = { path = \"../a\", version = \"0.2\" }\n";
    let tool = "[package]\nname = \"tool\"\nversion = \"0.1.0\"\n\n[dependencies]\nryu = \"1\"\n";
    let shared = "[package]\nname = \"shared\"\nversion = \"0.1.0\"\n\n[dependencies]\nmemchr = \"2\"\n";
    let c = checked(&[
        ("Cargo.toml", root),
        ("crates/a/Cargo.toml", a),
        ("crates/b/Cargo.toml", b),
        ("crates/not-a-crate/README", "x"),
        ("tool/Cargo.toml", tool),
        ("shared/Cargo.toml", shared),
    ]);
    let dirs: Vec<&str> = c.manifests.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!(dirs, vec!["", "crates/a", "crates/b", "shared", "tool"]);
    assert_eq!(c.packages_at, vec!["crates/a", "crates/b", "shared", "tool"], "the root is virtual");
    assert_eq!(c.crates, vec!["itoa 1", "memchr 2", "ryu 1"]);
    let root: toml::Table = toml::from_str(&c.manifests[0].1).unwrap();
    assert_eq!(root["workspace"]["members"].as_array().unwrap().len(), 3, "{root:?}");
}

#[test]
fn outside_members_and_undeclared_workspace_dependencies_are_refused() {
    let root = "[workspace]\nmembers = [\"../other\", \"a\", \"x/**\"]\n";
    let a = "[package]\nname = \"a\"\nversion = \"0.1.0\"\n\n[dependencies]\nitoa = { workspace = true }\n\
             up = { path = \"..\" }\n";
    let r = refused(&[("Cargo.toml", root), ("a/Cargo.toml", a)]);
    assert!(r.iter().any(|r| r.spec.contains("../other") && r.reason.contains("outside")), "{r:#?}");
    assert!(r.iter().any(|r| r.spec.contains("x/**") && r.reason.contains("pattern")), "{r:#?}");
    assert!(
        r.iter().any(|r| r.file == "a/Cargo.toml"
            && r.spec.contains("itoa")
            && r.reason.contains("[workspace.dependencies]")),
        "{r:#?}"
    );
    // `..` from `a` is the project's root: inside, allowed.
    assert!(!r.iter().any(|r| r.spec.contains("up =")), "{r:#?}");
}

#[test]
fn a_lockfile_from_git_or_two_registries_is_refused() {
    let manifest = format!("{HEAD}\n[dependencies]\nitoa = \"1\"\n");
    let lock = "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n\n[[package]]\nname = \"itoa\"\n\
                version = \"1.0.0\"\nsource = \"git+https://example.invalid/itoa#abc\"\n\n[[package]]\nname = \"ryu\"\n\
                version = \"1.0.0\"\nsource = \"registry+https://one.invalid/index\"\n\n[[package]]\nname = \"memchr\"\n\
                version = \"2.0.0\"\nsource = \"sparse+https://two.invalid/\"\n";
    let r = refused(&[("Cargo.toml", &manifest), ("Cargo.lock", lock)]);
    assert!(r.iter().any(|r| r.file == "Cargo.lock" && r.spec.starts_with("itoa 1.0.0") && r.reason.contains("git")));
    assert!(r.iter().any(|r| r.file == "Cargo.lock" && r.reason.contains("more than one registry")));
    // A lockfile of one registry passes and is kept as written.
    let one = "version = 4\n\n[[package]]\nname = \"itoa\"\nversion = \"1.0.0\"\nsource = \"registry+https://one.invalid/index\"\n";
    let c = checked(&[("Cargo.toml", &manifest), ("Cargo.lock", one)]);
    assert_eq!(c.lock.as_deref(), Some(one.as_bytes()));
}

#[test]
fn a_linked_manifest_or_bad_toml_is_a_bad_manifest() {
    let (t, dir) = project(&[("Cargo.toml", "[package\n")]);
    assert!(matches!(check(&dir), Err(PackagesError::BadManifest { .. })));
    let root = t.path().join("p");
    std::fs::remove_file(root.join("Cargo.toml")).unwrap();
    std::fs::write(t.path().join("outside.toml"), HEAD).unwrap();
    std::os::unix::fs::symlink(t.path().join("outside.toml"), root.join("Cargo.toml")).unwrap();
    let dir = Dir::open(&root).unwrap();
    let e = check(&dir).unwrap_err().to_string();
    assert!(e.contains("link"), "{e}");
}

#[test]
fn the_key_ignores_order_spacing_and_comments_but_not_versions() {
    let a = format!("{HEAD}\n[dependencies]\nitoa = \"1\"\nryu = {{ version = \"1\", features = [\"small\"] }}\n");
    let b =
        format!("# mine\n[dependencies]\nryu   = {{ features = [\"small\"], version = \"1\" }}\nitoa=\"1\"\n\n{HEAD}");
    let c = format!("{HEAD}\n[dependencies]\nitoa = \"1.0.1\"\nryu = {{ version = \"1\", features = [\"small\"] }}\n");
    let key = |m: &str| super::key(&checked(&[("Cargo.toml", m)]), "rustc 1.0.0", None);
    assert_eq!(key(&a), key(&b));
    assert_ne!(key(&a), key(&c));
    assert_ne!(key(&a), super::key(&checked(&[("Cargo.toml", &a)]), "rustc 1.0.1", None), "another compiler");
}

#[test]
fn a_lockfile_cargo_wrote_keeps_the_entry_and_other_pins_get_their_own() {
    let manifest = format!("{HEAD}\n[dependencies]\nitoa = \"1\"\n");
    let lock = |v: &str| {
        format!(
            "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"itoa\"]\n\n\
             [[package]]\nname = \"itoa\"\nversion = \"{v}\"\nsource = \"registry+https://one.invalid/index\"\n"
        )
    };
    let cache = tempfile::tempdir().unwrap();
    let bare = checked(&[("Cargo.toml", &manifest)]);
    let (key, hit) = super::choose(cache.path(), &bare, "rustc");
    assert!(!hit);
    // The entry holds itoa 1.0.19, as if vendored.
    let entry = cache.path().join("rust").join(&key);
    std::fs::create_dir_all(entry.join("vendor/itoa-1.0.19")).unwrap();
    assert_eq!(super::choose(cache.path(), &bare, "rustc"), (key.clone(), true));
    // cargo in the sandbox wrote Cargo.lock with that version: still the same entry.
    let written = checked(&[("Cargo.toml", &manifest), ("Cargo.lock", &lock("1.0.19"))]);
    assert_eq!(written.pinned, vec!["itoa-1.0.19"]);
    assert_eq!(super::choose(cache.path(), &written, "rustc"), (key.clone(), true));
    // A lockfile pinning another version needs its own entry.
    let older = checked(&[("Cargo.toml", &manifest), ("Cargo.lock", &lock("1.0.1"))]);
    let (other, hit) = super::choose(cache.path(), &older, "rustc");
    assert!(!hit);
    assert_ne!(other, key);
}

#[test]
fn paths_beneath_the_project() {
    assert_eq!(beneath("", "a/../b").unwrap(), "b");
    assert_eq!(beneath("crates/a", "../b").unwrap(), "crates/b");
    assert_eq!(beneath("crates/a", "../..").unwrap(), "");
    assert!(beneath("crates/a", "../../..").is_err());
    assert!(beneath("", "/tmp").is_err());
}

#[tokio::test]
async fn a_refused_project_never_runs_a_host_tool() {
    let (t, _dir) =
        project(&[("Cargo.toml", &format!("{HEAD}\n[dependencies]\nx = {{ git = \"https://example.invalid/x\" }}\n"))]);
    let bin = t.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let called = t.path().join("called");
    for tool in ["cargo", "rustc"] {
        let script = bin.join(tool);
        std::fs::write(&script, format!("#!/bin/sh\necho {tool} >> {}\n", called.display())).unwrap();
        let mut perm = std::fs::metadata(&script).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&script, perm).unwrap();
    }
    let mut settings = crate::types::Settings::new(t.path().join("cache"));
    settings.host_env = vec![("PATH".into(), bin.display().to_string())];
    let env = vec![("HOME".to_string(), t.path().join("home").display().to_string())];
    let e = super::prepare(&_dir, &settings, &env, &Default::default()).await;
    assert!(matches!(e, Err(PackagesError::Refused(_))), "{e:?}");
    assert!(!called.exists(), "a host tool ran");
}

#[tokio::test]
async fn without_a_toolchain_cargo_is_missing() {
    let (t, _dir) = project(&[("Cargo.toml", HEAD)]);
    let mut settings = crate::types::Settings::new(t.path().join("cache"));
    settings.host_env = vec![("PATH".into(), t.path().join("nothing").display().to_string())];
    let env = vec![("HOME".to_string(), t.path().join("home").display().to_string())];
    let e = super::prepare(&_dir, &settings, &env, &Default::default()).await;
    assert!(matches!(e, Err(PackagesError::Missing("cargo"))), "{e:?}");
}

#[test]
fn cargo_failures_in_plain_words() {
    let e = super::explain(
        "error: no matching package named `nosuchcrate` found\nlocation searched: registry `crates-io`\n",
    );
    assert!(e.to_string().contains("the crate `nosuchcrate` does not exist"), "{e}");
    let e = super::explain(
        "error: failed to select a version for the requirement `itoa = \"^99\"`\ncandidate versions found which didn't match: 1.0.0\n",
    );
    assert!(e.to_string().contains("no published version matches `itoa = \"^99\"`"), "{e}");
    let e = super::explain(
        "error: failed to get `itoa` as a dependency\nCaused by:\n  [6] Couldn't resolve host name (Could not resolve host: x)\n",
    );
    assert!(matches!(e, PackagesError::Unreachable(_)), "{e}");
}

/// Pieces of dependency values, hostile and not.
fn dep_value() -> impl Strategy<Value = String> {
    let keys = prop::sample::select(vec![
        "version = \"1\"",
        "version = \"https://x\"",
        "git = \"https://example.invalid/x\"",
        "branch = \"main\"",
        "rev = \"abc\"",
        "registry = \"evil\"",
        "registry-index = \"https://x\"",
        "path = \"../../x\"",
        "path = \"inner\"",
        "path = \"/abs\"",
        "path = \"a/../../b\"",
        "features = [\"a\", \"b/c\"]",
        "features = [1]",
        "optional = true",
        "default-features = false",
        "package = \"other\"",
        "workspace = true",
        "artifact = \"bin\"",
    ]);
    prop_oneof![
        "[ -~]{0,12}".prop_map(|s| format!("{s:?}")),
        prop::collection::vec(keys, 0..4).prop_map(|ks| {
            let mut seen = std::collections::BTreeSet::new();
            let ks: Vec<&str> = ks.into_iter().filter(|k| seen.insert(k.split(' ').next().unwrap_or(""))).collect();
            format!("{{ {} }}", ks.join(", "))
        }),
    ]
}

fn manifest() -> impl Strategy<Value = String> {
    let section = prop::sample::select(vec![
        "dependencies",
        "dev-dependencies",
        "build-dependencies",
        "target.'cfg(unix)'.dependencies",
        "workspace.dependencies",
        "patch.crates-io",
    ]);
    let name = prop::sample::select(vec!["itoa", "serde", "x", "bad name", "inner"]);
    prop::collection::vec((section, prop::collection::vec((name, dep_value()), 0..4)), 0..4).prop_map(|sections| {
        let mut out = String::from("[package]\nname = \"p\"\nversion = \"0.1.0\"\n");
        let mut used = std::collections::BTreeSet::new();
        for (section, deps) in sections {
            if !used.insert(section) {
                continue;
            }
            out.push_str(&format!("\n[{section}]\n"));
            let mut names = std::collections::BTreeSet::new();
            for (n, v) in deps {
                if names.insert(n) {
                    out.push_str(&format!("{n:?} = {v}\n"));
                }
            }
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_checker_never_panics_on_any_text(text in "[ -~\n]{0,300}") {
        let (_t, dir) = project(&[("Cargo.toml", &text)]);
        let _ = check(&dir);
    }

    #[test]
    fn an_accepted_manifest_names_no_git_url_or_outside_path(text in manifest()) {
        let (_t, dir) = project(&[("Cargo.toml", &text), ("inner/Cargo.toml", "[package]\nname = \"inner\"\nversion = \"0.1.0\"\n")]);
        if let Ok(c) = check(&dir) {
            for (folder, m) in &c.manifests {
                for bad in ["git", "branch", "rev", "registry", "://", "patch", "/abs", "artifact"] {
                    prop_assert!(!m.contains(bad), "{bad} in the clean manifest of {folder}:\n{m}\nfrom\n{text}");
                }
                let parsed: toml::Table = toml::from_str(m).unwrap();
                fn paths(v: &toml::Value, out: &mut Vec<String>) {
                    if let toml::Value::Table(t) = v {
                        for (k, v) in t {
                            if k == "path" { out.push(v.as_str().unwrap_or("").to_string()); }
                            paths(v, out);
                        }
                    }
                }
                let mut found = Vec::new();
                paths(&toml::Value::Table(parsed), &mut found);
                for p in found {
                    prop_assert!(beneath(folder, &p).is_ok(), "{p} leaves the project");
                }
            }
        }
    }
}
