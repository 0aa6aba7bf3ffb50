//! Text clean-up shared by the parsers: ANSI stripping, length caps, stack frames.

/// Error texts longer than this many characters are cut, because the model's context
/// is better spent on more failures than on one long stack dump.
pub const MAX_ERROR_CHARS: usize = 2_000;

/// Removes ANSI escape sequences (colours, cursor movement, hyperlinks), which runners
/// emit when they think they talk to a terminal and which only confuse the model.
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' && c != '\u{9b}' {
            out.push(c);
            continue;
        }
        let csi = c == '\u{9b}' || chars.peek() == Some(&'[');
        if csi {
            if c == '\u{1b}' {
                chars.next();
            }
            // Parameters and intermediates, then one final byte in '@'..='~'.
            for n in chars.by_ref() {
                if ('@'..='~').contains(&n) {
                    break;
                }
            }
            continue;
        }
        match chars.peek().copied() {
            Some(']') => {
                // OSC: ends with BEL or ESC '\'.
                chars.next();
                while let Some(n) = chars.next() {
                    if n == '\u{7}' {
                        break;
                    }
                    if n == '\u{1b}' {
                        if chars.peek() == Some(&'\\') {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            Some('(' | ')' | '#' | '%') => {
                chars.next();
                chars.next();
            }
            Some(n) if ('@'..='_').contains(&n) => {
                chars.next();
            }
            _ => {}
        }
    }
    out
}

/// Strips ANSI codes, trims, and caps at [`MAX_ERROR_CHARS`]: the form every
/// [`crate::TestFailure::error`] has. Callers use it for their own fallback texts
/// (e.g. stderr of a build that failed before any test ran).
pub fn clean_error_text(text: &str) -> String {
    cap(strip_ansi(text).trim())
}

/// Keeps the start of `text` (cut at a line end when one is close) and says how much was cut.
pub(crate) fn cap(text: &str) -> String {
    let total = text.chars().count();
    if total <= MAX_ERROR_CHARS {
        return text.to_string();
    }
    let mut head = wright_text::head(text, MAX_ERROR_CHARS, wright_text::Unit::Chars);
    let byte_end = head.len();
    if let Some(nl) = head.rfind('\n').filter(|nl| byte_end - nl < 300) {
        head = &head[..nl];
    }
    let cut = total - head.chars().count();
    format!("{}\n… [cut: {cut} more characters]", head.trim_end())
}

/// Saturating conversion for counters, which are `u32` in the public report.
pub(crate) fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Removes blank lines and trailing spaces; runners pad messages with empty lines.
pub(crate) fn squeeze_blank_lines(text: &str) -> String {
    text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n")
}

/// Extracts `path:line[:col]` from one JS stack line such as
/// `at Object.<anonymous> (/p/a.test.js:7:10)` or `TestContext.<anonymous> (/p/a.js:7:10)`,
/// if it points into the project rather than into node itself or `node_modules`.
pub(crate) fn project_frame(line: &str) -> Option<String> {
    let line = line.trim();
    let line = line.strip_prefix("at ").unwrap_or(line);
    let candidate = if let Some(inner) = line.strip_suffix(')') {
        let open = inner.rfind('(')?;
        &inner[open + 1..]
    } else {
        line.rsplit(' ').next()?
    };
    let candidate = candidate.strip_prefix("file://").unwrap_or(candidate);
    if candidate.starts_with("node:")
        || candidate.contains("node_modules")
        || candidate.starts_with('<')
        || candidate == "native"
    {
        return None;
    }
    has_line_suffix(candidate).then(|| candidate.to_string())
}

/// True for `something:12` or `something:12:5` with a non-empty `something`.
pub(crate) fn has_line_suffix(s: &str) -> bool {
    let mut parts = s.rsplitn(3, ':');
    let last = parts.next().unwrap_or("");
    let mid = parts.next();
    let rest = parts.next();
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    match (mid, rest) {
        (Some(m), Some(r)) if digits(m) && digits(last) => !r.is_empty(),
        (Some(m), _) if digits(last) => !m.is_empty() && !m.ends_with(':'),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colours_and_hyperlinks() {
        let s = "\u{1b}[2mexpect(\u{1b}[22m\u{1b}[31mreceived\u{1b}[39m) \u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{7}";
        assert_eq!(strip_ansi(s), "expect(received) link");
        assert_eq!(strip_ansi("trailing \u{1b}"), "trailing ");
        assert_eq!(strip_ansi("\u{1b}[1"), "");
    }

    #[test]
    fn caps_long_text_keeping_the_start() {
        let long = "x".repeat(5_000);
        let capped = cap(&long);
        assert!(capped.starts_with("xxxx"));
        assert!(capped.ends_with("[cut: 3000 more characters]"));
        assert_eq!(cap("short"), "short");
        let lines = "line of text\n".repeat(400);
        let capped = cap(&lines);
        assert!(capped.contains("line of text\n… [cut:"));
    }

    #[test]
    fn finds_project_frames() {
        assert_eq!(
            project_frame("TestContext.<anonymous> (/tmp/p/fail.test.js:7:10)").as_deref(),
            Some("/tmp/p/fail.test.js:7:10")
        );
        assert_eq!(project_frame("    at file:///tmp/p/h.mjs:1:1").as_deref(), Some("/tmp/p/h.mjs:1:1"));
        assert_eq!(project_frame("Test.run (node:internal/test_runner/test:796:25)"), None);
        assert_eq!(project_frame("at new Promise (<anonymous>)"), None);
        assert_eq!(project_frame("at x (/p/node_modules/jest/a.js:1:2)"), None);
        assert!(has_line_suffix("src/lib.rs:10:5"));
        assert!(has_line_suffix("a.py:3"));
        assert!(!has_line_suffix(":3"));
        assert!(!has_line_suffix("a.py"));
    }
}
