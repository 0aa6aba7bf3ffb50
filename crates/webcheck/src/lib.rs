//! wright-webcheck: basic checks that a generated web page is well-formed and complete.
//!
//! wright lets a model write small web projects and must not call them done
//! until they would actually load in a browser. A browser never refuses bad
//! markup — it silently repairs it — so mistakes like an unclosed `<div>` or a
//! `<script>` pointing at a file that was never written only show up as a
//! broken page. This crate catches those mistakes with a small, purpose-built
//! checker (not a full HTML5 parser) and words every finding so that a model
//! (or a beginner) can fix it from the message alone.
//!
//! Findings of [`Severity::Warning`] are advisory (e.g. a
//! missing `<!DOCTYPE html>`): they are reported but do not make
//! [`WebReport::ok`] false, because the page still works.

mod html;
mod report;
mod site;

pub use html::{PageMeta, check_html, local_references, page_meta};
pub use report::{CheckError, Problem, Severity, WebReport};
pub use site::{check_site, check_site_in};
