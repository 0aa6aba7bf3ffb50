//! `[packages]` in `wright.toml` (`docs/packages.md`): how Python, Rust and Go packages are
//! fetched on the host and how big their cache may grow.

use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// The `[packages]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackagesFile {
    /// The package cache (npm's sets included) is trimmed to this many MiB, least recently used
    /// first [default: 2048].
    pub max_cache_mb: Option<u64>,
    /// Let Python source distributions be fetched. Building one runs its build backend on the
    /// host, outside the sandbox [default: false, wheels only].
    pub allow_sdists: Option<bool>,
    /// Longest one host fetch may take, in seconds [default: 600].
    pub fetch_timeout_secs: Option<u64>,
}

impl PackagesFile {
    /// The settings for a cache at `cache_root`, with the host's own environment for its tools.
    pub fn settings(&self, cache_root: PathBuf) -> wright_packages::Settings {
        let mut s = wright_packages::Settings::new(cache_root);
        if let Some(mb) = self.max_cache_mb {
            s.max_cache_bytes = mb.saturating_mul(1 << 20);
        }
        if let Some(allow) = self.allow_sdists {
            s.allow_sdists = allow;
        }
        if let Some(secs) = self.fetch_timeout_secs {
            s.fetch_timeout = Duration::from_secs(secs.max(1));
        }
        s
    }
}
