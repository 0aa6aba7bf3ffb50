use crate::{Dir, Error, Kind, Links};
use std::os::unix::fs::symlink;
use std::path::Path;

fn setup() -> (tempfile::TempDir, Dir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    let dir = Dir::create(tmp.path().join("proj")).unwrap();
    (tmp, dir, outside)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn no_step_goes_through_a_link() {
    let (_t, dir, outside) = setup();
    let root = dir.path().to_path_buf();
    symlink(&outside, root.join("out")).unwrap();
    symlink(outside.join("secret.txt"), root.join("leak.txt")).unwrap();
    std::fs::create_dir(root.join("real")).unwrap();
    // A link that stays inside is refused too: a step never knows where a link will point next.
    symlink(root.join("real"), root.join("alias")).unwrap();

    assert_eq!(dir.read("leak.txt"), Err(Error::Link("leak.txt".into())));
    assert_eq!(dir.read("out/secret.txt"), Err(Error::Link("out/secret.txt".into())));
    assert!(matches!(dir.write("out/new.txt", b"x"), Err(Error::Link(_))));
    assert!(matches!(dir.write("leak.txt", b"x"), Err(Error::Link(_))));
    assert!(matches!(dir.write("alias/f.txt", b"x"), Err(Error::Link(_))));
    assert!(matches!(dir.create_dir_all("out/deeper"), Err(Error::Link(_))));
    assert!(matches!(dir.open_dir("out"), Err(Error::Link(_))));
    assert_eq!(dir.meta("leak.txt").unwrap().kind, Kind::Link);
    assert!(matches!(dir.meta("out/secret.txt"), Err(Error::Link(_))));
    assert!(!dir.is_file("leak.txt") && !dir.is_dir("out"));
    assert_eq!(read(&outside.join("secret.txt")), "secret");
    assert!(!outside.join("new.txt").exists() && !outside.join("deeper").exists());
    // Removing a link removes the link only.
    assert_eq!(dir.remove("leak.txt").unwrap().kind, Kind::Link);
    assert!(!root.join("leak.txt").exists() && outside.join("secret.txt").exists());
}

#[test]
fn the_walking_fallback_refuses_the_same_links() {
    let (_t, dir, outside) = setup();
    let root = dir.path().to_path_buf();
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::write(root.join("a/b/f.txt"), "ok").unwrap();
    symlink(&outside, root.join("a/out")).unwrap();
    symlink(outside.join("secret.txt"), root.join("a/leak")).unwrap();
    let flags = rustix::fs::OFlags::RDONLY;
    let names = |s: &str| crate::normalize(s).unwrap();
    let mode = rustix::fs::Mode::empty();
    let opened = dir.open_walking(&names("a/b/f.txt"), "a/b/f.txt", flags | rustix::fs::OFlags::NOFOLLOW, mode);
    assert!(opened.is_ok());
    let through = dir.open_walking(&names("a/out/secret.txt"), "x", flags | rustix::fs::OFlags::NOFOLLOW, mode);
    assert_eq!(through.err(), Some(Error::Link("x".into())));
    let at_end = dir.open_walking(&names("a/leak"), "y", flags | rustix::fs::OFlags::NOFOLLOW, mode);
    assert_eq!(at_end.err(), Some(Error::Link("y".into())));
}

#[test]
fn writes_make_folders_and_replace_whole_files() {
    let (t, dir, _o) = setup();
    let w = dir.write("dist/assets/app.js", b"one").unwrap();
    assert!(w.created);
    let w = dir.write("dist/assets/app.js", b"two!").unwrap();
    assert_eq!((w.created, w.replaced_len), (false, 3));
    assert_eq!(dir.read("dist/assets/app.js").unwrap(), b"two!");
    // A hard link to a file elsewhere is cut by the rename, not written through.
    let elsewhere = t.path().join("elsewhere.txt");
    std::fs::write(&elsewhere, "orig").unwrap();
    std::fs::hard_link(&elsewhere, dir.path().join("hl.txt")).unwrap();
    assert_eq!(dir.meta("hl.txt").unwrap().nlink, 2);
    dir.write("hl.txt", b"new").unwrap();
    assert_eq!(read(&elsewhere), "orig");
    assert!(matches!(dir.write("dist", b"x"), Err(Error::IsDirectory(_))));
    assert!(matches!(dir.read("dist"), Err(Error::IsDirectory(_))));
    assert!(matches!(dir.read("../x"), Err(Error::Escapes(_))));
    assert!(matches!(dir.read("/etc/passwd"), Err(Error::Absolute(_))));
    assert!(matches!(dir.read("nope"), Err(Error::NotFound(_))));
    // No temporary file is left behind.
    let names: Vec<_> = dir.open_dir("dist/assets").unwrap().entries().unwrap();
    assert_eq!(names.len(), 1);
}

#[test]
fn a_planted_pipe_is_refused_without_waiting() {
    let (_t, dir, _o) = setup();
    let fifo = dir.path().join("pipe");
    rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o600), 0)
        .unwrap();
    assert_eq!(dir.read("pipe"), Err(Error::NotRegular("pipe".into())));
}

#[test]
fn a_copy_skips_links_and_refuses_a_link_where_it_writes() {
    let (t, dir, outside) = setup();
    let root = dir.path().to_path_buf();
    std::fs::create_dir_all(root.join("public/img")).unwrap();
    std::fs::write(root.join("public/robots.txt"), "User-agent: *\n").unwrap();
    std::fs::write(root.join("public/img/a.svg"), "<svg/>").unwrap();
    symlink("/etc/passwd", root.join("public/passwd")).unwrap();
    symlink(&outside, root.join("public/dir-out")).unwrap();
    let from = dir.open_dir("public").unwrap();
    let to = dir.create_dir_all("dist").unwrap();
    let report = from.copy_into(&to, Links::Skip, &|_| true, false).unwrap();
    assert_eq!(report.files, 2);
    assert_eq!(report.skipped_links, vec!["dir-out".to_string(), "passwd".to_string()]);
    assert_eq!(read(&root.join("dist/img/a.svg")), "<svg/>");
    assert!(!root.join("dist/passwd").exists());

    // Generated code makes a folder of the destination a link out: the copy refuses it.
    std::fs::remove_dir_all(root.join("dist/img")).unwrap();
    symlink(&outside, root.join("dist/img")).unwrap();
    let refused = from.copy_into(&to, Links::Skip, &|_| true, false);
    assert_eq!(refused, Err(Error::Link("img".into())));
    assert!(!outside.join("a.svg").exists());
    // And a file at the destination that is a link is refused, not written through.
    std::fs::remove_file(root.join("dist/robots.txt")).unwrap();
    symlink(outside.join("secret.txt"), root.join("dist/robots.txt")).unwrap();
    std::fs::remove_file(root.join("dist/img")).unwrap();
    assert_eq!(from.copy_into(&to, Links::Skip, &|_| true, false), Err(Error::Link("robots.txt".into())));
    assert_eq!(read(&outside.join("secret.txt")), "secret");
    drop(t);
}

#[test]
fn a_snapshot_keeps_links_as_links_and_modes() {
    use std::os::unix::fs::PermissionsExt;
    let (t, dir, outside) = setup();
    let root = dir.path().to_path_buf();
    std::fs::create_dir_all(root.join("docs/a")).unwrap();
    std::fs::write(root.join("docs/a/readme.md"), "v1").unwrap();
    std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
    symlink("index.html", root.join("home.html")).unwrap();
    symlink(&outside, root.join("out")).unwrap();
    std::fs::set_permissions(root.join("docs/a"), std::fs::Permissions::from_mode(0o555)).unwrap();
    let snap = Dir::create(t.path().join("snap")).unwrap();
    dir.copy_into(&snap, Links::Recreate, &|n| n != "node_modules", false).unwrap();
    let s = snap.path();
    assert_eq!(std::fs::read_link(s.join("home.html")).unwrap(), Path::new("index.html"));
    assert_eq!(std::fs::read_link(s.join("out")).unwrap(), outside);
    assert_eq!(read(&s.join("docs/a/readme.md")), "v1");
    assert_eq!(std::fs::metadata(s.join("docs/a")).unwrap().permissions().mode() & 0o777, 0o555);
    assert!(!s.join("node_modules").exists());
    // Clearing removes links, never what they point at, and opens read-only folders.
    snap.clear(&|_| true).unwrap();
    assert!(snap.entries().unwrap().is_empty());
    assert_eq!(read(&outside.join("secret.txt")), "secret");
    // Clearing leaves the folders it is told to keep.
    dir.clear(&|n| n != "node_modules").unwrap();
    let left: Vec<_> = dir.entries().unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("node_modules")]);
}

#[test]
fn a_walk_lists_links_without_entering_them() {
    let (_t, dir, outside) = setup();
    let root = dir.path().to_path_buf();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/app.js"), "x=1").unwrap();
    std::fs::create_dir_all(root.join("node_modules/dep")).unwrap();
    symlink(&outside, root.join("src/out")).unwrap();
    let all = dir.walk(&|n| n != "node_modules").unwrap();
    let seen: Vec<_> = all.iter().map(|e| (e.path.as_str(), e.kind, e.len)).collect();
    assert_eq!(
        seen,
        vec![
            ("node_modules", Kind::Dir, 0),
            ("src", Kind::Dir, 0),
            ("src/app.js", Kind::File, 3),
            ("src/out", Kind::Link, 0)
        ]
    );
    dir.remove_tree("src").unwrap();
    assert!(!root.join("src").exists() && outside.join("secret.txt").exists());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// Whatever path is asked for, in a folder full of links out, nothing outside is read or
    /// written.
    #[test]
    fn nothing_outside_is_reached(parts in proptest::collection::vec(proptest::prop_oneof![
        proptest::strategy::Just("..".to_string()),
        proptest::strategy::Just(".".to_string()),
        proptest::strategy::Just("out".to_string()),
        proptest::strategy::Just("leak".to_string()),
        proptest::strategy::Just("in".to_string()),
        proptest::strategy::Just("secret.txt".to_string()),
        "[a-z.]{1,4}",
    ], 0..6)) {
        let (_t, dir, outside) = setup();
        let root = dir.path().to_path_buf();
        std::fs::create_dir(root.join("in")).unwrap();
        symlink(&outside, root.join("out")).unwrap();
        symlink(&outside, root.join("in/out")).unwrap();
        symlink(outside.join("secret.txt"), root.join("leak")).unwrap();
        let rel = parts.join("/");
        if let Ok(bytes) = dir.read(&rel) {
            proptest::prop_assert_ne!(bytes, b"secret".to_vec());
        }
        let _ = dir.write(&rel, b"planted");
        let _ = dir.remove(&rel);
        let _ = dir.create_dir_all(&rel);
        proptest::prop_assert_eq!(read(&outside.join("secret.txt")), "secret");
        let names: Vec<_> = std::fs::read_dir(&outside).unwrap().map(|e| e.unwrap().file_name()).collect();
        proptest::prop_assert_eq!(names.len(), 1, "{:?} -> {:?}", rel, names);
    }
}

/// Giving a tree to another owner (task lending) changes links themselves, never their targets.
#[test]
fn chown_all_never_reaches_through_a_link() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: changing owners needs root");
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let (_t, dir, outside) = setup();
    let root = dir.path().to_path_buf();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/app.js"), "x").unwrap();
    symlink(&outside, root.join("src/out")).unwrap();
    symlink(outside.join("secret.txt"), root.join("leak")).unwrap();
    let before = std::fs::metadata(outside.join("secret.txt")).unwrap().uid();
    dir.chown_all(65534, 65534).unwrap();
    assert_eq!(std::fs::metadata(root.join("src/app.js")).unwrap().uid(), 65534);
    assert_eq!(std::fs::symlink_metadata(root.join("src/out")).unwrap().uid(), 65534);
    assert_eq!(std::fs::metadata(outside.join("secret.txt")).unwrap().uid(), before);
    assert_eq!(std::fs::metadata(&outside).unwrap().uid(), before);
}
