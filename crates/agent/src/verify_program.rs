//! What "it starts" means for a Python, Rust or Go project: a command-line program answers
//! `--help` with exit code 0; an API starts and answers `GET /` (through the same sandboxed
//! probe as a full-stack server); a library has nothing to start, its tests are its check.
//!
//! Which of the three a project is comes from its files, read beneath the workspace.

use crate::prompts::Template;
use crate::verdict::{Failure, FailureKind, indent};
use wright_tools::{ToolContext, run_logged};

/// How a project is started, once its kind is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Program {
    /// Nothing to start (a library, or a script with no entry).
    Library,
    /// A command-line program: this command, to which `--help` is added.
    Cli(Vec<String>),
    /// A server: `build` (if any) first, then `run` is started with `PORT` and asked for `/`.
    Api { build: Option<Vec<String>>, run: Vec<String> },
}

fn words(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

/// Words in a source file that make it a server.
const SERVER_WORDS: &[&str] = &[
    // Python
    "http.server",
    "serve_forever",
    "Flask(",
    "FastAPI(",
    "uvicorn.run",
    "socketserver",
    // Go
    "http.ListenAndServe",
    "ListenAndServe(",
    // Rust
    "TcpListener::bind",
    "axum::",
    "actix_web",
    "tiny_http",
    "hyper::Server",
];

fn serves(source: &str) -> bool {
    SERVER_WORDS.iter().any(|w| source.contains(w))
}

/// How this project is started. Reads only through the workspace's no-follow handle.
pub(crate) fn program_of(ctx: &ToolContext, template: Template) -> Program {
    let dir = ctx.workspace.dir();
    let read = |rel: &str| dir.read(rel).ok().map(|b| String::from_utf8_lossy(&b).into_owned());
    let files = wright_tools::project_files(&ctx.workspace);
    let top = |ext: &str| -> Vec<String> {
        let mut v: Vec<String> = files.iter().filter(|f| !f.contains('/') && f.ends_with(ext)).cloned().collect();
        v.sort();
        v
    };
    match template {
        Template::Python => {
            let candidates = ["app.py", "main.py", "server.py", "cli.py", "__main__.py"];
            let named = candidates.iter().map(|s| s.to_string()).find(|f| files.contains(f));
            let entry = named.or_else(|| {
                top(".py").into_iter().find(|f| {
                    !f.starts_with("test_")
                        && f != "conftest.py"
                        && read(f).is_some_and(|s| s.contains("__name__") && s.contains("__main__"))
                })
            });
            let Some(entry) = entry else { return Program::Library };
            let source = read(&entry).unwrap_or_default();
            if serves(&source) {
                Program::Api { build: None, run: words(&["python3", &entry]) }
            } else {
                Program::Cli(words(&["python3", &entry]))
            }
        }
        Template::Rust => {
            let Some(main) = read("src/main.rs") else { return Program::Library };
            if serves(&main) {
                Program::Api {
                    build: Some(words(&["cargo", "build", "--quiet"])),
                    run: words(&["cargo", "run", "--quiet"]),
                }
            } else {
                Program::Cli(words(&["cargo", "run", "--quiet", "--"]))
            }
        }
        Template::Go => {
            let mains: Vec<String> = top(".go")
                .into_iter()
                .filter(|f| !f.ends_with("_test.go"))
                .filter_map(|f| read(&f))
                .filter(|s| s.contains("package main") && s.contains("func main("))
                .collect();
            match mains.first() {
                None => Program::Library,
                Some(_) if mains.iter().any(|s| serves(s)) => Program::Api {
                    build: Some(words(&["go", "build", "-o", "/dev/null", "."])),
                    run: words(&["go", "run", "."]),
                },
                Some(_) => Program::Cli(words(&["go", "run", ".", "--help"])),
            }
        }
        _ => Program::Library,
    }
}

/// Start a command-line program with `--help` (Go's already carries it): it must exit 0.
pub(crate) async fn check_cli(ctx: &ToolContext, command: &[String]) -> Option<Failure> {
    let (program, args) = command.split_first()?;
    let mut args = args.to_vec();
    if args.last().is_none_or(|a| a != "--help") {
        args.push("--help".into());
    }
    let line = std::iter::once(program.as_str()).chain(args.iter().map(String::as_str)).collect::<Vec<_>>().join(" ");
    // A first Rust or Go run compiles; it gets the command time, not a few seconds.
    let outcome = run_logged(ctx, program, &args, &[], ctx.exec.command_timeout).await;
    let o = match outcome {
        Ok(o) => o,
        Err(e) => {
            return Some(Failure::new(
                FailureKind::ProgramCheck,
                format!("`{line}` could not run"),
                format!("wright ran `{line}` to see that the program starts; it could not run: {e}"),
            ));
        }
    };
    if o.success() {
        return None;
    }
    let how = if o.timed_out {
        "it did not finish (a program that waits for input must not wait when given --help)".to_string()
    } else {
        format!("it exited with code {}", o.exit_code.map_or("none".into(), |c| c.to_string()))
    };
    let out = wright_tools::clip_tail(&format!("{}{}", o.stdout.render(), o.stderr.render()), 2500);
    Some(
        Failure::new(
            FailureKind::ProgramCheck,
            format!("`{line}` failed: {how}"),
            format!(
                "wright ran `{line}` to see that the program starts; {how}. A command-line program prints its usage for --help and exits with code 0.\nOutput (end):\n{}\n",
                indent(&out)
            ),
        )
        .with_output(out),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::Arc;
    use wright_sandbox::{ProcessRunner, Workspace, WorkspaceLimits};

    /// A context on a temporary project holding `files`.
    fn context_in(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
        let t = tempfile::tempdir().unwrap();
        let workspace = Workspace::open(t.path().join("ws"), WorkspaceLimits::default()).unwrap();
        for (path, content) in files {
            workspace.write(path, content.as_bytes()).unwrap();
        }
        let exec = wright_tools::ExecConfig::for_build(&t.path().join("home"), &t.path().join("tmp")).unwrap();
        let ctx = ToolContext {
            workspace,
            runner: Arc::new(ProcessRunner::default()),
            emitter: wright_events::Emitter::new("test", vec![]),
            cancel: tokio_util::sync::CancellationToken::new(),
            exec,
        };
        (t, ctx)
    }

    #[test]
    fn each_kind_knows_how_it_starts() {
        let (_t, ctx) = context_in(&[
            ("wordcount.py", "def count(t):\n    return len(t.split())\n"),
            ("main.py", "import argparse\nif __name__ == '__main__':\n    pass\n"),
        ]);
        assert_eq!(program_of(&ctx, Template::Python), Program::Cli(words(&["python3", "main.py"])));
        let (_t, ctx) = context_in(&[("app.py", "from http.server import HTTPServer\n")]);
        assert!(matches!(program_of(&ctx, Template::Python), Program::Api { build: None, .. }));
        let (_t, ctx) = context_in(&[("wordcount.py", "def count(t):\n    return 1\n")]);
        assert_eq!(program_of(&ctx, Template::Python), Program::Library);
        let (_t, ctx) = context_in(&[("src/lib.rs", "pub fn f() {}\n")]);
        assert_eq!(program_of(&ctx, Template::Rust), Program::Library);
        let (_t, ctx) = context_in(&[("src/main.rs", "fn main() {}\n")]);
        assert_eq!(program_of(&ctx, Template::Rust), Program::Cli(words(&["cargo", "run", "--quiet", "--"])));
        let (_t, ctx) =
            context_in(&[("main.go", "package main\nfunc main() { http.ListenAndServe(\":8080\", nil) }\n")]);
        assert!(matches!(program_of(&ctx, Template::Go), Program::Api { .. }));
        let (_t, ctx) = context_in(&[("count.go", "package count\nfunc C() int { return 1 }\n")]);
        assert_eq!(program_of(&ctx, Template::Go), Program::Library);
    }
}
