//! Python, Rust and Go dependencies for builds whose sandbox has no network.
//!
//! A build's commands run with networking off, yet a Python script may need `requests`, a Rust
//! tool `clap`, a Go service a module. The model declares them the usual way
//! (`requirements.txt` or `pyproject.toml`, `Cargo.toml`, `go.mod`); before anything of the
//! project runs, [`prepare`]:
//! 1. reads the manifest through a no-follow handle on the project and checks every spec:
//!    registry names and versions only. URLs, VCS sources, paths outside the project, custom
//!    indexes and anything the host's tool would execute while fetching are refused with the
//!    reason ([`Refusal`]), before any host tool runs;
//! 2. keys the checked set (SHA-256 of what was declared and of the toolchain) and, on a miss,
//!    fetches it with the HOST's tool (`pip download`, `cargo vendor`, `go mod download`) into a
//!    staging folder under the cache, from a clean copy of the manifest, never inside the
//!    project, then renames it into place;
//! 3. returns what the sandbox needs ([`Prepared`]): environment that points the toolchain at
//!    the read-only cache entry, and the commands that install from it offline inside the
//!    sandbox.
//!
//! Cache entries are shared between builds and the cache is bounded ([`cache::evict`]).

pub mod cache;
mod go;
mod python;
mod rust;
mod types;

pub use rust::toolchain_dirs;
pub use types::{Ecosystem, PackagesError, Prepared, Refusal, Settings};

use std::path::Path;
use tokio_util::sync::CancellationToken;

/// Check the project's declared dependencies, fetch them on the host on a cache miss, and say
/// how the sandbox uses them. `sandbox_env` is the environment the project's commands get
/// (its `HOME` is the build's private, writable home). A project that declares nothing still
/// gets its toolchain's offline environment.
pub async fn prepare(
    ecosystem: Ecosystem,
    root: &Path,
    settings: &Settings,
    sandbox_env: &[(String, String)],
    cancel: &CancellationToken,
) -> Result<Prepared, PackagesError> {
    let project = wright_beneath::Dir::open(root)?;
    let prepared = match ecosystem {
        Ecosystem::Python => python::prepare(&project, settings, sandbox_env, cancel).await?,
        Ecosystem::Rust => rust::prepare(&project, settings, sandbox_env, cancel).await?,
        Ecosystem::Go => go::prepare(&project, settings, sandbox_env, cancel).await?,
    };
    if prepared.fetched {
        // Best effort: a full cache must not fail the build that just filled it.
        if let Err(e) = cache::evict(&settings.cache_root, settings.max_cache_bytes, &prepared.key) {
            tracing::warn!("trimming the package cache: {e}");
        }
    }
    Ok(prepared)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_goes_first_and_the_rest_replaces() {
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        let p = Prepared {
            env: vec![s("PATH", "/venv/bin"), s("VIRTUAL_ENV", "/venv"), s("HOME", "/h2")],
            ..Prepared::default()
        };
        let got = p.env_over(&[s("PATH", "/usr/bin"), s("HOME", "/h")]);
        assert_eq!(got, vec![s("PATH", "/venv/bin:/usr/bin"), s("HOME", "/h2"), s("VIRTUAL_ENV", "/venv")]);
    }
}
