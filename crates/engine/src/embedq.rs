//! The engine's embedding scheduler: one queue in front of the embedding model, shared by
//! the chat's tool selection, the docs indexes and searches, and `/v1/embeddings`.
//!
//! The model serves one call at a time, so whoever calls it first decides how long everyone
//! else waits. Here a fixed set of workers (one on a small machine) takes jobs in this order:
//!
//! - **interactive** work (a chat message being scored, a docs search query: someone is
//!   waiting for the answer) always before **bulk** work (indexing a folder of documents,
//!   `/v1/embeddings` batches);
//! - within a class, round-robin over *owners* (a user id, `system` for indexing), one batch
//!   each, so one user's hundred batches delay another user's one batch by one batch at most;
//! - big inputs are cut into batches of [`Settings::batch`] texts, so interactive work waits
//!   for one batch at most.
//!
//! Each owner may have [`Settings::per_owner`] batches waiting per class; more is refused with
//! [`EmbedError::Busy`] (`/v1/embeddings` answers 429) instead of queueing without end.
//!
//! The model loads on the first job. A failed load is remembered with its reason and time and
//! tried again on the first job after a backoff ([`Settings::backoff`], doubling up to
//! [`Settings::max_backoff`]); until then jobs are refused at once with the reason. Jobs that
//! arrive during a load wait for that load (there is never a second load at the same time).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use wright_chat::Embedder;

/// Which work waits for which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Someone waits for it now (a chat message, a docs search): served first.
    Interactive,
    /// Whole sets of texts (docs indexing, `/v1/embeddings`).
    Bulk,
}

/// Why texts were not embedded.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EmbedError {
    /// No model: switched off, or its load failed (tried again after the backoff).
    #[error("no embedding model: {0}")]
    Unavailable(String),
    /// The owner has too many batches waiting.
    #[error("{owner} has {waiting} batches of texts waiting to be embedded (at most {limit}); try again shortly")]
    Busy { owner: String, waiting: usize, limit: usize },
    /// The model failed on these texts.
    #[error("embedding failed: {0}")]
    Failed(String),
    /// The engine is shutting down.
    #[error("the embedding scheduler stopped")]
    Stopped,
}

/// Loads the model (blocking, seconds of CPU); its error says why in words.
pub type Loader = Box<dyn Fn() -> Result<Arc<dyn Embedder>, String> + Send + Sync>;

/// How the scheduler shares the model.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Threads that call the model. One is right when the model runs one call at a time (e5
    /// in llama.cpp does, on all cores); more only pipelines calls.
    pub workers: usize,
    /// Texts per batch: the longest an interactive job waits is one batch of this many.
    pub batch: usize,
    /// Batches one owner may have waiting per class.
    pub per_owner: usize,
    /// Wait after a first failed load before trying again; doubles after each failure.
    pub backoff: Duration,
    pub max_backoff: Duration,
}

/// A failed load is tried again after 30 s, then 1, 2, 4… minutes, never more than 30 min
/// apart: a missing file or a broken download is usually fixed by hand within minutes, and a
/// load costs seconds of CPU, so trying every minute for ever is not free either.
pub const BACKOFF: Duration = Duration::from_secs(30);
pub const MAX_BACKOFF: Duration = Duration::from_secs(30 * 60);

impl Default for Settings {
    fn default() -> Self {
        // 16 e5 texts take about a second on two cores (measured by the bench in
        // tests/embedq.rs): an interactive job waits that long at most.
        Self { workers: 1, batch: 16, per_owner: 64, backoff: BACKOFF, max_backoff: MAX_BACKOFF }
    }
}

/// What the model is doing, for notes and `wright doctor`.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelStatus {
    /// Not loaded yet (it loads on the first job).
    Unloaded,
    Loading,
    /// Loaded, in this long.
    Ready(Duration),
    /// The last load failed with `why`; the next job after `retry_in` tries again.
    Failed {
        why: String,
        retry_in: Duration,
    },
    /// Switched off by configuration.
    Off(String),
}

type Vectors = Result<Vec<Vec<f32>>, EmbedError>;
type Reply = oneshot::Sender<Vectors>;

struct Batch {
    texts: Vec<String>,
    reply: Reply,
}

/// One class's waiting batches: owners in round-robin order, each with its own queue.
#[derive(Default)]
struct Lane {
    turn: VecDeque<String>,
    waiting: HashMap<String, VecDeque<Batch>>,
}

impl Lane {
    fn waiting(&self, owner: &str) -> usize {
        self.waiting.get(owner).map_or(0, VecDeque::len)
    }

    fn push(&mut self, owner: &str, batch: Batch) {
        let queue = self.waiting.entry(owner.to_string()).or_default();
        if queue.is_empty() {
            self.turn.push_back(owner.to_string());
        }
        queue.push_back(batch);
    }

    /// The next owner's first batch; the owner goes to the back if it has more.
    fn pop(&mut self) -> Option<Batch> {
        let owner = self.turn.pop_front()?;
        let queue = self.waiting.get_mut(&owner)?;
        let batch = queue.pop_front();
        if queue.is_empty() {
            self.waiting.remove(&owner);
        } else {
            self.turn.push_back(owner);
        }
        batch
    }
}

enum Model {
    Unloaded,
    Loading,
    Ready(Arc<dyn Embedder>, Duration),
    Failed { why: String, retry_at: Instant, backoff: Duration },
    Off(String),
}

struct State {
    interactive: Lane,
    bulk: Lane,
    model: Model,
    started: bool,
    stopping: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    loader: Loader,
    settings: Settings,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The scheduler; dropping it stops its workers once the batches already taken are done.
pub struct EmbedQueue {
    handle: EmbedHandle,
}

/// A way to submit work, for the adapters that give the model to the chat and the docs.
#[derive(Clone)]
pub struct EmbedHandle {
    shared: Arc<Shared>,
    name: Arc<str>,
}

impl EmbedQueue {
    /// A scheduler for the model `name` that `loader` loads on first use.
    pub fn new(name: &str, loader: Loader, settings: Settings) -> Self {
        Self::with_model(name, loader, settings, Model::Unloaded)
    }

    /// A scheduler without a model (`why`): every job is refused with it.
    pub fn off(name: &str, why: &str) -> Self {
        let never: Loader = Box::new(|| Err("off".into()));
        Self::with_model(name, never, Settings::default(), Model::Off(why.to_string()))
    }

    fn with_model(name: &str, loader: Loader, mut settings: Settings, model: Model) -> Self {
        settings.workers = settings.workers.max(1);
        settings.batch = settings.batch.max(1);
        settings.per_owner = settings.per_owner.max(1);
        let state =
            State { interactive: Lane::default(), bulk: Lane::default(), model, started: false, stopping: false };
        let shared = Arc::new(Shared { state: Mutex::new(state), wake: Condvar::new(), loader, settings });
        Self { handle: EmbedHandle { shared, name: name.into() } }
    }

    pub fn handle(&self) -> EmbedHandle {
        self.handle.clone()
    }
}

impl std::ops::Deref for EmbedQueue {
    type Target = EmbedHandle;
    fn deref(&self) -> &EmbedHandle {
        &self.handle
    }
}

impl Drop for EmbedQueue {
    fn drop(&mut self) {
        self.handle.shared.lock().stopping = true;
        self.handle.shared.wake.notify_all();
    }
}

impl EmbedHandle {
    /// The model's name (known before it loads).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the model is doing.
    pub fn status(&self) -> ModelStatus {
        match &self.shared.lock().model {
            Model::Unloaded => ModelStatus::Unloaded,
            Model::Loading => ModelStatus::Loading,
            Model::Ready(_, took) => ModelStatus::Ready(*took),
            Model::Failed { why, retry_at, .. } => {
                ModelStatus::Failed { why: why.clone(), retry_in: retry_at.saturating_duration_since(Instant::now()) }
            }
            Model::Off(why) => ModelStatus::Off(why.clone()),
        }
    }

    /// Queue `texts` for `owner` in `class`, cut into batches; one reply per batch, in order.
    /// No texts still makes one (empty) batch: it loads the model, see [`EmbedHandle::ready`].
    fn submit(
        &self,
        owner: &str,
        class: Class,
        texts: Vec<String>,
    ) -> Result<Vec<oneshot::Receiver<Vectors>>, EmbedError> {
        let s = &self.shared.settings;
        let mut state = self.shared.lock();
        if state.stopping {
            return Err(EmbedError::Stopped);
        }
        match &state.model {
            Model::Off(why) => return Err(EmbedError::Unavailable(why.clone())),
            Model::Failed { why, retry_at, .. } if Instant::now() < *retry_at => {
                return Err(EmbedError::Unavailable(why.clone()));
            }
            _ => {}
        }
        let chunks: Vec<Vec<String>> =
            if texts.is_empty() { vec![Vec::new()] } else { texts.chunks(s.batch).map(<[String]>::to_vec).collect() };
        let lane = match class {
            Class::Interactive => &mut state.interactive,
            Class::Bulk => &mut state.bulk,
        };
        let waiting = lane.waiting(owner);
        if waiting + chunks.len() > s.per_owner {
            return Err(EmbedError::Busy { owner: owner.to_string(), waiting, limit: s.per_owner });
        }
        let mut replies = Vec::with_capacity(chunks.len());
        for texts in chunks {
            let (reply, answer) = oneshot::channel();
            lane.push(owner, Batch { texts, reply });
            replies.push(answer);
        }
        if !state.started {
            // The workers start with the first job, so an engine that never embeds has none.
            let mut started = 0;
            for i in 0..s.workers {
                let shared = self.shared.clone();
                match std::thread::Builder::new().name(format!("wright-embedq-{i}")).spawn(move || work(&shared)) {
                    Ok(_) => started += 1,
                    Err(e) => tracing::warn!("an embedding worker could not start: {e}"),
                }
            }
            // Without a worker the batches just queued would wait for ever: the next job tries again.
            state.started = started > 0;
            if !state.started {
                state.interactive = Lane::default();
                state.bulk = Lane::default();
                return Err(EmbedError::Failed("no embedding worker could start".into()));
            }
        }
        drop(state);
        self.shared.wake.notify_one();
        Ok(replies)
    }

    /// Embed `texts` for `owner`: one unit-length vector per text, in order.
    pub async fn embed(&self, owner: &str, class: Class, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for answer in self.submit(owner, class, texts)? {
            out.extend(answer.await.map_err(|_| EmbedError::Stopped)??);
        }
        Ok(out)
    }

    /// [`EmbedHandle::embed`] for a blocking thread (never an async task: it would stall it).
    pub fn embed_blocking(&self, owner: &str, class: Class, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for answer in self.submit(owner, class, texts)? {
            out.extend(answer.blocking_recv().map_err(|_| EmbedError::Stopped)??);
        }
        Ok(out)
    }

    /// Load the model now (or wait for the load under way); why not when it cannot.
    pub async fn ready(&self) -> Result<(), EmbedError> {
        self.embed("system", Class::Interactive, Vec::new()).await.map(drop)
    }
}

/// A worker: the next batch (interactive first, owners in turn), the model (loaded when
/// needed), the call, the reply; until the queue is dropped and nothing waits.
fn work(shared: &Shared) {
    loop {
        let mut state = shared.lock();
        let batch = loop {
            // Another worker is loading: its load serves this worker too.
            if !matches!(state.model, Model::Loading) {
                if let Some(b) = state.interactive.pop().or_else(|| state.bulk.pop()) {
                    break b;
                }
                if state.stopping {
                    return;
                }
            }
            state = shared.wake.wait(state).unwrap_or_else(PoisonError::into_inner);
        };
        if batch.reply.is_closed() {
            // Its caller is gone (a client that hung up): the model has better things to do.
            continue;
        }
        let model = match &state.model {
            Model::Ready(m, _) => Ok(m.clone()),
            Model::Off(why) => Err(why.clone()),
            Model::Failed { why, retry_at, .. } if Instant::now() < *retry_at => Err(why.clone()),
            Model::Failed { .. } | Model::Unloaded | Model::Loading => {
                let before = std::mem::replace(&mut state.model, Model::Loading);
                drop(state);
                let t0 = Instant::now();
                let loaded = (shared.loader)();
                state = shared.lock();
                state.model = match loaded {
                    Ok(m) => {
                        tracing::info!(took_ms = t0.elapsed().as_millis() as u64, "the embedding model is loaded");
                        Model::Ready(m, t0.elapsed())
                    }
                    Err(why) => {
                        let s = &shared.settings;
                        let backoff = match before {
                            Model::Failed { backoff, .. } => (backoff * 2).min(s.max_backoff),
                            _ => s.backoff,
                        };
                        tracing::warn!(
                            retry_in_secs = backoff.as_secs(),
                            "the embedding model could not be loaded: {why}"
                        );
                        Model::Failed { why, retry_at: Instant::now() + backoff, backoff }
                    }
                };
                shared.wake.notify_all();
                match &state.model {
                    Model::Ready(m, _) => Ok(m.clone()),
                    Model::Failed { why, .. } => Err(why.clone()),
                    _ => Err("the embedding model did not load".into()),
                }
            }
        };
        drop(state);
        let result = match model {
            Err(why) => Err(EmbedError::Unavailable(why)),
            Ok(_) if batch.texts.is_empty() => Ok(Vec::new()),
            Ok(m) => match m.embed(&batch.texts) {
                Ok(v) if v.len() == batch.texts.len() => Ok(v),
                Ok(v) => Err(EmbedError::Failed(format!("{} vectors for {} texts", v.len(), batch.texts.len()))),
                Err(e) => Err(EmbedError::Failed(e)),
            },
        };
        let _ = batch.reply.send(result);
    }
}

/// The scheduler behind the chat's [`Embedder`] seam: `embed` is bulk work of `system` (the
/// example bank), `embed_interactive` is a message someone waits for.
pub struct Scheduled {
    pub handle: EmbedHandle,
    /// Who bulk work is counted against.
    pub owner: String,
}

impl Embedder for Scheduled {
    fn name(&self) -> &str {
        self.handle.name()
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.handle.embed_blocking(&self.owner, Class::Bulk, texts.to_vec()).map_err(|e| e.to_string())
    }
    fn embed_interactive(&self, owner: &str, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.handle.embed_blocking(owner, Class::Interactive, texts.to_vec()).map_err(|e| e.to_string())
    }
}

/// The scheduler behind the docs index's seam: indexing is bulk work of `system`, a search
/// query is interactive work of `owner` (the index's folder: its searches take turns with
/// chat users').
pub struct ScheduledDocs {
    pub handle: EmbedHandle,
    pub owner: String,
}

impl wright_docs::Embed for ScheduledDocs {
    fn name(&self) -> &str {
        self.handle.name()
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.handle.embed_blocking("system", Class::Bulk, texts.to_vec()).map_err(|e| e.to_string())
    }
    fn embed_query(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.handle.embed_blocking(&self.owner, Class::Interactive, texts.to_vec()).map_err(|e| e.to_string())
    }
}
