//! wright-webcheck: basic checks that a generated web page is well-formed and complete.
//!
//! wright lets a model write small web projects and must not call them done
//! until they would actually load in a browser. A browser never refuses bad
//! markup — it silently repairs it — so mistakes like an unclosed `<div>` or a
//! `<script>` pointing at a file that was never written only show up as a
//! broken page. This crate catches those mistakes with a small, purpose-built
//! checker (not a full HTML5 parser) and words every finding so that a model
//! (or a beginner) can fix it from the message alone.
//!
//! Findings whose message starts with [`WARNING_PREFIX`] are advisory (e.g. a
//! missing `<!DOCTYPE html>`): they are reported but do not make
//! [`WebReport::ok`] false, because the page still works.

mod html;
mod site;

use serde::Serialize;

pub use html::{PageMeta, check_html, local_references, page_meta};
pub use site::{check_site, check_site_in};

/// Prefix of advisory findings that [`WebReport::ok`] ignores.
pub const WARNING_PREFIX: &str = "warning: ";

/// One thing wrong with a page, located as precisely as the checker can.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Path of the file relative to the site root, with `/` separators.
    pub file: String,
    /// 1-based line number, when the problem has a location in the file.
    pub line: Option<u32>,
    /// Human-readable description that says what to change.
    pub message: String,
}

impl Problem {
    /// True for advisory findings (message starts with [`WARNING_PREFIX`]).
    pub fn is_warning(&self) -> bool {
        self.message.starts_with(WARNING_PREFIX)
    }
}

/// Result of checking a whole site: which pages were looked at and what is wrong.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WebReport {
    /// HTML files that were checked, relative to the site root.
    pub pages: Vec<String>,
    /// Everything found, including warnings.
    pub problems: Vec<Problem>,
}

impl WebReport {
    /// True when nothing but warnings was found, i.e. the site can be called done.
    pub fn ok(&self) -> bool {
        self.problems.iter().all(Problem::is_warning)
    }
}

/// Failures that stop a site from being checked at all (as opposed to
/// [`Problem`]s, which are findings about the site's content).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The root to check does not exist or is not a directory.
    #[error("site root {} is not a readable directory", .0.display())]
    RootNotDirectory(std::path::PathBuf),
    /// The entry page is absolute or climbs out of the root, so it cannot name a page of this site.
    #[error("entry page {0:?} must be a relative path inside the site root")]
    InvalidEntry(String),
    /// Reading the file system failed.
    #[error("could not read {}: {source}", path.display())]
    Io {
        /// The path that could not be read.
        path: std::path::PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}
