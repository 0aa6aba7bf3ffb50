//! What kind of run a stream belongs to. Builds, task runs and (next) chat turns are kinds of
//! one run: the same store rows, stream, cancel and limits; the kind says which engine drives
//! it and how a list shows it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    /// PLANNING → … → PUBLISHED | FAILED from a prompt (`wright run`, `POST /api/builds`).
    #[default]
    Build,
    /// The tasks of a task file on an existing project (`wright task run`).
    Task,
    /// One turn of a chat.
    Chat,
}

impl RunKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Build => "build",
            RunKind::Task => "task",
            RunKind::Chat => "chat",
        }
    }

    /// Parsed once, where it comes in (a stored row, a request).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "build" => Some(RunKind::Build),
            "task" => Some(RunKind::Task),
            "chat" => Some(RunKind::Chat),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in [RunKind::Build, RunKind::Task, RunKind::Chat] {
            assert_eq!(RunKind::parse(k.as_str()), Some(k));
            assert_eq!(serde_json::to_value(k).unwrap(), serde_json::Value::String(k.as_str().into()));
        }
        assert_eq!(RunKind::parse("Build"), None);
    }
}
