//! What a flashcard must be before it reaches a learner's deck. A model (the small built-in one
//! above all) can return anything: random tokens ("aadfade-1234567890"), an empty or endless
//! side, the term repeated as its own definition, or a term nobody mentioned. Generated cards
//! are hostile input: [`sound`] refuses malformed ones, and [`grounded`] makes a background
//! card answer to the conversation (its term said by the learner or the reply, its back taken
//! from the reply).

use crate::relevance::fold;

/// The longest term a card's front may hold, in characters and in words.
pub const MAX_FRONT: usize = 80;
pub const MAX_FRONT_WORDS: usize = 8;
/// The shortest and longest back, in characters.
pub const MIN_BACK: usize = 8;
pub const MAX_BACK: usize = 400;

/// Words of `text`, folded, without punctuation.
fn words(text: &str) -> Vec<String> {
    fold(text).split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_string).collect()
}

/// A token no language writes: a long run of digits, or one overlong blob.
fn garbage_token(token: &str) -> bool {
    let mut run = 0;
    for c in token.chars() {
        run = if c.is_ascii_digit() { run + 1 } else { 0 };
        if run >= 5 {
            return true;
        }
    }
    token.chars().count() > 30
}

/// Why the card is malformed, if it is.
pub fn sound(front: &str, back: &str) -> Result<(), String> {
    let (front, back) = (front.trim(), back.trim());
    if front.is_empty() || back.is_empty() {
        return Err("a side is empty".into());
    }
    if front.chars().count() > MAX_FRONT || front.split_whitespace().count() > MAX_FRONT_WORDS {
        return Err(format!("the front is longer than a term ({MAX_FRONT} characters, {MAX_FRONT_WORDS} words)"));
    }
    let n = back.chars().count();
    if !(MIN_BACK..=MAX_BACK).contains(&n) {
        return Err(format!("the back must be {MIN_BACK} to {MAX_BACK} characters, not {n}"));
    }
    if let Some(t) = front.split_whitespace().chain(back.split_whitespace()).find(|t| garbage_token(t)) {
        return Err(format!("`{t}` is not a word"));
    }
    if !front.chars().any(char::is_alphabetic) || !back.chars().any(char::is_alphabetic) {
        return Err("a side has no words".into());
    }
    let (f, b) = (words(front), words(back));
    if b.iter().all(|w| f.contains(w)) {
        return Err("the back only repeats the term".into());
    }
    Ok(())
}

/// A word's stem for matching across inflections ("membranes" ~ "membrane").
fn stem(w: &str) -> String {
    w.chars().take(5).collect()
}

/// The sentences of `text` (split after `.`, `!`, `?` and line breaks).
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        cur.push(c);
        if matches!(c, '.' | '!' | '?' | '\n') {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// The card as it may enter the deck, for a learner who sent `message` and got `reply`: the
/// term must be in one of them; the back stays if most of its words are the reply's, else it
/// becomes the reply's first sentence that names the term; without such a sentence (or with a
/// malformed card) the card is refused, with the reason.
pub fn grounded(front: &str, back: &str, message: &str, reply: &str) -> Result<(String, String), String> {
    sound(front, back)?;
    let term = words(front).join(" ");
    let said = format!(" {} {} ", words(message).join(" "), words(reply).join(" "));
    if term.is_empty() || !said.contains(&format!(" {term} ")) {
        return Err(format!("\"{}\" is not a term from the conversation", front.trim()));
    }
    let known: std::collections::HashSet<String> = words(reply).iter().map(|w| stem(w)).collect();
    let content: Vec<String> = words(back).into_iter().filter(|w| w.chars().count() >= 4).collect();
    let found = content.iter().filter(|w| known.contains(&stem(w))).count();
    if !content.is_empty() && found * 10 >= content.len() * 7 {
        return Ok((front.trim().to_string(), back.trim().to_string()));
    }
    let from_reply = sentences(reply).into_iter().find(|s| {
        let w = format!(" {} ", words(s).join(" "));
        w.contains(&format!(" {term} ")) && sound(front, s).is_ok()
    });
    match from_reply {
        Some(s) => Ok((front.trim().to_string(), s)),
        None => Err("the back is not in the answer, and no sentence of the answer defines the term".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPLY: &str = "Osmosis is the movement of water across a membrane. It evens out concentrations.";

    #[test]
    fn malformed_cards_are_refused() {
        for (f, b) in [
            ("aadfade-1234567890", "aadfade-1234567890"),
            ("Osmosis", "aadfade-1234567890 water"),
            ("", "Water moving across a membrane."),
            ("Osmosis", ""),
            ("Osmosis", "Osmosis."),
            ("Osmosis", "osmosis OSMOSIS"),
            ("a very long front that is a whole sentence and not a term at all", "Water moving."),
            ("Osmosis", &"water ".repeat(100)),
            ("12345", "a number, really"),
        ] {
            assert!(sound(f, b).is_err(), "{f:?} / {b:?}");
        }
        assert!(sound("CO2", "Carbon dioxide, a gas plants take in.").is_ok());
        assert!(sound("COVID-19", "The disease caused by SARS-CoV-2.").is_ok());
    }

    #[test]
    fn a_background_card_answers_to_the_conversation() {
        let msg = "what is osmosis? I need to remember it";
        // Grounded in the reply: kept.
        let ok = grounded("Osmosis", "The movement of water across a membrane.", msg, REPLY);
        assert_eq!(ok, Ok(("Osmosis".into(), "The movement of water across a membrane.".into())));
        // Not in the reply: the reply's own sentence replaces it.
        let swapped = grounded("Osmosis", "The capital of France is Paris.", msg, REPLY);
        assert_eq!(swapped, Ok(("Osmosis".into(), "Osmosis is the movement of water across a membrane.".into())));
        // A term nobody said.
        assert!(grounded("Mitochondria", "The powerhouse of the cell.", msg, REPLY).is_err());
        // Nothing in the reply names the term: refused rather than invented.
        assert!(grounded("Osmosis", "The capital of France is Paris.", msg, "I am not sure.").is_err());
    }
}
