//! Indexing throughput and search latency of the docs index.
//!
//! Run: `cargo bench -p wright-docs` (sizes 10,000 and 50,000 chunks; add `-- 10000` for one
//! size only). For each size it builds a folder of synthetic Markdown (varied headings and
//! sentences from a 3,000-word vocabulary, one chunk per section) and reports:
//!
//! - keyword-only indexing: chunks/s for scan + read + chunk + insert (FTS5 included);
//! - the same with a stand-in embedder (hashed words, 384 dimensions: the model's width, at
//!   almost no cost), which measures what the index adds around a model;
//! - search p50/p99 for keyword, meaning and fused search (the stand-in embeds the query in
//!   microseconds, so meaning latency is the brute-force scan and bookkeeping).
//!
//! Then, when the real e5 model is in `target/wright-test-data` (or `WRIGHT_TEST_DATA_DIR`), it
//! embeds 500 chunks of real English and Portuguese sentences with it (chunks/s), and 40 of the
//! made-up words for comparison, and times search with the query embedded by it, alone and
//! while another index is embedding.
#![allow(clippy::unwrap_used, clippy::expect_used)] // bench code: a failed unwrap is a failed run
#![allow(clippy::print_stdout, clippy::print_stderr)] // a bench or example binary prints its figures

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wright_docs::{DocsIndex, Embed, SearchMode};

const SECTIONS_PER_FILE: usize = 20;
const QUERIES: usize = 300;

struct Hash384;

impl Embed for Hash384 {
    fn name(&self) -> &str {
        "hash-384"
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        Ok(texts.iter().map(|t| common::hash_vector(t, 384)).collect())
    }
}

struct E5(wright_local::E5Embedder);

impl Embed for E5 {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.0.embed(texts).map_err(|e| e.to_string())
    }
}

/// Pronounceable made-up words, plus real English and Portuguese ones, so FTS5 sees a realistic
/// spread of rare and common terms.
fn vocabulary(rng: &mut fastrand::Rng) -> Vec<String> {
    const SYLLABLES: [&str; 24] = [
        "ka", "lo", "mi", "ra", "te", "su", "no", "ve", "pa", "di", "ção", "gu", "ber", "tan", "os", "el", "ri", "mon",
        "qua", "zé", "fi", "ston", "ax", "ple",
    ];
    const REAL: &str = "tool settings model chat export file folder search index answer question page theme \
        keyboard shortcut save delete privacy token limit server browser build test error install update \
        ferramenta definições modelo conversa exportar ficheiro pasta pesquisa resposta pergunta página tema \
        atalho guardar apagar privacidade limite servidor navegador erro instalar atualizar";
    let mut words: Vec<String> = REAL.split_whitespace().map(String::from).collect();
    while words.len() < 3_000 {
        let n = rng.usize(2..=4);
        words.push((0..n).map(|_| SYLLABLES[rng.usize(..SYLLABLES.len())]).collect());
    }
    words
}

/// Words drawn with a skew (a few common, many rare), as in real text.
fn pick<'a>(rng: &mut fastrand::Rng, words: &'a [String]) -> &'a str {
    let r = rng.f64();
    &words[((r * r * r) * words.len() as f64) as usize % words.len()]
}

fn sentence(rng: &mut fastrand::Rng, words: &[String]) -> String {
    let n = rng.usize(6..=18);
    let mut s: String = (0..n).map(|_| pick(rng, words)).collect::<Vec<_>>().join(" ");
    if let Some(first) = s.get(..1) {
        s.replace_range(..1, &first.to_uppercase());
    }
    s.push('.');
    s
}

/// `chunks` sections of 350–800 characters in files of [`SECTIONS_PER_FILE`].
fn corpus(dir: &Path, chunks: usize, rng: &mut fastrand::Rng, words: &[String]) {
    std::fs::create_dir_all(dir).unwrap();
    for f in 0..chunks.div_ceil(SECTIONS_PER_FILE) {
        let mut doc = format!("# {} {}\n\n", pick(rng, words), f);
        for _ in 0..SECTIONS_PER_FILE {
            doc.push_str(&format!("## {} {}\n\n", pick(rng, words), pick(rng, words)));
            let target = rng.usize(350..800);
            let mut section = String::new();
            while section.len() < target {
                section.push_str(&sentence(rng, words));
                section.push(if rng.u8(..5) == 0 { '\n' } else { ' ' });
                if rng.u8(..4) == 0 {
                    section.push('\n');
                }
            }
            doc.push_str(&section);
            doc.push_str("\n\n");
        }
        std::fs::write(dir.join(format!("doc{f:05}.md")), doc).unwrap();
    }
}

fn queries(rng: &mut fastrand::Rng, words: &[String], n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            let k = rng.usize(2..=5);
            let q: Vec<&str> = (0..k).map(|_| pick(rng, words)).collect();
            if rng.bool() { format!("how do I {}?", q.join(" ")) } else { q.join(" ") }
        })
        .collect()
}

struct Latency {
    p50: Duration,
    p99: Duration,
}

async fn time_searches(index: &DocsIndex, queries: &[String], mode: SearchMode) -> Latency {
    let mut times = Vec::with_capacity(queries.len());
    for q in queries {
        let started = Instant::now();
        let hits = index.search_with(q, 10, mode).await.unwrap();
        times.push(started.elapsed());
        std::hint::black_box(hits);
    }
    times.sort();
    Latency { p50: times[times.len() / 2], p99: times[(times.len() * 99 / 100).min(times.len() - 1)] }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn report(label: &str, l: &Latency) {
    println!("  {label:<28} p50 {:>10}   p99 {:>10}", ms(l.p50), ms(l.p99));
}

async fn bench_size(root: &Path, size: usize, rng: &mut fastrand::Rng, words: &[String]) {
    let docs = root.join(format!("docs-{size}"));
    corpus(&docs, size, rng, words);
    println!("\n{size} chunks ({} files)", size.div_ceil(SECTIONS_PER_FILE));

    let keyword = DocsIndex::open(&root.join(format!("kw-{size}.sqlite")), &docs, None).await.unwrap();
    let stats = keyword.refresh().await.unwrap();
    let rate = stats.chunks as f64 / stats.elapsed.as_secs_f64();
    println!(
        "  index, keywords only        {} chunks in {:.2} s = {rate:.0} chunks/s",
        stats.chunks,
        stats.elapsed.as_secs_f64()
    );
    let again = keyword.refresh().await.unwrap();
    println!("  refresh, nothing changed    {}", ms(again.elapsed));

    let vectors =
        DocsIndex::open(&root.join(format!("vec-{size}.sqlite")), &docs, Some(Arc::new(Hash384))).await.unwrap();
    let stats = vectors.refresh().await.unwrap();
    let rate = stats.chunks as f64 / stats.elapsed.as_secs_f64();
    println!(
        "  index + stand-in vectors    {} chunks in {:.2} s = {rate:.0} chunks/s",
        stats.chunks,
        stats.elapsed.as_secs_f64()
    );

    let qs = queries(rng, words, QUERIES);
    let started = Instant::now();
    vectors.search_with(&qs[0], 10, SearchMode::Meaning).await.unwrap();
    println!("  first meaning search        {} (loads {} vectors)", ms(started.elapsed()), stats.embedded);
    report("keyword search", &time_searches(&keyword, &qs, SearchMode::Keyword).await);
    report("meaning search (stand-in)", &time_searches(&vectors, &qs, SearchMode::Meaning).await);
    report("fused search (stand-in)", &time_searches(&vectors, &qs, SearchMode::Fused).await);
}

/// Real sentences, English and Portuguese, for the model: made-up words split into many more
/// word pieces than real ones and would make the model look several times slower.
const SENTENCES: &[&str] = &[
    "Open the settings panel and choose the tools tab to see every tool the assistant can call.",
    "Each tool has a name, a one-sentence description and the shell command it runs.",
    "Press Ctrl+K to search past conversations, or Esc to stop an answer while it is written.",
    "Conversations are stored on this computer only, unless you choose a hosted model.",
    "The built-in model needs no key and no network, but it is small and slow on long tasks.",
    "Export a conversation as Markdown or PDF from the file menu.",
    "When a build fails, the assistant reads the test output and tries to fix the code, up to three times.",
    "Set a monthly spending limit so a hosted model never costs more than you expect.",
    "Dark mode follows your operating system by default; you can force it in the appearance settings.",
    "Starter apps give a new project a working layout, tests and a page to open in the browser.",
    "If the sandbox cannot start, check that bubblewrap is installed or use the Landlock fallback.",
    "Logs are kept for thirty days and can be deleted from the data settings at any time.",
    "To share a project, copy its folder or publish it from the builds list.",
    "The documents you add to the docs folder are indexed again a few seconds after they change.",
    "Abra o painel de definições e escolha o separador das ferramentas para ver todas as ferramentas.",
    "Cada ferramenta tem um nome, uma descrição numa frase e o comando que executa.",
    "Carregue em Ctrl+K para pesquisar conversas antigas, ou em Esc para parar uma resposta.",
    "As conversas ficam guardadas apenas neste computador, a não ser que escolha um modelo alojado.",
    "O modelo incluído não precisa de chave nem de rede, mas é pequeno e lento em tarefas longas.",
    "Exporte uma conversa em Markdown ou PDF a partir do menu ficheiro.",
    "Quando uma compilação falha, o assistente lê o resultado dos testes e tenta corrigir o código.",
    "Defina um limite de gastos mensal para que um modelo alojado nunca custe mais do que espera.",
    "O modo escuro segue o sistema operativo; pode forçá-lo nas definições de aparência.",
    "As aplicações iniciais dão a um projeto novo um esquema que funciona, testes e uma página.",
    "Se a área isolada não arrancar, verifique se o bubblewrap está instalado.",
    "Os registos são guardados durante trinta dias e podem ser apagados a qualquer momento.",
    "Para partilhar um projeto, copie a pasta ou publique-o a partir da lista de compilações.",
    "Os documentos que juntar à pasta são indexados de novo poucos segundos depois de mudarem.",
];

/// `chunks` sections of real sentences, 350–800 characters each.
fn real_corpus(dir: &Path, chunks: usize, rng: &mut fastrand::Rng) {
    std::fs::create_dir_all(dir).unwrap();
    for f in 0..chunks.div_ceil(SECTIONS_PER_FILE) {
        let mut doc = format!("# Guide {f}\n\n");
        for s in 0..SECTIONS_PER_FILE {
            doc.push_str(&format!("## Topic {s}\n\n"));
            let target = rng.usize(350..800);
            let mut len = 0;
            while len < target {
                let sentence = SENTENCES[rng.usize(..SENTENCES.len())];
                doc.push_str(sentence);
                doc.push(' ');
                len += sentence.len() + 1;
            }
            doc.push_str("\n\n");
        }
        std::fs::write(dir.join(format!("guide{f:05}.md")), doc).unwrap();
    }
}

async fn e5_index(root: &Path, name: &str, model: Arc<dyn Embed>) -> f64 {
    let docs = root.join(name);
    let index = DocsIndex::open(&root.join(format!("{name}.sqlite")), &docs, Some(model)).await.unwrap();
    let stats = index.refresh().await.unwrap();
    let rate = stats.embedded as f64 / stats.elapsed.as_secs_f64();
    println!(
        "  index + e5 vectors, {:<9}{} chunks in {:.1} s = {rate:.1} chunks/s",
        name.trim_start_matches("e5-"),
        stats.embedded,
        stats.elapsed.as_secs_f64()
    );
    rate
}

async fn bench_e5(root: &Path, rng: &mut fastrand::Rng, words: &[String]) {
    let data_dir = std::env::var_os("WRIGHT_TEST_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wright-test-data"));
    if !wright_local::EMBED_MODEL.is_present(&data_dir) {
        println!(
            "\ne5: SKIPPED, no model in {} (run `cargo test -p wright-docs --test meaning` to fetch it)",
            data_dir.display()
        );
        return;
    }
    let path = wright_local::EMBED_MODEL.path_in(&data_dir);
    let model = tokio::task::spawn_blocking(move || wright_local::E5Embedder::load(path)).await.unwrap().unwrap();
    println!("\ne5 ({}), loaded in {}", model.name(), ms(model.load_time()));
    let model: Arc<dyn Embed> = Arc::new(E5(model));
    real_corpus(&root.join("e5-real"), 500, rng);
    e5_index(root, "e5-real", model.clone()).await;
    corpus(&root.join("e5-made-up"), 40, rng, words);
    e5_index(root, "e5-made-up", model.clone()).await;
    let index =
        DocsIndex::open(&root.join("e5-real.sqlite"), &root.join("e5-real"), Some(model.clone())).await.unwrap();
    let qs: Vec<String> =
        (0..100).map(|i| SENTENCES[i % SENTENCES.len()].split(',').next().unwrap_or("").to_string()).collect();
    report("meaning search (e5 query)", &time_searches(&index, &qs, SearchMode::Meaning).await);
    report("fused search (e5 query)", &time_searches(&index, &qs, SearchMode::Fused).await);

    // Searches while another index embeds through the same model: each waits for the batch in
    // progress.
    real_corpus(&root.join("e5-busy"), 60, rng);
    let busy = DocsIndex::open(&root.join("e5-busy.sqlite"), &root.join("e5-busy"), Some(model)).await.unwrap();
    let refresh = tokio::spawn(async move { busy.refresh().await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    report("fused search, while indexing", &time_searches(&index, &qs[..20], SearchMode::Fused).await);
    let stats = refresh.await.unwrap().unwrap();
    println!("  (the other index embedded {} chunks meanwhile)", stats.embedded);
}

fn main() {
    let sizes: Vec<usize> = match std::env::args().skip(1).find_map(|a| a.parse().ok()) {
        Some(n) => vec![n],
        None => vec![10_000, 50_000],
    };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let root = tempfile::tempdir().unwrap();
    let mut rng = fastrand::Rng::with_seed(7);
    let words = vocabulary(&mut rng);
    rt.block_on(async {
        for size in sizes {
            bench_size(root.path(), size, &mut rng, &words).await;
        }
        bench_e5(root.path(), &mut rng, &words).await;
    });
}
