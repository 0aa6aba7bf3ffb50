//! What a run leaves behind to be read back: its project files, the project as an archive, and
//! the browser check's screenshot, all through one [`Artifacts`] interface.
//!
//! It lives here, in `wright-engine`, because the engine owns the data directory and its layout
//! (`builds/{id}`, `screenshots/{id}.png`) and already depends on what the local backend needs
//! (the sandbox's [`Workspace`] confinement, `wright-tools`' project listing); the server and the
//! CLI depend on the engine, not the other way round. `wright-store` stays a database crate with
//! no file-system or archive code, so a PostgreSQL backend of the store does not pull them in.
//!
//! [`LocalArtifacts`] keeps them in folders under one root (`[artifacts] root`, `--artifacts`;
//! the data folder by default): builds under `{root}/builds`, screenshots under
//! `{root}/screenshots`, the copies re-runs start from under `{root}/snapshots`. The store
//! records a build's folder relative to that root ([`LocalArtifacts::record`]), so hosts that
//! mount one shared folder at different paths each find it under their own root
//! ([`LocalArtifacts::resolve`]); a folder outside the root (a `--workspace` of the user's own)
//! is recorded as it is.
//!
//! Readers never create anything: a missing workspace is [`ArtifactError::NoFiles`], not a new
//! folder. Every method of [`LocalArtifacts`] does its file work on the blocking pool.

use std::io::Write;
use std::path::{Path, PathBuf};
use wright_sandbox::{PathError, Workspace, WorkspaceLimits};
use wright_store::BuildRecord;

/// A run as its artifacts are found: its id and the workspace the store recorded for it
/// (relative to the artifacts' root, or absolute). A shared backend needs only the id; the
/// local one reads the workspace where it is under its root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRef {
    pub id: String,
    pub workspace: PathBuf,
}

impl From<&BuildRecord> for RunRef {
    fn from(b: &BuildRecord) -> Self {
        Self { id: b.start.id.to_string(), workspace: PathBuf::from(&b.start.workspace) }
    }
}

/// One file of a run's project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// Relative to the project folder, with `/` separators.
    pub path: String,
    pub bytes: u64,
}

/// Why an artifact could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArtifactError {
    /// The run's project is not there (never written, or removed).
    #[error("the files of run {0} are not there")]
    NoFiles(String),
    /// No such file in the project.
    #[error("`{0}` does not exist")]
    NotFound(String),
    /// The path names a folder of the project, not a file.
    #[error("`{0}` is a folder, not a file")]
    IsDirectory(String),
    /// The path is refused: empty, absolute, `..` out of the project, or through a link out.
    #[error("{0}")]
    BadPath(String),
    /// The storage failed.
    #[error("{0}")]
    Io(String),
}

/// Where a run's artifacts are read and written. Implementations do blocking work off the
/// async workers.
#[async_trait::async_trait]
pub trait Artifacts: Send + Sync {
    /// The project's files, sorted, generated folders (`node_modules`, …) left out.
    async fn list(&self, run: &RunRef) -> Result<Vec<FileEntry>, ArtifactError>;
    /// One file's bytes; a path that leaves the project is refused.
    async fn read(&self, run: &RunRef, path: &str) -> Result<Vec<u8>, ArtifactError>;
    /// The project (the files [`Artifacts::list`] names) as a `.zip`, written to `out` as it
    /// is made (a large project is never held in memory whole); `out` may be a pipe. A
    /// missing project is [`ArtifactError::NoFiles`] before anything is written.
    async fn archive_to(&self, run: &RunRef, out: Box<dyn Write + Send>) -> Result<(), ArtifactError>;
    /// The run's folder on this host, for what must run in it (a full-stack preview's own
    /// server); `None` when it is not on this host.
    fn local_folder(&self, run: &RunRef) -> Option<PathBuf>;
    /// The browser check's last screenshot (a PNG), if it took one.
    async fn screenshot(&self, run: &str) -> Result<Option<Vec<u8>>, ArtifactError>;
    /// Keep `png` as the run's screenshot, replacing an earlier one.
    async fn put_screenshot(&self, run: &str, png: &[u8]) -> Result<(), ArtifactError>;
    /// Remove the run's screenshot (retention removes it with the rest of the run's files);
    /// whether there was one.
    async fn remove_screenshot(&self, run: &str) -> Result<bool, ArtifactError>;
}

/// Artifacts in local folders: workspaces where the store recorded them, screenshots under
/// `{root}/screenshots` (outside every workspace, so never part of a project or its archive).
#[derive(Debug, Clone)]
pub struct LocalArtifacts {
    root: PathBuf,
}

impl LocalArtifacts {
    /// Artifacts kept under `root` (made absolute against the current folder, not resolved:
    /// the spelling given is the one the sandbox mounts).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        Self { root: std::path::absolute(&root).unwrap_or(root) }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder a new build works in.
    pub fn build_folder(&self, id: &str) -> PathBuf {
        self.root.join("builds").join(id)
    }

    /// Where the copies of folders that re-runs start from are kept.
    pub fn snapshots(&self) -> PathBuf {
        self.root.join("snapshots")
    }

    /// How the store records `folder`: relative to the root when it lies beneath it, so a host
    /// that mounts the root at another path finds it ([`LocalArtifacts::resolve`]); absolute
    /// (as given) otherwise.
    pub fn record(&self, folder: &Path) -> String {
        let folder = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
        match folder.strip_prefix(&self.root) {
            Ok(rel) if plain(rel) => rel.to_string_lossy().into_owned(),
            _ => folder.to_string_lossy().into_owned(),
        }
    }

    /// The folder a recorded path names on this host: a relative one under the root (only its
    /// plain parts: never `..` out of it), an absolute one as it is.
    pub fn resolve(&self, recorded: &Path) -> PathBuf {
        if recorded.is_absolute() {
            return recorded.to_path_buf();
        }
        let mut out = self.root.clone();
        out.extend(recorded.components().filter(|c| matches!(c, std::path::Component::Normal(_))));
        out
    }

    /// The file a run's screenshot is kept in (the agent's browser check writes it there).
    pub fn screenshot_path(&self, run: &str) -> PathBuf {
        screenshot_file(&self.root, run)
    }

    /// The screenshot's file, refusing an id that is not a plain file name.
    fn checked_screenshot_path(&self, run: &str) -> Result<PathBuf, ArtifactError> {
        let plain = !run.is_empty() && !run.starts_with('.') && !run.contains(['/', '\\', '\0']);
        if plain { Ok(self.screenshot_path(run)) } else { Err(ArtifactError::BadPath(format!("run id `{run}`"))) }
    }
}

impl LocalArtifacts {
    /// Keep `png` as run `run`'s screenshot, now (the browser check's step waits for it);
    /// where it is.
    pub fn keep_screenshot(&self, run: &str, png: &[u8]) -> Result<PathBuf, ArtifactError> {
        let path = self.checked_screenshot_path(run)?;
        let io = |e: std::io::Error| ArtifactError::Io(format!("saving the screenshot: {e}"));
        let dir = path.parent().ok_or_else(|| ArtifactError::Io("no screenshot folder".into()))?;
        std::fs::create_dir_all(dir).map_err(io)?;
        // Written aside, then renamed: a reader sees the old picture or the new one, whole.
        let tmp = dir.join(format!(".{}.{}.tmp", std::process::id(), fastrand::u64(..)));
        std::fs::write(&tmp, png).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })?;
        Ok(path)
    }
}

/// A build's screenshots, kept through its [`LocalArtifacts`] (the agent's browser check hands
/// them over; it never writes by path).
#[derive(Debug)]
pub struct BuildScreenshots {
    pub artifacts: LocalArtifacts,
    pub run: String,
}

impl wright_agent::Screenshots for BuildScreenshots {
    fn keep(&self, png: &[u8]) -> Result<String, String> {
        self.artifacts.keep_screenshot(&self.run, png).map(|p| p.display().to_string()).map_err(|e| e.to_string())
    }

    fn kept(&self) -> Option<String> {
        let path = self.artifacts.screenshot_path(&self.run);
        path.is_file().then(|| path.display().to_string())
    }
}

/// A non-empty relative path of plain names only (no `..`, `.`, root or prefix).
fn plain(rel: &Path) -> bool {
    rel.components().next().is_some() && rel.components().all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// Where the screenshot of run `run` is kept under the artifacts' `root`.
pub fn screenshot_file(root: &Path, run: &str) -> PathBuf {
    root.join("screenshots").join(format!("{run}.png"))
}

/// Blocking work on the blocking pool.
async fn off_workers<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ArtifactError> + Send + 'static,
) -> Result<T, ArtifactError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| ArtifactError::Io(e.to_string()))?
}

/// The run's folder as it is, found under `root`: never created by a reader.
fn workspace(root: &LocalArtifacts, run: &RunRef) -> Result<Workspace, ArtifactError> {
    Workspace::existing(root.resolve(&run.workspace), WorkspaceLimits::default())
        .map_err(|_| ArtifactError::NoFiles(run.id.clone()))
}

fn read_in(ws: &Workspace, path: &str) -> Result<Vec<u8>, ArtifactError> {
    ws.read(path).map_err(|e| match e {
        PathError::NotFound(_) => ArtifactError::NotFound(path.to_string()),
        PathError::IsDirectory(_) => ArtifactError::IsDirectory(path.to_string()),
        PathError::Io { .. } => ArtifactError::Io(e.to_string()),
        other => ArtifactError::BadPath(other.to_string()),
    })
}

/// The project's files as a `.zip` written to `out` as it goes: each file is read and
/// compressed in turn (no file is held whole beyond its own read), and the archive's entries
/// carry their sizes after their data, so `out` need not seek (a pipe to an HTTP client).
fn zip_project<W: Write + Send>(ws: &Workspace, out: W) -> Result<W, String> {
    let mut zip = zip::ZipWriter::new_stream(out);
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated).large_file(false);
    for path in wright_tools::project_files(ws) {
        // Links and anything else that is not a plain file inside the project stay out.
        let Ok(bytes) = ws.read(&path) else { continue };
        zip.start_file(path.as_str(), options).map_err(|e| e.to_string())?;
        zip.write_all(&bytes).map_err(|e| e.to_string())?;
    }
    zip.finish().map(|w| w.into_inner()).map_err(|e| e.to_string())
}

#[async_trait::async_trait]
impl Artifacts for LocalArtifacts {
    async fn list(&self, run: &RunRef) -> Result<Vec<FileEntry>, ArtifactError> {
        let (me, run) = (self.clone(), run.clone());
        off_workers(move || {
            let ws = workspace(&me, &run)?;
            Ok(wright_tools::project_files(&ws)
                .into_iter()
                .map(|path| {
                    let bytes = ws.meta(&path).map(|m| m.len).unwrap_or(0);
                    FileEntry { path, bytes }
                })
                .collect())
        })
        .await
    }

    async fn read(&self, run: &RunRef, path: &str) -> Result<Vec<u8>, ArtifactError> {
        let (me, run, path) = (self.clone(), run.clone(), path.to_string());
        off_workers(move || read_in(&workspace(&me, &run)?, &path)).await
    }

    async fn archive_to(&self, run: &RunRef, out: Box<dyn Write + Send>) -> Result<(), ArtifactError> {
        let (me, run) = (self.clone(), run.clone());
        off_workers(move || {
            let ws = workspace(&me, &run)?;
            let mut out = zip_project(&ws, out).map_err(ArtifactError::Io)?;
            out.flush().map_err(|e| ArtifactError::Io(e.to_string()))
        })
        .await
    }

    fn local_folder(&self, run: &RunRef) -> Option<PathBuf> {
        Some(self.resolve(&run.workspace))
    }

    async fn screenshot(&self, run: &str) -> Result<Option<Vec<u8>>, ArtifactError> {
        let path = self.checked_screenshot_path(run)?;
        off_workers(move || match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ArtifactError::Io(e.to_string())),
        })
        .await
    }

    async fn put_screenshot(&self, run: &str, png: &[u8]) -> Result<(), ArtifactError> {
        let (me, run, png) = (self.clone(), run.to_string(), png.to_vec());
        off_workers(move || me.keep_screenshot(&run, &png).map(drop)).await
    }

    async fn remove_screenshot(&self, run: &str) -> Result<bool, ArtifactError> {
        let path = self.checked_screenshot_path(run)?;
        // `remove_file` takes a link away without following it.
        off_workers(move || match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(ArtifactError::Io(format!("removing the screenshot: {e}"))),
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// The run's archive, through a file.
    async fn zipped(a: &LocalArtifacts, run: &RunRef) -> Result<Vec<u8>, ArtifactError> {
        let file = tempfile::NamedTempFile::new().unwrap();
        a.archive_to(run, Box::new(file.reopen().unwrap())).await?;
        Ok(std::fs::read(file.path()).unwrap())
    }

    /// The names in a `.zip`, sorted.
    fn names(zip: &[u8]) -> Vec<String> {
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
        let mut names: Vec<_> = (0..z.len()).map(|i| z.by_index(i).unwrap().name().unwrap().to_string()).collect();
        names.sort();
        names
    }

    fn project() -> (tempfile::TempDir, RunRef) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("builds").join("b1");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(ws.join("node_modules/x")).unwrap();
        std::fs::write(ws.join("index.html"), "<h1>hi</h1>").unwrap();
        std::fs::write(ws.join("src/app.js"), "let a = 1;").unwrap();
        std::fs::write(ws.join("node_modules/x/i.js"), "generated").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "outside").unwrap();
        (dir, RunRef { id: "b1".into(), workspace: ws })
    }

    #[test]
    fn folders_under_the_root_are_recorded_relative_to_it_and_found_under_another() {
        let a = LocalArtifacts::new("/srv/worker-one/wright");
        let b = LocalArtifacts::new("/mnt/shared/wright");
        let folder = a.build_folder("20261128-1");
        assert_eq!(a.record(&folder), "builds/20261128-1");
        assert_eq!(b.resolve(Path::new(&a.record(&folder))), PathBuf::from("/mnt/shared/wright/builds/20261128-1"));
        // A folder of the user's own, and rows from before, stay absolute.
        assert_eq!(a.record(Path::new("/home/ana/site")), "/home/ana/site");
        assert_eq!(b.resolve(Path::new("/home/ana/site")), PathBuf::from("/home/ana/site"));
        // Not the root itself, nor a path that only starts with its name.
        assert_eq!(a.record(Path::new("/srv/worker-one/wright")), "/srv/worker-one/wright");
        assert_eq!(a.record(Path::new("/srv/worker-one/wright2/builds/x")), "/srv/worker-one/wright2/builds/x");
        // A recorded path never leads out of the root.
        assert_eq!(b.resolve(Path::new("../../etc")), PathBuf::from("/mnt/shared/wright/etc"));
    }

    proptest::proptest! {
        /// Whatever folder beneath the root is recorded, another root finds it at the same
        /// place beneath itself; whatever relative path is recorded, it resolves beneath the root.
        #[test]
        fn recorded_folders_round_trip_between_roots(
            parts in proptest::collection::vec("[a-zA-Z0-9_.-]{1,12}", 1..5),
            any in "[a-z./]{0,30}",
        ) {
            let parts: Vec<String> = parts.into_iter().filter(|p| p != "." && p != "..").collect();
            proptest::prop_assume!(!parts.is_empty());
            let (a, b) = (LocalArtifacts::new("/data/a"), LocalArtifacts::new("/other/b/c"));
            let rel: PathBuf = parts.iter().collect();
            let recorded = a.record(&a.root().join(&rel));
            proptest::prop_assert_eq!(Path::new(&recorded), rel.as_path());
            proptest::prop_assert_eq!(b.resolve(Path::new(&recorded)), b.root().join(&rel));
            if !any.starts_with('/') {
                proptest::prop_assert!(b.resolve(Path::new(&any)).starts_with(b.root()));
            }
        }
    }

    #[tokio::test]
    async fn lists_the_project_without_generated_folders() {
        let (dir, run) = project();
        let a = LocalArtifacts::new(dir.path());
        let files = a.list(&run).await.unwrap();
        assert_eq!(
            files,
            vec![
                FileEntry { path: "index.html".into(), bytes: 11 },
                FileEntry { path: "src/app.js".into(), bytes: 10 },
            ]
        );
    }

    #[tokio::test]
    async fn a_missing_workspace_is_reported_and_never_created() {
        let dir = tempfile::tempdir().unwrap();
        let a = LocalArtifacts::new(dir.path());
        let run = RunRef { id: "gone".into(), workspace: dir.path().join("builds/gone") };
        assert_eq!(a.list(&run).await, Err(ArtifactError::NoFiles("gone".into())));
        assert_eq!(a.read(&run, "index.html").await, Err(ArtifactError::NoFiles("gone".into())));
        assert_eq!(zipped(&a, &run).await, Err(ArtifactError::NoFiles("gone".into())));
        assert!(!dir.path().join("builds").exists());
    }

    #[tokio::test]
    async fn reads_files_and_tells_missing_from_folders() {
        let (dir, run) = project();
        let a = LocalArtifacts::new(dir.path());
        assert_eq!(a.read(&run, "src/app.js").await.unwrap(), b"let a = 1;");
        assert_eq!(a.read(&run, "nope.txt").await, Err(ArtifactError::NotFound("nope.txt".into())));
        assert_eq!(a.read(&run, "src").await, Err(ArtifactError::IsDirectory("src".into())));
    }

    #[tokio::test]
    async fn refuses_paths_out_of_the_project() {
        let (dir, run) = project();
        let a = LocalArtifacts::new(dir.path());
        let outside = dir.path().join("secret.txt");
        std::os::unix::fs::symlink(&outside, run.workspace.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(dir.path(), run.workspace.join("up")).unwrap();
        for bad in
            ["../../secret.txt", "src/../../../secret.txt", outside.to_str().unwrap(), "link.txt", "up/secret.txt"]
        {
            match a.read(&run, bad).await {
                Err(ArtifactError::BadPath(_)) => {}
                other => panic!("{bad}: {other:?}"),
            }
        }
        // Links stay out of the archive too.
        assert_eq!(names(&zipped(&a, &run).await.unwrap()), ["index.html", "src/app.js"]);
    }

    #[tokio::test]
    async fn archives_the_listed_files() {
        let (dir, run) = project();
        let a = LocalArtifacts::new(dir.path());
        let zip = zipped(&a, &run).await.unwrap();
        assert_eq!(names(&zip), ["index.html", "src/app.js"]);
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
        let mut text = String::new();
        z.by_name("index.html").unwrap().read_to_string(&mut text).unwrap();
        assert_eq!(text, "<h1>hi</h1>");
    }

    #[tokio::test]
    async fn screenshots_round_trip_outside_the_workspace() {
        let (dir, run) = project();
        let a = LocalArtifacts::new(dir.path());
        assert_eq!(a.screenshot("b1").await.unwrap(), None);
        a.put_screenshot("b1", b"\x89PNG one").await.unwrap();
        a.put_screenshot("b1", b"\x89PNG two").await.unwrap();
        assert_eq!(a.screenshot("b1").await.unwrap().as_deref(), Some(&b"\x89PNG two"[..]));
        assert_eq!(a.screenshot_path("b1"), dir.path().join("screenshots/b1.png"));
        assert!(a.screenshot_path("b1").is_file());
        // Only the picture is left in the folder, and the project does not see it.
        assert_eq!(std::fs::read_dir(dir.path().join("screenshots")).unwrap().count(), 1);
        assert_eq!(a.list(&run).await.unwrap().len(), 2);
        for bad in ["", "../x", "a/b", ".hidden"] {
            assert!(matches!(a.screenshot(bad).await, Err(ArtifactError::BadPath(_))), "{bad}");
            assert!(matches!(a.put_screenshot(bad, b"x").await, Err(ArtifactError::BadPath(_))), "{bad}");
            assert!(matches!(a.remove_screenshot(bad).await, Err(ArtifactError::BadPath(_))), "{bad}");
        }
        assert!(a.remove_screenshot("b1").await.unwrap());
        assert_eq!(a.screenshot("b1").await.unwrap(), None);
        assert!(!a.remove_screenshot("b1").await.unwrap(), "once more: nothing to remove");
    }
}
