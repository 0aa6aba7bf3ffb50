//! Workers: claim the oldest queued build from the store, run it through the engine, renew
//! its lease while it runs, and stop it when someone asks. A reaper ends the builds whose
//! worker vanished (a crash, kill -9) with `error` + `complete`, so none stays running.

use crate::AppState;
use crate::api::BuildBody;
use crate::metrics::UsageSink;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use wright_engine::Job;
use wright_events::{Event, EventKind, Level};
use wright_store::{BuildFinish, BuildStatus, Tokens};

/// The builds this process runs, and the bell that wakes idle workers.
pub struct Queue {
    pub wake: Notify,
    running: Mutex<HashMap<String, CancellationToken>>,
    /// Names this process's workers and reaper in the store (`host-pid-random`).
    pub instance: String,
}

impl Queue {
    pub fn new() -> Self {
        let host = std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
        let tag = uuid::Uuid::new_v4().simple().to_string();
        Self {
            wake: Notify::new(),
            running: Mutex::new(HashMap::new()),
            instance: format!("{host}-{}-{}", std::process::id(), &tag[..6]),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, CancellationToken>) -> R) -> R {
        let mut m = match self.running.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        f(&mut m)
    }

    /// Stop a build this process runs; false when it runs elsewhere (or not at all).
    pub fn cancel(&self, id: &str) -> bool {
        self.with(|m| m.get(id).map(|t| t.cancel()).is_some())
    }

    pub fn running(&self) -> usize {
        self.with(|m| m.len())
    }
}

/// Store time `d` from now.
pub fn time_from_now(d: Duration) -> String {
    let d = chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX);
    (chrono::Utc::now() + d).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Start `cfg.workers` workers and the reaper.
pub fn start(shared: AppState, stop: CancellationToken) -> Vec<JoinHandle<()>> {
    let mut handles: Vec<JoinHandle<()>> =
        (0..shared.cfg.workers.max(1)).map(|n| tokio::spawn(worker(shared.clone(), n, stop.clone()))).collect();
    handles.push(tokio::spawn(reaper(shared, stop)));
    handles
}

async fn worker(shared: AppState, n: usize, stop: CancellationToken) {
    let name = format!("{}-w{n}", shared.queue.instance);
    loop {
        if stop.is_cancelled() {
            return;
        }
        match shared.store.claim_build(&name, &time_from_now(shared.cfg.lease)).await {
            Ok(Some(record)) => {
                let span = tracing::info_span!("build", build = %record.start.id, worker = %name);
                run_claimed(&shared, &name, record).instrument(span).await
            }
            Ok(None) => {
                tokio::select! {
                    _ = shared.queue.wake.notified() => {}
                    // Another server may have queued something.
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = stop.cancelled() => return,
                }
            }
            Err(e) => {
                tracing::warn!("claiming a build: {e}");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// The last stored `seq` of a build, asked again while the store is busy: guessing would
/// reuse a `seq` and lose the event.
pub async fn last_seq(shared: &AppState, build: &str) -> Option<u64> {
    for attempt in 0..20u32 {
        match shared.store.last_seq(build).await {
            Ok(n) => return Some(n),
            Err(e) => {
                tracing::warn!(build, attempt, "reading the last event: {e}");
                tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt.min(8) + 1))).await;
            }
        }
    }
    None
}

/// Store an event and send it to the build's followers.
pub async fn publish(shared: &AppState, build: &str, seq: u64, kind: EventKind) {
    let event = Event { seq, build: build.to_string(), ts: wright_events::now(), kind };
    match shared.store.append_event(&event).await {
        Ok(()) => shared.hub.publish(&event),
        Err(e) => tracing::error!(build, seq, "event not stored: {e}"),
    }
}

/// End a build the engine never ran (or whose worker is gone): `error`, then `complete`, then
/// the record, in that order, so a follower that sees the final record has the events.
pub async fn end_build(shared: &AppState, build: &str, message: &str, reason: &str) {
    let Some(last) = last_seq(shared, build).await else {
        tracing::error!(build, "the store cannot be read; the build stays as it is until the next reaper pass");
        return;
    };
    let files = shared.store.build(build).await.map(|b| b.files).unwrap_or_default();
    publish(shared, build, last + 1, EventKind::Error { message: message.to_string() }).await;
    publish(
        shared,
        build,
        last + 2,
        EventKind::Complete {
            success: false,
            files: files.clone(),
            iterations: 0,
            fix_attempts: 0,
            duration_ms: 0,
            input_tokens: 0,
            output_tokens: 0,
            cached_tokens: 0,
            cost_usd: 0.0,
            browser_checked: false,
            browser_reason: None,
        },
    )
    .await;
    let finish = BuildFinish {
        status: BuildStatus::Failed,
        end_reason: Some(reason.to_string()),
        fix_attempts: 0,
        turns: 0,
        tokens: Tokens::default(),
        duration_ms: 0,
        files,
        report: Some(message.to_string()),
        finished_at: wright_events::now(),
    };
    if let Err(e) = shared.store.finish_build(build, &finish).await {
        tracing::error!(build, "build record not finished: {e}");
    }
    shared.hub.close(build);
    shared.metrics.build_ended(reason, "unknown");
}

async fn run_claimed(shared: &AppState, worker: &str, record: wright_store::BuildRecord) {
    let id = record.start.id.clone();
    let token = CancellationToken::new();
    shared.queue.with(|m| m.insert(id.clone(), token.clone()));
    let sink = Arc::new(shared.hub.open(&id));
    let keeper = tokio::spawn(keep_lease(shared.clone(), id.clone(), worker.to_string(), token.clone()));
    let Some(last) = last_seq(shared, &id).await else {
        // The lease runs out, and the reaper (here or on another server) ends it.
        keeper.abort();
        shared.queue.with(|m| m.remove(&id));
        shared.hub.close(&id);
        return;
    };
    let mut next = last + 1;
    let body: Result<BuildBody, _> = serde_json::from_str(record.request.as_deref().unwrap_or("{}"));
    match body {
        Err(e) => end_build(shared, &id, &format!("the stored request cannot be read: {e}"), "invalid_request").await,
        Ok(body) => {
            publish(
                shared,
                &id,
                next,
                EventKind::Status { message: "A worker started the build.".into(), level: Level::Info },
            )
            .await;
            next += 1;
            let continuing = body.r#continue.is_some();
            let job = Job {
                id: id.clone(),
                prompt: body.prompt,
                template: body.template,
                lang: body.lang,
                checks: body.checks,
                continue_from: body.r#continue,
                workspace: (!continuing).then(|| record.start.workspace.clone().into()),
                model: body.model,
            };
            match shared.engine.prepare(job).await {
                Err(e) => {
                    let reason = match e {
                        wright_engine::EngineError::Usage(_) => "invalid_request",
                        wright_engine::EngineError::Provider(_) => "provider_unusable",
                    };
                    end_build(shared, &id, &format!("the build could not start: {e}"), reason).await;
                }
                Ok(prepared) => {
                    for w in prepared.warnings.clone() {
                        let message = w.trim_start_matches("wright: ").to_string();
                        publish(shared, &id, next, EventKind::Status { message, level: Level::Warning }).await;
                        next += 1;
                    }
                    let template = prepared.template().as_str();
                    shared.metrics.running.inc();
                    let usage = Arc::new(UsageSink::new(shared.metrics.clone()));
                    let finished = prepared.run(vec![sink.clone(), usage], token.clone(), next).await;
                    shared.metrics.running.dec();
                    let outcome = finished.report.end.reason().unwrap_or("published");
                    shared.metrics.build_ended(outcome, template);
                    tracing::info!(outcome, "build ended");
                }
            }
        }
    }
    keeper.abort();
    shared.queue.with(|m| m.remove(&id));
    shared.hub.close(&id);
}

/// While a build runs: renew its lease, and stop it when a cancel was asked for in the store
/// (by this server or another) or the lease was lost.
async fn keep_lease(shared: AppState, id: String, worker: String, token: CancellationToken) {
    let lease = shared.cfg.lease;
    let tick = (lease / 3).clamp(Duration::from_millis(100), Duration::from_secs(1));
    let mut renewed = Instant::now();
    loop {
        tokio::time::sleep(tick).await;
        if shared.store.cancel_requested(&id).await.unwrap_or(false) {
            token.cancel();
        }
        if renewed.elapsed() >= lease / 3 {
            match shared.store.renew_lease(&id, &worker, &time_from_now(lease)).await {
                Ok(true) => renewed = Instant::now(),
                Ok(false) => {
                    tracing::warn!(build = %id, "lost the build's lease; stopping it");
                    token.cancel();
                    return;
                }
                Err(e) => tracing::warn!(build = %id, "renewing the lease: {e}"),
            }
        }
    }
}

/// End builds whose lease ran out: at start (a crash or kill -9 of the last run) and then
/// every half lease.
async fn reaper(shared: AppState, stop: CancellationToken) {
    let name = format!("{}-reaper", shared.queue.instance);
    let every = (shared.cfg.lease / 2).max(Duration::from_millis(200));
    loop {
        let now = wright_events::now();
        match shared.store.take_expired(&now, &name, &time_from_now(shared.cfg.lease * 4)).await {
            Ok(lost) => {
                for b in lost {
                    tracing::warn!(build = %b.start.id, "its worker is gone; ending it");
                    end_build(&shared, &b.start.id, "the server stopped during this build", "server_stopped").await;
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

/// After a shutdown signal: give running builds the grace time, then cancel them, and wait
/// for every worker (each cancelled build still emits `complete`).
pub async fn drain(shared: &AppState, workers: Vec<JoinHandle<()>>) {
    let deadline = Instant::now() + shared.cfg.grace;
    while shared.queue.running() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let cancelled = shared.queue.with(|m| {
        m.values().for_each(|t| t.cancel());
        m.len()
    });
    if cancelled > 0 {
        tracing::info!(cancelled, "grace time over: cancelled the builds still running");
    }
    for w in workers {
        let _ = w.await;
    }
}
