//! Path confinement and write limits for one project directory, over a `wright-beneath` capability.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use wright_beneath::{Dir, Error as BeneathError, Kind, Meta, WalkEntry};

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
    /// The path is or goes through a link: no step of wright's own follows one, wherever it
    /// points (commands the model runs can re-aim a link at any moment).
    #[error("`{0}` is or goes through a link; wright does not follow links inside a project")]
    Link(String),
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

impl From<BeneathError> for PathError {
    fn from(e: BeneathError) -> Self {
        match e {
            BeneathError::Empty => Self::Empty,
            BeneathError::Absolute(p) => Self::Absolute(p),
            BeneathError::Escapes(p) => Self::Escapes(p),
            BeneathError::BadCharacter(p) => Self::BadCharacter(p),
            BeneathError::Link(p) => Self::Link(p),
            BeneathError::NotFound(p) => Self::NotFound(p),
            BeneathError::IsDirectory(p) => Self::IsDirectory(p),
            // A file where a folder is wanted on the way: nothing by that name to reach.
            BeneathError::NotADirectory(p) => Self::NotFound(p),
            BeneathError::NotRegular(p) => Self::NotRegular(p),
            BeneathError::Io { op, path, message } => Self::Io { op, path, message },
        }
    }
}

impl PathError {
    /// Whether a link was refused (steps report those as `link_refused` events).
    pub fn is_link(&self) -> bool {
        matches!(self, Self::Link(_))
    }
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

/// A project folder: an open [`Dir`] capability plus write limits. All paths given to it are
/// relative and resolved by the kernel beneath the folder with no link followed, ever (see
/// `wright-beneath`): commands the model runs can make or re-aim links at any time, so a check
/// followed by a use by path would leave a window.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    dir: Arc<Dir>,
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
        Self::existing(root, limits)
    }

    /// Open a workspace that must already exist, creating nothing: for readers (a request to
    /// see a build's files must never make its folder).
    pub fn existing(root: impl AsRef<Path>, limits: WorkspaceLimits) -> Result<Self, PathError> {
        let root = root.as_ref();
        let root = root.canonicalize().map_err(|e| io_err("open", root, &e))?;
        let dir = Dir::open(&root).map_err(|e| match e {
            BeneathError::NotADirectory(_) => {
                let not_a_folder = std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a folder");
                io_err("open", &root, &not_a_folder)
            }
            other => other.into(),
        })?;
        Ok(Self { root, dir: Arc::new(dir), limits, written: Arc::new(Mutex::new(0)) })
    }

    /// The folder as a capability, for steps beyond reading and writing one file (copies,
    /// listings, clearing).
    pub fn dir(&self) -> &Dir {
        &self.dir
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

    /// The folder's path: for handing to the sandbox and to other programs, never for joining
    /// paths to open in wright's own process (use this type's methods or [`Workspace::dir`]).
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn limits(&self) -> WorkspaceLimits {
        self.limits
    }

    /// Check a model-given relative path and give its place under the root, for messages and for
    /// other programs (a test runner's file argument).
    ///
    /// Refuses absolute paths, NUL bytes, `..` that climbs above the root, and any existing
    /// component that is a link (inside or out: a link can be re-aimed after the check). Opening
    /// what the path names must still go through this type, never through the returned path.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, PathError> {
        let names = normalize(rel)?;
        match self.dir.meta(rel) {
            Ok(m) if m.kind == Kind::Link => return Err(PathError::Link(rel.to_string())),
            Ok(_) | Err(BeneathError::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
        let mut real = self.root.clone();
        real.extend(names);
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

    /// The entry at `rel` as it is (a link at the end is [`Kind::Link`]).
    pub fn meta(&self, rel: &str) -> Result<Meta, PathError> {
        Ok(self.dir.meta(rel)?)
    }

    /// Whether a regular file is at `rel`, reached with no link.
    pub fn is_file(&self, rel: &str) -> bool {
        self.dir.is_file(rel)
    }

    /// Whether a folder is at `rel`, reached with no link.
    pub fn is_dir(&self, rel: &str) -> bool {
        self.dir.is_dir(rel)
    }

    /// Whether anything (a file, a folder, a link) has the name `rel`.
    pub fn exists(&self, rel: &str) -> bool {
        self.dir.meta(rel).is_ok()
    }

    /// Read a file as bytes: a regular file with one name, reached with no link.
    pub fn read(&self, rel: &str) -> Result<Vec<u8>, PathError> {
        let (mut file, meta) = self.dir.open_file(rel)?;
        if meta.nlink > 1 {
            return Err(PathError::HardLinked(rel.to_string()));
        }
        let mut out = Vec::with_capacity(usize::try_from(meta.len).unwrap_or(0));
        std::io::Read::read_to_end(&mut file, &mut out).map_err(|e| io_err("read", Path::new(rel), &e))?;
        Ok(out)
    }

    /// Write a whole file atomically (new file + rename), creating parent folders.
    ///
    /// Renaming replaces the directory entry, so a hard link that pointed the old name at a
    /// file outside the workspace is cut rather than written through. A link at the name or on
    /// the way is refused.
    pub fn write(&self, rel: &str, content: &[u8]) -> Result<WriteOutcome, PathError> {
        let names = normalize(rel)?;
        let bytes = content.len() as u64;
        if bytes > self.limits.max_file_bytes {
            return Err(PathError::FileTooLarge { path: rel.to_string(), bytes, limit: self.limits.max_file_bytes });
        }
        let (parent, name) = self.dir.parent_for_write(rel)?;
        let old = match parent.meta_of(name.as_ref(), rel) {
            Ok(m) if m.kind == Kind::Dir => return Err(PathError::IsDirectory(rel.to_string())),
            Ok(m) if m.kind == Kind::Link => return Err(PathError::Link(rel.to_string())),
            Ok(m) if m.kind == Kind::File => m.len,
            Ok(_) | Err(BeneathError::NotFound(_)) => 0,
            Err(e) => return Err(e.into()),
        };
        let delta = i64::try_from(bytes).unwrap_or(i64::MAX).saturating_sub(i64::try_from(old).unwrap_or(0));
        self.reserve(rel, delta)?;
        let written = match parent.write_entry(name.as_ref(), rel, content, None) {
            Ok(w) => w,
            Err(e) => {
                self.release(delta);
                return Err(e.into());
            }
        };
        Ok(WriteOutcome { path: names.join("/"), bytes, created: written.created })
    }

    /// Delete a file (or an empty folder). A link is removed itself, wherever it points (a
    /// command may leave one aiming outside the project; unlinking never touches the target).
    pub fn delete(&self, rel: &str) -> Result<String, PathError> {
        let names = normalize(rel)?;
        if names.is_empty() {
            return Err(PathError::Escapes(rel.to_string()));
        }
        let meta = self.dir.remove(rel)?;
        if meta.kind == Kind::File {
            self.release(i64::try_from(meta.len).unwrap_or(i64::MAX));
        }
        Ok(names.join("/"))
    }

    /// Every entry beneath the root, links listed and never followed; folders for which
    /// `enter` says no are listed but not entered.
    pub fn walk(&self, enter: &dyn Fn(&str) -> bool) -> Vec<WalkEntry> {
        self.dir.walk(enter).unwrap_or_default()
    }

    /// Total bytes of regular files under the root (links not followed). Walks the whole tree:
    /// for reports, never on a write.
    pub fn total_bytes(&self) -> u64 {
        self.walk(&|_| true).iter().filter(|e| e.kind == Kind::File).map(|e| e.len).sum()
    }
}

/// Lexically normalise a relative path: drop `.`, apply `..`, refuse anything that leaves.
fn normalize(rel: &str) -> Result<Vec<String>, PathError> {
    Ok(wright_beneath::normalize(rel)?)
}

fn io_err(op: &'static str, path: &Path, e: &std::io::Error) -> PathError {
    PathError::Io { op, path: path.to_string_lossy().into_owned(), message: e.to_string() }
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
        assert!(matches!(ws.read("leak"), Err(PathError::Link(_))));
        assert!(matches!(ws.write("up/secret.txt", b"x"), Err(PathError::Link(_))));
        assert!(matches!(ws.read("procroot/etc/passwd"), Err(PathError::Link(_))));
        assert!(matches!(ws.write("dangling", b"x"), Err(PathError::Link(_))));
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "s");
        // A link that stays inside is refused too: it can be re-aimed out after any check.
        std::fs::create_dir(ws.root().join("real")).unwrap();
        symlink(ws.root().join("real"), ws.root().join("alias")).unwrap();
        assert!(matches!(ws.write("alias/f.txt", b"ok"), Err(PathError::Link(_))));
        assert!(!ws.root().join("real/f.txt").exists());
        // Links out can be deleted: the link goes, its target stays.
        assert_eq!(ws.delete("leak").unwrap(), "leak");
        assert!(ws.delete("dangling").is_ok() && ws.delete("up").is_ok());
        assert!(!ws.root().join("leak").exists() && outside.exists() && d.path().exists());
        // But not through a link out.
        symlink(d.path(), ws.root().join("up2")).unwrap();
        assert!(matches!(ws.delete("up2/secret.txt"), Err(PathError::Link(_))));
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
