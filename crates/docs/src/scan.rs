//! Finding and reading the documents under the folder.

use crate::error::DocsError;
use crate::reader::Kind;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Larger files are skipped: a documentation page this large is generated output (an API dump,
/// a bundled page) whose chunks would crowd out the hand-written ones.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// A document found under the folder.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// Path relative to the folder, `/`-separated: the key in the index and what hits show.
    pub rel: String,
    pub abs: PathBuf,
    pub kind: Kind,
    pub size: u64,
    /// Modification time in nanoseconds since the epoch (0 when the system has none).
    pub mtime_ns: i64,
}

/// The documents under `root`, and the ones passed over with the reason (for a warning).
pub(crate) struct Scan {
    pub found: Vec<Found>,
    pub skipped: Vec<(String, String)>,
}

/// Walks `root`. Hidden entries (`.git`, `.cache`) are not entered; symbolic links are followed
/// only to files inside the folder, so a link cannot pull outside files into the assistant's
/// answers, and linked folders are not entered (their files are found where they really are).
pub(crate) fn scan(root: &Path) -> Result<Scan, DocsError> {
    let missing = || DocsError::SourceMissing { path: root.to_path_buf() };
    let root = root.canonicalize().map_err(|_| missing())?;
    if !root.is_dir() {
        return Err(missing());
    }
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let walker = walkdir::WalkDir::new(&root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let at = e.path().map(|p| p.display().to_string()).unwrap_or_default();
                skipped.push((at, format!("cannot be read ({e})")));
                continue;
            }
        };
        let Some(rel) = relative(&root, entry.path()) else {
            skipped.push((entry.path().display().to_string(), "its name is not UTF-8".into()));
            continue;
        };
        let Some(kind) = Kind::of(&rel) else { continue };
        let meta = if entry.path_is_symlink() {
            match entry.path().canonicalize() {
                Ok(target) if target.starts_with(&root) => std::fs::metadata(&target),
                Ok(_) => {
                    skipped.push((rel, "it is a link to outside the docs folder".into()));
                    continue;
                }
                Err(_) => continue, // a dangling link
            }
        } else {
            entry.metadata().map_err(std::io::Error::other)
        };
        let meta = match meta {
            Ok(m) if m.is_file() => m,
            Ok(_) => continue,
            Err(e) => {
                skipped.push((rel, format!("cannot be read ({e})")));
                continue;
            }
        };
        if meta.len() > MAX_FILE_BYTES {
            skipped.push((rel, format!("it is larger than {} MB", MAX_FILE_BYTES / (1024 * 1024))));
            continue;
        }
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        found.push(Found { rel, abs: entry.path().to_path_buf(), kind, size: meta.len(), mtime_ns });
    }
    Ok(Scan { found, skipped })
}

fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

/// A document's content: its SHA-256 (hex) and text.
pub(crate) enum Read {
    Text {
        hash: String,
        text: String,
    },
    /// Not indexed, for the reason given.
    Skipped(String),
}

/// Reads and hashes a document; one that is too large (it grew since the scan) or not UTF-8 is
/// skipped, not an error.
pub(crate) fn read(found: &Found) -> Read {
    let bytes = match std::fs::read(&found.abs) {
        Ok(b) => b,
        Err(e) => return Read::Skipped(format!("cannot be read ({e})")),
    };
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Read::Skipped(format!("it is larger than {} MB", MAX_FILE_BYTES / (1024 * 1024)));
    }
    let hash = hex(&Sha256::digest(&bytes));
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with('\u{feff}') {
                text.drain(..3);
            }
            Read::Text { hash, text }
        }
        Err(_) => Read::Skipped("it is not UTF-8 text (save it as UTF-8 to have it indexed)".into()),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
