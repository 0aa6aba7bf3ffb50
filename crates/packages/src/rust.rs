//! (being written) rust dependencies: see the crate's top comment for the contract.

use crate::{PackagesError, Prepared, Settings};
use tokio_util::sync::CancellationToken;
use wright_beneath::Dir;

pub(crate) async fn prepare(
    _project: &Dir,
    _settings: &Settings,
    _sandbox_env: &[(String, String)],
    _cancel: &CancellationToken,
) -> Result<Prepared, PackagesError> {
    Err(PackagesError::Missing("rust support (not built yet)"))
}
