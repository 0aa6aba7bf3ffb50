//! [`FeedbackStore`](crate::feedback::FeedbackStore) on SQLite: the statements of
//! [`impl_feedback_store!`](crate::feedback::impl_feedback_store), their `$N` parameters read as `?N`.

use crate::sqlite::SqliteStore;

/// A statement's `$N` parameters as SQLite's numbered `?N`.
fn sql(statement: &str) -> String {
    statement.replace('$', "?")
}

crate::feedback::impl_feedback_store!(SqliteStore, sql);
