//! A build's folder as requests read it: off the async workers, and never outside the folder.
//! Files, archives and screenshots come through the shared [`Artifacts`](wright_engine::Artifacts)
//! (`Shared::artifacts`); this maps what they report to HTTP.

use crate::error::{ApiError, ApiResult};
use axum::http::StatusCode;
use wright_engine::ArtifactError;

/// Run file system work for a request on the blocking pool, so a slow disk never holds up the
/// async workers that serve everyone else.
pub async fn on_disk<T: Send + 'static>(work: impl FnOnce() -> ApiResult<T> + Send + 'static) -> ApiResult<T> {
    tokio::task::spawn_blocking(work).await.map_err(|e| ApiError::internal(e.to_string()))?
}

/// What reading one of build `id`'s files reported, as the API says it: a missing build folder,
/// file or a folder is 404, a refused path (`..`, absolute, links out) 400.
pub fn file_error(e: ArtifactError, id: &str) -> ApiError {
    match e {
        ArtifactError::NoFiles(_) => ApiError::not_found(format!("the files of build {id}")),
        ArtifactError::NotFound(path) | ArtifactError::IsDirectory(path) => {
            ApiError::not_found(format!("file `{path}`"))
        }
        ArtifactError::BadPath(why) | ArtifactError::Io(why) => ApiError::new(StatusCode::BAD_REQUEST, "bad_path", why),
    }
}
