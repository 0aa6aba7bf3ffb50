//! [`ExperimentStore`](crate::experiments::ExperimentStore) on SQLite: the statements of
//! [`impl_experiment_store!`](crate::experiments::impl_experiment_store), `$N` read as `?N`.

use crate::sqlite::SqliteStore;

fn sql(statement: &str) -> String {
    statement.replace('$', "?")
}

crate::experiments::impl_experiment_store!(SqliteStore, sql);
