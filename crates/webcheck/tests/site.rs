//! check_site against real directories.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::fs;
use std::path::Path;

use wright_webcheck::{CheckError, WebReport, check_site};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).unwrap();
    }
    fs::write(path, text).unwrap();
}

fn page(head: &str, body: &str) -> String {
    format!("<!DOCTYPE html>\n<html>\n<head>\n<title>T</title>\n{head}\n</head>\n<body>\n{body}\n</body>\n</html>\n")
}

fn errors(report: &WebReport) -> Vec<String> {
    report
        .problems
        .iter()
        .filter(|p| !p.is_warning())
        .map(|p| format!("{}:{:?}: {}", p.file, p.line, p.message))
        .collect()
}

#[test]
fn missing_entry() {
    let dir = tempfile::tempdir().unwrap();
    let report = check_site(dir.path(), "index.html").unwrap();
    assert!(!report.ok());
    assert!(report.pages.is_empty());
    assert_eq!(report.problems.len(), 1);
    assert_eq!(report.problems[0].message, "index.html is missing");
    assert_eq!(report.problems[0].file, "index.html");
    assert_eq!(report.problems[0].line, None);
}

#[test]
fn missing_entry_still_checks_other_pages() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "about.html", &page("", "<div>"));
    let report = check_site(dir.path(), "index.html").unwrap();
    assert_eq!(report.pages, vec!["about.html"]);
    let errs = errors(&report);
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(errs[0].contains("index.html is missing"));
    assert!(errs[1].contains("`<div>` opened on line 8 is never closed"));
}

#[test]
fn complete_site_is_ok() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "index.html",
        &page(
            "<link rel=\"stylesheet\" href=\"styles.css\">\n<link rel=\"icon\" href=\"img/favicon.png\">",
            "<h1>Hi</h1>\n<img src=\"img/logo%20big.png\" alt=\"\">\n<a href=\"about.html\">About</a>\n<a href=\"https://example.com/x.html\">x</a>\n<script src=\"app.js?v=1\"></script>",
        ),
    );
    write(dir.path(), "styles.css", "body { margin: 0 }");
    write(dir.path(), "app.js", "console.log(1)");
    write(dir.path(), "img/favicon.png", "");
    write(dir.path(), "img/logo big.png", "");
    write(dir.path(), "about.html", &page("", "<p>About us</p>\n<a href=\"index.html\">home</a>"));
    let report = check_site(dir.path(), "index.html").unwrap();
    assert!(report.ok(), "{report:#?}");
    assert!(report.problems.is_empty(), "{report:#?}");
    assert_eq!(report.pages, vec!["index.html", "about.html"]);
}

#[test]
fn missing_app_js() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "index.html",
        &page(
            "<link rel=\"stylesheet\" href=\"styles.css\">",
            "<div id=\"app\"></div>\n<script src=\"app.js\"></script>",
        ),
    );
    write(dir.path(), "styles.css", "");
    let report = check_site(dir.path(), "index.html").unwrap();
    assert!(!report.ok());
    let errs = errors(&report);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    let p = &report.problems[0];
    assert_eq!(p.file, "index.html");
    assert_eq!(p.line, Some(9));
    assert!(p.message.contains("`app.js` on line 9 points to app.js, which does not exist"), "{}", p.message);
}

#[test]
fn case_mismatch_hint() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "index.html", &page("", "<img src=\"Logo.PNG\" alt=\"\">"));
    write(dir.path(), "logo.png", "");
    let report = check_site(dir.path(), "index.html").unwrap();
    let errs = errors(&report);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(errs[0].contains("a file named `logo.png` exists there"), "{errs:#?}");
}

#[test]
fn root_relative_references() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "index.html", &page("<link rel=\"stylesheet\" href=\"/styles.css\">", "<p>x</p>"));
    write(
        dir.path(),
        "blog/post.html",
        &page(
            "<link rel=\"stylesheet\" href=\"/styles.css\">\n<link rel=\"stylesheet\" href=\"../styles.css\">",
            "<p>post</p>\n<script src=\"/missing.js\"></script>",
        ),
    );
    write(dir.path(), "styles.css", "");
    let report = check_site(dir.path(), "index.html").unwrap();
    assert_eq!(report.pages, vec!["index.html", "blog/post.html"]);
    let errs = errors(&report);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(errs[0].starts_with("blog/post.html:Some(10): `/missing.js`"), "{errs:#?}");
}

#[test]
fn escaping_references_are_problems() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "index.html",
        &page(
            "<link rel=\"stylesheet\" href=\"../../etc/passwd\">",
            "<img src=\"/../../etc/hosts\" alt=\"\">\n<script src=\"js/../../../x.js\"></script>",
        ),
    );
    let report = check_site(dir.path(), "index.html").unwrap();
    let errs = errors(&report);
    assert_eq!(errs.len(), 3, "{errs:#?}");
    assert!(errs.iter().all(|e| e.contains("points outside the project folder")), "{errs:#?}");
}

#[cfg(unix)]
#[test]
fn symlink_out_of_root_is_a_problem() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.js", "");
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "index.html", &page("", "<p>x</p><script src=\"link.js\"></script>"));
    std::os::unix::fs::symlink(outside.path().join("secret.js"), dir.path().join("link.js")).unwrap();
    let report = check_site(dir.path(), "index.html").unwrap();
    let errs = errors(&report);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(errs[0].contains("through a symbolic link"));
}

#[test]
fn reference_to_folder() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "index.html", &page("", "<p>x</p><script src=\"js\"></script>"));
    fs::create_dir(dir.path().join("js")).unwrap();
    let report = check_site(dir.path(), "index.html").unwrap();
    let errs = errors(&report);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(errs[0].contains("points to the folder js, not a file"));
}

#[test]
fn nested_client_entry() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "client/index.html",
        &page(
            "<link rel=\"stylesheet\" href=\"/styles.css\">\n<link rel=\"stylesheet\" href=\"../shared/base.css\">",
            "<div id=\"app\"></div>\n<script src=\"app.js\"></script>\n<script src=\"/vendor/lib.js\"></script>",
        ),
    );
    write(dir.path(), "client/styles.css", "");
    write(dir.path(), "client/app.js", "");
    write(dir.path(), "shared/base.css", "");
    write(dir.path(), "server/server.js", "");
    write(dir.path(), "server/views/page.html", &page("", "<h1>{{ title }}</h1>"));
    let report = check_site(dir.path(), "client/index.html").unwrap();
    assert_eq!(report.pages, vec!["client/index.html", "server/views/page.html"]);
    let errs = errors(&report);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(
        errs[0].contains("`/vendor/lib.js` on line 11 points to client/vendor/lib.js, which does not exist"),
        "{errs:#?}"
    );
    assert!(errs[0].starts_with("client/index.html:Some(11)"));

    let missing = check_site(dir.path(), "server/index.html").unwrap();
    assert!(missing.problems.iter().any(|p| p.message == "server/index.html is missing"));
}

#[test]
fn skips_node_modules_and_dot_directories() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "index.html", &page("", "<p>x</p>"));
    write(dir.path(), "node_modules/pkg/readme.html", "<div>");
    write(dir.path(), ".git/x.html", "<div>");
    write(dir.path(), ".cache/y.htm", "<div>");
    write(dir.path(), "docs/help.htm", &page("", "<p>help</p>"));
    let report = check_site(dir.path(), "index.html").unwrap();
    assert!(report.ok(), "{report:#?}");
    assert_eq!(report.pages, vec!["index.html", "docs/help.htm"]);
}

#[test]
fn at_most_fifty_pages() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "index.html", &page("", "<p>x</p>"));
    for i in 0..60 {
        write(dir.path(), &format!("p/{i:02}.html"), &page("", "<p>x</p>"));
    }
    let report = check_site(dir.path(), "index.html").unwrap();
    assert_eq!(report.pages.len(), 50);
    assert_eq!(report.pages[0], "index.html");
    assert!(report.ok());
    assert!(report.problems.iter().any(|p| p.is_warning() && p.message.contains("only the first 50 of 61")));
}

#[test]
fn broken_markup_in_entry_is_reported_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "index.html", &page("", "<main>\n<b><i>x</b></i>"));
    let report = check_site(dir.path(), "index.html").unwrap();
    let errs = errors(&report);
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(errs[0].starts_with("index.html:Some(8): `<main>` opened on line 8 is never closed"));
    assert!(errs[1].starts_with("index.html:Some(9): `<i>` opened on line 9"));
}

#[test]
fn invalid_utf8_is_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"<!DOCTYPE html>\n<p>caf".to_vec();
    bytes.extend([0xff, 0xfe]);
    bytes.extend(b"</p>\n");
    fs::write(dir.path().join("index.html"), bytes).unwrap();
    let report = check_site(dir.path(), "index.html").unwrap();
    let errs = errors(&report);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(errs[0].contains("not valid UTF-8"));
}

#[test]
fn bad_arguments_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(check_site(&dir.path().join("nope"), "index.html"), Err(CheckError::RootNotDirectory(_))));
    assert!(matches!(check_site(dir.path(), "../index.html"), Err(CheckError::InvalidEntry(_))));
    assert!(matches!(check_site(dir.path(), "/etc/passwd"), Err(CheckError::InvalidEntry(_))));
}

#[test]
fn report_serializes() {
    let dir = tempfile::tempdir().unwrap();
    let report = check_site(dir.path(), "index.html").unwrap();
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "pages": [],
            "problems": [{"file": "index.html", "line": null, "message": "index.html is missing"}]
        })
    );
}

#[test]
fn a_warning_is_typed_and_keeps_its_serialised_label() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "<html><head><title>t</title></head><body><p>x</p></body></html>")
        .unwrap();
    let report = check_site(dir.path(), "index.html").unwrap();
    let warning = report.problems.iter().find(|p| p.severity == wright_webcheck::Severity::Warning).unwrap();
    assert!(warning.message.starts_with("missing `<!DOCTYPE html>`"), "{}", warning.message);
    assert!(report.ok());
    let json = serde_json::to_value(warning).unwrap();
    assert!(json["message"].as_str().unwrap().starts_with("warning: missing `<!DOCTYPE html>`"), "{json}");
    assert_eq!(warning.to_string(), format!("index.html:1: warning: {}", warning.message));
}
