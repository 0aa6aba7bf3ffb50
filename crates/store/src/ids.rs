//! The store's ids and timestamps.

/// Now, as stored: the events' timestamp form, so rows and events sort together as text.
pub use wright_events::now;

/// A short random id with a prefix (`n-3fa2c1d09e4b`); 48 random bits.
pub fn new_id(prefix: &str) -> String {
    let u = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}-{}", &u[..12])
}
