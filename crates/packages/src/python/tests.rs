#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use super::fetch::{Target, classify, missing_name};
use super::spec::{Line, logical_lines, parse_line, parse_requirement};
use super::*;
use proptest::prelude::*;

fn req(s: &str) -> Requirement {
    match parse_line(s) {
        Ok(Line::Requirement(r)) => r,
        other => panic!("{s}: {other:?}"),
    }
}

fn refused(s: &str) -> String {
    parse_line(s).expect_err(s)
}

#[test]
fn registry_requirements_are_accepted_and_rebuilt() {
    assert_eq!(req("six==1.16.0").line(), "six==1.16.0");
    assert_eq!(req("Python_Dateutil >= 2.8 , < 3").line(), "python-dateutil>=2.8,<3");
    assert_eq!(req("requests[socks, security]~=2.31").line(), "requests[security,socks]~=2.31");
    assert_eq!(req("attrs (>=22.1)").line(), "attrs>=22.1");
    assert_eq!(req("numpy==1.26.*").line(), "numpy==1.26.*");
    assert_eq!(req("foo===1.0-weird").line(), "foo===1.0-weird");
    assert_eq!(req("pytz").line(), "pytz");
    assert_eq!(
        req("tomli>=1.1; python_version < '3.11' and (sys_platform == \"linux\" or os_name != 'nt')").line(),
        "tomli>=1.1; python_version < \"3.11\" and (sys_platform == \"linux\" or os_name != \"nt\")"
    );
    assert_eq!(req("colorama; 'win' in sys_platform").line(), "colorama; \"win\" in sys_platform");
    assert_eq!(
        req("x; platform_machine not in 'arm64 aarch64'").line(),
        "x; platform_machine not in \"arm64 aarch64\""
    );
    let hashed = req("six==1.16.0 --hash=sha256:AB12 --hash sha512:cd34");
    assert_eq!(hashed.line(), "six==1.16.0 --hash=sha256:ab12 --hash=sha512:cd34");
    assert_eq!(parse_line("--pre"), Ok(Line::Flag("--pre")));
    assert_eq!(parse_line("-r dev.txt"), Ok(Line::Include { path: "dev.txt".into(), constraints: false }));
    assert_eq!(parse_line("-cpins.txt"), Ok(Line::Include { path: "pins.txt".into(), constraints: true }));
    assert_eq!(parse_line("--requirement=a/b.txt"), Ok(Line::Include { path: "a/b.txt".into(), constraints: false }));
}

#[test]
fn urls_vcs_paths_and_options_are_refused_with_the_reason() {
    let cases = [
        ("requests @ https://example.invalid/r.whl", "direct URLs"),
        ("https://example.invalid/r-1.0.tar.gz", "direct URLs"),
        ("git+https://example.invalid/x.git#egg=x", "version-control"),
        ("x @ git+ssh://git@example.invalid/x", "version-control"),
        ("hg+http://example.invalid/x", "version-control"),
        ("file:../x", "local files"),
        ("x @ file:///tmp/x", "local files"),
        ("./vendor/pkg", "local paths"),
        ("../outside", "local paths"),
        ("/etc/passwd", "local paths"),
        ("pkg-1.0-py3-none-any.whl", "local paths"),
        ("x @ ./y", "direct references"),
        ("-e ../x", "editable"),
        ("--editable=.", "editable"),
        ("-i https://example.invalid/simple", "where packages come from"),
        ("--index-url https://example.invalid/simple", "where packages come from"),
        ("--extra-index-url=https://example.invalid", "where packages come from"),
        ("-f ./wheels", "where packages come from"),
        ("--find-links /tmp", "where packages come from"),
        ("--trusted-host example.invalid", "where packages come from"),
        ("--no-binary :all:", "decided by wright"),
        ("-r https://example.invalid/r.txt", "not a file inside the project"),
        ("-r /etc/x", "outside the project"),
        ("-c file:pins.txt", "not a file inside the project"),
        ("x==1.0 --global-option=--foo", "build"),
        ("--config-settings x=y", "builds or installs"),
        ("x==${SECRET}", "environment"),
        ("x==1.0 --hash=md5:00", "sha256"),
        ("x==banana", "not a version"),
        ("x; os.name == 'nt'", "marker variable"),
        ("x; python_version == 'a/b'", "characters"),
        ("x; python_version", "does not parse"),
        ("x[a b]", "extra"),
        ("x >=1 foo", "not a version"),
        ("--pre x", "takes no value"),
        ("--weird", "not a requirements-file option"),
    ];
    for (line, why) in cases {
        let reason = refused(line);
        assert!(reason.contains(why), "{line}: {reason}");
    }
}

#[test]
fn the_documented_examples_hold() {
    let (_t, d) = project(&[
        (
            "requirements.txt",
            "# dates\npython-dateutil==2.9.0.post0\ntomli>=1.1; python_version < \"3.11\"\n-r requirements-dev.txt          # inside the project: read\n",
        ),
        ("requirements-dev.txt", "pytest-timeout\n"),
    ]);
    assert_eq!(read_declared(&d).unwrap().requirements.len(), 3);
    let r = refusals(&[(
        "requirements.txt",
        "requests @ https://example.invalid/requests-2.0.whl\n-e ../x\n--index-url https://example.invalid/simple\n-r ../../etc/x\n",
    )]);
    let shown = PackagesError::Refused(r).to_string();
    let doc = include_str!("../../../../docs/packages.md");
    assert!(doc.contains(&shown), "docs/packages.md shows a different refusal:\n{shown}");
}

#[test]
fn pip_compile_output_is_accepted() {
    let text = "#\n# This file is autogenerated by pip-compile\n#\nsix==1.16.0 \\\n    --hash=sha256:1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926 \\\n    --hash=sha256:8abb2f1d86890a2dfb989f9a77cfcfd3e47c2a354b01111771326f8aa26e0254\n    # via python-dateutil\n";
    let (_t, d) = project(&[("requirements.txt", text)]);
    let declared = read_declared(&d).unwrap();
    assert_eq!(declared.requirements.len(), 1);
    assert_eq!(declared.requirements[0].hashes.len(), 2);
}

#[test]
fn comments_and_continuations_make_logical_lines() {
    let text = "# top\nsix==1.16.0  # pinned\n\nrequests \\\n  >=2\nurl#frag\n";
    let lines: Vec<String> = logical_lines(text).into_iter().map(|(_, l)| l).collect();
    assert_eq!(lines, vec!["six==1.16.0", "requests   >=2", "url#frag"]);
}

fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Dir) {
    let t = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = t.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let d = Dir::open(t.path()).unwrap();
    (t, d)
}

fn refusals(files: &[(&str, &str)]) -> Vec<Refusal> {
    let (_t, d) = project(files);
    match read_declared(&d) {
        Err(PackagesError::Refused(r)) => r,
        other => panic!("{other:?}"),
    }
}

#[test]
fn includes_inside_the_project_are_read_once_and_cycles_refused() {
    let (_t, d) = project(&[
        ("requirements.txt", "-r reqs/base.txt\n-r reqs/base.txt\n-c pins.txt\nsix\n--pre\n"),
        ("reqs/base.txt", "-r ../reqs/more.txt\nattrs>=22\n"),
        ("reqs/more.txt", "idna\n"),
        ("pins.txt", "six==1.16.0\n"),
    ]);
    let declared = read_declared(&d).unwrap();
    let names: Vec<&str> = declared.requirements.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, vec!["idna", "attrs", "six"]);
    assert_eq!(declared.constraints[0].line(), "six==1.16.0");
    let txt = declared.requirements_txt();
    assert!(txt.contains("--pre\n-c constraints.txt\nattrs>=22\nidna\nsix\n"), "{txt}");

    let r = refusals(&[("requirements.txt", "-r a.txt\n"), ("a.txt", "-r requirements.txt\nsix\n")]);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].file, "a.txt");
    assert!(r[0].reason.contains("includes itself"), "{r:?}");

    let r = refusals(&[("requirements.txt", "-r ../../etc/x\n-r missing.txt\nsix\n-e .\n")]);
    assert_eq!(r.len(), 3, "{r:?}");
    assert!(r[0].reason.contains("outside the project"), "{r:?}");
    assert!(r[1].reason.contains("does not exist"), "{r:?}");
    assert_eq!(r[2].spec, "-e .");
}

#[test]
fn a_linked_include_or_manifest_is_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.txt"), "evil @ https://example.invalid/e.whl\n").unwrap();
    let (t, d) = project(&[("requirements.txt", "-r x.txt\n")]);
    std::os::unix::fs::symlink(outside.path().join("x.txt"), t.path().join("x.txt")).unwrap();
    let r = match read_declared(&d) {
        Err(PackagesError::Refused(r)) => r,
        other => panic!("{other:?}"),
    };
    assert!(r[0].reason.contains("not a plain file"), "{r:?}");

    let (t, d) = project(&[]);
    std::os::unix::fs::symlink(outside.path().join("x.txt"), t.path().join("requirements.txt")).unwrap();
    assert!(matches!(read_declared(&d), Err(PackagesError::BadManifest { .. })));
}

#[test]
fn pyproject_dependencies_and_extras_are_read_without_the_project_itself() {
    let toml = r#"
[project]
name = "My_App"
dependencies = ["python-dateutil>=2.8", "requests @ https://example.invalid/r.whl"]
[project.optional-dependencies]
test = ["pytest-timeout", "my-app[extra]"]
"#;
    let r = refusals(&[("pyproject.toml", toml)]);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].file, "pyproject.toml");
    assert!(r[0].reason.contains("direct URLs"));
    let (_t, d) = project(&[("pyproject.toml", &toml.replace(", \"requests @ https://example.invalid/r.whl\"", ""))]);
    let names: Vec<String> = read_declared(&d).unwrap().requirements.iter().map(|r| r.name.clone()).collect();
    assert_eq!(names, vec!["python-dateutil", "pytest-timeout"]);
    // requirements.txt wins over pyproject.toml; no manifest declares nothing.
    let (_t, d) = project(&[("requirements.txt", "six\n"), ("pyproject.toml", toml)]);
    assert_eq!(read_declared(&d).unwrap().requirements.len(), 1);
    let (_t, d) = project(&[]);
    assert_eq!(read_declared(&d).unwrap(), Declared::default());
    let (_t, d) = project(&[("pyproject.toml", "[project\n")]);
    assert!(matches!(read_declared(&d), Err(PackagesError::BadManifest { .. })));
}

#[test]
fn the_key_follows_the_normalized_set_and_the_interpreter() {
    let key = |files: &[(&str, &str)], v: &str, sdists: bool| {
        let (_t, d) = project(files);
        read_declared(&d).unwrap().key(v, "cp", sdists)
    };
    let a = key(&[("requirements.txt", "six==1.16.0\nattrs\n")], "3.11", false);
    assert_eq!(a, key(&[("requirements.txt", "# c\nATTRS\nsix == 1.16.0\n")], "3.11", false));
    assert_ne!(a, key(&[("requirements.txt", "six==1.16.0\nattrs\n")], "3.12", false));
    assert_ne!(a, key(&[("requirements.txt", "six==1.16.0\nattrs\n")], "3.11", true));
    assert_ne!(a, key(&[("requirements.txt", "six==1.15.0\nattrs\n")], "3.11", false));
    assert_eq!(a.len(), 64);
}

fn target() -> Target {
    Target { python: "/usr/bin/python3".into(), version: "3.11".into(), implementation: "cp".into() }
}

#[test]
fn pip_failures_are_told_apart() {
    let missing = "ERROR: Could not find a version that satisfies the requirement nosuch-pkg==1.0 (from versions: none)\nERROR: No matching distribution found for nosuch-pkg==1.0\n";
    assert_eq!(missing_name(missing).as_deref(), Some("nosuch-pkg"));
    let e = classify(missing, &target(), Some(None)).to_string();
    assert!(e.contains("`nosuch-pkg` does not exist"), "{e}");
    let e = classify(missing, &target(), Some(Some("1.0, 0.9".into()))).to_string();
    assert!(e.contains("only a source distribution exists; an admin can allow sdists with"), "{e}");
    assert!(e.contains("allow_sdists = true"), "{e}");
    let some = "ERROR: Could not find a version that satisfies the requirement pyperclip==1.8.2 (from versions: 1.10.0, 1.11.0)\nERROR: No matching distribution found for pyperclip==1.8.2\n";
    let e = classify(some, &target(), Some(Some("1.11.0, 1.10.0, 1.8.2".into()))).to_string();
    assert!(e.contains("`pyperclip` 1.8.2 has no wheel"), "{e}");
    assert!(e.contains("only a source distribution exists; an admin can allow sdists with"), "{e}");
    assert!(e.contains("(1.10.0, 1.11.0)"), "{e}");
    let e =
        classify(&some.replace("==1.8.2", ">=9"), &target(), Some(Some("1.11.0, 1.10.0, 1.8.2".into()))).to_string();
    assert!(e.contains("the versions that have one are 1.10.0, 1.11.0"), "{e}");
    let old = "ERROR: Ignored the following versions that require a different python version: 1.21.2 Requires-Python >=3.7,<3.11; 1.21.3 Requires-Python >=3.7,<3.11\nERROR: Could not find a version that satisfies the requirement numpy==1.21.2 (from versions: 1.23.2, 1.26.4)\nERROR: No matching distribution found for numpy==1.21.2\n";
    let e = classify(old, &target(), Some(Some("1.26.4, 1.23.2, 1.21.2".into()))).to_string();
    assert!(e.contains("`numpy` 1.21.2 does not support the sandbox's Python 3.11"), "{e}");
    let offline = "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/six/\nERROR: No matching distribution found for six\n";
    assert!(matches!(classify(offline, &target(), None), PackagesError::Unreachable(_)));
    let other = "ERROR: Something else broke\n";
    assert!(classify(other, &target(), None).to_string().contains("Something else broke"));
}

#[tokio::test]
async fn a_refused_project_never_looks_for_an_interpreter_or_pip() {
    let (_t, d) = project(&[("requirements.txt", "git+https://example.invalid/x.git\n")]);
    let cache = tempfile::tempdir().unwrap();
    let mut settings = Settings::new(cache.path().to_path_buf());
    settings.host_env = vec![("PATH".into(), "/nonexistent".into())];
    let env = vec![("HOME".to_string(), "/home/build".to_string())];
    let e = prepare(&d, &settings, &env, &CancellationToken::new()).await.unwrap_err();
    assert!(matches!(e, PackagesError::Refused(_)), "{e}");
    assert!(std::fs::read_dir(cache.path()).unwrap().next().is_none(), "nothing was staged");
}

#[tokio::test]
async fn a_project_that_declares_nothing_gets_a_venv_and_no_fetch() {
    let (_t, d) = project(&[("main.py", "print(1)\n")]);
    let cache = tempfile::tempdir().unwrap();
    let mut settings = Settings::new(cache.path().to_path_buf());
    settings.host_env = vec![("PATH".into(), "/nonexistent".into())];
    let env = vec![("HOME".to_string(), "/home/build".to_string())];
    let p = prepare(&d, &settings, &env, &CancellationToken::new()).await.unwrap();
    assert!(!p.fetched);
    assert_eq!(p.setup.len(), 1);
    assert_eq!(p.setup[0][1..4], ["-m", "venv", "--system-site-packages"]);
    assert!(p.setup[0][0].starts_with('/'), "an absolute interpreter: {:?}", p.setup[0]);
    let venv = format!("/home/build/.venvs/{}", &p.key[..16]);
    assert!(p.env.contains(&("PATH".into(), format!("{venv}/bin"))), "{:?}", p.env);
    assert!(p.env.contains(&("VIRTUAL_ENV".into(), venv)));
    assert!(p.env.contains(&("PIP_NO_INDEX".into(), "1".into())));
}

/// Lines of a requirements file: names, specifiers, markers, options, URLs, paths, junk.
fn hostile_line() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[A-Za-z0-9._-]{1,12}",
        Just("==".to_string()),
        Just(">=1.0".to_string()),
        Just("[x]".to_string()),
        Just(" @ ".to_string()),
        Just("://".to_string()),
        Just("git+".to_string()),
        Just("file:".to_string()),
        Just("../".to_string()),
        Just("/".to_string()),
        Just("\\".to_string()),
        Just("; python_version < '3.12'".to_string()),
        Just(" --hash=sha256:ab".to_string()),
        Just("-e ".to_string()),
        Just("-r ".to_string()),
        Just("${X}".to_string()),
        Just("\"".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just(",".to_string()),
        Just(" ".to_string()),
        "\\PC{0,4}",
    ];
    proptest::collection::vec(piece, 0..8).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_parser_never_panics_and_accepts_no_url_or_path(line in hostile_line()) {
        if let Ok(Line::Requirement(r)) = parse_line(&line) {
            let rebuilt = r.line();
            prop_assert!(!rebuilt.contains("://"), "{line:?} → {rebuilt}");
            prop_assert!(!rebuilt.contains('@'), "{line:?} → {rebuilt}");
            prop_assert!(!rebuilt.contains('/') && !rebuilt.contains('\\'), "{line:?} → {rebuilt}");
            prop_assert!(!rebuilt.contains("file:") && !rebuilt.contains("${"), "{line:?} → {rebuilt}");
            // What was accepted parses again to itself.
            prop_assert_eq!(parse_line(&rebuilt), Ok(Line::Requirement(r)));
        }
        if let Ok(r) = parse_requirement(&line) {
            let rebuilt = r.line();
            prop_assert!(!rebuilt.contains("://") && !rebuilt.contains('@') && !rebuilt.contains('/'), "{line:?} → {rebuilt}");
        }
    }

    #[test]
    fn any_text_as_a_requirements_file_never_panics(text in "\\PC{0,200}") {
        for (_, line) in logical_lines(&text) {
            let _ = parse_line(&line);
        }
    }
}
