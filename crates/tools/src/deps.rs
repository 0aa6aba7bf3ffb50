//! npm packages without opening the sandbox's network.
//!
//! Commands run with networking off, yet a full-stack project needs `npm install express`.
//! So when the model runs an npm install, wright does not run it in the sandbox. It:
//! 1. adds the named packages to the project's `package.json` (resolving bare names to
//!    `^latest` with the host's `npm view`);
//! 2. keys the dependency set: SHA-256 of the dependencies, the lockfile (when present), local
//!    `file:` packages' contents and `node --version`;
//! 3. on a cache miss, installs that set with the HOST's npm, its own environment and config
//!    (so whatever registry the host uses), `--ignore-scripts`, in a staging folder under the
//!    cache, then renames it into place atomically;
//! 4. makes `<project>/node_modules` a symlink to `<cache>/npm/<key>/node_modules` and copies
//!    the lockfile into the project. The sandbox mounts the cache read-only at the same path,
//!    so the link resolves inside it and generated code cannot change the packages.
//!
//! Only registry packages and folders inside the project can be installed: git, URL and
//! tarball specs would let the model send the host's npm anywhere.

use crate::{ToolContext, ToolError, ToolSuccess};
use regex::Regex;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};
use wright_events::{EventKind, Stream};
use wright_sandbox::{CommandRunner, CommandSpec, PathError, ProcessRunner, RunError};

/// What the model is told when an install inside a shell line failed for lack of network.
pub(crate) const OFFLINE_HINT: &str = "commands run without network access; to install packages run `npm install NAME…` on its own (command 'npm', args ['install', …]) and wright installs them from its package cache";

/// Subcommands that install (npm's own aliases included).
const INSTALL_WORDS: &[&str] = &[
    "install",
    "i",
    "in",
    "ins",
    "inst",
    "insta",
    "instal",
    "isnt",
    "isnta",
    "isntal",
    "isntall",
    "add",
    "ci",
    "clean-install",
    "ic",
    "install-clean",
    "isntall-clean",
];

/// The folder under the cache root that holds npm sets.
const NPM_DIR: &str = "npm";
/// Local `file:` packages bigger than this are refused: they are copied and hashed per install.
const LOCAL_PACKAGE_LIMIT: u64 = 20 * 1024 * 1024;
/// Staging folders left by a crash are removed after this long.
const STALE_STAGING: Duration = Duration::from_secs(3600);
/// The least time the host's npm gets, whatever the command timeout.
const MIN_NPM_TIMEOUT: Duration = Duration::from_secs(300);
/// Bumped when the layout of a cache entry changes, so old entries are not reused.
const KEY_VERSION: &str = "wright-npm-cache v1";

/// Why packages could not be installed; the text is what the model reads.
#[derive(Debug, thiserror::Error)]
pub enum DepsError {
    #[error("`{0}` is not installed on this machine, so wright cannot install packages; write the code without them")]
    Missing(&'static str),
    #[error(
        "global installs (-g) are not possible here; install into the project with `npm install NAME` and use `npx NAME` or a package.json script"
    )]
    Global,
    #[error(
        "`{spec}` cannot be installed: {why}. wright installs packages from the npm registry (`express`, `express@4`) or from folders inside the project (`file:vendor/pkg`)"
    )]
    BadSpec { spec: String, why: String },
    #[error("the package `{package}` does not exist in the npm registry ({detail}); check its name")]
    NotFound { package: String, detail: String },
    #[error("the npm registry could not be reached from this machine ({0}); packages cannot be installed right now")]
    Unreachable(String),
    #[error("npm could not install the packages:\n{0}")]
    Npm(String),
    #[error("package.json is not a valid JSON object ({0}); fix it with updateFile, then install again")]
    BadPackageJson(String),
    #[error(
        "the project has its own node_modules folder, so wright left it alone; remove it (runCommand rm -rf node_modules) and install again to use the package cache"
    )]
    RealNodeModules,
    #[error("npm did not finish within {0}s")]
    Timeout(u64),
    #[error("the build was stopped while packages were being installed")]
    Cancelled,
    #[error("{op} {path}: {message}")]
    Io { op: &'static str, path: String, message: String },
    #[error(transparent)]
    Path(#[from] PathError),
}

fn io(op: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> DepsError + use<> {
    let path = path.display().to_string();
    move |e| DepsError::Io { op, path, message: e.to_string() }
}

/// Which section of package.json a request saves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Prod,
    Dev,
    Optional,
}

impl Section {
    fn key(self) -> &'static str {
        match self {
            Section::Prod => "dependencies",
            Section::Dev => "devDependencies",
            Section::Optional => "optionalDependencies",
        }
    }
}

/// The package.json sections that decide what gets installed.
/// The package.json sections that list dependencies.
const DEP_SECTIONS: [&str; 3] = ["dependencies", "devDependencies", "optionalDependencies"];
const SECTIONS: &[&str] = &["dependencies", "devDependencies", "optionalDependencies", "overrides"];

/// An npm install the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmInstall {
    /// Package specs as typed (`express`, `cors@2`, `@scope/x@^1`, `file:vendor/x`).
    pub packages: Vec<String>,
    section: Section,
    exact: bool,
    global: bool,
    /// Flags that have no meaning here, echoed back so the model knows.
    pub ignored: Vec<String>,
}

impl NpmInstall {
    /// The request, if `command args` is an npm install: `npm install|i|ci|add …` directly, or
    /// as the only command of `sh -c '…'`. Anything else (`npm test`, a pipeline) is `None`
    /// and runs in the sandbox as usual.
    pub fn parse(command: &str, args: &[String]) -> Option<Self> {
        let words = command_words(command, args)?;
        let (program, rest) = words.split_first()?;
        if Path::new(program).file_name().and_then(|n| n.to_str()) != Some("npm") {
            return None;
        }
        let (sub, rest) = rest.split_first()?;
        if !INSTALL_WORDS.contains(&sub.as_str()) {
            return None;
        }
        let mut req =
            NpmInstall { packages: vec![], section: Section::Prod, exact: false, global: false, ignored: vec![] };
        let mut only_packages = false;
        for w in rest {
            if only_packages || !w.starts_with('-') {
                req.packages.push(w.clone());
                continue;
            }
            match w.as_str() {
                "--" => only_packages = true,
                "-D" | "--save-dev" | "--dev" => req.section = Section::Dev,
                "-O" | "--save-optional" => req.section = Section::Optional,
                "-P" | "--save-prod" => req.section = Section::Prod,
                "-E" | "--save-exact" => req.exact = true,
                "-g" | "--global" | "--location=global" => req.global = true,
                "-S" | "--save" | "--no-audit" | "--no-fund" | "--silent" | "--quiet" | "-s" | "-q"
                | "--ignore-scripts" | "--prefer-offline" | "--no-progress" => {}
                other => req.ignored.push(other.to_string()),
            }
        }
        Some(req)
    }
}

/// The words of a command line: the command and its args, or the script of `sh -c SCRIPT` when
/// it is a single plain command (no operators, redirections or substitutions).
fn command_words(command: &str, args: &[String]) -> Option<Vec<String>> {
    let shell = matches!(Path::new(command).file_name().and_then(|n| n.to_str()), Some("sh" | "bash" | "dash"));
    if shell {
        let [flag, script] = args else { return None };
        if flag != "-c" {
            return None;
        }
        let words = shell_words::split(script).ok()?;
        let plain = |w: &String| !w.contains(['&', '|', ';', '<', '>', '$', '`', '(', ')', '\n']);
        return words.iter().all(plain).then_some(words);
    }
    Some(std::iter::once(command.to_string()).chain(args.iter().cloned()).collect())
}

/// Whether a command line installs npm packages anywhere in it (`sh -c "npm i x && …"`); used
/// to explain a failure that the missing network caused.
pub(crate) fn mentions_npm_install(command: &str, args: &[String]) -> bool {
    let line = std::iter::once(command).chain(args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ");
    let words: Vec<&str> =
        line.split(|c: char| c.is_whitespace() || matches!(c, '&' | '|' | ';' | '(' | ')')).collect();
    words.windows(2).any(|w| w[0].ends_with("npm") && INSTALL_WORDS.contains(&w[1]))
}

/// One package the model named, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Wanted {
    name: String,
    spec: WantedSpec,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum WantedSpec {
    /// Bare name: keep what package.json has, else the latest version.
    Latest,
    /// A dist-tag (`next`, `beta`) to resolve to a version.
    Tag(String),
    /// A version or range, saved as given.
    Range(String),
    /// A folder inside the project, as a path relative to its root.
    Local(String),
}

fn name_re() -> Result<Regex, DepsError> {
    Regex::new(r"^(?:@[A-Za-z0-9][A-Za-z0-9._~-]*/)?[A-Za-z0-9][A-Za-z0-9._~-]*$").map_err(|e| DepsError::Io {
        op: "compile",
        path: "name pattern".into(),
        message: e.to_string(),
    })
}

fn bad(spec: &str, why: &str) -> DepsError {
    DepsError::BadSpec { spec: spec.to_string(), why: why.to_string() }
}

/// Check one spec as the model wrote it. Names are validated strictly because they become
/// arguments of the host's npm (no `-flag` can slip in).
fn parse_spec(raw: &str, names: &Regex) -> Result<Wanted, DepsError> {
    let spec = raw.trim();
    if let Some(path) = spec.strip_prefix("file:").or_else(|| {
        (spec.starts_with("./") || spec.starts_with("../") || spec.starts_with('/') || spec.starts_with('~'))
            .then_some(spec)
    }) {
        return Ok(Wanted { name: String::new(), spec: WantedSpec::Local(path.to_string()) });
    }
    let (name, version) = match spec.get(1..).and_then(|s| s.find('@')).map(|i| i + 1) {
        Some(i) => (&spec[..i], Some(&spec[i + 1..])),
        None => (spec, None),
    };
    if name.len() > 214 || !names.is_match(name) {
        let why = if spec.contains(':') || (spec.contains('/') && !spec.starts_with('@')) {
            "git, URL and tarball sources are not supported"
        } else {
            "that is not a valid npm package name"
        };
        return Err(bad(raw, why));
    }
    let spec = match version {
        None | Some("") => WantedSpec::Latest,
        Some(v) if v.contains([':', '/', '\\']) || v.starts_with('-') => {
            return Err(bad(raw, "git, URL and tarball sources are not supported"));
        }
        Some(v) if is_tag(v) => WantedSpec::Tag(v.to_string()),
        Some(v) if v.chars().all(|c| c.is_ascii_alphanumeric() || " .^~<>=|*+-xX".contains(c)) => {
            WantedSpec::Range(v.to_string())
        }
        Some(_) => return Err(bad(raw, "that is not a version or range")),
    };
    Ok(Wanted { name: name.to_string(), spec })
}

/// `latest`, `next`, `beta`: a word that is not a version or range.
fn is_tag(v: &str) -> bool {
    v.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !matches!(v, "x" | "X")
        && !v.starts_with('v')
}

/// Whether a package.json value is one wright will hand to the host's npm.
fn check_manifest_spec(name: &str, spec: &Value, names: &Regex) -> Result<(), DepsError> {
    let Some(s) = spec.as_str() else {
        return Err(bad(&format!("{name}: {spec}"), "a dependency's version must be a string"));
    };
    if s.starts_with("file:") {
        return Ok(());
    }
    match parse_spec(&format!("{name}@{s}"), names)?.spec {
        WantedSpec::Local(_) => Err(bad(s, "local folders are written `file:path/inside/the/project`")),
        _ => Ok(()),
    }
}

/// `overrides` values are specs too (or `$name` references to a dependency's spec).
fn check_overrides(v: &Value, names: &Regex) -> Result<(), DepsError> {
    match v {
        Value::Object(m) => m.values().try_for_each(|v| check_overrides(v, names)),
        Value::String(s) if s.starts_with('$') => Ok(()),
        Value::String(s) if s.starts_with("file:") => Err(bad(s, "local folders cannot be overrides")),
        spec => check_manifest_spec("overrides", spec, names),
    }
}

/// What an install did, for the model and for people.
#[derive(Debug)]
struct Installed {
    /// Direct dependencies and the versions installed.
    versions: BTreeMap<String, String>,
    /// Packages in node_modules in all.
    total: usize,
    cached: bool,
    npm_output: String,
    notes: Vec<String>,
}

/// Install the packages `package.json` declares, through the cache, as `npm install` would:
/// wright calls it itself when a template brings its own packages (the react template).
/// `Ok(None)` when the build has no package cache (commands then cannot install anything).
pub async fn install_declared(ctx: &ToolContext) -> Result<Option<ToolSuccess>, ToolError> {
    let Some(cache) = ctx.exec.deps_cache.clone() else {
        return Ok(None);
    };
    let args = vec!["install".to_string()];
    let Some(request) = NpmInstall::parse("npm", &args) else {
        return Err(ToolError::Failed("`npm install` was not understood".into()));
    };
    install(ctx, &cache, request, "npm", &args).await.map(Some)
}

/// Run the model's npm install through the cache, with the usual command events around it.
pub(crate) async fn install(
    ctx: &ToolContext,
    cache_root: &Path,
    request: NpmInstall,
    command: &str,
    args: &[String],
) -> Result<ToolSuccess, ToolError> {
    ctx.emitter.emit(EventKind::CommandStarted { command: command.to_string(), args: args.to_vec() });
    let started = Instant::now();
    let result = install_inner(ctx, cache_root, &request).await;
    let redactor = &ctx.exec.redactor;
    let finished = |code: i32| EventKind::CommandFinished {
        exit_code: Some(code),
        duration_ms: started.elapsed().as_millis() as u64,
        timed_out: false,
    };
    match result {
        Ok(done) => {
            let mut notes = done.notes.clone();
            if !request.ignored.is_empty() {
                notes.push(format!("ignored flags: {}", request.ignored.join(" ")));
            }
            let words = describe(&done, &notes);
            let chunk = redactor.redact(&format!("{words}\n")).into_owned();
            ctx.emitter.emit(EventKind::CommandOutput { stream: Stream::Stdout, chunk });
            ctx.emitter.emit(finished(0));
            let stderr = crate::clip_tail(&done.npm_output, 2000);
            let summary = format!(
                "npm install → {} package(s) {} in {:.1}s",
                done.total,
                if done.cached { "from the cache" } else { "downloaded" },
                started.elapsed().as_secs_f32()
            );
            Ok(ToolSuccess {
                value: json!({
                    "ok": true,
                    "exit_code": 0,
                    "stdout": words,
                    "stderr": stderr,
                    "timed_out": false,
                    "installed": done.versions,
                    "packages": done.total,
                    "cached": done.cached,
                }),
                summary,
            })
        }
        Err(e) => {
            let chunk = redactor.redact(&format!("{e}\n")).into_owned();
            ctx.emitter.emit(EventKind::CommandOutput { stream: Stream::Stderr, chunk });
            ctx.emitter.emit(finished(1));
            Err(ToolError::Failed(e.to_string()))
        }
    }
}

/// The result in plain words.
fn describe(done: &Installed, notes: &[String]) -> String {
    let list = done.versions.iter().map(|(n, v)| format!("{n} {v}")).collect::<Vec<_>>().join(", ");
    let mut s = if done.versions.is_empty() {
        "package.json lists no dependencies, so there was nothing to install.".to_string()
    } else if done.cached {
        format!(
            "Installed {list} ({} package(s) in all) from wright's package cache, without downloading anything.",
            done.total
        )
    } else {
        format!(
            "Downloaded and installed {list} ({} package(s) in all) with the computer's npm (install scripts are not run) into wright's package cache.",
            done.total
        )
    };
    if !done.versions.is_empty() {
        s.push_str(
            " node_modules links to the cache and is read-only: require() works, but packages cannot be changed or built in place.",
        );
    }
    for n in notes {
        s.push(' ');
        s.push_str(n);
        if !n.ends_with('.') {
            s.push('.');
        }
    }
    s
}

async fn install_inner(ctx: &ToolContext, cache_root: &Path, req: &NpmInstall) -> Result<Installed, DepsError> {
    if req.global {
        return Err(DepsError::Global);
    }
    let names = name_re()?;
    let mut notes = Vec::new();
    let mut manifest = match ctx.workspace.read("package.json") {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(DepsError::BadPackageJson("it is not an object".into())),
            Err(e) => return Err(DepsError::BadPackageJson(e.to_string())),
        },
        Err(PathError::NotFound(_)) => new_manifest(ctx.workspace.root()),
        Err(e) => return Err(e.into()),
    };
    let before = manifest.clone();

    // 1. The named packages go into package.json.
    let timeout = ctx.exec.command_timeout.max(MIN_NPM_TIMEOUT);
    let mut locals: BTreeMap<String, Vec<(String, Vec<u8>)>> = BTreeMap::new();
    for raw in &req.packages {
        let wanted = parse_spec(raw, &names)?;
        let (name, spec) = match wanted.spec {
            WantedSpec::Local(path) => {
                let (name, rel) = local_package(ctx, &path, raw)?;
                (name, format!("file:{rel}"))
            }
            WantedSpec::Range(r) => (wanted.name, r),
            WantedSpec::Latest => match existing_spec(&manifest, &wanted.name) {
                Some(s) => (wanted.name, s),
                None => {
                    let v = latest(ctx, &wanted.name, "latest", timeout).await?;
                    let spec = if req.exact { v } else { format!("^{v}") };
                    (wanted.name, spec)
                }
            },
            WantedSpec::Tag(tag) => {
                let v = latest(ctx, &wanted.name, &tag, timeout).await?;
                let spec = if req.exact { v } else { format!("^{v}") };
                (wanted.name, spec)
            }
        };
        for other in DEP_SECTIONS {
            if let Some(Value::Object(m)) = manifest.get_mut(other) {
                m.shift_remove(&name);
            }
        }
        let section = manifest.entry(req.section.key()).or_insert_with(|| Value::Object(Map::new()));
        if !section.is_object() {
            *section = Value::Object(Map::new());
        }
        if let Value::Object(m) = section {
            m.insert(name, Value::String(spec));
        }
    }
    for key in DEP_SECTIONS {
        if manifest.get(key).is_some_and(|v| v.as_object().is_some_and(Map::is_empty)) && !before.contains_key(key) {
            manifest.shift_remove(key);
        }
    }

    // 2. Every dependency must be one the host's npm may fetch.
    let mut direct: Vec<String> = Vec::new();
    for key in DEP_SECTIONS {
        match manifest.get(key) {
            None => {}
            Some(Value::Object(m)) => {
                for (name, spec) in m {
                    check_manifest_spec(name, spec, &names)?;
                    if let Some(path) = spec.as_str().and_then(|s| s.strip_prefix("file:")) {
                        let (_, rel) = local_package(ctx, path, &format!("{name}@{}", spec.as_str().unwrap_or("")))?;
                        let files = package_files(&ctx.workspace, &rel)?;
                        locals.insert(rel.clone(), files);
                    }
                    direct.push(name.clone());
                }
            }
            Some(_) => return Err(DepsError::BadPackageJson(format!("`{key}` must be an object"))),
        }
    }
    if let Some(o) = manifest.get("overrides") {
        check_overrides(o, &names)?;
    }
    direct.sort();
    direct.dedup();
    if direct.is_empty() {
        return Ok(Installed { versions: BTreeMap::new(), total: 0, cached: true, npm_output: String::new(), notes });
    }

    let link = ctx.workspace.root().join("node_modules");
    if std::fs::symlink_metadata(&link).is_ok_and(|m| !m.file_type().is_symlink()) {
        return Err(DepsError::RealNodeModules);
    }

    // 3. The key, and the cache entry behind it.
    let lock = read_lock(ctx)?;
    if lock.is_none() && ctx.workspace.resolve("package-lock.json").is_ok_and(|p| p.exists()) {
        notes.push("package-lock.json is not valid JSON, so it was ignored and replaced".into());
    }
    let node = node_version(ctx, timeout).await?;
    let mut local_hashes = BTreeMap::new();
    for (rel, files) in &locals {
        local_hashes.insert(rel.clone(), hash_files(files));
    }
    let key = cache_key(&node, &manifest, lock.as_ref(), &local_hashes);
    let npm_root = absolute(cache_root)?.join(NPM_DIR);
    std::fs::create_dir_all(&npm_root).map_err(io("create", &npm_root))?;
    let (entry, cached, npm_output) = match existing_entry(&npm_root, &key) {
        Some(entry) => (entry, true, String::new()),
        None => {
            let staged = Staged {
                manifest: &manifest,
                lock: lock.as_ref(),
                locals: &locals,
                local_hashes: &local_hashes,
                node: &node,
            };
            let (entry, out) = fill(ctx, &npm_root, &key, &staged, timeout, &mut notes).await?;
            (entry, false, out)
        }
    };

    // 4. The project uses it.
    link_node_modules(&link, &entry.join("node_modules"))?;
    if manifest != before {
        write_json(ctx, "package.json", &Value::Object(manifest.clone()))?;
    }
    let entry_lock = read_json(&entry.join("package-lock.json"));
    copy_lock(ctx, entry_lock.clone(), lock.as_ref(), &manifest, &mut notes)?;
    let versions = direct
        .iter()
        .map(|name| {
            let v = read_json(&entry.join("node_modules").join(name).join("package.json"))
                .and_then(|p| p.get("version").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_else(|| "(not installed)".into());
            (name.clone(), v)
        })
        .collect();
    let total = entry_lock
        .and_then(|l| l.get("packages").and_then(Value::as_object).map(|p| p.keys().filter(|k| !k.is_empty()).count()))
        .unwrap_or(direct.len());
    Ok(Installed { versions, total, cached, npm_output, notes })
}

/// A package.json for a project that has none.
fn new_manifest(root: &Path) -> Map<String, Value> {
    let name: String = root
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("app")
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' })
        .collect();
    let name = name.trim_matches('-');
    let mut m = Map::new();
    m.insert("name".into(), json!(if name.is_empty() { "app" } else { name }));
    m.insert("version".into(), json!("1.0.0"));
    m.insert("private".into(), json!(true));
    m
}

/// The spec package.json already has for `name`, in any section (`-D` moves it, keeping it).
fn existing_spec(manifest: &Map<String, Value>, name: &str) -> Option<String> {
    DEP_SECTIONS.iter().find_map(|k| manifest.get(*k)?.get(name)?.as_str().map(str::to_string))
}

/// A `file:` package: it must be a folder inside the project with a package.json naming it.
/// Returns its name and its path relative to the project root.
fn local_package(ctx: &ToolContext, path: &str, raw: &str) -> Result<(String, String), DepsError> {
    let real = ctx.workspace.resolve(path).map_err(|e| bad(raw, &format!("the folder is not usable: {e}")))?;
    let rel = ctx.workspace.relative(&real);
    if rel == "." || !real.is_dir() {
        return Err(bad(raw, "a local package must be a folder inside the project"));
    }
    let name = read_json(&real.join("package.json"))
        .and_then(|p| p.get("name").and_then(Value::as_str).map(str::to_string))
        .ok_or_else(|| bad(raw, "the folder has no package.json with a \"name\""))?;
    Ok((name, rel))
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

fn read_lock(ctx: &ToolContext) -> Result<Option<Value>, DepsError> {
    match ctx.workspace.read("package-lock.json") {
        Ok(bytes) => Ok(serde_json::from_slice::<Value>(&bytes).ok().filter(Value::is_object)),
        Err(PathError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn write_json(ctx: &ToolContext, rel: &str, v: &Value) -> Result<(), DepsError> {
    let mut text = serde_json::to_string_pretty(v).map_err(|e| DepsError::BadPackageJson(e.to_string()))?;
    text.push('\n');
    let out = ctx.workspace.write(rel, text.as_bytes())?;
    ctx.emitter.emit(EventKind::FileWritten { path: out.path, bytes: out.bytes, created: out.created });
    Ok(())
}

/// The lockfile without what names the project, so the same packages key the same in any
/// project: top-level `name`/`version` and the root package entry (its dependencies are
/// keyed from package.json already).
fn normalized_lock(lock: &Value) -> Value {
    let mut l = lock.clone();
    if let Some(o) = l.as_object_mut() {
        o.shift_remove("name");
        o.shift_remove("version");
        if let Some(Value::Object(p)) = o.get_mut("packages") {
            p.shift_remove("");
        }
    }
    l
}

/// SHA-256 (hex) of everything that decides what an install produces.
fn cache_key(
    node: &str,
    manifest: &Map<String, Value>,
    lock: Option<&Value>,
    locals: &BTreeMap<String, String>,
) -> String {
    let mut h = Sha256::new();
    let mut line = |k: &str, v: &str| {
        h.update(k.as_bytes());
        h.update([0]);
        h.update(v.as_bytes());
        h.update([0]);
    };
    line("version", KEY_VERSION);
    line("node", node.trim());
    for key in SECTIONS {
        // Sorted, so the order the model wrote them in does not matter.
        if let Some(v) = manifest.get(*key) {
            line(key, &canonical(v));
        }
    }
    line("lock", &lock.map(|l| canonical(&normalized_lock(l))).unwrap_or_default());
    for (rel, digest) in locals {
        line(rel, digest);
    }
    hex(&h.finalize())
}

/// JSON with object keys sorted at every level.
fn canonical(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let sorted: BTreeMap<&String, Value> = m.iter().map(|(k, v)| (k, sort(v))).collect();
                Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Regular files of a local package, sorted, without its own node_modules or .git.
fn package_files(ws: &wright_sandbox::Workspace, rel: &str) -> Result<Vec<(String, Vec<u8>)>, DepsError> {
    // Read through the workspace's capability: the package is the generated code's, and a
    // folder swapped for a link mid-walk must not bring a host file into the package cache
    // (which the sandbox then mounts).
    let dir = ws.dir().open_dir(rel).map_err(|e| bad(rel, &format!("the folder is not usable: {e}")))?;
    let entries = dir
        .walk(&|name| !matches!(name, "node_modules" | ".git"))
        .map_err(|e| bad(rel, &format!("the folder is not usable: {e}")))?;
    let mut out = Vec::new();
    let mut total = 0u64;
    for e in entries.into_iter().filter(|e| e.kind == wright_sandbox::EntryKind::File) {
        total += e.len;
        if total > LOCAL_PACKAGE_LIMIT {
            return Err(bad(rel, "the local package is larger than 20 MiB"));
        }
        let bytes = dir.read(&e.path).map_err(|err| bad(rel, &format!("`{}` could not be read: {err}", e.path)))?;
        out.push((e.path, bytes));
    }
    Ok(out)
}

/// A digest of a local package's files, so editing it makes a new cache entry.
fn hash_files(files: &[(String, Vec<u8>)]) -> String {
    let mut h = Sha256::new();
    for (rel, bytes) in files {
        h.update(rel.as_bytes());
        h.update([0]);
        h.update(bytes);
        h.update([0]);
    }
    hex(&h.finalize())
}

fn absolute(p: &Path) -> Result<PathBuf, DepsError> {
    std::path::absolute(p).map_err(io("find", p))
}

/// The complete entry for `key` (following an alias link), if there is one. Paths are not
/// canonicalised: the sandbox mounts the cache at the path wright was given, so links into it
/// must use that spelling.
fn existing_entry(npm_root: &Path, key: &str) -> Option<PathBuf> {
    let path = npm_root.join(key);
    let entry = match std::fs::read_link(&path) {
        Ok(alias) if alias.components().count() == 1 && alias.is_relative() => npm_root.join(alias),
        Ok(_) => return None,
        Err(_) => path,
    };
    entry.join("node_modules").is_dir().then_some(entry)
}

/// What a staging folder is made from.
struct Staged<'a> {
    manifest: &'a Map<String, Value>,
    lock: Option<&'a Value>,
    locals: &'a BTreeMap<String, Vec<(String, Vec<u8>)>>,
    local_hashes: &'a BTreeMap<String, String>,
    node: &'a str,
}

/// Install into a fresh staging folder with the host's npm, then rename it to `key`.
async fn fill(
    ctx: &ToolContext,
    npm_root: &Path,
    key: &str,
    staged: &Staged<'_>,
    timeout: Duration,
    notes: &mut Vec<String>,
) -> Result<(PathBuf, String), DepsError> {
    remove_stale_staging(npm_root);
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let staging = npm_root.join(format!(".staging-{}-{}-{nanos}", key.get(..16).unwrap_or(key), std::process::id()));
    std::fs::create_dir(&staging).map_err(io("create", &staging))?;
    let result = fill_staging(ctx, &staging, staged, timeout, notes).await;
    let output = match result {
        Ok(out) => out,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    let entry = npm_root.join(key);
    if let Err(e) = std::fs::rename(&staging, &entry) {
        let _ = std::fs::remove_dir_all(&staging);
        // Another build filled the same entry first: use it.
        if existing_entry(npm_root, key).is_none() {
            return Err(DepsError::Io { op: "store", path: entry.display().to_string(), message: e.to_string() });
        }
    }
    let entry = existing_entry(npm_root, key).ok_or_else(|| DepsError::Io {
        op: "store",
        path: entry.display().to_string(),
        message: "missing".into(),
    })?;
    // The project will hold the lockfile npm wrote, which changes its key: point that key here
    // too, so the next install of the same set is a hit.
    if let Some(lock) = read_json(&entry.join("package-lock.json")) {
        let again = cache_key(staged.node, staged.manifest, Some(&lock), staged.local_hashes);
        if again != key && existing_entry(npm_root, &again).is_none() {
            let _ = std::fs::remove_file(npm_root.join(&again));
            let _ = std::os::unix::fs::symlink(key, npm_root.join(&again));
        }
    }
    Ok((entry, output))
}

async fn fill_staging(
    ctx: &ToolContext,
    staging: &Path,
    staged: &Staged<'_>,
    timeout: Duration,
    notes: &mut Vec<String>,
) -> Result<String, DepsError> {
    let mut pkg = Map::new();
    pkg.insert("name".into(), json!("wright-deps"));
    pkg.insert("version".into(), json!("0.0.0"));
    pkg.insert("private".into(), json!(true));
    for key in SECTIONS {
        if let Some(v) = staged.manifest.get(*key) {
            pkg.insert((*key).to_string(), v.clone());
        }
    }
    let pkg_path = staging.join("package.json");
    std::fs::write(&pkg_path, Value::Object(pkg).to_string()).map_err(io("write", &pkg_path))?;
    for (rel, files) in staged.locals {
        for (file, bytes) in files {
            let dst = staging.join(rel).join(file);
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent).map_err(io("create", parent))?;
            }
            std::fs::write(&dst, bytes).map_err(io("copy", &dst))?;
        }
    }
    if let Some(lock) = staged.lock {
        if lock_is_safe(ctx, lock, timeout).await {
            let p = staging.join("package-lock.json");
            std::fs::write(&p, lock.to_string()).map_err(io("write", &p))?;
        } else {
            notes.push(
                "package-lock.json points at sources other than the npm registry, so npm chose the versions from package.json"
                    .into(),
            );
        }
    }
    let args = [
        "install",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--no-update-notifier",
        // Local folders are copied in, not linked, so the entry holds everything it needs.
        "--install-links",
        "--include=dev",
        "--include=optional",
    ];
    let out = host(ctx, "npm", &args, staging, timeout).await?;
    if out.code != Some(0) {
        return Err(npm_error(&out.stderr, None));
    }
    let modules = staging.join("node_modules");
    std::fs::create_dir_all(&modules).map_err(io("create", &modules))?;
    // The sandbox reads the cache as another user: whatever the host's umask, make it readable.
    make_readable(staging)?;
    Ok(ctx.exec.redactor.redact(&format!("{}{}", out.stdout, out.stderr)).into_owned())
}

/// Only a lockfile whose downloads all come from the host's configured registry is handed
/// to the host's npm; one the model wrote could name any URL.
async fn lock_is_safe(ctx: &ToolContext, lock: &Value, timeout: Duration) -> bool {
    let mut resolved = Vec::new();
    collect_resolved(lock, &mut resolved);
    let remote: Vec<&str> = resolved.iter().map(String::as_str).filter(|r| r.contains("://")).collect();
    if remote.is_empty() {
        return !resolved.iter().map(|r| r.trim_start_matches("file:")).any(|r| r.starts_with('/') || r.contains(".."));
    }
    let Ok(out) = host(ctx, "npm", &["config", "get", "registry"], ctx.workspace.root(), timeout).await else {
        return false;
    };
    let registry = out.stdout.trim().trim_end_matches('/').to_string();
    !registry.is_empty() && remote.iter().all(|r| r.starts_with(&format!("{registry}/")))
}

fn collect_resolved(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("resolved", Value::String(s)) => out.push(s.clone()),
                    _ => collect_resolved(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| collect_resolved(v, out)),
        _ => {}
    }
}

fn make_readable(root: &Path) -> Result<(), DepsError> {
    use std::os::unix::fs::PermissionsExt;
    for e in walkdir::WalkDir::new(root).follow_links(false).into_iter().filter_map(Result::ok) {
        if e.file_type().is_symlink() {
            continue;
        }
        let Ok(meta) = e.metadata() else { continue };
        let mode = meta.permissions().mode();
        let want = if meta.is_dir() || mode & 0o100 != 0 { mode | 0o755 } else { mode | 0o644 };
        if want != mode {
            std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(want)).map_err(io("chmod", e.path()))?;
        }
    }
    Ok(())
}

/// Remove staging folders a crashed install left behind.
fn remove_stale_staging(npm_root: &Path) {
    let Ok(entries) = std::fs::read_dir(npm_root) else { return };
    for e in entries.filter_map(Result::ok) {
        let stale =
            e.metadata().ok().and_then(|m| m.modified().ok()).and_then(|t| t.elapsed().ok()) >= Some(STALE_STAGING);
        if e.file_name().to_string_lossy().starts_with(".staging-") && stale {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Point `link` at `target` (relative when they share a folder, [`crate::relative::link_target`]), replacing an
/// older link atomically (a new link renamed over it).
fn link_node_modules(link: &Path, target: &Path) -> Result<(), DepsError> {
    let target = &link.parent().map_or_else(|| target.to_path_buf(), |from| crate::relative::link_target(from, target));
    if std::fs::read_link(link).is_ok_and(|t| &t == target) {
        return Ok(());
    }
    let parent = link.parent().unwrap_or(link);
    let tmp = parent.join(format!(".wright-tmp-node_modules-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp).map_err(io("link", link))?;
    std::fs::rename(&tmp, link).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        DepsError::Io { op: "link", path: link.display().to_string(), message: e.to_string() }
    })
}

/// Copy the entry's lockfile into the project, named after the project, unless the project's
/// (`old`) already says the same.
fn copy_lock(
    ctx: &ToolContext,
    entry_lock: Option<Value>,
    old: Option<&Value>,
    manifest: &Map<String, Value>,
    notes: &mut Vec<String>,
) -> Result<(), DepsError> {
    let Some(mut lock) = entry_lock else { return Ok(()) };
    if let Some(o) = lock.as_object_mut() {
        for field in ["name", "version"] {
            match manifest.get(field) {
                Some(v) => o.insert(field.to_string(), v.clone()),
                None => o.shift_remove(field),
            };
        }
        if let Some(Value::Object(root)) = o.get_mut("packages").and_then(|p| p.get_mut("")) {
            for field in ["name", "version"] {
                match manifest.get(field) {
                    Some(v) => root.insert(field.to_string(), v.clone()),
                    None => root.shift_remove(field),
                };
            }
        }
    }
    if old.is_some_and(|old| *old == lock) {
        return Ok(());
    }
    match write_json(ctx, "package-lock.json", &lock) {
        Ok(()) => Ok(()),
        Err(DepsError::Path(PathError::FileTooLarge { .. } | PathError::WorkspaceFull { .. })) => {
            notes.push("package-lock.json is too large for the project's limits, so it was not written".into());
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// `node --version` of the host, part of the key (native builds and engines depend on it).
async fn node_version(ctx: &ToolContext, timeout: Duration) -> Result<String, DepsError> {
    let out = host(ctx, "node", &["--version"], ctx.workspace.root(), timeout).await?;
    Ok(out.stdout.trim().to_string())
}

/// The version a dist-tag (`latest`, `next`) of `name` points at, from the host's registry.
async fn latest(ctx: &ToolContext, name: &str, tag: &str, timeout: Duration) -> Result<String, DepsError> {
    let spec = format!("{name}@{tag}");
    let out = host(ctx, "npm", &["view", &spec, "version", "--json"], ctx.workspace.root(), timeout).await?;
    if out.code != Some(0) {
        return Err(npm_error(&out.stderr, Some(if tag == "latest" { name } else { &spec })));
    }
    let version = match serde_json::from_str::<Value>(out.stdout.trim()) {
        Ok(Value::String(v)) => Some(v),
        Ok(Value::Array(vs)) => {
            vs.iter().filter_map(Value::as_str).max_by_key(|v| version_tuple(v)).map(str::to_string)
        }
        _ => None,
    };
    version.filter(|v| !v.is_empty()).ok_or_else(|| DepsError::NotFound {
        package: spec.clone(),
        detail: "the registry lists no version for it".into(),
    })
}

fn version_tuple(v: &str) -> (u64, u64, u64) {
    let mut parts = v.split(['.', '-', '+']).map(|p| p.parse::<u64>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// npm's own error lines, sorted into "no such package", "no registry" and the rest.
fn npm_error(stderr: &str, package: Option<&str>) -> DepsError {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("npm error") || l.starts_with("npm ERR!"))
        .filter(|l| !l.contains("A complete log of this run") && !l.contains("_logs/"))
        .collect();
    let joined = lines.join("\n");
    let detail = crate::clip_tail(if lines.is_empty() { stderr.trim() } else { &joined }, 1500);
    let has = |words: &[&str]| words.iter().any(|w| stderr.contains(w));
    if has(&["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "ENETUNREACH", "EHOSTUNREACH"]) {
        return DepsError::Unreachable(detail);
    }
    if has(&["E404", "404 Not Found", "could not be found"]) {
        let package = package.map(str::to_string).unwrap_or_else(|| {
            // "404  'nosuch@*' is not in this registry." / "The requested resource 'x@*' …"
            stderr.split('\'').nth(1).unwrap_or("one of the packages").to_string()
        });
        // The line that says what was looked up, not `code E404`.
        let line = lines.iter().find(|l| l.contains("404") && !l.contains("code")).or(lines.first());
        let detail = line.map(|l| l.trim_start_matches("npm error").trim().to_string()).unwrap_or_default();
        return DepsError::NotFound { package, detail };
    }
    DepsError::Npm(detail)
}

/// What a host command printed.
struct HostOutput {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Run a host program with wright's own environment (so npm finds the host's config and
/// registry), outside the sandbox, bounded by `timeout` and the build's cancel token. The
/// unconfined runner still ends npm's whole process group on a timeout or cancel.
async fn host(
    ctx: &ToolContext,
    program: &'static str,
    args: &[&str],
    cwd: &Path,
    timeout: Duration,
) -> Result<HostOutput, DepsError> {
    let mut spec = CommandSpec::new(
        program,
        args.iter().map(|a| a.to_string()).collect(),
        cwd.to_path_buf(),
        std::env::vars().collect(),
    );
    spec.timeout = timeout;
    // npm's error lines come last and matter; keep generous head and tail.
    spec.capture_head = 256 * 1024;
    spec.capture_tail = 256 * 1024;
    let out = ProcessRunner::default().run(spec, &(), &ctx.cancel).await.map_err(|e| match e {
        RunError::NotFound { .. } => DepsError::Missing(program),
        other => DepsError::Io { op: "start", path: program.to_string(), message: other.to_string() },
    })?;
    if out.timed_out {
        return Err(DepsError::Timeout(timeout.as_secs()));
    }
    if out.cancelled {
        return Err(DepsError::Cancelled);
    }
    Ok(HostOutput { code: out.exit_code, stdout: out.stdout.render(), stderr: out.stderr.render() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn recognises_installs_and_only_installs() {
        let p = |c: &str, a: &[&str]| NpmInstall::parse(c, &words(a));
        let r = p("npm", &["install", "express", "cors"]).unwrap();
        assert_eq!(r.packages, vec!["express", "cors"]);
        assert_eq!(r.section, Section::Prod);
        assert_eq!(p("npm", &["i", "-D", "jest"]).unwrap().section, Section::Dev);
        assert!(p("npm", &["ci"]).unwrap().packages.is_empty());
        assert!(p("npm", &["install"]).is_some());
        assert!(p("/usr/bin/npm", &["add", "x"]).is_some());
        assert!(p("npm", &["install", "-g", "x"]).unwrap().global);
        assert_eq!(p("npm", &["install", "--legacy-peer-deps", "x"]).unwrap().ignored, vec!["--legacy-peer-deps"]);
        assert_eq!(p("sh", &["-c", "npm install express"]).unwrap().packages, vec!["express"]);
        assert!(p("sh", &["-c", "npm install express && node server.js"]).is_none());
        assert!(p("sh", &["-c", "npm install $(cat list)"]).is_none());
        assert!(p("npm", &["test"]).is_none());
        assert!(p("npm", &["run", "install"]).is_none());
        assert!(p("node", &["install"]).is_none());
        assert!(p("npm", &[]).is_none());
        assert!(mentions_npm_install("sh", &words(&["-c", "npm i x && node a.js"])));
        assert!(!mentions_npm_install("npm", &words(&["test"])));
    }

    #[test]
    fn specs_are_checked() {
        let re = name_re().unwrap();
        let s = |x: &str| parse_spec(x, &re).map(|w| (w.name, w.spec));
        assert_eq!(s("express").unwrap(), ("express".into(), WantedSpec::Latest));
        assert_eq!(s("express@4").unwrap(), ("express".into(), WantedSpec::Range("4".into())));
        assert_eq!(s("express@^4.18.0").unwrap(), ("express".into(), WantedSpec::Range("^4.18.0".into())));
        assert_eq!(s("@types/node@20").unwrap(), ("@types/node".into(), WantedSpec::Range("20".into())));
        assert_eq!(s("@scope/x").unwrap(), ("@scope/x".into(), WantedSpec::Latest));
        assert_eq!(s("react@next").unwrap(), ("react".into(), WantedSpec::Tag("next".into())));
        assert_eq!(s("x@>=1.2 <2").unwrap().1, WantedSpec::Range(">=1.2 <2".into()));
        assert_eq!(s("file:vendor/x").unwrap().1, WantedSpec::Local("vendor/x".into()));
        assert_eq!(s("./vendor/x").unwrap().1, WantedSpec::Local("./vendor/x".into()));
        for refused in [
            "git+https://github.com/a/b.git",
            "user/repo",
            "https://evil.example/x.tgz",
            "--registry=http://x",
            "-x",
            "x@npm:y",
            "x@http://a/b",
            "",
            "a b",
        ] {
            assert!(s(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn key_ignores_order_and_project_name() {
        let m = |v: Value| v.as_object().unwrap().clone();
        let a = m(json!({"name": "a", "dependencies": {"x": "^1", "y": "^2"}}));
        let b = m(json!({"name": "b", "dependencies": {"y": "^2", "x": "^1"}}));
        let none = BTreeMap::new();
        assert_eq!(cache_key("v20", &a, None, &none), cache_key("v20", &b, None, &none));
        assert_ne!(cache_key("v20", &a, None, &none), cache_key("v22", &a, None, &none));
        let dev = m(json!({"devDependencies": {"y": "^2", "x": "^1"}}));
        assert_ne!(cache_key("v20", &a, None, &none), cache_key("v20", &dev, None, &none));
        let l1 = json!({"name": "a", "packages": {"": {"name": "a"}, "node_modules/x": {"version": "1.0.0"}}});
        let l2 = json!({"name": "b", "packages": {"": {"name": "b"}, "node_modules/x": {"version": "1.0.0"}}});
        assert_eq!(cache_key("v20", &a, Some(&l1), &none), cache_key("v20", &a, Some(&l2), &none));
        assert_ne!(cache_key("v20", &a, Some(&l1), &none), cache_key("v20", &a, None, &none));
        assert_eq!(cache_key("v20", &a, None, &none).len(), 64);
    }

    #[test]
    fn npm_errors_are_sorted() {
        let e = npm_error("npm error code E404\nnpm error 404 Not Found - GET https://r/nosuch - Not found\n", None);
        assert!(matches!(e, DepsError::NotFound { .. }), "{e}");
        let e = npm_error("npm error code ENOTFOUND\nnpm error network request failed\n", None);
        assert!(matches!(e, DepsError::Unreachable(_)), "{e}");
        let e = npm_error("npm error code ERESOLVE\n", None);
        assert!(matches!(e, DepsError::Npm(_)), "{e}");
    }

    #[test]
    fn overrides_cannot_point_anywhere() {
        let re = name_re().unwrap();
        assert!(check_overrides(&json!({"a": "^1", "b": {"c": "$b", ".": "2.x"}}), &re).is_ok());
        assert!(check_overrides(&json!({"a": "https://evil.example/a.tgz"}), &re).is_err());
        assert!(check_overrides(&json!({"a": {"b": "git+ssh://x"}}), &re).is_err());
        assert!(check_overrides(&json!({"a": "file:../x"}), &re).is_err());
    }
}
