//! Tested starter apps with slots, so a first build (even with the tiny offline model) ends in
//! a real, working app rather than a page that says hello.
//!
//! A starter is a folder: `starter.json` (id, titles, template, tags and example requests in
//! English and Portuguese, and its slots as a JSON Schema) and `files/`, the project with
//! [MiniJinja] templates in it. The built-in ones are embedded from `library/`; a user's own
//! are read from a folder ([`Library::with_dir`]). [`Library::pick`] finds the one a request
//! asks for, with a confidence; [`Starter::fill`] checks slot values against the schema (the
//! field that is wrong is named) and [`Starter::render`] writes the files, HTML-escaping
//! values in HTML so a title can never inject markup. See `docs/starters.md`.
//!
//! [MiniJinja]: https://docs.rs/minijinja

mod library;
pub mod meaning;
mod pick;
mod subject;

pub use library::{Examples, Library, Manifest, Starter, StarterError, Words};
pub use pick::{Pick, THRESHOLD};

/// The picker's model (`meaning.rs`), as `cargo run -p wright-starters --example pick_fit
/// --release` fitted it on `eval/tune.jsonl`; its figures on the held-out set are in
/// `docs/starters.md`.
pub const MODEL: meaning::Model =
    meaning::Model { weights: [6.584_873, 48.812_443, 1.751_004_7, 8.307_69], bias: -9.768_16, threshold: 0.98 };
pub use subject::subject;

#[cfg(test)]
mod tests;
