//! Checking a Rust project's `Cargo.toml` (and its members', and its path dependencies') and
//! `Cargo.lock` before any host tool runs, and writing the clean manifests the host's cargo
//! fetches from.
//!
//! Only crates of the default registry pass: a version requirement, with features,
//! default-features, optional and a `package` rename. A git source, another registry, a path
//! outside the project, `[patch]`, `[replace]` and `links` are refused, each with its reason
//! (`links` declares a native library a build script of the project links; the build script
//! itself runs only in the sandbox, but wright keeps projects to plain crates). A path inside
//! the project is followed (its own manifest is checked the same way) and never fetched.
//!
//! The clean manifests keep only what decides which crates are fetched: each local package's
//! name, version, edition, rust-version and resolver, its features and its dependency tables,
//! and the workspace's members and dependencies. Nothing else of the project (build scripts,
//! targets, `[profile]`, a `.cargo/config.toml`) reaches the host.

use super::toml_out;
use crate::types::{PackagesError, Refusal};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use toml::{Table, Value};
use wright_beneath::Dir;

/// Dependency tables of a package, as cargo spells them (underscored forms are old aliases).
const DEP_TABLES: &[(&str, &str)] = &[
    ("dependencies", "dependencies"),
    ("dev-dependencies", "dev-dependencies"),
    ("dev_dependencies", "dev-dependencies"),
    ("build-dependencies", "build-dependencies"),
    ("build_dependencies", "build-dependencies"),
];
/// Package fields kept in the clean manifest (each a string, or `{ workspace = true }`).
const PACKAGE_KEYS: &[&str] = &["name", "version", "edition", "rust-version", "resolver"];
/// Local packages followed at most (members and path dependencies together).
const MAX_CRATES: usize = 100;
/// Largest manifest or lockfile read.
const MAX_FILE_BYTES: usize = 1 << 20;

/// A project whose declarations passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checked {
    /// Clean manifests by the folder of the package they stand for (`""` is the project's
    /// root), sorted.
    pub manifests: Vec<(String, String)>,
    /// Whether the manifest at that folder has a `[package]` (it then gets an empty
    /// `src/lib.rs`).
    pub packages_at: Vec<String>,
    /// The project's `Cargo.lock`, when it has one (it passed too).
    pub lock: Option<Vec<u8>>,
    /// Registry crates declared, as `name requirement`, sorted.
    pub crates: Vec<String>,
    /// Registry crates the lockfile pins, as `name-version` (how `cargo vendor
    /// --versioned-dirs` names their folders), sorted.
    pub pinned: Vec<String>,
}

/// Check the project's manifests and lockfile; every problem is a [`Refusal`].
pub(crate) fn check(project: &Dir) -> Result<Checked, PackagesError> {
    let mut c = Checker {
        project,
        refusals: Vec::new(),
        crates: BTreeSet::new(),
        ws_deps: None,
        queue: VecDeque::new(),
        seen: BTreeSet::new(),
        manifests: BTreeMap::new(),
        packages_at: BTreeSet::new(),
        pinned: BTreeSet::new(),
    };
    let root = c.read_manifest("")?;
    let workspace = match root.get("workspace") {
        Some(Value::Table(ws)) => Some(c.workspace(ws)),
        _ => None,
    };
    c.package("", &root, Some(workspace.unwrap_or_default()));
    while let Some(dir) = c.queue.pop_front() {
        if c.manifests.contains_key(&dir) {
            continue;
        }
        let table = c.read_manifest(&dir)?;
        c.package(&dir, &table, None);
    }
    let lock = if project.is_file("Cargo.lock") { Some(c.lock()?) } else { None };
    if !c.refusals.is_empty() {
        return Err(PackagesError::Refused(c.refusals));
    }
    Ok(Checked {
        manifests: c.manifests.into_iter().collect(),
        packages_at: c.packages_at.into_iter().collect(),
        lock,
        crates: c.crates.into_iter().collect(),
        pinned: c.pinned.into_iter().collect(),
    })
}

struct Checker<'a> {
    project: &'a Dir,
    refusals: Vec<Refusal>,
    crates: BTreeSet<String>,
    /// The root's `[workspace.dependencies]`, checked, for `workspace = true`.
    ws_deps: Option<Table>,
    queue: VecDeque<String>,
    seen: BTreeSet<String>,
    manifests: BTreeMap<String, String>,
    packages_at: BTreeSet<String>,
    pinned: BTreeSet<String>,
}

fn manifest_of(dir: &str) -> String {
    if dir.is_empty() { "Cargo.toml".to_string() } else { format!("{dir}/Cargo.toml") }
}

/// `rel` (as written in the manifest in `dir`) as a folder beneath the project, or why not.
pub(crate) fn beneath(dir: &str, rel: &str) -> Result<String, String> {
    if rel.starts_with('/') {
        return Err("is an absolute path; a path dependency must be a folder inside the project".into());
    }
    let joined = if dir.is_empty() { rel.to_string() } else { format!("{dir}/{rel}") };
    match wright_beneath::normalize(&joined) {
        Ok(parts) => Ok(parts.join("/")),
        Err(_) => {
            Err("points outside the project: wright only builds what is inside it; publish the crate or move it \
             into the project"
                .into())
        }
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn is_requirement(s: &str) -> bool {
    let s = s.trim();
    !s.is_empty()
        && s.len() <= 100
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b".*^~=<>, +-".contains(&b))
        && s.bytes().any(|b| b.is_ascii_digit() || b == b'*')
}

fn is_feature(s: &str) -> bool {
    !s.is_empty() && s.len() <= 100 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-+./:?".contains(&b))
}

fn string_list(v: &Value, ok: fn(&str) -> bool) -> Option<Vec<Value>> {
    let items = v.as_array()?;
    items.iter().map(|i| i.as_str().filter(|s| ok(s)).map(|s| Value::String(s.to_string()))).collect()
}

impl Checker<'_> {
    fn refuse(&mut self, file: &str, spec: String, reason: impl Into<String>) {
        let mut spec = spec;
        if spec.len() > 200 {
            let mut cut = 200;
            while !spec.is_char_boundary(cut) {
                cut -= 1;
            }
            spec.truncate(cut);
            spec.push('…');
        }
        self.refusals.push(Refusal { file: file.to_string(), spec, reason: reason.into() });
    }

    fn read(&self, rel: &str) -> Result<String, PackagesError> {
        let bad = |message: String| PackagesError::BadManifest { file: rel.to_string(), message };
        let bytes = self.project.read(rel).map_err(|e| bad(e.to_string()))?;
        if bytes.len() > MAX_FILE_BYTES {
            return Err(bad(format!("it is larger than {} KiB", MAX_FILE_BYTES >> 10)));
        }
        String::from_utf8(bytes).map_err(|_| bad("it is not UTF-8 text".into()))
    }

    fn read_manifest(&self, dir: &str) -> Result<Table, PackagesError> {
        let file = manifest_of(dir);
        let text = self.read(&file)?;
        toml::from_str(&text).map_err(|e| PackagesError::BadManifest { file, message: e.to_string() })
    }

    /// Queue the local package at `dir` (checked when its turn comes).
    fn follow(&mut self, dir: String) -> Result<(), String> {
        if !self.project.is_file(&manifest_of(&dir)) {
            let shown = if dir.is_empty() { ".".to_string() } else { dir.clone() };
            return Err(format!("names the folder `{shown}`, which has no Cargo.toml"));
        }
        if self.seen.insert(dir.clone()) {
            if self.seen.len() > MAX_CRATES {
                return Err(format!("is one local package too many (wright follows at most {MAX_CRATES})"));
            }
            self.queue.push_back(dir);
        }
        Ok(())
    }

    /// The root's `[workspace]`, checked and cleaned; its members are queued.
    fn workspace(&mut self, ws: &Table) -> Table {
        let file = "Cargo.toml";
        let mut clean = Table::new();
        if let Some(Value::Table(deps)) = ws.get("dependencies") {
            let deps = self.dependencies(file, "", "workspace.dependencies", deps, true);
            self.ws_deps = Some(deps.clone());
            clean.insert("dependencies".into(), Value::Table(deps));
        }
        let excluded: Vec<String> = ws
            .get("exclude")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).filter_map(|s| beneath("", s).ok()).collect())
            .unwrap_or_default();
        let mut members = Vec::new();
        for m in ws.get("members").and_then(Value::as_array).into_iter().flatten() {
            let spec = format!("members = [{}]", toml_out::inline(m));
            let Some(pattern) = m.as_str() else {
                self.refuse(file, spec, "is not a folder name");
                continue;
            };
            match self.members(pattern) {
                Ok(dirs) => {
                    for d in dirs.into_iter().filter(|d| !excluded.contains(d)) {
                        match self.follow(d.clone()) {
                            Ok(()) => members.push(Value::String(if d.is_empty() { ".".into() } else { d })),
                            Err(reason) => self.refuse(file, spec.clone(), reason),
                        }
                    }
                }
                Err(reason) => self.refuse(file, spec, reason),
            }
        }
        clean.insert("members".into(), Value::Array(members));
        if let Some(r) = ws.get("resolver").filter(|r| r.as_str().is_some_and(is_name)) {
            clean.insert("resolver".into(), r.clone());
        }
        if let Some(Value::Table(p)) = ws.get("package") {
            let kept: Table = ["version", "edition", "rust-version"]
                .iter()
                .filter_map(|k| {
                    p.get(*k).filter(|v| v.as_str().is_some_and(is_requirement)).map(|v| (k.to_string(), v.clone()))
                })
                .collect();
            clean.insert("package".into(), Value::Table(kept));
        }
        clean
    }

    /// The folders a `members` entry names: a folder, or `folder/*` (every folder in it with
    /// a Cargo.toml).
    fn members(&self, pattern: &str) -> Result<Vec<String>, String> {
        let glob = |s: &str| s.contains(['*', '?', '[', ']', '{', '}']);
        let Some(prefix) = pattern.strip_suffix("/*").or(if pattern == "*" { Some("") } else { None }) else {
            if glob(pattern) {
                return Err("is a pattern wright does not expand; name the folders, or use `folder/*`".into());
            }
            return Ok(vec![beneath("", pattern)?]);
        };
        if glob(prefix) {
            return Err("is a pattern wright does not expand; name the folders, or use `folder/*`".into());
        }
        let base = if prefix.is_empty() { String::new() } else { beneath("", prefix)? };
        let dir = if base.is_empty() { self.project.try_clone() } else { self.project.open_dir(&base) };
        let entries = dir.and_then(|d| d.entries()).map_err(|e| format!("cannot be listed: {e}"))?;
        let mut out: Vec<String> = entries
            .iter()
            .filter(|e| e.kind == wright_beneath::Kind::Dir)
            .filter_map(|e| e.name_str())
            .map(|n| if base.is_empty() { n.to_string() } else { format!("{base}/{n}") })
            .filter(|d| self.project.is_file(&manifest_of(d)))
            .collect();
        out.sort();
        Ok(out)
    }

    /// One local package's manifest: checked, and its clean form recorded.
    fn package(&mut self, dir: &str, table: &Table, workspace: Option<Table>) {
        let file = manifest_of(dir);
        for hostile in ["patch", "replace"] {
            let Some(v) = table.get(hostile) else { continue };
            let spec = match v {
                Value::Table(t) if !t.is_empty() => {
                    let names: Vec<String> = t.keys().map(|k| format!("[{hostile}.{}]", toml_out::key(k))).collect();
                    names.join(", ")
                }
                _ => format!("[{hostile}]"),
            };
            self.refuse(
                &file,
                spec,
                format!(
                    "replaces crates with other sources; wright fetches crates from the registry only: remove \
                     [{hostile}] and depend on published versions"
                ),
            );
        }
        let mut clean = Table::new();
        if let Some(Value::Table(p)) = table.get("package").or(table.get("project")) {
            if let Some(links) = p.get("links") {
                self.refuse(
                    &file,
                    format!("links = {}", toml_out::inline(links)),
                    "declares a native library to link; wright builds plain Rust crates only: remove `links`",
                );
            }
            if let Some(ws) = p.get("workspace") {
                let outside = ws.as_str().is_none_or(|w| beneath(dir, w).is_err());
                if outside {
                    self.refuse(
                        &file,
                        format!("workspace = {}", toml_out::inline(ws)),
                        "names a workspace outside the project; remove it",
                    );
                }
            }
            let kept: Table = PACKAGE_KEYS
                .iter()
                .filter_map(|k| {
                    let v = p.get(*k)?;
                    let ok = match v {
                        Value::String(s) => is_name(s) || is_requirement(s),
                        Value::Table(t) => t.len() == 1 && t.get("workspace") == Some(&Value::Boolean(true)),
                        _ => false,
                    };
                    ok.then(|| (k.to_string(), v.clone()))
                })
                .collect();
            clean.insert("package".into(), Value::Table(kept));
            self.packages_at.insert(dir.to_string());
        }
        if let Some(Value::Table(f)) = table.get("features") {
            let kept: Table = f
                .iter()
                .filter(|(k, _)| is_feature(k))
                .filter_map(|(k, v)| Some((k.clone(), Value::Array(string_list(v, is_feature)?))))
                .collect();
            clean.insert("features".into(), Value::Table(kept));
        }
        for (name, canonical) in DEP_TABLES {
            if let Some(Value::Table(deps)) = table.get(*name) {
                let deps = self.dependencies(&file, dir, name, deps, false);
                merge(&mut clean, canonical, deps);
            }
        }
        if let Some(Value::Table(targets)) = table.get("target") {
            let mut clean_targets = Table::new();
            for (cfg, t) in targets {
                let Value::Table(t) = t else { continue };
                let mut clean_t = Table::new();
                for (name, canonical) in DEP_TABLES {
                    if let Some(Value::Table(deps)) = t.get(*name) {
                        let section = format!("target.{}.{name}", toml_out::key(cfg));
                        let deps = self.dependencies(&file, dir, &section, deps, false);
                        merge(&mut clean_t, canonical, deps);
                    }
                }
                clean_targets.insert(cfg.clone(), Value::Table(clean_t));
            }
            clean.insert("target".into(), Value::Table(clean_targets));
        }
        // The root is a workspace of its own (even an empty one), so the host's cargo never
        // looks above the staging folder for one.
        if let Some(ws) = workspace {
            clean.insert("workspace".into(), Value::Table(ws));
        }
        self.manifests.insert(dir.to_string(), toml_out::document(&clean));
    }

    /// A dependency table, checked entry by entry; what passed, cleaned.
    fn dependencies(&mut self, file: &str, dir: &str, section: &str, deps: &Table, in_workspace: bool) -> Table {
        let mut clean = Table::new();
        for (name, v) in deps {
            match self.dependency(dir, name, v, in_workspace) {
                Ok(c) => {
                    clean.insert(name.clone(), c);
                }
                Err(reason) => {
                    self.refuse(file, format!("[{section}] {} = {}", toml_out::key(name), toml_out::inline(v)), reason)
                }
            }
        }
        clean
    }

    fn dependency(&mut self, dir: &str, name: &str, v: &Value, in_workspace: bool) -> Result<Value, String> {
        if !is_name(name) {
            return Err("is not a crate name (letters, digits, `-` and `_`)".into());
        }
        let t = match v {
            Value::String(req) if is_requirement(req) => {
                self.crates.insert(format!("{name} {}", req.trim()));
                return Ok(v.clone());
            }
            Value::String(_) => return Err("is not a version requirement (like \"1\", \"0.4.2\" or \"^1.2\")".into()),
            Value::Table(t) => t,
            _ => return Err("is neither a version nor a table".into()),
        };
        if t.contains_key("git") || ["branch", "tag", "rev"].iter().any(|k| t.contains_key(*k)) {
            return Err("is a git dependency: wright fetches crates from the registry only; depend on a published \
                        version (`name = \"1\"`)"
                .into());
        }
        if t.contains_key("registry") || t.contains_key("registry-index") {
            return Err("names another registry: wright fetches from the default registry only".into());
        }
        let mut clean = Table::new();
        for (k, val) in t {
            let ok = match k.as_str() {
                "version" => val.as_str().is_some_and(is_requirement),
                "features" => string_list(val, is_feature).is_some(),
                "default-features" | "default_features" | "optional" => val.is_bool(),
                "package" => val.as_str().is_some_and(is_name),
                "workspace" => val.as_bool() == Some(true) && !in_workspace,
                "path" => {
                    let Some(p) = val.as_str() else { return Err("has a `path` that is not text".into()) };
                    let target = beneath(dir, p)?;
                    self.follow(target)?;
                    true
                }
                other => {
                    return Err(format!(
                        "uses `{other}`, which wright does not accept; a dependency may say only version, features, \
                         default-features, optional, package, path (inside the project) and workspace"
                    ));
                }
            };
            if !ok {
                return Err(format!("has an invalid `{k}` ({})", toml_out::inline(val)));
            }
            clean.insert(k.clone(), val.clone());
        }
        let package = t.get("package").and_then(Value::as_str).unwrap_or(name);
        if t.contains_key("workspace") {
            if t.contains_key("version") || t.contains_key("path") || t.contains_key("package") {
                return Err("says `workspace = true` and also its own source; say one".into());
            }
            let declared = self.ws_deps.as_ref().is_some_and(|d| d.contains_key(name));
            if !declared {
                return Err(format!(
                    "says `workspace = true` but the project's Cargo.toml has no `{name}` in [workspace.dependencies]"
                ));
            }
        } else if let Some(req) = t.get("version").and_then(Value::as_str) {
            if !t.contains_key("path") {
                self.crates.insert(format!("{package} {}", req.trim()));
            }
        } else if !t.contains_key("path") {
            return Err("has no version: write `name = \"1\"` or `name = { version = \"1\", features = [...] }`".into());
        }
        Ok(Value::Table(clean))
    }

    fn lock(&mut self) -> Result<Vec<u8>, PackagesError> {
        let file = "Cargo.lock";
        let text = self.read(file)?;
        let lock: Table = toml::from_str(&text)
            .map_err(|e| PackagesError::BadManifest { file: file.into(), message: e.to_string() })?;
        if lock.contains_key("patch") {
            self.refuse(
                file,
                "[[patch.unused]]".into(),
                "comes from a [patch]; delete Cargo.lock and let cargo write it",
            );
        }
        let mut registries: BTreeSet<String> = BTreeSet::new();
        for p in lock.get("package").and_then(Value::as_array).into_iter().flatten() {
            let name = p.get("name").and_then(Value::as_str).unwrap_or("?");
            let version = p.get("version").and_then(Value::as_str).unwrap_or("?");
            let Some(source) = p.get("source") else { continue };
            let spec = format!("{name} {version} ({})", toml_out::inline(source));
            let s = source.as_str().unwrap_or("");
            if s.starts_with("registry+") || s.starts_with("sparse+") {
                registries.insert(s.to_string());
                if is_name(name) && is_requirement(version) {
                    self.pinned.insert(format!("{name}-{version}"));
                }
                continue;
            }
            let reason = if s.starts_with("git+") {
                "comes from a git repository: wright fetches crates from the registry only; depend on a published \
                 version and delete Cargo.lock"
            } else if s.starts_with("path+") {
                "comes from a path outside the registry; delete Cargo.lock and let cargo write it"
            } else {
                "comes from a source that is not a registry; delete Cargo.lock and let cargo write it"
            };
            self.refuse(file, spec, reason);
        }
        if registries.len() > 1 {
            let list: Vec<String> = registries.into_iter().collect();
            self.refuse(
                file,
                list.join(", "),
                "names more than one registry: wright fetches from the default registry only; delete Cargo.lock",
            );
        }
        Ok(text.into_bytes())
    }
}

/// Add `deps` to `table[name]` (the dashed and underscored spellings share one table).
fn merge(table: &mut Table, name: &str, deps: Table) {
    match table.get_mut(name) {
        Some(Value::Table(t)) => t.extend(deps),
        _ => {
            table.insert(name.to_string(), Value::Table(deps));
        }
    }
}
