//! [`Dir`]: one open folder and the single-entry steps taken beneath it.

use crate::{Error, normalize};
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What an entry is, as the folder says it (a link is a link, never what it points at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Link,
    /// A pipe, socket or device: nothing a project is made of.
    Other,
}

impl Kind {
    fn of(ft: FileType) -> Self {
        match ft {
            FileType::RegularFile => Self::File,
            FileType::Directory => Self::Dir,
            FileType::Symlink => Self::Link,
            _ => Self::Other,
        }
    }
}

/// An entry's own facts (`lstat`, never following a link).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    pub kind: Kind,
    pub len: u64,
    /// Permission bits (`0o7777`).
    pub mode: u32,
    /// How many names the file has; more than one may mean a name outside the folder.
    pub nlink: u64,
    pub uid: u32,
    pub gid: u32,
}

impl Meta {
    fn of(st: &rfs::Stat) -> Self {
        Self {
            kind: Kind::of(FileType::from_raw_mode(st.st_mode)),
            len: u64::try_from(st.st_size).unwrap_or(0),
            mode: st.st_mode & 0o7777,
            #[allow(clippy::useless_conversion)]
            nlink: u64::from(st.st_nlink),
            uid: st.st_uid,
            gid: st.st_gid,
        }
    }
}

/// One name in a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: OsString,
    pub kind: Kind,
}

impl Entry {
    /// The name as text; `None` for a name that is not UTF-8 (wright's paths are text).
    pub fn name_str(&self) -> Option<&str> {
        self.name.to_str()
    }
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Whether nothing had the name before.
    pub created: bool,
    /// The size of the file the write replaced (0 when created).
    pub replaced_len: u64,
}

/// An open folder. Every path given to it is relative and resolved beneath it by the kernel,
/// with no link followed anywhere on the way.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    /// Where it was opened, for messages and for handing to other programs (never re-resolved
    /// by this type).
    path: PathBuf,
}

const NO_LINKS: ResolveFlags =
    ResolveFlags::BENEATH.union(ResolveFlags::NO_SYMLINKS).union(ResolveFlags::NO_MAGICLINKS);

impl Dir {
    /// Open an existing folder at a path wright itself chose (its data folder, a task's folder):
    /// links in that path are the operator's and are followed; nothing beneath it ever is.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let shown = path.to_string_lossy();
        let fd = rfs::open(path, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| Error::errno("open", &shown, e))?;
        Ok(Self { fd, path: path.to_path_buf() })
    }

    /// [`Dir::open`], creating the folder (and its parents) first when it is not there.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        std::fs::create_dir_all(path).map_err(|e| Error::io("create", &path.to_string_lossy(), &e))?;
        Self::open(path)
    }

    /// Where the folder was opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// A second handle on the same folder.
    pub fn try_clone(&self) -> Result<Self, Error> {
        let fd = self.fd.try_clone().map_err(|e| Error::io("open", &self.path.to_string_lossy(), &e))?;
        Ok(Self { fd, path: self.path.clone() })
    }

    /// Open `names` (already normalized) beneath this folder with `flags`, refusing links.
    fn open_names(&self, names: &[String], rel: &str, flags: OFlags, mode: Mode) -> Result<OwnedFd, Error> {
        let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        if names.is_empty() {
            return rfs::openat(&self.fd, ".", flags, mode).map_err(|e| Error::errno("open", rel, e));
        }
        match rfs::openat2(&self.fd, names.join("/"), flags, mode, NO_LINKS) {
            Ok(fd) => Ok(fd),
            // No openat2 here (an old kernel, or a seccomp profile that hides it): one name at a
            // time, each opened without following a link, gives the same guarantee.
            Err(Errno::NOSYS | Errno::PERM | Errno::TOOBIG) => self.open_walking(names, rel, flags, mode),
            // A link where a folder is wanted reads as "not a folder": walk again to say which.
            Err(Errno::NOTDIR) => self.open_walking(names, rel, flags, mode),
            Err(e) => Err(Error::errno("open", rel, e)),
        }
    }

    pub(crate) fn open_walking(
        &self,
        names: &[String],
        rel: &str,
        flags: OFlags,
        mode: Mode,
    ) -> Result<OwnedFd, Error> {
        let Some((last, parents)) = names.split_last() else {
            return rfs::openat(&self.fd, ".", flags, mode).map_err(|e| Error::errno("open", rel, e));
        };
        let mut cur: Option<OwnedFd> = None;
        for name in parents {
            let at = cur.as_ref().map_or(self.fd.as_fd(), AsFd::as_fd);
            let next = rfs::openat(
                at,
                name.as_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| link_or(at, name.as_ref(), rel, e))?;
            cur = Some(next);
        }
        let at = cur.as_ref().map_or(self.fd.as_fd(), AsFd::as_fd);
        rfs::openat(at, last.as_str(), flags, mode).map_err(|e| link_or(at, last.as_ref(), rel, e))
    }

    /// The parent folder of `rel` (opened, links refused) and the last name; `None` for `.`.
    fn parent_of(&self, rel: &str) -> Result<Option<(Dir, String)>, Error> {
        let names = normalize(rel)?;
        let Some((last, parents)) = names.split_last() else { return Ok(None) };
        let parent = self.open_dir_names(parents, rel)?;
        Ok(Some((parent, last.clone())))
    }

    fn open_dir_names(&self, names: &[String], rel: &str) -> Result<Dir, Error> {
        let fd = self.open_names(names, rel, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())?;
        let mut path = self.path.clone();
        path.extend(names);
        Ok(Dir { fd, path })
    }

    /// Open the folder at `rel`.
    pub fn open_dir(&self, rel: &str) -> Result<Dir, Error> {
        let names = normalize(rel)?;
        self.open_dir_names(&names, rel)
    }

    /// Open the folder at `rel`, making it and every missing folder on the way (never through a
    /// link: a link met on the way is refused).
    pub fn create_dir_all(&self, rel: &str) -> Result<Dir, Error> {
        let names = normalize(rel)?;
        let mut cur = self.try_clone()?;
        for name in &names {
            match rfs::mkdirat(cur.fd(), name.as_str(), Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(Error::errno("create folder", rel, e)),
            }
            cur = cur.open_dir_names(std::slice::from_ref(name), rel)?;
        }
        Ok(cur)
    }

    /// The entry at `rel` as it is (a link at the end is [`Kind::Link`]; a link on the way is
    /// refused).
    pub fn meta(&self, rel: &str) -> Result<Meta, Error> {
        match self.parent_of(rel)? {
            None => rfs::fstat(&self.fd).map(|st| Meta::of(&st)).map_err(|e| Error::errno("look at", rel, e)),
            Some((parent, name)) => parent.meta_of(name.as_ref(), rel),
        }
    }

    /// `lstat` of one plain name in this folder (`rel` is how messages name it).
    pub fn meta_of(&self, name: &OsStr, rel: &str) -> Result<Meta, Error> {
        rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .map(|st| Meta::of(&st))
            .map_err(|e| Error::errno("look at", rel, e))
    }

    /// Whether a regular file is at `rel` (reached with no link).
    pub fn is_file(&self, rel: &str) -> bool {
        self.meta(rel).is_ok_and(|m| m.kind == Kind::File)
    }

    /// Whether a folder is at `rel` (reached with no link).
    pub fn is_dir(&self, rel: &str) -> bool {
        self.meta(rel).is_ok_and(|m| m.kind == Kind::Dir)
    }

    /// Open the regular file at `rel` for reading. A pipe planted under the name is not waited
    /// on (the open does not block) and is refused, as is anything else that is not a file.
    pub fn open_file(&self, rel: &str) -> Result<(std::fs::File, Meta), Error> {
        let names = normalize(rel)?;
        let fd = self.open_names(&names, rel, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty())?;
        let meta = rfs::fstat(&fd).map(|st| Meta::of(&st)).map_err(|e| Error::errno("look at", rel, e))?;
        match meta.kind {
            Kind::File => Ok((std::fs::File::from(fd), meta)),
            Kind::Dir => Err(Error::IsDirectory(rel.to_string())),
            _ => Err(Error::NotRegular(rel.to_string())),
        }
    }

    /// The bytes of the regular file at `rel`.
    pub fn read(&self, rel: &str) -> Result<Vec<u8>, Error> {
        let (mut file, meta) = self.open_file(rel)?;
        let mut out = Vec::with_capacity(usize::try_from(meta.len).unwrap_or(0));
        file.read_to_end(&mut out).map_err(|e| Error::io("read", rel, &e))?;
        Ok(out)
    }

    /// Write a whole file: a new file made beside it with `O_EXCL`, then renamed over the name,
    /// so a reader sees the old content or the new, and a hard link to the old file is cut, not
    /// written through. Missing folders on the way are made. A link at the name is refused.
    pub fn write(&self, rel: &str, content: &[u8]) -> Result<Written, Error> {
        let (parent, name) = self.parent_for_write(rel)?;
        parent.write_entry(name.as_ref(), rel, content, None)
    }

    /// The folder a write of `rel` goes into (made, with the folders on the way, when missing;
    /// no link followed) and the name to write there.
    pub fn parent_for_write(&self, rel: &str) -> Result<(Dir, String), Error> {
        let names = normalize(rel)?;
        let Some((name, parents)) = names.split_last() else {
            return Err(Error::IsDirectory(rel.to_string()));
        };
        // Most writes go into a folder that is there: one resolution, no `mkdir` per level.
        let parent = match self.open_dir_names(parents, rel) {
            Ok(dir) => dir,
            Err(Error::NotFound(_)) => self.create_dir_all(&parents.join("/")).or_else(|e| match e {
                Error::Empty => self.try_clone(),
                other => Err(other),
            })?,
            Err(e) => return Err(e),
        };
        Ok((parent, name.clone()))
    }

    /// [`Dir::write`] of one plain name in this folder (`rel` is how messages name it), with
    /// `mode` for the new file when given.
    pub fn write_entry(&self, name: &OsStr, rel: &str, content: &[u8], mode: Option<u32>) -> Result<Written, Error> {
        let before = match self.meta_of(name, rel) {
            Ok(m) => Some(m),
            Err(Error::NotFound(_)) => None,
            Err(e) => return Err(e),
        };
        match before.map(|m| m.kind) {
            Some(Kind::Link) => return Err(Error::Link(rel.to_string())),
            Some(Kind::Dir) => return Err(Error::IsDirectory(rel.to_string())),
            _ => {}
        }
        let (tmp, fd) = self.temp_file(rel)?;
        let result = (|| {
            if let Some(mode) = mode {
                rfs::fchmod(&fd, Mode::from_raw_mode(mode)).map_err(|e| Error::errno("write", rel, e))?;
            }
            let mut file = std::fs::File::from(fd);
            file.write_all(content).map_err(|e| Error::io("write", rel, &e))?;
            drop(file);
            // No fsync: the rename already makes the write all-or-nothing for every reader, and
            // a project is rebuilt from the start after a crash.
            rfs::renameat(&self.fd, tmp.as_os_str(), &self.fd, name).map_err(|e| Error::errno("write", rel, e))
        })();
        if result.is_err() {
            let _ = rfs::unlinkat(&self.fd, tmp.as_os_str(), AtFlags::empty());
        }
        result?;
        Ok(Written { created: before.is_none(), replaced_len: before.map_or(0, |m| m.len) })
    }

    /// A new, uniquely named file in this folder, made with `O_EXCL` (never an existing name).
    fn temp_file(&self, rel: &str) -> Result<(OsString, OwnedFd), Error> {
        let pid = std::process::id();
        for n in 0..1000u32 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let name = OsString::from(format!(".wright-tmp-{pid}-{nanos}-{n}"));
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match rfs::openat(&self.fd, name.as_os_str(), flags, Mode::from_raw_mode(0o666)) {
                Ok(fd) => return Ok((name, fd)),
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(Error::errno("write", rel, e)),
            }
        }
        Err(Error::Io { op: "write", path: rel.to_string(), message: "no free temporary name".into() })
    }

    /// Remove the file, link or empty folder at `rel`. A link is removed itself, wherever it
    /// points; the folder itself (`.`) is never removed.
    pub fn remove(&self, rel: &str) -> Result<Meta, Error> {
        let Some((parent, name)) = self.parent_of(rel)? else { return Err(Error::Escapes(rel.to_string())) };
        let meta = parent.meta_of(name.as_ref(), rel)?;
        let flags = if meta.kind == Kind::Dir { AtFlags::REMOVEDIR } else { AtFlags::empty() };
        rfs::unlinkat(parent.fd(), name.as_str(), flags).map_err(|e| Error::errno("delete", rel, e))?;
        Ok(meta)
    }

    /// The names in this folder (not `.` and `..`), each with its own kind, sorted by name.
    pub fn entries(&self) -> Result<Vec<Entry>, Error> {
        let shown = self.path.to_string_lossy();
        let mut it = rfs::Dir::read_from(&self.fd).map_err(|e| Error::errno("list", &shown, e))?;
        let mut out = Vec::new();
        while let Some(entry) = it.read() {
            let entry = entry.map_err(|e| Error::errno("list", &shown, e))?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => self.meta_of(name, &shown)?.kind,
                ft => Kind::of(ft),
            };
            out.push(Entry { name: name.to_os_string(), kind });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Open the sub-folder `name` of this folder (one name, no link).
    pub(crate) fn child(&self, name: &OsStr, rel: &str) -> Result<Dir, Error> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rfs::openat(&self.fd, name, flags, Mode::empty()).map_err(|e| link_or(self.fd(), name, rel, e))?;
        Ok(Dir { fd, path: self.path.join(name) })
    }
}

/// `openat(O_NOFOLLOW)` says ELOOP for a link at the end, but ENOTDIR for a link where a folder
/// is wanted: look again, so a link is always reported as one.
fn link_or(at: BorrowedFd<'_>, name: &OsStr, rel: &str, e: Errno) -> Error {
    if e == Errno::NOTDIR
        && rfs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
    {
        return Error::Link(rel.to_string());
    }
    Error::errno("open", rel, e)
}
