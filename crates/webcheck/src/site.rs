//! Whole-site checking: find the pages under a root, check each one, and make
//! sure every local file they reference was actually written.

use std::fs;
use std::path::{Path, PathBuf};

use crate::html::{check_html, local_references};
use crate::{CheckError, Problem, WARNING_PREFIX, WebReport};

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
pub fn check_site(root: &Path, entry: &str) -> Result<WebReport, CheckError> {
    if !fs::metadata(root).is_ok_and(|m| m.is_dir()) {
        return Err(CheckError::RootNotDirectory(root.to_path_buf()));
    }
    let entry_parts = relative_parts(entry).ok_or_else(|| CheckError::InvalidEntry(entry.into()))?;
    let entry_rel = entry_parts.join("/");
    let site_root = entry_parts.split_last().map(|(_, dir)| dir.to_vec()).unwrap_or_default();

    let mut report = WebReport::default();
    let mut pages: Vec<Vec<String>> = Vec::new();
    if fs::metadata(join(root, &entry_parts)).is_ok_and(|m| m.is_file()) {
        pages.push(entry_parts.clone());
    } else {
        report.problems.push(Problem {
            file: entry_rel.clone(),
            line: None,
            message: format!("{entry_rel} is missing"),
        });
    }

    let mut found = Vec::new();
    let mut budget = MAX_WALK_ENTRIES;
    find_pages(root, &mut Vec::new(), &mut found, &mut budget)?;
    found.sort();
    let others: Vec<Vec<String>> = found.into_iter().filter(|p| *p != entry_parts).collect();
    let total = pages.len() + others.len();
    pages.extend(others.into_iter().take(MAX_PAGES.saturating_sub(pages.len())));
    if total > pages.len() {
        report.problems.push(Problem {
            file: entry_rel.clone(),
            line: None,
            message: format!("{WARNING_PREFIX}only the first {} of {total} HTML pages were checked", pages.len()),
        });
    }

    for page in &pages {
        check_page(root, page, &site_root, &mut report)?;
    }
    Ok(report)
}

/// Checks one page's markup and references, appending to `report`.
fn check_page(root: &Path, page: &[String], site_root: &[String], report: &mut WebReport) -> Result<(), CheckError> {
    let rel = page.join("/");
    report.pages.push(rel.clone());
    let path = join(root, page);
    let io = |source| CheckError::Io { path: path.clone(), source };
    let size = fs::metadata(&path).map_err(io)?.len();
    if size > MAX_PAGE_BYTES {
        report.problems.push(Problem {
            file: rel,
            line: None,
            message: format!(
                "the page is too large to check ({size} bytes; the limit is {MAX_PAGE_BYTES}); generated pages should be small"
            ),
        });
        return Ok(());
    }
    let bytes = fs::read(&path).map_err(io)?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            report.problems.push(Problem {
                file: rel.clone(),
                line: None,
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
            reference_problems.push(Problem { file: rel.clone(), line: Some(line), message });
        }
    }
    report.problems.extend(reference_problems);
    Ok(())
}

/// Returns a message when `reference` does not name an existing file inside `root`.
fn check_reference(
    root: &Path,
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
    let path = join(root, &parts);
    match fs::metadata(&path) {
        Ok(meta) if meta.is_file() => {
            if escapes_via_link(root, &path) {
                return Some(format!(
                    "`{reference}` on line {line} points outside the project folder (through a symbolic link); reference a file inside the project instead"
                ));
            }
            None
        }
        Ok(_) => Some(format!("`{reference}` on line {line} points to the folder {shown}, not a file")),
        Err(_) => {
            let hint = parts
                .split_last()
                .and_then(|(name, dir)| case_mismatch(&join(root, dir), name))
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

/// True when `path` resolves (via symlinks) to somewhere outside `root`.
fn escapes_via_link(root: &Path, path: &Path) -> bool {
    match (fs::canonicalize(root), fs::canonicalize(path)) {
        (Ok(root), Ok(path)) => !path.starts_with(root),
        _ => false,
    }
}

/// Name of a file in `dir` that equals `name` except for letter case.
fn case_mismatch(dir: &Path, name: &str) -> Option<String> {
    fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
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

/// Collects `*.html`/`*.htm` files below `root/rel`, skipping `node_modules`,
/// dot-directories and symlinks (which could loop or leave the project).
fn find_pages(
    root: &Path,
    rel: &mut Vec<String>,
    found: &mut Vec<Vec<String>>,
    budget: &mut usize,
) -> Result<(), CheckError> {
    if rel.len() > MAX_WALK_DEPTH {
        return Ok(());
    }
    let dir = join(root, rel);
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(source) if rel.is_empty() => return Err(CheckError::Io { path: dir, source }),
        // An unreadable subfolder should not stop the rest of the site being checked.
        Err(_) => return Ok(()),
    };
    let mut children: Vec<(String, fs::FileType)> = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let (Ok(name), Ok(kind)) = (entry.file_name().into_string(), entry.file_type()) else {
            continue;
        };
        children.push((name, kind));
    }
    children.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, kind) in children {
        if kind.is_dir() {
            if name == "node_modules" || name.starts_with('.') {
                continue;
            }
            rel.push(name);
            find_pages(root, rel, found, budget)?;
            rel.pop();
        } else if kind.is_file() {
            let lower = name.to_ascii_lowercase();
            if lower.ends_with(".html") || lower.ends_with(".htm") {
                let mut page = rel.clone();
                page.push(name);
                found.push(page);
            }
        }
    }
    Ok(())
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
