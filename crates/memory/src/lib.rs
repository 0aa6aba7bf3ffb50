//! Learning notes, the part of wright that gets better with use.
//!
//! Before a build, [`retrieve`] picks the notes whose libraries, tags or error patterns fit the
//! request (plus universal ones), best first, within a token budget. After a fix turned a build
//! green, [`extraction_messages`] asks a (cheap) model for the lesson, [`parse_lesson`] checks
//! what came back, and [`remember`] either reinforces a similar note or stores a new candidate.
//! Scoring and the lifecycle live with the record in [`wright_store::note`].

mod learn;
mod retrieve;

pub use learn::{Learned, LessonDraft, LessonError, LessonInput, extraction_messages, parse_lesson, remember};
pub use retrieve::{DEFAULT_NOTE_BUDGET, Query, approx_tokens, lesson_line, query_keys, retrieve};
