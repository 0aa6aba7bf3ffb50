//! HTML to chunks without a DOM: a forgiving scan that reads text, `<h1>`–`<h6>` (with their
//! ids) and the page `<title>`, breaks paragraphs at block elements, decodes entities, and
//! skips what a reader never sees (scripts, styles, comments, templates, navigation menus).
//!
//! Documentation pages are machine-written and regular, so a scanner is enough, and it cannot
//! fail: malformed markup degrades to text, never to an error.

use crate::chunk::{Chunk, Sections};

/// What the scan finds, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Text(String),
    Break,
    Heading { level: u8, text: String, id: Option<String> },
    Title(String),
}

/// The chunks of an HTML page; its `<title>` heads every heading path.
pub(crate) fn chunks(html: &str) -> Vec<Chunk> {
    let items = items(html);
    let title = items.iter().find_map(|i| match i {
        Item::Title(t) => Some(t.clone()),
        _ => None,
    });
    let mut sections = Sections::new(title);
    replay(items, &mut sections);
    sections.finish()
}

/// Reads an HTML fragment (a Markdown HTML block) into `sections`.
pub(crate) fn text_into(html: &str, sections: &mut Sections) {
    replay(items(html), sections);
}

/// The visible text of an HTML fragment.
pub(crate) fn plain_text(html: &str) -> String {
    let mut out = String::new();
    for item in items(html) {
        match item {
            Item::Text(t) | Item::Heading { text: t, .. } => out.push_str(&t),
            Item::Break => out.push(' '),
            Item::Title(_) => {}
        }
    }
    crate::chunk::collapse(&out)
}

fn replay(items: Vec<Item>, sections: &mut Sections) {
    for item in items {
        match item {
            Item::Text(t) => sections.text(&t),
            Item::Break => sections.paragraph_break(),
            Item::Heading { level, text, id } => sections.heading(level, &text, id.as_deref()),
            Item::Title(_) => {}
        }
    }
}

/// Elements whose content a reader never sees; they may nest.
const HIDDEN: &[&str] = &["nav", "noscript", "template", "svg", "math", "iframe", "object", "select"];
/// Elements whose content is raw text up to their end tag.
const RAW: &[&str] = &["script", "style", "title", "textarea", "xmp"];
/// Elements that end a paragraph where they start and where they end.
const BLOCK: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hr",
    "li",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
];

/// A start or end tag.
struct Tag {
    name: String,
    closing: bool,
    self_closing: bool,
    id: Option<String>,
    /// Byte offset just past the `>`.
    end: usize,
}

/// Scans `html` into items.
fn items(html: &str) -> Vec<Item> {
    let mut out = Vec::new();
    let mut text = String::new();
    // The heading being read: level, id, text so far.
    let mut heading: Option<(u8, Option<String>, String)> = None;
    // A hidden element being skipped, and how deeply it is nested in itself.
    let mut hidden: Option<(String, usize)> = None;
    let mut i = 0;
    while i < html.len() {
        let rest = &html[i..];
        if !rest.starts_with('<') {
            let end = rest.find('<').map_or(html.len(), |n| i + n);
            if hidden.is_none() {
                let decoded = decode_entities(&html[i..end]);
                match &mut heading {
                    Some((_, _, h)) => h.push_str(&decoded),
                    None => text.push_str(&decoded),
                }
            }
            i = end;
            continue;
        }
        if let Some(comment) = rest.strip_prefix("<!--") {
            i = comment.find("-->").map_or(html.len(), |n| i + 4 + n + 3);
            continue;
        }
        if starts_with_ci(rest, "<![CDATA[") {
            let body_end = rest.find("]]>").unwrap_or(rest.len());
            if hidden.is_none() {
                let body = &rest[9.min(body_end)..body_end];
                match &mut heading {
                    Some((_, _, h)) => h.push_str(body),
                    None => text.push_str(body),
                }
            }
            i = (i + body_end + 3).min(html.len());
            continue;
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            i = rest.find('>').map_or(html.len(), |n| i + n + 1);
            continue;
        }
        let Some(tag) = parse_tag(html, i) else {
            // A `<` that starts no tag ("a < b") is text.
            if hidden.is_none() {
                match &mut heading {
                    Some((_, _, h)) => h.push('<'),
                    None => text.push('<'),
                }
            }
            i += 1;
            continue;
        };
        i = tag.end;
        let name = tag.name.as_str();
        if let Some((skipping, depth)) = &mut hidden {
            if name == skipping && !tag.self_closing {
                if tag.closing {
                    *depth -= 1;
                } else {
                    *depth += 1;
                }
            }
            if *depth == 0 {
                hidden = None;
            }
            continue;
        }
        if RAW.contains(&name) && !tag.closing && !tag.self_closing {
            let close = find_ci(&html[i..], &format!("</{name}")).map_or(html.len(), |n| i + n);
            if name == "title" {
                out.push(Item::Title(crate::chunk::collapse(&decode_entities(&html[i..close]))));
            } else if name == "textarea" || name == "xmp" {
                text.push_str(&decode_entities(&html[i..close]));
            }
            i = html[close..].find('>').map_or(html.len(), |n| close + n + 1);
            continue;
        }
        if HIDDEN.contains(&name) {
            if !tag.closing && !tag.self_closing {
                hidden = Some((tag.name.clone(), 1));
            }
            continue;
        }
        if let Some(level) = heading_level(name) {
            flush(&mut text, &mut out);
            if let Some((l, id, t)) = heading.take() {
                out.push(Item::Heading { level: l, text: clean_heading(&t), id });
            }
            if !tag.closing {
                heading = Some((level, tag.id, String::new()));
            }
            continue;
        }
        if name == "br" {
            match &mut heading {
                Some((_, _, h)) => h.push(' '),
                None => text.push(' '),
            }
            continue;
        }
        if BLOCK.contains(&name) {
            match &mut heading {
                Some((_, _, h)) => h.push(' '),
                None => flush(&mut text, &mut out),
            }
        }
    }
    // A heading still open at the end was never one: its words are kept as text.
    if let Some((_, _, t)) = heading.take() {
        text.push_str(&t);
    }
    flush(&mut text, &mut out);
    out
}

fn flush(text: &mut String, out: &mut Vec<Item>) {
    if !text.trim().is_empty() {
        out.push(Item::Text(std::mem::take(text)));
    }
    text.clear();
    out.push(Item::Break);
}

fn heading_level(name: &str) -> Option<u8> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

/// Heading text without the permalink marks documentation generators append.
fn clean_heading(t: &str) -> String {
    crate::chunk::collapse(t.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, '¶' | '§' | '🔗')))
}

/// The tag starting at `html[at]` (a `<`), or `None` when it is not a tag.
fn parse_tag(html: &str, at: usize) -> Option<Tag> {
    let b = html.as_bytes();
    let mut i = at + 1;
    let closing = b.get(i) == Some(&b'/');
    if closing {
        i += 1;
    }
    if !b.get(i).is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let start = i;
    while b.get(i).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b':') {
        i += 1;
    }
    let name = html[start..i].to_ascii_lowercase();
    let mut id = None;
    let mut self_closing = false;
    loop {
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        match b.get(i)? {
            b'>' => break,
            b'/' => {
                self_closing = b.get(i + 1) == Some(&b'>');
                i += 1;
                continue;
            }
            _ => {}
        }
        let attr_start = i;
        while b.get(i).is_some_and(|c| !c.is_ascii_whitespace() && !matches!(c, b'=' | b'>' | b'/')) {
            i += 1;
        }
        let attr = html[attr_start..i].to_ascii_lowercase();
        if attr.is_empty() {
            // A stray `=`: skip it.
            i += 1;
            continue;
        }
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if b.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let value = match b.get(i)? {
            q @ (b'"' | b'\'') => {
                let open = i + 1;
                let close = html[open..].find(char::from(*q)).map(|n| open + n)?;
                i = close + 1;
                &html[open..close]
            }
            _ => {
                let open = i;
                while b.get(i).is_some_and(|c| !c.is_ascii_whitespace() && *c != b'>') {
                    i += 1;
                }
                &html[open..i]
            }
        };
        if attr == "id" {
            id = Some(decode_entities(value).trim().to_string()).filter(|v| !v.is_empty());
        }
    }
    Some(Tag { name, closing, self_closing, id, end: i + 1 })
}

fn starts_with_ci(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// Byte offset of the first ASCII-case-insensitive occurrence of `needle` (ASCII) in `hay`.
fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    let n = needle.as_bytes();
    hay.as_bytes().windows(n.len()).position(|w| w.eq_ignore_ascii_case(n))
}

/// `text` with character references (`&amp;`, `&#233;`, `&#xE9;`, `&eacute;`) replaced; an
/// unknown or unterminated one is left as written.
pub(crate) fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let semi = rest.char_indices().take(34).find(|(_, c)| *c == ';').map(|(i, _)| i);
        let decoded = semi.and_then(|semi| entity(&rest[1..semi]).map(|s| (s, semi + 1)));
        match decoded {
            Some((s, len)) => {
                out.push_str(&s);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<String> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse::<u32>().ok()?,
        };
        let c = char::from_u32(code).filter(|&c| c != '\0').unwrap_or('\u{fffd}');
        return Some(c.to_string());
    }
    if let Some(i) = LATIN1.iter().position(|n| *n == name) {
        return char::from_u32(0xC0 + i as u32).map(String::from);
    }
    NAMED.iter().find(|(n, _)| *n == name).map(|(_, s)| (*s).to_string())
}

/// Names of U+00C0..=U+00FF in order (`times` and `divide` included), which covers the
/// accented letters of Portuguese and the other Western European languages.
const LATIN1: [&str; 64] = [
    "Agrave", "Aacute", "Acirc", "Atilde", "Auml", "Aring", "AElig", "Ccedil", "Egrave", "Eacute", "Ecirc", "Euml",
    "Igrave", "Iacute", "Icirc", "Iuml", "ETH", "Ntilde", "Ograve", "Oacute", "Ocirc", "Otilde", "Ouml", "times",
    "Oslash", "Ugrave", "Uacute", "Ucirc", "Uuml", "Yacute", "THORN", "szlig", "agrave", "aacute", "acirc", "atilde",
    "auml", "aring", "aelig", "ccedil", "egrave", "eacute", "ecirc", "euml", "igrave", "iacute", "icirc", "iuml",
    "eth", "ntilde", "ograve", "oacute", "ocirc", "otilde", "ouml", "divide", "oslash", "ugrave", "uacute", "ucirc",
    "uuml", "yacute", "thorn", "yuml",
];

/// The other references documentation pages use.
const NAMED: &[(&str, &str)] = &[
    ("amp", "&"),
    ("lt", "<"),
    ("gt", ">"),
    ("quot", "\""),
    ("apos", "'"),
    ("nbsp", " "),
    ("ensp", " "),
    ("emsp", " "),
    ("thinsp", " "),
    ("shy", ""),
    ("zwj", ""),
    ("zwnj", ""),
    ("copy", "©"),
    ("reg", "®"),
    ("trade", "™"),
    ("hellip", "…"),
    ("mdash", "—"),
    ("ndash", "–"),
    ("lsquo", "‘"),
    ("rsquo", "’"),
    ("sbquo", "‚"),
    ("ldquo", "“"),
    ("rdquo", "”"),
    ("bdquo", "„"),
    ("laquo", "«"),
    ("raquo", "»"),
    ("lsaquo", "‹"),
    ("rsaquo", "›"),
    ("middot", "·"),
    ("bull", "•"),
    ("euro", "€"),
    ("pound", "£"),
    ("yen", "¥"),
    ("cent", "¢"),
    ("sect", "§"),
    ("para", "¶"),
    ("deg", "°"),
    ("plusmn", "±"),
    ("micro", "µ"),
    ("frac12", "½"),
    ("frac14", "¼"),
    ("frac34", "¾"),
    ("sup2", "²"),
    ("sup3", "³"),
    ("ordf", "ª"),
    ("ordm", "º"),
    ("iexcl", "¡"),
    ("iquest", "¿"),
    ("larr", "←"),
    ("rarr", "→"),
    ("uarr", "↑"),
    ("darr", "↓"),
    ("harr", "↔"),
    ("lArr", "⇐"),
    ("rArr", "⇒"),
    ("le", "≤"),
    ("ge", "≥"),
    ("ne", "≠"),
    ("asymp", "≈"),
    ("infin", "∞"),
    ("minus", "−"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn c(heading: &str, anchor: Option<&str>, text: &str) -> Chunk {
        Chunk { heading: heading.into(), anchor: anchor.map(Into::into), text: text.into() }
    }

    #[test]
    fn headings_split_a_page_under_its_title() {
        let html = r##"<!DOCTYPE html><html><head><title>Guide &amp; help</title>
            <style>h1 { color: red }</style><script>var x = "<h2>not a heading</h2>";</script></head>
            <body><nav><ul><li>Home</li><li>Menu</li></ul></nav>
            <p>Before any heading.</p>
            <h1 id="start">Getting started<a class="headerlink" href="#start">¶</a></h1>
            <p>Install it.<br>Then run it.</p><!-- a comment -->
            <h2>Configuração</h2><p>Edite o ficheiro <code>config.toml</code> &mdash; &eacute; f&aacute;cil &#233;&#xE9;.</p>
            <h2>Empty</h2>
            <h3 id="deep">Deep</h3><pre>let a = 1 &lt; 2;
let b = 3;</pre>
            </body></html>"##;
        assert_eq!(
            chunks(html),
            vec![
                c("Guide & help", None, "Before any heading."),
                c("Guide & help › Getting started", Some("start"), "Install it. Then run it."),
                c(
                    "Guide & help › Getting started › Configuração",
                    Some("configuração"),
                    "Edite o ficheiro config.toml — é fácil éé."
                ),
                c("Guide & help › Getting started › Empty › Deep", Some("deep"), "let a = 1 < 2; let b = 3;"),
            ]
        );
    }

    #[test]
    fn malformed_markup_degrades_to_text() {
        let out = chunks("<h2 id='x'>Open heading<p>a < b and c<d && e &unknown; &amp</p><div unclosed");
        // The unclosed heading reads as text; `<d … >` is a tag, as a browser would take it.
        assert_eq!(out, vec![c("", None, "Open heading a < b and c<div unclosed")]);
        let out = chunks("<h1>T</h1><p>a &lt b</p><p>x<y</p><h2>U</h2>tail");
        assert_eq!(out, vec![c("T", Some("t"), "a &lt b x"), c("T › U", Some("u"), "tail")]);
    }

    #[test]
    fn tags_split_words_only_where_blocks_do() {
        assert_eq!(plain_text("<span>ab</span><span>cd</span>"), "abcd");
        let out = chunks("<table><tr><td>one</td><td>two</td></tr></table><ul><li>three</li><li>four</li></ul>");
        assert_eq!(out, vec![c("", None, "one two three four")]);
    }

    #[test]
    fn entities_decode() {
        assert_eq!(
            decode_entities("&Ccedil;&atilde;o &otilde; &#x1F600; &#0; &#99999999; &bogus; & ;"),
            "Ção õ 😀 \u{fffd} \u{fffd} &bogus; & ;"
        );
    }

    #[test]
    fn raw_text_and_hidden_elements_are_skipped() {
        let html = "<SCRIPT type=x>if (a<b) {}</SCRIPT><template><p>t</p></template>\
                    <svg><svg/><text>s</text></svg><p>seen</p><noscript>n</noscript>";
        assert_eq!(chunks(html), vec![c("", None, "seen")]);
    }
}
