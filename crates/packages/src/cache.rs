//! The package cache's layout, its atomic fills and its bound.
//!
//! Entries live at `<root>/<ecosystem>/<key>/`, filled in a staging folder beside them and
//! renamed into place, so a half-fetched set is never used. An entry's modification time is
//! its last use ([`touch`]); [`evict`] removes the least recently used entries until the
//! cache fits its bound, never one used within the last hour (a build may be running from it).

use crate::types::{Ecosystem, PackagesError, io_err};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Entries used more recently than this are never evicted: a running build may be using them.
const IN_USE: Duration = Duration::from_secs(3600);
/// Staging folders older than this were left by a crash and are removed.
const STALE_STAGING: Duration = Duration::from_secs(3600);
/// The cache's ecosystem folders [`evict`] trims (npm's sets included).
const TRIMMED: &[&str] = &["python", "rust", "go", "npm"];

/// Where the entry `key` of `ecosystem` lives.
pub fn entry(root: &Path, ecosystem: Ecosystem, key: &str) -> PathBuf {
    root.join(ecosystem.name()).join(key)
}

/// A fresh staging folder for filling `key` (removing crash leftovers first).
pub fn staging(root: &Path, ecosystem: Ecosystem, key: &str) -> Result<PathBuf, PackagesError> {
    let parent = root.join(ecosystem.name());
    std::fs::create_dir_all(&parent).map_err(io_err("creating", &parent))?;
    remove_stale_staging(&parent);
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let dir = parent.join(format!(".staging-{key}-{}-{nanos}", std::process::id()));
    std::fs::create_dir(&dir).map_err(io_err("creating", &dir))?;
    Ok(dir)
}

/// Move a filled staging folder into place. When another build filled the same key first,
/// its entry is kept and this one removed.
pub fn publish(staging: &Path, entry: &Path) -> Result<(), PackagesError> {
    match std::fs::rename(staging, entry) {
        Ok(()) => Ok(()),
        Err(_) if entry.is_dir() => {
            remove_tree(staging);
            Ok(())
        }
        Err(e) => {
            remove_tree(staging);
            Err(io_err("moving into the cache", entry)(e))
        }
    }
}

/// Mark an entry as just used.
pub fn touch(entry: &Path) {
    if let Ok(f) = std::fs::File::open(entry) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// Bytes under `path`, links counted as themselves and never followed.
pub fn size(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return 0 };
    if !meta.is_dir() {
        return meta.len();
    }
    let Ok(entries) = std::fs::read_dir(path) else { return 0 };
    entries.flatten().map(|e| size(&e.path())).sum()
}

/// Remove least recently used entries until the cache holds at most `max_bytes`; `keep` (the
/// entry a build just filled) and entries used within the last hour stay. Returns the bytes
/// removed.
pub fn evict(root: &Path, max_bytes: u64, keep: &str) -> Result<u64, PackagesError> {
    let mut entries: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
    let mut total = 0u64;
    for eco in TRIMMED {
        let dir = root.join(eco);
        let Ok(read) = std::fs::read_dir(&dir) else { continue };
        for e in read.flatten() {
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            let bytes = size(&path);
            total += bytes;
            let name = e.file_name();
            let name = name.to_string_lossy();
            if !meta.is_dir() || name.starts_with('.') || name == keep {
                continue;
            }
            entries.push((meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), bytes, path));
        }
    }
    entries.sort_by_key(|(used, _, _)| *used);
    let now = SystemTime::now();
    let mut removed = 0u64;
    for (used, bytes, path) in entries {
        if total <= max_bytes {
            break;
        }
        if now.duration_since(used).is_ok_and(|age| age < IN_USE) {
            continue;
        }
        writable(&path);
        std::fs::remove_dir_all(&path).map_err(io_err("removing", &path))?;
        total = total.saturating_sub(bytes);
        removed += bytes;
    }
    Ok(removed)
}

/// Remove a folder of the cache and everything in it, best effort. Go makes its module cache
/// read-only (folders 0555), which stops even their owner from deleting what is inside, so
/// every folder is made writable first.
pub fn remove_tree(path: &Path) {
    writable(path);
    let _ = std::fs::remove_dir_all(path);
}

/// Give the owner write and search permission on every folder under `path` (links are not
/// followed), so its contents can be removed.
fn writable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else { return };
    if !meta.is_dir() {
        return;
    }
    let mode = meta.permissions().mode();
    if mode & 0o700 != 0o700 {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | 0o700));
    }
    let Ok(entries) = std::fs::read_dir(path) else { return };
    for e in entries.flatten() {
        writable(&e.path());
    }
}

fn remove_stale_staging(parent: &Path) {
    let Ok(read) = std::fs::read_dir(parent) else { return };
    for e in read.flatten() {
        let stale = e.file_name().to_string_lossy().starts_with(".staging-")
            && e.metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|a| a > STALE_STAGING);
        if stale {
            remove_tree(&e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn entry_of(root: &Path, eco: &str, key: &str, bytes: usize, age: Duration) {
        let dir = root.join(eco).join(key);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("blob"), vec![0u8; bytes]).unwrap();
        let f = std::fs::File::open(&dir).unwrap();
        f.set_modified(SystemTime::now() - age).unwrap();
    }

    #[test]
    fn the_oldest_entries_go_first_and_recent_ones_stay() {
        let t = tempfile::tempdir().unwrap();
        let day = Duration::from_secs(86_400);
        entry_of(t.path(), "python", "old", 1000, day * 3);
        entry_of(t.path(), "rust", "middle", 1000, day * 2);
        entry_of(t.path(), "go", "recent", 1000, Duration::from_secs(60));
        entry_of(t.path(), "python", "new", 1000, day * 4);
        // Over by 2,000 bytes: the two oldest that are neither kept nor in use go.
        let removed = evict(t.path(), 2000, "new").unwrap();
        assert_eq!(removed, 2000);
        assert!(!t.path().join("python/old").exists());
        assert!(!t.path().join("rust/middle").exists());
        assert!(t.path().join("go/recent").exists(), "used a minute ago");
        assert!(t.path().join("python/new").exists(), "kept");
        // Under the bound nothing more goes.
        assert_eq!(evict(t.path(), 2000, "").unwrap(), 0);
    }

    #[test]
    fn a_link_in_the_cache_is_counted_as_itself() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("big"), vec![0u8; 100_000]).unwrap();
        std::fs::create_dir_all(t.path().join("go/k")).unwrap();
        std::os::unix::fs::symlink(outside.path(), t.path().join("go/k/link")).unwrap();
        assert!(size(&t.path().join("go/k")) < 1000);
    }

    /// Go's module cache is read-only; an old entry holding one is still evicted, and a
    /// staging folder holding one is still removed.
    #[test]
    fn read_only_folders_are_evicted_too() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let day = Duration::from_secs(86_400);
        entry_of(t.path(), "go", "old", 1000, day * 3);
        let module = t.path().join("go/old/mod/example.com/greet@v1.2.3");
        std::fs::create_dir_all(&module).unwrap();
        std::fs::write(module.join("greet.go"), b"package greet").unwrap();
        std::fs::set_permissions(module.join("greet.go"), std::fs::Permissions::from_mode(0o444)).unwrap();
        std::fs::set_permissions(&module, std::fs::Permissions::from_mode(0o555)).unwrap();
        let f = std::fs::File::open(t.path().join("go/old")).unwrap();
        f.set_modified(SystemTime::now() - day * 3).unwrap();
        assert!(evict(t.path(), 0, "").unwrap() > 0);
        assert!(!t.path().join("go/old").exists());

        let s = staging(t.path(), Ecosystem::Go, "k").unwrap();
        std::fs::create_dir_all(s.join("ro")).unwrap();
        std::fs::set_permissions(s.join("ro"), std::fs::Permissions::from_mode(0o555)).unwrap();
        remove_tree(&s);
        assert!(!s.exists());
        // The bits themselves are what a non-root owner needs: check they were restored.
        std::fs::create_dir_all(t.path().join("x/ro/inner")).unwrap();
        std::fs::set_permissions(t.path().join("x/ro"), std::fs::Permissions::from_mode(0o555)).unwrap();
        writable(&t.path().join("x"));
        let mode = std::fs::metadata(t.path().join("x/ro")).unwrap().permissions().mode();
        assert_eq!(mode & 0o700, 0o700);
    }

    #[test]
    fn publishing_twice_keeps_the_first() {
        let t = tempfile::tempdir().unwrap();
        let a = staging(t.path(), Ecosystem::Go, "k").unwrap();
        std::fs::write(a.join("f"), b"first").unwrap();
        let b = staging(t.path(), Ecosystem::Go, "k").unwrap();
        std::fs::write(b.join("f"), b"second").unwrap();
        let e = entry(t.path(), Ecosystem::Go, "k");
        publish(&a, &e).unwrap();
        publish(&b, &e).unwrap();
        assert_eq!(std::fs::read(e.join("f")).unwrap(), b"first");
        assert!(!b.exists());
    }
}
