//! wright's memory of what happened: builds, their events and conversations, generation
//! attempts, learning notes and model usage.
//!
//! Callers talk to the [`Store`] trait; [`SqliteStore`] is the embedded default (one file,
//! WAL, migrations applied on open). The trait speaks plain records ([`types`], [`note`]) so a
//! PostgreSQL store can follow without changing a caller.
//!
//! A run's events live in its [`RunLog`]: the store numbers them, ends the run exactly once
//! (record and `complete` in one transaction) and tells followers through a [`Notifier`].
//! [`LogWriter`] stores a running run's events in small groups before anyone is shown them.
//!
//! The tutoring chat's conversations, messages, feedback and flashcards go through the
//! [`ChatStore`] every store also is; periodic jobs' leases, confidence recalculation, retention
//! and the worker registry through its [`Maintenance`]; published apps and their addresses
//! through its [`AppStore`]; a preview's outside requests through its [`PreviewLog`]; the limits
//! every server shares (messages an hour, one turn at a time) through its [`Limiter`]; each user's spend on
//! model calls and their monthly caps through its [`Spending`].

pub mod apps;
pub mod assistant;
pub mod chat;
mod chat_rows;
pub mod classes;
mod error;
pub mod experiments;
pub mod feedback;
mod ids;
pub mod limits;
mod logged;
pub mod maintenance;
pub mod note;
pub mod notify;
mod open;
mod pg;
pub mod preview;
mod rows;
pub mod runlog;
pub mod seeds;
pub mod spend;
mod sqlite;
mod sqlite_apps;
mod sqlite_assistant;
mod sqlite_chat;
mod sqlite_classes;
mod sqlite_dashboard;
mod sqlite_experiments;
mod sqlite_feedback;
mod sqlite_limits;
mod sqlite_maintenance;
mod sqlite_preview;
mod sqlite_restart;
mod sqlite_runlog;
mod sqlite_service;
mod sqlite_spend;
mod sqlite_tasks;
mod store;
pub mod types;
mod writer;

pub use apps::{App, AppChange, AppFilter, AppStore, NewApp, check_slug, slugify};
pub use assistant::{
    Answer, Answered, AssistantStore, AssistantTurn, CallRow, CallStatus, EmbedKey, Side, TurnState, new_call_id,
};
pub use chat::{ChatStore, Conversation, StoredCard};
pub use classes::{Class, ClassStore, MemberSpend, Part, Relation, Shared, SharedBuild};
pub use error::{Result, StoreError};
pub use experiments::{Experiment, ExperimentState, ExperimentStore, NewExperiment};
pub use feedback::{BuildFeedback, FeedbackStore, MovedNote, NamedTally, Rated, RatingSummary, Tally};
pub use ids::{new_id, now};
pub use limits::{Admit, Limiter, Quota, SlotAsk, Usage};
pub use logged::Logged;
pub use maintenance::{Decay, JobRun, Maintenance, Recalculated, WorkerBeat, WorkerRow};
pub use note::{Note, NoteStatus};
pub use notify::{LocalNotifier, Notifier, Signal};
pub use open::open;
pub use pg::{PgNotifier, PgStore, STATEMENT_TIMEOUT as PG_STATEMENT_TIMEOUT, redact as redact_url};
pub use preview::{PREVIEW_PAGE, PreviewLog};
pub use runlog::{Draft, Finished, RunEnd, RunLog, SAFETY_NET};
pub use seeds::{DayDuration, NoteEffectiveness, Percentiles, RunOutcome, SeedMetrics, seed_metrics};
pub use spend::{Caps, Day, DaySpend, Month, SpendReport, Spending, UserSpend};
pub use sqlite::SqliteStore;
pub use sqlite_service::new_user;
pub use store::{NoteFilter, NoteHit, Store};
pub use types::*;
pub use writer::{LogWriter, MAX_GROUP};
