//! Path confinement and write limits for one project directory.

use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// Size limits enforced on writes made through the workspace.
#[derive(Debug, Clone, Copy)]
pub struct WorkspaceLimits {
    /// Largest single file the model may write.
    pub max_file_bytes: u64,
    /// Most bytes the writes made through this workspace may add to it, in all (net: an
    /// overwrite counts the old size out, a delete gives its size back). What was there when
    /// it was opened does not count, so an existing repository of any size can be worked on.
    pub max_total_bytes: u64,
}

impl Default for WorkspaceLimits {
    fn default() -> Self {
        Self { max_file_bytes: 1024 * 1024, max_total_bytes: 50 * 1024 * 1024 }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PathError {
    #[error("the path is empty")]
    Empty,
    #[error("`{0}` is an absolute path; use a path relative to the project folder, like `index.html`")]
    Absolute(String),
    #[error("`{0}` points outside the project folder")]
    Escapes(String),
    #[error("`{0}` contains a character that is not allowed in a path")]
    BadCharacter(String),
    #[error("`{0}` goes through a link that points outside the project folder")]
    SymlinkEscape(String),
    #[error("`{0}` has other hard links; wright will not touch a file that may be shared with another place")]
    HardLinked(String),
    #[error("`{path}` is {bytes} bytes, over the {limit}-byte limit for one file")]
    FileTooLarge { path: String, bytes: u64, limit: u64 },
    #[error(
        "writing `{path}` would bring what was written to the project to {total} bytes, over its {limit}-byte limit"
    )]
    WorkspaceFull { path: String, total: u64, limit: u64 },
    #[error("`{0}` does not exist")]
    NotFound(String),
    #[error("`{0}` is a folder, not a file")]
    IsDirectory(String),
    #[error("`{0}` is not a regular file")]
    NotRegular(String),
    #[error("{op} `{path}`: {message}")]
    Io { op: &'static str, path: String, message: String },
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// Path relative to the root, with `/` separators.
    pub path: String,
    pub bytes: u64,
    /// Whether the file did not exist before.
    pub created: bool,
}

/// A project folder. All paths given to it are relative; every resolution re-checks links on
/// disk, because commands the model runs can create links at any time.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    limits: WorkspaceLimits,
    /// Net bytes written through this workspace and its clones since it was opened. A running
    /// total, so no write walks the tree (a repository may hold 50k files).
    written: Arc<Mutex<i64>>,
}

impl Workspace {
    /// Open (creating if needed) the folder at `root`.
    pub fn open(root: impl AsRef<Path>, limits: WorkspaceLimits) -> Result<Self, PathError> {
        let root = root.as_ref();
        std::fs::create_dir_all(root).map_err(|e| io_err("create", root, &e))?;
        let root = root.canonicalize().map_err(|e| io_err("open", root, &e))?;
        Ok(Self { root, limits, written: Arc::new(Mutex::new(0)) })
    }

    /// Open a workspace that must already exist, creating nothing: for readers (a request to
    /// see a build's files must never make its folder).
    pub fn existing(root: impl AsRef<Path>, limits: WorkspaceLimits) -> Result<Self, PathError> {
        let root = root.as_ref();
        let root = root.canonicalize().map_err(|e| io_err("open", root, &e))?;
        if !root.is_dir() {
            let not_a_folder = std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a folder");
            return Err(io_err("open", &root, &not_a_folder));
        }
        Ok(Self { root, limits, written: Arc::new(Mutex::new(0)) })
    }

    /// Net bytes the writes through this workspace have added since it was opened.
    pub fn written_bytes(&self) -> i64 {
        *self.written.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Count `delta` bytes in, unless that would pass the limit; returns the new total.
    fn reserve(&self, rel: &str, delta: i64) -> Result<i64, PathError> {
        let mut w = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        let total = w.saturating_add(delta);
        let limit = i64::try_from(self.limits.max_total_bytes).unwrap_or(i64::MAX);
        if delta > 0 && total > limit {
            return Err(PathError::WorkspaceFull {
                path: rel.to_string(),
                total: u64::try_from(total).unwrap_or(0),
                limit: self.limits.max_total_bytes,
            });
        }
        *w = total;
        Ok(total)
    }

    /// Take back a reservation whose write failed.
    fn release(&self, delta: i64) {
        let mut w = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        *w = w.saturating_sub(delta);
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn limits(&self) -> WorkspaceLimits {
        self.limits
    }

    /// Resolve a model-given relative path to a real path inside the root.
    ///
    /// Refuses absolute paths, NUL bytes, `..` that climbs above the root, and any existing
    /// component that is a link resolving outside the root (or a dangling link, which cannot
    /// be checked). The part of the path that does not exist yet cannot contain links.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, PathError> {
        let normal = normalize(rel)?;
        let mut real = self.root.clone();
        let mut components = normal.iter().peekable();
        while let Some(part) = components.next() {
            let candidate = real.join(part);
            match std::fs::symlink_metadata(&candidate) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    let target = candidate.canonicalize().map_err(|_| PathError::SymlinkEscape(rel.to_string()))?;
                    if !target.starts_with(&self.root) {
                        return Err(PathError::SymlinkEscape(rel.to_string()));
                    }
                    real = target;
                }
                Ok(_) => real = candidate,
                Err(_) => {
                    // Not there yet: the rest cannot be links.
                    real = candidate;
                    for rest in components.by_ref() {
                        real.push(rest);
                    }
                }
            }
        }
        if !real.starts_with(&self.root) {
            return Err(PathError::Escapes(rel.to_string()));
        }
        Ok(real)
    }

    /// The display form of a real path inside the root (`a/b.txt`; `.` for the root).
    pub fn relative(&self, real: &Path) -> String {
        match real.strip_prefix(&self.root) {
            Ok(p) if p.as_os_str().is_empty() => ".".to_string(),
            Ok(p) => p.to_string_lossy().replace('\\', "/"),
            Err(_) => real.to_string_lossy().into_owned(),
        }
    }

    /// Read a file as bytes after confinement checks.
    pub fn read(&self, rel: &str) -> Result<Vec<u8>, PathError> {
        let real = self.resolve(rel)?;
        let meta = std::fs::metadata(&real).map_err(|_| PathError::NotFound(rel.to_string()))?;
        check_regular(rel, &meta)?;
        std::fs::read(&real).map_err(|e| io_err("read", Path::new(rel), &e))
    }

    /// Write a whole file atomically (temp file + rename), creating parent folders.
    ///
    /// Renaming replaces the directory entry, so a hard link that pointed the old name at a
    /// file outside the workspace is cut rather than written through.
    pub fn write(&self, rel: &str, content: &[u8]) -> Result<WriteOutcome, PathError> {
        let real = self.resolve(rel)?;
        let bytes = content.len() as u64;
        if bytes > self.limits.max_file_bytes {
            return Err(PathError::FileTooLarge { path: rel.to_string(), bytes, limit: self.limits.max_file_bytes });
        }
        let existing = std::fs::symlink_metadata(&real).ok();
        if let Some(meta) = &existing {
            if meta.is_dir() {
                return Err(PathError::IsDirectory(rel.to_string()));
            }
        }
        // A link's own size is not what the write replaces.
        let old = existing.as_ref().filter(|m| m.is_file()).map_or(0, |m| m.len());
        let delta = i64::try_from(bytes).unwrap_or(i64::MAX).saturating_sub(i64::try_from(old).unwrap_or(0));
        self.reserve(rel, delta)?;
        let written = self.write_new(rel, &real, content);
        if written.is_err() {
            self.release(delta);
        }
        let real = written?;
        Ok(WriteOutcome { path: self.relative(&real), bytes, created: existing.is_none() })
    }

    /// The write itself, once the size is accounted for: temp file beside the target, rename.
    fn write_new(&self, rel: &str, real: &Path, content: &[u8]) -> Result<PathBuf, PathError> {
        let parent = real.parent().ok_or_else(|| PathError::Escapes(rel.to_string()))?;
        std::fs::create_dir_all(parent).map_err(|e| io_err("create folder for", Path::new(rel), &e))?;
        // Folders created above may race with links made by a running command; re-check.
        let real = self.resolve(rel)?;
        let mut tmp = tempfile_in(parent).map_err(|e| io_err("write", Path::new(rel), &e))?;
        tmp.1.write_all(content).map_err(|e| io_err("write", Path::new(rel), &e))?;
        // No fsync: the rename already makes the write all-or-nothing for every reader, and a
        // project is rebuilt from the start after a crash, so waiting for the disk (about a
        // millisecond a write here) would buy nothing a user keeps.
        drop(tmp.1);
        std::fs::rename(&tmp.0, &real).map_err(|e| {
            let _ = std::fs::remove_file(&tmp.0);
            io_err("write", Path::new(rel), &e)
        })?;
        Ok(real)
    }

    /// Delete a file (or an empty folder). A link is removed itself, wherever it points (a
    /// command may leave one aiming outside the project; unlinking never touches the target).
    pub fn delete(&self, rel: &str) -> Result<String, PathError> {
        let parts = normalize(rel)?;
        if let Some((name, parent)) = parts.split_last() {
            let dir = if parent.is_empty() { self.root.clone() } else { self.resolve(&parent.join("/"))? };
            let entry = dir.join(name);
            if std::fs::symlink_metadata(&entry).is_ok_and(|m| m.file_type().is_symlink()) {
                std::fs::remove_file(&entry).map_err(|e| io_err("delete", Path::new(rel), &e))?;
                return Ok(self.relative(&entry));
            }
        }
        let real = self.resolve(rel)?;
        if real == self.root {
            return Err(PathError::Escapes(rel.to_string()));
        }
        let meta = std::fs::symlink_metadata(&real).map_err(|_| PathError::NotFound(rel.to_string()))?;
        if meta.is_dir() {
            std::fs::remove_dir(&real).map_err(|e| io_err("delete folder", Path::new(rel), &e))?;
        } else {
            std::fs::remove_file(&real).map_err(|e| io_err("delete", Path::new(rel), &e))?;
            if meta.is_file() {
                self.release(i64::try_from(meta.len()).unwrap_or(i64::MAX));
            }
        }
        Ok(self.relative(&real))
    }

    /// Total bytes of regular files under the root (links not followed). Walks the whole tree:
    /// for reports, never on a write.
    pub fn total_bytes(&self) -> u64 {
        walkdir::WalkDir::new(&self.root)
            .follow_links(false)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum()
    }
}

fn check_regular(rel: &str, meta: &std::fs::Metadata) -> Result<(), PathError> {
    use std::os::unix::fs::MetadataExt;
    if meta.is_dir() {
        return Err(PathError::IsDirectory(rel.to_string()));
    }
    if !meta.is_file() {
        return Err(PathError::NotRegular(rel.to_string()));
    }
    if meta.nlink() > 1 {
        return Err(PathError::HardLinked(rel.to_string()));
    }
    Ok(())
}

/// Lexically normalise a relative path: drop `.`, apply `..`, refuse anything that leaves.
fn normalize(rel: &str) -> Result<Vec<String>, PathError> {
    if rel.contains('\0') {
        return Err(PathError::BadCharacter(rel.to_string()));
    }
    let trimmed = rel.trim();
    if trimmed.is_empty() {
        return Err(PathError::Empty);
    }
    let p = Path::new(trimmed);
    let mut out: Vec<String> = Vec::new();
    for c in p.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => return Err(PathError::Absolute(rel.to_string())),
            Component::CurDir => {}
            Component::ParentDir => {
                if out.pop().is_none() {
                    return Err(PathError::Escapes(rel.to_string()));
                }
            }
            Component::Normal(s) => out.push(s.to_string_lossy().into_owned()),
        }
    }
    Ok(out)
}

fn io_err(op: &'static str, path: &Path, e: &std::io::Error) -> PathError {
    PathError::Io { op, path: path.to_string_lossy().into_owned(), message: e.to_string() }
}

/// A uniquely named file next to the target, opened exclusively (no crate needed for this).
fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let pid = std::process::id();
    for n in 0..1000u32 {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let path = dir.join(format!(".wright-tmp-{pid}-{nanos}-{n}"));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("could not create a temporary file"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_opens_only_a_workspace_that_exists() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("never-made");
        assert!(Workspace::existing(&missing, WorkspaceLimits::default()).is_err());
        assert!(!missing.exists(), "nothing was created");
        let file = dir.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        assert!(Workspace::existing(&file, WorkspaceLimits::default()).is_err());
        let ws = Workspace::existing(dir.path(), WorkspaceLimits::default()).unwrap();
        assert_eq!(ws.read("a-file").unwrap(), b"x");
    }
    use std::os::unix::fs::symlink;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws =
            Workspace::open(dir.path().join("proj"), WorkspaceLimits { max_file_bytes: 100, max_total_bytes: 250 })
                .unwrap();
        (dir, ws)
    }

    #[test]
    fn refuses_escapes() {
        let (_d, ws) = ws();
        assert_eq!(ws.resolve("/etc/passwd"), Err(PathError::Absolute("/etc/passwd".into())));
        assert_eq!(ws.resolve("../x"), Err(PathError::Escapes("../x".into())));
        assert_eq!(ws.resolve("a/../../x"), Err(PathError::Escapes("a/../../x".into())));
        assert_eq!(ws.resolve(""), Err(PathError::Empty));
        assert!(matches!(ws.resolve("a\0b"), Err(PathError::BadCharacter(_))));
        assert_eq!(ws.resolve("a/../b.txt").unwrap(), ws.root().join("b.txt"));
        assert_eq!(ws.resolve("./src/./x.js").unwrap(), ws.root().join("src/x.js"));
        assert_eq!(ws.resolve(".").unwrap(), ws.root());
    }

    #[test]
    fn refuses_links_out_even_when_made_later() {
        let (d, ws) = ws();
        let outside = d.path().join("secret.txt");
        std::fs::write(&outside, "s").unwrap();
        symlink(&outside, ws.root().join("leak")).unwrap();
        symlink(d.path(), ws.root().join("up")).unwrap();
        symlink("/proc/self/root", ws.root().join("procroot")).unwrap();
        symlink(ws.root().join("nowhere"), ws.root().join("dangling")).unwrap();
        assert!(matches!(ws.read("leak"), Err(PathError::SymlinkEscape(_))));
        assert!(matches!(ws.write("up/secret.txt", b"x"), Err(PathError::SymlinkEscape(_))));
        assert!(matches!(ws.read("procroot/etc/passwd"), Err(PathError::SymlinkEscape(_))));
        assert!(matches!(ws.write("dangling", b"x"), Err(PathError::SymlinkEscape(_))));
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "s");
        // A link that stays inside is fine.
        std::fs::create_dir(ws.root().join("real")).unwrap();
        symlink(ws.root().join("real"), ws.root().join("alias")).unwrap();
        ws.write("alias/f.txt", b"ok").unwrap();
        assert_eq!(std::fs::read_to_string(ws.root().join("real/f.txt")).unwrap(), "ok");
        // Links out can be deleted: the link goes, its target stays.
        assert_eq!(ws.delete("leak").unwrap(), "leak");
        assert!(ws.delete("dangling").is_ok() && ws.delete("up").is_ok());
        assert!(!ws.root().join("leak").exists() && outside.exists() && d.path().exists());
        // But not through a link out.
        symlink(d.path(), ws.root().join("up2")).unwrap();
        assert!(matches!(ws.delete("up2/secret.txt"), Err(PathError::SymlinkEscape(_))));
        assert!(outside.exists());
    }

    #[test]
    fn hard_links_are_not_read_and_writes_cut_them() {
        let (d, ws) = ws();
        let outside = d.path().join("outside.txt");
        std::fs::write(&outside, "orig").unwrap();
        std::fs::hard_link(&outside, ws.root().join("hl.txt")).unwrap();
        assert!(matches!(ws.read("hl.txt"), Err(PathError::HardLinked(_))));
        ws.write("hl.txt", b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "orig");
        assert_eq!(ws.read("hl.txt").unwrap(), b"new");
    }

    #[test]
    fn limits_and_outcomes() {
        let (_d, ws) = ws();
        let o = ws.write("a/b.txt", &[b'x'; 100]).unwrap();
        assert_eq!(o, WriteOutcome { path: "a/b.txt".into(), bytes: 100, created: true });
        assert!(matches!(ws.write("big", &[0; 101]), Err(PathError::FileTooLarge { .. })));
        ws.write("c.txt", &[b'x'; 100]).unwrap();
        assert!(matches!(ws.write("d.txt", &[b'x'; 60]), Err(PathError::WorkspaceFull { .. })));
        // Overwriting counts the old size out.
        let o = ws.write("c.txt", &[b'y'; 100]).unwrap();
        assert!(!o.created);
        assert_eq!(ws.delete("c.txt").unwrap(), "c.txt");
        assert!(matches!(ws.delete("c.txt"), Err(PathError::NotFound(_))));
        assert!(matches!(ws.read("a"), Err(PathError::IsDirectory(_))));
        assert!(matches!(ws.delete("."), Err(PathError::Escapes(_))));
    }

    #[test]
    fn the_limit_counts_what_is_written_not_what_was_there() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/big.bin"), vec![0u8; 1000]).unwrap();
        // An existing project far over the limit can still be worked on.
        let ws = Workspace::open(&root, WorkspaceLimits { max_file_bytes: 100, max_total_bytes: 150 }).unwrap();
        let clone = ws.clone();
        ws.write("a.txt", &[b'x'; 100]).unwrap();
        assert_eq!(clone.written_bytes(), 100, "clones share the count");
        assert!(matches!(
            clone.write("b.txt", &[b'x'; 60]),
            Err(PathError::WorkspaceFull { total: 160, limit: 150, .. })
        ));
        assert!(!root.join("b.txt").exists());
        assert_eq!(ws.written_bytes(), 100, "a refused write counts nothing");
        // Net: shrinking a file gives room back, and so does a delete.
        ws.write("src/big.bin", &[0; 10]).unwrap();
        assert_eq!(ws.written_bytes(), 100 - 990);
        ws.write("b.txt", &[b'x'; 60]).unwrap();
        ws.delete("a.txt").unwrap();
        assert_eq!(ws.written_bytes(), 100 - 990 + 60 - 100);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// Whatever string the model sends, a resolved path is inside the root.
        #[test]
        fn resolved_paths_stay_inside(parts in proptest::collection::vec(proptest::prop_oneof![
            proptest::strategy::Just("..".to_string()),
            proptest::strategy::Just(".".to_string()),
            proptest::strategy::Just("".to_string()),
            proptest::strategy::Just("/".to_string()),
            proptest::strategy::Just("link".to_string()),
            "[a-z.]{1,4}",
            ".{0,6}",
        ], 0..8)) {
            let (d, ws) = ws();
            let _ = symlink(d.path(), ws.root().join("link"));
            let rel = parts.join("/");
            if let Ok(p) = ws.resolve(&rel) {
                proptest::prop_assert!(p.starts_with(ws.root()), "{rel:?} -> {p:?}");
            }
        }
    }
}
