//! [`ExperimentStore`](crate::experiments::ExperimentStore) on PostgreSQL: the statements of
//! [`impl_experiment_store!`](crate::experiments::impl_experiment_store) as they are written.

use super::PgStore;

fn sql(statement: &str) -> String {
    statement.to_string()
}

crate::experiments::impl_experiment_store!(PgStore, sql);
