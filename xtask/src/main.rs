//! `cargo xtask`: the two commands a newcomer needs, on a machine that has only Rust and git.
//!
//! It checks what wright needs from the machine before cargo compiles anything (a missing
//! libclang otherwise shows up minutes later as a build-script panic), installs what is
//! missing with apt on Debian/Ubuntu after saying what and why, and on other systems prints
//! the exact packages and stops. Then it runs cargo. It downloads nothing itself.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line tool: printing is its job

use std::ffi::OsString;
use std::process::{Command, ExitCode};
use wright_prereq::{Host, Manager, Requirement, Stage, missing};

const HELP: &str = "\
cargo xtask: set up this machine for wright, then build and run it or test it.

Usage:
  cargo xtask run PROMPT [OPTIONS]   install what is missing, build wright (release) and run
                                     `wright run PROMPT [OPTIONS]` (see `wright run --help`)
  cargo xtask test [ARGS]            install what is missing, then `cargo test --workspace [ARGS]`
  cargo xtask install                install what is missing, then put `wright` in ~/.cargo/bin
  cargo xtask setup                  install what is missing for building, running and testing
  cargo xtask check                  say what is missing and how to get it; change nothing

Options (before the command's own arguments):
  --no-install   never install system packages: say what is missing and stop
  -h, --help     this text

System packages are installed with apt-get (as root, or through sudo) on Debian and Ubuntu;
on other systems the exact install command is printed instead.";

/// Why the launcher stopped: a message for the user and the exit code.
struct Stop(u8, String);

fn main() -> ExitCode {
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mut no_install = false;
    while let Some(first) = args.first().and_then(|a| a.to_str()) {
        match first {
            "--no-install" => no_install = true,
            "-h" | "--help" | "help" => {
                println!("{HELP}");
                return ExitCode::SUCCESS;
            }
            _ => break,
        }
        args.remove(0);
    }
    if args.is_empty() {
        eprintln!("{HELP}");
        return ExitCode::from(2);
    }
    let command = args.remove(0);
    let host = Host::from_env();
    let result = match command.to_str().unwrap_or("") {
        "run" => setup(&host, &[Stage::Build, Stage::Run], no_install).and_then(|_| run(args)),
        "test" => setup(&host, &[Stage::Build, Stage::Run, Stage::Test], no_install).and_then(|_| test(args)),
        "install" => setup(&host, &[Stage::Build, Stage::Run], no_install).and_then(|_| install()),
        "setup" => setup(&host, &[Stage::Build, Stage::Run, Stage::Test], no_install).map(|_| 0),
        "check" => check(&host),
        other => Err(Stop(2, format!("unknown command `{other}`; see `cargo xtask --help`"))),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Stop(code, message)) => {
            eprintln!("xtask: {message}");
            ExitCode::from(code)
        }
    }
}

/// `check`: every requirement, found or not; exit 1 when something is missing.
fn check(host: &Host) -> Result<u8, Stop> {
    let manager = Manager::detect(host);
    let mut lacking = Vec::new();
    for r in wright_prereq::REQUIREMENTS {
        let ok = host.has(r);
        if !ok {
            lacking.push(r);
        }
        println!("{} {:<15} {:<6} {}", if ok { "ok     " } else { "MISSING" }, r.name, stage(r.stage), r.why);
    }
    if lacking.is_empty() {
        println!("Everything wright needs is here.");
        return Ok(0);
    }
    println!();
    println!("{}", how_to_install(manager, &lacking, host.is_root()));
    Ok(1)
}

fn stage(s: Stage) -> &'static str {
    match s {
        Stage::Build => "build",
        Stage::Run => "run",
        Stage::Test => "tests",
    }
}

/// The command for this system, or the reason there is none.
fn how_to_install(manager: Option<Manager>, lacking: &[&Requirement], root: bool) -> String {
    match manager {
        Some(m) => {
            let packages = m.packages_for(lacking);
            let none: Vec<&str> = lacking.iter().filter(|r| m.packages(r).is_empty()).map(|r| r.name).collect();
            let mut text = if packages.is_empty() {
                String::new()
            } else {
                format!("On {} install them with:\n  {}", m.system(), m.install_command(&packages, root))
            };
            if !none.is_empty() {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&format!(
                    "{} has no package for: {} (wright's sandbox and tests need Linux; see docs/sandbox.md)",
                    m.name(),
                    none.join(", ")
                ));
            }
            text
        }
        None => {
            let names: Vec<&str> = lacking.iter().map(|r| r.name).collect();
            format!(
                "No package manager this launcher knows (apt-get, dnf, pacman, zypper, brew) is on PATH; \
                 install these with your system's tools: {}",
                names.join(", ")
            )
        }
    }
}

/// Make sure `stages`' requirements are met: say what is missing and why, install it with
/// apt where that is possible and allowed, and stop with the exact command otherwise.
fn setup(host: &Host, stages: &[Stage], no_install: bool) -> Result<(), Stop> {
    let lacking = missing(host, stages);
    if lacking.is_empty() {
        return Ok(());
    }
    let manager = Manager::detect(host);
    eprintln!("wright needs {} thing(s) this machine does not have yet:", lacking.len());
    for r in &lacking {
        eprintln!("  - {:<15} {}", r.name, r.why);
    }
    if no_install || manager != Some(Manager::Apt) {
        let why = if no_install { "--no-install was given" } else { "this launcher installs packages only with apt" };
        return Err(Stop(
            2,
            format!("{why}.\n{}\nThen run the same command again.", how_to_install(manager, &lacking, host.is_root())),
        ));
    }
    let packages = Manager::Apt.packages_for(&lacking);
    let sudo: &[&str] = if host.is_root() {
        &[]
    } else if host.find("sudo").is_some() {
        &["sudo"]
    } else {
        return Err(Stop(
            2,
            format!(
                "installing needs root, and sudo is not installed. As root, run:\n  {}\nThen run the same command again.",
                Manager::Apt.install_command(&packages, true)
            ),
        ));
    };
    eprintln!("Installing with apt-get (only these, and what they depend on): {}", packages.join(" "));
    apt(sudo, &["update", "-qq"])?;
    let mut install = vec!["install", "-y", "-qq"];
    install.extend(packages.iter().copied());
    apt(sudo, &install)?;
    let still = missing(host, stages);
    if !still.is_empty() {
        let names: Vec<&str> = still.iter().map(|r| r.name).collect();
        return Err(Stop(
            1,
            format!(
                "after installing, still missing: {} (set LIBCLANG_PATH to libclang's folder if it lives elsewhere)",
                names.join(", ")
            ),
        ));
    }
    eprintln!("All set.");
    Ok(())
}

fn apt(sudo: &[&str], args: &[&str]) -> Result<(), Stop> {
    let mut argv: Vec<&str> = sudo.to_vec();
    argv.push("apt-get");
    argv.extend_from_slice(args);
    // apt's progress goes to stderr: stdout stays wright's (its `--events jsonl` stream).
    let status = Command::new(argv[0])
        .args(&argv[1..])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdout(std::io::stderr())
        .status()
        .map_err(|e| Stop(1, format!("could not start {}: {e}", argv.join(" "))))?;
    if status.success() {
        Ok(())
    } else {
        Err(Stop(1, format!("`{}` failed ({status}); fix that and run the same command again", argv.join(" "))))
    }
}

/// The repository root (this crate's parent folder), whatever folder cargo was called from.
fn root() -> &'static std::path::Path {
    let xtask = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask)
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Run cargo with `args` and pass its exit code on.
fn cargo_status(args: &[OsString]) -> Result<u8, Stop> {
    let status =
        cargo().current_dir(root()).args(args).status().map_err(|e| Stop(1, format!("could not start cargo: {e}")))?;
    Ok(status.code().and_then(|c| u8::try_from(c).ok()).unwrap_or(1))
}

fn run(args: Vec<OsString>) -> Result<u8, Stop> {
    if args.is_empty() {
        return Err(Stop(2, "say what to build: cargo xtask run \"a landing page for a dog walking business\"".into()));
    }
    eprintln!("Building wright (release; the first time takes a few minutes)…");
    // wright runs in the caller's folder (its wright.toml), so the manifest is named instead.
    let manifest = root().join("Cargo.toml");
    let status = cargo()
        .arg("run")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["--release", "-p", "wright-cli", "--", "run"])
        .args(args)
        .status()
        .map_err(|e| Stop(1, format!("could not start cargo: {e}")))?;
    let code = status.code().and_then(|c| u8::try_from(c).ok()).unwrap_or(1);
    eprintln!(
        "\nwright is built: run it again as {}/target/release/wright (e.g. target/release/wright builds list),\n\
         or `cargo xtask install` to have `wright` on your PATH.",
        root().display()
    );
    Ok(code)
}

fn test(args: Vec<OsString>) -> Result<u8, Stop> {
    let mut argv: Vec<OsString> = ["test", "--workspace"].map(OsString::from).to_vec();
    argv.extend(args);
    cargo_status(&argv)
}

fn install() -> Result<u8, Stop> {
    let code = cargo_status(&["install", "--locked", "--path", "crates/cli"].map(OsString::from))?;
    if code == 0 {
        eprintln!("`wright` is in cargo's bin folder (~/.cargo/bin); try `wright doctor`.");
    }
    Ok(code)
}
