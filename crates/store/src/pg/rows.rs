//! PostgreSQL rows into the store's records.
