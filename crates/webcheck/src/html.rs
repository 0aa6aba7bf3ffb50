//! Single-document checking: a small tokenizer plus a simplified version of
//! HTML's tree-building rules (void elements, raw text, optional end tags),
//! just enough to tell "a browser would silently repair this" from "valid".

use std::collections::HashMap;

use crate::{Problem, Severity};

mod meta;
pub use meta::{PageMeta, page_meta};

/// Elements that never have content or an end tag.
const VOID_ELEMENTS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param", "source", "track",
    "wbr",
];

/// Elements whose content is text up to the matching end tag, not markup
/// (so `"</div>"` inside a script is just a string).
const RAW_TEXT_ELEMENTS: &[&str] = &["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes"];

/// Raw-text elements that stay raw inside `<svg>`/`<math>` (where `<title>` is ordinary markup).
const FOREIGN_RAW_TEXT_ELEMENTS: &[&str] = &["script", "style"];

/// Elements whose end tag may be left out: the browser closes them implicitly.
const OPTIONAL_END: &[&str] = &[
    "html", "head", "body", "p", "li", "dt", "dd", "option", "optgroup", "td", "th", "tr", "thead", "tbody", "tfoot",
    "colgroup", "caption", "rb", "rt", "rtc", "rp",
];

/// Elements that belong in `<head>`; any other element starts the body.
const HEAD_ELEMENTS: &[&str] = &["base", "link", "meta", "noscript", "script", "style", "template", "title"];

/// Start tags that end an open `<p>` (block content cannot be inside a paragraph).
const CLOSES_P: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "li",
    "listing",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "plaintext",
    "pre",
    "search",
    "section",
    "summary",
    "table",
    "ul",
    "xmp",
];

/// Elements that hide an outer `<p>` from the "close the paragraph" rule.
const BUTTON_SCOPE: &[&str] =
    &["applet", "button", "caption", "html", "marquee", "object", "table", "td", "th", "template", "svg", "math"];

/// Elements that stop the search for an open `<li>`/`<dd>`/`<dt>` to close
/// (HTML's "special" elements other than address, div and p).
const LIST_ITEM_STOPS: &[&str] = &[
    "applet",
    "article",
    "aside",
    "blockquote",
    "body",
    "button",
    "caption",
    "center",
    "colgroup",
    "details",
    "dir",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hgroup",
    "html",
    "listing",
    "main",
    "marquee",
    "menu",
    "nav",
    "object",
    "ol",
    "pre",
    "search",
    "section",
    "select",
    "summary",
    "table",
    "tbody",
    "td",
    "template",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
    "svg",
    "math",
];

/// Deeper nesting than this is certainly a bug and would make checking slow.
const MAX_DEPTH: usize = 512;
/// More findings than this per page are noise: fixing the first ones usually fixes the rest.
const MAX_PROBLEMS: usize = 50;
/// Findings kept in memory per page; beyond this they are only counted.
const MAX_COLLECTED_ISSUES: usize = 1000;
/// How many force-closed element names to remember for swallowing their late end tags.
const MAX_FORCE_CLOSED: usize = 64;

/// Check one HTML document's text (no filesystem): returns problems with 1-based line numbers.
///
/// Problems are sorted by line. Findings that do not break the page (such as
/// a missing `<!DOCTYPE html>`) have [`Severity::Warning`].
pub fn check_html(file: &str, text: &str) -> Vec<Problem> {
    let analysis = analyze(text);
    let dropped = analysis.dropped;
    let mut problems: Vec<Problem> = analysis
        .issues
        .into_iter()
        .map(|(line, severity, message)| Problem { file: file.to_string(), line: Some(line), severity, message })
        .collect();
    problems.sort_by_key(|p| p.line);
    if problems.len() + dropped > MAX_PROBLEMS {
        let extra = problems.len() + dropped - MAX_PROBLEMS;
        problems.truncate(MAX_PROBLEMS);
        problems.push(Problem {
            file: file.to_string(),
            line: None,
            severity: Severity::Error,
            message: format!("{extra} more problems not shown; fix the ones above first"),
        });
    }
    problems
}

/// Local references (script src, link href stylesheet/icon, img src, source src, a href to local .html files) in document order with line numbers; skips http:, https:, //, data:, mailto:, tel:, javascript:, #fragments, and template placeholders like {{ }}; strips ?query and #fragment.
///
/// Media (`audio`/`video`/`track`/`embed`/`iframe` src, `video` poster) and
/// `link rel="manifest"`/`"modulepreload"` are included too, since a missing
/// file breaks the page just the same. Any other URL scheme is skipped.
pub fn local_references(text: &str) -> Vec<(String, u32)> {
    analyze(text).refs
}

/// Everything learned from one pass over a document.
pub(crate) struct Analysis {
    /// `(line, severity, message)` findings, unsorted.
    pub issues: Vec<(u32, Severity, String)>,
    /// Local references in document order.
    pub refs: Vec<(String, u32)>,
    /// Findings left out of `issues` to bound memory.
    pub dropped: usize,
}

pub(crate) fn analyze(text: &str) -> Analysis {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Analysis {
            issues: vec![(
                1,
                Severity::Error,
                "the file is empty; write a complete HTML page starting with `<!DOCTYPE html>`".to_string(),
            )],
            refs: Vec::new(),
            dropped: 0,
        };
    }
    let mut checker = Checker::new(text);
    checker.run();
    checker.finish()
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

fn contains(list: &[&str], name: &str) -> bool {
    list.contains(&name)
}

/// A short, single-line excerpt of `s` for quoting in a message.
fn snippet(s: &str) -> String {
    let first = s.trim().lines().next().unwrap_or("").trim();
    let mut out: String = first.chars().take(40).collect();
    if out.len() < first.len() {
        out.push('…');
    }
    out
}

struct Attr {
    name: String,
    value: Option<String>,
    line: u32,
}

struct StartTag {
    name: String,
    attrs: Vec<Attr>,
    self_closing: bool,
    line: u32,
}

impl StartTag {
    fn attr(&self, name: &str) -> Option<(&str, u32)> {
        self.attrs.iter().find(|a| a.name == name).and_then(|a| a.value.as_deref().map(|v| (v, a.line)))
    }
}

enum Token {
    Text {
        start: usize,
        end: usize,
    },
    Doctype {
        line: u32,
    },
    /// Comments, CDATA, bogus markup and anything abandoned after an error.
    Ignored,
    Start(StartTag),
    End {
        name: String,
        line: u32,
    },
}

/// Splits the document into tokens, reporting lexical problems (broken tags,
/// unterminated quotes and comments) as it goes.
struct Scanner<'a> {
    src: &'a str,
    pos: usize,
    line_starts: Vec<usize>,
    issues: Vec<(u32, Severity, String)>,
    /// Issues not kept because of [`MAX_COLLECTED_ISSUES`] (still counted in the summary).
    dropped: usize,
}

impl<'a> Scanner<'a> {
    fn new(src: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(src.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
        Scanner { src, pos: 0, line_starts, issues: Vec::new(), dropped: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    fn len(&self) -> usize {
        self.src.len()
    }

    fn at(&self, i: usize) -> Option<u8> {
        self.bytes().get(i).copied()
    }

    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.src.get(start..end).unwrap_or("")
    }

    fn line(&self, pos: usize) -> u32 {
        let n = self.line_starts.partition_point(|&s| s <= pos);
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    fn issue(&mut self, line: u32, message: String) {
        self.finding(line, Severity::Error, message);
    }

    fn finding(&mut self, line: u32, severity: Severity, message: String) {
        if self.issues.len() < MAX_COLLECTED_ISSUES {
            self.issues.push((line, severity, message));
        } else {
            self.dropped += 1;
        }
    }

    fn find_byte(&self, from: usize, needle: u8) -> Option<usize> {
        self.bytes().get(from..)?.iter().position(|&b| b == needle).map(|k| k + from)
    }

    fn find(&self, from: usize, needle: &[u8]) -> Option<usize> {
        self.bytes().get(from..)?.windows(needle.len()).position(|w| w == needle).map(|k| k + from)
    }

    fn starts_with_ci(&self, at: usize, prefix: &[u8]) -> bool {
        self.bytes().get(at..at + prefix.len()).is_some_and(|s| s.eq_ignore_ascii_case(prefix))
    }

    fn next_token(&mut self) -> Option<Token> {
        let pos = self.pos;
        if pos >= self.len() {
            return None;
        }
        match self.find_byte(pos, b'<') {
            None => {
                self.pos = self.len();
                Some(Token::Text { start: pos, end: self.len() })
            }
            Some(k) if k > pos => {
                self.pos = k;
                Some(Token::Text { start: pos, end: k })
            }
            Some(_) => Some(self.markup()),
        }
    }

    /// Handles the construct starting at the `<` under the cursor.
    fn markup(&mut self) -> Token {
        let i = self.pos;
        let line = self.line(i);
        match self.at(i + 1) {
            Some(b'!') => self.bang(i, line),
            Some(b'?') => self.bogus(i, line, "<?"),
            Some(b'/') => match self.at(i + 2) {
                Some(c) if c.is_ascii_alphabetic() => self.end_tag(i, line),
                Some(b'>') => {
                    self.issue(line, format!("stray `</>` on line {line}; remove it"));
                    self.pos = i + 3;
                    Token::Ignored
                }
                _ => {
                    self.issue(
                        line,
                        format!(
                            "stray `</` on line {line}: a closing tag needs a name right after `</`, like `</div>`"
                        ),
                    );
                    self.pos = i + 2;
                    Token::Text { start: i, end: i + 2 }
                }
            },
            Some(c) if c.is_ascii_alphabetic() => self.start_tag(i, line),
            _ => {
                self.issue(
                    line,
                    format!(
                        "stray `<` on line {line} does not start a tag: put the tag name right after `<` (like `<div>`), or write `&lt;` to show a less-than sign"
                    ),
                );
                self.pos = i + 1;
                Token::Text { start: i, end: i + 1 }
            }
        }
    }

    /// `<!--`, `<!DOCTYPE`, `<![CDATA[` and other `<!` constructs.
    fn bang(&mut self, i: usize, line: u32) -> Token {
        if self.starts_with_ci(i, b"<!--") {
            match self.find(i + 4, b"-->") {
                Some(end) => self.pos = end + 3,
                None => {
                    self.issue(
                        line,
                        format!(
                            "comment `<!--` opened on line {line} is never closed; add `-->` where the comment should end (everything after it is hidden)"
                        ),
                    );
                    self.pos = self.len();
                }
            }
            return Token::Ignored;
        }
        if self.starts_with_ci(i, b"<!doctype") {
            return match self.find_byte(i, b'>') {
                Some(end) => {
                    self.pos = end + 1;
                    Token::Doctype { line }
                }
                None => {
                    self.issue(line, format!("`<!DOCTYPE` on line {line} is missing its closing `>`"));
                    self.pos = self.len();
                    Token::Doctype { line }
                }
            };
        }
        if self.starts_with_ci(i, b"<![cdata[") {
            match self.find(i + 9, b"]]>") {
                Some(end) => self.pos = end + 3,
                None => {
                    self.issue(line, format!("`<![CDATA[` opened on line {line} is never closed with `]]>`"));
                    self.pos = self.len();
                }
            }
            return Token::Ignored;
        }
        self.bogus(i, line, "<!")
    }

    /// Skips a `<!…>` or `<?…>` construct the browser would treat as a comment.
    fn bogus(&mut self, i: usize, line: u32, opener: &str) -> Token {
        match self.find_byte(i, b'>') {
            Some(end) => self.pos = end + 1,
            None => {
                self.issue(
                    line,
                    format!("`{opener}` on line {line} starts a broken tag that is never closed with `>`"),
                );
                self.pos = self.len();
            }
        }
        Token::Ignored
    }

    /// Reads a tag or attribute name, stopping at whitespace, `/`, `>`, `<`,
    /// and (for attributes) `=`. Template placeholders such as `{{ a b }}` are
    /// kept whole so their spaces do not split the name.
    fn name_end(&self, mut j: usize, stop_at_eq: bool) -> usize {
        while let Some(c) = self.at(j) {
            if c == b'{' && matches!(self.at(j + 1), Some(b'{' | b'%')) {
                let closer: &[u8] = if self.at(j + 1) == Some(b'{') { b"}}" } else { b"%}" };
                j = self.find(j + 2, closer).map_or(self.len(), |k| k + 2);
                continue;
            }
            if is_ws(c) || c == b'/' || c == b'>' || c == b'<' || (stop_at_eq && c == b'=') {
                break;
            }
            j += 1;
        }
        j
    }

    fn skip_ws(&self, mut j: usize) -> usize {
        while self.at(j).is_some_and(is_ws) {
            j += 1;
        }
        j
    }

    fn end_tag(&mut self, i: usize, line: u32) -> Token {
        let name_end = self.name_end(i + 2, false);
        let name = self.slice(i + 2, name_end).to_ascii_lowercase();
        let mut j = name_end;
        loop {
            match self.at(j) {
                Some(b'>') => {
                    self.pos = j + 1;
                    break;
                }
                Some(b'<') | None => {
                    self.issue(
                        line,
                        format!("closing tag `</{name}` on line {line} is missing its `>`; write `</{name}>`"),
                    );
                    self.pos = j;
                    break;
                }
                Some(_) => j += 1,
            }
        }
        Token::End { name, line }
    }

    fn start_tag(&mut self, i: usize, line: u32) -> Token {
        let name_end = self.name_end(i + 1, false);
        let name = self.slice(i + 1, name_end).to_ascii_lowercase();
        let mut tag = StartTag { name, attrs: Vec::new(), self_closing: false, line };
        let mut j = name_end;
        let mut reported_quotes = false;
        loop {
            j = self.skip_ws(j);
            match self.at(j) {
                None => {
                    self.issue(line, format!("tag `<{}` opened on line {line} is never finished with `>`", tag.name));
                    self.pos = self.len();
                    return Token::Ignored;
                }
                Some(b'>') => {
                    self.pos = j + 1;
                    return Token::Start(tag);
                }
                Some(b'/') => {
                    if self.at(j + 1) == Some(b'>') {
                        tag.self_closing = true;
                        self.pos = j + 2;
                        return Token::Start(tag);
                    }
                    j += 1;
                }
                Some(b'<') => {
                    let next = self.line(j);
                    self.issue(
                        line,
                        format!(
                            "tag `<{}` on line {line} is missing its closing `>` (another `<` follows on line {next} before it ends)",
                            tag.name
                        ),
                    );
                    self.pos = j;
                    return Token::Start(tag);
                }
                Some(_) => {
                    let attr_start = j;
                    let attr_line = self.line(j);
                    let name_end = self.name_end(j, true);
                    // A name that does not advance would loop forever; consume one byte as a name.
                    let name_end = if name_end == j { j + 1 } else { name_end };
                    let attr_name = self.slice(attr_start, name_end).to_ascii_lowercase();
                    j = name_end;
                    if !reported_quotes && (attr_name.contains('"') || attr_name.contains('\'')) {
                        reported_quotes = true;
                        self.issue(
                            attr_line,
                            format!(
                                "the quotes in `<{}>` on line {attr_line} look unbalanced near `{}`; every attribute value needs an opening and a closing quote, like `alt=\"Logo\"`",
                                tag.name,
                                snippet(&attr_name)
                            ),
                        );
                    }
                    let mut value = None;
                    let after_name = self.skip_ws(j);
                    if self.at(after_name) == Some(b'=') {
                        j = self.skip_ws(after_name + 1);
                        match self.at(j) {
                            Some(q @ (b'"' | b'\'')) => match self.quoted_end(j, q) {
                                Ok(end) => {
                                    value = Some(self.slice(j + 1, end).to_string());
                                    j = end + 1;
                                }
                                Err(recover) => {
                                    let quote = q as char;
                                    self.issue(
                                        attr_line,
                                        format!(
                                            "the value of `{attr_name}` in `<{}>` on line {attr_line} opens a `{quote}` that is never closed; add the closing `{quote}`",
                                            tag.name
                                        ),
                                    );
                                    return match recover {
                                        Some(gt) => {
                                            let v = self.slice(j + 1, gt).to_string();
                                            self.push_attr(&mut tag, attr_name, Some(v), attr_line);
                                            self.pos = gt + 1;
                                            Token::Start(tag)
                                        }
                                        None => {
                                            self.pos = self.len();
                                            Token::Ignored
                                        }
                                    };
                                }
                            },
                            Some(b'>') | None => value = Some(String::new()),
                            Some(_) => {
                                let start = j;
                                while self.at(j).is_some_and(|c| !is_ws(c) && c != b'>') {
                                    j += 1;
                                }
                                value = Some(self.slice(start, j).to_string());
                            }
                        }
                    }
                    self.push_attr(&mut tag, attr_name, value, attr_line);
                }
            }
        }
    }

    fn push_attr(&mut self, tag: &mut StartTag, name: String, value: Option<String>, line: u32) {
        if tag.attrs.iter().any(|a| a.name == name) {
            self.issue(
                line,
                format!(
                    "`<{}>` on line {line} has the attribute `{name}` twice; the browser ignores the second one, so keep only one",
                    tag.name
                ),
            );
            return;
        }
        tag.attrs.push(Attr { name, value, line });
    }

    /// Finds the closing quote of a quoted attribute value starting at `open`.
    ///
    /// A value that runs past a `>` and into what looks like more markup is
    /// treated as unterminated (the author forgot the closing quote), since
    /// otherwise the rest of the page would be swallowed into the attribute.
    /// On failure returns the first `>` inside the value, where the tag most
    /// likely was meant to end, to resume from.
    fn quoted_end(&self, open: usize, quote: u8) -> Result<usize, Option<usize>> {
        let mut first_gt = None;
        let mut k = open + 1;
        while let Some(c) = self.at(k) {
            if c == quote {
                return Ok(k);
            }
            if c == b'>' && first_gt.is_none() {
                first_gt = Some(k);
            }
            if c == b'<' && first_gt.is_some() && self.looks_like_tag(k) {
                return Err(first_gt);
            }
            k += 1;
        }
        Err(first_gt)
    }

    /// `<name` followed by whitespace, `/` or `>`, `</name`, or `<!--`.
    fn looks_like_tag(&self, lt: usize) -> bool {
        if self.starts_with_ci(lt, b"<!--") {
            return true;
        }
        let mut j = lt + 1;
        if self.at(j) == Some(b'/') {
            return self.at(j + 1).is_some_and(|c| c.is_ascii_alphabetic());
        }
        if !self.at(j).is_some_and(|c| c.is_ascii_alphabetic()) {
            return false;
        }
        while self.at(j).is_some_and(|c| c.is_ascii_alphanumeric() || c == b'-') {
            j += 1;
        }
        self.at(j).is_some_and(|c| is_ws(c) || c == b'/' || c == b'>')
    }

    /// Moves the cursor to the end tag of a raw-text element (`</script`…),
    /// or to the end of the document when there is none.
    fn skip_raw_text(&mut self, name: &str) {
        let mut from = self.pos;
        while let Some(k) = self.find(from, b"</") {
            let after = k + 2 + name.len();
            if self.starts_with_ci(k + 2, name.as_bytes())
                && self.at(after).is_some_and(|c| is_ws(c) || c == b'/' || c == b'>')
            {
                self.pos = k;
                return;
            }
            from = k + 2;
        }
        self.pos = self.len();
    }
}

struct Open {
    name: String,
    line: u32,
    raw: bool,
}

/// Builds a simplified element stack from the tokens and reports nesting problems.
struct Checker<'a> {
    sc: Scanner<'a>,
    stack: Vec<Open>,
    /// How many elements of each name are on `stack`, so the frequent "is a
    /// `<p>` open?" questions do not walk the stack.
    open_counts: HashMap<String, usize>,
    /// Elements already reported as closed too early, so their late end tag is not reported again.
    force_closed: Vec<String>,
    refs: Vec<(String, u32)>,
    elements: usize,
    doctype_seen: bool,
    html_seen: bool,
    html_closed: bool,
    head_seen: bool,
    body_seen: bool,
    body_content: bool,
    has_script: bool,
    seen_markup: bool,
    leading_text: Option<(u32, String)>,
    trailing_reported: bool,
    aborted: bool,
}

impl<'a> Checker<'a> {
    fn new(text: &'a str) -> Self {
        Checker {
            sc: Scanner::new(text),
            stack: Vec::new(),
            open_counts: HashMap::new(),
            force_closed: Vec::new(),
            refs: Vec::new(),
            elements: 0,
            doctype_seen: false,
            html_seen: false,
            html_closed: false,
            head_seen: false,
            body_seen: false,
            body_content: false,
            has_script: false,
            seen_markup: false,
            leading_text: None,
            trailing_reported: false,
            aborted: false,
        }
    }

    fn issue(&mut self, line: u32, message: String) {
        self.sc.issue(line, message);
    }

    /// An advisory finding: reported, but the page still works.
    fn warn(&mut self, line: u32, message: String) {
        self.sc.finding(line, Severity::Warning, message);
    }

    fn run(&mut self) {
        while !self.aborted {
            let Some(token) = self.sc.next_token() else {
                break;
            };
            match token {
                Token::Text { start, end } => self.text(start, end),
                Token::Doctype { line } => self.doctype(line),
                Token::Ignored => self.seen_markup = true,
                Token::Start(tag) => self.start(tag),
                Token::End { name, line } => self.end(&name, line),
            }
        }
    }

    fn pop(&mut self) -> Option<Open> {
        let open = self.stack.pop()?;
        if let Some(count) = self.open_counts.get_mut(&open.name) {
            *count = count.saturating_sub(1);
        }
        Some(open)
    }

    fn open_count(&self, name: &str) -> usize {
        self.open_counts.get(name).copied().unwrap_or(0)
    }

    fn in_stack(&self, name: &str) -> bool {
        self.open_count(name) > 0
    }

    fn in_foreign(&self) -> bool {
        self.in_stack("svg") || self.in_stack("math")
    }

    fn text(&mut self, start: usize, end: usize) {
        let s = self.sc.slice(start, end);
        if s.trim().is_empty() {
            return;
        }
        let line = self.sc.line(start + (s.len() - s.trim_start().len()));
        if !self.seen_markup && self.leading_text.is_none() {
            self.leading_text = Some((line, snippet(s)));
        }
        if self.html_closed && self.stack.is_empty() && !self.trailing_reported {
            self.trailing_reported = true;
            self.issue(
                line,
                format!(
                    "text `{}` on line {line} comes after `</html>`; remove it, nothing should follow the end of the page",
                    snippet(s)
                ),
            );
        }
        if !self.in_stack("head") {
            self.body_content = true;
        }
    }

    fn doctype(&mut self, line: u32) {
        if !self.doctype_seen && self.elements > 0 {
            self.warn(line, format!("`<!DOCTYPE html>` on line {line} should be the very first thing in the file"));
        }
        self.doctype_seen = true;
        self.seen_markup = true;
    }

    fn start(&mut self, tag: StartTag) {
        self.seen_markup = true;
        self.elements += 1;
        self.collect_refs(&tag);
        let name = tag.name.as_str();
        let line = tag.line;
        match name {
            "html" => {
                if !self.html_seen && self.stack.is_empty() {
                    self.push(name, line, false);
                }
                self.html_seen = true;
                return;
            }
            "head" => {
                if !self.head_seen && !self.body_seen && !self.body_content {
                    self.push(name, line, false);
                }
                self.head_seen = true;
                return;
            }
            "body" => {
                if !self.body_seen {
                    if self.stack.last().is_some_and(|o| o.name == "head") {
                        self.pop();
                    }
                    self.push(name, line, false);
                }
                self.body_seen = true;
                return;
            }
            "script" => self.has_script = true,
            _ => {}
        }
        if !contains(HEAD_ELEMENTS, name) {
            self.body_content = true;
            if self.stack.last().is_some_and(|o| o.name == "head") {
                self.pop();
            }
        }
        let foreign = self.in_foreign() || name == "svg" || name == "math";
        if !foreign {
            self.implied_end_tags(name, line);
        }
        if contains(VOID_ELEMENTS, name) {
            return;
        }
        if tag.self_closing {
            if !foreign {
                let message = if contains(RAW_TEXT_ELEMENTS, name) {
                    format!(
                        "`<{name} … />` on line {line} is not self-closing in HTML: the browser treats the rest of the page as its content; write `<{name} …></{name}>` instead"
                    )
                } else {
                    format!(
                        "`<{name} />` on line {line} does not close the element in HTML (only void elements like `<br>` and `<img>` can end with `/>`); write `<{name}></{name}>` instead"
                    )
                };
                self.issue(line, message);
            }
            return;
        }
        let raw = if foreign { contains(FOREIGN_RAW_TEXT_ELEMENTS, name) } else { contains(RAW_TEXT_ELEMENTS, name) };
        if self.stack.len() >= MAX_DEPTH {
            self.issue(
                line,
                format!(
                    "elements are nested more than {MAX_DEPTH} levels deep at line {line}; some end tags are almost certainly missing"
                ),
            );
            self.aborted = true;
            return;
        }
        let owned = tag.name.clone();
        self.push(&owned, line, raw);
        if raw {
            self.sc.skip_raw_text(&owned);
        }
    }

    fn push(&mut self, name: &str, line: u32, raw: bool) {
        *self.open_counts.entry(name.to_string()).or_insert(0) += 1;
        self.stack.push(Open { name: name.to_string(), line, raw });
    }

    /// HTML's rules for start tags that implicitly end open elements
    /// (`<li>` ends the previous `<li>`, a `<div>` ends an open `<p>`, …).
    fn implied_end_tags(&mut self, name: &str, line: u32) {
        match name {
            "li" => self.implicit_close(&["li"], LIST_ITEM_STOPS, name, line),
            "dt" | "dd" => self.implicit_close(&["dt", "dd"], LIST_ITEM_STOPS, name, line),
            "tr" => self.implicit_close(&["tr"], &["table", "thead", "tbody", "tfoot", "template", "html"], name, line),
            "td" | "th" => self.implicit_close(
                &["td", "th"],
                &["tr", "table", "thead", "tbody", "tfoot", "template", "html"],
                name,
                line,
            ),
            "thead" | "tbody" | "tfoot" => {
                self.implicit_close(&["thead", "tbody", "tfoot"], &["table", "template", "html"], name, line)
            }
            "option" => {
                self.implicit_close(&["option"], &["select", "datalist", "optgroup", "template", "html"], name, line)
            }
            "optgroup" => {
                self.implicit_close(&["option"], &["select", "datalist", "optgroup", "template", "html"], name, line);
                self.implicit_close(&["optgroup"], &["select", "template", "html"], name, line);
            }
            "rb" | "rt" | "rtc" | "rp" => {
                self.implicit_close(&["rb", "rt", "rp"], &["ruby", "rtc", "html"], name, line)
            }
            _ => {}
        }
        if contains(CLOSES_P, name) {
            self.implicit_close(&["p"], BUTTON_SCOPE, name, line);
        }
    }

    /// Closes the nearest open element named in `targets` (unless one of
    /// `stops` comes first), reporting anything inside it that needed an end tag.
    fn implicit_close(&mut self, targets: &[&str], stops: &[&str], by: &str, line: u32) {
        if targets.iter().all(|t| !self.in_stack(t)) {
            return;
        }
        let mut found = None;
        for (i, open) in self.stack.iter().enumerate().rev() {
            if contains(targets, &open.name) {
                found = Some(i);
                break;
            }
            if contains(stops, &open.name) {
                break;
            }
        }
        let Some(index) = found else {
            return;
        };
        let target_is_p = self.stack.get(index).is_some_and(|o| o.name == "p");
        let mut reported = false;
        while self.stack.len() > index + 1 {
            let Some(open) = self.pop() else {
                break;
            };
            if contains(OPTIONAL_END, &open.name) {
                continue;
            }
            let inner = &open.name;
            let message = if target_is_p {
                format!(
                    "`<{inner}>` opened on line {} is not closed before `<{by}>` on line {line}, which ends the surrounding `<p>` (block elements like `<{by}>` cannot go inside `<p>`); close `</{inner}>` first, or use `<div>` instead of `<p>`",
                    open.line
                )
            } else {
                format!(
                    "`<{inner}>` opened on line {} is not closed before the next `<{by}>` on line {line}; add `</{inner}>` first",
                    open.line
                )
            };
            self.issue(open.line, message);
            self.remember_force_closed(open.name);
            reported = true;
        }
        let target = self.pop();
        if let Some(target) = target.filter(|_| reported) {
            // The message above already explains why it ended; its late end tag is expected.
            self.remember_force_closed(target.name);
        }
    }

    fn remember_force_closed(&mut self, name: String) {
        if self.force_closed.len() >= MAX_FORCE_CLOSED {
            self.force_closed.remove(0);
        }
        self.force_closed.push(name);
    }

    fn end(&mut self, name: &str, line: u32) {
        self.seen_markup = true;
        if contains(VOID_ELEMENTS, name) {
            self.issue(
                line,
                format!(
                    "`</{name}>` on line {line} is not allowed: `<{name}>` is a void element that never has a closing tag; remove `</{name}>`"
                ),
            );
            return;
        }
        if let Some(index) = self.stack.iter().rposition(|o| o.name == name) {
            let closes_document = name == "body" || name == "html";
            while self.stack.len() > index + 1 {
                let Some(open) = self.pop() else {
                    break;
                };
                if contains(OPTIONAL_END, &open.name) {
                    continue;
                }
                let inner = &open.name;
                let message = if closes_document {
                    format!(
                        "`<{inner}>` opened on line {} is never closed; add `</{inner}>` before `</{name}>` on line {line}",
                        open.line
                    )
                } else {
                    format!(
                        "`<{inner}>` opened on line {} is not closed before `</{name}>` on line {line}; tags must be closed in reverse order, like `<{name}><{inner}>…</{inner}></{name}>`",
                        open.line
                    )
                };
                self.issue(open.line, message);
                self.remember_force_closed(open.name);
            }
            self.pop();
            if name == "html" {
                self.html_closed = true;
            }
            return;
        }
        if matches!(name, "html" | "head" | "body") {
            // Their start tags are optional, so a lone end tag is fine.
            if name == "html" {
                self.html_closed = true;
            }
            return;
        }
        if let Some(k) = self.force_closed.iter().rposition(|n| n == name) {
            self.force_closed.remove(k);
            return;
        }
        let message = if name == "p" {
            format!(
                "`</p>` on line {line} has no open `<p>` to close: a `<p>` ends automatically when a block element such as `<div>`, `<ul>`, `<h2>` or `<table>` starts inside it; move block elements out of the paragraph or use `<div>` instead of `<p>`"
            )
        } else {
            format!(
                "`</{name}>` on line {line} has no matching opening `<{name}>`; remove it or add the missing `<{name}>`"
            )
        };
        self.issue(line, message);
    }

    fn collect_refs(&mut self, tag: &StartTag) {
        let mut wanted: Vec<&str> = Vec::new();
        match tag.name.as_str() {
            "script" | "img" | "source" | "audio" | "track" | "embed" | "iframe" => wanted.push("src"),
            "video" => wanted.extend(["src", "poster"]),
            "link" => {
                let rel = tag.attr("rel").map(|(v, _)| v).unwrap_or("");
                let relevant = rel.split_ascii_whitespace().any(|r| {
                    let r = r.to_ascii_lowercase();
                    r == "stylesheet" || r == "manifest" || r == "modulepreload" || r.contains("icon")
                });
                if relevant {
                    wanted.push("href");
                }
            }
            "a" => {
                if let Some((path, line)) =
                    tag.attr("href").and_then(|(value, line)| local_path(value).map(|p| (p, line)))
                {
                    let lower = path.to_ascii_lowercase();
                    if lower.ends_with(".html") || lower.ends_with(".htm") {
                        self.refs.push((path, line));
                    }
                }
            }
            _ => {}
        }
        for attr in wanted {
            if let Some((path, line)) = tag.attr(attr).and_then(|(value, line)| local_path(value).map(|p| (p, line))) {
                self.refs.push((path, line));
            }
        }
    }

    fn finish(mut self) -> Analysis {
        // After an abort the open elements are an artefact of the cut, not findings.
        let stack = if self.aborted { Vec::new() } else { std::mem::take(&mut self.stack) };
        for open in stack {
            if contains(OPTIONAL_END, &open.name) {
                continue;
            }
            let name = &open.name;
            let line = open.line;
            let message = if open.raw {
                format!(
                    "`<{name}>` opened on line {line} is never closed; add `</{name}>` (everything after it is treated as part of the {name}, not as page content)"
                )
            } else {
                format!("`<{name}>` opened on line {line} is never closed; add `</{name}>`")
            };
            self.issue(line, message);
        }
        if self.elements == 0 {
            self.issue(
                1,
                "no HTML tags found; write a complete page like `<!DOCTYPE html><html><head><title>…</title></head><body>…</body></html>`"
                    .to_string(),
            );
        } else if !self.body_content && !self.has_script {
            self.issue(
                1,
                "the page shows nothing: `<body>` has no content and there is no script to fill it; put the page's content inside `<body>`"
                    .to_string(),
            );
        }
        let is_page = self.doctype_seen || self.html_seen;
        if let Some((line, text)) = self.leading_text.take().filter(|_| is_page) {
            self.issue(
                line,
                format!(
                    "text `{text}` on line {line} comes before the page starts; remove it so the file begins with `<!DOCTYPE html>`"
                ),
            );
        }
        if !self.doctype_seen {
            self.warn(
                1,
                "missing `<!DOCTYPE html>` on the first line; without it browsers render the page in quirks mode"
                    .into(),
            );
        }
        Analysis { issues: self.sc.issues, refs: self.refs, dropped: self.sc.dropped }
    }
}

/// Turns an attribute value into a local path, or `None` for anything that
/// does not name a file in the project (other schemes, fragments, placeholders).
fn local_path(value: &str) -> Option<String> {
    let v = value.trim();
    if v.is_empty() || v.starts_with('#') || v.starts_with("//") || v.starts_with("\\\\") {
        return None;
    }
    if ["{{", "}}", "{%", "%}", "${", "<%"].iter().any(|p| v.contains(p)) {
        return None;
    }
    if has_scheme(v) {
        return None;
    }
    let end = v.find(['?', '#']).unwrap_or(v.len());
    let path = v.get(..end).unwrap_or("").trim();
    if path.is_empty() {
        return None;
    }
    Some(path.replace('\\', "/"))
}

/// `scheme:` per the URL spec (letter, then letters, digits, `+`, `-`, `.`).
fn has_scheme(v: &str) -> bool {
    let Some(colon) = v.find(':') else {
        return false;
    };
    let scheme = v.get(..colon).unwrap_or("");
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests;
