//! Markdown to chunks with pulldown-cmark: headings start sections, front matter is skipped,
//! code blocks stay in their section, inline HTML tags are dropped and HTML blocks read as
//! text.

use crate::chunk::{Chunk, Sections};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// The chunks of a Markdown document.
pub(crate) fn chunks(text: &str) -> Vec<Chunk> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS
        | Options::ENABLE_DEFINITION_LIST;
    let mut sections = Sections::new(None);
    // The heading being read: its level, explicit id and text so far.
    let mut heading: Option<(u8, Option<String>, String)> = None;
    // Inside front matter, whose text is not content.
    let mut metadata = false;
    // An HTML block's lines, read as one when it ends.
    let mut html: Option<String> = None;
    for event in Parser::new_ext(text, options) {
        match event {
            Event::Start(Tag::MetadataBlock(_)) => metadata = true,
            Event::End(TagEnd::MetadataBlock(_)) => metadata = false,
            _ if metadata => {}
            Event::Start(Tag::Heading { level, id, .. }) => {
                sections.paragraph_break();
                heading = Some((level_number(level), id.map(|i| i.to_string()), String::new()));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, id, text)) = heading.take() {
                    sections.heading(level, &text, id.as_deref());
                }
            }
            Event::Start(Tag::HtmlBlock) => html = Some(String::new()),
            Event::End(TagEnd::HtmlBlock) => {
                if let Some(block) = html.take() {
                    crate::html::text_into(&block, &mut sections);
                }
            }
            Event::Html(s) => match (&mut html, &mut heading) {
                (Some(block), _) => block.push_str(&s),
                (None, Some((_, _, h))) => h.push_str(&crate::html::plain_text(&s)),
                (None, None) => crate::html::text_into(&s, &mut sections),
            },
            // A tag or a comment inside a paragraph: nothing to read.
            Event::InlineHtml(_) => {}
            Event::Text(s) | Event::Code(s) | Event::InlineMath(s) | Event::DisplayMath(s) => match &mut heading {
                Some((_, _, h)) => h.push_str(&s),
                None => sections.text(&s),
            },
            Event::SoftBreak | Event::HardBreak => match &mut heading {
                Some((_, _, h)) => h.push(' '),
                None => sections.text(" "),
            },
            Event::Start(Tag::CodeBlock(_) | Tag::Paragraph | Tag::Item | Tag::TableRow | Tag::TableHead)
            | Event::Rule
            | Event::End(
                TagEnd::Paragraph
                | TagEnd::CodeBlock
                | TagEnd::Item
                | TagEnd::BlockQuote(_)
                | TagEnd::TableRow
                | TagEnd::TableHead
                | TagEnd::DefinitionListTitle
                | TagEnd::DefinitionListDefinition
                | TagEnd::FootnoteDefinition,
            ) => sections.paragraph_break(),
            Event::End(TagEnd::TableCell) => sections.text(" "),
            _ => {}
        }
    }
    sections.finish()
}

fn level_number(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(heading: &str, anchor: Option<&str>, text: &str) -> Chunk {
        Chunk { heading: heading.into(), anchor: anchor.map(Into::into), text: text.into() }
    }

    #[test]
    fn sections_carry_their_heading_path() {
        let md = "Intro before any heading.\n\n# Chat\n\nTalk to the assistant.\n\n## Adding a tool\n\n\
                  Put it in `tools.toml`.\n\n```toml\n[tool]\nname = \"x\"\n```\n\n### Details\n\nMore.\n\n\
                  ## Limits\n\nTen tools.\n\n# Other\n\nElse.\n";
        assert_eq!(
            chunks(md),
            vec![
                c("", None, "Intro before any heading."),
                c("Chat", Some("chat"), "Talk to the assistant."),
                c("Chat › Adding a tool", Some("adding-a-tool"), "Put it in tools.toml. [tool] name = \"x\""),
                c("Chat › Adding a tool › Details", Some("details"), "More."),
                c("Chat › Limits", Some("limits"), "Ten tools."),
                c("Other", Some("other"), "Else."),
            ]
        );
    }

    #[test]
    fn front_matter_and_empty_sections_are_dropped() {
        let md = "---\ntitle: Secret front matter\ntags: [a]\n---\n\n# Empty\n\n## Also empty\n\n## Full\n\nBody.\n";
        assert_eq!(chunks(md), vec![c("Empty › Full", Some("full"), "Body.")]);
        let toml = "+++\ntitle = \"x\"\n+++\n# T\n\nBody.\n";
        assert_eq!(chunks(toml), vec![c("T", Some("t"), "Body.")]);
    }

    #[test]
    fn setext_headings_ids_and_duplicates() {
        let md = "Setup\n=====\n\nOne.\n\n# Setup\n\nTwo.\n\n# Custom {#my-id}\n\nThree.\n";
        assert_eq!(
            chunks(md),
            vec![
                c("Setup", Some("setup"), "One."),
                c("Setup", Some("setup-1"), "Two."),
                c("Custom", Some("my-id"), "Three."),
            ]
        );
    }

    #[test]
    fn inline_markup_lists_tables_and_html() {
        let md = "# *Emph* and `code`\n\n- one [link](http://x.invalid) ![alt text](i.png)\n- two\n\n\
                  | a | b |\n|---|---|\n| c | d |\n\n<div>\n<script>bad()</script>\n<p>Shown &amp; kept</p>\n</div>\n\n\
                  Inline <b>bold</b> tag.\n";
        let out = chunks(md);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].heading, "Emph and code");
        assert_eq!(out[0].anchor.as_deref(), Some("emph-and-code"));
        assert_eq!(out[0].text, "one link alt text two a b c d Shown & kept Inline bold tag.");
    }

    #[test]
    fn a_long_section_is_cut_with_its_heading_on_every_piece() {
        let body = "Sentence about indexing documents for the assistant. ".repeat(60);
        let out = chunks(&format!("# Long\n\n{body}\n\n# Next\n\nShort.\n"));
        assert!(out.len() >= 3);
        assert!(out[..out.len() - 1].iter().all(|c| c.heading == "Long" && c.anchor.as_deref() == Some("long")));
        assert_eq!(out.last().map(|c| c.text.as_str()), Some("Short."));
    }
}
