//! `dist/index.html`: the project's `index.html`, made to load the bundle.
//!
//! Models trained on Vite projects write `<script type="module" src="/src/main.tsx">`; a
//! browser cannot run that file, so such tags go, and the bundle's script and stylesheet are
//! added when the page does not name them already. The bundle is a classic script (an IIFE),
//! not a module, so the page also works opened from disk (`file://`), where browsers refuse
//! module scripts.

use regex::Regex;
use std::sync::LazyLock;

static SOURCE_SCRIPT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"(?is)<script\b[^>]*\bsrc\s*=\s*["'][^"']*\.(?:tsx|ts|jsx)["'][^>]*>\s*</script>\s*"#).ok()
});

const FALLBACK: &str = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>React app</title>\n</head>\n<body>\n<div id=\"root\"></div>\n</body>\n</html>\n";

/// The page to write to `dist/index.html` for the project's `index.html` (`source`).
pub fn bundled_page(source: &str) -> String {
    let mut page = if source.trim().is_empty() { FALLBACK.to_string() } else { source.to_string() };
    if let Some(re) = SOURCE_SCRIPT.as_ref() {
        page = re.replace_all(&page, "").into_owned();
    }
    let lower = page.to_ascii_lowercase();
    if !lower.contains("app.css") {
        page = insert_before(&page, "</head>", "<link rel=\"stylesheet\" href=\"app.css\">\n");
    }
    if !page.to_ascii_lowercase().contains("app.js") {
        page = insert_before(&page, "</body>", "<script defer src=\"app.js\"></script>\n");
    }
    if !page.to_ascii_lowercase().contains("id=\"root\"") {
        page = insert_before(&page, "<script defer src=\"app.js\"", "<div id=\"root\"></div>\n");
    }
    page
}

/// `text` with `what` inserted before the first `marker` (any case), or at the end.
fn insert_before(text: &str, marker: &str, what: &str) -> String {
    match text.to_ascii_lowercase().find(&marker.to_ascii_lowercase()) {
        Some(at) => format!("{}{what}{}", &text[..at], &text[at..]),
        None => format!("{text}\n{what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vite_style_page_loads_the_bundle_instead_of_the_source() {
        let vite = "<html><head><title>Todo</title></head><body><div id=\"root\"></div>\n<script type=\"module\" src=\"/src/main.tsx\"></script>\n</body></html>";
        let page = bundled_page(vite);
        assert!(!page.contains("main.tsx"), "{page}");
        assert!(page.contains("<link rel=\"stylesheet\" href=\"app.css\">\n</head>"), "{page}");
        assert!(page.contains("<script defer src=\"app.js\"></script>\n</body>"), "{page}");
        assert_eq!(page.matches("id=\"root\"").count(), 1);
    }

    #[test]
    fn the_scaffold_page_is_kept_as_it_is() {
        let scaffold = crate::scaffold::FILES.iter().find(|(p, _)| *p == "index.html").map(|(_, c)| *c).unwrap_or("");
        assert_eq!(bundled_page(scaffold), scaffold);
    }

    #[test]
    fn an_empty_page_still_gets_a_root_and_the_bundle() {
        let page = bundled_page("");
        for want in ["<div id=\"root\"></div>", "app.js", "app.css", "<title>"] {
            assert!(page.contains(want), "{want} missing in {page}");
        }
    }
}
