//! [`ClassStore`](crate::classes::ClassStore) on PostgreSQL: the statements of
//! [`impl_class_store!`](crate::classes::impl_class_store) as they are written.

use super::PgStore;

fn sql(statement: &str) -> String {
    statement.to_string()
}

crate::classes::impl_class_store!(PgStore, sql);
