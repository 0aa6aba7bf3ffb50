//! Go modules end to end, with the real host `go` (Debian's 1.19 here) and the real bubblewrap
//! sandbox: a module served from a local proxy folder in the real GOPROXY layout is fetched
//! into the cache once, then a project importing it runs `go test` in the sandbox with the
//! network off. Hostile `go.mod` files are refused before any `go` runs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use wright_packages::{Ecosystem, PackagesError, Prepared, Settings, prepare};
use wright_sandbox::{CommandRunner, CommandSpec};

mod support;

const GO: &str = "/usr/bin/go";

fn require_go() {
    let ok = std::process::Command::new(GO).arg("version").output().is_ok_and(|o| o.status.success());
    assert!(ok, "these tests need Go at {GO} (Debian: apt-get install golang-go)");
}

/// A folder the sandbox identity can walk into (tempdirs are 0700, and as root commands run as
/// another user).
fn base() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `example.com/greet` at `v1.2.3`, served from `<dir>/proxy` as a module proxy serves it:
/// `@v/list`, `.info`, `.mod` and a `.zip` whose entries start with `module@version/`.
fn local_proxy(dir: &Path) -> PathBuf {
    let proxy = dir.join("proxy");
    let v = proxy.join("example.com/greet/@v");
    let go_mod = "module example.com/greet\n\ngo 1.18\n";
    write(&v.join("list"), "v1.2.3\n");
    write(&v.join("v1.2.3.info"), r#"{"Version":"v1.2.3","Time":"2024-01-02T03:04:05Z"}"#);
    write(&v.join("v1.2.3.mod"), go_mod);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(v.join("v1.2.3.zip")).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    for (name, text) in [
        ("go.mod", go_mod),
        (
            "greet.go",
            "package greet\n\n// Hello greets name.\nfunc Hello(name string) string { return \"hello, \" + name }\n",
        ),
    ] {
        zip.start_file(format!("example.com/greet@v1.2.3/{name}"), options).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
    proxy
}

fn settings(cache: &Path, path: &str, proxy: &Path) -> Settings {
    let mut s = Settings::new(cache.to_path_buf());
    s.fetch_timeout = Duration::from_secs(120);
    s.host_env = vec![
        ("PATH".into(), path.into()),
        ("HOME".into(), cache.parent().unwrap().join("host-home").display().to_string()),
        ("GOPROXY".into(), format!("file://{}", proxy.display())),
        ("GOSUMDB".into(), "off".into()),
    ];
    s
}

fn project(dir: &Path, name: &str, go_mod: &str) -> PathBuf {
    let root = dir.join(name);
    write(&root.join("go.mod"), go_mod);
    write(
        &root.join("app.go"),
        "package app\n\nimport \"example.com/greet\"\n\nfunc Greeting() string { return greet.Hello(\"wright\") }\n",
    );
    write(
        &root.join("app_test.go"),
        "package app\n\nimport \"testing\"\n\nfunc TestGreeting(t *testing.T) {\n\tif got := Greeting(); got != \"hello, wright\" {\n\t\tt.Fatalf(\"got %q\", got)\n\t}\n}\n",
    );
    root
}

const APP_MOD: &str = "module example.com/app\n\ngo 1.19\n\nrequire example.com/greet v1.2.3\n";

fn sandbox_env(home: &Path, tmp: &Path) -> Vec<(String, String)> {
    vec![
        ("HOME".into(), home.display().to_string()),
        ("TMPDIR".into(), tmp.display().to_string()),
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
    ]
}

async fn go_test_in_sandbox(
    root: &Path,
    home: &Path,
    tmp: &Path,
    cache: &Path,
    p: &Prepared,
) -> (bool, String, Duration) {
    let runner = support::sandbox(&[root, home, tmp], &[cache.to_path_buf()]);
    let env = p.env_over(&sandbox_env(home, tmp));
    // The plan runTests uses for a Go module: `go test -json ./...`, stderr merged.
    let plan = wright_testreport::detect(root, None).unwrap().unwrap();
    assert_eq!(plan.format, wright_testreport::Format::GoTestJson);
    let mut spec = CommandSpec::new(plan.program.clone(), plan.args.clone(), root.to_path_buf(), env);
    spec.timeout = Duration::from_secs(300);
    let started = Instant::now();
    let o = runner.run(spec, &(), &CancellationToken::new()).await.unwrap();
    (o.success(), format!("{}\n{}", o.stdout.render(), o.stderr.render()), started.elapsed())
}

#[tokio::test]
async fn a_module_from_a_local_proxy_is_fetched_once_and_tested_offline_in_the_sandbox() {
    require_go();
    let dir = base();
    let proxy = local_proxy(dir.path());
    let cache = dir.path().join("cache");
    let s = settings(&cache, "/usr/local/bin:/usr/bin:/bin", &proxy);
    let root = project(dir.path(), "app", APP_MOD);
    let (home, tmp) = (dir.path().join("home"), dir.path().join("tmp"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let env = sandbox_env(&home, &tmp);
    let cancel = CancellationToken::new();

    let t = Instant::now();
    let cold = prepare(Ecosystem::Go, &root, &s, &env, &cancel).await.unwrap();
    let cold_time = t.elapsed();
    assert!(cold.fetched);
    assert_eq!(cold.packages, ["example.com/greet@v1.2.3"]);
    assert!(cold.setup.is_empty());
    let entry = cache.join("go").join(&cold.key);
    let download = entry.join("mod/cache/download/example.com/greet/@v");
    for f in ["v1.2.3.zip", "v1.2.3.mod", "v1.2.3.info"] {
        assert!(download.join(f).is_file(), "{f} is in the entry");
    }
    assert!(!entry.join("mod/example.com").exists(), "only the download cache is kept");
    let proxy_env = cold.env.iter().find(|(k, _)| k == "GOPROXY").unwrap();
    assert_eq!(proxy_env.1, format!("file://{}/mod/cache/download", entry.display()));
    let left: Vec<_> = std::fs::read_dir(cache.join("go")).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left.len(), 1, "no staging folder left: {left:?}");

    // Warm: a hit, even with the proxy gone.
    std::fs::remove_dir_all(&proxy).unwrap();
    let t = Instant::now();
    let warm = prepare(Ecosystem::Go, &root, &s, &env, &cancel).await.unwrap();
    let warm_time = t.elapsed();
    assert!(!warm.fetched);
    assert_eq!(warm.key, cold.key);

    // The real test run, in the sandbox with the network off, from the cache alone.
    let (ok, out, first) = go_test_in_sandbox(&root, &home, &tmp, &cache, &warm).await;
    assert!(ok, "{out}");
    assert!(out.contains(r#""Action":"pass","Package":"example.com/app","Test":"TestGreeting""#), "{out}");
    let report = wright_testreport::parse_go_test_json(&out).unwrap();
    assert_eq!((report.passed, report.failed, report.total), (1, 0, 1), "{report:?}");
    let (ok, out, second) = go_test_in_sandbox(&root, &home, &tmp, &cache, &warm).await;
    assert!(ok, "{out}");
    eprintln!(
        "go: prepare cold {cold_time:?}, warm {warm_time:?}; sandboxed go test first {first:?}, second {second:?}; \
         cache entry {} bytes",
        warm.bytes
    );
}

/// A fake `go` first on the host's PATH that records every call.
fn fake_go(dir: &Path) -> (String, PathBuf) {
    let bin = dir.join("fakebin");
    let marker = dir.join("go-was-called");
    write(&bin.join("go"), &format!("#!/bin/sh\necho \"$@\" >> {}\nexit 1\n", marker.display()));
    std::fs::set_permissions(bin.join("go"), std::fs::Permissions::from_mode(0o755)).unwrap();
    (format!("{}:/usr/bin:/bin", bin.display()), marker)
}

#[tokio::test]
async fn hostile_go_mods_are_refused_before_go_runs() {
    let dir = base();
    let (path, marker) = fake_go(dir.path());
    let cache = dir.path().join("cache");
    let s = settings(&cache, &path, dir.path());
    let env = sandbox_env(&dir.path().join("home"), &dir.path().join("tmp"));
    let cancel = CancellationToken::new();
    let cases: &[(&str, &str, &str)] = &[
        ("escape", "module example.com/app\n\nreplace example.com/x => ../../etc\n", "outside the project"),
        ("toolchain", "module example.com/app\n\ngo 1.19\n\ntoolchain go1.99\n", "toolchain"),
        ("url", "module example.com/app\n\nrequire https://evil.example/mod v1.0.0\n", "looks like a URL"),
        ("branch", "module example.com/app\n\nrequire github.com/a/b master\n", "not a semantic version"),
    ];
    for (name, go_mod, why) in cases {
        let root = project(dir.path(), name, go_mod);
        match prepare(Ecosystem::Go, &root, &s, &env, &cancel).await {
            Err(PackagesError::Refused(r)) => {
                assert_eq!(r.len(), 1, "{name}: {r:?}");
                assert_eq!(r[0].file, "go.mod");
                assert!(r[0].reason.contains(why), "{name}: {}", r[0].reason);
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    // A go.mod that is a link out of the project is not read.
    let root = dir.path().join("linked");
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("go.mod")).unwrap();
    let e = prepare(Ecosystem::Go, &root, &s, &env, &cancel).await.unwrap_err();
    assert!(matches!(&e, PackagesError::BadManifest { file, .. } if file == "go.mod"), "{e}");
    assert!(e.to_string().contains("link"), "{e}");
    // A go.work beside a clean go.mod.
    let root = project(dir.path(), "work", APP_MOD);
    write(&root.join("go.work"), "go 1.19\n\nuse ../../\n");
    let e = prepare(Ecosystem::Go, &root, &s, &env, &cancel).await.unwrap_err();
    assert!(matches!(&e, PackagesError::Refused(r) if r[0].file == "go.work"), "{e}");
    assert!(!marker.exists(), "the host's go ran: {:?}", std::fs::read_to_string(&marker));
    assert!(!cache.join("go").exists() || std::fs::read_dir(cache.join("go")).unwrap().next().is_none());

    // Control: a clean go.mod does reach this fake go.
    let root = project(dir.path(), "clean", APP_MOD);
    assert!(prepare(Ecosystem::Go, &root, &s, &env, &cancel).await.is_err());
    assert!(marker.exists(), "the fake go is the one wright would run");
}

#[tokio::test]
async fn a_newer_go_line_is_refused_and_a_project_without_requires_gets_the_env() {
    require_go();
    let dir = base();
    let cache = dir.path().join("cache");
    let s = settings(&cache, "/usr/bin:/bin", dir.path());
    let env = sandbox_env(&dir.path().join("home"), &dir.path().join("tmp"));
    let cancel = CancellationToken::new();
    let root = project(dir.path(), "new", "module example.com/app\n\ngo 1.99\n");
    let e = prepare(Ecosystem::Go, &root, &s, &env, &cancel).await.unwrap_err();
    assert!(e.to_string().contains("newer than this machine's go1."), "{e}");
    assert!(e.to_string().contains("download a newer toolchain"), "{e}");

    let root = project(dir.path(), "plain", "module example.com/plain\n\ngo 1.19\n");
    let p = prepare(Ecosystem::Go, &root, &s, &env, &cancel).await.unwrap();
    assert!(p.packages.is_empty());
    let get = |k: &str| p.env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap_or_default();
    assert!(get("GOPROXY").starts_with("file://"));
    assert_eq!(get("GOFLAGS"), "-mod=mod");
    assert_eq!(get("GOSUMDB"), "off");
    assert_eq!(get("GOTOOLCHAIN"), "local");
    assert!(get("GOCACHE").starts_with(&dir.path().join("home").display().to_string()));
    assert!(Path::new(&get("PATH")).join("go").is_file());

    // No Go on the host: said so, by name.
    let none = settings(&cache, "/nonexistent-bin", dir.path());
    let e = prepare(Ecosystem::Go, &root, &none, &env, &cancel).await.unwrap_err();
    assert!(matches!(e, PackagesError::Missing("go")), "{e}");
}

#[tokio::test]
async fn a_missing_module_or_a_silent_proxy_is_said_plainly_and_leaves_nothing() {
    require_go();
    let dir = base();
    let proxy = local_proxy(dir.path());
    let cache = dir.path().join("cache");
    let s = settings(&cache, "/usr/bin:/bin", &proxy);
    let env = sandbox_env(&dir.path().join("home"), &dir.path().join("tmp"));
    let root = project(dir.path(), "nope", "module example.com/app\n\ngo 1.19\n\nrequire example.com/nope v1.0.0\n");
    let e = prepare(Ecosystem::Go, &root, &s, &env, &CancellationToken::new()).await.unwrap_err();
    eprintln!("{e}");
    assert!(e.to_string().contains("does not exist on the module proxy"), "{e}");
    assert!(e.to_string().contains("example.com/nope"), "{e}");
    assert_eq!(std::fs::read_dir(cache.join("go")).unwrap().count(), 0, "the staging folder was removed");

    // A proxy that does not answer (nothing listens on the port).
    let mut s = s;
    s.host_env.retain(|(k, _)| k != "GOPROXY");
    s.host_env.push(("GOPROXY".into(), "http://127.0.0.1:9".into()));
    let root = project(dir.path(), "offline", APP_MOD);
    let e = prepare(Ecosystem::Go, &root, &s, &env, &CancellationToken::new()).await.unwrap_err();
    eprintln!("{e}");
    assert!(matches!(&e, PackagesError::Unreachable(m) if m.contains("connection refused")), "{e}");
}

/// A `go` that answers its version and then hangs on `mod download`.
fn hanging_go(dir: &Path) -> String {
    let bin = dir.join("hangbin");
    write(&bin.join("go"), "#!/bin/sh\nif [ \"$1\" = env ]; then echo go1.19.8; exit 0; fi\nexec sleep 60\n");
    std::fs::set_permissions(bin.join("go"), std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:/usr/bin:/bin", bin.display())
}

#[tokio::test]
async fn a_fetch_that_hangs_is_stopped_by_its_timeout_or_a_cancel_and_leaves_nothing() {
    let dir = base();
    let cache = dir.path().join("cache");
    let mut s = settings(&cache, &hanging_go(dir.path()), dir.path());
    s.fetch_timeout = Duration::from_millis(500);
    let env = sandbox_env(&dir.path().join("home"), &dir.path().join("tmp"));
    let root = project(dir.path(), "hang", APP_MOD);
    let t = Instant::now();
    let e = prepare(Ecosystem::Go, &root, &s, &env, &CancellationToken::new()).await.unwrap_err();
    assert!(matches!(e, PackagesError::Timeout("go mod download", _)), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());

    s.fetch_timeout = Duration::from_secs(60);
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let t = Instant::now();
    let e = prepare(Ecosystem::Go, &root, &s, &env, &cancel).await.unwrap_err();
    assert!(matches!(e, PackagesError::Cancelled), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(std::fs::read_dir(cache.join("go")).unwrap().count(), 0, "no staging folder left");
}

#[tokio::test]
async fn a_module_replaced_by_a_folder_of_the_project_needs_no_proxy() {
    require_go();
    let dir = base();
    let cache = dir.path().join("cache");
    // No proxy at all: the module comes from the project's own folder.
    let s = settings(&cache, "/usr/bin:/bin", &dir.path().join("no-proxy"));
    let go_mod = format!("{APP_MOD}\nreplace example.com/greet => ./third_party/greet\n");
    let root = project(dir.path(), "local", &go_mod);
    write(&root.join("third_party/greet/go.mod"), "module example.com/greet\n\ngo 1.18\n");
    write(
        &root.join("third_party/greet/greet.go"),
        "package greet\n\nfunc Hello(name string) string { return \"hello, \" + name }\n",
    );
    let (home, tmp) = (dir.path().join("home"), dir.path().join("tmp"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let p = prepare(Ecosystem::Go, &root, &s, &sandbox_env(&home, &tmp), &CancellationToken::new()).await.unwrap();
    assert!(p.fetched);
    let (ok, out, _) = go_test_in_sandbox(&root, &home, &tmp, &cache, &p).await;
    assert!(ok, "{out}");

    // A failing test in the sandbox is read per test, with its line.
    write(
        &root.join("app_test.go"),
        "package app\n\nimport \"testing\"\n\nfunc TestOk(t *testing.T) {}\n\nfunc TestGreeting(t *testing.T) {\n\tt.Errorf(\"got %q\", Greeting())\n}\n",
    );
    let (ok, out, _) = go_test_in_sandbox(&root, &home, &tmp, &cache, &p).await;
    assert!(!ok, "{out}");
    let report = wright_testreport::parse_go_test_json(&out).unwrap();
    assert_eq!((report.passed, report.failed), (1, 1), "{report:?}");
    assert_eq!(report.errors[0].test, "example.com/app > TestGreeting");
    assert_eq!(report.errors[0].error, "app_test.go:8: got \"hello, wright\"");
    assert_eq!(report.errors[0].location.as_deref(), Some("app_test.go:8"));

    // The replacing folder's own requirements are checked too.
    write(
        &root.join("third_party/greet/go.mod"),
        "module example.com/greet\n\nrequire https://evil.example/x v1.0.0\n",
    );
    let e = prepare(Ecosystem::Go, &root, &s, &sandbox_env(&home, &tmp), &CancellationToken::new()).await.unwrap_err();
    assert!(matches!(&e, PackagesError::Refused(r) if r[0].file == "third_party/greet/go.mod"), "{e}");
}
