//! A build's folder as requests read it: off the async workers, and never outside the folder.

use crate::error::{ApiError, ApiResult};
use axum::http::StatusCode;
use wright_sandbox::{PathError, Workspace};

/// Run file system work for a request on the blocking pool, so a slow disk never holds up the
/// async workers that serve everyone else.
pub async fn on_disk<T: Send + 'static>(work: impl FnOnce() -> ApiResult<T> + Send + 'static) -> ApiResult<T> {
    tokio::task::spawn_blocking(work).await.map_err(|e| ApiError::internal(e.to_string()))?
}

/// Read a file of a workspace, refusing any path that leaves it (`..`, absolute, links out).
pub fn read_file(ws: &Workspace, path: &str) -> ApiResult<Vec<u8>> {
    ws.read(path).map_err(|e| match e {
        PathError::NotFound(_) | PathError::IsDirectory(_) => ApiError::not_found(format!("file `{path}`")),
        other => ApiError::new(StatusCode::BAD_REQUEST, "bad_path", other.to_string()),
    })
}
