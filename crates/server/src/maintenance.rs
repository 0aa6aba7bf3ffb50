//! Periodic jobs and this process's heartbeat.
//!
//! Every server looks for due jobs a few times per period (`[maintenance] every_secs`) and
//! runs one only when it takes the job's lease in the store ([`wright_store::Maintenance`]):
//! the lease lasts one period and outlives the run, so however many servers share the store,
//! each job runs once a period, on whichever server asked first. The jobs:
//!
//! - `confidence`: every lesson's confidence recalculated from its record, with the evidence
//!   of lessons nobody used for long fading (`decay_half_life_days`), statuses moved along
//!   their lifecycle, the retrieval index re-ranked ([`wright_store::Decay`]).
//! - `retention` (only with `retention_days`): the files of builds that ended longer ago are
//!   removed: the project folder (only one inside `DATA/builds/`; a folder elsewhere, such as a
//!   task run's own project, is never touched), its copy under `DATA/snapshots/`, its browser
//!   check's screenshot (`DATA/screenshots/`) and a running preview app. The build's record, events and conversation stay; it is marked pruned. Its
//!   published app (docs/apps.md) is unpublished in the same pass, so its address answers
//!   410 rather than leading to files that are gone; a folder that is kept keeps its app.
//!
//! How each run went is kept with the job (`finish_job`) for the dashboard and `/metrics`.
//! Apart from the jobs, every server says it is alive every [`HEARTBEAT`] (its slots and
//! builds running), so the dashboard lists the servers sharing the store.

use crate::state::AppState;
use std::collections::HashSet;
use std::future::Future;
use std::io;
use std::path::Path;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use wright_store::{Decay, WorkerBeat};

/// Between two heartbeats of a process.
pub const HEARTBEAT: Duration = Duration::from_secs(5);
/// A process seen within this long is alive.
pub const ALIVE: Duration = Duration::from_secs(30);
/// Processes not seen for this long leave the registry.
const FORGET: Duration = Duration::from_secs(24 * 3600);
/// The jobs, as the store and the dashboard name them.
pub const CONFIDENCE: &str = "confidence";
pub const RETENTION: &str = "retention";
/// Old builds read from the store at a time, and at most this many in one run of the job (the
/// rest wait for the next).
const BATCH: u32 = 200;
const MAX_PER_RUN: usize = 5000;

/// Start the periodic jobs and the heartbeat; both end when `stop` fires.
pub fn start(shared: AppState, stop: CancellationToken) -> Vec<JoinHandle<()>> {
    vec![tokio::spawn(jobs(shared.clone(), stop.clone())), tokio::spawn(heartbeat(shared, stop))]
}

async fn jobs(shared: AppState, stop: CancellationToken) {
    // Looking a few times a period costs one statement a look; the lease decides who runs.
    let look = (shared.cfg.maintenance.every / 4).clamp(Duration::from_millis(250), Duration::from_secs(60));
    loop {
        tokio::select! {
            _ = due(&shared) => {}
            // A run cut short leaves nothing half-done: the recalculation is one transaction,
            // and a build whose folder went but was not marked is found (gone) next time.
            _ = stop.cancelled() => return,
        }
        tokio::select! {
            _ = tokio::time::sleep(look) => {}
            _ = stop.cancelled() => return,
        }
    }
}

/// Run each job whose lease this process can take.
async fn due(shared: &AppState) {
    run_job(shared, CONFIDENCE, confidence(shared)).await;
    if let Some(keep) = shared.cfg.maintenance.retention {
        run_job(shared, RETENTION, retention(shared, keep)).await;
    }
}

/// Take job `name` for one period; when taken, run `work` and record how it went.
async fn run_job(shared: &AppState, name: &str, work: impl Future<Output = Result<String, String>>) {
    let holder = &shared.queue.instance;
    match shared.store.try_job(name, holder, shared.cfg.maintenance.every).await {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => {
            tracing::warn!(job = name, "taking the job: {e}");
            return;
        }
    }
    let (ok, detail) = match work.await {
        Ok(detail) => (true, detail),
        Err(why) => (false, why),
    };
    if ok {
        tracing::info!(job = name, "{detail}");
    } else {
        tracing::warn!(job = name, "failed: {detail}");
    }
    match shared.store.finish_job(name, holder, ok, &detail).await {
        Ok(true) => {}
        Ok(false) => tracing::warn!(job = name, "ran past its lease; another server holds the job now"),
        Err(e) => tracing::warn!(job = name, "recording how the job went: {e}"),
    }
}

async fn confidence(shared: &AppState) -> Result<String, String> {
    let decay = Decay::half_life(shared.cfg.maintenance.decay_half_life_days);
    let r = shared.store.recalculate_confidence(decay).await.map_err(|e| e.to_string())?;
    Ok(format!("{} lessons: {} changed, {} promoted, {} deprecated", r.seen, r.changed, r.promoted, r.deprecated))
}

/// What became of one old build's files.
#[derive(Debug, PartialEq)]
enum Pruned {
    Removed,
    /// Nothing there (removed before, or never written).
    Gone,
    /// Its folder is not one the server made (outside `DATA/builds/`, or a link): kept.
    Kept,
}

async fn retention(shared: &AppState, keep: Duration) -> Result<String, String> {
    let keep = chrono::Duration::from_std(keep).unwrap_or(chrono::Duration::MAX);
    let cutoff = chrono::Utc::now()
        .checked_sub_signed(keep)
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC)
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let artifacts = shared.engine.artifacts().clone();
    let data_dir = artifacts.root().to_path_buf();
    let (mut removed, mut gone, mut kept, mut unpublished) = (0usize, 0usize, 0usize, 0usize);
    let mut failed: HashSet<String> = HashSet::new();
    let mut first_error = None;
    let mut looked = 0usize;
    while looked < MAX_PER_RUN {
        let batch = shared.store.ended_before(&cutoff, BATCH).await.map_err(|e| format!("listing old builds: {e}"))?;
        let mut progress = false;
        for (id, workspace) in batch {
            looked += 1;
            if failed.contains(&id) {
                continue;
            }
            shared.apps.stop(&id);
            let (data, run, folder) = (data_dir.clone(), id.clone(), artifacts.resolve(Path::new(&workspace)));
            let done = tokio::task::spawn_blocking(move || prune(&data, &run, &folder))
                .await
                .unwrap_or_else(|e| Err(io::Error::other(e.to_string())));
            // Its browser check's screenshot is wright's own file (outside the project), so it
            // goes whatever became of the folder, as the snapshot does.
            let done = match (done, shared.artifacts.remove_screenshot(&id).await) {
                (Ok(pruned), Ok(_)) => Ok(pruned),
                (Err(e), _) => Err(e),
                (Ok(_), Err(e)) => Err(io::Error::other(e.to_string())),
            };
            let files_gone = match done {
                Ok(Pruned::Removed) => {
                    removed += 1;
                    true
                }
                Ok(Pruned::Gone) => {
                    gone += 1;
                    true
                }
                Ok(Pruned::Kept) => {
                    kept += 1;
                    false
                }
                Err(e) => {
                    tracing::warn!(build = %id, "removing its files: {e}");
                    first_error.get_or_insert_with(|| format!("{id}: {e}"));
                    failed.insert(id);
                    continue;
                }
            };
            // Before the mark: a run cut short between the two finds the build again next
            // time (its files gone) and takes its app down then.
            if files_gone && take_down_app(shared, &id).await? {
                unpublished += 1;
            }
            shared.store.mark_pruned(&id).await.map_err(|e| format!("marking {id} pruned: {e}"))?;
            progress = true;
        }
        if !progress {
            break;
        }
    }
    let mut detail = format!("{removed} build(s) pruned");
    if gone > 0 {
        detail.push_str(&format!(", {gone} had no files left"));
    }
    if kept > 0 {
        detail.push_str(&format!(", {kept} kept (folder outside DATA/builds)"));
    }
    if unpublished > 0 {
        detail.push_str(&format!(", {unpublished} app(s) unpublished"));
    }
    match first_error {
        None => Ok(detail),
        Some(e) => Err(format!("{detail}; {} could not be removed (first: {e})", failed.len())),
    }
}

/// Unpublish the app a pruned build became (the store's own unpublish: 410 from then on, the
/// slug reserved); true when this took it down, false when it had none or was down already.
async fn take_down_app(shared: &AppState, id: &str) -> Result<bool, String> {
    let failed = |e: wright_store::StoreError| format!("unpublishing the app of {id}: {e}");
    let live = shared.store.app_of_build(id).await.map_err(failed)?.is_some_and(|app| app.is_published());
    if !live {
        return Ok(false);
    }
    let app = shared.store.unpublish_app_of_build(id).await.map_err(failed)?;
    if let Some(app) = &app {
        tracing::info!(build = %id, slug = %app.slug, "its files are gone: its app is unpublished");
    }
    Ok(app.is_some())
}

/// Remove one ended build's files: its folder copy (`DATA/snapshots/ID`) and its project folder,
/// only when that is a real folder inside `DATA/builds/`.
fn prune(data_dir: &Path, id: &str, workspace: &Path) -> io::Result<Pruned> {
    crate::rerun::discard(data_dir, id);
    crate::rerun::remove_claim_folders(data_dir, id, workspace);
    let meta = match std::fs::symlink_metadata(workspace) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Pruned::Gone),
        Err(e) => return Err(e),
    };
    if !meta.is_dir() || !inside_builds(data_dir, workspace)? {
        return Ok(Pruned::Kept);
    }
    crate::rerun::remove_all(workspace)?;
    Ok(Pruned::Removed)
}

/// Whether `folder` (a real folder, not a link) is below `DATA/builds/`, links and `..`
/// resolved.
fn inside_builds(data_dir: &Path, folder: &Path) -> io::Result<bool> {
    let root = match std::fs::canonicalize(data_dir.join("builds")) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let folder = std::fs::canonicalize(folder)?;
    Ok(folder != root && folder.starts_with(&root))
}

/// Say every [`HEARTBEAT`] that this process is alive, with its slots and builds running; now
/// and then drop the processes not seen for a day, and the limits' rows no window needs.
async fn heartbeat(shared: AppState, stop: CancellationToken) {
    let forget_every = (3600 / HEARTBEAT.as_secs().max(1)).max(1);
    let mut beats = 0u64;
    let mut failing = false;
    loop {
        let beat = WorkerBeat {
            name: shared.queue.instance.clone(),
            host: shared.queue.host.clone(),
            pid: std::process::id(),
            slots: u32::try_from(shared.cfg.workers).unwrap_or(u32::MAX),
            busy: u32::try_from(shared.queue.running()).unwrap_or(u32::MAX),
            version: env!("CARGO_PKG_VERSION").to_string(),
        };
        match shared.store.worker_heartbeat(&beat).await {
            Ok(()) => failing = false,
            // Said once, not every few seconds while the store is away.
            Err(e) if !failing => {
                tracing::warn!("heartbeat: {e}");
                failing = true;
            }
            Err(_) => {}
        }
        if beats.is_multiple_of(forget_every) {
            if let Err(e) = shared.store.forget_workers(FORGET).await {
                tracing::debug!("forgetting old workers: {e}");
            }
            // Limits' old uses and lapsed slots, and visitors' ended sessions: every server
            // sweeps now and then (each row goes once, whoever removes it).
            if let Err(e) = shared.store.sweep_limits().await {
                tracing::debug!("sweeping old limit rows: {e}");
            }
        }
        beats += 1;
        tokio::select! {
            _ = tokio::time::sleep(HEARTBEAT) => {}
            _ = stop.cancelled() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_folders_under_builds_are_removed() {
        let data = tempfile::tempdir().unwrap();
        let own = data.path().join("builds").join("b1");
        std::fs::create_dir_all(own.join("src")).unwrap();
        std::fs::write(own.join("src/index.html"), "<p>hi</p>").unwrap();
        let snap = crate::rerun::snapshot_of(data.path(), "b1");
        std::fs::create_dir_all(&snap).unwrap();
        assert_eq!(prune(data.path(), "b1", &own).unwrap(), Pruned::Removed);
        assert!(!own.exists() && !snap.exists());
        assert_eq!(prune(data.path(), "b1", &own).unwrap(), Pruned::Gone, "once more: nothing left");

        // A task run's own project, a link into builds/ and builds/ itself are kept.
        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(prune(data.path(), "t1", elsewhere.path()).unwrap(), Pruned::Kept);
        assert!(elsewhere.path().exists());
        let link = data.path().join("builds").join("link");
        std::os::unix::fs::symlink(elsewhere.path(), &link).unwrap();
        assert_eq!(prune(data.path(), "l1", &link).unwrap(), Pruned::Kept);
        let sneaky = data.path().join("builds").join("..").join("builds");
        assert_eq!(prune(data.path(), "x", &sneaky).unwrap(), Pruned::Kept);
        let up = data.path().join("builds").join("..");
        assert_eq!(prune(data.path(), "y", &up).unwrap(), Pruned::Kept);
        assert!(data.path().join("builds").exists() && elsewhere.path().exists());
    }

    /// A build run again after a lost lease is known by its last run's folder (`ID.3`); the
    /// folders of its earlier runs go with it, and no other build's.
    #[test]
    fn the_folders_of_earlier_runs_go_with_the_build() {
        let data = tempfile::tempdir().unwrap();
        let builds = data.path().join("builds");
        for name in ["b1", "b1.2", "b1.3", "b10", "b1.x"] {
            std::fs::create_dir_all(builds.join(name)).unwrap();
        }
        assert_eq!(prune(data.path(), "b1", &builds.join("b1.3")).unwrap(), Pruned::Removed);
        let mut left: Vec<String> =
            std::fs::read_dir(&builds).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        left.sort();
        assert_eq!(left, ["b1.x", "b10"], "only the build's own runs' folders go");
    }
}
