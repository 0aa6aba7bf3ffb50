//! Paths and packages in tool output: a place named in the text, the project-relative file it
//! is (rules in the module docs of [`super`]), and the packages a message, a path or a source
//! file names.

use super::patterns::{
    DYNAMIC_IMPORT, IMPORT_FROM, LOCATION, MISSING_MODULE_NAME, NODE_MODULES_ROOT, PACKAGE_NAME, REQUIRE, caps, group,
    is_match, number,
};
use regex::Captures;

/// Directories that mark where a project-relative path starts (rule 3 in the module docs).
const PROJECT_DIRS: &[&str] =
    &["tests", "test", "__tests__", "spec", "src", "server", "client", "public", "lib", "static"];

/// Test tooling whose frames show up in stacks without being what the error is about.
const TOOLING_PACKAGES: &[&str] = &["expect", "pretty-format", "mocha", "vitest", "tap", "source-map-support"];

/// Node's built-in modules: not packages anyone installs, so never a "library".
const NODE_BUILTINS: &[&str] = &[
    "assert",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "domain",
    "events",
    "fs",
    "http",
    "http2",
    "https",
    "inspector",
    "module",
    "net",
    "os",
    "path",
    "perf_hooks",
    "process",
    "querystring",
    "readline",
    "repl",
    "stream",
    "string_decoder",
    "sys",
    "timers",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
];

/// A place named in the text, before it is made project-relative.
#[derive(Debug, Clone)]
pub(super) struct Loc {
    pub(super) path: String,
    pub(super) line: Option<u32>,
    pub(super) column: Option<u32>,
}

impl Loc {
    pub(super) fn parse(s: &str) -> Option<Loc> {
        let c = caps(&LOCATION, s.trim())?;
        Some(Loc { path: group(&c, "path")?.to_string(), line: number(&c, "line"), column: number(&c, "col") })
    }

    pub(super) fn from_frame(c: &Captures<'_>) -> Option<Loc> {
        Some(Loc { path: group(c, "loc")?.to_string(), line: number(c, "line"), column: number(c, "col") })
    }
}

/// The package a "cannot find / resolve" message names, if it is a package and not a path.
pub(super) fn missing_package(message: &str) -> Option<String> {
    caps(&MISSING_MODULE_NAME, message).and_then(|c| group(&c, "name").and_then(package_name))
}

/// The package a `node_modules/<pkg>/…` path belongs to, unless it is test tooling.
pub(super) fn library_from_path(path: &str) -> Option<String> {
    let p = path.replace('\\', "/");
    let idx = p.rfind("node_modules/")?;
    let mut parts = p.get(idx + "node_modules/".len()..)?.split('/');
    let first = parts.next()?;
    let name = if first.starts_with('@') { format!("{first}/{}", parts.next()?) } else { first.to_string() };
    // The file itself must follow: `node_modules/x` alone is not inside a package.
    parts.next()?;
    let name = package_name(&name)?;
    let tooling = name.starts_with("jest")
        || name.starts_with("@jest/")
        || name.starts_with("@babel/")
        || name.starts_with("@vitest/")
        || TOOLING_PACKAGES.contains(&name.as_str());
    (!tooling).then_some(name)
}

/// The installable package a module specifier refers to: `lodash/fp` → `lodash`,
/// `@scope/pkg/sub` → `@scope/pkg`; `None` for paths, URLs, `node:` and built-in modules.
pub(super) fn package_name(spec: &str) -> Option<String> {
    let s = spec.trim();
    if s.is_empty() || s.starts_with(['.', '/', '#', '~']) || s.contains(':') || s.contains('\\') {
        return None;
    }
    let mut parts = s.split('/');
    let first = parts.next()?;
    let name = if first.starts_with('@') { format!("{first}/{}", parts.next()?) } else { first.to_string() };
    if name.len() > 214 || !is_match(&PACKAGE_NAME, &name) || NODE_BUILTINS.contains(&name.as_str()) {
        return None;
    }
    Some(name)
}

/// Absolute roots the text reveals through `…/node_modules/` paths, longest first.
pub(super) fn project_roots(lines: &[String]) -> Vec<String> {
    let mut roots: Vec<String> = Vec::new();
    for line in lines.iter().filter(|l| l.contains("node_modules")) {
        let Some(re) = NODE_MODULES_ROOT.as_ref() else { break };
        for c in re.captures_iter(line) {
            if let Some(root) = group(&c, "root") {
                let root = root.replace('\\', "/");
                if !roots.contains(&root) {
                    roots.push(root);
                }
            }
        }
    }
    roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
    roots
}

/// The project-relative file for a path from the text, following the rules in the module docs.
pub(super) fn project_file(raw: &str, roots: &[String]) -> Option<String> {
    let mut p = raw.trim().replace('\\', "/").replace("%20", " ");
    if let Some(rest) = p.strip_prefix("file://") {
        p = rest.to_string();
    }
    // Pages served by a local server: `http://localhost:3000/js/app.js` is `js/app.js`.
    for scheme in ["http://", "https://"] {
        if let Some(rest) = p.strip_prefix(scheme) {
            p = rest.split_once('/').map(|(_, path)| path.to_string())?;
        }
    }
    // `file:///C:/x` leaves `/C:/x`.
    let b = p.as_bytes();
    if b.len() > 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b':' {
        p.remove(0);
    }
    let has_drive = p.as_bytes().get(1) == Some(&b':');
    if p.is_empty()
        || p.starts_with("node:")
        || p.starts_with("internal/")
        || p.contains('<')
        || p.starts_with("node_modules/")
        || p.contains("/node_modules/")
        || (p.contains(':') && !has_drive)
    {
        return None;
    }
    let comps: Vec<&str> = p.split('/').filter(|c| !c.is_empty() && *c != "." && *c != "..").collect();
    let name = *comps.last()?;
    let looks_like_file = name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric())
    });
    if !looks_like_file {
        return None;
    }
    let absolute = p.starts_with('/') || has_drive;
    if !absolute && !p.starts_with("../") {
        return Some(comps.join("/"));
    }
    for root in roots {
        if let Some(rest) = p.strip_prefix(root.as_str()).and_then(|r| r.strip_prefix('/')) {
            if !rest.is_empty() {
                return Some(rest.to_string());
            }
        }
    }
    if let Some(k) = comps.iter().rposition(|c| *c == "builds") {
        if k + 2 < comps.len() {
            return Some(comps[k + 2..].join("/"));
        }
    }
    let dirs = &comps[..comps.len() - 1];
    if let Some(mut k) = dirs.iter().rposition(|c| PROJECT_DIRS.contains(c)) {
        while k > 0 && PROJECT_DIRS.contains(&dirs[k - 1]) {
            k -= 1;
        }
        return Some(comps[k..].join("/"));
    }
    Some(name.to_string())
}

/// Package names `text` is about: `require('x')`, `import … from 'x'`, `import('x')`, or the
/// dependencies when `text` is a package.json. Bare names only (no paths, URLs, `node:` or
/// built-in modules), reduced to the package (`lodash/fp` → `lodash`), in order of appearance.
pub fn libraries_in_source(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |spec: &str| {
        if let Some(name) = package_name(spec) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    };
    if text.trim_start().starts_with('{') {
        if let Ok(serde_json::Value::Object(manifest)) = serde_json::from_str::<serde_json::Value>(text) {
            for key in ["dependencies", "devDependencies", "peerDependencies", "optionalDependencies"] {
                if let Some(serde_json::Value::Object(deps)) = manifest.get(key) {
                    deps.keys().for_each(|k| add(k));
                }
            }
            return out;
        }
    }
    let mut found: Vec<(usize, String)> = Vec::new();
    for p in [&REQUIRE, &IMPORT_FROM, &DYNAMIC_IMPORT] {
        let Some(re) = p.as_ref() else { continue };
        for c in re.captures_iter(text) {
            let spec = (1..=3).find_map(|g| c.get(g));
            if let (Some(whole), Some(spec)) = (c.get(0), spec) {
                found.push((whole.start(), spec.as_str().to_string()));
            }
        }
    }
    found.sort_by_key(|(at, _)| *at);
    for (_, spec) in &found {
        add(spec);
    }
    out
}
