//! Python dependencies: `requirements.txt` (with `-r`/`-c` files inside the project), else
//! `pyproject.toml`'s PEP 621 `[project] dependencies` and `[project.optional-dependencies]`.
//!
//! Every spec is checked ([`spec`]) before any host tool runs; the accepted ones are rebuilt
//! into a clean requirements file in a staging folder of the cache, where the HOST's pip
//! downloads wheels for the SANDBOX's interpreter ([`fetch`]). The sandbox then makes a venv
//! in the build's home and installs from that wheelhouse with `--no-index`.

mod fetch;
mod spec;
#[cfg(test)]
mod tests;

use crate::cache;
use crate::types::{Ecosystem, PackagesError, Prepared, Refusal, Settings, io_err, sandbox_home};
use sha2::{Digest, Sha256};
use spec::{Line, Requirement};
use std::collections::BTreeSet;
use std::io::Read;
use tokio_util::sync::CancellationToken;
use wright_beneath::{Dir, Kind};

/// Bumped when the layout of a cache entry or the way it is filled changes.
const KEY_VERSION: &str = "wright-python-cache v1";
/// Largest manifest read; a requirements file is a few kilobytes.
const MAX_MANIFEST: u64 = 1 << 20;
/// Deepest chain of `-r` includes followed.
const MAX_INCLUDE_DEPTH: usize = 8;
/// Most requirements one project may declare.
const MAX_SPECS: usize = 500;

/// What the project declares, checked.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Declared {
    pub requirements: Vec<Requirement>,
    pub constraints: Vec<Requirement>,
    /// Global flags kept (`--pre`, …), sorted.
    pub flags: BTreeSet<&'static str>,
}

impl Declared {
    /// The clean requirements file: only checked lines, rebuilt from their parts.
    pub fn requirements_txt(&self) -> String {
        let mut out = String::from("# written by wright from the project's checked requirements\n");
        for f in &self.flags {
            out.push_str(&format!("{f}\n"));
        }
        if !self.constraints.is_empty() {
            out.push_str("-c constraints.txt\n");
        }
        for r in sorted_lines(&self.requirements) {
            out.push_str(&format!("{r}\n"));
        }
        out
    }

    pub fn constraints_txt(&self) -> String {
        sorted_lines(&self.constraints).into_iter().map(|l| format!("{l}\n")).collect()
    }

    /// SHA-256 of the normalized set, the interpreter it is fetched for and what is allowed.
    pub fn key(&self, python_version: &str, implementation: &str, allow_sdists: bool) -> String {
        let mut h = Sha256::new();
        h.update(format!("{KEY_VERSION}\n{implementation}{python_version}\nsdists={allow_sdists}\n"));
        h.update(self.requirements_txt());
        h.update("\n--constraints--\n");
        h.update(self.constraints_txt());
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

fn sorted_lines(reqs: &[Requirement]) -> Vec<String> {
    let set: BTreeSet<String> = reqs.iter().map(Requirement::line).collect();
    set.into_iter().collect()
}

pub(crate) async fn prepare(
    project: &Dir,
    settings: &Settings,
    sandbox_env: &[(String, String)],
    cancel: &CancellationToken,
) -> Result<Prepared, PackagesError> {
    // Checked first: nothing on the host runs for a refused project.
    let declared = read_declared(project)?;
    let home = sandbox_home(sandbox_env)?.display().to_string();
    let target = fetch::sandbox_target(fetch::SANDBOX_PYTHONS, &settings.host_env, cancel).await?;
    let key = declared.key(&target.version, &target.implementation, settings.allow_sdists);
    let venv = format!("{}/.venvs/{}", home.trim_end_matches('/'), &key[..16]);
    let python = target.python.display().to_string();
    let mut prepared = Prepared {
        key: key.clone(),
        packages: sorted_lines(&declared.requirements),
        setup: vec![vec![python, "-m".into(), "venv".into(), "--system-site-packages".into(), venv.clone()]],
        env: vec![
            ("PATH".into(), format!("{venv}/bin")),
            ("VIRTUAL_ENV".into(), venv.clone()),
            ("PIP_NO_INDEX".into(), "1".into()),
            ("PIP_DISABLE_PIP_VERSION_CHECK".into(), "1".into()),
        ],
        ..Prepared::default()
    };
    if declared.requirements.is_empty() {
        return Ok(prepared);
    }
    let entry = cache::entry(&settings.cache_root, Ecosystem::Python, &key);
    if !entry.join("wheelhouse").is_dir() {
        fill(&entry, &declared, &target, settings, cancel).await?;
        prepared.fetched = true;
    }
    cache::touch(&entry);
    prepared.bytes = cache::size(&entry);
    let wheelhouse = entry.join("wheelhouse").display().to_string();
    let mut install = vec![
        format!("{venv}/bin/python"),
        "-m".into(),
        "pip".into(),
        "install".into(),
        "--no-index".into(),
        "--no-input".into(),
        "--disable-pip-version-check".into(),
        "--find-links".into(),
        wheelhouse.clone(),
        "-r".into(),
        entry.join("requirements.txt").display().to_string(),
    ];
    if settings.allow_sdists {
        // A source distribution builds in the sandbox with the venv's (the system's) setuptools:
        // build isolation would need the build backend from the network.
        install.push("--no-build-isolation".into());
    }
    prepared.setup.push(install);
    prepared.env.push(("PIP_FIND_LINKS".into(), wheelhouse));
    Ok(prepared)
}

/// Fetch on the host into a staging folder and move it into place.
async fn fill(
    entry: &std::path::Path,
    declared: &Declared,
    target: &fetch::Target,
    settings: &Settings,
    cancel: &CancellationToken,
) -> Result<(), PackagesError> {
    let key = entry.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let staging = cache::staging(&settings.cache_root, Ecosystem::Python, key)?;
    let result = async {
        let req = staging.join("requirements.txt");
        std::fs::write(&req, declared.requirements_txt()).map_err(io_err("writing", &req))?;
        if !declared.constraints.is_empty() {
            let c = staging.join("constraints.txt");
            std::fs::write(&c, declared.constraints_txt()).map_err(io_err("writing", &c))?;
        }
        let wheelhouse = staging.join("wheelhouse");
        std::fs::create_dir(&wheelhouse).map_err(io_err("creating", &wheelhouse))?;
        fetch::download(&staging, target, settings, cancel).await
    }
    .await;
    match result {
        Ok(()) => cache::publish(&staging, entry),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(e)
        }
    }
}

/// Read and check the project's manifest. Every bad spec becomes a [`Refusal`]; any refusal
/// fails the whole set.
pub(crate) fn read_declared(project: &Dir) -> Result<Declared, PackagesError> {
    let mut declared = Declared::default();
    let mut refusals = Vec::new();
    match project.meta("requirements.txt") {
        Ok(m) if m.kind == Kind::File => {
            let mut walk = Walk { project, stack: Vec::new(), seen: BTreeSet::new() };
            walk.file("requirements.txt", false, &mut declared, &mut refusals)?;
        }
        Ok(_) => {
            return Err(PackagesError::BadManifest {
                file: "requirements.txt".into(),
                message: "it is not a regular file (a link or a folder); write it as a plain file".into(),
            });
        }
        Err(wright_beneath::Error::NotFound(_)) => match project.meta("pyproject.toml") {
            Ok(m) if m.kind == Kind::File => pyproject(project, &mut declared, &mut refusals)?,
            Ok(_) => {
                return Err(PackagesError::BadManifest {
                    file: "pyproject.toml".into(),
                    message: "it is not a regular file (a link or a folder); write it as a plain file".into(),
                });
            }
            Err(wright_beneath::Error::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        },
        Err(e) => return Err(e.into()),
    }
    if declared.requirements.len() + declared.constraints.len() > MAX_SPECS {
        return Err(PackagesError::BadManifest {
            file: "requirements.txt".into(),
            message: format!("more than {MAX_SPECS} requirements are declared"),
        });
    }
    refusals.dedup();
    if refusals.is_empty() { Ok(declared) } else { Err(PackagesError::Refused(refusals)) }
}

/// Text of a manifest, bounded and UTF-8.
fn read_text(project: &Dir, rel: &str) -> Result<String, PackagesError> {
    let (file, meta) = project.open_file(rel)?;
    let bad = |message: String| PackagesError::BadManifest { file: rel.to_string(), message };
    if meta.len > MAX_MANIFEST {
        return Err(bad(format!("it is larger than {MAX_MANIFEST} bytes")));
    }
    let mut bytes = Vec::new();
    file.take(MAX_MANIFEST + 1).read_to_end(&mut bytes).map_err(|e| bad(e.to_string()))?;
    String::from_utf8(bytes).map_err(|_| bad("it is not UTF-8 text".into()))
}

/// A walk through a requirements file and the files it includes.
struct Walk<'a> {
    project: &'a Dir,
    /// The files being read, outermost first (an include of one of them is a cycle).
    stack: Vec<String>,
    /// Files already read (each is read once).
    seen: BTreeSet<String>,
}

impl Walk<'_> {
    fn file(
        &mut self,
        rel: &str,
        constraints: bool,
        out: &mut Declared,
        refusals: &mut Vec<Refusal>,
    ) -> Result<(), PackagesError> {
        self.seen.insert(rel.to_string());
        self.stack.push(rel.to_string());
        let text = read_text(self.project, rel)?;
        for (_, line) in spec::logical_lines(&text) {
            let refuse = |reason: String| Refusal { file: rel.to_string(), spec: line.clone(), reason };
            match spec::parse_line(&line) {
                Err(reason) => refusals.push(refuse(reason)),
                Ok(Line::Requirement(r)) if constraints && !r.extras.is_empty() => {
                    refusals.push(refuse("a constraint names a version, not extras".into()));
                }
                Ok(Line::Requirement(r)) if constraints => out.constraints.push(r),
                Ok(Line::Requirement(r)) => out.requirements.push(r),
                Ok(Line::Flag(f)) => {
                    out.flags.insert(f);
                }
                Ok(Line::Include { path, constraints: c }) => {
                    let target = match resolve_include(rel, &path) {
                        Ok(t) => t,
                        Err(reason) => {
                            refusals.push(refuse(reason));
                            continue;
                        }
                    };
                    if self.stack.contains(&target) {
                        refusals
                            .push(refuse(format!("`{target}` includes itself (through {})", self.stack.join(" → "))));
                    } else if self.seen.contains(&target) {
                        // Read once already.
                    } else if self.stack.len() >= MAX_INCLUDE_DEPTH {
                        refusals.push(refuse(format!("includes are nested more than {MAX_INCLUDE_DEPTH} deep")));
                    } else {
                        match self.project.meta(&target) {
                            Ok(m) if m.kind == Kind::File => self.file(&target, constraints || c, out, refusals)?,
                            Ok(_) => {
                                refusals.push(refuse(format!("`{target}` is not a plain file (a link or a folder)")))
                            }
                            Err(e) => refusals.push(refuse(format!("`{target}` cannot be read: {e}"))),
                        }
                    }
                }
            }
        }
        self.stack.pop();
        Ok(())
    }
}

/// The project-relative path of `path` included from the file `from`, or why it is outside.
pub(crate) fn resolve_include(from: &str, path: &str) -> Result<String, String> {
    let outside = || format!("`{path}` is outside the project; included files must be inside it");
    if path.starts_with('/') || path.starts_with('~') || path.contains('\\') || path.contains("://") {
        return Err(outside());
    }
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or_else(outside)?;
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(format!("`{path}` is not a file"));
    }
    Ok(parts.join("/"))
}

/// PEP 621: `[project] dependencies` and every group of `[project.optional-dependencies]`.
fn pyproject(project: &Dir, out: &mut Declared, refusals: &mut Vec<Refusal>) -> Result<(), PackagesError> {
    const FILE: &str = "pyproject.toml";
    let bad = |message: String| PackagesError::BadManifest { file: FILE.into(), message };
    let text = read_text(project, FILE)?;
    let doc: toml::Table = toml::from_str(&text).map_err(|e| bad(format!("it is not valid TOML: {e}")))?;
    let Some(table) = doc.get("project") else { return Ok(()) };
    let table = table.as_table().ok_or_else(|| bad("`project` must be a table".into()))?;
    // The project naming itself (`myapp[test]` in an extra) is not a registry package.
    let own = table.get("name").and_then(|n| n.as_str()).map(spec::normalize_name);
    let mut lists: Vec<(String, &toml::Value)> = Vec::new();
    if let Some(deps) = table.get("dependencies") {
        lists.push(("[project] dependencies".into(), deps));
    }
    if let Some(opt) = table.get("optional-dependencies") {
        let opt = opt.as_table().ok_or_else(|| bad("`[project.optional-dependencies]` must be a table".into()))?;
        lists.extend(opt.iter().map(|(group, v)| (format!("[project.optional-dependencies] {group}"), v)));
    }
    for (section, list) in lists {
        let list = list.as_array().ok_or_else(|| bad(format!("{section} must be a list of strings")))?;
        for item in list {
            let Some(s) = item.as_str() else {
                return Err(bad(format!("{section} must be a list of strings, not `{item:?}`")));
            };
            match spec::parse_requirement(s) {
                Ok(r) if own.as_ref() == Some(&r.name) => {}
                Ok(r) => out.requirements.push(r),
                Err(reason) => refusals.push(Refusal { file: FILE.into(), spec: s.to_string(), reason }),
            }
        }
    }
    Ok(())
}
