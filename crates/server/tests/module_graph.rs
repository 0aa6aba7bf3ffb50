//! The modules of every crate under `crates/` import each other in one direction only: in the
//! server, resources (builds, admin, auth, previews, ops, …) depend on shared leaves (errors,
//! state, views), the router depends on the resources, and nothing depends back up; in the
//! agent, the build depends on its ending and its learning, which depend on the build's types,
//! not on the build. This reads every crate's `src/**/*.rs` (a crate's `src/bin/` programs are
//! crates of their own and are left out),
//! collects which top-level modules each module names (`crate::NAME`, `use crate::{…}`,
//! `super::…`, and in `lib.rs` its own modules' paths) and fails, printing the cycle, when the
//! graph has one. An item of `lib.rs` itself (the crate root) is a node too, so a module that
//! uses `crate::Something` defined there depends on the root that declares it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crate root's node.
const ROOT: &str = "lib";

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Dollar,
    Other,
}

/// Rust source as identifiers, `::`, braces and commas, without comments, strings and
/// character literals (a path in a comment or a string is not a dependency).
fn tokens(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let ident_start = |ch: char| ch.is_alphabetic() || ch == '_';
    let ident_char = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (ch == 'r' || (ch == 'b' && next == Some('r'))) && raw_string_at(&c, i).is_some() {
            i = raw_string_at(&c, i).unwrap_or(c.len());
        } else if ch == '"' || (ch == 'b' && next == Some('"')) {
            i += if ch == 'b' { 2 } else { 1 };
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if ch == '\'' || (ch == 'b' && next == Some('\'')) {
            let start = if ch == 'b' { i + 1 } else { i };
            if c.get(start + 1) == Some(&'\\') {
                // An escaped character literal: to its closing quote.
                i = start + 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(start + 2) == Some(&'\'') {
                i = start + 3;
            } else {
                // A lifetime or label.
                i = start + 1;
                while i < c.len() && ident_char(c[i]) {
                    i += 1;
                }
            }
        } else if ch == 'r' && next == Some('#') && c.get(i + 2).is_some_and(|&n| ident_start(n)) {
            let start = i + 2;
            i = start;
            while i < c.len() && ident_char(c[i]) {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
        } else if ident_start(ch) {
            let start = i;
            while i < c.len() && ident_char(c[i]) {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
        } else if ch == ':' && next == Some(':') {
            out.push(Tok::PathSep);
            i += 2;
        } else {
            out.push(match ch {
                '{' => Tok::Open,
                '}' => Tok::Close,
                ',' => Tok::Comma,
                ';' => Tok::Semi,
                '*' => Tok::Star,
                '$' => Tok::Dollar,
                _ => Tok::Other,
            });
            i += 1;
        }
    }
    out
}

/// Where a raw string (`r"…"`, `r#"…"#`, `br"…"`) that starts at `i` ends, if one does.
fn raw_string_at(c: &[char], i: usize) -> Option<usize> {
    let mut j = if c[i] == 'b' { i + 2 } else { i + 1 };
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if c.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < c.len() {
        if c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(c.len())
}

fn ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// The first names of the paths that start at `i` (just after `crate::`): `a` of `a::b`, or
/// each of `{a::b, c, self}`.
fn first_names(toks: &[Tok], i: usize) -> Vec<String> {
    match toks.get(i) {
        Some(Tok::Ident(s)) => vec![s.clone()],
        Some(Tok::Open) => {
            let mut names = Vec::new();
            let mut depth = 0;
            let mut at_start = true;
            for t in &toks[i..] {
                match t {
                    Tok::Open => {
                        depth += 1;
                        at_start = depth == 1;
                    }
                    Tok::Close => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Tok::Comma if depth == 1 => at_start = true,
                    Tok::Ident(s) if at_start && depth == 1 => {
                        names.push(s.clone());
                        at_start = false;
                    }
                    _ => at_start = false,
                }
            }
            names
        }
        _ => vec![],
    }
}

/// One source file: its module path (`[]` for `lib.rs`, `["builds"]` for `builds.rs` or
/// `builds/mod.rs`, `["builds", "files"]` for `builds/files.rs`) and its text.
struct Source {
    module: Vec<String>,
    text: String,
}

fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs").to_string();
        if stem != "mod" && !(parts.is_empty() && (stem == "lib" || stem == "main")) {
            parts.push(stem);
        }
    }
    parts
}

/// The names the crate root re-exports from its modules (`pub use build::{BuildRequest, run_build};`
/// in `lib.rs`), each with the module that defines it: `crate::BuildRequest` is a use of
/// `build`, not of the root (a re-export is a door, not an item of the root).
fn reexports(sources: &[Source], top_modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(root) = sources.iter().find(|s| s.module.is_empty()) else { return out };
    let toks = tokens(&root.text);
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Open => depth += 1,
            Tok::Close => depth = depth.saturating_sub(1),
            Tok::Ident(w) if w == "use" && depth == 0 => {
                let mut j = i + 1;
                if matches!(ident(toks.get(j)), Some("crate" | "self")) && toks.get(j + 1) == Some(&Tok::PathSep) {
                    j += 2;
                }
                let Some(module) = ident(toks.get(j)).filter(|m| top_modules.contains(*m)) else { continue };
                if toks.get(j + 1) == Some(&Tok::PathSep) && toks.get(j + 2) == Some(&Tok::Star) {
                    // `pub use types::*`: every public item the module's file declares.
                    let file = sources.iter().filter(|s| s.module.len() == 1 && s.module[0] == module);
                    for name in file.flat_map(|s| public_items(&s.text)) {
                        out.insert(name, module.to_string());
                    }
                    continue;
                }
                let end = toks[j..].iter().position(|t| *t == Tok::Semi).map_or(toks.len(), |k| j + k);
                for k in j + 1..end {
                    let name_ends = matches!(toks.get(k + 1), Some(Tok::Comma | Tok::Close | Tok::Semi));
                    if let (Some(name), true) = (ident(toks.get(k)), name_ends)
                        && name != "self"
                    {
                        out.insert(name.to_string(), module.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The names of the `pub` items (`pub struct Name`, `pub fn name`, …) at the top of a file.
fn public_items(text: &str) -> Vec<String> {
    const KINDS: &[&str] = &["struct", "enum", "trait", "type", "fn", "const", "static", "mod", "union"];
    let toks = tokens(text);
    let mut depth = 0usize;
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Open => depth += 1,
            Tok::Close => depth = depth.saturating_sub(1),
            Tok::Ident(w) if w == "pub" && depth == 0 => {
                // `pub async fn`, `pub unsafe fn`: the name follows the last keyword.
                let mut j = i + 1;
                while matches!(ident(toks.get(j)), Some("async" | "unsafe" | "extern")) {
                    j += 1;
                }
                if let (Some(kind), Some(name)) = (ident(toks.get(j)), ident(toks.get(j + 1)))
                    && KINDS.contains(&kind)
                {
                    out.push(name.to_string());
                }
            }
            _ => {}
        }
    }
    out
}

/// Which top-level modules each top-level module (and the root, [`ROOT`]) refers to.
fn graph(sources: &[Source]) -> BTreeMap<String, BTreeSet<String>> {
    let top_modules: BTreeSet<String> = sources.iter().filter_map(|s| s.module.first().cloned()).collect();
    let doors = reexports(sources, &top_modules);
    let node = |first: Option<&String>| first.cloned().unwrap_or_else(|| ROOT.to_string());
    // A name right after `crate::` (or after enough `super::` to reach the root).
    let at_root = |name: &str| {
        if top_modules.contains(name) {
            name.to_string()
        } else {
            doors.get(name).cloned().unwrap_or_else(|| ROOT.to_string())
        }
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in sources {
        let from = node(s.module.first());
        let toks = tokens(&s.text);
        let mut targets = BTreeSet::new();
        // Inline modules (`mod tests { … }`): their names, and the brace depth that closes each.
        let mut inline: Vec<(String, usize)> = Vec::new();
        let mut depth = 0usize;
        let mut i = 0;
        while i < toks.len() {
            let prev = if i == 0 { None } else { toks.get(i - 1) };
            match &toks[i] {
                Tok::Open => depth += 1,
                Tok::Close => {
                    depth = depth.saturating_sub(1);
                    if inline.last().is_some_and(|(_, d)| *d == depth) {
                        inline.pop();
                    }
                }
                Tok::Ident(w) if w == "mod" => {
                    if let (Some(name), Some(Tok::Open)) = (ident(toks.get(i + 1)), toks.get(i + 2)) {
                        inline.push((name.to_string(), depth));
                        depth += 1;
                        i += 3;
                        continue;
                    }
                }
                Tok::Ident(w) if prev != Some(&Tok::PathSep) && prev != Some(&Tok::Dollar) => {
                    let sep = toks.get(i + 1) == Some(&Tok::PathSep);
                    let root_path = w == "crate" || (w == "self" && s.module.is_empty() && inline.is_empty());
                    if sep && root_path {
                        for name in first_names(&toks, i + 2) {
                            targets.insert(at_root(&name));
                        }
                    } else if sep && w == "super" {
                        let mut ups = 0;
                        let mut j = i;
                        while ident(toks.get(j)) == Some("super") && toks.get(j + 1) == Some(&Tok::PathSep) {
                            ups += 1;
                            j += 2;
                        }
                        let mut here: Vec<String> = s.module.clone();
                        here.extend(inline.iter().map(|(n, _)| n.clone()));
                        let base = &here[..here.len().saturating_sub(ups)];
                        if base.is_empty() {
                            for name in first_names(&toks, j) {
                                targets.insert(at_root(&name));
                            }
                        } else {
                            targets.insert(base[0].clone());
                        }
                        i = j;
                        continue;
                    } else if sep && s.module.is_empty() && inline.is_empty() && top_modules.contains(w) {
                        // In `lib.rs`, `queue::start` and `pub use config::ServeConfig` name its modules.
                        targets.insert(w.clone());
                    }
                }
                _ => {}
            }
            i += 1;
        }
        targets.remove(&from);
        edges.entry(from).or_default().extend(targets);
    }
    edges
}

/// Every cycle: the modules that reach each other (a strongly connected component of more than
/// one module), and one closed path through them.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<(Vec<String>, Vec<String>)> {
    let nodes: BTreeSet<&String> = edges.keys().chain(edges.values().flatten()).collect();
    let reaches = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            for m in edges.get(n).into_iter().flatten() {
                if seen.insert(m) {
                    todo.push(m);
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<&String>> = nodes.iter().map(|n| (*n, reaches(n))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for n in &nodes {
        if done.contains(n) || !reach[n].contains(n) {
            continue;
        }
        let component: BTreeSet<&String> = reach[n].iter().filter(|m| reach[*m].contains(n)).copied().collect();
        done.extend(component.iter().copied());
        out.push((component.iter().map(|m| m.to_string()).collect(), closed_path(edges, n, &component)));
    }
    out
}

/// A shortest path from `start` back to itself inside `component`.
fn closed_path(
    edges: &BTreeMap<String, BTreeSet<String>>,
    start: &String,
    component: &BTreeSet<&String>,
) -> Vec<String> {
    let mut came_from: BTreeMap<&String, &String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        for m in edges.get(n).into_iter().flatten() {
            if m == start {
                let mut path = vec![n];
                let mut at = n;
                while at != start {
                    at = came_from[at];
                    path.push(at);
                }
                path.reverse();
                path.push(start);
                return path.into_iter().cloned().collect();
            }
            if component.contains(m) && !came_from.contains_key(m) {
                came_from.insert(m, n);
                queue.push_back(m);
            }
        }
    }
    vec![start.clone()]
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The crates of the workspace: every folder under `crates/` with a `src`.
fn crates() -> std::io::Result<Vec<(String, PathBuf)>> {
    let all = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&all)? {
        let dir = entry?.path();
        let src = dir.join("src");
        if src.is_dir() {
            out.push((dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), src));
        }
    }
    out.sort();
    Ok(out)
}

fn sources_of(src: &Path) -> std::io::Result<Vec<Source>> {
    let mut files = Vec::new();
    rust_files(src, &mut files)?;
    files.sort();
    files
        .iter()
        .filter(|f| !f.starts_with(src.join("bin")))
        .map(|f| {
            let rel = f.strip_prefix(src).map_err(std::io::Error::other)?;
            Ok(Source { module: module_of(rel), text: std::fs::read_to_string(f)? })
        })
        .collect()
}

fn describe(edges: &BTreeMap<String, BTreeSet<String>>) -> String {
    edges
        .iter()
        .map(|(from, to)| format!("  {from} -> {}", to.iter().cloned().collect::<Vec<_>>().join(", ")))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_crate_has_a_module_import_cycle() -> std::io::Result<()> {
    let crates = crates()?;
    // Not vacuous: the crates were found, and the server's files and imports were read.
    assert!(crates.len() > 20, "only {} crates found", crates.len());
    let mut problems = Vec::new();
    for (name, src) in &crates {
        let sources = sources_of(src)?;
        let edges = graph(&sources);
        if name == "server" {
            assert!(sources.len() > 5, "only {} source files found", sources.len());
            assert!(edges.values().map(BTreeSet::len).sum::<usize>() > 10, "too few imports:\n{}", describe(&edges));
        }
        let found = cycles(&edges);
        for (members, path) in found {
            problems.push(format!(
                "crates/{name}: {} (all in one cycle: {})\n{}",
                path.join(" -> "),
                members.join(", "),
                describe(&edges)
            ));
        }
    }
    assert!(problems.is_empty(), "module import cycles:\n{}", problems.join("\n\n"));
    Ok(())
}

fn made_up(files: &[(&str, &str)]) -> Vec<Source> {
    files.iter().map(|(path, text)| Source { module: module_of(Path::new(path)), text: text.to_string() }).collect()
}

#[test]
fn the_reader_finds_crate_super_and_root_paths_and_their_cycles() {
    let sources = made_up(&[
        (
            "lib.rs",
            "mod a; mod b; mod c; mod d; mod e; pub use e::*; pub use a::Thing; pub struct State; fn f() { c::go() }",
        ),
        // `super::` at the top of a file is the root; inside `mod tests` it is the file itself.
        (
            "a.rs",
            "const C: char = '{'; use super::State; mod tests { use super::*; use crate::a::X; } fn g() { super::b::f() }",
        ),
        ("b.rs", "use crate::{c::Y, self as me}; /* crate::a */ const S: &str = \"crate::a\";"),
        ("c.rs", "fn x<'a>(s: &'a str) -> &'a str { let _ = r#\"crate::b\"#; s }"),
        ("c/inner.rs", "use super::super::a::X; use super::Y;"),
        // A name the root re-exports is a use of the module that defines it.
        ("d.rs", "use crate::Thing; fn f() -> crate::State { todo!() } fn g(_: crate::Glob) {}"),
        ("e.rs", "pub struct Glob; pub(crate) struct Hidden; mod inner { pub struct Deep; }"),
    ]);
    let edges = graph(&sources);
    let names = |n: &str| edges.get(n).map(|s| s.iter().cloned().collect::<Vec<_>>()).unwrap_or_default();
    assert_eq!(names("lib"), ["a", "c", "e"]);
    assert_eq!(names("a"), ["b", "lib"]);
    assert_eq!(names("b"), ["c", "lib"]);
    assert_eq!(names("c"), ["a"]);
    assert_eq!(names("d"), ["a", "e", "lib"]);
    let found = cycles(&edges);
    let members = vec!["a".to_string(), "b".into(), "c".into(), "lib".into()];
    assert_eq!(found, [(members, vec!["a".to_string(), "lib".into(), "a".into()])], "{}", describe(&edges));
}
