use super::*;
use proptest::prelude::*;

#[test]
fn short_text_is_unchanged() {
    assert_eq!(clip("short", 10), "short");
    assert_eq!(clip_with("short", 5, Unit::Bytes, "…"), "short");
    assert_eq!(head("ab", 5, Unit::Bytes), "ab");
    assert_eq!(tail("ab", 5, Unit::Chars), "ab");
}

#[test]
fn the_marker_counts_inside_the_limit() {
    assert_eq!(clip("abcdefghij", 5), "abcd…");
    assert_eq!(clip("abc   defghij", 7), "abc…");
    assert_eq!(clip_with("abcdefghij", 6, Unit::Bytes, "…"), "abc…");
    assert_eq!(clip_with("abcdefghij", 2, Unit::Bytes, "…"), "ab");
}

#[test]
fn bytes_never_split_a_character() {
    // "ã" is two bytes: three bytes hold one of them, not one and a half.
    assert_eq!(head("ããã", 3, Unit::Bytes), "ã");
    assert_eq!(tail("ããã", 3, Unit::Bytes), "ã");
    assert_eq!(head("ããã", 2, Unit::Chars), "ãã");
    assert_eq!(tail("abc", 2, Unit::Chars), "bc");
}

#[test]
fn one_line_collapses_white_space() {
    assert_eq!(clip_line("a  b\nc", 10), "a b c");
    assert_eq!(clip_line(" a \n b ", 10), "a b");
    assert_eq!(clip_line("abcdefghij", 5), "abcd…");
}

#[test]
fn words_are_not_cut_in_half() {
    assert_eq!(clip_words("short", 10), "short");
    assert_eq!(clip_words("one two three four", 11), "one two…");
    assert_eq!(clip_words("ããããããããããããã", 6), "ããããã…");
}

fn unit() -> impl Strategy<Value = Unit> {
    prop_oneof![Just(Unit::Chars), Just(Unit::Bytes)]
}

proptest! {
    /// Slicing in the wrong place would panic; a result is always a valid `str` by type, so
    /// what is checked is that it is a prefix (or suffix) cut where `s` has a boundary.
    #[test]
    fn head_and_tail_stay_within_the_limit(s in "\\PC{0,40}", max in 0usize..60, unit in unit()) {
        let h = head(&s, max, unit);
        prop_assert!(s.starts_with(h) && s.is_char_boundary(h.len()));
        prop_assert!(len(h, unit) <= max);
        let t = tail(&s, max, unit);
        prop_assert!(s.ends_with(t) && s.is_char_boundary(s.len() - t.len()));
        prop_assert!(len(t, unit) <= max);
        if len(&s, unit) <= max {
            prop_assert_eq!(h, s.as_str());
            prop_assert_eq!(t, s.as_str());
        } else {
            // As much as fits: one more character would not.
            let next = s[h.len()..].chars().next().map_or(0, |c| match unit { Unit::Chars => 1, Unit::Bytes => c.len_utf8() });
            prop_assert!(len(h, unit) + next > max);
        }
    }

    #[test]
    fn clips_never_exceed_the_limit_and_keep_short_text(
        s in "(\\PC|\\s){0,40}",
        max in 0usize..60,
        unit in unit(),
        marker in prop_oneof![Just(""), Just("…"), Just("\n[…cut]")],
    ) {
        let c = clip_with(&s, max, unit, marker);
        prop_assert!(len(&c, unit) <= max, "{c:?} is over {max}");
        if len(&s, unit) <= max {
            prop_assert_eq!(&c, &s);
        } else {
            let kept = c.strip_suffix(marker).unwrap_or(&c);
            prop_assert!(s.starts_with(kept));
        }
        for c in [clip(&s, max), clip_line(&s, max), clip_words(&s, max)] {
            prop_assert!(c.chars().count() <= max, "{c:?} is over {max}");
        }
        if s.chars().count() <= max {
            prop_assert_eq!(clip(&s, max), s.clone());
            prop_assert_eq!(clip_words(&s, max), s.clone());
        }
    }
}
