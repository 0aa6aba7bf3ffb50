//! Text clipping and cleaning, written once.
//!
//! Error messages quote bodies, prompts quote files and lessons, the CLI prints one-line
//! summaries, the store keeps titles: all of them cut a text to a limit. They cut in one place
//! so that no caller splits a UTF-8 character, overshoots its limit or changes a text that
//! already fits. The variants are the few the callers need: a limit in characters or in bytes
//! ([`Unit`]), a marker saying something was cut (counted inside the limit), one line, a word
//! boundary, or the end instead of the start ([`tail`]). Cleaning removes what a person cannot
//! see before a model reads it ([`hidden`]).

pub mod hidden;

/// What a limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Unicode scalar values: what a person reads, what prompts and titles are measured in.
    Chars,
    /// UTF-8 bytes: what a buffer, a column or a tool's output budget is measured in.
    Bytes,
}

/// The marker most clips end with when they cut.
pub const ELLIPSIS: &str = "…";

/// The byte index where the first `max` units of `s` end, on a character boundary.
fn head_end(s: &str, max: usize, unit: Unit) -> usize {
    match unit {
        Unit::Chars => s.char_indices().nth(max).map_or(s.len(), |(i, _)| i),
        Unit::Bytes => {
            if s.len() <= max {
                return s.len();
            }
            let mut end = max;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            end
        }
    }
}

/// `s`'s length in `unit`.
pub fn len(s: &str, unit: Unit) -> usize {
    match unit {
        Unit::Chars => s.chars().count(),
        Unit::Bytes => s.len(),
    }
}

/// The longest start of `s` of at most `max` units; `s` itself when it fits.
pub fn head(s: &str, max: usize, unit: Unit) -> &str {
    &s[..head_end(s, max, unit)]
}

/// The longest end of `s` of at most `max` units; `s` itself when it fits.
pub fn tail(s: &str, max: usize, unit: Unit) -> &str {
    let start = match unit {
        Unit::Chars => {
            let n = s.chars().count();
            if n <= max {
                return s;
            }
            s.char_indices().nth(n - max).map_or(s.len(), |(i, _)| i)
        }
        Unit::Bytes => {
            if s.len() <= max {
                return s;
            }
            let mut start = s.len() - max;
            while !s.is_char_boundary(start) {
                start += 1;
            }
            start
        }
    };
    &s[start..]
}

/// `s` unchanged when it fits in `max` units; otherwise its start, trailing white space
/// trimmed, followed by `marker`, all within `max`. A marker longer than the limit is left out
/// rather than overshoot.
pub fn clip_with(s: &str, max: usize, unit: Unit, marker: &str) -> String {
    if len(s, unit) <= max {
        return s.to_string();
    }
    let room = max.checked_sub(len(marker, unit));
    match room {
        Some(room) => format!("{}{marker}", head(s, room, unit).trim_end()),
        None => head(s, max, unit).to_string(),
    }
}

/// `s` within `max` characters, `…` (counted) when cut: the everyday clip.
pub fn clip(s: &str, max: usize) -> String {
    clip_with(s, max, Unit::Chars, ELLIPSIS)
}

/// `s` as one line (white space runs collapsed to one space, ends trimmed) within `max`
/// characters, `…` when cut: for table cells, titles and one-line summaries.
pub fn clip_line(s: &str, max: usize) -> String {
    clip(&s.split_whitespace().collect::<Vec<_>>().join(" "), max)
}

/// `s` within `max` characters, cut at the last space in the second half of what fits so a
/// snippet does not end mid-word, `…` when cut.
pub fn clip_words(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let Some(room) = max.checked_sub(1) else {
        return String::new();
    };
    let fits = head(s, room, Unit::Chars);
    let cut = fits.rfind(' ').filter(|&i| s[..i].chars().count() > room / 2).unwrap_or(fits.len());
    format!("{}{ELLIPSIS}", s[..cut].trim_end())
}

#[cfg(test)]
mod tests;
