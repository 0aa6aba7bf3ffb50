//! llama.cpp in process, on a thread of its own.
//!
//! The model and its context live on one OS thread for the engine's life (llama.cpp contexts
//! are not shareable across threads); requests reach it over a channel. Consecutive turns of an
//! agent loop share most of their prompt, so the KV cache is kept between requests and only
//! the part after the common prefix is evaluated again.

use crate::protocol::{ChatTurn, render};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};
use wright_provider::ProviderError;
use wright_provider::compact::{KEEP_TAIL, clip_longest, drop_oldest_exchange, shorten_old_tool_output};
use wright_provider::{Message, ToolSpec};

/// How to load and run a model.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub model_path: PathBuf,
    /// Context window in tokens; 0 means the model's training context, capped at 8192.
    pub n_ctx: u32,
    /// CPU threads; `None` means all available cores.
    pub threads: Option<i32>,
    /// Longest answer in tokens when the request does not say.
    pub max_new_tokens: u32,
    /// Sampling temperature when the request does not say.
    pub temperature: f32,
    pub seed: u32,
}

impl EngineConfig {
    pub fn new(model_path: impl Into<PathBuf>) -> Self {
        Self {
            model_path: model_path.into(),
            n_ctx: 0,
            threads: None,
            max_new_tokens: 1536,
            temperature: 0.2,
            seed: 42,
        }
    }
}

/// Cumulative figures, for benchmarks and `--verbose` summaries.
#[derive(Debug, Clone, Default)]
pub struct EngineStats {
    pub load: Duration,
    pub prompt_tokens: u64,
    pub prompt_time: Duration,
    pub reused_tokens: u64,
    pub generated_tokens: u64,
    pub generation_time: Duration,
    pub n_ctx: u32,
    pub model_name: String,
}

/// One finished generation.
#[derive(Debug, Clone)]
pub struct Generation {
    pub text: String,
    pub prompt_tokens: u64,
    /// Prompt tokens whose KV state was reused from the previous request.
    pub reused_tokens: u64,
    pub completion_tokens: u64,
    /// Stopped by the token limit rather than by the model.
    pub truncated: bool,
    /// Sequence number of this call on the engine (for tool-call ids).
    pub call_number: u64,
}

struct Job {
    messages: Vec<Message>,
    tools: Vec<ToolSpec>,
    grammar: Option<String>,
    max_new: u32,
    temperature: f32,
    cancel: Arc<AtomicBool>,
    reply: tokio::sync::oneshot::Sender<Result<Generation, ProviderError>>,
}

/// A loaded model. Dropping it stops the worker thread and frees the model.
pub struct LocalEngine {
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
    stats: Arc<Mutex<EngineStats>>,
    calls: AtomicU64,
    cfg: EngineConfig,
}

impl LocalEngine {
    /// Load the model (blocking: call it off the async runtime). llama.cpp's backend is
    /// process-wide and shared (see `backend.rs`), so the engine can run beside the embedding
    /// model.
    pub fn load(cfg: EngineConfig) -> Result<Self, ProviderError> {
        if !cfg.model_path.is_file() {
            return Err(ProviderError::Config(format!("model file {} does not exist", cfg.model_path.display())));
        }
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), ProviderError>>();
        let stats = Arc::new(Mutex::new(EngineStats::default()));
        let worker = {
            let (cfg, stats) = (cfg.clone(), stats.clone());
            std::thread::Builder::new()
                .name("wright-local-model".into())
                .spawn(move || worker(cfg, ready_tx, job_rx, stats))
                .map_err(|e| ProviderError::Config(format!("could not start the model thread: {e}")))?
        };
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(ProviderError::Config("the model thread stopped while loading".into())),
        }
        Ok(Self {
            jobs: Mutex::new(Some(job_tx)),
            worker: Mutex::new(Some(worker)),
            stats,
            calls: AtomicU64::new(0),
            cfg,
        })
    }

    pub fn stats(&self) -> EngineStats {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Generate one answer to `messages`; with `tools`, sampling is constrained to a call of
    /// one of them or a plain answer. Dropping the returned future cancels generation at the
    /// next token.
    pub async fn generate(
        &self,
        messages: Vec<Message>,
        tools: Vec<ToolSpec>,
        max_tokens: Option<u32>,
        temperature: Option<f32>,
    ) -> Result<Generation, ProviderError> {
        self.generate_with(messages, tools, max_tokens, temperature, true).await
    }

    /// [`LocalEngine::generate`]; without `answer_allowed` the grammar admits only a call of
    /// one of `tools` (the request's `tool_choice: required`).
    pub async fn generate_with(
        &self,
        messages: Vec<Message>,
        tools: Vec<ToolSpec>,
        max_tokens: Option<u32>,
        temperature: Option<f32>,
        answer_allowed: bool,
    ) -> Result<Generation, ProviderError> {
        let grammar = if tools.is_empty() {
            None
        } else {
            let schema = crate::protocol::grammar_schema_for(&tools, answer_allowed);
            Some(
                llama_cpp_2::json_schema_to_grammar(&schema.to_string())
                    .map_err(|e| ProviderError::BadRequest(format!("tool schemas could not become a grammar: {e}")))?,
            )
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job = Job {
            messages,
            tools,
            grammar,
            max_new: max_tokens.unwrap_or(self.cfg.max_new_tokens),
            temperature: temperature.unwrap_or(self.cfg.temperature),
            cancel: cancel.clone(),
            reply: tx,
        };
        {
            let guard = self.jobs.lock().map_err(|_| ProviderError::Config("model thread poisoned".into()))?;
            let sender = guard.as_ref().ok_or_else(|| ProviderError::Config("the model is unloaded".into()))?;
            sender.send(job).map_err(|_| ProviderError::Config("the model thread has stopped".into()))?;
        }
        struct CancelOnDrop(Arc<AtomicBool>);
        impl Drop for CancelOnDrop {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let _guard = CancelOnDrop(cancel);
        let mut generation =
            rx.await.map_err(|_| ProviderError::Config("the model thread stopped mid-answer".into()))??;
        generation.call_number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(generation)
    }
}

impl Drop for LocalEngine {
    fn drop(&mut self) {
        if let Ok(mut j) = self.jobs.lock() {
            j.take();
        }
        if let Some(h) = self.worker.lock().ok().and_then(|mut w| w.take()) {
            let _ = h.join();
        }
    }
}

fn load_err(what: &str, e: impl std::fmt::Display) -> ProviderError {
    ProviderError::Config(format!("{what}: {e}"))
}

fn worker(
    cfg: EngineConfig,
    ready: mpsc::Sender<Result<(), ProviderError>>,
    jobs: mpsc::Receiver<Job>,
    stats: Arc<Mutex<EngineStats>>,
) {
    let started = Instant::now();
    let backend = match crate::backend::shared() {
        Ok(b) => b,
        Err(e) => {
            let _ = ready.send(Err(ProviderError::Config(e)));
            return;
        }
    };
    let model = match LlamaModel::load_from_file(backend, &cfg.model_path, &LlamaModelParams::default()) {
        Ok(m) => m,
        Err(e) => {
            let _ = ready.send(Err(load_err(&format!("could not load {}", cfg.model_path.display()), e)));
            return;
        }
    };
    let n_ctx = if cfg.n_ctx == 0 { model.n_ctx_train().clamp(512, 8192) } else { cfg.n_ctx };
    let threads = cfg.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get() as i32));
    let n_batch = 512u32.min(n_ctx);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(n_batch)
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    let mut ctx = match model.new_context(backend, params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(load_err("could not create the model context", e)));
            return;
        }
    };
    // The GGUF's own chat template; ChatML (what most small instruct models use) otherwise.
    let template = model.chat_template(None).ok().or_else(|| LlamaChatTemplate::new("chatml").ok());
    if let Ok(mut s) = stats.lock() {
        s.load = started.elapsed();
        s.n_ctx = n_ctx;
        s.model_name = model.meta_val_str("general.name").unwrap_or_else(|_| "local model".into());
    }
    tracing::info!(n_ctx, threads, load_ms = started.elapsed().as_millis() as u64, "local model loaded");
    if ready.send(Ok(())).is_err() {
        return;
    }
    let mut cached: Vec<LlamaToken> = Vec::new();
    let mut run = Runner {
        model: &model,
        ctx: &mut ctx,
        template: template.as_ref(),
        n_ctx,
        n_batch,
        seed: cfg.seed,
        stats: &stats,
    };
    while let Ok(job) = jobs.recv() {
        let result = run.generate(&job, &mut cached);
        if result.is_err() {
            // A failed decode leaves the cache in an unknown state: start clean next time.
            run.ctx.clear_kv_cache();
            cached.clear();
        }
        let _ = job.reply.send(result);
    }
}

struct Runner<'m, 'c> {
    model: &'m LlamaModel,
    ctx: &'c mut LlamaContext<'m>,
    template: Option<&'c LlamaChatTemplate>,
    n_ctx: u32,
    n_batch: u32,
    seed: u32,
    stats: &'c Mutex<EngineStats>,
}

impl Runner<'_, '_> {
    fn format(&self, chat: &[ChatTurn]) -> Result<String, ProviderError> {
        if let Some(t) = self.template {
            let msgs: Result<Vec<LlamaChatMessage>, _> =
                chat.iter().map(|m| LlamaChatMessage::new(m.role.to_string(), m.content.replace('\0', ""))).collect();
            let msgs =
                msgs.map_err(|e| ProviderError::BadRequest(format!("message cannot be sent to the model: {e}")))?;
            if let Ok(s) = self.model.apply_chat_template(t, &msgs, true) {
                return Ok(s);
            }
        }
        // ChatML by hand when the template cannot be applied.
        let mut s = String::new();
        for m in chat {
            s.push_str(&format!("<|im_start|>{}\n{}<|im_end|>\n", m.role, m.content));
        }
        s.push_str("<|im_start|>assistant\n");
        Ok(s)
    }

    /// Tokenize, shrinking the conversation until prompt plus answer fit the window, by the
    /// rules every provider shares (`wright_provider::compact`), one step at a time.
    fn fit(&self, messages: &[Message], tools: &[ToolSpec], max_new: u32) -> Result<Vec<LlamaToken>, ProviderError> {
        let mut current = messages.to_vec();
        let mut step = 0;
        loop {
            let text = self.format(&render(&current, tools))?;
            let tokens = self.model.vocab().tokenize(text.as_bytes(), true, true);
            if tokens.len() as u64 + u64::from(max_new) <= u64::from(self.n_ctx) {
                if step > 0 {
                    tracing::info!(step, tokens = tokens.len(), "conversation shortened to fit the context window");
                }
                return Ok(tokens);
            }
            // Last, the longest text left is clipped by about the excess (four characters a token).
            let excess = (tokens.len() + max_new as usize).saturating_sub(self.n_ctx as usize) * 4;
            let shrank = (step == 0 && shorten_old_tool_output(&mut current, KEEP_TAIL) > 0)
                || drop_oldest_exchange(&mut current, KEEP_TAIL)
                || clip_longest(&mut current, excess);
            if !shrank {
                return Err(ProviderError::ContextTooLong(format!(
                    "the request needs {} tokens plus {max_new} for the answer; the model's window is {}",
                    tokens.len(),
                    self.n_ctx
                )));
            }
            step += 1;
        }
    }

    fn generate(&mut self, job: &Job, cached: &mut Vec<LlamaToken>) -> Result<Generation, ProviderError> {
        let max_new = job.max_new.clamp(16, self.n_ctx / 2);
        let tokens = self.fit(&job.messages, &job.tools, max_new)?;
        if tokens.is_empty() {
            return Err(ProviderError::BadRequest("empty prompt".into()));
        }
        // Reuse the KV cache for the prefix shared with the previous request; at least the last
        // prompt token is evaluated again so there are logits to sample from.
        let mut common = cached.iter().zip(&tokens).take_while(|(a, b)| a == b).count().min(tokens.len() - 1);
        if !matches!(self.ctx.clear_kv_cache_seq(Some(0), Some(common as u32), None), Ok(true)) {
            self.ctx.clear_kv_cache();
            common = 0;
        }
        cached.truncate(common);
        let decode_err = |e: &dyn std::fmt::Display| ProviderError::Transient(format!("local model failed: {e}"));

        let prompt_started = Instant::now();
        let mut batch = LlamaBatch::new(self.n_batch as usize, 1);
        let last = tokens.len() - 1;
        for chunk_start in (common..tokens.len()).step_by(self.n_batch as usize) {
            if job.cancel.load(Ordering::SeqCst) {
                return Err(ProviderError::Cancelled);
            }
            batch.clear();
            let end = (chunk_start + self.n_batch as usize).min(tokens.len());
            for (i, tok) in tokens.iter().enumerate().take(end).skip(chunk_start) {
                batch.add(*tok, i as i32, &[0], i == last).map_err(|e| decode_err(&e))?;
            }
            self.ctx.decode(&mut batch).map_err(|e| decode_err(&e))?;
            cached.extend_from_slice(&tokens[chunk_start..end]);
        }
        let prompt_time = prompt_started.elapsed();

        let mut chain = Vec::new();
        if let Some(g) = &job.grammar {
            chain.push(
                LlamaSampler::grammar(self.model, g, "root")
                    .map_err(|e| ProviderError::BadRequest(format!("the tool grammar was rejected: {e}")))?,
            );
        }
        // Small models fall into loops (the same line again and again until the token limit).
        // A repetition penalty over a short window breaks them; the grammar still keeps the
        // output valid wherever structure forces a repeated token.
        chain.push(LlamaSampler::penalties(self.model.n_vocab(), 32, 1.06, 0.0, 0.0));
        if job.temperature <= 0.0 {
            chain.push(LlamaSampler::greedy());
        } else {
            chain.push(LlamaSampler::top_k(40));
            chain.push(LlamaSampler::top_p(0.95, 1));
            chain.push(LlamaSampler::temp(job.temperature));
            chain.push(LlamaSampler::dist(self.seed));
        }
        let mut sampler = LlamaSampler::chain_simple(chain);

        let gen_started = Instant::now();
        let mut out = Vec::new();
        let mut n_gen = 0u32;
        let mut truncated = false;
        let mut pos = tokens.len();
        loop {
            if job.cancel.load(Ordering::SeqCst) {
                return Err(ProviderError::Cancelled);
            }
            if n_gen >= max_new || pos as u32 >= self.n_ctx {
                truncated = true;
                break;
            }
            let tok = sampler.sample(self.ctx, -1);
            if self.model.vocab().is_eog(tok) {
                break;
            }
            out.extend(self.model.vocab().token_to_piece(tok, false, None));
            n_gen += 1;
            batch.clear();
            batch.add(tok, pos as i32, &[0], true).map_err(|e| decode_err(&e))?;
            self.ctx.decode(&mut batch).map_err(|e| decode_err(&e))?;
            cached.push(tok);
            pos += 1;
        }
        let gen_time = gen_started.elapsed();
        if let Ok(mut s) = self.stats.lock() {
            s.prompt_tokens += (tokens.len() - common) as u64;
            s.reused_tokens += common as u64;
            s.prompt_time += prompt_time;
            s.generated_tokens += u64::from(n_gen);
            s.generation_time += gen_time;
        }
        Ok(Generation {
            text: String::from_utf8_lossy(&out).into_owned(),
            prompt_tokens: tokens.len() as u64,
            reused_tokens: common as u64,
            completion_tokens: u64::from(n_gen),
            truncated,
            call_number: 0,
        })
    }
}
