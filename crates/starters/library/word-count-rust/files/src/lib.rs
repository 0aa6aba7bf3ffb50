//! Counts the words, lines and characters of a text, and its most common words.

/// What the program does, shown by --help.
pub const DESCRIPTION: &str = {{ title|tojson }};
/// How many of the most common words are listed.
pub const TOP: usize = {{ top }};
/// Count "The" and "the" as one word.
pub const IGNORE_CASE: bool = {% if ignore_case %}true{% else %}false{% endif %};
/// The shortest word counted, in letters.
pub const MIN_LENGTH: usize = {{ min_length }};
const LINES: &str = {{ lines_label|tojson }};
const WORDS: &str = {{ words_label|tojson }};
const CHARACTERS: &str = {{ characters_label|tojson }};
const TOP_LABEL: &str = {{ top_label|tojson }};

/// Words are runs of letters and digits, apostrophes inside them included ("don't").
pub fn words(text: &str, ignore_case: bool, min_length: usize) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty() && w.chars().count() >= min_length)
        .map(|w| if ignore_case { w.to_lowercase() } else { w.to_string() })
        .collect()
}

/// The `n` most common words with their counts, most common first (ties in order of appearance).
pub fn top_words(words: &[String], n: usize) -> Vec<(String, usize)> {
    let mut order: Vec<(String, usize)> = Vec::new();
    for w in words {
        match order.iter_mut().find(|(seen, _)| seen == w) {
            Some((_, count)) => *count += 1,
            None => order.push((w.clone(), 1)),
        }
    }
    order.sort_by(|a, b| b.1.cmp(&a.1));
    order.truncate(n);
    order
}

/// What the program prints for a text.
pub fn report(text: &str, n: usize) -> String {
    let found = words(text, IGNORE_CASE, MIN_LENGTH);
    let mut out = format!(
        "{LINES}: {}\n{WORDS}: {}\n{CHARACTERS}: {}",
        text.lines().count(),
        found.len(),
        text.chars().count()
    );
    let common = top_words(&found, n);
    if !common.is_empty() {
        out.push_str(&format!("\n{TOP_LABEL}:"));
        for (word, count) in common {
            out.push_str(&format!("\n  {word}: {count}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_letters_digits_and_apostrophes() {
        assert_eq!(words("Don't stop -- it's 2 o'clock!", false, 1), ["Don't", "stop", "it's", "2", "o'clock"]);
    }

    #[test]
    fn counts_words_in_any_alphabet_and_ignores_extra_spaces() {
        assert_eq!(words("  olá   mundo\n\nnovo ", true, 1).len(), 3);
        assert!(words("", true, 1).is_empty());
    }

    #[test]
    fn case_and_short_words_follow_the_options() {
        assert_eq!(words("The the THE a", true, 2), ["the", "the", "the"]);
        assert_eq!(words("The the a", false, 1), ["The", "the", "a"]);
    }

    #[test]
    fn most_common_words_first() {
        let w: Vec<String> = "b a b c b a".split(' ').map(String::from).collect();
        assert_eq!(top_words(&w, 2), [("b".to_string(), 3), ("a".to_string(), 2)]);
        assert!(top_words(&w, 0).is_empty());
    }

    #[test]
    fn report_counts_lines_words_and_characters() {
        let out = report("one two\nthree\n", 1);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].ends_with(": 2") && lines[1].ends_with(": 3") && lines[2].ends_with(": 14"), "{out}");
    }
}
