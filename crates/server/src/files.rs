//! A build's folder as requests read it: off the async workers, and never outside the folder.
//! Files, archives and screenshots come through the shared [`Artifacts`](wright_engine::Artifacts)
//! (`Shared::artifacts`); this maps what they report to HTTP.

use crate::error::{ApiError, ApiResult};
use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use std::io::Write;
use tokio::sync::mpsc;
use wright_engine::ArtifactError;

/// Bytes a piped body hands on at once: the writer's buffer, and the most a slow client makes
/// the server hold (times the channel's few slots), however large the whole.
const PIPE_CHUNK: usize = 64 * 1024;

/// A response body that `produce` writes as it goes, through a bounded pipe: a large archive
/// is never held whole in memory, a slow client slows the writer down, and one that goes away
/// stops it (its next write fails). A failure after the first bytes ends the body early, so
/// the client sees a cut-short download, never a whole-looking wrong one.
pub fn piped<F, Fut>(produce: F) -> Body
where
    F: FnOnce(Box<dyn Write + Send>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<(), ArtifactError>> + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    let failed = tx.clone();
    tokio::spawn(async move {
        let out = std::io::BufWriter::with_capacity(PIPE_CHUNK, Pipe(tx));
        if let Err(e) = produce(Box::new(out)).await {
            tracing::warn!("a piped response stopped: {e}");
            let _ = failed.send(Err(std::io::Error::other(e.to_string()))).await;
        }
    });
    let chunks = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
    Body::from_stream(chunks)
}

/// The writing end of [`piped`], used from the blocking pool.
struct Pipe(mpsc::Sender<Result<Bytes, std::io::Error>>);

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .blocking_send(Ok(Bytes::copy_from_slice(buf)))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client went away"))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

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
