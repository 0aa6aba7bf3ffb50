//! Lexical checks of a relative path before the kernel resolves it.

use crate::Error;
use std::path::{Component, Path};

/// Split a relative path into plain names: `.` dropped, `..` applied, anything that is
/// absolute, holds a NUL, or climbs above the folder refused. An empty result is the folder
/// itself (`.`).
pub fn normalize(rel: &str) -> Result<Vec<String>, Error> {
    if rel.contains('\0') {
        return Err(Error::BadCharacter(rel.to_string()));
    }
    let trimmed = rel.trim();
    if trimmed.is_empty() {
        return Err(Error::Empty);
    }
    let mut out: Vec<String> = Vec::new();
    for c in Path::new(trimmed).components() {
        match c {
            Component::Prefix(_) | Component::RootDir => return Err(Error::Absolute(rel.to_string())),
            Component::CurDir => {}
            Component::ParentDir => {
                if out.pop().is_none() {
                    return Err(Error::Escapes(rel.to_string()));
                }
            }
            Component::Normal(s) => match s.to_str() {
                Some(s) => out.push(s.to_string()),
                None => return Err(Error::BadCharacter(rel.to_string())),
            },
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_only() {
        assert_eq!(normalize("a/./b/../c.txt").unwrap(), vec!["a", "c.txt"]);
        assert_eq!(normalize(".").unwrap(), Vec::<String>::new());
        assert_eq!(normalize("/etc"), Err(Error::Absolute("/etc".into())));
        assert_eq!(normalize("a/../../x"), Err(Error::Escapes("a/../../x".into())));
        assert_eq!(normalize(" "), Err(Error::Empty));
        assert!(matches!(normalize("a\0b"), Err(Error::BadCharacter(_))));
    }

    proptest::proptest! {
        /// Whatever the string, what comes out is names with no separator, `.` or `..`.
        #[test]
        fn only_plain_names_come_out(s in ".{0,40}") {
            if let Ok(parts) = normalize(&s) {
                for p in parts {
                    proptest::prop_assert!(!p.is_empty() && p != "." && p != ".." && !p.contains('/') && !p.contains('\0'));
                }
            }
        }
    }
}
