//! Retrying model calls: one policy for every wire.

use crate::{ChatRequest, ChatResponse, Delta, Provider, ProviderError, ResponseAssembler};
use futures::StreamExt;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often and how patiently to retry a failed call.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first try (so `max_retries + 1` calls at most).
    pub max_retries: u32,
    /// First backoff; doubles on each retry before jitter.
    pub base_delay: Duration,
    /// Cap for computed backoff.
    pub max_delay: Duration,
    /// Cap for a server's `Retry-After`, so one odd header cannot park a build for hours.
    pub max_retry_after: Duration,
    /// Retries of rate-limited (429) calls. They do not use `max_retries`: a rate limit says
    /// "later", not "broken", so by default a build waits it out until its own timeout.
    pub max_rate_limited_retries: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(300),
            max_rate_limited_retries: u32::MAX,
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `attempt` (0-based) after `err`: the server's `Retry-After`
    /// when it gave one, else exponential backoff with "equal jitter" (half fixed, half random),
    /// which spreads a thundering herd without ever retrying instantly.
    pub fn delay_for(&self, attempt: u32, err: &ProviderError) -> Duration {
        if let ProviderError::RateLimited { retry_after: Some(after), .. } = err {
            return (*after).min(self.max_retry_after);
        }
        let exp = self.base_delay.saturating_mul(2u32.saturating_pow(attempt.min(16))).min(self.max_delay);
        let half = exp / 2;
        half + half.mul_f64(fastrand::f64())
    }
}

/// Run one call to completion, retrying retryable failures per `policy`.
///
/// `on_delta` sees every increment as it arrives (for live narration). A failure after partial
/// output is retried from scratch, since the wires have no resume. `on_retry` is told about each
/// retry before its wait so callers can narrate it.
pub async fn complete(
    provider: &dyn Provider,
    request: &ChatRequest,
    policy: &RetryPolicy,
    cancel: &CancellationToken,
    mut on_delta: impl FnMut(&Delta),
    mut on_retry: impl FnMut(&ProviderError, u32, Duration),
) -> Result<ChatResponse, ProviderError> {
    let mut attempt = 0u32;
    let mut rate_limited = 0u32;
    loop {
        let result = tokio::select! {
            _ = cancel.cancelled() => return Err(ProviderError::Cancelled),
            r = run_once(provider, request.clone(), &mut on_delta) => r,
        };
        match result {
            Ok(resp) => return Ok(resp),
            Err(err @ ProviderError::RateLimited { .. }) if rate_limited < policy.max_rate_limited_retries => {
                let wait = policy.delay_for(rate_limited.min(8), &err);
                tracing::warn!(provider = provider.name(), error = %err, rate_limited, ?wait, "rate limited; waiting");
                on_retry(&err, rate_limited + 1, wait);
                tokio::select! {
                    _ = cancel.cancelled() => return Err(ProviderError::Cancelled),
                    _ = tokio::time::sleep(wait) => {}
                }
                rate_limited += 1;
            }
            Err(err) if err.is_retryable() && attempt < policy.max_retries => {
                let wait = policy.delay_for(attempt, &err);
                tracing::warn!(provider = provider.name(), error = %err, attempt, ?wait, "retrying model call");
                on_retry(&err, attempt + 1, wait);
                tokio::select! {
                    _ = cancel.cancelled() => return Err(ProviderError::Cancelled),
                    _ = tokio::time::sleep(wait) => {}
                }
                attempt += 1;
            }
            // Retries spent on one provider of a chain: the next one gets the call, with a
            // budget of its own.
            Err(err) if err.is_retryable() && provider.fail_over() => {
                tracing::warn!(provider = provider.name(), error = %err, "retries spent; the next provider takes the call");
                on_retry(&err, attempt + 1, Duration::ZERO);
                attempt = 0;
            }
            Err(err) => return Err(err),
        }
    }
}

async fn run_once(
    provider: &dyn Provider,
    request: ChatRequest,
    on_delta: &mut impl FnMut(&Delta),
) -> Result<ChatResponse, ProviderError> {
    let mut stream = provider.stream(request);
    let mut asm = ResponseAssembler::new();
    while let Some(item) = stream.next().await {
        let delta = item?;
        on_delta(&delta);
        asm.push(delta);
    }
    Ok(asm.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripted::{ScriptStep, ScriptedProvider};
    use crate::{ChatResponse, Message};

    fn req() -> ChatRequest {
        ChatRequest {
            model: "m".into(),
            messages: vec![Message::user("hi")],
            tools: vec![],
            temperature: None,
            max_tokens: None,
            tool_choice: Default::default(),
        }
    }

    fn fast() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(4),
            max_retry_after: Duration::from_millis(20),
            max_rate_limited_retries: u32::MAX,
        }
    }

    #[tokio::test]
    async fn retries_transient_then_succeeds() {
        let p = ScriptedProvider::new(vec![
            ScriptStep::Fail(ProviderError::Transient("502".into())),
            ScriptStep::Fail(ProviderError::RateLimited {
                retry_after: Some(Duration::from_secs(9)),
                message: "slow down".into(),
            }),
            ScriptStep::Reply(ChatResponse { content: "ok".into(), ..Default::default() }),
        ]);
        let mut retries = vec![];
        let r =
            complete(&p, &req(), &fast(), &CancellationToken::new(), |_| {}, |e, n, w| retries.push((e.class(), n, w)))
                .await
                .unwrap();
        assert_eq!(r.content, "ok");
        assert_eq!(retries.len(), 2);
        // Retry-After is honoured but capped by the policy.
        assert_eq!(retries[1], ("rate_limited", 1, Duration::from_millis(20)));
        assert_eq!(p.requests().len(), 3);
    }

    #[tokio::test]
    async fn does_not_retry_auth_or_bad_request() {
        for err in [ProviderError::Auth("401".into()), ProviderError::BadRequest("400".into())] {
            let p =
                ScriptedProvider::new(vec![ScriptStep::Fail(err.clone()), ScriptStep::Reply(ChatResponse::default())]);
            let r = complete(&p, &req(), &fast(), &CancellationToken::new(), |_| {}, |_, _, _| {}).await;
            assert_eq!(r.unwrap_err(), err);
            assert_eq!(p.requests().len(), 1);
        }
    }

    #[tokio::test]
    async fn gives_up_after_budget() {
        let p = ScriptedProvider::new(
            (0..10).map(|_| ScriptStep::Fail(ProviderError::Unreachable("refused".into()))).collect(),
        );
        let r = complete(&p, &req(), &fast(), &CancellationToken::new(), |_| {}, |_, _, _| {}).await;
        assert!(matches!(r, Err(ProviderError::Unreachable(_))));
        assert_eq!(p.requests().len(), 4);
    }

    #[tokio::test]
    async fn a_rate_limit_storm_delays_but_does_not_fail() {
        let mut steps: Vec<ScriptStep> = (0..25)
            .map(|_| {
                ScriptStep::Fail(ProviderError::RateLimited {
                    retry_after: Some(Duration::from_millis(1)),
                    message: "429".into(),
                })
            })
            .collect();
        steps.push(ScriptStep::Reply(ChatResponse { content: "finally".into(), ..Default::default() }));
        let p = ScriptedProvider::new(steps);
        let r = complete(&p, &req(), &fast(), &CancellationToken::new(), |_| {}, |_, _, _| {}).await.unwrap();
        assert_eq!(r.content, "finally");
        assert_eq!(p.requests().len(), 26);
        // …but the build's cancel (its timeout) still ends the wait.
        let p = ScriptedProvider::new(vec![]).with_fallback(ScriptStep::Fail(ProviderError::RateLimited {
            retry_after: Some(Duration::from_millis(5)),
            message: "429".into(),
        }));
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            c2.cancel();
        });
        let r = complete(&p, &req(), &fast(), &cancel, |_| {}, |_, _, _| {}).await;
        assert_eq!(r.unwrap_err(), ProviderError::Cancelled);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy {
            max_retries: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
            ..RetryPolicy::default()
        };
        let e = ProviderError::Transient("x".into());
        for attempt in 0..10 {
            let d = p.delay_for(attempt, &e);
            let exp = Duration::from_millis(100).saturating_mul(1 << attempt).min(Duration::from_secs(2));
            assert!(d >= exp / 2 && d <= exp, "attempt {attempt}: {d:?} vs {exp:?}");
        }
    }
}
