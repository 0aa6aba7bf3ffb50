//! `diagram`: Mermaid from the model, checked for a known diagram type and balanced structure
//! before it is returned (re-asked once when it fails).

use crate::model::{structured, subject_line, text_field};
use crate::relevance::Cues;
use crate::tool::{ChatContext, ChatTool, ToolError, ToolOutput};
use async_trait::async_trait;
use serde_json::json;
use wright_events::chat::Part;
use wright_provider::ToolSpec;

/// Diagram types Mermaid draws, as the first word of the source.
const KNOWN: &[&str] = &[
    "graph",
    "flowchart",
    "sequenceDiagram",
    "classDiagram",
    "stateDiagram",
    "stateDiagram-v2",
    "erDiagram",
    "journey",
    "gantt",
    "pie",
    "mindmap",
    "timeline",
    "quadrantChart",
    "gitGraph",
];

/// A node on its own line: `A`, `A[text]`, `A(text)`, `A{text}`, `A((text))`, `A>text]`.
fn is_node(line: &str) -> bool {
    let l = line.trim().trim_end_matches(';').trim_end();
    // `A[text]:::warm`: a node with a class.
    let l = l.split(":::").next().unwrap_or(l).trim_end();
    let id_end = l.char_indices().find(|(_, c)| !(c.is_alphanumeric() || *c == '_')).map_or(l.len(), |(i, _)| i);
    if id_end == 0 {
        return false;
    }
    let rest = l[id_end..].trim_start();
    rest.is_empty() || (rest.starts_with(['[', '(', '{', '>']) && rest.ends_with([']', ')', '}']))
}

/// Brackets and quotes balanced on the lines that draw (comments left out); `>` opens a
/// flowchart's flag shape, closed by `]`.
fn check_brackets(lines: &[(usize, &str)]) -> Result<(), String> {
    let mut stack = Vec::new();
    for &(n, line) in lines {
        let mut in_quote = false;
        let mut prev = ' ';
        for c in line.chars() {
            match c {
                '"' => in_quote = !in_quote,
                _ if in_quote => {}
                '(' | '[' | '{' => stack.push((c, n)),
                // `A>text]`: a flag node (not an arrow's head, which follows `-` or `=`).
                '>' if prev.is_alphanumeric() => stack.push(('[', n)),
                ')' | ']' | '}' => {
                    let want = match c {
                        ')' => '(',
                        ']' => '[',
                        _ => '{',
                    };
                    match stack.pop() {
                        Some((open, _)) if open == want => {}
                        _ => return Err(format!("line {n}: `{c}` closes nothing open")),
                    }
                }
                _ => {}
            }
            prev = c;
        }
        if in_quote {
            return Err(format!("line {n}: a quote is not closed"));
        }
    }
    match stack.pop() {
        Some((open, line)) => Err(format!("line {line}: `{open}` is never closed")),
        None => Ok(()),
    }
}

/// Check Mermaid source: a known type first, something drawn; for flowcharts, class and
/// state diagrams brackets and quotes balanced, and for flowcharts every line a node or an
/// edge, at least one edge, and `subgraph`/`end` nested. A type line the model repeated at
/// the top of the body is dropped.
pub fn check_mermaid(src: &str) -> Result<String, String> {
    let src = src.trim().trim_start_matches("```mermaid").trim_start_matches("```").trim_end_matches("```").trim();
    let mut lines =
        src.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with("%%"));
    let (_, first) = lines.next().ok_or("the diagram is empty")?;
    let kind = first.split_whitespace().next().unwrap_or_default();
    if !KNOWN.contains(&kind) {
        return Err(format!("`{kind}` is not a Mermaid diagram type (use one of: {})", KNOWN.join(", ")));
    }
    let mut body: Vec<(usize, &str)> = lines.collect();
    let repeated = body.first().is_some_and(|(_, l)| *l == first);
    if repeated {
        body.remove(0);
    }
    if body.is_empty() && !first.contains(';') {
        return Err("the diagram has a type but draws nothing".into());
    }
    if matches!(kind, "graph" | "flowchart" | "classDiagram" | "stateDiagram" | "stateDiagram-v2") {
        check_brackets(&body)?;
    }
    if matches!(kind, "graph" | "flowchart") {
        const EDGES: &[&str] = &["-->", "---", "-.->", "-.-", "==>", "===", "--o", "--x", "<-->", "-- "];
        const WORDS: &[&str] = &["subgraph", "end", "classDef", "class", "style", "click", "linkStyle", "direction"];
        let mut depth = 0usize;
        for &(n, l) in &body {
            let word = l.split_whitespace().next().unwrap_or_default();
            let statement = EDGES.iter().any(|e| l.contains(e)) || WORDS.contains(&word) || is_node(l);
            if !statement {
                return Err(format!(
                    "line {n} is not a flowchart statement (a node like `A[Sun]` or an edge like `A --> B`)"
                ));
            }
            match word {
                "subgraph" => depth += 1,
                "end" => depth = depth.checked_sub(1).ok_or(format!("line {n}: `end` closes no `subgraph`"))?,
                _ => {}
            }
        }
        if depth > 0 {
            return Err(format!("{depth} `subgraph` without its `end`"));
        }
        if !body.iter().any(|(_, l)| EDGES.iter().any(|e| l.contains(e))) && !first.contains("-->") {
            return Err("the flowchart has no edge (`A --> B`)".into());
        }
    }
    if repeated {
        let mut out = vec![first];
        out.extend(body.iter().map(|(_, l)| *l));
        return Ok(out.join("\n"));
    }
    Ok(src.to_string())
}

/// The first lines the model may choose from.
const KINDS: &[&str] = &[
    "flowchart TD",
    "flowchart LR",
    "sequenceDiagram",
    "mindmap",
    "timeline",
    "classDiagram",
    "stateDiagram-v2",
    "erDiagram",
    "pie",
];

/// The Mermaid source in the model's arguments: `kind` and `body`, or a whole `mermaid`.
fn source_of(v: &serde_json::Value) -> Result<String, String> {
    if v.get("mermaid").is_some() {
        return text_field(v, "mermaid", 4000);
    }
    let kind = text_field(v, "kind", 40)?;
    let body = text_field(v, "body", 4000)?;
    Ok(format!("{kind}\n{body}"))
}

/// The `diagram` tool.
pub struct Diagram;

#[async_trait]
impl ChatTool for Diagram {
    fn name(&self) -> &'static str {
        "diagram"
    }

    fn description(&self) -> &'static str {
        "Draws a diagram (flowchart, mind map, sequence, cycle…) of a topic as Mermaid."
    }

    fn triggers(&self) -> &'static [&'static str] {
        &["diagram", "flowchart", "mind map", "draw", "diagrama", "fluxograma", "mapa mental", "desenhe"]
    }

    fn message_type(&self) -> &'static str {
        "diagram"
    }

    fn cues(&self) -> Cues {
        super::cues::diagram()
    }

    fn can_handle(&self, message: &str, ctx: &ChatContext) -> f32 {
        ctx.scorer.score(self.name(), message, ctx.embedding.as_deref().map(Vec::as_slice))
    }

    async fn execute(&self, message: &str, ctx: &ChatContext) -> Result<ToolOutput, ToolError> {
        let spec = ToolSpec {
            name: "drawDiagram".into(),
            description: "Return a Mermaid diagram that explains the topic.".into(),
            // The type is an enum and the body a string, so a grammar-constrained model (the
            // offline one) cannot start with anything but a diagram type.
            parameters: json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string", "maxLength": 120},
                    "kind": {"type": "string", "enum": KINDS},
                    "body": {"type": "string", "maxLength": 4000, "description": "the diagram's lines after its type line"}
                },
                "required": ["title", "kind", "body"]
            }),
        };
        let system = format!(
            "You draw clear teaching diagrams in Mermaid syntax: choose the diagram's kind, then write its \
             lines (for a flowchart, lines like `A[Sunlight] --> B[Leaf]`). Keep it under 25 nodes; quote \
             labels with punctuation. Write labels in {}.",
            ctx.lang.name()
        );
        let ((title, mermaid), warning) = structured(ctx, spec, system, subject_line(message), |v| {
            Ok((text_field(v, "title", 120)?, check_mermaid(&source_of(v)?)?))
        })
        .await?;
        Ok(ToolOutput {
            content: format!("A diagram titled \"{title}\" is shown to the user."),
            part: Part::Diagram { title, mermaid },
            warning,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::check_mermaid;

    #[test]
    fn good_diagrams_pass() {
        for ok in [
            "flowchart TD\n  A[Sun] --> B(Leaf)\n  B --> C{Glucose}",
            "graph LR; A-->B",
            "```mermaid\nsequenceDiagram\n  Alice->>Bob: Hi\n```",
            "mindmap\n  root((Cells))\n    Nucleus",
            "flowchart TD\n subgraph S\n A --> B\n end",
            "flowchart TD\n A[\"Light (photons)\"] --> B",
            "erDiagram\n CUSTOMER ||--o{ ORDER : places",
            "flowchart TD\n A>Asymmetric] --> B",
            "flowchart TD\nflowchart TD\n A --> B",
            "flowchart TD\n A[Sun]:::warm --> B",
            "sequenceDiagram\n Alice->>Bob: Hi :)",
            "mindmap\n  root((Cells))\n    1) Nucleus",
            "flowchart TD\n %% a comment with ( in it\n A --> B",
        ] {
            assert!(check_mermaid(ok).is_ok(), "{ok}: {:?}", check_mermaid(ok));
        }
    }

    #[test]
    fn broken_diagrams_say_why() {
        let cases = [
            ("", "empty"),
            ("hello world\nA-->B", "not a Mermaid diagram type"),
            ("flowchart TD\n A[Sun --> B", "never closed"),
            ("flowchart TD\n A] --> B", "closes nothing"),
            ("flowchart TD\n A[\"open] --> B", "quote"),
            ("flowchart TD\n subgraph S\n A --> B", "subgraph"),
            ("flowchart TD\n end\n subgraph S\n A --> B", "closes no `subgraph`"),
            ("flowchart TD", "draws nothing"),
            ("flowchart LR\nThe process of photosynthesis is a complex reaction.", "not a flowchart statement"),
            ("flowchart LR\n A[Sun]\n B[Leaf]", "no edge"),
        ];
        for (src, why) in cases {
            let err = check_mermaid(src).err().unwrap_or_default();
            assert!(err.contains(why), "{src:?}: {err}");
        }
    }
}
