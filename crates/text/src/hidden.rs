//! Characters a person cannot see, removed from text before a model reads it.
//!
//! A prompt, a chat message or a tool's description can carry characters that do not show on
//! screen but do reach the model: NUL and other control characters, right-to-left overrides
//! that make text read differently from how it is stored, zero-width characters and Unicode
//! "tag" characters that spell ASCII invisibly. Instructions hidden that way are a known way
//! to steer a model behind a person's back, and NUL cannot even be stored by PostgreSQL. What a
//! person typed keeps every character they could see: letters of any script, emoji, line
//! breaks and tabs.

/// What kind of invisible character was removed, for saying so in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Hidden {
    /// NUL and the other C0/C1 control characters (line breaks and tabs are kept).
    Control,
    /// Bidirectional embeddings, overrides, isolates and marks, which reorder what is shown.
    Bidi,
    /// Zero-width spaces and joiners, word joiners, invisible operators, the byte-order mark,
    /// soft hyphens and variation selectors.
    ZeroWidth,
    /// Unicode tag characters (U+E0000–U+E007F), which spell ASCII that nobody sees.
    Tag,
}

/// The kind of invisible character `c` is, or `None` for one a person can see (or a line
/// break, carriage return or tab, which only lay text out).
pub fn classify(c: char) -> Option<Hidden> {
    match c {
        '\n' | '\r' | '\t' => None,
        '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => Some(Hidden::Bidi),
        '\u{200B}'..='\u{200D}'
        | '\u{2060}'..='\u{2065}'
        | '\u{206A}'..='\u{206F}'
        | '\u{FEFF}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{E0100}'..='\u{E01EF}'
        | '\u{00AD}'
        | '\u{180E}' => Some(Hidden::ZeroWidth),
        '\u{E0000}'..='\u{E007F}' => Some(Hidden::Tag),
        c if c.is_control() => Some(Hidden::Control),
        _ => None,
    }
}

/// Whether `c` is a character [`strip`] removes.
pub fn is_hidden(c: char) -> bool {
    classify(c).is_some()
}

/// A text with its invisible characters removed, and what was removed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Stripped {
    pub text: String,
    /// How many characters were removed.
    pub removed: usize,
    /// The kinds removed, each once, in [`Hidden`]'s order.
    pub kinds: Vec<Hidden>,
}

/// `text` without the characters a person cannot see; `text` unchanged when it has none.
pub fn strip(text: &str) -> Stripped {
    if !text.chars().any(is_hidden) {
        return Stripped { text: text.to_string(), removed: 0, kinds: Vec::new() };
    }
    let mut out = Stripped { text: String::with_capacity(text.len()), ..Stripped::default() };
    for c in text.chars() {
        match classify(c) {
            Some(kind) => {
                out.removed += 1;
                if !out.kinds.contains(&kind) {
                    out.kinds.push(kind);
                }
            }
            None => out.text.push(c),
        }
    }
    out.kinds.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn removes_what_cannot_be_seen_and_says_what() {
        let s = strip("a timer\u{0000} that\u{202E}kcab\u{202C} counts\u{200B} down\u{E0041}");
        assert_eq!(s.text, "a timer thatkcab counts down");
        assert_eq!(s.removed, 5);
        assert_eq!(s.kinds, [Hidden::Control, Hidden::Bidi, Hidden::ZeroWidth, Hidden::Tag]);
    }

    #[test]
    fn keeps_what_a_person_typed() {
        for text in ["contador regressivo — ação", "一个计时器", "عداد تنازلي", "a 🎉 party\nline two\tand a tab\r\n"]
        {
            let s = strip(text);
            assert_eq!((s.text.as_str(), s.removed), (text, 0), "{text:?}");
        }
    }

    proptest! {
        /// Nothing hidden survives, everything visible does, in order.
        #[test]
        fn strips_exactly_the_hidden(text in "\\PC{0,40}", hidden in proptest::collection::vec(
            prop_oneof![Just('\u{0}'), Just('\u{7}'), Just('\u{202E}'), Just('\u{2066}'), Just('\u{200B}'),
                        Just('\u{FEFF}'), Just('\u{E0020}'), Just('\u{E007F}'), Just('\u{9F}')], 0..8)) {
            let mixed: String = text.chars().zip(hidden.iter().cycle()).flat_map(|(c, h)| [c, *h]).collect();
            let s = strip(&mixed);
            prop_assert!(!s.text.chars().any(is_hidden));
            let visible: String = mixed.chars().filter(|c| !is_hidden(*c)).collect();
            prop_assert_eq!(&s.text, &visible);
            prop_assert_eq!(s.removed, mixed.chars().count() - visible.chars().count());
        }
    }
}
