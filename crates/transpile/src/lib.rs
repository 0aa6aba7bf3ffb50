//! TRANSPILING, the phase of templates with a build step (`react`).
//!
//! A React + TypeScript + Tailwind project cannot be opened as it is written: its TSX must be
//! type-checked and bundled and its styles compiled. wright does that itself, in the build's
//! sandbox with the network off, from the packages in its npm cache (TypeScript, esbuild and
//! Tailwind ship prebuilt binaries, so install scripts need not run), within a time limit
//! (10 s by default). The errors it finds come back with their kind (`transpile`, `type`,
//! `import`), file, line and column, and go to FIXING like failing tests; the bundled page in
//! `dist/` is what the tests' browser check and the previews open.
//!
//! - [`scaffold`]: the project wright writes before the model starts (pinned packages, the
//!   entry, the page).
//! - [`transpile`]: one pass.
//! - [`diagnostics`]: reading the tools' errors.

pub mod diagnostics;
mod page;
pub mod scaffold;
mod step;

pub use diagnostics::{Diagnostic, Kind};
pub use page::bundled_page;
pub use step::{OUT_DIR, Transpiled, transpile};

/// The default time limit of one pass, as seed 002 sets it.
pub const DEFAULT_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);
