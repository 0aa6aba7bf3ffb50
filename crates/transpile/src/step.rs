//! One TRANSPILING pass: type-check with TypeScript, bundle with esbuild, compile Tailwind's
//! CSS, and write the page to `dist/`, all in the build's sandbox with the network off, from
//! the packages in wright's cache, within one time limit.
//!
//! Type-checking comes first because it finds every kind of error with its place; when it
//! fails nothing is bundled, so a broken `dist/` from an earlier pass is never shown as new.

use crate::diagnostics::{Diagnostic, Kind, parse_esbuild, parse_tsc};
use std::time::{Duration, Instant};
use wright_events::{EventKind, LinkStep};
use wright_tools::{ToolContext, run_logged};

/// Where the bundled page goes; the react template's entry page is `dist/index.html`.
pub const OUT_DIR: &str = "dist";

/// What one pass found.
#[derive(Debug, Clone, Default)]
pub struct Transpiled {
    /// Empty when the page was bundled.
    pub diagnostics: Vec<Diagnostic>,
    pub duration: Duration,
    /// Whether the packages had to be installed first (a cache miss costs a download).
    pub installed: bool,
}

impl Transpiled {
    pub fn ok(&self) -> bool {
        self.diagnostics.is_empty()
    }
}

/// A step failure that is not about the code: the step itself could not run or finish.
fn step_error(message: String) -> Diagnostic {
    Diagnostic { kind: Kind::Transpile, file: String::new(), line: 1, column: 1, code: None, message }
}

/// Type-check and bundle the project in `ctx`'s workspace within `limit` (the time of a
/// package install, when one is needed, is not counted).
pub async fn transpile(ctx: &ToolContext, limit: Duration) -> Transpiled {
    let mut out = Transpiled::default();
    let ws = &ctx.workspace;
    // wright's own look (not the model's paths): node_modules links into the package cache,
    // which `Workspace::resolve` rightly refuses to follow for the model.
    let has = |p: &str| ws.root().join(p).exists();
    if !has("node_modules/typescript") || !has("node_modules/esbuild") {
        match wright_tools::install_declared(ctx).await {
            Ok(Some(_)) => out.installed = true,
            Ok(None) => {
                out.diagnostics.push(step_error(
                    "the project's packages are not installed and this build has no package cache".into(),
                ));
                return out;
            }
            Err(e) => {
                out.diagnostics.push(step_error(format!("the project's packages could not be installed: {e}")));
                return out;
            }
        }
    }
    let started = Instant::now();
    let left = || limit.saturating_sub(started.elapsed());

    // 1. Types, imports and syntax, each with its place.
    let tsc = Step {
        what: "the type check",
        program: "node_modules/.bin/tsc",
        args: strings(&["--noEmit", "-p", ".", "--pretty", "false"]),
        env: Vec::new(),
        parse: parse_tsc,
    };
    out.diagnostics = tsc.run(ctx, left(), limit).await;
    if !out.ok() || ctx.cancel.is_cancelled() {
        out.duration = started.elapsed();
        return out;
    }

    // 2. The bundle. esbuild's own binary when its package shipped one (install scripts do not
    // run, so the `.bin` wrapper may not have been swapped for it).
    let esbuild = if has("node_modules/@esbuild/linux-x64/bin/esbuild")
        && cfg!(all(target_os = "linux", target_arch = "x86_64"))
    {
        "node_modules/@esbuild/linux-x64/bin/esbuild"
    } else {
        "node_modules/.bin/esbuild"
    };
    let entry = ["src/main.tsx", "src/main.ts", "src/index.tsx"].into_iter().find(|p| has(p)).unwrap_or("src/main.tsx");
    let bundle = Step {
        what: "bundling",
        program: esbuild,
        args: strings(&[
            entry,
            "--bundle",
            "--format=iife",
            "--jsx=automatic",
            "--minify",
            "--sourcemap",
            "--loader:.css=empty",
            // Imported images become files beside the bundle, named by their content.
            "--loader:.png=file",
            "--loader:.jpg=file",
            "--loader:.jpeg=file",
            "--loader:.gif=file",
            "--loader:.webp=file",
            "--loader:.svg=file",
            "--asset-names=assets/[name]-[hash]",
            "--color=false",
            "--log-level=error",
            "--outfile=dist/app.js",
        ]),
        env: vec![("NODE_ENV".to_string(), "production".to_string())],
        parse: parse_esbuild,
    };
    out.diagnostics = bundle.run(ctx, left(), limit).await;
    if !out.ok() || ctx.cancel.is_cancelled() {
        out.duration = started.elapsed();
        return out;
    }

    // 3. Tailwind's CSS, from the classes the code uses; its errors are about the stylesheet.
    let input = if has("src/index.css") { "src/index.css" } else { "node_modules/tailwindcss/index.css" };
    let css = Step {
        what: "Tailwind",
        program: "node_modules/.bin/tailwindcss",
        args: strings(&["-i", input, "-o", "dist/app.css", "--minify"]),
        env: Vec::new(),
        parse: |text| {
            vec![Diagnostic {
                file: "src/index.css".into(),
                ..step_error(format!(
                    "Tailwind could not compile the styles: {}",
                    wright_tools::clip_tail(text.trim(), 1500)
                ))
            }]
        },
    };
    out.diagnostics = css.run(ctx, left(), limit).await;

    // 4. The page itself, pointing at the bundle, and the files of `public/` beside it.
    if out.ok() {
        let (links, copied) = copy_public(ws);
        let public_link = links.iter().any(|l| l == "public");
        for link in links {
            refused(ctx, link, LinkStep::CopyPublic);
        }
        if let Err(e) = copied {
            out.diagnostics.push(step_error(format!("public/ could not be copied into dist/: {e}")));
        }
        if public_link {
            out.diagnostics.push(step_error(
                "public/ is a link; make it a real folder of the project (wright does not follow links)".into(),
            ));
        }
        let source = ws.read("index.html").map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
        if let Err(e) = ws.write("dist/index.html", crate::page::bundled_page(&source).as_bytes()) {
            if let wright_sandbox::PathError::Link(p) = &e {
                refused(ctx, p.clone(), LinkStep::PageWrite);
            }
            out.diagnostics.push(step_error(format!("dist/index.html could not be written: {e}")));
        }
    }
    out.duration = started.elapsed();
    out
}

/// One tool of the pass, and how its output reads when it fails.
struct Step<'a> {
    /// What it does, for the messages: "the type check", "bundling".
    what: &'a str,
    program: &'a str,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// The failed tool's output (stdout, then stderr) as diagnostics; none when it says
    /// nothing recognisable, and the output's end is reported instead.
    parse: fn(&str) -> Vec<Diagnostic>,
}

impl Step<'_> {
    /// Run it with what is `left` of the pass's `limit`: its diagnostics, none when it passed.
    async fn run(&self, ctx: &ToolContext, left: Duration, limit: Duration) -> Vec<Diagnostic> {
        match run_logged(ctx, self.program, &self.args, &self.env, left).await {
            Ok(o) if o.timed_out => vec![step_error(format!(
                "{} did not finish within the {}s limit for transpiling; make the app smaller or split it into fewer, simpler files",
                self.what,
                limit.as_secs()
            ))],
            Ok(o) if !o.success() => {
                let text = format!("{}\n{}", o.stdout.render(), o.stderr.render());
                let found = (self.parse)(&text);
                if found.is_empty() {
                    vec![step_error(format!("{} failed: {}", self.what, wright_tools::clip_tail(text.trim(), 1500)))]
                } else {
                    found
                }
            }
            Ok(_) => Vec::new(),
            Err(e) => vec![step_error(format!("{} could not run: {e}", self.what))],
        }
    }
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// Copy the project's `public/` folder (files served as they are: a favicon, robots.txt,
/// images named by URL) into `dist/`, through the workspace's capability: links in `public/`
/// are left out, and a link in `dist/` where a file or folder is to go stops the copy, so
/// nothing is written outside the project whatever the sandboxed code made of either folder.
/// Gives the links it refused (the copy's error, if any, holds the last).
fn copy_public(ws: &wright_sandbox::Workspace) -> (Vec<String>, Result<(), wright_sandbox::DirError>) {
    let dir = ws.dir();
    let from = match dir.open_dir("public") {
        Ok(from) => from,
        Err(wright_sandbox::DirError::Link(_)) => return (vec!["public".into()], Ok(())),
        // No public/ (or not a folder): nothing to copy.
        Err(_) => return (Vec::new(), Ok(())),
    };
    let copied =
        dir.create_dir_all(OUT_DIR).and_then(|to| from.copy_into(&to, wright_sandbox::Links::Skip, &|_| true, false));
    match copied {
        Ok(report) => (report.skipped_links.into_iter().map(|p| format!("public/{p}")).collect(), Ok(())),
        Err(wright_sandbox::DirError::Link(p)) => {
            // A refusal at the top of `dist` names `dist` itself; deeper ones are under it.
            let at = if p == OUT_DIR { p.clone() } else { format!("{OUT_DIR}/{p}") };
            (vec![at.clone()], Err(wright_sandbox::DirError::Link(at)))
        }
        Err(e) => (Vec::new(), Err(e)),
    }
}

/// Say that a step refused a link (`link_refused`).
fn refused(ctx: &ToolContext, path: String, step: LinkStep) {
    ctx.emitter.emit(EventKind::LinkRefused { path, step });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn public_files_go_beside_the_bundle_and_links_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        let ws = wright_sandbox::Workspace::open(&root, Default::default()).unwrap();
        let (links, copied) = copy_public(&ws);
        assert!(links.is_empty() && copied.is_ok(), "no public/ is nothing to do");
        std::fs::create_dir_all(root.join("public/img")).unwrap();
        std::fs::write(root.join("public/robots.txt"), "User-agent: *\n").unwrap();
        std::fs::write(root.join("public/img/a.svg"), "<svg/>").unwrap();
        symlink("/etc/passwd", root.join("public/passwd")).unwrap();
        let (links, copied) = copy_public(&ws);
        assert_eq!((links, copied), (vec!["public/passwd".to_string()], Ok(())));
        assert_eq!(std::fs::read_to_string(root.join("dist/robots.txt")).unwrap(), "User-agent: *\n");
        assert!(root.join("dist/img/a.svg").is_file());
        assert!(!root.join("dist/passwd").exists());
    }

    /// Code in the sandbox makes `dist` (or a folder in it) a link out: the next pass writes
    /// nothing there.
    #[test]
    fn a_dist_made_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        let outside = dir.path().join("home");
        std::fs::create_dir_all(&outside).unwrap();
        let ws = wright_sandbox::Workspace::open(&root, Default::default()).unwrap();
        std::fs::create_dir_all(root.join("public/img")).unwrap();
        std::fs::write(root.join("public/robots.txt"), "x").unwrap();
        std::fs::write(root.join("public/img/a.svg"), "<svg/>").unwrap();
        symlink(&outside, root.join("dist")).unwrap();
        let (links, copied) = copy_public(&ws);
        assert_eq!(links, vec!["dist".to_string()]);
        assert!(copied.is_err());
        std::fs::remove_file(root.join("dist")).unwrap();
        std::fs::create_dir(root.join("dist")).unwrap();
        symlink(&outside, root.join("dist/img")).unwrap();
        let (links, copied) = copy_public(&ws);
        assert_eq!(links, vec!["dist/img".to_string()]);
        assert!(copied.is_err());
        assert!(std::fs::read_dir(&outside).unwrap().next().is_none(), "nothing was written outside");
        // The page write refuses a link too.
        symlink(outside.join("index.html"), root.join("dist/index.html")).unwrap();
        assert!(matches!(ws.write("dist/index.html", b"<p>"), Err(wright_sandbox::PathError::Link(_))));
        assert!(!outside.join("index.html").exists());
    }
}
