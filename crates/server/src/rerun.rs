//! Where an interrupted build starts again from: its workspace as it was before the run that
//! was interrupted, so a re-run is the same build, not a build on top of half a build.
//!
//! - A **new build** has a folder of its own (`DATA/builds/ID`): a re-run starts with it empty.
//! - A **follow-up build** (`continue`) works in its parent's folder. Before its first run the
//!   server copies that folder to `DATA/snapshots/ID` (written under a temporary name and
//!   renamed, so a copy cut short by a kill is never taken for a whole one); a re-run first puts
//!   the copy back. The copy goes once the build has ended.
//!
//! Folders of dependencies and build output (`node_modules`, `target`, …) are neither copied
//! nor removed: they are the costly part to copy, and the project's own tools make them again.

use std::io;
use std::path::{Path, PathBuf};
use wright_store::BuildRecord;

/// Folders the project's tools regenerate, left as they are.
const REGENERATED: &[&str] = &["node_modules", "target", "__pycache__", ".venv"];

fn snapshots(data_dir: &Path) -> PathBuf {
    data_dir.join("snapshots")
}

/// Where the copy of a follow-up build's folder is kept.
pub fn snapshot_of(data_dir: &Path, build: &str) -> PathBuf {
    snapshots(data_dir).join(build)
}

/// Make the build's workspace what it was before its first run: empty a new build's own folder
/// on a re-run; for a follow-up build, put its copy back, or take the copy before the first run.
pub fn prepare(data_dir: &Path, record: &BuildRecord, continuing: bool) -> io::Result<()> {
    let ws = Path::new(&record.start.workspace);
    if !continuing {
        // Only the folder the server made for this build is ever emptied.
        let own = data_dir.join("builds").join(&record.start.id);
        if record.attempt > 1 && ws == own && ws.exists() {
            remove_all(ws)?;
        }
        return Ok(());
    }
    if !ws.is_dir() {
        // The parent's folder is gone; preparing the build says so.
        return Ok(());
    }
    let snap = snapshot_of(data_dir, &record.start.id);
    if snap.is_dir() {
        clear(ws)?;
        copy_tree(&snap, ws)
    } else {
        let tmp = snapshots(data_dir).join(format!(".partial-{}-{}", record.start.id, std::process::id()));
        if tmp.exists() {
            remove_all(&tmp)?;
        }
        std::fs::create_dir_all(&tmp)?;
        copy_tree(ws, &tmp)?;
        std::fs::rename(&tmp, &snap)
    }
}

/// Drop a build's copy once it has ended (nothing to do for a new build).
pub fn discard(data_dir: &Path, build: &str) {
    let snap = snapshot_of(data_dir, build);
    match remove_all(&snap) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!(build, "removing the copy of its folder {}: {e}", snap.display()),
    }
}

/// End a build that did not finish a run (cancelled while queued again, out of re-runs, or
/// unable to start): put its copy back into `workspace` first, as a re-run would, since an
/// interrupted run may have left the parent's folder half-written, then drop the copy. A copy
/// that cannot be put back is kept (the reaper's sweep removes it later) and the error returned.
pub fn restore_and_discard(data_dir: &Path, build: &str, workspace: &Path) -> io::Result<()> {
    let snap = snapshot_of(data_dir, build);
    if snap.is_dir() && workspace.is_dir() {
        clear(workspace)?;
        copy_tree(&snap, workspace)?;
    }
    discard(data_dir, build);
    Ok(())
}

/// The builds that have copies (whole or cut short), to remove those of builds that ended.
pub fn kept(data_dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(snapshots(data_dir)) else { return vec![] };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let build = match name.strip_prefix(".partial-") {
                Some(rest) => rest.rsplit_once('-').map(|(b, _)| b.to_string())?,
                None => name,
            };
            Some((build, e.path()))
        })
        .collect()
}

fn regenerated(path: &Path) -> bool {
    path.file_name().is_some_and(|n| REGENERATED.iter().any(|r| n == *r))
}

/// Give a directory its owner's write bit (and read and search), so what is inside can be
/// removed: a project may make read-only folders, and deleting in one needs write on it.
fn writable(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::symlink_metadata(dir)?.permissions();
    if perms.mode() & 0o700 != 0o700 {
        perms.set_mode(perms.mode() | 0o700);
        std::fs::set_permissions(dir, perms)?;
    }
    Ok(())
}

/// `remove_dir_all` that also removes what is inside read-only folders.
pub fn remove_all(path: &Path) -> io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            let dirs = walkdir::WalkDir::new(path).follow_links(false).into_iter().filter_entry(|e| {
                // Open each folder before going in, so its contents can be listed and removed.
                !e.file_type().is_dir() || writable(e.path()).is_ok()
            });
            for entry in dirs {
                entry.map_err(io::Error::other)?;
            }
            std::fs::remove_dir_all(path)
        }
        other => other,
    }
}

/// Remove everything in `dir` but the regenerated folders.
fn clear(dir: &Path) -> io::Result<()> {
    writable(dir)?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            if regenerated(&path) {
                continue;
            }
            clear(&path)?;
            if std::fs::read_dir(&path)?.next().is_none() {
                std::fs::remove_dir(&path)?;
            }
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Copy `from` into `to` (which exists): files with their modes, links as links, and, as root,
/// each entry's owner (the sandbox user may own a project's files).
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let root = wright_sandbox::running_as_root();
    // A folder's mode is set once its contents are in: a read-only one could not take them.
    let mut folders: Vec<(PathBuf, std::fs::Permissions)> = Vec::new();
    let walk = walkdir::WalkDir::new(from).follow_links(false).min_depth(1);
    for entry in walk.into_iter().filter_entry(|e| !(e.file_type().is_dir() && regenerated(e.path()))) {
        let entry = entry.map_err(io::Error::other)?;
        let rel = entry.path().strip_prefix(from).map_err(io::Error::other)?;
        let dest = to.join(rel);
        let meta = entry.path().symlink_metadata()?;
        let kind = meta.file_type();
        if kind.is_dir() {
            std::fs::create_dir_all(&dest)?;
            writable(&dest)?;
            folders.push((dest.clone(), meta.permissions()));
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &dest)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &dest)?;
        } else {
            // Sockets, pipes: nothing a project is made of.
            continue;
        }
        if root {
            std::os::unix::fs::lchown(&dest, Some(meta.uid()), Some(meta.gid()))?;
        }
    }
    // Deepest first, so no folder is closed before those inside it are set.
    for (dir, perms) in folders.into_iter().rev() {
        std::fs::set_permissions(&dir, perms)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use wright_store::{NewBuild, RunStatus, Tokens};

    fn record(id: &str, workspace: &Path, attempt: u32) -> BuildRecord {
        BuildRecord {
            start: NewBuild {
                kind: wright_events::RunKind::Build,
                id: id.into(),
                parent_id: None,
                prompt: "p".into(),
                template: "static".into(),
                lang: "en".into(),
                provider: "openai".into(),
                model: "m".into(),
                workspace: workspace.display().to_string(),
                started_at: wright_events::now(),
            },
            status: RunStatus::Running,
            end_reason: None,
            fix_attempts: 0,
            turns: 0,
            tokens: Tokens::default(),
            duration_ms: None,
            files: vec![],
            report: None,
            finished_at: None,
            owner: Some("u".into()),
            preview_key: None,
            request: None,
            attempt,
        }
    }

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_follow_up_rerun_gets_its_parents_folder_back() {
        let data = tempfile::tempdir().unwrap();
        let ws = data.path().join("builds").join("parent");
        write(&ws.join("index.html"), "v1");
        write(&ws.join("src/app.js"), "app v1");
        write(&ws.join("node_modules/dep/index.js"), "dep");
        std::os::unix::fs::symlink("index.html", ws.join("home.html")).unwrap();

        // First run: the copy is taken; the run then changes the folder and is interrupted.
        prepare(data.path(), &record("child", &ws, 1), true).unwrap();
        assert!(snapshot_of(data.path(), "child").join("src/app.js").is_file());
        assert!(!snapshot_of(data.path(), "child").join("node_modules").exists(), "regenerated folders stay out");
        write(&ws.join("index.html"), "half written");
        write(&ws.join("new/extra.js"), "extra");
        std::fs::remove_file(ws.join("src/app.js")).unwrap();
        write(&ws.join("node_modules/dep2/index.js"), "dep2");

        // The re-run starts from the parent's state.
        prepare(data.path(), &record("child", &ws, 2), true).unwrap();
        assert_eq!(std::fs::read_to_string(ws.join("index.html")).unwrap(), "v1");
        assert_eq!(std::fs::read_to_string(ws.join("src/app.js")).unwrap(), "app v1");
        assert!(!ws.join("new").exists());
        assert_eq!(std::fs::read_link(ws.join("home.html")).unwrap(), Path::new("index.html"));
        assert!(ws.join("node_modules/dep/index.js").is_file() && ws.join("node_modules/dep2").is_dir());

        assert_eq!(kept(data.path()).into_iter().map(|(b, _)| b).collect::<Vec<_>>(), ["child"]);
        discard(data.path(), "child");
        assert!(kept(data.path()).is_empty());
    }

    #[test]
    fn a_follow_up_that_ends_without_running_again_gives_its_parents_folder_back() {
        let data = tempfile::tempdir().unwrap();
        let ws = data.path().join("builds").join("parent");
        write(&ws.join("index.html"), "v1");
        prepare(data.path(), &record("child", &ws, 1), true).unwrap();
        // The interrupted run left the folder half-written; the build is then cancelled.
        write(&ws.join("index.html"), "half written");
        write(&ws.join("new.js"), "extra");
        restore_and_discard(data.path(), "child", &ws).unwrap();
        assert_eq!(std::fs::read_to_string(ws.join("index.html")).unwrap(), "v1");
        assert!(!ws.join("new.js").exists());
        assert!(!snapshot_of(data.path(), "child").exists(), "the copy is gone");
        // A build without a copy (a new build) has nothing to put back.
        write(&ws.join("later.txt"), "kept");
        restore_and_discard(data.path(), "other", &ws).unwrap();
        assert!(ws.join("later.txt").exists());
    }

    #[test]
    fn read_only_folders_are_copied_put_back_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let data = tempfile::tempdir().unwrap();
        let ws = data.path().join("builds").join("parent");
        write(&ws.join("docs/a/readme.md"), "v1");
        let lock = |p: &Path| std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o555)).unwrap();
        lock(&ws.join("docs/a"));
        lock(&ws.join("docs"));

        prepare(data.path(), &record("child", &ws, 1), true).unwrap();
        let snap = snapshot_of(data.path(), "child");
        assert_eq!(std::fs::read_to_string(snap.join("docs/a/readme.md")).unwrap(), "v1");
        assert_eq!((mode(&snap.join("docs")), mode(&snap.join("docs/a"))), (0o555, 0o555));

        // The run adds a file to the read-only folders; the re-run clears it and copies back.
        std::fs::set_permissions(ws.join("docs/a"), std::fs::Permissions::from_mode(0o755)).unwrap();
        write(&ws.join("docs/a/extra.md"), "x");
        prepare(data.path(), &record("child", &ws, 2), true).unwrap();
        assert!(!ws.join("docs/a/extra.md").exists());
        assert_eq!(std::fs::read_to_string(ws.join("docs/a/readme.md")).unwrap(), "v1");
        assert_eq!((mode(&ws.join("docs")), mode(&ws.join("docs/a"))), (0o555, 0o555));

        discard(data.path(), "child");
        assert!(!snap.exists(), "a copy with read-only folders is removed too");
        // Let the temporary folder go.
        remove_all(&ws).unwrap();
    }

    #[test]
    fn a_new_build_rerun_starts_empty_and_nothing_else_is_emptied() {
        let data = tempfile::tempdir().unwrap();
        let own = data.path().join("builds").join("b1");
        write(&own.join("index.html"), "half");
        prepare(data.path(), &record("b1", &own, 1), false).unwrap();
        assert!(own.join("index.html").exists(), "a first run keeps what is there");
        prepare(data.path(), &record("b1", &own, 2), false).unwrap();
        assert!(!own.exists());
        let elsewhere = data.path().join("mine");
        write(&elsewhere.join("keep.txt"), "x");
        prepare(data.path(), &record("b2", &elsewhere, 3), false).unwrap();
        assert!(elsewhere.join("keep.txt").exists(), "only the server's own folder for the build");
    }
}
