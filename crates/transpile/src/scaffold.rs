//! The react template's project: what wright writes before the model starts, so every React
//! build has the same packages (pinned, installed from wright's cache), configuration and page.
//!
//! The model writes `src/App.tsx`, its components and tests, and the title and description in
//! `index.html`; wright owns the entry (`src/main.tsx`) and the bundling.

use wright_sandbox::{PathError, Workspace};

/// (path, content) of every scaffold file.
pub const FILES: &[(&str, &str)] = &[
    ("package.json", include_str!("../scaffold/react/package.json")),
    ("tsconfig.json", include_str!("../scaffold/react/tsconfig.json")),
    ("index.html", include_str!("../scaffold/react/index.html")),
    ("src/main.tsx", include_str!("../scaffold/react/src/main.tsx")),
    ("src/index.css", include_str!("../scaffold/react/src/index.css")),
    ("src/assets.d.ts", include_str!("../scaffold/react/src/assets.d.ts")),
];

/// Write the scaffold into `ws`, leaving any file that already exists alone (a continued build
/// keeps its own). Returns the paths written.
pub fn write(ws: &Workspace) -> Result<Vec<String>, PathError> {
    let mut written = Vec::new();
    for (path, content) in FILES {
        if ws.resolve(path).is_ok_and(|p| p.exists()) {
            continue;
        }
        ws.write(path, content.as_bytes())?;
        written.push((*path).to_string());
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scaffold_pins_every_package_and_runs_vitest_in_a_dom() {
        let pkg: serde_json::Value = serde_json::from_str(FILES[0].1).unwrap_or_default();
        for deps in ["dependencies", "devDependencies"] {
            for (name, version) in pkg[deps].as_object().into_iter().flatten() {
                let v = version.as_str().unwrap_or_default();
                assert!(v.chars().all(|c| c.is_ascii_digit() || c == '.'), "{name} is not pinned: {v}");
            }
        }
        assert!(pkg["scripts"]["test"].as_str().is_some_and(|s| s.contains("vitest run")));
        let html = FILES[2].1;
        assert!(html.contains("src=\"app.js\"") && html.contains("href=\"app.css\""));
    }

    #[test]
    fn writing_keeps_files_that_exist() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ws =
            Workspace::open(dir.path(), wright_sandbox::WorkspaceLimits::default()).unwrap_or_else(|e| panic!("{e}"));
        ws.write("index.html", b"<title>Mine</title>").unwrap_or_else(|e| panic!("{e}"));
        let written = write(&ws).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(written.len(), FILES.len() - 1);
        assert_eq!(ws.read("index.html").unwrap_or_default(), b"<title>Mine</title>");
        assert!(write(&ws).unwrap_or_else(|e| panic!("{e}")).is_empty());
    }
}
