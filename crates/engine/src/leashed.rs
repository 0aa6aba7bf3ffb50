//! A provider held to a run's [`Leash`]: once the run's lease has passed by its worker's own
//! clock, no model call starts. A frozen worker that wakes past its lease may run any of its
//! tasks first (the command that was killed returns, the lease keeper's timer fires); whichever
//! it is, the next model call is refused, so a build already handed to another worker never
//! gets one more answer from this run.

use futures::StreamExt;
use std::sync::Arc;
use wright_provider::{ChatRequest, DeltaStream, Provider, ProviderError};
use wright_sandbox::Leash;

pub(crate) struct Leashed {
    inner: Arc<dyn Provider>,
    leash: Leash,
}

impl Leashed {
    pub(crate) fn new(inner: Arc<dyn Provider>, leash: Leash) -> Self {
        Self { inner, leash }
    }
}

impl Provider for Leashed {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn stream(&self, request: ChatRequest) -> DeltaStream {
        // Asked when the call is first polled, which is when it would go out.
        let inner = self.inner.clone();
        let leash = self.leash.clone();
        futures::stream::once(async move {
            if leash.expired() {
                futures::stream::once(async { Err(ProviderError::Cancelled) }).boxed()
            } else {
                inner.stream(request)
            }
        })
        .flatten()
        .boxed()
    }

    fn fail_over(&self) -> bool {
        self.inner.fail_over()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::Duration;
    use wright_provider::ToolChoice;
    use wright_provider::scripted::ScriptedProvider;

    /// No model call goes out past the lease, even one asked for before the deadline and first
    /// polled after it (a worker frozen in between).
    #[tokio::test]
    async fn no_model_call_goes_out_past_the_lease() {
        let scripted = ScriptedProvider::new(vec![]);
        let leash = Leash::new("/proc/self/exe".into(), Duration::from_millis(100)).unwrap();
        let provider = Leashed::new(Arc::new(scripted.clone()), leash);
        let request = ChatRequest {
            model: "m".into(),
            messages: vec![],
            tools: vec![],
            temperature: None,
            max_tokens: None,
            tool_choice: ToolChoice::Auto,
        };
        let answered: Vec<_> = provider.stream(request.clone()).collect().await;
        assert!(!answered.is_empty() && answered.iter().all(Result::is_ok));
        assert_eq!(scripted.requests().len(), 1);
        let late = provider.stream(request.clone());
        std::thread::sleep(Duration::from_millis(150));
        let refused: Vec<_> = late.collect().await;
        assert!(matches!(refused.as_slice(), [Err(ProviderError::Cancelled)]), "{refused:?}");
        let refused: Vec<_> = provider.stream(request).collect().await;
        assert!(matches!(refused.as_slice(), [Err(ProviderError::Cancelled)]), "{refused:?}");
        assert_eq!(scripted.requests().len(), 1, "the model was asked past the lease");
    }
}
