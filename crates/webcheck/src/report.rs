//! What the checks report: problems, the report of a site, and why a check could not run.
//! Both checkers ([`crate::html`], [`crate::site`]) make these.

use serde::Serialize;

/// How much a finding matters: errors break the page, warnings are advice that
/// [`WebReport::ok`] ignores (the page still works, e.g. without `<!DOCTYPE html>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

/// One thing wrong with a page, located as precisely as the checker can.
///
/// Serialises as `{"file", "line", "message"}` with a warning's message starting `warning: `,
/// the shape reports had before the severity was typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Path of the file relative to the site root, with `/` separators.
    pub file: String,
    /// 1-based line number, when the problem has a location in the file.
    pub line: Option<u32>,
    /// Whether the page is broken by it or only advised.
    pub severity: Severity,
    /// Human-readable description that says what to change (without the severity).
    pub message: String,
}

impl Problem {
    /// True for advisory findings.
    pub fn is_warning(&self) -> bool {
        self.severity == Severity::Warning
    }
}

impl Serialize for Problem {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Problem", 3)?;
        s.serialize_field("file", &self.file)?;
        s.serialize_field("line", &self.line)?;
        s.serialize_field("message", &self.labelled_message())?;
        s.end()
    }
}

impl Problem {
    /// The message, after `warning: ` when this is a warning.
    pub fn labelled_message(&self) -> String {
        match self.severity {
            Severity::Warning => format!("warning: {}", self.message),
            Severity::Error => self.message.clone(),
        }
    }
}

/// `file:line: message`, with `warning: ` before the message of a warning: how a person or a
/// model reads a finding.
impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}", self.labelled_message())
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
