//! Circuit breakers and a fallback chain of providers.
//!
//! Each provider in the chain has a breaker: a few failures within a window open it, and calls
//! go to the next provider whose breaker is closed; after a cool-down one probe call is let
//! through (half-open) and its outcome closes or re-opens the breaker. The retry policy sits
//! above this, so a retry after the breaker opened lands on the fallback.

use crate::{ChatRequest, DeltaStream, Provider, ProviderError};
use futures::StreamExt;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When a breaker opens and for how long.
#[derive(Debug, Clone, Copy)]
pub struct BreakerConfig {
    /// Failures within `window` that open the breaker.
    pub failure_threshold: u32,
    pub window: Duration,
    /// How long an open breaker refuses calls before it lets one probe through.
    pub cooldown: Duration,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        Self { failure_threshold: 3, window: Duration::from_secs(300), cooldown: Duration::from_secs(60) }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    Closed { failures: VecDeque<Instant> },
    Open { until: Instant },
    HalfOpen { probing: bool },
}

/// One provider's breaker.
#[derive(Debug)]
pub struct CircuitBreaker {
    cfg: BreakerConfig,
    state: Mutex<State>,
}

/// A breaker's state, for diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    Closed,
    Open,
    HalfOpen,
}

impl CircuitBreaker {
    pub fn new(cfg: BreakerConfig) -> Self {
        Self { cfg, state: Mutex::new(State::Closed { failures: VecDeque::new() }) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    pub fn state(&self) -> BreakerState {
        match &*self.lock() {
            State::Closed { .. } => BreakerState::Closed,
            State::Open { .. } => BreakerState::Open,
            State::HalfOpen { .. } => BreakerState::HalfOpen,
        }
    }

    /// May a call go through now? An open breaker past its cool-down admits one probe.
    pub fn allow(&self, now: Instant) -> bool {
        let mut s = self.lock();
        match &mut *s {
            State::Closed { .. } => true,
            State::Open { until } if now >= *until => {
                *s = State::HalfOpen { probing: true };
                true
            }
            State::Open { .. } => false,
            State::HalfOpen { probing } if !*probing => {
                *probing = true;
                true
            }
            State::HalfOpen { .. } => false,
        }
    }

    /// When an open breaker will admit a probe (`None` unless open).
    pub fn reopens_at(&self) -> Option<Instant> {
        match &*self.lock() {
            State::Open { until } => Some(*until),
            _ => None,
        }
    }

    pub fn record_success(&self) {
        *self.lock() = State::Closed { failures: VecDeque::new() };
    }

    /// Open the breaker now, whatever its count: the caller gave up on this provider.
    pub fn trip(&self, now: Instant) {
        *self.lock() = State::Open { until: now + self.cfg.cooldown };
    }

    pub fn record_failure(&self, now: Instant) {
        let mut s = self.lock();
        let open = State::Open { until: now + self.cfg.cooldown };
        match &mut *s {
            State::Closed { failures } => {
                failures.push_back(now);
                while failures.front().is_some_and(|t| now.duration_since(*t) > self.cfg.window) {
                    failures.pop_front();
                }
                if failures.len() as u32 >= self.cfg.failure_threshold {
                    *s = open;
                }
            }
            State::HalfOpen { .. } | State::Open { .. } => *s = open,
        }
    }
}

/// Errors that say "this provider is not working", as opposed to "this request is wrong".
fn counts_against_provider(e: &ProviderError) -> bool {
    matches!(
        e,
        ProviderError::Unreachable(_)
            | ProviderError::Transient(_)
            | ProviderError::Timeout(_)
            | ProviderError::Protocol(_)
            | ProviderError::RateLimited { .. }
            | ProviderError::Auth(_)
    )
}

/// One link of the chain.
pub struct Link {
    /// For logs: `openai:gpt-4o-mini`, `local`.
    pub label: String,
    pub provider: Arc<dyn Provider>,
    /// The model id to use with this provider (the request's own model is for the first link).
    pub model: Option<String>,
    pub breaker: Arc<CircuitBreaker>,
}

/// Providers tried in order, each behind its breaker.
pub struct FallbackProvider {
    links: Vec<Link>,
    /// The link the latest call went to, which [`Provider::fail_over`] gives up on.
    last: AtomicUsize,
    /// The link whose taking over was last announced (so it is said once per switch).
    announced: AtomicUsize,
}

impl FallbackProvider {
    pub fn new(links: Vec<Link>) -> Self {
        Self { links, last: AtomicUsize::new(0), announced: AtomicUsize::new(0) }
    }

    pub fn links(&self) -> &[Link] {
        &self.links
    }
}

impl Provider for FallbackProvider {
    fn name(&self) -> &str {
        self.links.first().map_or("fallback", |l| l.provider.name())
    }

    fn stream(&self, request: ChatRequest) -> DeltaStream {
        let now = Instant::now();
        let chosen = self.links.iter().position(|l| l.breaker.allow(now));
        let Some(index) = chosen else {
            // Every breaker is open: wait for the first one to admit a probe rather than fail;
            // the caller's cancel (the build's timeout) bounds the wait.
            let wake = self.links.iter().filter_map(|l| l.breaker.reopens_at()).min().unwrap_or(now);
            let retry_after = wake.saturating_duration_since(now);
            return Box::pin(futures::stream::iter(vec![Err(ProviderError::RateLimited {
                retry_after: Some(retry_after),
                message: "every provider in the fallback chain is cooling down after failures".into(),
            })]));
        };
        let link = &self.links[index];
        self.last.store(index, Ordering::Relaxed);
        let switched = self.announced.swap(index, Ordering::Relaxed) != index;
        if index > 0 {
            tracing::warn!(to = %link.label, "falling back to another provider");
        }
        let notice = switched.then(|| {
            crate::Delta::Notice(if index == 0 {
                format!("Calls go to {} again.", link.label)
            } else {
                format!("{} keeps failing; calls go to the fallback {} for now.", self.links[0].label, link.label)
            })
        });
        let mut request = request;
        let mut answered_by = None;
        if let Some(m) = &link.model {
            if *m != request.model {
                answered_by = Some(m.clone());
            }
            request.model = m.clone();
        }
        let breaker = link.breaker.clone();
        let mut first = true;
        let inner = StreamExt::chain(futures::stream::iter(notice.map(Ok)), link.provider.stream(request));
        // Say which model answered so its own price is used; only once the link has answered.
        let tail = futures::stream::iter(answered_by.map(|m| Ok(crate::Delta::Model(m))));
        Box::pin(StreamExt::chain(inner, tail).map(move |item| {
            if first && !matches!(item, Ok(crate::Delta::Notice(_))) {
                first = false;
                match &item {
                    Ok(_) => breaker.record_success(),
                    Err(e) if counts_against_provider(e) => breaker.record_failure(Instant::now()),
                    Err(_) => {}
                }
            }
            item
        }))
    }

    /// The caller spent its retries on the link that answers now: open its breaker so the
    /// next call goes down the chain, whatever the retry budget was. `false` when no other
    /// link is left to take it.
    fn fail_over(&self) -> bool {
        let now = Instant::now();
        let last = self.last.load(Ordering::Relaxed);
        if let Some(link) = self.links.get(last) {
            link.breaker.trip(now);
        }
        self.links.iter().enumerate().any(|(i, l)| i != last && l.breaker.reopens_at().is_none_or(|at| at <= now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripted::{ScriptStep, ScriptedProvider};
    use crate::{Message, RetryPolicy, complete};
    use tokio_util::sync::CancellationToken;

    #[test]
    fn breaker_opens_after_threshold_within_window_and_probes_after_cooldown() {
        let cfg =
            BreakerConfig { failure_threshold: 3, window: Duration::from_secs(10), cooldown: Duration::from_secs(5) };
        let b = CircuitBreaker::new(cfg);
        let t0 = Instant::now();
        b.record_failure(t0);
        b.record_failure(t0 + Duration::from_secs(11)); // the first fell out of the window
        assert_eq!(b.state(), BreakerState::Closed);
        b.record_failure(t0 + Duration::from_secs(12));
        b.record_failure(t0 + Duration::from_secs(13));
        assert_eq!(b.state(), BreakerState::Open);
        assert!(!b.allow(t0 + Duration::from_secs(14)));
        assert!(b.allow(t0 + Duration::from_secs(19)), "one probe after the cool-down");
        assert_eq!(b.state(), BreakerState::HalfOpen);
        assert!(!b.allow(t0 + Duration::from_secs(19)), "only one probe at a time");
        b.record_failure(t0 + Duration::from_secs(20));
        assert_eq!(b.state(), BreakerState::Open);
        assert!(b.allow(t0 + Duration::from_secs(26)));
        b.record_success();
        assert_eq!(b.state(), BreakerState::Closed);
    }

    /// `policy` with millisecond back-off, so tests do not wait.
    fn fast(policy: RetryPolicy) -> RetryPolicy {
        RetryPolicy { base_delay: Duration::from_millis(1), max_delay: Duration::from_millis(2), ..policy }
    }

    /// A one-message request to `model`.
    fn hi(model: &str) -> ChatRequest {
        ChatRequest {
            model: model.into(),
            messages: vec![Message::user("hi")],
            tools: vec![],
            temperature: None,
            max_tokens: None,
            tool_choice: Default::default(),
        }
    }

    fn link(label: &str, p: &ScriptedProvider, model: Option<&str>, cfg: BreakerConfig) -> Link {
        Link {
            label: label.into(),
            provider: Arc::new(p.clone()),
            model: model.map(str::to_string),
            breaker: Arc::new(CircuitBreaker::new(cfg)),
        }
    }

    #[tokio::test]
    async fn failures_open_the_breaker_and_calls_fall_back() {
        let primary =
            ScriptedProvider::new(vec![]).with_fallback(ScriptStep::Fail(ProviderError::Transient("HTTP 500".into())));
        let backup = ScriptedProvider::new(vec![]).with_fallback(ScriptStep::text("from backup"));
        let cfg = BreakerConfig {
            failure_threshold: 3,
            window: Duration::from_secs(300),
            cooldown: Duration::from_secs(300),
        };
        let chain = FallbackProvider::new(vec![
            link("primary", &primary, None, cfg),
            link("local", &backup, Some("small-model"), cfg),
        ]);
        let policy = fast(RetryPolicy { max_retries: 4, ..RetryPolicy::default() });
        let req = hi("big-model");
        let r = complete(&chain, &req, &policy, &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap();
        assert_eq!(r.content, "from backup");
        assert_eq!(primary.requests().len(), 3);
        assert_eq!(backup.requests()[0].model, "small-model");
        assert_eq!(r.model.as_deref(), Some("small-model"), "the answer says which model gave it");
        assert_eq!(chain.links()[0].breaker.state(), BreakerState::Open);
        // While open, the next call goes straight to the backup.
        complete(&chain, &req, &policy, &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap();
        assert_eq!(primary.requests().len(), 3);
        assert_eq!(backup.requests().len(), 2);
    }

    #[tokio::test]
    async fn the_fallback_gets_the_call_whatever_the_retry_budget() {
        let primary =
            ScriptedProvider::new(vec![]).with_fallback(ScriptStep::Fail(ProviderError::Transient("HTTP 500".into())));
        let backup = ScriptedProvider::new(vec![]).with_fallback(ScriptStep::text("from backup"));
        let chain = FallbackProvider::new(vec![
            link("primary", &primary, None, BreakerConfig::default()),
            link("backup", &backup, None, BreakerConfig::default()),
        ]);
        let policy = fast(RetryPolicy { max_retries: 1, ..RetryPolicy::default() });
        let req = hi("m");
        let r = complete(&chain, &req, &policy, &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap();
        assert_eq!(r.content, "from backup");
        assert_eq!(primary.requests().len(), 2, "the first try and one retry");
        assert_eq!(r.notices, vec!["primary keeps failing; calls go to the fallback backup for now.".to_string()]);
        // Said once: the next call goes to the backup without a word.
        let r = complete(&chain, &req, &policy, &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap();
        assert!(r.notices.is_empty());
        assert_eq!(primary.requests().len(), 2);

        // With every link failing, the call ends with the error once each has had its turn.
        let down = FallbackProvider::new(vec![
            link("a", &primary, None, BreakerConfig::default()),
            link("b", &primary, None, BreakerConfig::default()),
        ]);
        let e = complete(&down, &req, &policy, &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap_err();
        assert!(matches!(e, ProviderError::Transient(_)));
        assert_eq!(primary.requests().len(), 6);
    }

    #[tokio::test]
    async fn bad_requests_do_not_trip_the_breaker() {
        let primary =
            ScriptedProvider::new(vec![]).with_fallback(ScriptStep::Fail(ProviderError::BadRequest("no".into())));
        let chain = FallbackProvider::new(vec![link("p", &primary, None, BreakerConfig::default())]);
        let req = ChatRequest {
            model: "m".into(),
            messages: vec![],
            tools: vec![],
            temperature: None,
            max_tokens: None,
            tool_choice: Default::default(),
        };
        for _ in 0..5 {
            let _ =
                complete(&chain, &req, &RetryPolicy::default(), &CancellationToken::new(), |_| {}, |_, _, _| {}).await;
        }
        assert_eq!(chain.links()[0].breaker.state(), BreakerState::Closed);
    }

    #[tokio::test]
    async fn when_every_breaker_is_open_calls_wait_for_a_probe() {
        let flaky = ScriptedProvider::new(vec![
            ScriptStep::Fail(ProviderError::Unreachable("refused".into())),
            ScriptStep::text("back"),
        ]);
        let cfg = BreakerConfig {
            failure_threshold: 1,
            window: Duration::from_secs(60),
            cooldown: Duration::from_millis(50),
        };
        let chain = FallbackProvider::new(vec![link("only", &flaky, None, cfg)]);
        let policy = RetryPolicy {
            max_retries: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
            ..RetryPolicy::default()
        };
        let req = ChatRequest {
            model: "m".into(),
            messages: vec![],
            tools: vec![],
            temperature: None,
            max_tokens: None,
            tool_choice: Default::default(),
        };
        let r = complete(&chain, &req, &policy, &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap();
        assert_eq!(r.content, "back");
        assert_eq!(chain.links()[0].breaker.state(), BreakerState::Closed);
    }
}
