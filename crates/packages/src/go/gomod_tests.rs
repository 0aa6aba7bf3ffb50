#![allow(clippy::unwrap_used)]
use super::*;
use proptest::prelude::*;

fn refused(text: &str) -> Vec<Refusal> {
    parse(text, "go.mod").1
}

#[test]
fn a_plain_go_mod_is_read() {
    let text = "module example.com/app // the app\n\ngo 1.19\n\nrequire (\n\tgithub.com/google/uuid v1.6.0\n\
                \tgolang.org/x/text v0.0.0-20230101000000-abcdefabcdef // indirect\n)\n\
                require gopkg.in/yaml.v3 v3.0.1\nrequire github.com/old/thing v2.0.0+incompatible\n\
                exclude github.com/google/uuid v1.5.0\n\
                replace github.com/a/b => github.com/c/b v1.0.0\nreplace (\n\tgithub.com/d/e v1.0.0 => ./lib/e\n)\n\
                retract [v1.0.0, v1.0.5]\n";
    let (m, refusals) = parse(text, "go.mod");
    assert!(refusals.is_empty(), "{refusals:?}");
    assert_eq!(m.module.as_deref(), Some("example.com/app"));
    assert_eq!(m.go.as_deref(), Some("1.19"));
    assert_eq!(m.requires.len(), 4);
    assert_eq!(m.replaces[1].to, Target::Local("lib/e".into()));
    let clean = m.clean("wright.invalid/fetch");
    assert!(clean.starts_with("module wright.invalid/fetch\n\ngo 1.19\n"), "{clean}");
    assert!(clean.contains("\tgolang.org/x/text v0.0.0-20230101000000-abcdefabcdef\n"), "{clean}");
    assert!(clean.contains("replace github.com/d/e v1.0.0 => ./lib/e\n"), "{clean}");
    assert!(!clean.contains("indirect") && !clean.contains("retract"), "{clean}");
    // The clean file reads back to the same requirements.
    let (again, none) = parse(&clean, "go.mod");
    assert!(none.is_empty(), "{none:?}");
    assert_eq!(again.clean("wright.invalid/fetch"), clean);
}

#[test]
fn hostile_lines_are_refused_each_with_its_reason() {
    let cases: &[(&str, &str)] = &[
        ("replace example.com/x => ../../etc", "outside the project"),
        ("replace example.com/x => /etc/passwd", "outside the project"),
        ("replace example.com/x => ./lib/../..", "outside the project"),
        ("replace example.com/x => example.com/y", "neither a module at a version"),
        ("replace example.com/x => https://evil.example/y v1.0.0", "looks like a URL"),
        ("toolchain go1.99", "toolchain"),
        ("require https://evil.example/mod v1.0.0", "looks like a URL"),
        ("require github.com/a/b master", "not a semantic version"),
        ("require github.com/a/b latest", "not a semantic version"),
        ("require ../../secret v1.0.0", "file path"),
        ("require localmod v1.0.0", "domain name"),
        ("require github.com/a/b/v2 v1.0.0", "major version"),
        ("require github.com/a/b v2.0.0", "major version"),
        ("require github.com/a/b", "module path and a version"),
        ("go 1.x", "`go` line"),
        ("godebug default=go1.21", "directive"),
        ("require \"github.com/a/b v1.0.0", "never closed"),
    ];
    for (line, why) in cases {
        let text = format!("module example.com/app\n{line}\n");
        let r = refused(&text);
        assert_eq!(r.len(), 1, "{line}: {r:?}");
        assert!(r[0].reason.contains(why), "{line}: {}", r[0].reason);
        assert_eq!(r[0].spec, line.trim());
        assert!(r[0].reason.contains("(line 2"), "{}", r[0].reason);
    }
    assert!(refused("require (\n github.com/a/b v1.0.0\n").iter().any(|r| r.reason.contains("never closed")));
    assert!(refused("go 1.19\n").iter().any(|r| r.reason.contains("no `module` line")));
}

#[test]
fn go_versions_and_sums() {
    assert_eq!(go_version("1.19"), Some((1, 19, 0)));
    assert_eq!(go_version("go1.19.8"), Some((1, 19, 8)));
    assert_eq!(go_version("1.21rc1"), Some((1, 21, 0)));
    assert_eq!(go_version("1"), None);
    assert_eq!(go_version("1.19.x"), None);
    let (lines, r) = parse_sum(
        "example.com/b v1.0.0 h1:abc=\nexample.com/a v1.0.0/go.mod h1:def=\n\nexample.com/b v1.0.0 h1:abc=\n",
    );
    assert!(r.is_empty(), "{r:?}");
    assert_eq!(lines, ["example.com/a v1.0.0/go.mod h1:def=", "example.com/b v1.0.0 h1:abc="]);
    let (_, r) = parse_sum("https://x/y v1.0.0 h1:abc=\nexample.com/a v1.0.0\n");
    assert_eq!(r.len(), 2, "{r:?}");
}

proptest! {
    #[test]
    fn the_parser_never_panics(text in "\\PC{0,400}") {
        let _ = parse(&text, "go.mod");
        let _ = parse_sum(&text);
    }

    #[test]
    fn the_parser_never_panics_on_go_mod_like_text(
        lines in proptest::collection::vec(
            "(module|go|require|replace|exclude|toolchain|retract|\\(|\\)|=>|//|\"|`| |\\.\\./|v1\\.2\\.3|example\\.com/[a-z]{1,4}|https://|/etc)*",
            0..12,
        )
    ) {
        let _ = parse(&lines.join("\n"), "go.mod");
    }

    /// Whatever is accepted as a requirement is a module path: no scheme, no folder, no `..`.
    #[test]
    fn accepted_requires_are_module_paths(
        path in "[a-zA-Z0-9./:_~-]{1,30}",
        version in "v?[0-9a-z.+-]{1,20}",
    ) {
        let (m, _) = parse(&format!("module example.com/app\nrequire {path} {version}\n"), "go.mod");
        for (p, v) in &m.requires {
            prop_assert!(!p.contains(':') && !p.starts_with('/') && !p.starts_with('.'), "{}", p);
            prop_assert!(!p.split('/').any(|e| e == ".." || e == "." || e.is_empty()), "{}", p);
            prop_assert!(p.split('/').next().is_some_and(|f| f.contains('.')), "{}", p);
            prop_assert!(v.starts_with('v'), "{}", v);
        }
    }

    /// A local replacement that is accepted stays inside the project.
    #[test]
    fn accepted_local_replacements_stay_inside(target in "(\\./|\\.\\./|/)?([a-z]{1,3}|\\.\\.|\\.)(/([a-z]{1,3}|\\.\\.|\\.)){0,4}") {
        let (m, _) = parse(&format!("module example.com/app\nreplace example.com/x => {target}\n"), "go.mod");
        for r in &m.replaces {
            if let Target::Local(dir) = &r.to {
                prop_assert!(!dir.starts_with('/') && !dir.split('/').any(|e| e == ".." || e == "." || e.is_empty()), "{}", dir);
            }
        }
    }
}
