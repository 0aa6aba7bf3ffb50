//! What a page says about itself: its `<title>` and its `<meta name="description">`, read with
//! the checker's own tokenizer (so a `<title>` inside a script or a comment does not count).
//! A published build takes its app's name and one-line description from them.

use super::{Scanner, Token};

/// The names a page gives itself; `None` when absent or blank.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageMeta {
    pub title: Option<String>,
    pub description: Option<String>,
}

/// The first `<title>` outside `<svg>` (an icon's title is not the page's) and the first
/// `<meta name="description">`, entities decoded and white space collapsed.
pub fn page_meta(text: &str) -> PageMeta {
    let mut sc = Scanner::new(text.strip_prefix('\u{feff}').unwrap_or(text));
    let mut meta = PageMeta::default();
    let mut svg = 0usize;
    while let Some(tok) = sc.next_token() {
        match tok {
            Token::Start(tag) => match tag.name.as_str() {
                "svg" if !tag.self_closing => svg += 1,
                "title" if svg == 0 => {
                    let start = sc.pos;
                    sc.skip_raw_text("title");
                    if meta.title.is_none() {
                        meta.title = clean(sc.slice(start, sc.pos));
                    }
                }
                "script" | "style" | "textarea" => sc.skip_raw_text(&tag.name),
                "meta" if meta.description.is_none() => {
                    let named = tag.attr("name").is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case("description"));
                    if named {
                        meta.description = tag.attr("content").and_then(|(c, _)| clean(c));
                    }
                }
                _ => {}
            },
            Token::End { name, .. } if name == "svg" => svg = svg.saturating_sub(1),
            _ => {}
        }
        if meta.title.is_some() && meta.description.is_some() {
            break;
        }
    }
    meta
}

/// Entities decoded, runs of white space made one space, trimmed; `None` when nothing is left.
fn clean(raw: &str) -> Option<String> {
    let text = decode(raw).split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

/// The entities a title or description is likely to hold (named few, and numeric ones).
fn decode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let name = &tail[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            }?;
            Some((c, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &tail[len..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_and_description_are_read_from_the_head() {
        let page = r#"<!DOCTYPE html><html><head><meta charset="utf-8">
            <title>
              Tom &amp; Jerry's   Café
            </title>
            <META NAME="Description" content="Track your   tasks &#8212; fast.">
            </head><body><svg><title>icon</title></svg></body></html>"#;
        let m = page_meta(page);
        assert_eq!(m.title.as_deref(), Some("Tom & Jerry's Café"));
        assert_eq!(m.description.as_deref(), Some("Track your tasks \u{2014} fast."));
    }

    #[test]
    fn titles_in_scripts_comments_and_icons_do_not_count() {
        let page = "<html><head><script>let s = '<title>no</title>';</script><!-- <title>no</title> -->\
                    </head><body><svg><title>icon</title></svg><p>hi</p></body></html>";
        assert_eq!(page_meta(page), PageMeta::default());
        let blank = "<title>   </title><meta name=description content=''>";
        assert_eq!(page_meta(blank), PageMeta::default());
        assert_eq!(page_meta("<title>a &bogus; b & c</title>").title.as_deref(), Some("a &bogus; b & c"));
    }
}
