//! [`ChatAgent`]: scores every tool for a message, runs the relevant ones (at most
//! `max_tools_per_message`, best first) in parallel under a per-tool timeout, and turns every
//! failure, timeout and panic into a failed [`ToolResult`] so one tool never stops the others.

use crate::tool::{ChatContext, ChatTool, ToolResult};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use wright_events::chat::{Mode, Outcome, Part, ToolScore};

/// The agent's knobs (`[chat]` in `wright.toml`).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSettings {
    /// Tools scoring at or above this run (seed 001: 0.7).
    pub confidence_threshold: f32,
    /// At most this many tools run for one message (seed 001: 5).
    pub max_tools_per_message: usize,
    /// A tool still running after this is stopped and reported as failed.
    pub tool_timeout: Duration,
    /// How long a cacheable tool's result is reused for the same message and context.
    pub cache_ttl: Duration,
    pub cache_capacity: usize,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            confidence_threshold: 0.7,
            max_tools_per_message: 5,
            tool_timeout: Duration::from_secs(30),
            cache_ttl: Duration::from_secs(600),
            cache_capacity: 256,
        }
    }
}

/// A tool chosen for this message and where it comes in the order.
#[derive(Clone)]
pub struct Chosen {
    pub tool: Arc<dyn ChatTool>,
    pub confidence: f32,
    pub execution_order: u32,
}

/// Every tool's score and the tools that will run.
pub struct Selection {
    pub scores: Vec<ToolScore>,
    /// Foreground tools, best first.
    pub foreground: Vec<Chosen>,
    pub background: Vec<Chosen>,
    pub micros: u64,
}

struct Cached {
    at: Instant,
    result: ToolResult,
}

/// The chat agent.
pub struct ChatAgent {
    tools: Vec<Arc<dyn ChatTool>>,
    settings: AgentSettings,
    cache: Mutex<HashMap<(String, String), Cached>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ChatAgent {
    pub fn new(tools: Vec<Arc<dyn ChatTool>>, settings: AgentSettings) -> Self {
        Self { tools, settings, cache: Mutex::default() }
    }

    pub fn tools(&self) -> &[Arc<dyn ChatTool>] {
        &self.tools
    }

    pub fn settings(&self) -> &AgentSettings {
        &self.settings
    }

    /// Score every tool and choose: switched-on tools first, then the best at or above the
    /// threshold, up to the limit; switched-off tools never.
    pub fn select(&self, message: &str, ctx: &ChatContext, modes: &BTreeMap<String, Mode>) -> Selection {
        let t0 = Instant::now();
        let mut scored: Vec<(Arc<dyn ChatTool>, f32, &'static str)> = self
            .tools
            .iter()
            .map(|tool| {
                let mode = modes.get(tool.name()).copied();
                let unavailable = tool.unavailable().is_some();
                // A tool that panics while scoring scores 0: it never takes the turn down.
                let score = if unavailable {
                    0.0
                } else {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool.can_handle(message, ctx)))
                        .unwrap_or_else(|_| {
                            tracing::error!(tool = tool.name(), "chat tool panicked while scoring");
                            0.0
                        })
                        .clamp(0.0, 1.0)
                };
                let decision = match mode {
                    Some(Mode::Off) => "switched_off",
                    _ if unavailable => "unavailable",
                    Some(Mode::On) => "switched_on",
                    None if score >= self.settings.confidence_threshold => "selected",
                    None => "below_threshold",
                };
                (tool.clone(), score, decision)
            })
            .collect();
        let micros = t0.elapsed().as_micros() as u64;
        // Switched on first, then by score; ties keep registration order.
        scored.sort_by(|a, b| (b.2 == "switched_on").cmp(&(a.2 == "switched_on")).then(b.1.total_cmp(&a.1)));
        let mut chosen = 0usize;
        let mut scores = Vec::new();
        let (mut foreground, mut background) = (Vec::new(), Vec::new());
        for (tool, confidence, decision) in scored {
            let runs = matches!(decision, "selected" | "switched_on");
            let decision = if runs && chosen >= self.settings.max_tools_per_message { "over_limit" } else { decision };
            if runs && decision != "over_limit" {
                chosen += 1;
                let c = Chosen { tool: tool.clone(), confidence, execution_order: chosen as u32 };
                if tool.background() { background.push(c) } else { foreground.push(c) }
            }
            scores.push(ToolScore { tool: tool.name().to_string(), confidence, decision: decision.to_string() });
        }
        for s in &scores {
            tracing::info!(tool = %s.tool, confidence = s.confidence, decision = %s.decision, "chat tool score");
        }
        Selection { scores, foreground, background, micros }
    }

    /// Run `chosen` concurrently; results in `execution_order`. `t0` is when the turn began
    /// (each result's metadata records its start and end since then).
    pub async fn run(&self, chosen: &[Chosen], message: &str, ctx: &ChatContext, t0: Instant) -> Vec<ToolResult> {
        let mut handles = Vec::new();
        for c in chosen {
            let key = c.tool.cache_key(message, ctx).map(|k| (c.tool.name().to_string(), k));
            if let Some(hit) = key.as_ref().and_then(|k| self.cached(k)) {
                let mut r = hit;
                r.execution_order = c.execution_order;
                // Its run time was counted when it ran; a hit takes none.
                r.metadata = serde_json::json!({"cached": true, "confidence": c.confidence});
                handles.push((c.clone(), key, Err(r)));
                continue;
            }
            let (tool, msg, ctx) = (c.tool.clone(), message.to_string(), ctx.clone());
            let timeout = self.settings.tool_timeout;
            let handle = tokio::spawn(async move {
                let started = t0.elapsed();
                let out = tokio::time::timeout(timeout, tool.execute(&msg, &ctx)).await;
                (started, t0.elapsed(), out)
            });
            handles.push((c.clone(), key, Ok(AbortOnDrop(handle))));
        }
        let mut results = Vec::new();
        for (c, key, h) in handles {
            let name = c.tool.name().to_string();
            let r = match h {
                Err(cached) => cached,
                Ok(mut handle) => {
                    let r = match (&mut handle.0).await {
                        Ok((started, ended, out)) => {
                            let meta = serde_json::json!({
                                "started_ms": started.as_secs_f64() * 1000.0,
                                "ended_ms": ended.as_secs_f64() * 1000.0,
                                "confidence": c.confidence,
                                "background": c.tool.background(),
                            });
                            let out = out.map_err(|_| {
                                format!("{name} did not finish within {}s", self.settings.tool_timeout.as_secs())
                            });
                            match out {
                                Ok(Ok(o)) => ToolResult {
                                    tool: name.clone(),
                                    success: true,
                                    outcome: if o.warning.is_some() { Outcome::Warning } else { Outcome::Success },
                                    content: o.content,
                                    message_type: c.tool.message_type().to_string(),
                                    part: Some(o.part),
                                    metadata: with_warning(meta, o.warning),
                                    error: None,
                                    execution_order: c.execution_order,
                                },
                                Ok(Err(e)) => failed(&name, c.execution_order, e.to_string(), meta),
                                Err(e) => failed(&name, c.execution_order, e, meta),
                            }
                        }
                        Err(join) => {
                            let why = if join.is_panic() {
                                "stopped unexpectedly (a bug in the tool)"
                            } else {
                                "was cancelled"
                            };
                            failed(&name, c.execution_order, format!("{name} {why}"), serde_json::json!({}))
                        }
                    };
                    if let (Some(k), true) = (key, r.success) {
                        self.remember(k, &r);
                    }
                    r
                }
            };
            tracing::info!(tool = %r.tool, order = r.execution_order, outcome = ?r.outcome, error = ?r.error, "chat tool ran");
            results.push(r);
        }
        results.sort_by_key(|r| r.execution_order);
        results
    }

    fn cached(&self, key: &(String, String)) -> Option<ToolResult> {
        let cache = lock(&self.cache);
        cache.get(key).filter(|c| c.at.elapsed() < self.settings.cache_ttl).map(|c| c.result.clone())
    }

    fn remember(&self, key: (String, String), result: &ToolResult) {
        let mut cache = lock(&self.cache);
        let ttl = self.settings.cache_ttl;
        cache.retain(|_, c| c.at.elapsed() < ttl);
        if cache.len() >= self.settings.cache_capacity.max(1) {
            let oldest = cache.iter().min_by_key(|(_, c)| c.at).map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                cache.remove(&k);
            }
        }
        cache.insert(key, Cached { at: Instant::now(), result: result.clone() });
    }
}

/// A tool's task, stopped if the turn stops waiting for it (a cancelled turn leaves nothing
/// running behind it).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn with_warning(mut meta: serde_json::Value, warning: Option<String>) -> serde_json::Value {
    if let Some(w) = warning {
        meta["warning"] = serde_json::json!(w);
    }
    meta
}

fn failed(tool: &str, order: u32, error: String, metadata: serde_json::Value) -> ToolResult {
    ToolResult {
        tool: tool.to_string(),
        success: false,
        outcome: Outcome::Error,
        content: String::new(),
        message_type: "error".into(),
        part: Some(Part::Error { tool: tool.to_string(), message: error.clone() }),
        metadata,
        error: Some(error),
        execution_order: order,
    }
}
