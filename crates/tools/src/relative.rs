//! Links that survive a move: a link from a project to the package cache is written relative
//! when both live under one folder, so a host that mounts that folder at another path (a second
//! server on shared storage, docs/scale.md) still finds what it points at.

use std::path::{Path, PathBuf};

/// `target` as seen from the folder `from`: a relative path when the two share more than the
/// file system's root (a project and the package cache under one data folder), so the link
/// still holds when that folder is mounted at another path (another host, docs/scale.md);
/// `target` itself otherwise, or when either path is not plain (`.`, `..`).
pub fn link_target(from: &Path, target: &Path) -> PathBuf {
    use std::path::Component;
    let plain =
        |p: &Path| p.is_absolute() && p.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if !plain(from) || !plain(target) {
        return target.to_path_buf();
    }
    let (f, t): (Vec<Component>, Vec<Component>) = (from.components().collect(), target.components().collect());
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    if common <= 1 {
        return target.to_path_buf();
    }
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    out.extend(&t[common..]);
    if out.as_os_str().is_empty() { PathBuf::from(".") } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Component;

    /// `base` joined with `rel`, `..` taken lexically (as inside the sandbox, whose folders
    /// along both paths are plain mount points).
    fn lexical(base: &Path, rel: &Path) -> PathBuf {
        let mut out: Vec<Component> = base.components().collect();
        for c in rel.components() {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other),
            }
        }
        out.iter().collect()
    }

    #[test]
    fn links_under_one_folder_are_relative_and_others_absolute() {
        let ws = Path::new("/home/ana/.local/share/wright/builds/b1");
        let cache = Path::new("/home/ana/.local/share/wright/deps/npm/k1/node_modules");
        assert_eq!(link_target(ws, cache), PathBuf::from("../../deps/npm/k1/node_modules"));
        // Only the file system's root in common: as it is.
        assert_eq!(link_target(ws, Path::new("/var/cache/npm/k1")), PathBuf::from("/var/cache/npm/k1"));
        // Paths that are not plain are left alone.
        assert_eq!(link_target(Path::new("/a/b/../c"), Path::new("/a/d")), PathBuf::from("/a/d"));
        assert_eq!(link_target(Path::new("rel/ws"), Path::new("/a/d")), PathBuf::from("/a/d"));
    }

    proptest::proptest! {
        /// Followed from `from`, the link reaches `target`, and moving both under another root
        /// keeps it right.
        #[test]
        fn a_link_followed_from_its_folder_reaches_its_target(
            shared in proptest::collection::vec("[a-z0-9]{1,6}", 0..4),
            from in proptest::collection::vec("[a-z0-9.]{1,6}", 0..4),
            to in proptest::collection::vec("[a-z0-9._]{1,6}", 0..4),
        ) {
            let ok = |p: &String| p != "." && p != "..";
            proptest::prop_assume!(shared.iter().chain(&from).chain(&to).all(ok));
            let root: PathBuf = std::iter::once("/".to_string()).chain(shared.iter().cloned()).collect();
            let (f, t) = (root.join(from.iter().collect::<PathBuf>()), root.join(to.iter().collect::<PathBuf>()));
            let link = link_target(&f, &t);
            let reached = if link.is_absolute() { link.clone() } else { lexical(&f, &link) };
            proptest::prop_assert_eq!(&reached, &t);
            if !shared.is_empty() && link.is_relative() {
                let moved = Path::new("/elsewhere/mount");
                let f2 = moved.join(f.strip_prefix("/").unwrap());
                let t2 = moved.join(t.strip_prefix("/").unwrap());
                proptest::prop_assert_eq!(lexical(&f2, &link), t2);
            }
        }
    }
}
