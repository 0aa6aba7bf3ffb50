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
