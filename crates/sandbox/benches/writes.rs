//! What one write through a [`Workspace`] costs in a big existing project: 50,000 files in
//! 500 folders (a mid-sized repository), then 2,000 writes of 2 KiB (half new files, half
//! overwrites) with the size limit on. The limit is a running total, so a write never walks
//! the tree; this prints the per-write latencies that show it.
//!
//! `cargo bench -p wright-sandbox --bench writes` (`-- --files N` for another size).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench binary: a failed unwrap is a failed bench
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

use std::time::{Duration, Instant};
use wright_sandbox::{Workspace, WorkspaceLimits};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.saturating_sub(1).min(sorted.len() - 1)]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let files: usize = args
        .iter()
        .position(|a| a == "--files")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(50_000);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let made = Instant::now();
    for i in 0..files {
        let folder = root.join(format!("src/m{:03}", i % 500));
        if i < 500 {
            std::fs::create_dir_all(&folder).unwrap();
        }
        std::fs::write(folder.join(format!("f{i}.js")), format!("export const v{i} = {i};\n")).unwrap();
    }
    println!("made {files} files in {:.1} s", made.elapsed().as_secs_f64());
    let limits = WorkspaceLimits { max_file_bytes: 1 << 20, max_total_bytes: 200 << 20 };
    let ws = Workspace::open(&root, limits).unwrap();
    let body = vec![b'x'; 2048];
    let mut times = Vec::with_capacity(2000);
    for i in 0..2000 {
        let path = if i % 2 == 0 { format!("new/n{i}.js") } else { format!("src/m{:03}/f{i}.js", i % 500) };
        let t = Instant::now();
        ws.write(&path, &body).unwrap();
        times.push(t.elapsed());
    }
    times.sort();
    let total = Instant::now();
    let walked = ws.total_bytes();
    let walk = total.elapsed();
    println!(
        "write 2 KiB, {} writes: p50 {:?}, p95 {:?}, p99 {:?}, max {:?}; written in all: {} bytes",
        times.len(),
        percentile(&times, 50.0),
        percentile(&times, 95.0),
        percentile(&times, 99.0),
        times[times.len() - 1],
        ws.written_bytes()
    );
    println!("for comparison, one walk of the whole tree (what each write used to cost): {walk:?} ({walked} bytes)");
}
