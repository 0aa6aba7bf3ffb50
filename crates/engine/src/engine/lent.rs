//! A project a task run lends to the sandbox user goes back to its owner even when the run
//! never got to give it back (kill -9 mid-run). The loan is written to the store before any
//! file changes owner and removed once they are given back; every start of wright as root
//! gives back the projects of runs whose process is gone.

use std::path::Path;
use wright_sandbox::SANDBOX_UID;
use wright_store::{LentProject, Store};

/// When process `pid` started (clock ticks since boot, from `/proc`), to tell it apart from a
/// later process with the same pid.
pub(crate) fn process_start(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from its end.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19).map(str::to_string)
}

/// Whether the process that made `loan` still runs. A loan without a start time (an older
/// record, or `/proc` unreadable when it was made) counts as alive while its pid exists: taking
/// a project from a run still using it is worse than giving it back one start later.
fn alive(loan: &LentProject) -> bool {
    if loan.pid_start.is_empty() {
        return Path::new(&format!("/proc/{}", loan.pid)).exists();
    }
    process_start(loan.pid).as_deref() == Some(loan.pid_start.as_str())
}

/// Whether `a` and `b` name the same folder (a loan's path is stored as text, maybe through a
/// symlink).
fn same_path(a: &Path, b: &Path) -> bool {
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    a == b || real(a) == real(b)
}

/// Who owns the project folder (uid, gid).
fn owner_of(root: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(root).ok().map(|m| (m.uid(), m.gid()))
}

/// Lend `root` to the sandbox user for run `run_id`: record, before any file changes owner,
/// whom to give it back to. Returns that owner, or `None` when nothing is lent: wright is not
/// root, `root` is a shared folder (the sandbox refuses to hand it over, and giving it "back"
/// would chown every other program's files in it), or its real owner is unknown.
///
/// A project still owned by the sandbox user was lent by an earlier run: a killed one's loan is
/// given back first; a live one's owner is reused. Recording the sandbox user as the owner
/// would leave the project with it for good.
pub(crate) async fn lend(store: &dyn Store, run_id: &str, root: &Path) -> Option<(u32, u32)> {
    if !wright_sandbox::running_as_root() || wright_sandbox::shared_folder(root) {
        return None;
    }
    give_back_abandoned(store).await;
    let mut owner = owner_of(root)?;
    if owner.0 == SANDBOX_UID {
        let loans = store.lent_projects().await.unwrap_or_default();
        let earlier = loans.iter().find(|l| l.uid != SANDBOX_UID && same_path(Path::new(&l.path), root));
        match earlier {
            Some(l) => owner = (l.uid, l.gid),
            None => {
                tracing::warn!(
                    run = run_id,
                    "{} already belongs to the sandbox user and no earlier loan says whose it is: it is not lent",
                    root.display()
                );
                return None;
            }
        }
    }
    record(store, run_id, root, owner).await;
    Some(owner)
}

/// Write the loan of `root` to `owner` to the store.
async fn record(store: &dyn Store, run_id: &str, root: &Path, (uid, gid): (u32, u32)) {
    let pid = std::process::id();
    let loan = LentProject {
        run_id: run_id.to_string(),
        path: root.display().to_string(),
        uid,
        gid,
        pid,
        pid_start: process_start(pid).unwrap_or_default(),
        lent_at: wright_events::now(),
    };
    if let Err(e) = store.lend_project(&loan).await {
        tracing::warn!(run = run_id, "the loan of {} was not recorded: {e}", root.display());
    }
}

/// Whether a live run other than `run_id` has `root` on loan (so it must stay with the sandbox
/// user).
async fn held_by_another(store: &dyn Store, run_id: &str, root: &Path) -> bool {
    let loans = store.lent_projects().await.unwrap_or_default();
    loans.iter().any(|l| l.run_id != run_id && same_path(Path::new(&l.path), root) && alive(l))
}

/// Run `run_id` ended: give `root` back to `owner`, unless another live run borrowed it too
/// (the last one out gives it back). Our loan is dropped before looking again, so two runs
/// ending together cannot each leave it to the other.
pub(crate) async fn end(store: &dyn Store, run_id: &str, root: &Path, (uid, gid): (u32, u32)) -> std::io::Result<()> {
    if held_by_another(store, run_id, root).await {
        returned(store, run_id).await;
        if held_by_another(store, run_id, root).await {
            return Ok(());
        }
    }
    wright_sandbox::give_back(root, uid, gid)?;
    returned(store, run_id).await;
    Ok(())
}

/// The project is its owner's again.
pub(crate) async fn returned(store: &dyn Store, run_id: &str) {
    if let Err(e) = store.project_returned(run_id).await {
        tracing::warn!(run = run_id, "the project's return was not recorded: {e}");
    }
}

/// Give back every project lent by a run whose process is gone. Only root can (and only root
/// lends); a failure is logged and tried again on the next start. A project another live run
/// holds stays lent; a loan that must never be given back (a shared folder, or one naming the
/// sandbox user as owner, both recorded by older versions) is dropped without touching a file.
pub(crate) async fn give_back_abandoned(store: &dyn Store) {
    if !wright_sandbox::running_as_root() {
        return;
    }
    let loans = match store.lent_projects().await {
        Ok(l) => l,
        Err(e) => return tracing::warn!("reading the projects lent to the sandbox user: {e}"),
    };
    for loan in &loans {
        if alive(loan) {
            continue;
        }
        let root = Path::new(&loan.path);
        if wright_sandbox::shared_folder(root) || loan.uid == SANDBOX_UID {
            tracing::warn!(run = %loan.run_id, "the loan of {} is dropped: it is not given back to uid {}", loan.path, loan.uid);
            returned(store, &loan.run_id).await;
            continue;
        }
        if loans.iter().any(|l| l.run_id != loan.run_id && same_path(Path::new(&l.path), root) && alive(l)) {
            continue;
        }
        let (path, uid, gid) = (loan.path.clone(), loan.uid, loan.gid);
        let done = tokio::task::spawn_blocking(move || {
            let root = Path::new(&path);
            if root.exists() { wright_sandbox::give_back(root, uid, gid) } else { Ok(()) }
        })
        .await;
        match done {
            Ok(Ok(())) => {
                tracing::warn!(run = %loan.run_id, "gave {} back to its owner after an interrupted task run", loan.path);
                returned(store, &loan.run_id).await;
            }
            Ok(Err(e)) => tracing::warn!(run = %loan.run_id, "giving {} back to its owner: {e}", loan.path),
            Err(e) => tracing::warn!(run = %loan.run_id, "giving {} back to its owner: {e}", loan.path),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_process_start_tells_this_process_apart() {
        let me = process_start(std::process::id()).unwrap();
        assert!(me.parse::<u64>().is_ok(), "{me}");
        assert_eq!(process_start(std::process::id()), Some(me));
        assert_eq!(process_start(u32::MAX), None);
    }

    fn loan(run_id: &str, path: &Path, owner: u32, pid: u32, pid_start: &str) -> LentProject {
        LentProject {
            run_id: run_id.into(),
            path: path.display().to_string(),
            uid: owner,
            gid: owner,
            pid,
            pid_start: pid_start.into(),
            lent_at: wright_events::now(),
        }
    }

    #[test]
    fn a_loan_without_a_start_time_is_alive_while_its_pid_is() {
        let me = std::process::id();
        let here = Path::new("/x");
        assert!(alive(&loan("r", here, 1, me, "")), "no start time, pid exists");
        assert!(alive(&loan("r", here, 1, me, &process_start(me).unwrap())));
        assert!(!alive(&loan("r", here, 1, u32::MAX, "")), "no such pid");
        assert!(!alive(&loan("r", here, 1, me, "not-my-start")), "the pid is another process now");
    }

    /// A store of its own, and whether this test can do anything (lending needs root).
    async fn store(dir: &Path) -> Option<std::sync::Arc<dyn Store>> {
        if !wright_sandbox::running_as_root() {
            eprintln!("skipped: lending a project to the sandbox user needs root (CI runs as root)");
            return None;
        }
        Some(wright_store::open(&format!("sqlite://{}", dir.join("w.db").display())).await.unwrap())
    }

    fn chown(p: &Path, uid: u32) {
        std::os::unix::fs::chown(p, Some(uid), Some(uid)).unwrap();
    }

    fn uid_of(p: &Path) -> u32 {
        owner_of(p).unwrap().0
    }

    #[tokio::test]
    async fn a_shared_folder_is_never_recorded_nor_chowned() {
        let db = tempfile::tempdir().unwrap();
        let Some(store) = store(db.path()).await else { return };
        let store = store.as_ref();
        for shared in ["/", "/srv", "/home", "/opt", "/tmp"] {
            assert_eq!(lend(store, "r1", Path::new(shared)).await, None, "{shared}");
        }
        // A folder of the test's own inside /usr is shared too, and harmless to chown by mistake.
        let Ok(sys) = tempfile::Builder::new().prefix("wright-lent-").tempdir_in("/usr/local") else {
            return eprintln!("skipped the rest: /usr/local is not writable here");
        };
        let file = sys.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert_eq!(lend(store, "r1", sys.path()).await, None);
        assert!(store.lent_projects().await.unwrap().is_empty(), "nothing recorded");
        // A loan of one recorded by an older wright, whose run was killed, is dropped untouched.
        store.lend_project(&loan("old", sys.path(), 4242, u32::MAX, "")).await.unwrap();
        give_back_abandoned(store).await;
        assert_eq!(uid_of(&file), 0, "not chowned");
        assert!(store.lent_projects().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_project_lent_again_keeps_its_first_owner() {
        let db = tempfile::tempdir().unwrap();
        let Some(store) = store(db.path()).await else { return };
        let store = store.as_ref();
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        let me = std::process::id();
        let my_start = process_start(me).unwrap();

        // Owned by the sandbox user and nobody recorded whose it was: not lent, not recorded.
        chown(root, SANDBOX_UID);
        assert_eq!(lend(store, "r1", root).await, None);
        assert!(store.lent_projects().await.unwrap().is_empty());

        // A live run lent it (its owner 4242): the new loan names 4242, never the sandbox user.
        store.lend_project(&loan("r0", root, 4242, me, &my_start)).await.unwrap();
        assert_eq!(lend(store, "r1", root).await, Some((4242, 4242)));
        let loans = store.lent_projects().await.unwrap();
        assert!(loans.iter().all(|l| l.uid == 4242), "{loans:?}");
        // The first run to end leaves it to the one still going; the last gives it back.
        end(store, "r1", root, (4242, 4242)).await.unwrap();
        assert_eq!(uid_of(root), SANDBOX_UID, "r0 still uses it");
        end(store, "r0", root, (4242, 4242)).await.unwrap();
        assert_eq!(uid_of(root), 4242);
        assert!(store.lent_projects().await.unwrap().is_empty());

        // A killed run lent it: its loan is given back first, and the new loan names that owner.
        chown(root, SANDBOX_UID);
        store.lend_project(&loan("dead", root, 4242, u32::MAX, "")).await.unwrap();
        assert_eq!(lend(store, "r2", root).await, Some((4242, 4242)));
        assert_eq!(uid_of(root), 4242);
        let loans = store.lent_projects().await.unwrap();
        assert_eq!(loans.iter().map(|l| (l.run_id.as_str(), l.uid)).collect::<Vec<_>>(), [("r2", 4242)]);
    }

    #[tokio::test]
    async fn a_loan_whose_process_is_alive_is_not_given_back() {
        let db = tempfile::tempdir().unwrap();
        let Some(store) = store(db.path()).await else { return };
        let store = store.as_ref();
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        chown(root, SANDBOX_UID);
        let me = std::process::id();
        // Alive by its start time, and alive with none recorded (its pid exists).
        store.lend_project(&loan("live", root, 4242, me, &process_start(me).unwrap())).await.unwrap();
        store.lend_project(&loan("no-start", root, 4242, me, "")).await.unwrap();
        give_back_abandoned(store).await;
        assert_eq!(uid_of(root), SANDBOX_UID);
        assert_eq!(store.lent_projects().await.unwrap().len(), 2);
        // A dead run's loan of the same project waits for the live ones too.
        store.lend_project(&loan("dead", root, 4242, u32::MAX, "1")).await.unwrap();
        give_back_abandoned(store).await;
        assert_eq!(uid_of(root), SANDBOX_UID);
        assert_eq!(store.lent_projects().await.unwrap().len(), 3);
    }
}
