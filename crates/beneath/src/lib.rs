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
mod error;
mod path;
mod tree;

pub use dir::{Dir, Entry, Kind, Meta, Written};
pub use error::Error;
pub use path::normalize;
pub use tree::{CopyReport, Links, WalkEntry};
