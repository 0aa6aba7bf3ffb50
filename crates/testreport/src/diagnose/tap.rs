//! Diagnoses from `node --test` TAP, read by the crate's TAP parser ([`crate::tap::read`]):
//! a failing point's YAML fields (`error`, `name`, `code`, `stack`, `location`) and the output
//! of a test file that could not even load, which node prints as `#` comments before it.

use super::paths::{Loc, library_from_path, missing_package, project_file};
use super::patterns::{YAML_FRAME, caps, classify, clip, generalise};
use super::{Diagnosis, ErrorKind, Found, MAX_MESSAGE_CHARS, scan};
use crate::tap::{Point, Stream};

/// Every point of the stream in order: first what its file printed, then its own error.
pub(super) fn diagnose_stream(stream: &Stream, roots: &[String], found: &mut Found) {
    for p in &stream.points {
        if found.full() {
            return;
        }
        if !p.file_output.is_empty() {
            scan(&p.file_output, None, roots, found);
        }
        if let Some(d) = point(p, roots) {
            found.push(d);
        }
    }
}

/// The error of one failing point; `None` for a pass and for roll-ups, whose real errors are
/// reported elsewhere (by the subtests, or in the file's output).
fn point(p: &Point, roots: &[String]) -> Option<Diagnosis> {
    if p.ok {
        return None;
    }
    let error = p.get("error").or_else(|| p.get("message"))?;
    let first = error.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if first.is_empty() || first == "test failed" || p.get("failureType") == Some("subtestsFailed") {
        return None;
    }
    let name = p.get("name").filter(|n| !n.is_empty() && *n != "~");
    let message = match name {
        Some(n) if !first.starts_with(n) => format!("{n}: {first}"),
        _ => first.to_string(),
    };
    let kind = classify(name, p.get("code"), first);
    let frames: Vec<Loc> = p
        .get("stack")
        .unwrap_or("")
        .lines()
        .filter_map(|l| caps(&YAML_FRAME, l.trim()).as_ref().and_then(Loc::from_frame))
        .collect();
    let location = p.get("location").and_then(Loc::parse);
    let place = frames
        .iter()
        .chain(location.iter())
        .find_map(|loc| project_file(&loc.path, roots).map(|file| (file, loc.line, loc.column)));
    let library = missing_package(first).or_else(|| {
        if kind == ErrorKind::ModuleNotFound {
            return None;
        }
        frames.iter().find_map(|loc| library_from_path(&loc.path))
    });
    let (file, line, column) = match place {
        Some((file, line, column)) => (Some(file), line, column),
        None => (None, None, None),
    };
    Some(Diagnosis {
        kind,
        message: clip(&message, MAX_MESSAGE_CHARS),
        file,
        line,
        column,
        library,
        pattern: generalise(first, kind),
    })
}
