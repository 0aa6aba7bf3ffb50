//! What the browser check adds to a build, and what Chromium costs in memory: the whole
//! `check_page` (start Chromium in bubblewrap, load a small page, click its buttons, take the
//! screenshot, stop everything) timed over N runs, while a sampler sums the proportional set size
//! (PSS: shared pages counted once across Chromium's processes) of every process the check
//! started, every 20 ms.
//! Run: `cargo bench -p wright-browser --bench check` (add `-- 20` for 20 runs, `-- --screenshot
//! shot.png` to keep the first check's screenshot).
#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap is a failed run
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use wright_browser::{BrowserSettings, Launch, PageSource, check_page};
use wright_sandbox::{Bwrap, Policy, ProcessRunner};

const PAGE: &str = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Timer</title>\
<link rel=\"stylesheet\" href=\"style.css\"></head><body><h1>Countdown</h1><p id=\"out\">10</p>\
<button id=\"go\">Start</button><button id=\"reset\">Reset</button><script src=\"app.js\"></script></body></html>";
const CSS: &str = "body { font-family: sans-serif; margin: 2rem; } button { padding: .5rem 1rem; }";
const JS: &str = "const out = document.getElementById('out');\n\
document.getElementById('go').addEventListener('click', () => { out.textContent = String(Number(out.textContent) - 1); });\n\
document.getElementById('reset').addEventListener('click', () => { out.textContent = '10'; });\n";

fn open_up(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
}

/// A fresh workspace and scratch folder, as a build gets them.
fn launch(dir: &Path) -> Launch {
    let (ws, scratch) = (dir.join("ws"), dir.join("s"));
    for d in [&ws, &scratch.join("home"), &scratch.join("tmp")] {
        std::fs::create_dir_all(d).unwrap();
    }
    for (name, body) in [("index.html", PAGE), ("style.css", CSS), ("app.js", JS)] {
        std::fs::write(ws.join(name), body).unwrap();
    }
    for d in [dir, &ws, &scratch, &scratch.join("home"), &scratch.join("tmp")] {
        open_up(d);
    }
    let policy = Policy { writable: vec![ws.clone(), scratch.clone()], ..Policy::default() };
    let bwrap = Bwrap::new(policy).expect("the bench needs bubblewrap (cargo xtask setup installs it)");
    let env = vec![
        ("PATH".to_string(), "/usr/local/bin:/usr/bin:/bin".to_string()),
        ("HOME".to_string(), scratch.join("home").display().to_string()),
        ("TMPDIR".to_string(), scratch.join("tmp").display().to_string()),
    ];
    Launch { runner: Arc::new(ProcessRunner::new(Box::new(bwrap))), env, workspace: ws, scratch, confined: true }
}

/// PSS in bytes of every process whose command line names `marker` (the check's scratch
/// folder: Chromium's profile and the host script's socket live there), by kind of process.
fn pss_of(marker: &str) -> Vec<(String, u64)> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut all = Vec::new();
    for e in dir.flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else { continue };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if !cmd.contains(marker) {
            continue;
        }
        let Ok(rollup) = std::fs::read_to_string(e.path().join("smaps_rollup")) else { continue };
        let pss = rollup
            .lines()
            .find_map(|l| l.strip_prefix("Pss:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
            * 1024;
        let program = cmd.split_whitespace().next().unwrap_or("?").rsplit('/').next().unwrap_or("?").to_string();
        let kind = if program.starts_with("chromium") || program == "chrome" {
            cmd.split_whitespace()
                .find_map(|a| a.strip_prefix("--type="))
                .map_or("chromium browser".to_string(), |t| format!("chromium {t}"))
        } else {
            program
        };
        all.push((kind, pss));
    }
    all.sort();
    all
}

struct Run {
    elapsed: Duration,
    peak_pss: u64,
    /// Chromium's own processes at the peak (the rest is the page's file server and bwrap).
    peak_chromium: u64,
    breakdown: Vec<(String, u64)>,
    screenshot: Option<Vec<u8>>,
}

async fn one(settings: &BrowserSettings) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let launch = launch(dir.path());
    let marker = launch.scratch.display().to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut peak: Vec<(String, u64)> = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let now = pss_of(&marker);
                if now.iter().map(|p| p.1).sum::<u64>() > peak.iter().map(|p| p.1).sum::<u64>() {
                    peak = now;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            peak
        })
    };
    let t = Instant::now();
    let report = check_page(settings, &launch, &PageSource::Static { entry: "index.html".into() })
        .await
        .unwrap_or_else(|e| panic!("the check could not run: {e}"));
    let elapsed = t.elapsed();
    stop.store(true, Ordering::Relaxed);
    let breakdown = sampler.join().unwrap();
    assert!(report.findings.is_empty(), "a healthy page: {:?}", report.findings);
    assert_eq!(report.actions, 2, "both buttons clicked");
    assert!(report.screenshot.is_some());
    let peak_pss = breakdown.iter().map(|p| p.1).sum();
    let peak_chromium = breakdown.iter().filter(|p| p.0.starts_with("chromium")).map(|p| p.1).sum();
    Run { elapsed, peak_pss, peak_chromium, breakdown, screenshot: report.screenshot }
}

fn pct(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() - 1) * p / 100]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(10);
    // `--screenshot FILE` keeps the first check's PNG, to see what the check saw.
    let keep = args.iter().position(|a| a == "--screenshot").and_then(|i| args.get(i + 1)).cloned();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let settings = BrowserSettings::default();
    rt.block_on(async {
        // The first start reads Chromium from disk; a build on a busy server rarely pays that.
        let cold = one(&settings).await;
        println!("first (cold) check: {:.0} ms, peak PSS {} MiB", ms(cold.elapsed), cold.peak_pss >> 20);
        if let (Some(file), Some(png)) = (&keep, &cold.screenshot) {
            std::fs::write(file, png).unwrap();
            println!("its screenshot: {file}");
        }
        let mut all = Vec::with_capacity(runs);
        for _ in 0..runs {
            all.push(one(&settings).await);
        }
        let mut times: Vec<Duration> = all.iter().map(|r| r.elapsed).collect();
        times.sort();
        let peak = all.iter().map(|r| r.peak_pss).max().unwrap_or(0);
        let mut peaks: Vec<u64> = all.iter().map(|r| r.peak_pss).collect();
        peaks.sort();
        println!(
            "{runs} checks of a small page (load, 2 clicks, screenshot): median {:.0} ms, p90 {:.0} ms, min {:.0} ms, max {:.0} ms",
            ms(pct(&times, 50)),
            ms(pct(&times, 90)),
            ms(times[0]),
            ms(times[times.len() - 1])
        );
        let mut chromium: Vec<u64> = all.iter().map(|r| r.peak_chromium).collect();
        chromium.sort();
        println!(
            "peak PSS per check, every process it started: median {} MiB, max {} MiB; Chromium's alone: median {} MiB, max {} MiB",
            peaks[peaks.len() / 2] >> 20,
            peak >> 20,
            chromium[chromium.len() / 2] >> 20,
            chromium[chromium.len() - 1] >> 20
        );
        if let Some(last) = all.last() {
            let parts: Vec<String> = last.breakdown.iter().map(|(k, b)| format!("{k} {} MiB", b >> 20)).collect();
            println!("at the peak of the last check: {}", parts.join(", "));
        }
    });
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
