//! A folder as a capability, for wright's own process touching folders that generated code
//! controls (a build's workspace, its `dist/`, a snapshot of it).
//!
//! Code the model wrote runs in the sandbox with write access to its workspace, so at any moment
//! it can replace a file or a folder there with a link to `/tmp`, to the user's home, or to
//! another build. Every step wright itself takes in that folder (the React pass's copies, the
//! page write, snapshots and restores, the archive, file views, previews, retention) must then
//! treat the folder's contents as hostile: it must neither read nor write through a link.
//!
//! [`Dir`] holds an open descriptor of the folder, never a path to re-resolve, and resolves
//! every relative path with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`: the kernel refuses
//! any link on the way and any step out of the folder, atomically, so there is no window between
//! a check and a use. On a kernel without `openat2` (before 5.6, or a seccomp profile that hides
//! it) the same is done one component at a time with `openat(O_NOFOLLOW)`. Writes go to a
//! temporary file made with `O_EXCL` in the parent's descriptor and renamed over the name,
//! which replaces a planted link rather than writing through it; but a link found at the name
//! is refused first, so the step can say what it refused ([`Error::Link`]).
//!
//! ```
//! # fn main() -> Result<(), wright_beneath::Error> {
//! let tmp = tempfile::tempdir().map_err(|e| wright_beneath::Error::io("temp", "", &e))?;
//! let root = wright_beneath::Dir::create(tmp.path())?;
//! root.write("dist/index.html", b"<h1>hi</h1>")?;
//! std::os::unix::fs::symlink("/etc", tmp.path().join("etc")).map_err(|e| wright_beneath::Error::io("link", "", &e))?;
//! assert!(matches!(root.read("etc/passwd"), Err(wright_beneath::Error::Link(_))));
//! # Ok(()) }
//! ```

mod dir;
mod path;
mod tree;

pub use dir::{Dir, Entry, Kind, Meta, Written};
pub use path::normalize;
pub use tree::{CopyReport, Links, WalkEntry};

/// Why a step in a folder was refused or failed. Paths are the relative paths asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("the path is empty")]
    Empty,
    #[error("`{0}` is an absolute path; use a path relative to the project folder, like `index.html`")]
    Absolute(String),
    #[error("`{0}` points outside the project folder")]
    Escapes(String),
    #[error("`{0}` contains a character that is not allowed in a path")]
    BadCharacter(String),
    /// The path is, or goes through, a symbolic link: wright's own steps never follow one.
    #[error("`{0}` is or goes through a link; wright does not follow links inside a project")]
    Link(String),
    #[error("`{0}` does not exist")]
    NotFound(String),
    #[error("`{0}` is a folder, not a file")]
    IsDirectory(String),
    #[error("`{0}` is not a folder")]
    NotADirectory(String),
    #[error("`{0}` is not a regular file")]
    NotRegular(String),
    #[error("{op} `{path}`: {message}")]
    Io { op: &'static str, path: String, message: String },
}

impl Error {
    /// An I/O failure of `op` on `path`, in words.
    pub fn io(op: &'static str, path: &str, e: &std::io::Error) -> Self {
        Self::Io { op, path: path.to_string(), message: e.to_string() }
    }

    /// Map an errno from a resolution of `path` to what it means for a caller.
    fn errno(op: &'static str, path: &str, e: rustix::io::Errno) -> Self {
        use rustix::io::Errno;
        match e {
            Errno::LOOP => Self::Link(path.to_string()),
            Errno::NOENT => Self::NotFound(path.to_string()),
            Errno::NOTDIR => Self::NotADirectory(path.to_string()),
            Errno::ISDIR => Self::IsDirectory(path.to_string()),
            Errno::XDEV => Self::Escapes(path.to_string()),
            other => Self::Io { op, path: path.to_string(), message: std::io::Error::from(other).to_string() },
        }
    }

    /// Whether this refusal is a link (for callers that report refused links as events).
    pub fn is_link(&self) -> bool {
        matches!(self, Self::Link(_))
    }
}
