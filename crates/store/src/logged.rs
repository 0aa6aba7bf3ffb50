//! A stored event as followers are sent it.

use std::sync::OnceLock;
use wright_events::{Event, EventKind};

/// A stored event, serialised at most once however many followers send it.
#[derive(Debug)]
pub struct Logged {
    pub event: Event,
    json: OnceLock<String>,
}

impl Logged {
    pub fn new(event: Event) -> Self {
        Self { event, json: OnceLock::new() }
    }

    /// The event as one line of JSON (`--events jsonl`, SSE `data:`).
    pub fn json(&self) -> &str {
        self.json.get_or_init(|| self.event.to_json_line())
    }

    pub fn is_complete(&self) -> bool {
        matches!(self.event.kind, EventKind::Complete { .. })
    }
}
