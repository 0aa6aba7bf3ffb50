//! What the checks report: problems, the report of a site, and why a check could not run.
//! Both checkers ([`crate::html`], [`crate::site`]) make these.

use serde::Serialize;

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
