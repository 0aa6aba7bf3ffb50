//! Workers: claim the oldest queued build from the store, run it through the engine, renew
//! its lease while it runs, and stop it when someone asks. A build whose run was interrupted
//! (its server crashed or was killed, so the lease ran out; or it stopped past its grace time)
//! goes back to the queue at its old place and runs again from the start ([`crate::rerun`]),
//! with a `restarted` event; only past the server's limit of re-runs does it end failed
//! (`server_stopped`).

use crate::metrics::UsageSink;
use crate::running::Handles;
use crate::state::AppState;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use wright_events::words::{Said, say};
use wright_events::{EndReason, EventKind, Lang, Level, RestartReason};
use wright_store::{BuildFinish, Draft, Finished, Restart, RunEnd, RunStatus, SAFETY_NET, Signal, StoreError, Tokens};

/// The longest a claim, a reaper's pass or a restart waits on the store. PostgreSQL's own
/// statement timeout (`wright_store::PG_STATEMENT_TIMEOUT`, 30 s) ends a statement that waits
/// first, with an error and nothing changed; this catches a connection that went silent (sqlx
/// has no client-side TCP keepalives), so no worker or reaper waits on one for good. (Lease
/// renewals and cancel checks are bounded by the lease's own deadline instead.)
pub const STORE_CALL_LIMIT: Duration = Duration::from_secs(35);

/// `call` bounded by [`STORE_CALL_LIMIT`], its timeout an error like any other of the store's.
async fn bounded<T>(call: impl std::future::Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
    tokio::time::timeout(STORE_CALL_LIMIT, call).await.unwrap_or_else(|_| {
        Err(StoreError::Invalid(format!("the store did not answer within {} s", STORE_CALL_LIMIT.as_secs())))
    })
}

/// Store time `d` from now.
pub fn time_from_now(d: Duration) -> String {
    let d = chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX);
    (chrono::Utc::now() + d).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Start `cfg.workers` workers (none on an API-only server), the reaper (on every process:
/// taking an expired build is exactly-once in the store, so reapers may race), the periodic
/// jobs and the heartbeat.
pub fn start(shared: AppState, stop: CancellationToken) -> Vec<JoinHandle<()>> {
    let mut handles: Vec<JoinHandle<()>> =
        (0..shared.cfg.workers).map(|n| tokio::spawn(worker(shared.clone(), n, stop.clone()))).collect();
    handles.extend(crate::maintenance::start(shared.clone(), stop.clone()));
    handles.push(tokio::spawn(reaper(shared, stop)));
    handles
}

async fn worker(shared: AppState, n: usize, stop: CancellationToken) {
    let slot = format!("{}-w{n}", shared.queue.instance);
    // Joined before the first look at the queue, so a build queued in between still wakes it.
    let mut signals = shared.store.notifier().signals();
    for claim in 1u64.. {
        if stop.is_cancelled() {
            return;
        }
        // Each claim holds the build under a name of its own: the store's fence compares it,
        // so a run this slot dropped (its lease lost) can never write into the run that the
        // same slot starts when it claims the build again.
        let holder = format!("{slot}.{claim}");
        // A claim whose answer was lost to a silent connection may have been made all the
        // same: its lease runs out unrenewed and another process's reaper runs it again.
        // The lease is counted from before the claim was asked for: the database's deadline is
        // then never before this worker's own, so the worker stops first.
        let asked = Instant::now();
        match bounded(shared.store.claim_build(&holder, shared.cfg.lease)).await {
            Ok(Some(record)) => {
                let span = tracing::info_span!("build", build = %record.start.id, worker = %holder);
                run_claimed(&shared, &holder, record, asked).instrument(span).await
            }
            Ok(None) => {
                // Woken when the store queues a build; the safety net is for builds queued by
                // another process on a shared SQLite file, which this process hears nothing of.
                loop {
                    tokio::select! {
                        signal = signals.recv() => match signal {
                            Ok(Signal::Queued) | Err(broadcast::error::RecvError::Lagged(_)) => break,
                            Ok(Signal::Cancel(_)) => continue,
                            Err(broadcast::error::RecvError::Closed) => {
                                signals = shared.store.notifier().signals();
                                break;
                            }
                        },
                        _ = shared.queue.wake.notified() => break,
                        _ = tokio::time::sleep(SAFETY_NET) => break,
                        _ = stop.cancelled() => return,
                    }
                }
            }
            Err(e) => {
                tracing::warn!("claiming a build: {e}");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// Store events of a build for `writer` (its worker, or `None` for one no worker holds), asked
/// again while the store is busy. False when they could not be stored: the writer lost the
/// build, it has ended, or the store stayed unreachable (logged).
pub async fn append(shared: &AppState, build: &str, writer: Option<&str>, kinds: Vec<EventKind>) -> bool {
    let drafts: Vec<Draft> = kinds.into_iter().map(Draft::now).collect();
    for attempt in 0..20u32 {
        match shared.store.append(build, writer, drafts.clone()).await {
            Ok(_) => return true,
            Err(StoreError::Database(e)) => {
                tracing::warn!(build, attempt, "storing an event: {e}");
                tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt.min(8) + 1))).await;
            }
            Err(e) => {
                tracing::warn!(build, "event not stored: {e}");
                return false;
            }
        }
    }
    false
}

/// End a build the engine never ran (or whose worker is gone) that `holder` holds: `error`
/// saying why, its record and `complete`, in one step of the store ([`RunLog::finish`]).
pub async fn end_build(shared: &AppState, build: &str, holder: &str, message: &str, reason: EndReason) {
    let record = shared.store.build(build).await.ok();
    let files = record.as_ref().map(|b| b.files.clone()).unwrap_or_default();
    let finish = BuildFinish {
        status: RunStatus::Failed,
        end_reason: Some(reason),
        fix_attempts: 0,
        turns: 0,
        tokens: Tokens::default(),
        duration_ms: 0,
        files,
        report: Some(message.to_string()),
        finished_at: wright_events::now(),
    };
    let end = RunEnd::of(finish, vec![EventKind::Error { message: message.to_string(), detail: None }]);
    let mut ended = false;
    for attempt in 0..20u32 {
        match shared.store.finish(build, Some(holder), end.clone()).await {
            Ok(Finished::Now(_)) => {
                ended = true;
                break;
            }
            Ok(Finished::Already { .. }) => break,
            Err(StoreError::Database(e)) => {
                tracing::warn!(build, attempt, "ending the build: {e}");
                tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt.min(8) + 1))).await;
            }
            Err(StoreError::NotHolder(_)) => {
                tracing::warn!(build, "not ended here: another worker holds it now");
                return;
            }
            Err(e) => {
                tracing::error!(build, "the build could not be ended: {e}; the next reaper pass tries again");
                return;
            }
        }
    }
    if !ended {
        return;
    }
    // No run finished: a follow-up build's folder goes back to how its parent left it.
    match record {
        Some(r) => restore_and_discard(shared, build, r.start.workspace).await,
        None => crate::rerun::discard(shared.engine.artifacts().root(), build),
    }
    shared.metrics.build_ended(Some(reason), None);
}

/// [`crate::rerun::restore_and_discard`] on the blocking pool, errors logged.
pub async fn restore_and_discard(shared: &AppState, build: &str, workspace: String) {
    let artifacts = shared.engine.artifacts();
    let (root, folder) = (artifacts.root().to_path_buf(), artifacts.resolve(Path::new(&workspace)));
    let id = build.to_string();
    let done = tokio::task::spawn_blocking(move || crate::rerun::restore_and_discard(&root, &id, &folder)).await;
    match done {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(build, "putting back the folder the build started from: {e}"),
        Err(e) => tracing::warn!(build, "putting back the folder the build started from: {e}"),
    }
}

/// An interrupted build that `holder` holds: back to the queue for another run, or, past the
/// limit of re-runs (or when a cancel was asked for), ended with `error` and `complete`.
/// False when the store could not be asked, so nothing was settled.
pub async fn restart_or_end(shared: &AppState, build: &str, holder: &str, reason: RestartReason) -> bool {
    let runs = shared.cfg.max_restarts.saturating_add(1);
    match bounded(shared.store.restart_build(build, holder, runs, reason)).await {
        Ok(Restart::Requeued(_)) => {
            tracing::warn!(build, reason = reason.as_str(), "interrupted; it runs again");
            shared.metrics.build_restarted(reason);
            shared.queue.wake.notify_one();
        }
        Ok(Restart::Exhausted { attempts }) => {
            tracing::warn!(build, attempts, "interrupted once more than it may be run again; ending it");
            let said = say(lang_of(shared, build).await, Said::ServerStopped);
            end_build(shared, build, holder, &said, EndReason::ServerStopped).await;
        }
        Ok(Restart::Cancelled) => {
            let said = say(lang_of(shared, build).await, Said::StoppedWhileCancelling);
            end_build(shared, build, holder, &said, EndReason::Cancelled).await;
        }
        Ok(Restart::NotHeld) => {}
        // The lease runs out (again) and a reaper tries once more.
        Err(e) => {
            tracing::warn!(build, "putting an interrupted build back in the queue: {e}");
            return false;
        }
    }
    true
}

/// The language a build is narrated in, for what the server says in its stream.
async fn lang_of(shared: &AppState, build: &str) -> Lang {
    shared.store.build(build).await.map(|b| b.start.lang).unwrap_or_default()
}

/// Run a build `worker` claimed (asked for at `asked`, where its lease starts by this
/// process's clock).
async fn run_claimed(shared: &AppState, worker: &str, record: wright_store::BuildRecord, asked: Instant) {
    let id = record.start.id.to_string();
    let handles = Handles::default();
    shared.queue.with(|m| m.insert(id.clone(), handles.clone()));
    // The run's commands are watched from outside this process: killed when the lease is not
    // renewed in time, even while this process is frozen (see `wright_sandbox::Leash`).
    let leash = std::env::current_exe()
        .and_then(|helper| wright_sandbox::Leash::new(helper, shared.cfg.lease.saturating_sub(asked.elapsed())))
        .map_err(|e| tracing::warn!("no leash for this run's commands: {e}"))
        .ok();
    let keeper =
        tokio::spawn(keep_lease(shared.clone(), id.clone(), worker.to_string(), handles.clone(), leash.clone(), asked));
    let mut interrupted = false;
    match record.queued_job() {
        Err(e) => end_build(shared, &id, worker, &e.to_string(), EndReason::InvalidRequest).await,
        Ok(job) => {
            let job = job.clone();
            append(shared, &id, Some(worker), vec![EventKind::Started { worker: worker.to_string() }]).await;
            crate::spend::warn_run(shared, &id, worker, record.owner.as_deref()).await;
            let continuing = crate::jobs::continues(&job);
            let artifacts = shared.engine.artifacts().clone();
            let recorded = artifacts.resolve(Path::new(&record.start.workspace));
            let reset = {
                let (artifacts, record) = (artifacts.clone(), record.clone());
                tokio::task::spawn_blocking(move || crate::rerun::prepare(&artifacts, &record, continuing)).await
            };
            // A claim after a lost one works in a folder of its own, recorded on the build
            // while this worker holds it: files, archive, previews and follow-ups follow it.
            let folder = match reset {
                Ok(Ok(folder)) => {
                    let path = artifacts.record(&folder);
                    if folder == recorded {
                        Ok(Some(folder))
                    } else {
                        let lease = shared.cfg.lease;
                        match tokio::time::timeout(lease, shared.store.set_claim_folder(&id, worker, &path)).await {
                            Ok(Ok(true)) => Ok(Some(folder)),
                            Ok(Ok(false)) => Ok(None),
                            Ok(Err(e)) => {
                                tracing::warn!("recording this run's folder: {e}");
                                Ok(None)
                            }
                            Err(_) => Ok(None),
                        }
                    }
                }
                Ok(Err(e)) => Err(e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            let ready = match folder {
                Ok(Some(folder)) => {
                    crate::jobs::Ready::prepare(&shared.engine, &id, job, folder, worker, leash.clone()).await.map(Some)
                }
                // Not held any more (or not known to be): the build is another run's now.
                Ok(None) => Ok(None),
                Err(e) => {
                    Err((format!("the build's folder could not be made ready: {e}"), EndReason::WorkspaceUnusable))
                }
            };
            match ready {
                Err((message, reason)) => end_build(shared, &id, worker, &message, reason).await,
                Ok(None) => {
                    handles.lost.store(true, Ordering::SeqCst);
                    interrupted = true;
                }
                Ok(Some(ready)) => interrupted = run_ready(shared, &id, worker, ready, &handles, leash.as_ref()).await,
            }
        }
    }
    keeper.abort();
    if interrupted {
        // Events the dropped run still had queued are refused by the store once the build is
        // back in the queue: this worker's lease on it is gone.
        // After a lost lease this worker no longer holds the build: this finds it `NotHeld`
        // and leaves it to whoever holds it now.
        let lost = handles.lost.load(Ordering::SeqCst);
        let reason = if lost { RestartReason::WorkerLost } else { RestartReason::Shutdown };
        // This process's reaper spares its own workers' builds (they are alive), so a build
        // whose run was dropped for a lost lease is put back here, asked again while the store
        // is busy; after a shutdown the next start's reaper (another name) takes it.
        let tries = if lost { 20u32 } else { 1 };
        for attempt in 0..tries {
            if restart_or_end(shared, &id, worker, reason).await {
                break;
            }
            if attempt + 1 < tries {
                tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt.min(8) + 1))).await;
            }
        }
        // Dropped just as its build ended (by this run, or by the run that holds it now): the
        // folder's copy is of no more use.
        if let Ok(Ok(b)) = tokio::time::timeout(shared.cfg.lease, shared.store.build(&id)).await
            && b.status.is_final()
        {
            crate::rerun::discard(shared.engine.artifacts().root(), &id);
        }
    }
    shared.queue.with(|m| m.remove(&id));
}

/// Run a claimed run made ready: true when it was interrupted (dropped, to run again or be
/// ended by [`restart_or_end`]), false when it ended here.
async fn run_ready(
    shared: &AppState,
    id: &str,
    worker: &str,
    ready: crate::jobs::Ready,
    handles: &Handles,
    leash: Option<&wright_sandbox::Leash>,
) -> bool {
    let warnings: Vec<EventKind> = ready
        .warnings()
        .iter()
        .map(|w| EventKind::Status { message: w.message.clone(), level: Level::Warning })
        .collect();
    if !warnings.is_empty() {
        append(shared, id, Some(worker), warnings).await;
    }
    let label = ready.label();
    shared.metrics.running.inc();
    let usage = Arc::new(UsageSink::new(shared.metrics.clone()));
    // An interrupt drops the run where it is, as a crash would (its commands are killed with
    // it); every event it emitted is stored already.
    let refused = ready.refusal();
    let mut interrupted = false;
    tokio::select! {
        ran = ready.run(usage, handles.cancel.clone()) => {
            let past_lease = leash.is_some_and(wright_sandbox::Leash::expired);
            if ran.refused || (past_lease && !ran.ended_here) {
                // Past its lease (woken from a freeze before the keeper noticed, or refused by
                // the database's clock): its ending was refused, and the copy of the folder
                // may serve the run that holds the build now. (A run whose ending the store
                // took before this worker's own, earlier, deadline passed ended the build: it
                // counts.)
                handles.lost.store(true, Ordering::SeqCst);
                interrupted = true;
            } else {
                shared.metrics.build_ended_as(ran.reason, label);
                crate::rerun::discard(shared.engine.artifacts().root(), id);
                tracing::info!(outcome = ran.reason.map_or("published", EndReason::as_str), "build ended");
            }
        }
        _ = handles.interrupt.cancelled() => interrupted = true,
        // The store refused this worker an event: by the database's clock its lease ran out
        // (or another worker holds the build), whatever this process's clock says.
        _ = refused.cancelled() => {
            handles.drop_run(id, "the store refused this run's events", leash);
            interrupted = true;
        }
    }
    shared.metrics.running.dec();
    interrupted
}

/// While a build runs: renew its lease, and stop it when a cancel is asked for (the store
/// signals it; asked of the store at each renewal too, for a cancel made by another process
/// on a shared SQLite file) or the lease was lost.
///
/// A lost lease (another worker holds the build now, or no renewal got through for a whole
/// lease, so a reaper may have handed it on) interrupts the run rather than cancelling it: a
/// cancel would run the build's normal ending over the new holder's run; an interrupt drops
/// the run (its sandbox is killed with it, its model call abandoned), and the store refuses
/// whatever it still writes.
///
/// The lease's deadline is kept on this process's monotonic clock from the moment the last
/// renewal that got through was sent (the claim, at first): the database sets its own deadline
/// when the request reaches it, later, so this worker always stops before the store refuses it
/// by the database's clock (a renewal the database receives past its deadline is refused) (and handed to the run's [`Leash`](wright_sandbox::Leash), which kills its
/// commands when it passes even if this process is frozen), and every call to the store is
/// bounded by it: a database that stops answering
/// (a partition, a black-holed connection) cannot hold the renewal past the deadline, so the
/// run stops by itself before a reaper can hand the build to another worker, whether the
/// database ever answers again or not.
async fn keep_lease(
    shared: AppState,
    id: String,
    worker: String,
    handles: Handles,
    leash: Option<wright_sandbox::Leash>,
    claimed: Instant,
) {
    let lease = shared.cfg.lease;
    let every = lease / 3;
    let mut signals = shared.store.notifier().signals();
    let mut renewed = claimed;
    let lost = |why: &str| handles.drop_run(&id, why, leash.as_ref());
    loop {
        let deadline = tokio::time::Instant::from_std(renewed + lease);
        tokio::select! {
            signal = signals.recv() => {
                match signal {
                    Ok(Signal::Cancel(run)) if run == id => handles.cancel.cancel(),
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        if let Ok(Ok(true)) = tokio::time::timeout_at(deadline, shared.store.cancel_requested(&id)).await {
                            handles.cancel.cancel();
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => signals = shared.store.notifier().signals(),
                }
                continue;
            }
            _ = tokio::time::sleep(every.saturating_sub(renewed.elapsed())) => {}
        }
        if let Ok(Ok(true)) = tokio::time::timeout_at(deadline, shared.store.cancel_requested(&id)).await {
            handles.cancel.cancel();
        }
        let sent = Instant::now();
        match tokio::time::timeout_at(deadline, shared.store.renew_lease(&id, &worker, lease)).await {
            Ok(Ok(true)) => {
                renewed = sent;
                if let Some(Err(e)) = leash.as_ref().map(|l| l.hold_for(lease.saturating_sub(sent.elapsed()))) {
                    tracing::warn!(build = %id, "moving the leash's deadline: {e}");
                }
            }
            Ok(Ok(false)) => {
                return lost(
                    "the lease is gone (it ran out by the database's clock, or another worker holds the build now)",
                );
            }
            Err(_) => return lost("the store did not answer before the lease ran out"),
            Ok(Err(e)) if renewed.elapsed() >= lease => {
                return lost(&format!("no lease renewal for a whole lease ({e})"));
            }
            Ok(Err(e)) => {
                tracing::warn!(build = %id, "renewing the lease: {e}");
                // Not at once again: a busy store gets a breather.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        if renewed.elapsed() >= lease {
            return lost("the lease ran out before a renewal got through");
        }
    }
}

/// Find builds whose lease ran out (their worker is gone: a crash or kill -9), at start and
/// then every quarter lease (at most every 2 s), and run them again (or end them past the
/// limit). A dead worker's build is rescued within a lease and a quarter.
async fn reaper(shared: AppState, stop: CancellationToken) {
    let name = format!("{}-reaper", shared.queue.instance);
    let every = (shared.cfg.lease / 4).clamp(Duration::from_millis(200), Duration::from_secs(2));
    sweep_snapshots(&shared).await;
    loop {
        // This process's own workers are alive: one whose lease ran out finds out by itself
        // (its renewal or its next write is refused, or its own clock runs out first) and puts
        // its build back, so taking it here too would only race it.
        let own = format!("{}-w", shared.queue.instance);
        match bounded(shared.store.take_expired(&name, shared.cfg.lease * 4, &own)).await {
            Ok(lost) => {
                for b in lost {
                    // Not settled: the lease runs out again and the next pass tries once more.
                    let _settled = restart_or_end(&shared, &b.start.id, &name, RestartReason::WorkerLost).await;
                }
            }
            Err(e) => tracing::warn!("looking for lost builds: {e}"),
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.cancelled() => return,
        }
    }
}

/// Remove the folder copies of builds that have ended (a kill between the end and the removal).
async fn sweep_snapshots(shared: &AppState) {
    for (build, path) in crate::rerun::kept(shared.engine.artifacts().root()) {
        let ended = match shared.store.build(&build).await {
            Ok(b) => b.status.is_final(),
            Err(wright_store::StoreError::NotFound(_)) => true,
            Err(_) => false,
        };
        if ended && let Err(e) = tokio::fs::remove_dir_all(&path).await {
            tracing::warn!(build, "removing {}: {e}", path.display());
        }
    }
}

/// After a shutdown signal: give running builds the grace time, then interrupt the rest, which
/// go back to the queue and run again on the next start (or on another server), and wait for
/// every worker.
pub async fn drain(shared: &AppState, workers: Vec<JoinHandle<()>>) {
    let deadline = Instant::now() + shared.cfg.grace;
    while shared.queue.running() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let interrupted = shared.queue.with(|m| {
        m.values().for_each(|t| t.interrupt.cancel());
        m.len()
    });
    if interrupted > 0 {
        tracing::info!(interrupted, "grace time over: the builds still running go back to the queue");
    }
    // A worker may have claimed a build just as the stop came: interrupt it too.
    while !workers.iter().all(|w| w.is_finished()) {
        shared.queue.with(|m| m.values().for_each(|t| t.interrupt.cancel()));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for w in workers {
        let _ = w.await;
    }
}
