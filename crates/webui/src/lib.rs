//! The web UI that `wright serve` shows at `/`: a page to type a prompt and watch the build
//! come alive (narration, phase, files, code, terminal, tests, preview), and the user's past
//! builds. It is plain HTML, CSS and ES modules, embedded in the binary at compile time, so
//! it works offline and needs no toolchain beyond cargo. Everything it shows that a model, a
//! command or a user wrote goes into the page as text (`textContent`), never as HTML.
//!
//! The server serves [`INDEX`] at `/` and each [`Asset`] at `/ui/{name}`. Built third-party
//! files (Mermaid, which draws the chat's diagrams) are not embedded: [`vendor`] fetches them
//! once into the data dir and the server serves them at `/ui/vendor/{name}`.
//!
//! The in-app assistant (`assistant.js`, which any page can load with one `<script>` tag) is
//! served from `/assistant/{name}` for each name in [`ASSISTANT`] ([`assistant_asset`]), and
//! the accessibility library its page tools import from `/assistant/vendor/{name}`
//! ([`vendor::ASSISTANT_SERVED`], [`vendor::served_assistant`]).

pub mod vendor;

/// The page itself.
pub const INDEX: &str = include_str!("../assets/index.html");

/// One embedded file under `/ui/`.
#[derive(Debug)]
pub struct Asset {
    pub name: &'static str,
    pub content_type: &'static str,
    pub body: &'static str,
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file the page loads.
pub const ASSETS: &[Asset] = &[
    Asset { name: "app.css", content_type: "text/css; charset=utf-8", body: include_str!("../assets/app.css") },
    Asset { name: "app.js", content_type: JS, body: include_str!("../assets/app.js") },
    Asset { name: "narrate.js", content_type: JS, body: include_str!("../assets/narrate.js") },
    Asset { name: "highlight.js", content_type: JS, body: include_str!("../assets/highlight.js") },
    Asset { name: "stream.js", content_type: JS, body: include_str!("../assets/stream.js") },
    Asset { name: "charts.js", content_type: JS, body: include_str!("../assets/charts.js") },
    Asset { name: "dom.js", content_type: JS, body: include_str!("../assets/dom.js") },
    Asset { name: "errors.js", content_type: JS, body: include_str!("../assets/errors.js") },
    Asset { name: "dashboard.js", content_type: JS, body: include_str!("../assets/dashboard.js") },
    Asset { name: "spend.js", content_type: JS, body: include_str!("../assets/spend.js") },
    Asset { name: "apps.js", content_type: JS, body: include_str!("../assets/apps.js") },
    Asset { name: "classes.js", content_type: JS, body: include_str!("../assets/classes.js") },
    Asset { name: "feedback.js", content_type: JS, body: include_str!("../assets/feedback.js") },
    Asset { name: "tasks.js", content_type: JS, body: include_str!("../assets/tasks.js") },
    Asset { name: "chat.js", content_type: JS, body: include_str!("../assets/chat.js") },
    Asset { name: "parts.js", content_type: JS, body: include_str!("../assets/parts.js") },
    Asset { name: "markdown.js", content_type: JS, body: include_str!("../assets/markdown.js") },
    Asset { name: "diagram.js", content_type: JS, body: include_str!("../assets/diagram.js") },
    Asset { name: "sse.js", content_type: JS, body: include_str!("../assets/sse.js") },
    Asset { name: "limits.js", content_type: JS, body: include_str!("../assets/limits.js") },
    Asset { name: "words.js", content_type: JS, body: WORDS_JS },
    Asset { name: "assistant.js", content_type: JS, body: include_str!("../assets/assistant.js") },
    Asset { name: "assistant-messages.js", content_type: JS, body: include_str!("../assets/assistant-messages.js") },
    Asset { name: "assistant-server.js", content_type: JS, body: include_str!("../assets/assistant-server.js") },
    Asset {
        name: "assistant.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("../assets/assistant.css"),
    },
    Asset { name: "assistant-core.js", content_type: JS, body: include_str!("../assets/assistant-core.js") },
    Asset { name: "a11y.js", content_type: JS, body: include_str!("../assets/a11y.js") },
    Asset { name: "a11y-page.js", content_type: JS, body: include_str!("../assets/a11y-page.js") },
    Asset { name: "a11y-act.js", content_type: JS, body: include_str!("../assets/a11y-act.js") },
    Asset { name: "a11y-text.js", content_type: JS, body: include_str!("../assets/a11y-text.js") },
];

/// The files served under `/assistant/{name}`: the assistant and every module it imports
/// (its vendored library aside, under `/assistant/vendor/`). A page on another origin loads
/// them as module scripts, so they need CORS headers there.
pub const ASSISTANT: &[&str] = &[
    "assistant.js",
    "assistant.css",
    "assistant-core.js",
    "assistant-messages.js",
    "assistant-server.js",
    "a11y.js",
    "a11y-page.js",
    "a11y-act.js",
    "a11y-text.js",
    "markdown.js",
    "highlight.js",
    "sse.js",
];

/// The words the CLI and the server say too (`wright_events::words`), as the module
/// `narrate.js` imports: the same two tables, byte for byte.
pub const WORDS_JS: &str = concat!(
    "// wright's shared words (crates/events/words/*.json), one table per language.\n",
    "export const WORDS = {\n\"en\": ",
    include_str!("../../events/words/en.json"),
    ",\n\"pt\": ",
    include_str!("../../events/words/pt.json"),
    "};\n"
);

/// The embedded file called `name`, if there is one.
pub fn asset(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

/// The file to answer `/assistant/{name}` with: one of [`ASSISTANT`].
pub fn assistant_asset(name: &str) -> Option<&'static Asset> {
    if ASSISTANT.contains(&name) { asset(name) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_at(text: &str) -> String {
        text.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-').collect()
    }

    /// Every `/ui/…` the page or a module names is embedded, or is a vendored file the server
    /// serves from the data dir (`/ui/vendor/…`).
    #[test]
    fn everything_the_page_loads_is_embedded() {
        let mut texts = vec![INDEX];
        texts.extend(ASSETS.iter().map(|a| a.body));
        let mut vendored = 0;
        for text in texts {
            for (i, _) in text.match_indices("/ui/") {
                if let Some(rest) = text[i + 4..].strip_prefix("vendor/") {
                    let name = name_at(rest);
                    assert!(vendor::SERVED.iter().any(|s| s.name == name), "/ui/vendor/{name} is not a vendored file");
                    vendored += 1;
                    continue;
                }
                let name = name_at(&text[i + 4..]);
                assert!(asset(&name).is_some(), "/ui/{name} is referenced but not embedded");
            }
            for (i, _) in text.match_indices("from './") {
                let name: String = text[i + 8..].chars().take_while(|c| *c != '\'').collect();
                if let Some(vendored) = name.strip_prefix("vendor/") {
                    assert!(
                        vendor::ASSISTANT_SERVED.iter().any(|s| s.name == vendored),
                        "module ./{name} is not a vendored file"
                    );
                    continue;
                }
                assert!(asset(&name).is_some(), "module ./{name} is imported but not embedded");
            }
        }
        assert!(vendored > 0, "the diagrams' renderer is loaded from /ui/vendor/");
        for s in vendor::SERVED {
            assert!(
                asset(s.name).is_none() && asset(&format!("vendor/{}", s.name)).is_none(),
                "{} is embedded",
                s.name
            );
        }
    }

    /// Nothing is fetched from anywhere but the server itself (works offline, no CDN).
    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for text in std::iter::once(INDEX).chain(ASSETS.iter().map(|a| a.body)) {
            // The SVG namespace is a name, not an address anything is fetched from.
            let text = text.replace("'http://www.w3.org/2000/svg'", "");
            assert!(!text.contains("http://") && !text.contains("https://"), "an outside address in the UI");
            assert!(!text.contains("innerHTML") && !text.contains("outerHTML") && !text.contains("insertAdjacentHTML"));
            assert!(!text.contains("document.write") && !text.contains("eval("));
        }
    }

    /// The names the accessibility tree must carry (the tests and the in-app assistant use them).
    #[test]
    fn the_page_names_its_controls() {
        for needle in [
            "aria-label=\"What should wright build?\"",
            ">Build</button>",
            "aria-label=\"Narration\"",
            "role=\"tree\"",
            "aria-label=\"Files\"",
            "title=\"Preview\"",
            "id=\"phase\" role=\"status\"",
            "aria-label=\"Message\"",
            "aria-label=\"Send\"",
            "role=\"log\" aria-label=\"Conversation\"",
            "id=\"nav-apps\" href=\"#apps\"",
            "id=\"apps-list\" class=\"apps-list\" aria-labelledby=\"apps-h\"",
        ] {
            assert!(INDEX.contains(needle), "index.html lacks {needle}");
        }
    }

    /// The modules the assistant's modules import, and theirs, are all served under
    /// `/assistant/` (a page on another origin can reach nothing else).
    #[test]
    fn the_assistant_loads_only_what_is_served_beside_it() {
        let mut todo = vec!["assistant.js"];
        let mut seen = std::collections::BTreeSet::new();
        while let Some(name) = todo.pop() {
            if !seen.insert(name) {
                continue;
            }
            let body = assistant_asset(name).unwrap_or_else(|| panic!("{name} is not served under /assistant/")).body;
            for (i, _) in body.match_indices("from './") {
                let dep: String = body[i + 8..].chars().take_while(|c| *c != '\'').collect();
                if dep.starts_with("vendor/") {
                    continue;
                }
                let dep = ASSISTANT.iter().find(|n| **n == dep).unwrap_or_else(|| panic!("{name} imports ./{dep}"));
                todo.push(dep);
            }
        }
        assert!(seen.contains("a11y.js") && seen.contains("markdown.js") && seen.contains("sse.js"), "{seen:?}");
        assert!(assistant_asset("assistant.css").is_some() && assistant_asset("app.js").is_none());
        // a11y.js reads the page through a11y-page.js, which computes roles and names with it.
        let a11y = asset("a11y-page.js").unwrap().body;
        assert!(a11y.contains("from './vendor/dom-accessibility-api/index.mjs'"));
        let panel = asset("assistant.js").unwrap().body;
        for needle in ["data-testid", "import.meta.url", "'assistant.css'", "attachShadow"] {
            assert!(panel.contains(needle), "assistant.js lacks {needle}");
        }
        // No inline style or script: a page's strict CSP must not break the panel.
        for name in ["assistant.js", "assistant-messages.js"] {
            let body = asset(name).unwrap().body;
            for bad in
                ["setAttribute('style'", "h('style'", "h('script'", "createElement('style')", "createElement('script')"]
            {
                assert!(!body.contains(bad), "{name} has {bad}");
            }
        }
    }
}
