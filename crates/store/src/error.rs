//! Why a store operation failed.

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("database migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    #[error("stored data is damaged: {0}")]
    Corrupt(String),
    #[error("{0}")]
    Unsupported(String),
    /// The writer's lease on the run is gone: another worker (or nobody) holds it now.
    #[error("run {0} is held by another worker now; this writer's events are refused")]
    NotHolder(String),
    #[error("run {0} has ended; nothing more can be added to it")]
    Ended(String),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
