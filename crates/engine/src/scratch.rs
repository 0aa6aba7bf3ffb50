//! Scratch folders: every build's, the egress proxy's and `wright doctor`'s trial folders are
//! made the same way, under `DATA/tmp`.

use crate::error::EngineError;
use std::path::Path;

/// A fresh scratch folder named after `name` under `data_dir/tmp`, where every build's lives
/// (`wright doctor` makes its trial folders the same way, so it fails where builds would).
pub fn scratch_in(data_dir: &Path, name: &str) -> Result<tempfile::TempDir, EngineError> {
    let io = |what: &str, e: std::io::Error| EngineError::Usage(format!("{what}: {e}"));
    std::fs::create_dir_all(data_dir.join("tmp")).map_err(|e| io(&format!("creating {}", data_dir.display()), e))?;
    tempfile::Builder::new()
        .prefix(&format!("{name}-"))
        .tempdir_in(data_dir.join("tmp"))
        .map_err(|e| io("creating the build's temp folder", e))
}
