//! [`DocsIndex`]: keeping the index in step with the folder, and searching it.

use crate::chunk::{self, truncate};
use crate::db::{Db, FileUpdate};
use crate::error::DocsError;
use crate::fts::fts_query;
use crate::fuse::rrf;
use crate::scan::{self, Found, Read};
use crate::vector::{VectorSet, from_blob, normalized, to_blob};
use crate::{Embed, Hit, IndexStatus, RefreshStats, SearchMode};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio_util::sync::CancellationToken;

/// The most hits one search returns.
pub const MAX_TOP_N: usize = 20;
/// Each ranking contributes this many candidates to the fusion: enough that a chunk ranked
/// modestly by both can still rise to the top.
const CANDIDATES: usize = 50;
/// A hit's text is cut to this many characters: enough to answer from, few enough that twenty
/// hits fit in a prompt.
const SNIPPET_CHARS: usize = 700;
/// How long one embedding call should take; the number of chunks per call grows or shrinks
/// towards it. A search embeds its query through the same model, which serves calls one after
/// another, so a search that arrives while a refresh is embedding waits for the call in
/// progress: with e5 (about 85 ms a chunk, no gain from batching) calls stay at one or two
/// chunks, while a fast or remote embedder gets batches of up to [`MAX_EMBED_BATCH`].
const EMBED_CALL: Duration = Duration::from_millis(100);
const MAX_EMBED_BATCH: usize = 64;
/// Documents read per transaction, so a first index of a big folder becomes searchable as it
/// goes rather than all at the end.
const FILES_PER_BATCH: usize = 64;
/// A file modified this close to when it was last checked may have changed again within the
/// file system's timestamp granularity, so its time and size are not trusted: it is hashed.
const RACY_NS: i64 = 2_000_000_000;

/// A searchable index of the Markdown and HTML documents under one folder; see the crate
/// documentation. Cheap to clone: clones share one index.
#[derive(Clone)]
pub struct DocsIndex {
    inner: Arc<Inner>,
}

struct Inner {
    db: Db,
    source: PathBuf,
    embedder: Option<Arc<dyn Embed>>,
    /// One refresh at a time; searches never wait for it.
    refreshing: tokio::sync::Mutex<()>,
    vectors: RwLock<Cache>,
    /// Files already warned about, so a watch does not repeat a warning every round.
    warned: Mutex<HashSet<String>>,
}

/// The vectors in memory. `generation` changes with every change to the stored vectors, so a
/// set loaded while one happened is used once but not kept.
#[derive(Default)]
struct Cache {
    generation: u64,
    set: Option<Arc<VectorSet>>,
}

impl DocsIndex {
    /// Open (create) the index file for the documents under `source`.
    ///
    /// Nothing is read from `source` until [`DocsIndex::refresh`]. Vectors made by another
    /// embedder than `embedder` are dropped here and recomputed by the next refresh; without
    /// an embedder they are kept (unused) for when it is back.
    pub async fn open(db_path: &Path, source: &Path, embedder: Option<Arc<dyn Embed>>) -> Result<Self, DocsError> {
        let db = Db::open(db_path).await?;
        if let Some(e) = &embedder {
            if db.meta("embedder").await?.as_deref() != Some(e.name()) {
                db.clear_vectors().await?;
                db.set_meta("embedder", e.name()).await?;
            }
        }
        Ok(Self {
            inner: Arc::new(Inner {
                db,
                source: source.to_path_buf(),
                embedder,
                refreshing: tokio::sync::Mutex::new(()),
                vectors: RwLock::new(Cache::default()),
                warned: Mutex::new(HashSet::new()),
            }),
        })
    }

    /// Bring the index up to date with the folder: new and changed files (by content hash)
    /// re-chunked, removed files dropped, then vectors computed for chunks that have none (in
    /// batches, off the async threads). Returns what changed.
    ///
    /// Keyword search sees each batch of documents as soon as it is stored; vectors follow.
    /// A file whose size and modification time are unchanged is not read again. If the
    /// embedder fails, the documents are still indexed and the error says so.
    pub async fn refresh(&self) -> Result<RefreshStats, DocsError> {
        let started = Instant::now();
        let _one_at_a_time = self.inner.refreshing.lock().await;
        let db = &self.inner.db;
        let now = now_ns();
        let source = self.inner.source.clone();
        let scan = blocking(move || scan::scan(&source)).await??;
        self.warn_skipped(scan.skipped);
        let mut stored = db.files().await?;
        let ids: HashMap<String, i64> = stored.iter().map(|(path, f)| (path.clone(), f.id)).collect();
        let present: HashSet<&str> = scan.found.iter().map(|f| f.rel.as_str()).collect();
        let mut gone: Vec<i64> =
            stored.iter().filter(|(path, _)| !present.contains(path.as_str())).map(|(_, f)| f.id).collect();
        let mut stats = RefreshStats::default();
        let to_read: Vec<(Found, Option<String>)> = scan
            .found
            .into_iter()
            .filter_map(|f| match stored.remove(&f.rel) {
                Some(row) if unchanged(&row, &f) => None,
                Some(row) => Some((f, Some(row.hash))),
                None => Some((f, None)),
            })
            .collect();
        for batch in to_read.chunks(FILES_PER_BATCH) {
            let batch = batch.to_vec();
            let (updates, skipped) = blocking(move || read_batch(batch, now)).await?;
            // A stored file that can no longer be read (it turned binary, say) goes.
            gone.extend(skipped.iter().filter_map(|(path, _)| ids.get(path)));
            self.warn_skipped(skipped);
            let written: Vec<&Vec<chunk::Chunk>> = updates.iter().filter_map(|u| u.chunks.as_ref()).collect();
            stats.files_indexed += written.len();
            stats.chunks += written.iter().map(|c| c.len()).sum::<usize>();
            let changed = !written.is_empty();
            db.apply(updates).await?;
            if changed {
                self.invalidate_vectors();
            }
        }
        if !gone.is_empty() {
            gone.sort_unstable();
            gone.dedup();
            db.remove_files(&gone).await?;
            stats.files_removed = gone.len();
            self.invalidate_vectors();
        }
        stats.embedded = self.embed_missing().await?;
        let stamp = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        db.set_meta("last_refresh", &stamp).await?;
        stats.elapsed = started.elapsed();
        if stats.files_indexed + stats.files_removed + stats.embedded > 0 {
            tracing::info!(
                source = %self.inner.source.display(),
                indexed = stats.files_indexed,
                removed = stats.files_removed,
                chunks = stats.chunks,
                embedded = stats.embedded,
                elapsed_ms = stats.elapsed.as_millis() as u64,
                "docs index refreshed"
            );
        }
        Ok(stats)
    }

    /// Refresh now and then every `every` until `stop` is cancelled (re-index when files
    /// change); errors are logged with tracing, never panic.
    ///
    /// Cancelling stops a refresh in progress at once; what it had stored stays.
    pub fn watch(self: Arc<Self>, every: Duration, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            // The last error, so a lasting problem is logged once, not every round.
            let mut last_error: Option<String> = None;
            loop {
                tokio::select! {
                    biased;
                    () = stop.cancelled() => break,
                    result = self.refresh() => match result {
                        Ok(_) => last_error = None,
                        Err(e) => {
                            let message = e.to_string();
                            if last_error.as_deref() != Some(message.as_str()) {
                                tracing::warn!(source = %self.inner.source.display(), "docs index: {message}");
                            }
                            last_error = Some(message);
                        }
                    },
                }
                tokio::select! {
                    biased;
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(every) => {}
                }
            }
        })
    }

    /// The best `top_n` (1..=20) chunks for `query`.
    ///
    /// Keyword and meaning rankings fused ([`SearchMode::Fused`]); without an embedder, or
    /// for chunks not embedded yet, keywords alone. `top_n` outside 1..=20 is clamped.
    pub async fn search(&self, query: &str, top_n: usize) -> Result<Vec<Hit>, DocsError> {
        self.search_with(query, top_n, SearchMode::Fused).await
    }

    /// [`DocsIndex::search`] with one ranking alone, for comparing them.
    pub async fn search_with(&self, query: &str, top_n: usize, mode: SearchMode) -> Result<Vec<Hit>, DocsError> {
        let top_n = top_n.clamp(1, MAX_TOP_N);
        let keyword = match (mode, fts_query(query)) {
            (SearchMode::Fused | SearchMode::Keyword, Some(fts)) => self.inner.db.keyword(&fts, CANDIDATES).await?,
            _ => Vec::new(),
        };
        let meaning = match mode {
            SearchMode::Fused | SearchMode::Meaning => self.nearest(query).await?,
            SearchMode::Keyword => Vec::new(),
        };
        let top: Vec<(i64, f32)> = rrf(&[&keyword, &meaning]).into_iter().take(top_n).collect();
        let ids: Vec<i64> = top.iter().map(|(id, _)| *id).collect();
        let mut rows: HashMap<i64, _> = self.inner.db.chunks(&ids).await?.into_iter().map(|r| (r.id, r)).collect();
        Ok(top
            .into_iter()
            .filter_map(|(id, score)| {
                let r = rows.remove(&id)?;
                Some(Hit {
                    source: r.source,
                    heading: r.heading,
                    anchor: r.anchor,
                    snippet: truncate(&r.body, SNIPPET_CHARS),
                    score,
                })
            })
            .collect())
    }

    /// Files, chunks, embedded chunks, last refresh time, embedder name.
    pub async fn status(&self) -> Result<IndexStatus, DocsError> {
        let (files, chunks, embedded) = self.inner.db.counts().await?;
        Ok(IndexStatus {
            files: files as usize,
            chunks: chunks as usize,
            embedded: if self.inner.embedder.is_some() { embedded as usize } else { 0 },
            last_refresh: self.inner.db.meta("last_refresh").await?,
            embedder: self.inner.embedder.as_ref().map(|e| e.name().to_string()),
        })
    }

    /// The ids of the chunks nearest `query` in meaning, nearest first; empty without an
    /// embedder or vectors. A failing embedder is logged and leaves keywords to answer.
    async fn nearest(&self, query: &str) -> Result<Vec<i64>, DocsError> {
        let Some(embedder) = self.inner.embedder.clone() else { return Ok(Vec::new()) };
        if query.trim().is_empty() {
            return Ok(Vec::new());
        }
        let set = self.vector_set().await?;
        if set.len() == 0 {
            return Ok(Vec::new());
        }
        let query = query.to_string();
        let found = blocking(move || {
            let v = embedder.embed_query(&[query])?.into_iter().next().ok_or("no vector for the query")?;
            Ok::<_, String>(set.top(&normalized(v), CANDIDATES))
        })
        .await?;
        match found {
            Ok(top) => Ok(top.into_iter().map(|(id, _)| id).collect()),
            Err(e) => {
                tracing::warn!(error = %e, "docs search: embedding the query failed; keyword results only");
                Ok(Vec::new())
            }
        }
    }

    /// Computes vectors for every chunk without one; returns how many.
    async fn embed_missing(&self) -> Result<usize, DocsError> {
        let Some(embedder) = self.inner.embedder.clone() else { return Ok(0) };
        let failed = |message: String| DocsError::Embed { model: embedder.name().to_string(), message };
        let mut done = 0;
        let mut batch = 1;
        loop {
            let rows = self.inner.db.unembedded(batch).await?;
            if rows.is_empty() {
                return Ok(done);
            }
            let texts: Vec<String> = rows.iter().map(|(_, heading, body)| embed_text(heading, body)).collect();
            let e = embedder.clone();
            let started = Instant::now();
            let vectors = blocking(move || e.embed(&texts)).await?.map_err(failed)?;
            let took = started.elapsed();
            if took < EMBED_CALL / 2 {
                batch = (batch * 2).min(MAX_EMBED_BATCH);
            } else if took > EMBED_CALL * 2 {
                batch = (batch / 2).max(1);
            }
            if vectors.len() != rows.len() {
                return Err(failed(format!("it returned {} vectors for {} texts", vectors.len(), rows.len())));
            }
            let vectors: Vec<Vec<f32>> = vectors.into_iter().map(normalized).collect();
            if vectors.iter().any(|v| v.is_empty() || v.iter().any(|x| !x.is_finite())) {
                return Err(failed("it returned an empty or non-finite vector".into()));
            }
            let blobs: Vec<(i64, Vec<u8>)> = rows.iter().zip(&vectors).map(|((id, ..), v)| (*id, to_blob(v))).collect();
            self.inner.db.store_vectors(&blobs).await?;
            let mut cache = self.inner.vectors.write().unwrap_or_else(PoisonError::into_inner);
            cache.generation += 1;
            if let Some(set) = &mut cache.set {
                let set = Arc::make_mut(set);
                for ((id, ..), v) in rows.iter().zip(&vectors) {
                    set.push(*id, v);
                }
            }
            done += rows.len();
        }
    }

    /// The vectors, loaded from the file when the cache is empty.
    async fn vector_set(&self) -> Result<Arc<VectorSet>, DocsError> {
        let generation = {
            let cache = self.inner.vectors.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(set) = &cache.set {
                return Ok(set.clone());
            }
            cache.generation
        };
        let rows = self.inner.db.vectors().await?;
        let set = Arc::new(
            blocking(move || {
                let mut set = VectorSet::default();
                for (id, blob) in rows {
                    if let Some(v) = from_blob(&blob) {
                        set.push(id, &v);
                    }
                }
                set
            })
            .await?,
        );
        let mut cache = self.inner.vectors.write().unwrap_or_else(PoisonError::into_inner);
        if cache.generation == generation {
            cache.set = Some(set.clone());
        }
        Ok(set)
    }

    fn invalidate_vectors(&self) {
        let mut cache = self.inner.vectors.write().unwrap_or_else(PoisonError::into_inner);
        cache.generation += 1;
        cache.set = None;
    }

    fn warn_skipped(&self, skipped: Vec<(String, String)>) {
        let mut warned = self.inner.warned.lock().unwrap_or_else(PoisonError::into_inner);
        for (path, reason) in skipped {
            if warned.insert(format!("{path}\n{reason}")) {
                tracing::warn!(file = %path, "docs index: skipped because {reason}");
            }
        }
    }
}

/// Whether a stored file's size and time say it is unchanged, and can be trusted to.
fn unchanged(row: &crate::db::FileRow, found: &Found) -> bool {
    row.size == found.size as i64 && row.mtime_ns == found.mtime_ns && found.mtime_ns < row.checked_ns - RACY_NS
}

/// Reads, hashes and chunks documents (blocking). Returns the updates and the files skipped
/// with the reason.
fn read_batch(batch: Vec<(Found, Option<String>)>, now: i64) -> (Vec<FileUpdate>, Vec<(String, String)>) {
    let mut updates = Vec::new();
    let mut skipped = Vec::new();
    for (found, old_hash) in batch {
        match scan::read(&found) {
            Read::Skipped(reason) => skipped.push((found.rel, reason)),
            Read::Text { hash, text } => {
                let chunks =
                    (old_hash.as_deref() != Some(hash.as_str())).then(|| crate::reader::chunk(found.kind, &text));
                updates.push(FileUpdate {
                    path: found.rel,
                    hash,
                    size: found.size as i64,
                    mtime_ns: found.mtime_ns,
                    checked_ns: now,
                    chunks,
                });
            }
        }
    }
    (updates, skipped)
}

/// What the model reads for a chunk: its heading path, then its text, so a section is found by
/// what it is about even when its body never names it.
fn embed_text(heading: &str, body: &str) -> String {
    if heading.is_empty() { body.to_string() } else { format!("{heading}: {body}") }
}

fn now_ns() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// Runs CPU-bound or blocking work off the async threads.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, DocsError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| DocsError::Task(e.to_string()))
}
