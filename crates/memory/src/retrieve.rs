//! Choosing the notes a build gets.

use std::collections::HashSet;
use wright_store::note::{UNIVERSAL_KEY, err_key, lib_key, pattern_words, tag_key, tag_words};
use wright_store::{Note, Store, StoreError};

/// Tokens of notes a prompt gets unless told otherwise (`--note-budget`).
pub const DEFAULT_NOTE_BUDGET: u32 = 800;

/// How many candidates retrieval ranks before applying the budget.
const CANDIDATES: u32 = 64;

/// What a build is about, for matching notes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Query<'a> {
    /// The user's request in their words.
    pub prompt: &'a str,
    /// The resolved template (`static`, `interactive`, `fullstack`).
    pub template: &'a str,
    /// Packages the project uses or the errors name.
    pub libraries: &'a [String],
    /// The failure being fixed, when fixing (empty before generation).
    pub errors: &'a str,
}

/// The index keys a query looks up (see [`Note::keys`]), most telling first: the store reads
/// only so many. A request's words count both as tags and as library names, since people name
/// libraries in requests ("with express").
pub fn query_keys(q: &Query<'_>) -> Vec<String> {
    let mut keys = vec![UNIVERSAL_KEY.to_string()];
    keys.extend(q.libraries.iter().filter_map(|l| lib_key(l)));
    keys.extend(tag_words(q.template).iter().map(|w| tag_key(w)));
    keys.extend(pattern_words(q.errors).iter().take(64).map(|w| err_key(w)));
    for w in tag_words(q.prompt) {
        keys.extend(lib_key(&w));
        keys.push(tag_key(&w));
    }
    let mut seen = HashSet::new();
    keys.retain(|k| seen.insert(k.clone()));
    keys
}

/// A rough token count (four characters a token), enough for a prompt budget.
pub fn approx_tokens(text: &str) -> u32 {
    (text.chars().count() as u32).div_ceil(4)
}

/// How a note reads in a prompt.
pub fn lesson_line(n: &Note) -> String {
    format!("{}: {}", n.trigger.trim(), n.lesson.trim())
}

/// Whether `pattern` (case-insensitive; `*` matches anything) occurs in `text`.
fn pattern_matches(pattern: &str, text_lower: &str) -> bool {
    let p = pattern.to_lowercase();
    let pieces: Vec<&str> = p.split('*').map(str::trim).filter(|s| !s.is_empty()).collect();
    if pieces.is_empty() {
        return false;
    }
    let mut rest = text_lower;
    for piece in pieces {
        match rest.find(piece) {
            Some(i) => rest = &rest[i + piece.len()..],
            None => return false,
        }
    }
    true
}

/// The notes for a build: non-deprecated notes sharing a library, tag or error pattern with
/// the query, or universal ones; best score first; as many as fit in `budget` tokens.
/// A note reached only through error words must really match one of its patterns.
pub async fn retrieve(store: &dyn Store, q: &Query<'_>, budget: u32) -> Result<Vec<Note>, StoreError> {
    if budget == 0 {
        return Ok(Vec::new());
    }
    let keys = query_keys(q);
    let wanted: HashSet<&str> = keys.iter().map(String::as_str).collect();
    let errors = q.errors.to_lowercase();
    let mut hits = store.find_notes(&keys, CANDIDATES).await?;
    hits.retain(|h| {
        let note_keys = h.note.keys();
        let shared: Vec<&String> = note_keys.iter().filter(|k| wanted.contains(k.as_str())).collect();
        let only_errors = !shared.is_empty() && shared.iter().all(|k| k.starts_with("err:"));
        !only_errors || h.note.error_patterns.iter().any(|p| pattern_matches(p, &errors))
    });
    hits.sort_by(|a, b| {
        b.note.confidence.total_cmp(&a.note.confidence).then(b.matched.cmp(&a.matched)).then(a.note.id.cmp(&b.note.id))
    });
    let mut left = budget;
    let mut out = Vec::new();
    for h in hits {
        let cost = approx_tokens(&lesson_line(&h.note)) + 4;
        if cost <= left {
            left -= cost;
            out.push(h.note);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_in_order_with_wildcards() {
        assert!(pattern_matches("Cannot find module '*'", "error: cannot find module 'express'"));
        assert!(pattern_matches("* is not a function", "typeerror: x.tofixed is not a function"));
        assert!(!pattern_matches("is not a function *defined", "x is defined; is not a function"));
        assert!(!pattern_matches("*", "anything"));
    }

    #[test]
    fn keys_cover_words_template_libraries_and_errors() {
        let libs = vec!["Express".to_string()];
        let k = query_keys(&Query {
            prompt: "A countdown timer",
            template: "interactive",
            libraries: &libs,
            errors: "TypeError: x is not a function",
        });
        for want in ["tag:timer", "lib:timer", "tag:countdown-timer", "tag:interactive", "lib:express", "err:function"]
        {
            assert!(k.contains(&want.to_string()), "{want} missing from {k:?}");
        }
        assert!(k.contains(&UNIVERSAL_KEY.to_string()));
    }
}
