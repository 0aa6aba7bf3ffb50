//! [`ClassStore`](crate::classes::ClassStore) on SQLite: the statements of
//! [`impl_class_store!`](crate::classes::impl_class_store), their `$N` parameters read as `?N`.

use crate::sqlite::SqliteStore;

/// A statement's `$N` parameters as SQLite's numbered `?N`.
fn sql(statement: &str) -> String {
    statement.replace('$', "?")
}

crate::classes::impl_class_store!(SqliteStore, sql);
