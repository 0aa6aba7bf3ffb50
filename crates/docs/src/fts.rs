//! Turning what a person typed into an FTS5 query that cannot be misread as FTS5 syntax.
//!
//! Every term becomes a quoted phrase (`"tool"*`), so `AND`, `NEAR(`, `col:` or a stray quote
//! in the question are just words. Terms are joined with `OR` and ranked by bm25: a question
//! such as "how do I add a tool?" should find the section that has "add" and "tool" even though
//! it lacks "how".

/// At most this many terms are sent; a pasted page must not become a thousand-term query.
const MAX_TERMS: usize = 24;
/// Terms this long or longer also match words they begin ("tool" finds "tools", "toolbar").
const PREFIX_FROM: usize = 3;
/// Terms this long (after a plural `s`) also lose a final vowel, where Portuguese and English
/// inflections differ ("adiciono"/"adicionar", "escuro"/"escura", "configure"/"configuring").
const STEM_FROM: usize = 6;

/// Words too common in questions to say anything about the answer (English and Portuguese).
/// Dropped unless the question has nothing else.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "do", "does", "for", "from", "how", "i",
    "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "should", "so", "that", "the", "their",
    "then", "there", "these", "this", "to", "was", "we", "what", "when", "where", "which", "who", "why", "will",
    "with", "would", "you", "your", "ao", "aos", "as", "com", "como", "da", "das", "de", "do", "dos", "e", "é", "ela",
    "ele", "em", "esta", "este", "eu", "isso", "isto", "mas", "meu", "minha", "na", "nas", "no", "nos", "não", "o",
    "os", "ou", "para", "pela", "pelo", "por", "pra", "qual", "quando", "que", "se", "seu", "sua", "um", "uma", "umas",
    "uns", "à", "às",
];

/// The FTS5 `MATCH` expression for `query`, or `None` when it has no word to look for (only
/// punctuation, say).
pub(crate) fn fts_query(query: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    for word in query.split(|c: char| !is_term_char(c)).filter(|w| !w.is_empty()) {
        let word = word.to_lowercase();
        if !words.contains(&word) {
            words.push(word);
        }
    }
    let content: Vec<&String> = words.iter().filter(|w| !STOPWORDS.contains(&w.as_str())).collect();
    let chosen: Vec<&String> = if content.is_empty() { words.iter().collect() } else { content };
    let terms: Vec<String> = chosen.into_iter().take(MAX_TERMS).map(|w| term(w)).collect();
    if terms.is_empty() { None } else { Some(terms.join(" OR ")) }
}

/// A letter, digit or combining mark: what the `unicode61` tokenizer keeps inside a token.
fn is_term_char(c: char) -> bool {
    c.is_alphanumeric() || crate::chunk::is_combining(c)
}

/// One quoted term. Longer ones match as prefixes of a light stem: a plural `s` and then one
/// final vowel are dropped, so "ferramentas" finds "ferramenta", "adiciono" finds "adicionar"
/// and "tools" finds "tool" (no dictionary: a stemmer per language is more than a docs folder
/// needs, and bm25 still prefers the exact word's chunks through the other terms).
fn term(word: &str) -> String {
    let chars = word.chars().count();
    let mut stem = word;
    if chars > PREFIX_FROM + 1 {
        stem = stem.strip_suffix('s').unwrap_or(stem);
    }
    if stem.chars().count() >= STEM_FROM {
        stem = stem.strip_suffix(['a', 'e', 'o']).unwrap_or(stem);
    }
    // A term is letters and digits only, but quotes are doubled all the same: the quoting
    // must not rest on how the words were split.
    let quoted = format!("\"{}\"", stem.replace('"', "\"\""));
    if chars >= PREFIX_FROM { format!("{quoted}*") } else { quoted }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_quoted_and_joined() {
        assert_eq!(fts_query("How do I add a tool?").as_deref(), Some("\"add\"* OR \"tool\"*"));
        assert_eq!(fts_query("como adiciono uma ferramenta?").as_deref(), Some("\"adicion\"* OR \"ferrament\"*"));
        assert_eq!(fts_query("ferramentas tools Ação").as_deref(), Some("\"ferrament\"* OR \"tool\"* OR \"ação\"*"));
        assert_eq!(fts_query("js").as_deref(), Some("\"js\""));
    }

    #[test]
    fn syntax_is_just_words() {
        assert_eq!(
            fts_query("heading: NEAR(\"a\" b) AND -x*").as_deref(),
            Some("\"heading\"* OR \"near\"* OR \"b\" OR \"x\"")
        );
        assert_eq!(fts_query("\"\"\"").as_deref(), None);
        assert_eq!(fts_query("?!…  ---").as_deref(), None);
        assert_eq!(fts_query("").as_deref(), None);
    }

    #[test]
    fn only_stopwords_are_kept_when_nothing_else() {
        assert_eq!(fts_query("what is it").as_deref(), Some("\"what\"* OR \"is\" OR \"it\""));
        assert_eq!(fts_query("the The THE").as_deref(), Some("\"the\"*"));
    }

    #[test]
    fn long_input_is_capped() {
        let q = fts_query(&(0..500).map(|i| format!("word{i}")).collect::<Vec<_>>().join(" "));
        assert_eq!(q.map(|q| q.matches(" OR ").count() + 1), Some(MAX_TERMS));
    }
}
