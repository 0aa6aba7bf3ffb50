//! [`FeedbackStore`](crate::feedback::FeedbackStore) on PostgreSQL: the statements of
//! [`impl_feedback_store!`](crate::feedback::impl_feedback_store) as they are written.

use super::PgStore;

fn sql(statement: &str) -> String {
    statement.to_string()
}

crate::feedback::impl_feedback_store!(PgStore, sql);
