//! Where an interrupted build starts again from: its workspace as it was before the run that
//! was interrupted, so a re-run is the same build, not a build on top of half a build. Each
//! later run works in a folder of its own ([`claim_folder`], `DATA/builds/ID.N` for run `N`),
//! so a run that lost its lease but is still alive (frozen, cut off from the database) writes
//! only into its own claim's folder, never into the run that holds the build now.
//!
//! - A **new build** has a folder of its own (`DATA/builds/ID`): a re-run starts in an empty
//!   folder of its own, and the run before's folder is removed.
//! - A **follow-up build** (`continue`) works in its parent's folder. Before its first run the
//!   server copies that folder to `DATA/snapshots/ID` (written under a temporary name and
//!   renamed, so a copy cut short by a kill is never taken for a whole one); a re-run works in
//!   a copy of that copy, and puts it back into the parent's folder too. The copy goes once the
//!   build has ended.
//!
//! Folders of dependencies and build output (`node_modules`, `target`, …) are neither copied
//! nor removed: they are the costly part to copy, and the project's own tools make them again.

use std::io;
use std::path::{Path, PathBuf};
use wright_engine::LocalArtifacts;
use wright_sandbox::{Dir, DirError, Links};
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

/// The folder a claim of a build works in when it is not the build's first: `DATA/builds/ID.N`
/// for run `N`. A run that lost its lease may still be alive (frozen, cut off from the
/// database) and write on; it writes only into the folder of its own claim, never into this.
pub fn claim_folder(data_dir: &Path, build: &str, attempt: u32) -> PathBuf {
    data_dir.join("builds").join(format!("{build}.{attempt}"))
}

/// Whether `folder` is one the server made for this build alone (`DATA/builds/ID` or a claim's
/// `DATA/builds/ID.N`), as opposed to the folder of the build a follow-up continues.
fn is_own(data_dir: &Path, build: &str, folder: &Path) -> bool {
    let builds = data_dir.join("builds");
    let Some(name) = folder.file_name().and_then(|n| n.to_str()) else { return false };
    folder.parent() == Some(builds.as_path())
        && (name == build
            || name.strip_prefix(build).and_then(|r| r.strip_prefix('.')).is_some_and(|n| n.parse::<u32>().is_ok()))
}

/// Make ready the folder this claim of the build works in, and say which it is.
///
/// A first run works where the build was queued to (a new build's own folder; a follow-up's
/// parent's folder, of which a copy is taken first). A later run (the one before it was
/// interrupted or lost its lease) works in a new folder of its own ([`claim_folder`]): empty for
/// a new build, a copy of the parent's folder as it was for a follow-up. The folder of the run
/// before is removed when it was the build's own, or put back as it was when it was the
/// parent's.
///
/// The workspace is the generated code's: every step in it goes through a `wright-beneath`
/// capability, so links it holds are copied as links (never followed) and a link met where a
/// folder or file is to be written stops the step.
pub fn prepare(artifacts: &LocalArtifacts, record: &BuildRecord, continuing: bool) -> io::Result<PathBuf> {
    let data_dir = artifacts.root();
    let id = &record.start.id;
    let recorded = artifacts.resolve(Path::new(&record.start.workspace));
    let before = recorded.as_path();
    let snap = snapshot_of(data_dir, id);
    let parents = continuing && !is_own(data_dir, id, before);
    if parents && before.is_dir() && !snap.is_dir() {
        // Taken before any run changes the parent's folder (a run cut short before the copy
        // was whole changed nothing yet).
        let tmp = snapshots(data_dir).join(format!(".partial-{id}-{}", std::process::id()));
        if tmp.exists() {
            remove_all(&tmp)?;
        }
        let into = Dir::create(&tmp).map_err(io::Error::other)?;
        copy(&Dir::open(before).map_err(io::Error::other)?, &into)?;
        std::fs::rename(&tmp, &snap)?;
    }
    if record.attempt <= 1 {
        // The parent's folder may be gone; preparing the build says so.
        return Ok(before.to_path_buf());
    }
    if continuing && !snap.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("the folder of the build it continues ({}) is gone", before.display()),
        ));
    }
    let folder = claim_folder(data_dir, id, record.attempt);
    match std::fs::symlink_metadata(&folder) {
        Ok(_) => remove_all(&folder)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    // What the lost run left is not this run's; failing to tidy it up does not stop this run.
    let tidied = if is_own(data_dir, id, before) {
        match remove_all(before) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    } else if parents && before.is_dir() {
        put_back(&snap, before)
    } else {
        Ok(())
    };
    if let Err(e) = tidied {
        tracing::warn!(build = %id, "tidying the folder of the run before ({}): {e}", before.display());
    }
    if let Some(parent) = folder.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let into = Dir::create(&folder).map_err(io::Error::other)?;
    if continuing {
        copy(&Dir::open(&snap).map_err(io::Error::other)?, &into)?;
    }
    Ok(folder)
}

/// Copy the project in `from` into a new folder `to` (written under a temporary name and
/// renamed, as a follow-up's copy is): a classmate's copy of a shared build starts from it.
/// Links are copied as links, never followed; regenerated folders are left out.
pub fn copy_project(from: &Path, to: &Path) -> io::Result<()> {
    let (Some(parent), Some(name)) = (to.parent(), to.file_name().and_then(|n| n.to_str())) else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a folder to make", to.display())));
    };
    std::fs::create_dir_all(parent)?;
    let tmp = parent.join(format!(".partial-{name}-{}", std::process::id()));
    let into = Dir::create(&tmp).map_err(io::Error::other)?;
    let copied = Dir::open(from).map_err(io::Error::other).and_then(|from| copy(&from, &into));
    drop(into);
    match copied.and_then(|()| std::fs::rename(&tmp, to)) {
        Ok(()) => Ok(()),
        Err(e) => {
            // Half a copy is nobody's, under its temporary name too.
            let _ = remove_all(&tmp);
            Err(e)
        }
    }
}

/// Remove the folders of a build's earlier claims (`DATA/builds/ID`, `DATA/builds/ID.N`) that
/// are still there (a lost run that came back after its folder was removed may have made it
/// again), for retention; all but `keep` (the folder the build is known by, which retention
/// removes itself).
pub fn remove_claim_folders(data_dir: &Path, build: &str, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(data_dir.join("builds")) else { return };
    for e in entries.flatten() {
        let path = e.path();
        if path != keep
            && is_own(data_dir, build, &path)
            && let Err(e) = remove_all(&path)
            && e.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!(build, "removing {}: {e}", path.display());
        }
    }
}

/// Empty `workspace` (but its regenerated folders) and copy the snapshot `snap` back into it.
fn put_back(snap: &Path, workspace: &Path) -> io::Result<()> {
    let ws = Dir::open(workspace).map_err(io::Error::other)?;
    ws.clear(&keep_out).map_err(io::Error::other)?;
    copy(&Dir::open(snap).map_err(io::Error::other)?, &ws)
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
        put_back(&snap, workspace)?;
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

/// Whether a folder of that name is copied and cleared (the regenerated ones are not).
fn keep_out(name: &str) -> bool {
    !REGENERATED.contains(&name)
}

/// Remove the folder at `path` (a build's own folder, a snapshot) and all inside it, read-only
/// folders too, through its parent's descriptor: nothing inside is followed, whatever links the
/// generated code left. A link at `path` itself is removed, not followed.
pub fn remove_all(path: &Path) -> io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a folder to remove", path.display()),
        ));
    };
    let parent = Dir::open(parent).map_err(|e| match e {
        DirError::NotFound(_) => io::Error::new(io::ErrorKind::NotFound, e.to_string()),
        other => io::Error::other(other),
    })?;
    parent.remove_tree(name).map_err(|e| match e {
        DirError::NotFound(_) => io::Error::new(io::ErrorKind::NotFound, e.to_string()),
        other => io::Error::other(other),
    })
}

/// Copy `from` into `to` (which exists): files with their modes, links as links, and, as root,
/// each entry's owner (the sandbox user may own a project's files).
fn copy(from: &Dir, to: &Dir) -> io::Result<()> {
    let root = wright_sandbox::running_as_root();
    from.copy_into(to, Links::Recreate, &keep_out, root).map(|_| ()).map_err(io::Error::other)
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
                template: Some(wright_events::Template::Static),
                lang: wright_events::Lang::En,
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
            job: None,
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
        prepare(&LocalArtifacts::new(data.path()), &record("child", &ws, 1), true).unwrap();
        assert!(snapshot_of(data.path(), "child").join("src/app.js").is_file());
        assert!(!snapshot_of(data.path(), "child").join("node_modules").exists(), "regenerated folders stay out");
        write(&ws.join("index.html"), "half written");
        write(&ws.join("new/extra.js"), "extra");
        std::fs::remove_file(ws.join("src/app.js")).unwrap();
        write(&ws.join("node_modules/dep2/index.js"), "dep2");

        // The re-run starts from the parent's state.
        prepare(&LocalArtifacts::new(data.path()), &record("child", &ws, 2), true).unwrap();
        assert_eq!(std::fs::read_to_string(ws.join("index.html")).unwrap(), "v1");
        assert_eq!(std::fs::read_to_string(ws.join("src/app.js")).unwrap(), "app v1");
        assert!(!ws.join("new").exists());
        assert_eq!(std::fs::read_link(ws.join("home.html")).unwrap(), Path::new("index.html"));
        assert!(ws.join("node_modules/dep/index.js").is_file() && ws.join("node_modules/dep2").is_dir());

        assert_eq!(kept(data.path()).into_iter().map(|(b, _)| b).collect::<Vec<_>>(), ["child"]);
        discard(data.path(), "child");
        assert!(kept(data.path()).is_empty());
    }

    /// Links the generated code left are copied as links, never followed; links a stale run
    /// plants before the folder is put back are removed, and nothing is written through them.
    #[test]
    fn snapshots_and_restores_never_follow_planted_links() {
        let data = tempfile::tempdir().unwrap();
        let outside = data.path().join("home-of-the-user");
        write(&outside.join("secret.txt"), "secret");
        let ws = data.path().join("builds").join("parent");
        write(&ws.join("index.html"), "v1");
        write(&ws.join("docs/a.md"), "a");
        std::os::unix::fs::symlink(&outside, ws.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.txt"), ws.join("leak.txt")).unwrap();

        prepare(&LocalArtifacts::new(data.path()), &record("child", &ws, 1), true).unwrap();
        let snap = snapshot_of(data.path(), "child");
        assert_eq!(std::fs::read_link(snap.join("out")).unwrap(), outside, "a link is copied as a link");
        assert!(std::fs::symlink_metadata(snap.join("leak.txt")).unwrap().file_type().is_symlink());

        // A stale run makes `docs` (where the copy puts files back) a link out, and a file name
        // a link to the secret.
        std::fs::remove_dir_all(ws.join("docs")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("docs")).unwrap();
        std::fs::remove_file(ws.join("index.html")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.txt"), ws.join("index.html")).unwrap();
        prepare(&LocalArtifacts::new(data.path()), &record("child", &ws, 2), true).unwrap();
        assert_eq!(std::fs::read_to_string(ws.join("index.html")).unwrap(), "v1");
        assert!(std::fs::symlink_metadata(ws.join("docs")).unwrap().is_dir());
        assert_eq!(std::fs::read_to_string(ws.join("docs/a.md")).unwrap(), "a");
        assert_eq!(std::fs::read_to_string(outside.join("secret.txt")).unwrap(), "secret");
        let names: Vec<_> = std::fs::read_dir(&outside).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "nothing was written outside: {names:?}");

        // Removing the copy removes its links, never what they point at.
        discard(data.path(), "child");
        assert!(!snap.exists() && outside.join("secret.txt").is_file());
    }

    #[test]
    fn a_follow_up_that_ends_without_running_again_gives_its_parents_folder_back() {
        let data = tempfile::tempdir().unwrap();
        let ws = data.path().join("builds").join("parent");
        write(&ws.join("index.html"), "v1");
        prepare(&LocalArtifacts::new(data.path()), &record("child", &ws, 1), true).unwrap();
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

        prepare(&LocalArtifacts::new(data.path()), &record("child", &ws, 1), true).unwrap();
        let snap = snapshot_of(data.path(), "child");
        assert_eq!(std::fs::read_to_string(snap.join("docs/a/readme.md")).unwrap(), "v1");
        assert_eq!((mode(&snap.join("docs")), mode(&snap.join("docs/a"))), (0o555, 0o555));

        // The run adds a file to the read-only folders; the re-run clears it and copies back.
        std::fs::set_permissions(ws.join("docs/a"), std::fs::Permissions::from_mode(0o755)).unwrap();
        write(&ws.join("docs/a/extra.md"), "x");
        prepare(&LocalArtifacts::new(data.path()), &record("child", &ws, 2), true).unwrap();
        assert!(!ws.join("docs/a/extra.md").exists());
        assert_eq!(std::fs::read_to_string(ws.join("docs/a/readme.md")).unwrap(), "v1");
        assert_eq!((mode(&ws.join("docs")), mode(&ws.join("docs/a"))), (0o555, 0o555));

        discard(data.path(), "child");
        assert!(!snap.exists(), "a copy with read-only folders is removed too");
        // Let the temporary folder go.
        remove_all(&ws).unwrap();
        remove_claim_folders(data.path(), "child", Path::new("/"));
        assert!(!claim_folder(data.path(), "child", 2).exists());
    }

    #[test]
    fn a_new_build_rerun_starts_empty_and_nothing_else_is_emptied() {
        let data = tempfile::tempdir().unwrap();
        let own = data.path().join("builds").join("b1");
        write(&own.join("index.html"), "half");
        prepare(&LocalArtifacts::new(data.path()), &record("b1", &own, 1), false).unwrap();
        assert!(own.join("index.html").exists(), "a first run keeps what is there");
        prepare(&LocalArtifacts::new(data.path()), &record("b1", &own, 2), false).unwrap();
        assert!(!own.exists());
        let elsewhere = data.path().join("mine");
        write(&elsewhere.join("keep.txt"), "x");
        prepare(&LocalArtifacts::new(data.path()), &record("b2", &elsewhere, 3), false).unwrap();
        assert!(elsewhere.join("keep.txt").exists(), "only the server's own folder for the build");
    }

    /// A run after a lost one works in a folder of its own: what the stale run writes later
    /// lands in the stale run's folder (or nowhere), never in the new run's.
    #[test]
    fn a_run_after_a_lost_one_works_in_a_folder_of_its_own() {
        let data = tempfile::tempdir().unwrap();
        let own = data.path().join("builds").join("b1");
        write(&own.join("index.html"), "stale");
        let second = prepare(&LocalArtifacts::new(data.path()), &record("b1", &own, 2), false).unwrap();
        assert_eq!(second, claim_folder(data.path(), "b1", 2));
        assert!(second.is_dir() && std::fs::read_dir(&second).unwrap().next().is_none(), "it starts empty");
        assert!(!own.exists(), "the lost run's folder is removed");

        // A follow-up: its second run gets a copy of its parent's folder as it was; the
        // parent's folder, which the lost run half wrote, is put back too.
        let parent = data.path().join("builds").join("parent");
        write(&parent.join("index.html"), "v1");
        prepare(&LocalArtifacts::new(data.path()), &record("child", &parent, 1), true).unwrap();
        write(&parent.join("index.html"), "half written by the lost run");
        let mine = prepare(&LocalArtifacts::new(data.path()), &record("child", &parent, 2), true).unwrap();
        assert_eq!(mine, claim_folder(data.path(), "child", 2));
        assert_eq!(std::fs::read_to_string(mine.join("index.html")).unwrap(), "v1");
        assert_eq!(std::fs::read_to_string(parent.join("index.html")).unwrap(), "v1");
        // The stale run writes on in its own folder; the new run's stays its own.
        write(&parent.join("late.txt"), "stale");
        assert!(!mine.join("late.txt").exists());
        // A third run: the second's folder is removed, the parent's kept.
        let third = prepare(&LocalArtifacts::new(data.path()), &record("child", &mine, 3), true).unwrap();
        assert!(!mine.exists() && parent.is_dir());
        assert_eq!(std::fs::read_to_string(third.join("index.html")).unwrap(), "v1");
        remove_claim_folders(data.path(), "child", Path::new("/"));
        assert!(!third.exists() && parent.is_dir());
    }
}
