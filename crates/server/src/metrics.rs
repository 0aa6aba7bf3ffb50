//! Prometheus metrics in a registry the server owns (no global state): builds by outcome and
//! template, queue depth, running builds, model tokens and cost, HTTP requests by route and
//! status with latency, SSE followers, refusals by limit; and, read from the store when scraped,
//! the periodic jobs' last runs and the servers alive.

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Instant;
use wright_events::{EndReason, Event, EventKind, EventSink, RestartReason, Template};
use wright_store::{JobRun, WorkerRow};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BuildLabels {
    /// `published`, or the failed build's end reason.
    pub outcome: &'static str,
    /// The build's template; `unknown` when it ended before one was known (cancelled while
    /// queued, or ended by the server).
    pub template: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HttpLabels {
    pub route: String,
    pub method: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ToolLabels {
    pub tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FeedbackLabels {
    pub tool: String,
    pub value: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    pub kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobLabels {
    pub job: String,
}

/// A server's labels: `worker` (and `host`) as pairs, since `host` is there only when
/// `[metrics] host_labels` asks for it.
type WorkerLabels = Vec<(&'static str, String)>;

/// The labels of server `w`: by default an opaque id (a hash of its name, which holds its host
/// and a random part), so a scrape says nothing about the machines behind the service; with
/// `host_labels`, its name and host.
fn worker_labels(w: &WorkerRow, host_labels: bool) -> WorkerLabels {
    if host_labels {
        return vec![("worker", w.name.clone()), ("host", w.host.clone())];
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(w.name.as_bytes());
    vec![("worker", format!("w-{}", digest.iter().take(6).map(|b| format!("{b:02x}")).collect::<String>()))]
}

/// The server's metrics. Cheap to clone (every part is shared).
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    builds: Family<BuildLabels, Counter>,
    pub running: Gauge,
    pub queue_depth: Gauge,
    tokens: Family<KindLabels, Counter>,
    cost: Counter<f64, AtomicU64>,
    http: Family<HttpLabels, Counter>,
    latency: Family<RouteLabels, Histogram>,
    pub followers: Gauge,
    refused: Family<KindLabels, Counter>,
    restarted: Family<KindLabels, Counter>,
    chat_selected: Family<ToolLabels, Counter>,
    chat_errors: Family<ToolLabels, Counter>,
    chat_latency: Family<ToolLabels, Histogram>,
    /// Replies a tool took part in, by the user's 👍/👎 (set from the store when scraped).
    pub chat_feedback: Family<FeedbackLabels, Gauge>,
    /// When each periodic job last finished, and whether that run went well (from the store).
    job_finished: Family<JobLabels, Gauge<f64, AtomicU64>>,
    job_ok: Family<JobLabels, Gauge>,
    /// Servers sharing the store that were seen lately, and their build slots (from the store).
    workers_alive: Gauge,
    worker_slots: Family<WorkerLabels, Gauge>,
    worker_busy: Family<WorkerLabels, Gauge>,
    /// The seeds' metrics of the last days' builds (from the store).
    pub seeds: crate::seed_metrics::SeedGauges,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut r = Registry::default();
        let builds = Family::<BuildLabels, Counter>::default();
        r.register("wright_builds", "Builds ended, by outcome and template", builds.clone());
        let running = Gauge::default();
        r.register("wright_builds_running", "Builds running in this process", running.clone());
        let queue_depth = Gauge::default();
        r.register("wright_queue_depth", "Builds waiting for a worker", queue_depth.clone());
        let tokens = Family::<KindLabels, Counter>::default();
        r.register("wright_model_tokens", "Model tokens, by kind (input, output, cached)", tokens.clone());
        let cost = Counter::<f64, AtomicU64>::default();
        r.register("wright_model_cost_usd", "Model cost in US dollars", cost.clone());
        let http = Family::<HttpLabels, Counter>::default();
        r.register("wright_http_requests", "HTTP requests, by route, method and status", http.clone());
        let latency = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
            Histogram::new([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0])
        });
        r.register("wright_http_request_duration_seconds", "Time to the response head, by route", latency.clone());
        let followers = Gauge::default();
        r.register("wright_sse_subscribers", "Open event streams", followers.clone());
        let refused = Family::<KindLabels, Counter>::default();
        r.register("wright_refused_requests", "Build requests refused, by reason", refused.clone());
        let restarted = Family::<KindLabels, Counter>::default();
        r.register("wright_builds_restarted", "Interrupted builds put back in the queue, by reason", restarted.clone());
        let chat_selected = Family::<ToolLabels, Counter>::default();
        r.register("wright_chat_tool_selected", "Chat tools chosen to run, by tool", chat_selected.clone());
        let chat_errors = Family::<ToolLabels, Counter>::default();
        r.register("wright_chat_tool_errors", "Chat tool runs that failed, by tool", chat_errors.clone());
        let chat_latency = Family::<ToolLabels, Histogram>::new_with_constructor(|| {
            Histogram::new([0.01, 0.05, 0.1, 0.5, 1.0, 2.5, 5.0, 15.0, 30.0])
        });
        r.register("wright_chat_tool_duration_seconds", "Chat tool run time, by tool", chat_latency.clone());
        let chat_feedback = Family::<FeedbackLabels, Gauge>::default();
        r.register(
            "wright_chat_tool_feedback",
            "Replies a chat tool took part in, by the user's rating (up or down)",
            chat_feedback.clone(),
        );
        let job_finished = Family::<JobLabels, Gauge<f64, AtomicU64>>::default();
        r.register(
            "wright_job_last_finished_timestamp_seconds",
            "When a periodic job last finished (Unix time), by job",
            job_finished.clone(),
        );
        let job_ok = Family::<JobLabels, Gauge>::default();
        r.register(
            "wright_job_last_ok",
            "Whether a periodic job's last run went well (1) or failed (0)",
            job_ok.clone(),
        );
        let workers_alive = Gauge::default();
        r.register(
            "wright_workers_alive",
            "Servers sharing the store that sent a heartbeat lately",
            workers_alive.clone(),
        );
        let worker_slots = Family::<WorkerLabels, Gauge>::default();
        r.register("wright_worker_slots", "Builds a live server may run at once, by server", worker_slots.clone());
        let worker_busy = Family::<WorkerLabels, Gauge>::default();
        r.register("wright_worker_busy", "Builds a live server runs now, by server", worker_busy.clone());
        let seeds = crate::seed_metrics::SeedGauges::register(&mut r);
        Self {
            seeds,
            registry: Arc::new(r),
            job_finished,
            job_ok,
            workers_alive,
            worker_slots,
            worker_busy,
            chat_selected,
            chat_errors,
            chat_latency,
            chat_feedback,
            builds,
            running,
            queue_depth,
            tokens,
            cost,
            http,
            latency,
            followers,
            refused,
            restarted,
        }
    }

    /// A build ended: published when `reason` is `None`.
    pub fn build_ended(&self, reason: Option<EndReason>, template: Option<Template>) {
        self.build_ended_as(reason, template.map_or("unknown", Template::as_str));
    }

    /// A run ended, under `label`: a build's template, or `task` for a task run.
    pub fn build_ended_as(&self, reason: Option<EndReason>, label: &'static str) {
        let labels = BuildLabels { outcome: reason.map_or("published", EndReason::as_str), template: label };
        self.builds.get_or_create(&labels).inc();
    }

    pub fn build_restarted(&self, reason: RestartReason) {
        self.restarted.get_or_create(&KindLabels { kind: reason.as_str().into() }).inc();
    }

    pub fn refused(&self, reason: &str) {
        self.refused.get_or_create(&KindLabels { kind: reason.into() }).inc();
    }

    /// The 👍/👎 counts of replies each chat tool took part in, as the store has them.
    pub fn set_chat_feedback(&self, by_tool: &[(String, u64, u64)]) {
        for (tool, up, down) in by_tool {
            for (value, n) in [("up", up), ("down", down)] {
                let labels = FeedbackLabels { tool: tool.clone(), value: value.into() };
                self.chat_feedback.get_or_create(&labels).set(i64::try_from(*n).unwrap_or(i64::MAX));
            }
        }
    }

    /// The periodic jobs and the servers alive, as the store has them now (servers gone and
    /// jobs never finished are left out); servers named only with `host_labels`.
    pub fn set_maintenance(&self, jobs: &[JobRun], workers: &[WorkerRow], host_labels: bool) {
        self.job_finished.clear();
        self.job_ok.clear();
        for j in jobs {
            let labels = JobLabels { job: j.name.clone() };
            if let Some(t) = j.last_finished.as_deref().and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok()) {
                self.job_finished.get_or_create(&labels).set(t.timestamp_millis() as f64 / 1000.0);
            }
            if let Some(ok) = j.last_ok {
                self.job_ok.get_or_create(&labels).set(i64::from(ok));
            }
        }
        self.worker_slots.clear();
        self.worker_busy.clear();
        let alive: Vec<&WorkerRow> = workers.iter().filter(|w| w.alive).collect();
        self.workers_alive.set(alive.len() as i64);
        for w in alive {
            let labels = worker_labels(w, host_labels);
            self.worker_slots.get_or_create(&labels).set(i64::from(w.slots));
            self.worker_busy.get_or_create(&labels).set(i64::from(w.busy));
        }
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!("encoding metrics: {e}");
        }
        out
    }
}

/// Counts what chat turns report: tools chosen, their run time and failures.
pub struct ChatSink(pub Metrics);

impl EventSink for ChatSink {
    fn accept(&self, event: &Event) {
        match &event.kind {
            EventKind::ToolSelected { tool, .. } => {
                self.0.chat_selected.get_or_create(&ToolLabels { tool: tool.clone() }).inc();
            }
            EventKind::ChatToolResult { tool, success, metadata, .. } => {
                let labels = ToolLabels { tool: tool.clone() };
                if !success {
                    self.0.chat_errors.get_or_create(&labels).inc();
                }
                let ms = |k: &str| metadata.get(k).and_then(serde_json::Value::as_f64);
                if let (Some(a), Some(b)) = (ms("started_ms"), ms("ended_ms")) {
                    self.0.chat_latency.get_or_create(&labels).observe(((b - a) / 1000.0).max(0.0));
                }
            }
            _ => {}
        }
    }
}

/// Counts the model usage a build reports.
pub struct UsageSink(Metrics);

impl UsageSink {
    pub fn new(m: Metrics) -> Self {
        Self(m)
    }
}

impl EventSink for UsageSink {
    fn accept(&self, event: &Event) {
        if let EventKind::Usage { input_tokens, output_tokens, cached_tokens, cost_usd, .. } = &event.kind {
            for (kind, n) in [("input", input_tokens), ("output", output_tokens), ("cached", cached_tokens)] {
                self.0.tokens.get_or_create(&KindLabels { kind: kind.into() }).inc_by(*n);
            }
            self.0.cost.inc_by(*cost_usd);
        }
    }
}

/// A follower counted while it lives.
pub struct Following(Gauge);

impl Following {
    pub fn new(m: &Metrics) -> Self {
        m.followers.inc();
        Self(m.followers.clone())
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// Middleware: count every request by its route pattern (never its concrete path, which
/// would hold ids and tokens) and time it to the response head.
pub async fn track(State(metrics): State<Metrics>, req: Request, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_string();
    let method = req.method().to_string();
    let started = Instant::now();
    let res = next.run(req).await;
    let m = &metrics;
    m.latency.get_or_create(&RouteLabels { route: route.clone() }).observe(started.elapsed().as_secs_f64());
    m.http.get_or_create(&HttpLabels { route, method, status: res.status().as_u16() }).inc();
    res
}
