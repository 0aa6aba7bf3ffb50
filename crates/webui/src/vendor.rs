//! Third-party files the page loads that are built artefacts, not source: they are never in
//! git and never embedded. Each is fetched once with the machine's own `npm` (which honours the
//! host's registry configuration and proxies), checked against a pinned SHA-256, and the few
//! files the page needs are extracted into `<data_dir>/vendor/`. The server serves them under
//! `/ui/vendor/{name}` ([`served`]); the page loads them only when it needs them, and from
//! wright's own origin, never a CDN.
//!
//! Today that is Mermaid (MIT), which draws the chat's diagrams, and `dom-accessibility-api`
//! (MIT), which the in-app assistant's page tools (`a11y.js`) compute roles and accessible names
//! with. The latter is served under `/assistant/vendor/dom-accessibility-api/{file}`
//! ([`served_assistant`]): its ES modules import one another by relative path, so they are
//! kept in the package's own layout (`polyfills/` included) and work unbundled.

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The Mermaid release the page draws diagrams with.
pub const MERMAID_VERSION: &str = "12.3.0";
/// SHA-256 of `npm pack mermaid@12.3.0` (`mermaid-12.3.0.tgz`, as the npm registry serves it).
pub const MERMAID_TARBALL_SHA256: &str = "be0684e8d20bfc874df12c0f04927a5c482f57f2200eec54cca52a4583fd4040";

/// Members taken from the tarball, and the file each becomes in the vendor folder.
const MERMAID_MEMBERS: [(&str, &str); 2] =
    [("package/dist/mermaid.min.js", "mermaid.min.js"), ("package/LICENSE", "LICENSE")];
/// Written last: the folder is complete (and of this version) when it says this.
const STAMP: &str = "VERSION";
/// No member we take is anywhere near this big (mermaid.min.js is about 5.5 MB).
const MAX_MEMBER_BYTES: u64 = 64 << 20;

/// The `dom-accessibility-api` release the assistant's page tools use (roles, accessible names).
pub const DOM_ACCESSIBILITY_API_VERSION: &str = "0.7.1";
/// SHA-256 of `npm pack dom-accessibility-api@0.7.1` (`dom-accessibility-api-0.7.1.tgz`, as
/// the npm registry serves it).
pub const DOM_ACCESSIBILITY_API_TARBALL_SHA256: &str =
    "fd2555decfa04412a33cf4af0edc341a10ac84419827cfa4cef0f5c84fa48c60";

/// The package's ES build that `index.mjs` reaches through its relative imports (and nothing
/// else: no CommonJS, no maps, no types), and its licence.
const DOM_ACCESSIBILITY_API_MEMBERS: [(&str, &str); 11] = [
    ("package/dist/index.mjs", "index.mjs"),
    ("package/dist/accessible-description.mjs", "accessible-description.mjs"),
    ("package/dist/accessible-name-and-description.mjs", "accessible-name-and-description.mjs"),
    ("package/dist/accessible-name.mjs", "accessible-name.mjs"),
    ("package/dist/getRole.mjs", "getRole.mjs"),
    ("package/dist/is-disabled.mjs", "is-disabled.mjs"),
    ("package/dist/is-inaccessible.mjs", "is-inaccessible.mjs"),
    ("package/dist/util.mjs", "util.mjs"),
    ("package/dist/polyfills/array.from.mjs", "polyfills/array.from.mjs"),
    ("package/dist/polyfills/SetLike.mjs", "polyfills/SetLike.mjs"),
    ("package/LICENSE.md", "LICENSE.md"),
];

/// One npm package fetched, verified and partly unpacked into `<data_dir>/vendor/{dir}`.
struct Package {
    /// The npm name.
    name: &'static str,
    /// What it is, in an error message.
    what: &'static str,
    version: &'static str,
    sha256: &'static str,
    dir: &'static str,
    members: &'static [(&'static str, &'static str)],
}

const MERMAID: Package = Package {
    name: "mermaid",
    what: "Mermaid",
    version: MERMAID_VERSION,
    sha256: MERMAID_TARBALL_SHA256,
    dir: "mermaid",
    members: &MERMAID_MEMBERS,
};

const DOM_ACCESSIBILITY_API: Package = Package {
    name: "dom-accessibility-api",
    what: "dom-accessibility-api",
    version: DOM_ACCESSIBILITY_API_VERSION,
    sha256: DOM_ACCESSIBILITY_API_TARBALL_SHA256,
    dir: "dom-accessibility-api",
    members: &DOM_ACCESSIBILITY_API_MEMBERS,
};

/// A file served under `/ui/vendor/{name}`.
#[derive(Debug, Clone, Copy)]
pub struct Served {
    /// The name after `/ui/vendor/`.
    pub name: &'static str,
    /// The file in the vendor folder of the data dir.
    pub file: &'static str,
    pub content_type: &'static str,
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file served under `/ui/vendor/`.
pub const SERVED: &[Served] = &[
    Served { name: "mermaid.min.js", file: "mermaid.min.js", content_type: JS },
    Served { name: "mermaid.LICENSE", file: "LICENSE", content_type: "text/plain; charset=utf-8" },
];

/// Every file served under `/assistant/vendor/` (`name` holds slashes: the package keeps its
/// layout, since its modules import `./util.mjs`, `./polyfills/SetLike.mjs` and so on; `file`
/// is the path in [`dom_accessibility_api_dir`]). `a11y-page.js` imports
/// `./vendor/dom-accessibility-api/index.mjs`.
pub const ASSISTANT_SERVED: &[Served] = &[
    Served { name: "dom-accessibility-api/index.mjs", file: "index.mjs", content_type: JS },
    Served {
        name: "dom-accessibility-api/accessible-description.mjs",
        file: "accessible-description.mjs",
        content_type: JS,
    },
    Served {
        name: "dom-accessibility-api/accessible-name-and-description.mjs",
        file: "accessible-name-and-description.mjs",
        content_type: JS,
    },
    Served { name: "dom-accessibility-api/accessible-name.mjs", file: "accessible-name.mjs", content_type: JS },
    Served { name: "dom-accessibility-api/getRole.mjs", file: "getRole.mjs", content_type: JS },
    Served { name: "dom-accessibility-api/is-disabled.mjs", file: "is-disabled.mjs", content_type: JS },
    Served { name: "dom-accessibility-api/is-inaccessible.mjs", file: "is-inaccessible.mjs", content_type: JS },
    Served { name: "dom-accessibility-api/util.mjs", file: "util.mjs", content_type: JS },
    Served {
        name: "dom-accessibility-api/polyfills/array.from.mjs",
        file: "polyfills/array.from.mjs",
        content_type: JS,
    },
    Served { name: "dom-accessibility-api/polyfills/SetLike.mjs", file: "polyfills/SetLike.mjs", content_type: JS },
    Served { name: "dom-accessibility-api/LICENSE.md", file: "LICENSE.md", content_type: "text/plain; charset=utf-8" },
];

/// Why a vendor file could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum VendorError {
    #[error("`{npm}` could not be run ({detail}); {what} is fetched with npm: install Node.js and npm")]
    NpmMissing { what: &'static str, npm: String, detail: String },
    #[error("`npm pack {package}@{version}` failed: {detail}")]
    Npm { package: &'static str, version: String, detail: String },
    #[error("`npm pack` left no tarball in {dir}")]
    NoTarball { dir: PathBuf },
    #[error("{file}: SHA-256 is {actual}, expected {expected}; not using it")]
    Checksum { file: String, expected: String, actual: String },
    #[error("the {what} tarball has no `{member}`")]
    Missing { what: &'static str, member: String },
    #[error("the {what} tarball is not a readable .tgz: {detail}")]
    Tarball { what: &'static str, detail: String },
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> VendorError {
    let path = path.to_path_buf();
    move |source| VendorError::Io { what, path, source }
}

/// Where the vendored Mermaid files live under `data_dir`.
pub fn mermaid_dir(data_dir: &Path) -> PathBuf {
    package_dir(&MERMAID, data_dir)
}

/// The pinned Mermaid is in `data_dir` (fetched, verified and complete).
pub fn mermaid_present(data_dir: &Path) -> bool {
    present(&MERMAID, data_dir)
}

/// The file to answer `/ui/vendor/{name}` with, and its content type, when it is one of
/// [`SERVED`] and has been fetched into `data_dir`.
pub fn served(data_dir: &Path, name: &str) -> Option<(PathBuf, &'static str)> {
    let s = SERVED.iter().find(|s| s.name == name)?;
    mermaid_present(data_dir).then(|| (mermaid_dir(data_dir).join(s.file), s.content_type))
}

/// A tag for the vendored files' current version (an HTTP validator).
pub fn etag() -> String {
    format!("\"mermaid-{MERMAID_VERSION}\"")
}

/// Make sure the pinned Mermaid is in `data_dir`, fetching it with `npm` when it is not:
/// `npm pack mermaid@VERSION` into a temporary folder, the tarball's SHA-256 checked, and
/// `dist/mermaid.min.js` and `LICENSE` extracted into [`mermaid_dir`]. Does nothing (and needs
/// no network) when it is already there. Returns the folder.
pub fn ensure_mermaid(data_dir: &Path) -> Result<PathBuf, VendorError> {
    ensure_mermaid_with(data_dir, Path::new("npm"))
}

/// [`ensure_mermaid`] with a given `npm` program.
pub fn ensure_mermaid_with(data_dir: &Path, npm: &Path) -> Result<PathBuf, VendorError> {
    ensure(&MERMAID, data_dir, npm)
}

/// Where the vendored `dom-accessibility-api` files live under `data_dir`
/// (`<data_dir>/vendor/dom-accessibility-api/`, the package's `dist/` layout).
pub fn dom_accessibility_api_dir(data_dir: &Path) -> PathBuf {
    package_dir(&DOM_ACCESSIBILITY_API, data_dir)
}

/// The pinned `dom-accessibility-api` is in `data_dir` (fetched, verified and complete).
pub fn dom_accessibility_api_present(data_dir: &Path) -> bool {
    present(&DOM_ACCESSIBILITY_API, data_dir)
}

/// The file to answer `/assistant/vendor/{name}` with (`name` as in [`ASSISTANT_SERVED`],
/// e.g. `dom-accessibility-api/polyfills/SetLike.mjs`), and its content type, when it is one
/// of them and has been fetched into `data_dir`. Any other name (`..`, `VERSION`) is `None`.
pub fn served_assistant(data_dir: &Path, name: &str) -> Option<(PathBuf, &'static str)> {
    let s = ASSISTANT_SERVED.iter().find(|s| s.name == name)?;
    dom_accessibility_api_present(data_dir).then(|| (dom_accessibility_api_dir(data_dir).join(s.file), s.content_type))
}

/// A tag for the files under `/assistant/vendor/` (an HTTP validator).
pub fn assistant_etag() -> String {
    format!("\"dom-accessibility-api-{DOM_ACCESSIBILITY_API_VERSION}\"")
}

/// Make sure the pinned `dom-accessibility-api` is in `data_dir`, fetching it with `npm` when
/// it is not: `npm pack dom-accessibility-api@VERSION`, the tarball's SHA-256 checked, and
/// the ES modules `dist/index.mjs` imports (with `polyfills/`) and `LICENSE.md` extracted into
/// [`dom_accessibility_api_dir`], a `VERSION` stamp written last. Does nothing (and needs no
/// network) when it is already there. Returns the folder.
pub fn ensure_dom_accessibility_api(data_dir: &Path) -> Result<PathBuf, VendorError> {
    ensure_dom_accessibility_api_with(data_dir, Path::new("npm"))
}

/// [`ensure_dom_accessibility_api`] with a given `npm` program.
pub fn ensure_dom_accessibility_api_with(data_dir: &Path, npm: &Path) -> Result<PathBuf, VendorError> {
    ensure(&DOM_ACCESSIBILITY_API, data_dir, npm)
}

fn package_dir(pkg: &Package, data_dir: &Path) -> PathBuf {
    data_dir.join("vendor").join(pkg.dir)
}

fn stamp(pkg: &Package) -> String {
    format!("{} {} sha256:{}\n", pkg.name, pkg.version, pkg.sha256)
}

fn present(pkg: &Package, data_dir: &Path) -> bool {
    let dir = package_dir(pkg, data_dir);
    std::fs::read_to_string(dir.join(STAMP)).is_ok_and(|s| s == stamp(pkg))
        && pkg.members.iter().all(|(_, file)| std::fs::metadata(dir.join(file)).is_ok_and(|m| m.len() > 0))
}

fn ensure(pkg: &Package, data_dir: &Path, npm: &Path) -> Result<PathBuf, VendorError> {
    let dest = package_dir(pkg, data_dir);
    if present(pkg, data_dir) {
        return Ok(dest);
    }
    let vendor = data_dir.join("vendor");
    std::fs::create_dir_all(&vendor).map_err(io("creating", &vendor))?;
    let work = vendor.join(format!(".{}-fetch-{}-{:x}", pkg.dir, std::process::id(), nanos()));
    std::fs::create_dir_all(&work).map_err(io("creating", &work))?;
    let result = fetch_into(pkg, &work, npm).and_then(|staged| {
        // Another process may have finished first; theirs is as good as ours.
        if present(pkg, data_dir) {
            return Ok(());
        }
        if dest.exists() {
            std::fs::remove_dir_all(&dest).map_err(io("removing the old", &dest))?;
        }
        std::fs::rename(&staged, &dest).map_err(io("moving the verified files to", &dest))
    });
    let _ = std::fs::remove_dir_all(&work);
    result?;
    if present(pkg, data_dir) { Ok(dest) } else { Err(VendorError::Missing { what: pkg.what, member: STAMP.into() }) }
}

fn nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or_default()
}

/// Pack, verify and extract into `work/{dir}`; that folder.
fn fetch_into(pkg: &Package, work: &Path, npm: &Path) -> Result<PathBuf, VendorError> {
    let spec = format!("{}@{}", pkg.name, pkg.version);
    let out = Command::new(npm)
        .args(["pack", &spec, "--ignore-scripts", "--silent", "--pack-destination"])
        .arg(work)
        .current_dir(work)
        .env("npm_config_fund", "false")
        .env("npm_config_audit", "false")
        .env("npm_config_update_notifier", "false")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| VendorError::NpmMissing {
            what: pkg.what,
            npm: npm.display().to_string(),
            detail: e.to_string(),
        })?;
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stderr);
        let detail = text.lines().filter(|l| !l.trim().is_empty()).take(6).collect::<Vec<_>>().join(" | ");
        let detail = if detail.is_empty() { format!("exit {:?}", out.status.code()) } else { detail };
        return Err(VendorError::Npm { package: pkg.name, version: pkg.version.into(), detail });
    }
    let tarball = std::fs::read_dir(work)
        .map_err(io("reading", work))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "tgz"))
        .ok_or_else(|| VendorError::NoTarball { dir: work.to_path_buf() })?;
    verify(&tarball, pkg.sha256)?;
    let staged = work.join(pkg.dir);
    std::fs::create_dir_all(&staged).map_err(io("creating", &staged))?;
    extract(&tarball, pkg.what, pkg.members, &staged)?;
    let stamp_path = staged.join(STAMP);
    std::fs::write(&stamp_path, stamp(pkg)).map_err(io("writing", &stamp_path))?;
    Ok(staged)
}

/// Check `file`'s SHA-256.
fn verify(file: &Path, expected: &str) -> Result<(), VendorError> {
    let mut f = std::fs::File::open(file).map_err(io("opening", file))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(io("reading", file))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let actual: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    if actual != expected {
        let file = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return Err(VendorError::Checksum { file, expected: expected.into(), actual });
    }
    Ok(())
}

/// Copy `members` (`(path in the tarball, path in dest)`) of the gzipped tar `tarball` (of
/// `what`) into `dest`. Every member must be there.
fn extract(tarball: &Path, what: &'static str, members: &[(&str, &str)], dest: &Path) -> Result<(), VendorError> {
    let file = std::fs::File::open(tarball).map_err(io("opening", tarball))?;
    let mut tar = flate2::read::GzDecoder::new(std::io::BufReader::new(file));
    let bad = |e: std::io::Error| VendorError::Tarball { what, detail: e.to_string() };
    let mut found = vec![false; members.len()];
    // A pax or GNU long name applies to the entry after it.
    let mut long_name: Option<String> = None;
    loop {
        let mut header = [0u8; 512];
        if !read_block(&mut tar, &mut header).map_err(bad)? || header.iter().all(|b| *b == 0) {
            break;
        }
        let size = octal(&header[124..136])
            .ok_or_else(|| VendorError::Tarball { what, detail: "an entry's size is unreadable".into() })?;
        let padded = size.div_ceil(512) * 512;
        let kind = header[156];
        let name = long_name.take().unwrap_or_else(|| header_name(&header));
        match kind {
            b'x' | b'L' if size <= 1 << 20 => {
                let mut meta = vec![0u8; padded as usize];
                tar.read_exact(&mut meta).map_err(bad)?;
                meta.truncate(size as usize);
                long_name = if kind == b'L' {
                    Some(String::from_utf8_lossy(&meta).trim_end_matches('\0').to_string())
                } else {
                    pax_path(&String::from_utf8_lossy(&meta))
                };
                continue;
            }
            _ => {}
        }
        let wanted = members.iter().position(|(m, _)| *m == name).filter(|_| kind == b'0' || kind == 0);
        match wanted {
            Some(i) if size <= MAX_MEMBER_BYTES => {
                let mut body = vec![0u8; size as usize];
                tar.read_exact(&mut body).map_err(bad)?;
                std::io::copy(&mut (&mut tar).take(padded - size), &mut std::io::sink()).map_err(bad)?;
                let path = dest.join(members[i].1);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(io("creating", parent))?;
                }
                std::fs::write(&path, &body).map_err(io("writing", &path))?;
                found[i] = true;
            }
            _ => {
                let skipped = std::io::copy(&mut (&mut tar).take(padded), &mut std::io::sink()).map_err(bad)?;
                if skipped != padded {
                    return Err(VendorError::Tarball { what, detail: "it ends inside an entry".into() });
                }
            }
        }
    }
    match found.iter().position(|f| !f) {
        Some(i) => Err(VendorError::Missing { what, member: members[i].0.into() }),
        None => Ok(()),
    }
}

/// Read one 512-byte block; `false` at a clean end of the stream.
fn read_block(r: &mut impl Read, block: &mut [u8; 512]) -> std::io::Result<bool> {
    let mut got = 0;
    while got < block.len() {
        match r.read(&mut block[got..])? {
            0 if got == 0 => return Ok(false),
            0 => return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "a header is cut short")),
            n => got += n,
        }
    }
    Ok(true)
}

fn field(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// The entry's path: ustar's prefix and name.
fn header_name(h: &[u8; 512]) -> String {
    let name = field(&h[0..100]);
    let prefix = if &h[257..262] == b"ustar" { field(&h[345..500]) } else { String::new() };
    if prefix.is_empty() { name } else { format!("{prefix}/{name}") }
}

fn octal(bytes: &[u8]) -> Option<u64> {
    let text = field(bytes);
    let text = text.trim_matches(|c: char| c == ' ' || c == '\0');
    if text.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(text, 8).ok()
}

/// The `path` record of a pax header (`"LEN path=VALUE\n"` records).
fn pax_path(meta: &str) -> Option<String> {
    meta.lines().find_map(|line| line.split_once(' ').and_then(|(_, kv)| kv.strip_prefix("path=")).map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A ustar entry for `name` holding `body`.
    fn entry(name: &str, body: &[u8], kind: u8) -> Vec<u8> {
        let mut h = [0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..107].copy_from_slice(b"0000644");
        h[124..135].copy_from_slice(format!("{:011o}", body.len()).as_bytes());
        h[156] = kind;
        h[257..263].copy_from_slice(b"ustar\0");
        let mut out = h.to_vec();
        out.extend_from_slice(body);
        out.resize(out.len().div_ceil(512) * 512, 0);
        out
    }

    fn tgz(dir: &Path, entries: &[Vec<u8>]) -> PathBuf {
        let path = dir.join("mermaid-0.0.0.tgz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for e in entries {
            gz.write_all(e).unwrap();
        }
        gz.write_all(&[0u8; 1024]).unwrap();
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
        path
    }

    fn sha(path: &Path) -> String {
        let bytes = std::fs::read(path).unwrap();
        Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn members_come_out_of_a_tarball_and_a_missing_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let pax_name = "package/dist/mermaid.min.js";
        let pax = format!("{} path={pax_name}\n", pax_name.len() + 7);
        let tarball = tgz(
            dir.path(),
            &[
                entry("package/README.md", &[b'x'; 700], b'0'),
                entry("PaxHeader", pax.as_bytes(), b'x'),
                entry("package/dist/a-name-the-pax-header-replaces", b"globalThis.mermaid = {};", b'0'),
                entry("package/LICENSE", b"The MIT License", b'0'),
            ],
        );
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        extract(&tarball, "Mermaid", &MERMAID_MEMBERS, &out).unwrap();
        assert_eq!(std::fs::read_to_string(out.join("mermaid.min.js")).unwrap(), "globalThis.mermaid = {};");
        assert_eq!(std::fs::read_to_string(out.join("LICENSE")).unwrap(), "The MIT License");

        let without = tgz(dir.path(), &[entry("package/LICENSE", b"MIT", b'0')]);
        let err = extract(&without, "Mermaid", &MERMAID_MEMBERS, &out).unwrap_err().to_string();
        assert!(err.contains("package/dist/mermaid.min.js"), "{err}");
    }

    #[test]
    fn a_tarball_with_another_checksum_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let tarball = tgz(dir.path(), &[entry("package/LICENSE", b"MIT", b'0')]);
        verify(&tarball, &sha(&tarball)).unwrap();
        let err = verify(&tarball, MERMAID_TARBALL_SHA256).unwrap_err().to_string();
        assert!(err.contains("SHA-256") && err.contains(MERMAID_TARBALL_SHA256), "{err}");
    }

    /// A stand-in `npm` that packs a tarball that is not the pinned one: nothing is installed.
    #[cfg(unix)]
    #[test]
    fn a_fetch_that_does_not_verify_leaves_nothing_behind() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let npm = dir.path().join("npm");
        std::fs::write(&npm, "#!/bin/sh\nprintf 'not a tarball' > \"$6/mermaid-12.3.0.tgz\"\n").unwrap();
        std::fs::set_permissions(&npm, std::fs::Permissions::from_mode(0o755)).unwrap();
        let data = dir.path().join("data");
        let err = ensure_mermaid_with(&data, &npm).unwrap_err().to_string();
        assert!(err.contains("SHA-256"), "{err}");
        assert!(!mermaid_present(&data));
        assert!(std::fs::read_dir(data.join("vendor")).unwrap().next().is_none(), "the work folder is removed");
        assert!(served(&data, "mermaid.min.js").is_none());

        let err = ensure_mermaid_with(&data, &dir.path().join("no-such-npm")).unwrap_err().to_string();
        assert!(err.contains("install Node.js and npm"), "{err}");
    }

    #[test]
    fn only_the_named_files_are_served_and_only_once_fetched() {
        let dir = tempfile::tempdir().unwrap();
        assert!(served(dir.path(), "mermaid.min.js").is_none());
        let m = mermaid_dir(dir.path());
        std::fs::create_dir_all(&m).unwrap();
        std::fs::write(m.join("mermaid.min.js"), "x").unwrap();
        std::fs::write(m.join("LICENSE"), "MIT").unwrap();
        assert!(!mermaid_present(dir.path()), "no stamp: an interrupted fetch");
        std::fs::write(m.join(STAMP), stamp(&MERMAID)).unwrap();
        assert!(mermaid_present(dir.path()));
        let (path, kind) = served(dir.path(), "mermaid.LICENSE").unwrap();
        assert!(path.ends_with("vendor/mermaid/LICENSE") && kind.starts_with("text/plain"));
        assert!(served(dir.path(), "../VERSION").is_none() && served(dir.path(), "VERSION").is_none());
        // Present: nothing is run.
        assert_eq!(ensure_mermaid_with(dir.path(), Path::new("/nonexistent/npm")).unwrap(), m);
    }

    #[test]
    fn the_accessibility_modules_keep_their_layout_and_only_they_are_served() {
        let dir = tempfile::tempdir().unwrap();
        let entries: Vec<Vec<u8>> = DOM_ACCESSIBILITY_API_MEMBERS
            .iter()
            .map(|(member, file)| entry(member, format!("// {file}").as_bytes(), b'0'))
            .chain([entry("package/dist/index.js", b"module.exports = {}", b'0')])
            .collect();
        let tarball = tgz(dir.path(), &entries);
        let data = dir.path().join("data");
        let d = dom_accessibility_api_dir(&data);
        std::fs::create_dir_all(&d).unwrap();
        extract(&tarball, "dom-accessibility-api", &DOM_ACCESSIBILITY_API_MEMBERS, &d).unwrap();
        assert_eq!(std::fs::read_to_string(d.join("polyfills/SetLike.mjs")).unwrap(), "// polyfills/SetLike.mjs");
        assert!(!d.join("index.js").exists(), "only the ES modules are taken");
        assert!(served_assistant(&data, "dom-accessibility-api/index.mjs").is_none(), "no stamp yet");
        std::fs::write(d.join(STAMP), stamp(&DOM_ACCESSIBILITY_API)).unwrap();
        assert!(dom_accessibility_api_present(&data) && !mermaid_present(&data));
        let (path, kind) = served_assistant(&data, "dom-accessibility-api/polyfills/array.from.mjs").unwrap();
        assert!(path.ends_with("vendor/dom-accessibility-api/polyfills/array.from.mjs"), "{}", path.display());
        assert!(kind.starts_with("text/javascript"));
        for bad in ["dom-accessibility-api/VERSION", "dom-accessibility-api/../mermaid/LICENSE", "index.mjs", ""] {
            assert!(served_assistant(&data, bad).is_none(), "{bad}");
        }
        // Every served file is a member, and every member is served.
        for s in ASSISTANT_SERVED {
            assert!(DOM_ACCESSIBILITY_API_MEMBERS.iter().any(|(_, f)| *f == s.file), "{}", s.name);
            assert_eq!(s.name, format!("dom-accessibility-api/{}", s.file));
        }
        assert_eq!(ASSISTANT_SERVED.len(), DOM_ACCESSIBILITY_API_MEMBERS.len());
        assert_eq!(ensure_dom_accessibility_api_with(&data, Path::new("/nonexistent/npm")).unwrap(), d);
        assert_eq!(assistant_etag(), "\"dom-accessibility-api-0.7.1\"");
    }

    #[cfg(unix)]
    #[test]
    fn a_wrong_accessibility_tarball_is_refused_and_named() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let npm = dir.path().join("npm");
        std::fs::write(&npm, "#!/bin/sh\nprintf 'nope' > \"$6/dom-accessibility-api-0.7.1.tgz\"\n").unwrap();
        std::fs::set_permissions(&npm, std::fs::Permissions::from_mode(0o755)).unwrap();
        let data = dir.path().join("data");
        let err = ensure_dom_accessibility_api_with(&data, &npm).unwrap_err().to_string();
        assert!(err.contains("SHA-256") && err.contains(DOM_ACCESSIBILITY_API_TARBALL_SHA256), "{err}");
        assert!(!dom_accessibility_api_present(&data));
        let failing = dir.path().join("npm-fails");
        std::fs::write(&failing, "#!/bin/sh\necho 'E404 not found' >&2\nexit 1\n").unwrap();
        std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = ensure_dom_accessibility_api_with(&data, &failing).unwrap_err().to_string();
        assert!(err.contains("npm pack dom-accessibility-api@0.7.1") && err.contains("E404"), "{err}");
        let err = ensure_dom_accessibility_api_with(&data, &dir.path().join("none")).unwrap_err().to_string();
        assert!(err.contains("dom-accessibility-api is fetched with npm"), "{err}");
    }
}
