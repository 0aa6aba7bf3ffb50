//! Which reader a document needs, and the chunks it makes of it: the one place that knows
//! both the Markdown and the HTML reader (which share [`crate::chunk`]'s sections).

use crate::chunk::Chunk;

/// Which reader a file needs, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Markdown,
    Html,
}

impl Kind {
    /// The kind of a file named `name`, or `None` for files the index does not read.
    pub(crate) fn of(name: &str) -> Option<Self> {
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "md" | "markdown" => Some(Self::Markdown),
            "html" | "htm" => Some(Self::Html),
            _ => None,
        }
    }
}

/// The chunks of one document.
pub(crate) fn chunk(kind: Kind, text: &str) -> Vec<Chunk> {
    match kind {
        Kind::Markdown => crate::markdown::chunks(text),
        Kind::Html => crate::html::chunks(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_extensions() {
        assert_eq!(Kind::of("a/b/README.MD"), Some(Kind::Markdown));
        assert_eq!(Kind::of("guide.htm"), Some(Kind::Html));
        assert_eq!(Kind::of("notes.txt"), None);
        assert_eq!(Kind::of("Makefile"), None);
    }
}
