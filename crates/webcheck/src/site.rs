//! Whole-site checking: find the pages under a root, check each one, and make
//! sure every local file they reference was actually written.

use std::path::{Path, PathBuf};
use wright_beneath::{Dir, Kind};

use crate::html::{check_html, local_references};
use crate::{CheckError, Problem, Severity, WebReport};

/// At most this many pages are checked, so a huge tree cannot stall a build.
const MAX_PAGES: usize = 50;
/// Pages larger than this are reported instead of read: generated pages are small.
const MAX_PAGE_BYTES: u64 = 5 * 1024 * 1024;
/// Directory nesting deeper than this is not searched for pages.
const MAX_WALK_DEPTH: usize = 32;
/// Directory entries visited at most while searching for pages.
const MAX_WALK_ENTRIES: usize = 50_000;

/// Check a site on disk: `entry` is the required page relative to root (e.g. "index.html" or "client/index.html").
/// Missing entry → a problem "index.html is missing". Checks the entry page and every other *.html under root (skip node_modules and dot-directories, at most 50 pages), and that each local reference resolves to an existing file relative to the page's directory (a leading "/" means relative to the site root = the entry page's directory). A reference that escapes the root ("../../etc/passwd") is a problem, not a file read.
///
/// Errors are reserved for not being able to check at all (the root is not a
/// directory, the entry is not a relative path, a page cannot be read);
/// everything wrong with the site itself is a [`Problem`] in the report.
///
/// Every file is reached through the root's descriptor with no link followed (the site is the
/// generated code's): a link is neither a page nor a file a reference may name.
pub fn check_site(root: &Path, entry: &str) -> Result<WebReport, CheckError> {
    let Ok(root_dir) = Dir::open(root) else {
        return Err(CheckError::RootNotDirectory(root.to_path_buf()));
    };
    check_site_in(&root_dir, entry)
}

/// [`check_site`] of a folder already open as a capability (a sub-folder of a project, such as
/// a bundle's `dist/`, opened beneath the project with no link followed).
pub fn check_site_in(root: &Dir, entry: &str) -> Result<WebReport, CheckError> {
    let entry_parts = relative_parts(entry).ok_or_else(|| CheckError::InvalidEntry(entry.into()))?;
    let entry_rel = entry_parts.join("/");
    let site_root = entry_parts.split_last().map(|(_, dir)| dir.to_vec()).unwrap_or_default();

    let mut report = WebReport::default();
    let mut pages: Vec<Vec<String>> = Vec::new();
    if root.is_file(&entry_rel) {
        pages.push(entry_parts.clone());
    } else {
        report.problems.push(Problem {
            file: entry_rel.clone(),
            line: None,
            severity: Severity::Error,
            message: format!("{entry_rel} is missing"),
        });
    }

    let mut found = find_pages(root)?;
    found.sort();
    let others: Vec<Vec<String>> = found.into_iter().filter(|p| *p != entry_parts).collect();
    let total = pages.len() + others.len();
    pages.extend(others.into_iter().take(MAX_PAGES.saturating_sub(pages.len())));
    if total > pages.len() {
        report.problems.push(Problem {
            file: entry_rel.clone(),
            line: None,
            severity: Severity::Warning,
            message: format!("only the first {} of {total} HTML pages were checked", pages.len()),
        });
    }

    for page in &pages {
        check_page(root, page, &site_root, &mut report)?;
    }
    Ok(report)
}

/// Checks one page's markup and references, appending to `report`.
fn check_page(root: &Dir, page: &[String], site_root: &[String], report: &mut WebReport) -> Result<(), CheckError> {
    let rel = page.join("/");
    report.pages.push(rel.clone());
    let path = join(root.path(), page);
    let io = |e: wright_beneath::Error| CheckError::Io { path: path.clone(), source: std::io::Error::other(e) };
    let size = root.meta(&rel).map_err(io)?.len;
    if size > MAX_PAGE_BYTES {
        report.problems.push(Problem {
            file: rel,
            line: None,
            severity: Severity::Error,
            message: format!(
                "the page is too large to check ({size} bytes; the limit is {MAX_PAGE_BYTES}); generated pages should be small"
            ),
        });
        return Ok(());
    }
    let bytes = root.read(&rel).map_err(io)?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            report.problems.push(Problem {
                file: rel.clone(),
                line: None,
                severity: Severity::Error,
                message: "the file is not valid UTF-8 text; save it as UTF-8".to_string(),
            });
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    report.problems.extend(check_html(&rel, &text));

    let page_dir = page.split_last().map(|(_, d)| d).unwrap_or_default();
    let mut reference_problems = Vec::new();
    for (reference, line) in local_references(&text) {
        if let Some(message) = check_reference(root, page_dir, site_root, &reference, line) {
            reference_problems.push(Problem {
                file: rel.clone(),
                line: Some(line),
                severity: Severity::Error,
                message,
            });
        }
    }
    report.problems.extend(reference_problems);
    Ok(())
}

/// Returns a message when `reference` does not name an existing file inside `root`.
fn check_reference(
    root: &Dir,
    page_dir: &[String],
    site_root: &[String],
    reference: &str,
    line: u32,
) -> Option<String> {
    let decoded = percent_decode(reference);
    let (base, rest) = match decoded.strip_prefix('/') {
        Some(rest) => (site_root, rest),
        None => (page_dir, decoded.as_str()),
    };
    let Some(parts) = resolve(base, rest) else {
        return Some(format!(
            "`{reference}` on line {line} points outside the project folder; reference a file inside the project instead"
        ));
    };
    let shown = if parts.is_empty() { "the project folder".to_string() } else { parts.join("/") };
    let through_link = || {
        Some(format!(
            "`{reference}` on line {line} points through a symbolic link ({shown}); wright does not follow links, so reference a real file inside the project instead"
        ))
    };
    let meta = if parts.is_empty() { root.meta(".") } else { root.meta(&parts.join("/")) };
    match meta {
        Ok(meta) if meta.kind == Kind::File => None,
        Ok(meta) if meta.kind == Kind::Link => through_link(),
        Err(wright_beneath::Error::Link(_)) => through_link(),
        Ok(_) => Some(format!("`{reference}` on line {line} points to the folder {shown}, not a file")),
        Err(_) => {
            let hint = parts
                .split_last()
                .and_then(|(name, dir)| case_mismatch(root, dir, name))
                .map(|other| {
                    format!(
                        " (a file named `{other}` exists there: paths are case-sensitive, so match its capitalization)"
                    )
                })
                .unwrap_or_default();
            Some(format!(
                "`{reference}` on line {line} points to {shown}, which does not exist; create that file or fix the path{hint}"
            ))
        }
    }
}

/// Applies `rest` to `base` lexically; `None` when `..` climbs above the root.
fn resolve(base: &[String], rest: &str) -> Option<Vec<String>> {
    let mut parts = base.to_vec();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other.to_string()),
        }
    }
    Some(parts)
}

/// Splits a caller-given relative path into components; `None` if it is
/// absolute, empty, or climbs above its root.
fn relative_parts(path: &str) -> Option<Vec<String>> {
    if path.starts_with('/') || path.starts_with('\\') || Path::new(path).is_absolute() {
        return None;
    }
    let parts = resolve(&[], &path.replace('\\', "/"))?;
    if parts.is_empty() { None } else { Some(parts) }
}

fn join(root: &Path, parts: &[String]) -> PathBuf {
    let mut path = root.to_path_buf();
    path.extend(parts);
    path
}

/// Name of a file in the folder `dir` of `root` that equals `name` except for letter case.
fn case_mismatch(root: &Dir, dir: &[String], name: &str) -> Option<String> {
    let folder = if dir.is_empty() { root.try_clone().ok()? } else { root.open_dir(&dir.join("/")).ok()? };
    folder
        .entries()
        .ok()?
        .into_iter()
        .filter_map(|e| e.name.into_string().ok())
        .find(|other| other != name && other.eq_ignore_ascii_case(name))
}

/// Decodes `%XX` escapes so `my%20photo.png` finds `my photo.png`; leaves the
/// text alone when the escapes do not form valid UTF-8.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |k: usize| bytes.get(k).and_then(|c| (*c as char).to_digit(16));
        match (b, hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// The `*.html`/`*.htm` files under the root, skipping `node_modules`, dot-directories and
/// links (which could loop or leave the project), at most [`MAX_WALK_ENTRIES`] entries looked
/// at and [`MAX_WALK_DEPTH`] folders deep.
fn find_pages(root: &Dir) -> Result<Vec<Vec<String>>, CheckError> {
    let enter = |name: &str| name != "node_modules" && !name.starts_with('.');
    let entries = root
        .walk(&enter)
        .map_err(|e| CheckError::Io { path: root.path().to_path_buf(), source: std::io::Error::other(e) })?;
    Ok(entries
        .into_iter()
        .take(MAX_WALK_ENTRIES)
        .filter(|e| e.kind == Kind::File)
        .map(|e| e.path.split('/').map(str::to_string).collect::<Vec<_>>())
        .filter(|parts| parts.len() <= MAX_WALK_DEPTH + 1)
        .filter(|parts| {
            let lower = parts.last().map(|n| n.to_ascii_lowercase()).unwrap_or_default();
            lower.ends_with(".html") || lower.ends_with(".htm")
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("my%20photo.png"), "my photo.png");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%C3%A9.png"), "é.png");
        assert_eq!(percent_decode("%FF.png"), "%FF.png");
    }

    #[test]
    fn resolving_paths() {
        let base = vec!["client".to_string()];
        assert_eq!(resolve(&base, "./css/../app.js"), Some(vec!["client".to_string(), "app.js".to_string()]));
        assert_eq!(resolve(&base, "../x.js"), Some(vec!["x.js".to_string()]));
        assert_eq!(resolve(&base, "../../x.js"), None);
    }

    #[test]
    fn entry_must_be_relative() {
        assert!(relative_parts("/etc/passwd").is_none());
        assert!(relative_parts("../index.html").is_none());
        assert!(relative_parts("").is_none());
        assert_eq!(relative_parts("client\\index.html"), Some(vec!["client".to_string(), "index.html".to_string()]));
    }
}
