//! `wright builds rate ID up|down [--comment TEXT]`: a 👍/👎 on a finished build in the local
//! store, and which notes the build used it moved (docs/feedback.md).

use anyhow::Result;
use std::io::Write;
use wright_store::{Rated, Store};

/// 👍 or 👎, as typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Thumb {
    Up,
    Down,
}

/// Rate `build` (resolved already) and say what moved.
pub async fn rate(
    store: &dyn Store,
    build: &wright_store::BuildRecord,
    thumb: Thumb,
    comment: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let value = if thumb == Thumb::Up { 1 } else { -1 };
    let rated = store.rate_build(&build.start.id, build.owner.as_deref(), value, comment).await?;
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&rated)?)?;
    } else {
        writeln!(out, "{}", said(&build.start.id, &rated))?;
    }
    Ok(())
}

/// What a rating did, in plain words.
fn said(id: &str, rated: &Rated) -> String {
    let thumb = if rated.feedback.value > 0 { "👍" } else { "👎" };
    let mut s = format!("Build {id} rated {thumb}.");
    if rated.moved.is_empty() {
        s.push_str(" No note's confidence moved (it used none, or they moved for this rating already).");
        return s;
    }
    let n = rated.moved.len();
    let notes = if n == 1 { "note" } else { "notes" };
    let verb = if rated.feedback.value > 0 { "gained" } else { "lost" };
    let list: Vec<String> = rated.moved.iter().map(|m| format!("{} {:.2} → {:.2}", m.id, m.before, m.after)).collect();
    s.push_str(&format!("\n{n} {notes} used by this build {verb} confidence: {}", list.join(", ")));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use wright_store::{BuildFeedback, MovedNote};

    fn rated(value: i8, moved: Vec<MovedNote>) -> Rated {
        Rated {
            feedback: BuildFeedback {
                build_id: "b1".into(),
                user_id: None,
                value,
                comment: None,
                created_at: "t".into(),
                updated_at: "t".into(),
            },
            moved,
        }
    }

    #[test]
    fn says_which_notes_moved_and_how_far() {
        let m = |id: &str, before, after| MovedNote { id: id.into(), before, after };
        let s = said("b1", &rated(-1, vec![m("n-abc", 0.72, 0.61), m("n-def", 0.5, 0.4)]));
        assert_eq!(
            s,
            "Build b1 rated 👎.\n2 notes used by this build lost confidence: n-abc 0.72 → 0.61, n-def 0.50 → 0.40"
        );
        let s = said("b1", &rated(1, vec![m("n-abc", 0.61, 0.7)]));
        assert!(s.ends_with("1 note used by this build gained confidence: n-abc 0.61 → 0.70"), "{s}");
        assert!(said("b1", &rated(1, vec![])).contains("No note's confidence moved"));
    }
}
