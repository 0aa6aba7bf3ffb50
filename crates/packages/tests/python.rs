//! Python dependencies end to end: a real registry package fetched by the host's pip into the
//! cache (cold, then warm with no host tool), installed offline into a venv inside the
//! bubblewrap sandbox with the network off, and used by a real pytest run; hostile specs refused
//! before pip could run. Skips, saying why, only when the sandbox or the registry is unreachable.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // test code: a failed unwrap is a failed test; measures and skips go to the log

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use wright_packages::{Ecosystem, PackagesError, Settings, prepare};
mod support;

/// A folder the sandbox user can walk into (tempdirs are private to root).
fn open_dir(path: &Path) {
    std::fs::create_dir_all(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A `python3` that records each call in `<dir>/called` and fails, as the only thing on the PATH.
fn recording_python(dir: &Path) -> (Vec<(String, String)>, PathBuf) {
    let bin = dir.join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let mark = dir.join("called");
    let script = format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n", mark.display());
    std::fs::write(bin.join("python3"), script).unwrap();
    std::fs::set_permissions(bin.join("python3"), std::fs::Permissions::from_mode(0o755)).unwrap();
    (vec![("PATH".into(), bin.display().to_string())], mark)
}

fn settings(cache: &Path, host_env: Vec<(String, String)>) -> Settings {
    let mut s = Settings::new(cache.to_path_buf());
    s.host_env = host_env;
    s.fetch_timeout = Duration::from_secs(300);
    s
}

fn sandbox_env(home: &Path) -> Vec<(String, String)> {
    vec![
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("HOME".into(), home.display().to_string()),
        ("TMPDIR".into(), home.display().to_string()),
        ("LANG".into(), "C.UTF-8".into()),
    ]
}

#[tokio::test]
async fn a_registry_package_is_fetched_once_and_installed_offline_in_the_sandbox() {
    let t = tempfile::tempdir().unwrap();
    open_dir(t.path());
    let (project, home, cache) = (t.path().join("project"), t.path().join("home"), t.path().join("cache"));
    for d in [&project, &home, &cache] {
        open_dir(d);
    }
    std::fs::write(project.join("requirements.txt"), "python-dateutil==2.9.0.post0\n").unwrap();
    std::fs::write(
        project.join("test_dates.py"),
        "from dateutil.relativedelta import relativedelta\nimport datetime\n\n\
         def test_a_month_later():\n    d = datetime.date(2024, 1, 31) + relativedelta(months=1)\n    assert d == datetime.date(2024, 2, 29)\n",
    )
    .unwrap();
    assert_eq!(Ecosystem::of_project(&project), Some(Ecosystem::Python));
    let env = sandbox_env(&home);
    let cancel = CancellationToken::new();

    // Cold: the host's pip fetches into the cache.
    let started = Instant::now();
    let cold = match prepare(Ecosystem::Python, &project, &settings(&cache, std::env::vars().collect()), &env, &cancel)
        .await
    {
        Ok(p) => p,
        Err(PackagesError::Unreachable(why)) => {
            println!("SKIPPED: the package registry is unreachable from this machine: {why}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let cold_time = started.elapsed();
    assert!(cold.fetched);
    assert_eq!(cold.packages, vec!["python-dateutil==2.9.0.post0"]);
    let entry = cache.join("python").join(&cold.key);
    let wheels: Vec<String> = std::fs::read_dir(entry.join("wheelhouse"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(wheels.iter().any(|w| w.starts_with("python_dateutil-2.9.0.post0") && w.ends_with(".whl")), "{wheels:?}");
    assert!(wheels.iter().any(|w| w.starts_with("six-")), "its dependency too: {wheels:?}");
    let clean = std::fs::read_to_string(entry.join("requirements.txt")).unwrap();
    assert!(clean.ends_with("python-dateutil==2.9.0.post0\n"), "{clean}");

    // Warm: the same set is a hit, and no host tool runs (the only python3 on the PATH records).
    let (fake_env, mark) = recording_python(t.path());
    let started = Instant::now();
    let warm = prepare(Ecosystem::Python, &project, &settings(&cache, fake_env), &env, &cancel).await.unwrap();
    let warm_time = started.elapsed();
    assert!(!warm.fetched);
    assert_eq!((&warm.key, &warm.setup, &warm.env), (&cold.key, &cold.setup, &cold.env));
    assert!(!mark.exists(), "a cache hit ran a host python");
    println!(
        "python prepare, one dependency (python-dateutil + six): cold {:.2}s, warm {:.1}ms, cache entry {} bytes",
        cold_time.as_secs_f64(),
        warm_time.as_secs_f64() * 1000.0,
        cold.bytes
    );
    assert!(warm_time < Duration::from_secs(1), "warm took {warm_time:?}");

    // In the sandbox, network off: the venv, the offline install, a real pytest run.
    let runner = support::sandbox(&[&project, &home], std::slice::from_ref(&cache));
    let run_env = cold.env_over(&env);
    assert_eq!(cold.setup.len(), 2, "{:?}", cold.setup);
    let started = Instant::now();
    for argv in &cold.setup {
        let o = support::run_in(&runner, argv, &project, &run_env).await;
        assert!(o.success(), "{argv:?}: {}", support::shown(&o));
    }
    println!("setup in the sandbox (venv + offline install): {:.2}s", started.elapsed().as_secs_f64());
    let py = |code: &str| vec!["python3".to_string(), "-c".to_string(), code.to_string()];
    let o = support::run_in(
        &runner,
        &py("import dateutil, sys; print(dateutil.__file__); print(sys.prefix)"),
        &project,
        &run_env,
    )
    .await;
    assert!(o.success(), "{}", support::shown(&o));
    assert!(o.stdout.render().contains("/.venvs/"), "dateutil comes from the venv: {}", support::shown(&o));
    // The network is off: the sandbox's network namespace has only loopback.
    let o = support::run_in(&runner, &py("print(open('/proc/net/dev').read())"), &project, &run_env).await;
    let ifaces: Vec<String> = o
        .stdout
        .render()
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect();
    assert_eq!(ifaces, vec!["lo"], "{}", support::shown(&o));
    let argv: Vec<String> = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"].map(String::from).to_vec();
    let o = support::run_in(&runner, &argv, &project, &run_env).await;
    assert!(o.success(), "{}", support::shown(&o));
    assert!(o.stdout.render().contains("1 passed"), "{}", support::shown(&o));
}

#[tokio::test]
async fn hostile_specs_are_refused_before_any_host_tool_runs() {
    let t = tempfile::tempdir().unwrap();
    let (fake_env, mark) = recording_python(t.path());
    let home = t.path().join("home");
    let cases: &[(&str, &str, &str)] = &[
        ("requirements.txt", "requests @ https://example.invalid/requests-2.0.whl\n", "direct URLs"),
        ("requirements.txt", "https://example.invalid/pkg-1.0.tar.gz\n", "direct URLs"),
        ("requirements.txt", "git+https://example.invalid/x.git#egg=x\n", "version-control"),
        ("requirements.txt", "six\n-e ../x\n", "editable"),
        ("requirements.txt", "--index-url https://example.invalid/simple\nsix\n", "where packages come from"),
        ("requirements.txt", "-r ../../etc/x\n", "outside the project"),
        ("requirements.txt", "pkg @ file:///etc/passwd\n", "local files"),
        ("requirements.txt", "file:../pkg\n", "local files"),
        (
            "pyproject.toml",
            "[project]\nname = \"a\"\ndependencies = [\"x @ git+ssh://example.invalid/x\"]\n",
            "version-control",
        ),
    ];
    for (i, (file, text, why)) in cases.iter().enumerate() {
        let project = t.path().join(format!("p{i}")).join("inner");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join(file), text).unwrap();
        let cache = t.path().join(format!("cache{i}"));
        let got = prepare(
            Ecosystem::Python,
            &project,
            &settings(&cache, fake_env.clone()),
            &sandbox_env(&home),
            &CancellationToken::new(),
        )
        .await;
        match got {
            Err(PackagesError::Refused(r)) => {
                assert!(r.iter().any(|r| r.reason.contains(why) && r.file == *file), "{text}: {r:?}");
                println!("refused: {}", PackagesError::Refused(r));
            }
            other => panic!("{text}: {other:?}"),
        }
        assert!(!mark.exists(), "{text}: a host python ran");
        assert!(!cache.exists() || std::fs::read_dir(&cache).unwrap().next().is_none(), "{text}: something was staged");
    }

    // The same recording python is called for an accepted spec: the proof above is not vacuous,
    // and a host without pip says so.
    let project = t.path().join("ok");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("requirements.txt"), "six==1.16.0\n").unwrap();
    let cache = t.path().join("cache-ok");
    let got = prepare(
        Ecosystem::Python,
        &project,
        &settings(&cache, fake_env),
        &sandbox_env(&home),
        &CancellationToken::new(),
    )
    .await;
    assert!(matches!(got, Err(PackagesError::Missing("pip"))), "{got:?}");
    assert!(std::fs::read_to_string(&mark).unwrap().contains("-m pip --version"));
    let leftovers: Vec<_> = std::fs::read_dir(cache.join("python")).unwrap().collect();
    assert!(leftovers.is_empty(), "a failed fetch leaves no staging folder: {leftovers:?}");
}

#[tokio::test]
async fn a_package_that_does_not_exist_is_named() {
    let t = tempfile::tempdir().unwrap();
    let project = t.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("requirements.txt"), "wright-no-such-package-zq7==1.0\n").unwrap();
    let got = prepare(
        Ecosystem::Python,
        &project,
        &settings(&t.path().join("cache"), std::env::vars().collect()),
        &sandbox_env(&t.path().join("home")),
        &CancellationToken::new(),
    )
    .await;
    match got {
        Err(PackagesError::Unreachable(why)) => println!("SKIPPED: the package registry is unreachable: {why}"),
        Err(e @ PackagesError::Fetch { .. }) => {
            let text = e.to_string();
            assert!(text.contains("`wright-no-such-package-zq7` does not exist"), "{text}");
            println!("{text}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_source_only_release_needs_an_admin_and_then_builds_in_the_sandbox() {
    let t = tempfile::tempdir().unwrap();
    open_dir(t.path());
    let (project, home, cache) = (t.path().join("project"), t.path().join("home"), t.path().join("cache"));
    for d in [&project, &home, &cache] {
        open_dir(d);
    }
    // pyperclip 1.8.2 was published as a source distribution only.
    std::fs::write(project.join("requirements.txt"), "pyperclip==1.8.2\n").unwrap();
    let env = sandbox_env(&home);
    let cancel = CancellationToken::new();
    let mut s = settings(&cache, std::env::vars().collect());
    match prepare(Ecosystem::Python, &project, &s, &env, &cancel).await {
        Err(PackagesError::Unreachable(why)) => {
            println!("SKIPPED: the package registry is unreachable: {why}");
            return;
        }
        Err(e @ PackagesError::Fetch { .. }) => {
            let text = e.to_string();
            assert!(text.contains("only a source distribution exists; an admin can allow sdists with"), "{text}");
            println!("{text}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read_dir(cache.join("python")).unwrap().count(), 0, "nothing kept from a failed fetch");

    s.allow_sdists = true;
    let p = match prepare(Ecosystem::Python, &project, &s, &env, &cancel).await {
        Ok(p) => p,
        Err(e @ PackagesError::Fetch { .. }) if e.to_string().contains("sandbox runs Python") => {
            println!("SKIPPED the sdist half: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    assert!(p.fetched);
    let runner = support::sandbox(&[&project, &home], std::slice::from_ref(&cache));
    let run_env = p.env_over(&env);
    for argv in &p.setup {
        let o = support::run_in(&runner, argv, &project, &run_env).await;
        assert!(o.success(), "{argv:?}: {}", support::shown(&o));
    }
    let argv: Vec<String> =
        ["python3", "-c", "import pyperclip; print(pyperclip.__version__)"].map(String::from).to_vec();
    let o = support::run_in(&runner, &argv, &project, &run_env).await;
    assert!(o.success() && o.stdout.render().trim() == "1.8.2", "{}", support::shown(&o));
}

/// A `python3` that plays pip: says it has pip, records a download's arguments, folder and
/// requirements file in `<dir>/called`, then leaves a wheel (or sleeps first, when
/// `<dir>/slow` exists).
fn playing_pip(dir: &Path) -> (Vec<(String, String)>, PathBuf) {
    let bin = dir.join("pipbin");
    std::fs::create_dir_all(&bin).unwrap();
    let mark = dir.join("called");
    let slow = dir.join("slow");
    let script = format!(
        r#"#!/bin/sh
PATH=/usr/bin:/bin
if [ "$1 $2 $3" = "-m pip --version" ]; then echo "pip 0 from /fake (python 3.0)"; exit 0; fi
echo "ARGS $*" >> '{mark}'
echo "CWD $(pwd)" >> '{mark}'
prev=""
for a in "$@"; do
  if [ "$prev" = "-r" ]; then cat "$a" >> '{mark}'; fi
  if [ "$prev" = "--dest" ]; then dest="$a"; fi
  prev="$a"
done
if [ -f '{slow}' ]; then sleep 30; fi
touch "$dest/fakepkg-1.0-py3-none-any.whl"
"#,
        mark = mark.display(),
        slow = slow.display()
    );
    std::fs::write(bin.join("python3"), script).unwrap();
    std::fs::set_permissions(bin.join("python3"), std::fs::Permissions::from_mode(0o755)).unwrap();
    (vec![("PATH".into(), bin.display().to_string())], mark)
}

#[tokio::test]
async fn pip_reads_only_the_clean_file_in_a_staging_folder_and_targets_the_sandbox_python() {
    let t = tempfile::tempdir().unwrap();
    let (host_env, mark) = playing_pip(t.path());
    let project = t.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("requirements.txt"), "Six == 1.16.0   # pinned\n--pre\n-r more.txt\n").unwrap();
    std::fs::write(project.join("more.txt"), "attrs>=22 ; python_version >= '3.8'\n").unwrap();
    // The project's own pip config is never in reach of the host's pip.
    std::fs::write(project.join("pip.conf"), "[global]\nindex-url = https://example.invalid/simple\n").unwrap();
    let cache = t.path().join("cache");
    let p = prepare(
        Ecosystem::Python,
        &project,
        &settings(&cache, host_env),
        &sandbox_env(&t.path().join("home")),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(p.fetched);
    let log = std::fs::read_to_string(&mark).unwrap();
    let args = log.lines().find_map(|l| l.strip_prefix("ARGS ")).unwrap();
    for want in
        ["-m pip download", "--no-input", "--disable-pip-version-check", "--only-binary=:all:", "--implementation cp"]
    {
        assert!(args.contains(want), "{want} missing from {args}");
    }
    assert!(args.contains("--python-version 3.") && args.contains("--abi cp3"), "{args}");
    let cwd = log.lines().find_map(|l| l.strip_prefix("CWD ")).unwrap();
    assert!(cwd.starts_with(&cache.join("python/.staging-").display().to_string()), "pip ran in {cwd}");
    assert!(args.contains(&format!("--dest {cwd}/wheelhouse")), "{args}");
    let clean: Vec<&str> = log.lines().filter(|l| !l.starts_with("ARGS ") && !l.starts_with("CWD ")).collect();
    assert_eq!(
        clean,
        vec![
            "# written by wright from the project's checked requirements",
            "--pre",
            "attrs>=22; python_version >= \"3.8\"",
            "six==1.16.0"
        ]
    );
    let entry = cache.join("python").join(&p.key);
    assert!(entry.join("wheelhouse/fakepkg-1.0-py3-none-any.whl").is_file());
    assert_eq!(p.packages, vec!["attrs>=22; python_version >= \"3.8\"", "six==1.16.0"]);
    assert!(p.setup[1].contains(&"--no-index".to_string()), "{:?}", p.setup);
}

#[tokio::test]
async fn a_slow_fetch_is_stopped_by_its_time_limit_and_by_cancel() {
    let t = tempfile::tempdir().unwrap();
    let (host_env, _) = playing_pip(t.path());
    std::fs::write(t.path().join("slow"), "").unwrap();
    let project = t.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("requirements.txt"), "six\n").unwrap();
    let cache = t.path().join("cache");
    let env = sandbox_env(&t.path().join("home"));

    let mut s = settings(&cache, host_env);
    s.fetch_timeout = Duration::from_secs(1);
    let started = Instant::now();
    let got = prepare(Ecosystem::Python, &project, &s, &env, &CancellationToken::new()).await;
    assert!(matches!(got, Err(PackagesError::Timeout("pip", 1))), "{got:?}");
    assert!(started.elapsed() < Duration::from_secs(10));

    s.fetch_timeout = Duration::from_secs(300);
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        stop.cancel();
    });
    let started = Instant::now();
    let got = prepare(Ecosystem::Python, &project, &s, &env, &cancel).await;
    assert!(matches!(got, Err(PackagesError::Cancelled)), "{got:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    let left: Vec<_> = std::fs::read_dir(cache.join("python")).unwrap().collect();
    assert!(left.is_empty(), "nothing is left in the cache: {left:?}");
}
