//! Property tests: the chunkers never panic and never lose words; the FTS5 query builder never
//! writes a query SQLite rejects.

use crate::chunk::{Chunk, OVERLAP_CHARS, TARGET_CHARS};
use crate::fts::fts_query;
use crate::reader::{Kind, chunk};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::collections::HashSet;

fn words_of(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
}

/// Every word in headings and texts of `chunks`.
fn seen(chunks: &[Chunk]) -> HashSet<String> {
    chunks.iter().flat_map(|c| words_of(&c.heading).chain(words_of(&c.text)).map(String::from)).collect()
}

fn assert_sizes(chunks: &[Chunk]) -> Result<(), TestCaseError> {
    for c in chunks {
        prop_assert!(!c.text.trim().is_empty(), "an empty chunk under {:?}", c.heading);
        let n = c.text.chars().count();
        prop_assert!(n <= TARGET_CHARS + OVERLAP_CHARS + 1, "a chunk of {} chars", n);
        prop_assert!(!c.text.contains("  ") && !c.text.contains('\n'), "whitespace not collapsed: {:?}", c.text);
    }
    Ok(())
}

fn word() -> impl Strategy<Value = String> {
    "[a-zA-Zçãõéêáíóúà][a-zA-Z0-9çãõéêáíóú]{0,11}"
}

fn words(max: usize) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(word(), 1..max)
}

/// Markup and the words a reader sees in it.
type Marked = (String, Vec<String>);

fn joined(parts: Vec<Marked>, sep: &str) -> Marked {
    let (markup, words): (Vec<String>, Vec<Vec<String>>) = parts.into_iter().unzip();
    (markup.join(sep), words.concat())
}

fn plain(ws: &[String], sep: &str) -> Marked {
    (ws.join(sep), ws.to_vec())
}

/// A Markdown section: a heading, then blocks that each hold at least one word.
fn md_section() -> impl Strategy<Value = Marked> {
    let inline = (word(), 0..5u8).prop_map(|(w, style)| {
        let markup = match style {
            0 => format!("*{w}*"),
            1 => format!("**{w}**"),
            2 => format!("`{w}`"),
            3 => format!("[{w}](https://example.invalid/{w})"),
            _ => w.clone(),
        };
        (markup, vec![w])
    });
    let block = prop_oneof![
        3 => prop::collection::vec(inline, 1..200).prop_map(|p| joined(p, " ")),
        1 => words(20).prop_map(|ws| {
            let (code, ws) = plain(&ws, "\n");
            (format!("```\n{code}\n```"), ws)
        }),
        1 => prop::collection::vec(words(8), 1..5).prop_map(|items| {
            joined(items.iter().map(|ws| (format!("- {}", ws.join(" ")), ws.clone())).collect(), "\n")
        }),
        1 => words(10).prop_map(|ws| (format!("> {}", ws.join(" ")), ws)),
    ];
    ((1..=6usize, words(6)), prop::collection::vec(block, 1..4)).prop_map(|((level, heading), blocks)| {
        let (body, body_words) = joined(blocks, "\n\n");
        (format!("{} {}\n\n{body}\n", "#".repeat(level), heading.join(" ")), [heading, body_words].concat())
    })
}

/// An HTML section, the same way.
fn html_section() -> impl Strategy<Value = Marked> {
    let inline = (word(), 0..5u8).prop_map(|(w, style)| {
        let markup = match style {
            0 => format!("<em>{w}</em>"),
            1 => format!("<b class=\"x\">{w}</b>"),
            2 => format!("<code>{w}</code>"),
            3 => format!("<a href='/x?a=1&amp;b=2'>{w}</a>"),
            _ => w.clone(),
        };
        (markup, vec![w])
    });
    let block = prop_oneof![
        3 => prop::collection::vec(inline, 1..200).prop_map(|p| {
            let (markup, ws) = joined(p, " ");
            (format!("<p>{markup}</p>"), ws)
        }),
        1 => words(20).prop_map(|ws| (format!("<pre><code>{}</code></pre>", ws.join("\n")), ws)),
        1 => words(8).prop_map(|ws| {
            (format!("<ul>{}</ul>", ws.iter().map(|w| format!("<li>{w}</li>")).collect::<String>()), ws)
        }),
        1 => words(10).prop_map(|ws| (format!("<div><span>{}</span></div>", ws.join(" ")), ws)),
    ];
    ((1..=6usize, words(6)), prop::collection::vec(block, 1..4)).prop_map(|((level, heading), blocks)| {
        let (body, body_words) = joined(blocks, "\n");
        (format!("<h{level}>{}</h{level}>\n{body}\n", heading.join(" ")), [heading, body_words].concat())
    })
}

proptest! {
    #![proptest_config(Config { cases: 256, ..Config::default() })]

    #[test]
    fn markdown_never_panics(text in any::<String>()) {
        assert_sizes(&chunk(Kind::Markdown, &text))?;
    }

    #[test]
    fn markdown_syntax_soup_never_panics(text in "[#*_`\\[\\]()<>!\\-+=|~:{}\n a-z0-9&;]{0,400}") {
        assert_sizes(&chunk(Kind::Markdown, &text))?;
    }

    #[test]
    fn html_never_panics(text in any::<String>()) {
        assert_sizes(&chunk(Kind::Html, &text))?;
    }

    #[test]
    fn html_tag_soup_never_panics(text in "(<|</|>|/>|<!--|-->|<!\\[CDATA\\[|\\]\\]>|&|;|#|x|h[1-7]|script|p|nav| |=|\"|'|id|[a-zé])*") {
        assert_sizes(&chunk(Kind::Html, &text))?;
    }

    #[test]
    fn plain_text_keeps_every_word(text in "[a-zA-Zçãõéáíóú .,!?\n]{0,3000}") {
        for kind in [Kind::Markdown, Kind::Html] {
            let chunks = chunk(kind, &text);
            assert_sizes(&chunks)?;
            let seen = seen(&chunks);
            for w in words_of(&text) {
                prop_assert!(seen.contains(w), "{:?} lost the word {:?}", kind, w);
            }
        }
    }

    #[test]
    fn markdown_keeps_every_word(sections in prop::collection::vec(md_section(), 1..8), intro in words(30)) {
        let doc = format!("{}\n\n{}", intro.join(" "), sections.iter().map(|(s, _)| s.as_str()).collect::<String>());
        let chunks = chunk(Kind::Markdown, &doc);
        assert_sizes(&chunks)?;
        let seen = seen(&chunks);
        for w in intro.iter().chain(sections.iter().flat_map(|(_, ws)| ws)) {
            prop_assert!(seen.contains(w.as_str()), "lost {:?} from\n{}", w, doc);
        }
    }

    #[test]
    fn html_keeps_every_word(sections in prop::collection::vec(html_section(), 1..8), title in words(5)) {
        let doc = format!(
            "<html><head><title>{}</title><script>var hidden = 1;</script></head><body>{}</body></html>",
            title.join(" "),
            sections.iter().map(|(s, _)| s.as_str()).collect::<String>()
        );
        let chunks = chunk(Kind::Html, &doc);
        assert_sizes(&chunks)?;
        let seen = seen(&chunks);
        for w in title.iter().chain(sections.iter().flat_map(|(_, ws)| ws)) {
            prop_assert!(seen.contains(w.as_str()), "lost {:?} from\n{}", w, doc);
        }
        prop_assert!(!seen.contains("hidden"));
    }
}

/// Every query the builder writes is accepted by FTS5 with the index's tokenizer.
#[test]
fn fts_queries_always_parse() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let pool = rt.block_on(async {
        let pool = sqlx::sqlite::SqlitePoolOptions::new().max_connections(1).connect("sqlite::memory:").await.unwrap();
        sqlx::query("CREATE VIRTUAL TABLE t USING fts5(heading, body, tokenize='unicode61 remove_diacritics 2')")
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("INSERT INTO t(heading, body) VALUES ('Adicionar uma ferramenta', 'Configuração NEAR AND OR')")
            .execute(&pool)
            .await
            .unwrap();
        pool
    });
    let strategy = prop_oneof![
        any::<String>(),
        "[\"*():^+\\-{}\\[\\],.;' a-zA-Z0-9çé]{0,60}",
        "(NEAR|AND|OR|NOT|heading:|body:|\\^|\\*|\"|\\(|\\)|\\{|\\}| |x|ção|\u{301}|\u{345}|\u{200d}|\u{fe0f}|😀|٣|Ⅻ)*",
        "\\PC{0,40}",
    ];
    let mut runner = TestRunner::new(Config { cases: 2_000, ..Config::default() });
    runner
        .run(&strategy, |q| {
            if let Some(fts) = fts_query(&q) {
                rt.block_on(sqlx::query("SELECT count(*) FROM t WHERE t MATCH ?").bind(&fts).fetch_one(&pool))
                    .map_err(|e| TestCaseError::fail(format!("{q:?} became {fts:?}, rejected: {e}")))?;
            } else {
                prop_assert!(!q.chars().any(char::is_alphanumeric), "{:?} gave no query", q);
            }
            Ok(())
        })
        .unwrap();
}
