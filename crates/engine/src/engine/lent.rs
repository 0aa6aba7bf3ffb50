//! A project a task run lends to the sandbox user goes back to its owner even when the run
//! never got to give it back (kill -9 mid-run). The loan is written to the store before any
//! file changes owner and removed once they are given back; every start of wright as root
//! gives back the projects of runs whose process is gone.

use std::path::Path;
use wright_store::{LentProject, Store};

/// When process `pid` started (clock ticks since boot, from `/proc`), to tell it apart from a
/// later process with the same pid.
pub(crate) fn process_start(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from its end.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19).map(str::to_string)
}

/// Remember, before the sandbox user gets it, that `root` belongs to `uid`/`gid`.
pub(crate) async fn lend(store: &dyn Store, run_id: &str, root: &Path, (uid, gid): (u32, u32)) {
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

/// The project is its owner's again.
pub(crate) async fn returned(store: &dyn Store, run_id: &str) {
    if let Err(e) = store.project_returned(run_id).await {
        tracing::warn!(run = run_id, "the project's return was not recorded: {e}");
    }
}

/// Give back every project lent by a run whose process is gone. Only root can (and only root
/// lends); a failure is logged and tried again on the next start.
pub(crate) async fn give_back_abandoned(store: &dyn Store) {
    if !wright_sandbox::running_as_root() {
        return;
    }
    let loans = match store.lent_projects().await {
        Ok(l) => l,
        Err(e) => return tracing::warn!("reading the projects lent to the sandbox user: {e}"),
    };
    for loan in loans {
        let alive = !loan.pid_start.is_empty() && process_start(loan.pid).as_deref() == Some(loan.pid_start.as_str());
        if alive {
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
}
