//! Why a step in a folder was refused or failed: the one error of the crate, below its modules.

/// Why a step in a folder was refused or failed. Paths are the relative paths asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("the path is empty")]
    Empty,
    #[error("`{0}` is an absolute path; use a path relative to the project folder, like `index.html`")]
    Absolute(String),
    #[error("`{0}` points outside the project folder")]
    Escapes(String),
    #[error("`{0}` contains a character that is not allowed in a path")]
    BadCharacter(String),
    /// The path is, or goes through, a symbolic link: wright's own steps never follow one.
    #[error("`{0}` is or goes through a link; wright does not follow links inside a project")]
    Link(String),
    #[error("`{0}` does not exist")]
    NotFound(String),
    #[error("`{0}` is a folder, not a file")]
    IsDirectory(String),
    #[error("`{0}` is not a folder")]
    NotADirectory(String),
    #[error("`{0}` is not a regular file")]
    NotRegular(String),
    #[error("{op} `{path}`: {message}")]
    Io { op: &'static str, path: String, message: String },
}

impl Error {
    /// An I/O failure of `op` on `path`, in words.
    pub fn io(op: &'static str, path: &str, e: &std::io::Error) -> Self {
        Self::Io { op, path: path.to_string(), message: e.to_string() }
    }

    /// Map an errno from a resolution of `path` to what it means for a caller.
    pub(crate) fn errno(op: &'static str, path: &str, e: rustix::io::Errno) -> Self {
        use rustix::io::Errno;
        match e {
            Errno::LOOP => Self::Link(path.to_string()),
            Errno::NOENT => Self::NotFound(path.to_string()),
            Errno::NOTDIR => Self::NotADirectory(path.to_string()),
            Errno::ISDIR => Self::IsDirectory(path.to_string()),
            Errno::XDEV => Self::Escapes(path.to_string()),
            other => Self::Io { op, path: path.to_string(), message: std::io::Error::from(other).to_string() },
        }
    }

    /// Whether this refusal is a link (for callers that report refused links as events).
    pub fn is_link(&self) -> bool {
        matches!(self, Self::Link(_))
    }
}
