//! Note retrieval latency with many notes in the store (target: p99 < 5 ms at 100k notes).
//! Run: `cargo bench -p wright-memory --bench retrieval` (add `-- 10000` for one size only).
//!
//! Notes get 2–4 tags from a 600-word vocabulary, 0–2 libraries from 150 packages and one
//! error pattern from 80 shapes, with a few universal ones: broad enough that common words
//! match thousands of notes, which is the case that costs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

use std::time::Instant;
use wright_memory::{DEFAULT_NOTE_BUDGET, Query, retrieve};
use wright_store::{Note, NoteStatus, SqliteStore, Store};

/// `n` distinct words made of letters only (the indexer drops digits from error words).
fn words(n: usize, prefix: &str) -> Vec<String> {
    (0..n)
        .map(|mut i| {
            let mut w = prefix.to_string();
            loop {
                w.push(char::from(b'a' + (i % 26) as u8));
                i /= 26;
                if i == 0 {
                    break w;
                }
            }
        })
        .collect()
}

fn note(i: usize, rng: &mut fastrand::Rng, tags: &[String], libs: &[String], errs: &[String]) -> Note {
    let pick =
        |rng: &mut fastrand::Rng, v: &[String], k: usize| (0..k).map(|_| v[rng.usize(..v.len())].clone()).collect();
    let ntags = rng.usize(2..=4);
    let nlibs = rng.usize(0..=2);
    Note {
        id: format!("n-{i:012}"),
        trigger: format!("situation {i}"),
        trigger_type: if i.is_multiple_of(500) { "universal".into() } else { "pattern".into() },
        lesson: format!("Lesson number {i}: do the thing that avoids the error, and check it with a test first."),
        libraries: pick(rng, libs, nlibs),
        error_patterns: pick(rng, errs, 1),
        tags: pick(rng, tags, ntags),
        help_count: rng.u32(0..10),
        fail_count: rng.u32(0..5),
        confidence: rng.f64(),
        status: if i.is_multiple_of(10) { NoteStatus::Deprecated } else { NoteStatus::Candidate },
        source_build: None,
        source_error: None,
        source_fix: None,
        created_at: String::new(),
        updated_at: String::new(),
    }
}

fn main() {
    let sizes: Vec<usize> = match std::env::args().nth(1).and_then(|a| a.parse().ok()) {
        Some(n) => vec![n],
        None => vec![10_000, 100_000],
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let tags = words(600, "topic");
    let libs = words(150, "pkg");
    // Error shapes share "cannot" and one of four verbs, as real ones share "cannot read".
    let verbs = ["read", "find", "resolve", "parse"];
    let nouns = words(80, "thing");
    let errs: Vec<String> = (0..80).map(|i| format!("Cannot {} {} in *", verbs[i % 4], nouns[i])).collect();
    for n in sizes {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}", dir.path().join("notes.db").display());
        let store = rt.block_on(SqliteStore::open(&url)).expect("store");
        let mut rng = fastrand::Rng::with_seed(7);
        let t = Instant::now();
        rt.block_on(async {
            for i in 0..n {
                store.put_note(&note(i, &mut rng, &tags, &libs, &errs)).await.expect("put");
            }
        });
        let fill = t.elapsed();
        let mut times = Vec::new();
        let mut found = 0usize;
        let (mut fixes, mut fixes_answered) = (0usize, 0usize);
        for q in 0..300 {
            let prompt: Vec<String> = (0..rng.usize(3..8)).map(|_| tags[rng.usize(..tags.len())].clone()).collect();
            let prompt = format!("make a {} app", prompt.join(" "));
            let qlibs = vec![libs[rng.usize(..libs.len())].clone()];
            // Every third query is a fix: it carries an error text too.
            let fix = (q % 3 == 0).then(|| rng.usize(..80));
            let error = match fix {
                Some(e) => format!("TypeError: Cannot {} {} in app.js", verbs[e % 4], nouns[e]),
                None => String::new(),
            };
            let query = Query { prompt: &prompt, template: "interactive", libraries: &qlibs, errors: &error };
            let t = Instant::now();
            let notes = rt.block_on(retrieve(&store, &query, DEFAULT_NOTE_BUDGET)).expect("retrieve");
            times.push(t.elapsed().as_secs_f64() * 1e3);
            found += notes.len();
            if let Some(e) = fix {
                fixes += 1;
                fixes_answered += usize::from(notes.iter().any(|n| n.error_patterns.contains(&errs[e])));
            }
        }
        times.sort_by(f64::total_cmp);
        let pct = |p: f64| times[((p / 100.0 * times.len() as f64).ceil() as usize).saturating_sub(1)];
        println!(
            "notes={n:6}  fill {:.1} s  retrieve p50 {:.2} ms  p95 {:.2} ms  p99 {:.2} ms  max {:.2} ms  ({:.1} notes per prompt; {}/{} fixes got a note for their error)",
            fill.as_secs_f64(),
            pct(50.0),
            pct(95.0),
            pct(99.0),
            times[times.len() - 1],
            found as f64 / times.len() as f64,
            fixes_answered,
            fixes
        );
    }
}
