//! Whole-tree steps on a [`Dir`]: listing, copying and removing, each entry reached through its
//! folder's descriptor, so a folder swapped for a link mid-way is never entered.

use crate::{Dir, Error, Kind};
use rustix::fs::{self as rfs, AtFlags, Mode};
use std::ffi::OsStr;

/// Folders deeper than this are not entered (a project is never this deep; a loop of bind
/// mounts or a hostile tree might be).
const MAX_DEPTH: usize = 64;

/// One entry of a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkEntry {
    /// Relative to the walked folder, with `/` separators.
    pub path: String,
    pub kind: Kind,
    /// Bytes, for a file; 0 otherwise.
    pub len: u64,
}

/// What a copy does with a link it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Leave it out, and say so in [`CopyReport::skipped_links`].
    Skip,
    /// Make the same link at the destination (its target text, never what it points at): for
    /// a faithful snapshot of a project.
    Recreate,
}

/// What a copy did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyReport {
    pub files: u64,
    pub bytes: u64,
    /// Links left out (with [`Links::Skip`]), relative to the copied folder.
    pub skipped_links: Vec<String>,
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() { name.to_string() } else { format!("{prefix}/{name}") }
}

impl Dir {
    /// Every entry beneath this folder, sorted, links listed as links and never followed.
    /// A folder for which `enter` says no is listed but not entered; names that are not UTF-8
    /// are left out.
    pub fn walk(&self, enter: &dyn Fn(&str) -> bool) -> Result<Vec<WalkEntry>, Error> {
        let mut out = Vec::new();
        self.walk_into("", 0, enter, &mut out)?;
        Ok(out)
    }

    fn walk_into(
        &self,
        prefix: &str,
        depth: usize,
        enter: &dyn Fn(&str) -> bool,
        out: &mut Vec<WalkEntry>,
    ) -> Result<(), Error> {
        for entry in self.entries()? {
            let Some(name) = entry.name_str() else { continue };
            let path = join(prefix, name);
            let len = if entry.kind == Kind::File { self.meta_of(&entry.name, &path).map_or(0, |m| m.len) } else { 0 };
            out.push(WalkEntry { path: path.clone(), kind: entry.kind, len });
            if entry.kind == Kind::Dir && depth < MAX_DEPTH && enter(name) {
                // A folder that went away or became a link since it was listed is passed over.
                if let Ok(child) = self.child(&entry.name, &path) {
                    child.walk_into(&path, depth + 1, enter, out)?;
                }
            }
        }
        Ok(())
    }

    /// Copy what is in this folder into `to`: files with their permission bits, folders (whose
    /// modes are set once their contents are in), links per `links`; a folder for which `enter`
    /// says no is left out. With `keep_owner` (wright runs as root) every entry keeps its owner.
    /// A link or a file met at the destination where a folder is to go is refused
    /// ([`Error::Link`]): nothing is written through it.
    pub fn copy_into(
        &self,
        to: &Dir,
        links: Links,
        enter: &dyn Fn(&str) -> bool,
        keep_owner: bool,
    ) -> Result<CopyReport, Error> {
        let mut report = CopyReport::default();
        self.copy_level(to, "", 0, links, enter, keep_owner, &mut report)?;
        Ok(report)
    }

    #[allow(clippy::too_many_arguments)]
    fn copy_level(
        &self,
        to: &Dir,
        prefix: &str,
        depth: usize,
        links: Links,
        enter: &dyn Fn(&str) -> bool,
        keep_owner: bool,
        report: &mut CopyReport,
    ) -> Result<(), Error> {
        for entry in self.entries()? {
            let Some(name) = entry.name_str() else { continue };
            let rel = join(prefix, name);
            let meta = match self.meta_of(&entry.name, &rel) {
                Ok(m) => m,
                Err(Error::NotFound(_)) => continue,
                Err(e) => return Err(e),
            };
            match meta.kind {
                Kind::Dir => {
                    if depth >= MAX_DEPTH || !enter(name) {
                        continue;
                    }
                    let Ok(from) = self.child(&entry.name, &rel) else { continue };
                    match rfs::mkdirat(to.fd(), name, Mode::from_raw_mode(0o700)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(Error::Io { op: "create folder", path: rel, message: e.to_string() }),
                    }
                    let dest = to.child(&entry.name, &rel)?;
                    // Writable while it is filled; its own mode comes last.
                    let _ = rfs::fchmod(dest.fd(), Mode::from_raw_mode(0o700 | meta.mode));
                    from.copy_level(&dest, &rel, depth + 1, links, enter, keep_owner, report)?;
                    rfs::fchmod(dest.fd(), Mode::from_raw_mode(meta.mode)).map_err(|e| Error::Io {
                        op: "set the mode of",
                        path: rel.clone(),
                        message: e.to_string(),
                    })?;
                }
                Kind::File => {
                    let (mut file, meta) = match self.child_file(&entry.name, &rel) {
                        Ok(f) => f,
                        // Replaced by a link or removed since it was listed: not copied.
                        Err(Error::Link(_) | Error::NotFound(_) | Error::NotRegular(_)) => continue,
                        Err(e) => return Err(e),
                    };
                    let mut bytes = Vec::with_capacity(usize::try_from(meta.len).unwrap_or(0));
                    std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| Error::io("read", &rel, &e))?;
                    to.write_entry(&entry.name, &rel, &bytes, Some(meta.mode))?;
                    report.files += 1;
                    report.bytes += bytes.len() as u64;
                }
                Kind::Link => match links {
                    Links::Skip => {
                        report.skipped_links.push(rel);
                        continue;
                    }
                    Links::Recreate => {
                        let target = rfs::readlinkat(self.fd(), name, Vec::new()).map_err(|e| Error::Io {
                            op: "read link",
                            path: rel.clone(),
                            message: e.to_string(),
                        })?;
                        rfs::symlinkat(target.as_c_str(), to.fd(), name).map_err(|e| Error::Io {
                            op: "make link",
                            path: rel.clone(),
                            message: e.to_string(),
                        })?;
                    }
                },
                Kind::Other => continue,
            }
            if keep_owner {
                rfs::chownat(
                    to.fd(),
                    name,
                    Some(rfs::Uid::from_raw(meta.uid)),
                    Some(rfs::Gid::from_raw(meta.gid)),
                    AtFlags::SYMLINK_NOFOLLOW,
                )
                .map_err(|e| Error::Io {
                    op: "set the owner of",
                    path: rel.clone(),
                    message: e.to_string(),
                })?;
            }
        }
        Ok(())
    }

    /// Open one regular file of this folder, refusing a link or anything not a file.
    fn child_file(&self, name: &OsStr, rel: &str) -> Result<(std::fs::File, crate::Meta), Error> {
        // `open_file` normalizes a path; one plain name is its own path.
        let Some(text) = name.to_str() else { return Err(Error::BadCharacter(rel.to_string())) };
        self.open_file(text).map_err(|e| match e {
            Error::Link(_) => Error::Link(rel.to_string()),
            Error::NotFound(_) => Error::NotFound(rel.to_string()),
            Error::NotRegular(_) | Error::IsDirectory(_) => Error::NotRegular(rel.to_string()),
            other => other,
        })
    }

    /// Remove everything in this folder except the folders for which `enter` says no (left as
    /// they are), and then the folders left empty. Links are removed, never followed; a
    /// read-only folder is opened up first so its contents can go.
    pub fn clear(&self, enter: &dyn Fn(&str) -> bool) -> Result<(), Error> {
        self.clear_level("", 0, enter)
    }

    fn clear_level(&self, prefix: &str, depth: usize, enter: &dyn Fn(&str) -> bool) -> Result<(), Error> {
        let shown = if prefix.is_empty() { ".".to_string() } else { prefix.to_string() };
        if let Ok(meta) = rfs::fstat(self.fd()) {
            let mode = meta.st_mode & 0o7777;
            if mode & 0o700 != 0o700 {
                rfs::fchmod(self.fd(), Mode::from_raw_mode(mode | 0o700)).map_err(|e| Error::Io {
                    op: "open up",
                    path: shown.clone(),
                    message: e.to_string(),
                })?;
            }
        }
        for entry in self.entries()? {
            let rel = join(prefix, &entry.name.to_string_lossy());
            if entry.kind == Kind::Dir {
                if !entry.name.to_str().is_some_and(enter) {
                    continue;
                }
                if depth >= MAX_DEPTH {
                    return Err(Error::Io { op: "clear", path: rel, message: "too deep".into() });
                }
                match self.child(&entry.name, &rel) {
                    Ok(child) => child.clear_level(&rel, depth + 1, enter)?,
                    Err(Error::NotFound(_)) => continue,
                    // Became a link since it was listed: the link itself goes below.
                    Err(Error::Link(_)) => {}
                    Err(e) => return Err(e),
                }
                match rfs::unlinkat(self.fd(), entry.name.as_os_str(), AtFlags::REMOVEDIR) {
                    Ok(()) | Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTEMPTY) => {}
                    Err(rustix::io::Errno::NOTDIR) => {
                        let _ = rfs::unlinkat(self.fd(), entry.name.as_os_str(), AtFlags::empty());
                    }
                    Err(e) => return Err(Error::Io { op: "delete folder", path: rel, message: e.to_string() }),
                }
            } else {
                match rfs::unlinkat(self.fd(), entry.name.as_os_str(), AtFlags::empty()) {
                    Ok(()) | Err(rustix::io::Errno::NOENT) => {}
                    Err(e) => return Err(Error::Io { op: "delete", path: rel, message: e.to_string() }),
                }
            }
        }
        Ok(())
    }

    /// Give this folder and everything beneath it to `uid`/`gid`: links change owner
    /// themselves, their targets never do, and a folder swapped for a link while this runs is
    /// never entered (each folder is opened through its parent's descriptor).
    pub fn chown_all(&self, uid: u32, gid: u32) -> Result<(), Error> {
        let (uid, gid) = (rfs::Uid::from_raw(uid), rfs::Gid::from_raw(gid));
        let shown = self.path().to_string_lossy().into_owned();
        rfs::fchown(self.fd(), Some(uid), Some(gid)).map_err(|e| Error::Io {
            op: "set the owner of",
            path: shown,
            message: e.to_string(),
        })?;
        self.chown_level("", 0, uid, gid)
    }

    fn chown_level(&self, prefix: &str, depth: usize, uid: rfs::Uid, gid: rfs::Gid) -> Result<(), Error> {
        for entry in self.entries()? {
            let rel = join(prefix, &entry.name.to_string_lossy());
            let owned = self.meta_of(&entry.name, &rel).is_ok_and(|m| m.uid == uid.as_raw() && m.gid == gid.as_raw());
            if !owned {
                match rfs::chownat(self.fd(), entry.name.as_os_str(), Some(uid), Some(gid), AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(()) | Err(rustix::io::Errno::NOENT) => {}
                    Err(e) => return Err(Error::Io { op: "set the owner of", path: rel, message: e.to_string() }),
                }
            }
            if entry.kind == Kind::Dir && depth < MAX_DEPTH {
                match self.child(&entry.name, &rel) {
                    Ok(child) => child.chown_level(&rel, depth + 1, uid, gid)?,
                    Err(Error::NotFound(_) | Error::Link(_)) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// Remove `rel` and everything beneath it. A link is removed itself; nothing is followed.
    pub fn remove_tree(&self, rel: &str) -> Result<(), Error> {
        let meta = self.meta(rel)?;
        if meta.kind == Kind::Dir {
            self.open_dir(rel)?.clear(&|_| true)?;
        }
        self.remove(rel).map(|_| ())
    }
}

#[cfg(test)]
mod tests;
