//! `wright notes`, `wright builds` and `wright stats`: what wright remembers, as aligned tables
//! for people, and as JSON (`--json`) or JSON Lines (export, events) for scripts.

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{Read, Write};
use wright_store::{BuildRecord, Note, NoteFilter, NoteStatus, RunStatus, Stats, Store, StoreError};
use wright_text::clip_line as clip;

/// `wright notes …`
#[derive(clap::Subcommand)]
pub enum NotesCommand {
    /// List learning notes, best first.
    List {
        /// Only notes with this status: candidate, active or deprecated.
        #[arg(long, value_name = "STATUS")]
        status: Option<String>,
        /// Show at most this many.
        #[arg(long, default_value_t = 50, value_name = "N")]
        limit: u32,
        /// Print the notes as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one note in full (id or unique prefix).
    Show {
        id: String,
        /// Print the note as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write notes as JSON Lines (one note per line) to FILE, or to stdout with "-".
    Export {
        #[arg(default_value = "-", value_name = "FILE")]
        file: String,
        /// Only notes with this status: candidate, active or deprecated.
        #[arg(long, value_name = "STATUS")]
        status: Option<String>,
    },
    /// Read notes from a JSON Lines file (or a JSON array), as written by export or by hand. A note
    /// with an existing id replaces it; nothing is written unless every note is valid.
    Import {
        #[arg(value_name = "FILE")]
        file: String,
    },
    /// Mark a note DEPRECATED so it is no longer used.
    Deprecate { id: String },
    /// Change a note's text or matching fields by hand.
    Edit {
        id: String,
        /// The lesson, as the model will read it.
        #[arg(long)]
        lesson: Option<String>,
        /// What the lesson is about.
        #[arg(long)]
        trigger: Option<String>,
        /// Tags, comma-separated ("" clears them).
        #[arg(long, value_delimiter = ',', value_name = "TAGS")]
        tags: Option<Vec<String>>,
        /// Libraries, comma-separated ("" clears them).
        #[arg(long, value_delimiter = ',', value_name = "LIBS")]
        libraries: Option<Vec<String>>,
        /// An error text the note answers; repeatable, replaces them all ("" clears them).
        #[arg(long = "error-pattern", value_name = "TEXT")]
        error_patterns: Option<Vec<String>>,
        /// candidate, active or deprecated.
        #[arg(long, value_name = "STATUS")]
        status: Option<String>,
    },
}

/// `wright builds …`
#[derive(clap::Subcommand)]
pub enum BuildsCommand {
    /// Recent builds, newest first.
    List {
        /// Show at most this many.
        #[arg(long, default_value_t = 20, value_name = "N")]
        limit: u32,
        /// Print the builds as JSON.
        #[arg(long)]
        json: bool,
    },
    /// One build: request, outcome, fix attempts, notes applied, tokens and cost, files, and the
    /// report of what was tried.
    Show {
        /// Build id or a unique prefix of it.
        id: String,
        /// Print the build as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The build's stored events as JSON Lines (the same lines `wright run --events jsonl`
    /// printed); --after SEQ resumes.
    Events {
        /// Build id or a unique prefix of it.
        id: String,
        /// Only events after this sequence number.
        #[arg(long, default_value_t = 0, value_name = "SEQ")]
        after: u64,
    },
    /// Share a build with its owner's classmates (they may follow it and copy it; docs/classes.md),
    /// or stop sharing it with --off.
    Share {
        /// Build id or a unique prefix of it.
        id: String,
        /// Stop sharing it.
        #[arg(long)]
        off: bool,
    },
    /// Rate a finished build 👍 (`up`) or 👎 (`down`): the notes it used gain or lose
    /// confidence, once per rating (docs/feedback.md).
    Rate {
        /// Build id or a unique prefix of it.
        id: String,
        /// `up` or `down`.
        value: crate::rate::Thumb,
        /// What was wrong or right.
        #[arg(long, value_name = "TEXT")]
        comment: Option<String>,
        /// Print the rating and the notes moved as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `wright stats`
#[derive(clap::Args)]
pub struct StatsArgs {
    /// Print the figures as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Run a `wright notes` subcommand.
pub async fn notes(cmd: NotesCommand, store: &dyn Store, out: &mut dyn Write) -> Result<()> {
    match cmd {
        NotesCommand::List { status, limit, json } => {
            let status = status.as_deref().map(parse_status).transpose()?;
            let filter = NoteFilter { status, limit: Some(limit.saturating_add(1)) };
            let mut notes = store.list_notes(&filter).await?;
            let more = notes.len() > limit as usize;
            notes.truncate(limit as usize);
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&notes)?)?;
            } else if notes.is_empty() {
                match status {
                    Some(s) => writeln!(out, "No {} notes.", s.as_str().to_lowercase())?,
                    None => writeln!(
                        out,
                        "No learning notes yet: wright writes one each time it fixes a build \
                         (or bring some in with `wright notes import FILE`)."
                    )?,
                }
            } else {
                let rows: Vec<Vec<String>> = notes
                    .iter()
                    .map(|n| {
                        vec![
                            n.id.clone(),
                            n.status.as_str().to_string(),
                            format!("{:.2}", n.confidence),
                            format!("{}/{}", n.help_count, n.fail_count),
                            clip(&n.trigger, 60),
                        ]
                    })
                    .collect();
                let headers =
                    [("ID", false), ("STATUS", false), ("SCORE", true), ("HELP/FAIL", true), ("TRIGGER", false)];
                write_table(out, &headers, &rows)?;
                if more {
                    writeln!(out, "… and more; see them with --limit {}", limit.saturating_mul(2).max(1))?;
                }
            }
        }
        NotesCommand::Show { id, json } => {
            let note = find_note(store, &id).await?;
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&note)?)?;
            } else {
                show_note(out, &note)?;
            }
        }
        NotesCommand::Export { file, status } => {
            let status = status.as_deref().map(parse_status).transpose()?;
            let notes = store.list_notes(&NoteFilter { status, limit: None }).await?;
            let mut text = String::new();
            for n in &notes {
                text.push_str(&serde_json::to_string(n)?);
                text.push('\n');
            }
            if file == "-" {
                out.write_all(text.as_bytes())?;
            } else {
                std::fs::write(&file, text).with_context(|| format!("could not write {file}"))?;
                writeln!(out, "wrote {} to {file}", count(notes.len(), "note", "notes"))?;
            }
        }
        NotesCommand::Import { file } => import(store, &file, out).await?,
        NotesCommand::Deprecate { id } => {
            let mut note = find_note(store, &id).await?;
            if note.status == NoteStatus::Deprecated {
                writeln!(out, "note {} was already deprecated", note.id)?;
                return Ok(());
            }
            let before = note.status;
            note.status = NoteStatus::Deprecated;
            note.updated_at = wright_store::now();
            store.put_note(&note).await?;
            writeln!(
                out,
                "note {} is deprecated; wright will no longer use it (undo: wright notes edit {} --status {})",
                note.id,
                note.id,
                before.as_str().to_lowercase()
            )?;
        }
        NotesCommand::Edit { id, lesson, trigger, tags, libraries, error_patterns, status } => {
            if lesson.is_none()
                && trigger.is_none()
                && tags.is_none()
                && libraries.is_none()
                && error_patterns.is_none()
                && status.is_none()
            {
                bail!("nothing to change; give --lesson, --trigger, --tags, --libraries, --error-pattern or --status");
            }
            let status = status.as_deref().map(parse_status).transpose()?;
            let mut note = find_note(store, &id).await?;
            if let Some(lesson) = lesson {
                note.lesson = not_empty(&lesson, "lesson")?;
            }
            if let Some(trigger) = trigger {
                note.trigger = not_empty(&trigger, "trigger")?;
            }
            if let Some(tags) = tags {
                note.tags = clean_list(tags);
            }
            if let Some(libraries) = libraries {
                note.libraries = clean_list(libraries);
            }
            if let Some(patterns) = error_patterns {
                note.error_patterns = clean_list(patterns);
            }
            if let Some(status) = status {
                note.status = status;
            }
            note.updated_at = wright_store::now();
            store.put_note(&note).await?;
            writeln!(out, "updated note {} ({})", note.id, note.status.as_str())?;
            let keys = note.keys();
            if keys.is_empty() {
                writeln!(out, "it has no tags, libraries or error patterns, so retrieval will not find it")?;
            } else {
                writeln!(out, "found by: {}", keys.join(", "))?;
            }
        }
    }
    Ok(())
}

/// Run a `wright builds` subcommand.
/// `wright builds …`: `artifacts` says where a build's folder is on this host (the store keeps
/// it relative to the artifacts' root).
pub async fn builds(
    cmd: BuildsCommand,
    store: &dyn Store,
    artifacts: &wright_engine::LocalArtifacts,
    out: &mut dyn Write,
) -> Result<()> {
    match cmd {
        BuildsCommand::Rate { id, value, comment, json } => {
            let build = find_build(store, &id).await?;
            crate::rate::rate(store, &build, value, comment.as_deref(), json, out).await?;
        }
        BuildsCommand::Share { id, off } => {
            let build = find_build(store, &id).await?;
            if build.owner.is_none() {
                bail!("build {} was run here, not by a user of `wright serve`; only theirs are shared", build.start.id);
            }
            store.set_shared(&build.start.id, !off).await?;
            let done = if off { "is no longer shared" } else { "is shared with its owner's classmates" };
            writeln!(out, "Build {} {done}.", build.start.id)?;
        }
        BuildsCommand::List { limit, json } => {
            let mut builds = store.list_builds(limit.saturating_add(1)).await?;
            let more = builds.len() > limit as usize;
            builds.truncate(limit as usize);
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&builds)?)?;
            } else if builds.is_empty() {
                writeln!(out, "No builds yet; start one with `wright run \"a counter app\"`.")?;
            } else {
                let rows: Vec<Vec<String>> = builds
                    .iter()
                    .map(|b| {
                        vec![
                            b.start.id.to_string(),
                            b.status.as_str().to_string(),
                            b.shown_template().to_string(),
                            b.fix_attempts.to_string(),
                            b.duration_ms.map_or_else(|| "-".to_string(), duration),
                            cost(b.tokens.cost_usd),
                            clip(&b.start.prompt, 50),
                        ]
                    })
                    .collect();
                let headers = [
                    ("ID", false),
                    ("STATUS", false),
                    ("TEMPLATE", false),
                    ("FIXES", true),
                    ("DURATION", true),
                    ("COST", true),
                    ("PROMPT", false),
                ];
                write_table(out, &headers, &rows)?;
                if more {
                    writeln!(out, "… and older ones; see them with --limit {}", limit.saturating_mul(2).max(1))?;
                }
            }
        }
        BuildsCommand::Show { id, json } => {
            let mut build = find_build(store, &id).await?;
            // Where its folder is on this host.
            let folder = artifacts.resolve(std::path::Path::new(&build.start.workspace));
            build.start.workspace = folder.display().to_string();
            let attempts = store.attempts(&build.start.id).await?;
            let mut note_ids = store.note_uses(&build.start.id).await?;
            for id in attempts.iter().flat_map(|a| &a.notes_applied) {
                if !note_ids.contains(id) {
                    note_ids.push(id.clone());
                }
            }
            let mut notes = Vec::new();
            for id in &note_ids {
                match store.note(id).await {
                    Ok(n) => notes.push(n),
                    Err(StoreError::NotFound(_)) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            // The browser check's last screenshot, if it took one (the final page).
            let screenshot = store.events(&build.start.id, 0).await?.into_iter().rev().find_map(|e| match e.kind {
                wright_events::EventKind::BrowserCheck { screenshot, .. } => screenshot,
                _ => None,
            });
            if json {
                let usage = store.usage(&build.start.id).await?;
                let all = serde_json::json!({
                    "build": build,
                    "attempts": attempts,
                    "notes_applied": note_ids,
                    "notes": notes,
                    "usage": usage,
                    "screenshot": screenshot,
                });
                writeln!(out, "{}", serde_json::to_string_pretty(&all)?)?;
            } else {
                show_build(out, &build, &attempts, &note_ids, &notes)?;
                if let Some(path) = screenshot {
                    field(out, "screenshot", &path)?;
                }
            }
        }
        BuildsCommand::Events { id, after } => {
            let build = find_build(store, &id).await?;
            for e in store.events(&build.start.id, after).await? {
                writeln!(out, "{}", e.to_json_line())?;
            }
        }
    }
    Ok(())
}

/// Run `wright stats`.
pub async fn stats(args: StatsArgs, store: &dyn Store, out: &mut dyn Write) -> Result<()> {
    let s = store.stats().await?;
    let (spend, seeds) = crate::spend::figures(store).await?;
    if args.json {
        // The statistics' fields as they always were, with this month's spend and the seeds'
        // metrics beside them.
        let all = serde_json::json!({"spend": spend, "seeds": seeds});
        let mut doc = serde_json::to_value(&s)?;
        if let (Some(doc), Some(all)) = (doc.as_object_mut(), all.as_object()) {
            doc.extend(all.clone());
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    if s.builds == 0 {
        writeln!(out, "No finished builds yet; run `wright run \"a counter app\"` and the numbers will show up here.")?;
        if s.notes_total > 0 {
            write_notes_line(out, &s)?;
        }
        if !spend.users.is_empty() {
            crate::spend::write_text(out, &spend, &seeds)?;
        }
        return Ok(());
    }
    writeln!(
        out,
        "{:<15}{} finished · {} published ({}) · {} on the first try ({})",
        "Builds",
        s.builds,
        s.published,
        pct(s.published, s.builds),
        s.first_try,
        pct(s.first_try, s.builds)
    )?;
    writeln!(out)?;
    let rows: Vec<Vec<String>> = s
        .per_template
        .iter()
        .map(|t| {
            vec![
                t.template.clone(),
                t.builds.to_string(),
                format!("{} ({})", t.published, pct(t.published, t.builds)),
                format!("{} ({})", t.first_try, pct(t.first_try, t.builds)),
            ]
        })
        .collect();
    write_table(out, &[("TEMPLATE", false), ("BUILDS", true), ("PUBLISHED", true), ("FIRST TRY", true)], &rows)?;
    writeln!(out)?;
    writeln!(out, "Fix attempts per finished build")?;
    let top = s.fix_histogram.iter().copied().max().unwrap_or(0);
    let label_width = s.fix_histogram.len().saturating_sub(1).to_string().len();
    for (fixes, &n) in s.fix_histogram.iter().enumerate() {
        writeln!(out, "  {fixes:>label_width$}  {:<20}  {n}", bar(n, top, 20))?;
    }
    writeln!(out)?;
    write_notes_line(out, &s)?;
    writeln!(
        out,
        "{:<15}{} ({} of {} finished builds used at least one note)",
        "Note hit rate",
        pct(s.builds_with_notes, s.builds),
        s.builds_with_notes,
        s.builds
    )?;
    let without = s.builds.saturating_sub(s.builds_with_notes);
    writeln!(
        out,
        "{:<15}with notes {} of {} published ({}) · without notes {} of {} ({})",
        "Success",
        s.published_with_notes,
        s.builds_with_notes,
        pct(s.published_with_notes, s.builds_with_notes),
        s.published_without_notes,
        without,
        pct(s.published_without_notes, without)
    )?;
    writeln!(
        out,
        "{:<15}{} in ({} cached) · {} out · cost {}",
        "Tokens",
        thousands(s.tokens.input_tokens),
        thousands(s.tokens.cached_tokens),
        thousands(s.tokens.output_tokens),
        cost(s.tokens.cost_usd)
    )?;
    if let (Some(p50), Some(p95)) = (s.duration_p50_ms, s.duration_p95_ms) {
        writeln!(out, "{:<15}p50 {} · p95 {}", "Duration", duration(p50), duration(p95))?;
    }
    crate::spend::write_text(out, &spend, &seeds)?;
    Ok(())
}

fn write_notes_line(out: &mut dyn Write, s: &Stats) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<15}{}: {} active · {} candidate · {} deprecated",
        "Notes", s.notes_total, s.notes_active, s.notes_candidate, s.notes_deprecated
    )
}

async fn import(store: &dyn Store, file: &str, out: &mut dyn Write) -> Result<()> {
    let text = if file == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).context("could not read notes from stdin")?;
        s
    } else {
        std::fs::read_to_string(file).with_context(|| format!("could not read {file}"))?
    };
    let notes = match parse_notes(&text) {
        Ok(notes) => notes,
        Err(problems) => {
            const SHOWN: usize = 20;
            let mut msg =
                format!("{file} has {}; nothing was imported:", count(problems.len(), "invalid note", "invalid notes"));
            for p in problems.iter().take(SHOWN) {
                msg.push_str("\n  ");
                msg.push_str(p);
            }
            if problems.len() > SHOWN {
                msg.push_str(&format!("\n  … and {} more", problems.len() - SHOWN));
            }
            bail!(msg);
        }
    };
    if notes.is_empty() {
        writeln!(out, "{file} holds no notes; nothing was imported")?;
        return Ok(());
    }
    let (mut added, mut replaced) = (0, 0);
    for note in &notes {
        match store.note(&note.id).await {
            Ok(_) => replaced += 1,
            Err(StoreError::NotFound(_)) => added += 1,
            Err(e) => return Err(e.into()),
        }
        store.put_note(note).await.with_context(|| format!("could not store note {}", note.id))?;
    }
    writeln!(out, "imported {} from {file} ({added} new, {replaced} replaced)", count(notes.len(), "note", "notes"))?;
    Ok(())
}

/// Notes from JSON Lines or a JSON array, or every problem found, each naming its line (item).
fn parse_notes(text: &str) -> std::result::Result<Vec<Note>, Vec<String>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // (position, where, value); problems are sorted by position before they are shown.
    let mut items: Vec<(usize, String, Value)> = Vec::new();
    let mut problems: Vec<(usize, String)> = Vec::new();
    if text.trim_start().starts_with('[') {
        match serde_json::from_str::<Vec<Value>>(text) {
            Ok(values) => {
                items = values.into_iter().enumerate().map(|(i, v)| (i, format!("item {}", i + 1), v)).collect();
            }
            Err(e) => return Err(vec![format!("not a valid JSON array: {e}")]),
        }
    } else {
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(line) {
                Ok(v) => items.push((i, format!("line {}", i + 1), v)),
                Err(e) => problems.push((i, format!("line {}: {}", i + 1, json_error(&e)))),
            }
        }
    }
    let mut notes = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    for (pos, at, value) in items {
        match note_from_json(value) {
            Ok(note) => {
                if let Some(first) = seen.get(&note.id) {
                    problems.push((pos, format!("{at}: note {} appears twice (first at {first})", note.id)));
                    continue;
                }
                seen.insert(note.id.clone(), at);
                notes.push(note);
            }
            Err(e) => problems.push((pos, format!("{at}: {e}"))),
        }
    }
    if problems.is_empty() {
        return Ok(notes);
    }
    problems.sort_by_key(|(pos, _)| *pos);
    Err(problems.into_iter().map(|(_, p)| p).collect())
}

/// The wrong-typed field of a note object, named, since serde's own message does not say which.
fn check_field_types(map: &serde_json::Map<String, Value>) -> std::result::Result<(), String> {
    const TEXT: &[&str] = &[
        "id",
        "trigger",
        "triggerType",
        "lesson",
        "sourceBuild",
        "sourceError",
        "sourceFix",
        "createdAt",
        "updatedAt",
    ];
    const LISTS: &[&str] = &["libraries", "errorPatterns", "tags"];
    for (key, v) in map {
        let (ok, expected) = match key.as_str() {
            k if TEXT.contains(&k) => (v.is_string(), "text"),
            k if LISTS.contains(&k) => (v.as_array().is_some_and(|a| a.iter().all(Value::is_string)), "a list of text"),
            "helpCount" | "failCount" => {
                (v.as_u64().is_some_and(|n| n <= u64::from(u32::MAX)), "a whole number, 0 or more")
            }
            "confidence" => (v.is_number(), "a number from 0 to 1"),
            _ => (true, ""),
        };
        if !ok {
            return Err(format!("`{key}` must be {expected}, not {v}"));
        }
    }
    Ok(())
}

/// A note from one JSON object, filling in what export writes but a person may leave out.
fn note_from_json(value: Value) -> std::result::Result<Note, String> {
    let Value::Object(mut map) = value else {
        return Err("expected a JSON object (one note)".into());
    };
    map.retain(|_, v| !v.is_null());
    check_field_types(&map)?;
    let needs_id = match map.get("id") {
        None => true,
        Some(Value::String(s)) => s.trim().is_empty(),
        Some(_) => false,
    };
    if needs_id {
        map.insert("id".into(), Value::String(wright_store::new_id("n")));
    }
    match map.get("status") {
        None => {}
        Some(Value::String(s)) => {
            let status = NoteStatus::parse(s.trim())
                .ok_or_else(|| format!("unknown status `{s}`; use candidate, active or deprecated"))?;
            map.insert("status".into(), Value::String(status.as_str().into()));
        }
        Some(v) => return Err(format!("`status` must be text, not {v}")),
    }
    map.entry("triggerType").or_insert_with(|| Value::String("pattern".into()));
    let has_confidence = map.contains_key("confidence");
    let mut note: Note = serde_json::from_value(Value::Object(map)).map_err(|e| e.to_string())?;
    note.id = note.id.trim().to_string();
    if note.trigger.trim().is_empty() {
        return Err("the trigger is empty".into());
    }
    if note.lesson.trim().is_empty() {
        return Err("the lesson is empty".into());
    }
    let score = wright_store::note::score(note.help_count, note.fail_count);
    if !has_confidence {
        note.confidence = score;
    } else if !(0.0..=1.0).contains(&note.confidence) {
        return Err(format!("confidence {} is outside 0..1", note.confidence));
    } else if (note.confidence - score).abs() < 1e-12 {
        // JSON text may lose the last bit of a float; keep the score exact.
        note.confidence = score;
    }
    if note.created_at.is_empty() {
        note.created_at = wright_store::now();
    }
    if note.updated_at.is_empty() {
        note.updated_at = note.created_at.clone();
    }
    Ok(note)
}

/// A serde_json syntax error without its "at line 1" (each JSON Lines line is parsed alone).
fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())) {
        Some(msg) => format!("{msg} (column {})", e.column()),
        None => text,
    }
}

fn parse_status(s: &str) -> Result<NoteStatus> {
    NoteStatus::parse(s.trim()).ok_or_else(|| anyhow!("unknown note status `{s}`; use candidate, active or deprecated"))
}

async fn find_note(store: &dyn Store, id: &str) -> Result<Note> {
    let id = id.trim();
    if id.is_empty() {
        bail!("give a note id; see `wright notes list`");
    }
    store.resolve_note(id).await.map_err(|e| match e {
        StoreError::NotFound(_) => anyhow!("no note matches `{id}`; see `wright notes list`"),
        e => e.into(),
    })
}

async fn find_build(store: &dyn Store, id: &str) -> Result<BuildRecord> {
    let id = id.trim();
    if id.is_empty() {
        bail!("give a build id; see `wright builds list`");
    }
    store.resolve_build(id).await.map_err(|e| match e {
        StoreError::NotFound(_) => anyhow!("no build matches `{id}`; see `wright builds list`"),
        e => e.into(),
    })
}

fn not_empty(text: &str, what: &str) -> Result<String> {
    let t = text.trim();
    if t.is_empty() {
        bail!("the {what} cannot be empty");
    }
    Ok(t.to_string())
}

/// Trimmed, without empty items or repeats, in the order given.
fn clean_list(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let item = item.trim();
        if !item.is_empty() && !out.iter().any(|o| o == item) {
            out.push(item.to_string());
        }
    }
    out
}

const LABEL: usize = 15;

/// `label  value`, continuation lines of a long value indented under the first.
fn field(out: &mut dyn Write, label: &str, value: &str) -> std::io::Result<()> {
    let mut lines = value.trim_end().lines();
    writeln!(out, "{label:<LABEL$}{}", lines.next().unwrap_or(""))?;
    for line in lines {
        writeln!(out, "{:LABEL$}{line}", "")?;
    }
    Ok(())
}

fn show_note(out: &mut dyn Write, n: &Note) -> std::io::Result<()> {
    writeln!(
        out,
        "note {} · {} · score {:.2} (helped {}, failed {})",
        n.id,
        n.status.as_str(),
        n.confidence,
        n.help_count,
        n.fail_count
    )?;
    field(out, "trigger", &format!("{} ({})", n.trigger, n.trigger_type))?;
    field(out, "lesson", &n.lesson)?;
    for (label, list) in [("libraries", &n.libraries), ("tags", &n.tags)] {
        if !list.is_empty() {
            field(out, label, &list.join(", "))?;
        }
    }
    if !n.error_patterns.is_empty() {
        field(out, "error patterns", &n.error_patterns.join("\n"))?;
    }
    let keys = n.keys();
    let found =
        if keys.is_empty() { "nothing (no tags, libraries or error patterns)".to_string() } else { keys.join(", ") };
    field(out, "found by", &found)?;
    for (label, value) in [("from build", &n.source_build), ("error", &n.source_error), ("fix", &n.source_fix)] {
        if let Some(v) = value.as_deref().filter(|v| !v.trim().is_empty()) {
            field(out, label, v)?;
        }
    }
    field(out, "created", &format!("{} · updated {}", when(&n.created_at), when(&n.updated_at)))
}

fn show_build(
    out: &mut dyn Write,
    b: &BuildRecord,
    attempts: &[wright_store::Attempt],
    note_ids: &[String],
    notes: &[Note],
) -> std::io::Result<()> {
    writeln!(out, "build {} · {}", b.start.id, b.status.as_str())?;
    field(out, "request", &b.start.prompt)?;
    let fixes = count(b.fix_attempts as usize, "fix attempt", "fix attempts");
    let outcome = match b.status {
        RunStatus::Published if b.fix_attempts == 0 => "published on the first try".to_string(),
        RunStatus::Published => format!("published after {fixes}"),
        RunStatus::Failed => match &b.end_reason {
            Some(reason) => format!("failed ({}) after {fixes}", reason.as_str().replace('_', " ")),
            None => format!("failed after {fixes}"),
        },
        RunStatus::Running => "running, or stopped before it could finish".to_string(),
        RunStatus::Queued => "queued, waiting for a worker of `wright serve`".to_string(),
    };
    field(out, "outcome", &outcome)?;
    field(out, "template", &format!("{} · language {}", b.shown_template(), b.start.lang))?;
    field(out, "model", &format!("{} {}", b.start.provider, b.start.model))?;
    let took = b.duration_ms.map(|ms| format!(" · took {}", duration(ms))).unwrap_or_default();
    field(out, "started", &format!("{}{took}", when(&b.start.started_at)))?;
    if let Some(parent) = &b.start.parent_id {
        field(out, "continues", parent)?;
    }
    field(out, "workspace", &b.start.workspace)?;
    let t = &b.tokens;
    field(
        out,
        "tokens",
        &format!(
            "{} in ({} cached) · {} out · cost {} · {}",
            thousands(t.input_tokens),
            thousands(t.cached_tokens),
            thousands(t.output_tokens),
            cost(t.cost_usd),
            count(b.turns as usize, "turn", "turns")
        ),
    )?;
    if note_ids.is_empty() {
        field(out, "notes applied", "none")?;
    } else {
        writeln!(out, "notes applied ({})", note_ids.len())?;
        for id in note_ids {
            match notes.iter().find(|n| &n.id == id) {
                Some(n) => {
                    writeln!(out, "  {}  {}  {:.2}  {}", n.id, n.status.as_str(), n.confidence, clip(&n.trigger, 60))?
                }
                None => writeln!(out, "  {id}  (no longer stored)")?,
            }
        }
    }
    for a in attempts {
        writeln!(
            out,
            "attempt {}: {} after {} · {} · {}",
            a.id,
            if a.success { "succeeded" } else { "failed" },
            count(a.iterations as usize, "fix attempt", "fix attempts"),
            duration(a.duration_ms),
            a.model
        )?;
        for e in &a.errors {
            let first = e.error.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            writeln!(
                out,
                "  {} {}: {}{}",
                if e.iteration == 0 { "first check".to_string() } else { format!("fix {}", e.iteration) },
                e.kind,
                clip(first, 100),
                if e.fixed { " (fixed)" } else { "" }
            )?;
        }
    }
    if !b.files.is_empty() {
        writeln!(out, "files ({})", b.files.len())?;
        for f in &b.files {
            writeln!(out, "  {f}")?;
        }
    }
    if let Some(report) = b.report.as_deref().filter(|r| !r.trim().is_empty()) {
        writeln!(out, "report")?;
        for line in report.trim_end().lines() {
            writeln!(out, "  {line}")?;
        }
    }
    Ok(())
}

/// Columns padded to their widest cell (`true` = right-aligned); the last left-aligned column
/// is not padded, so free text can go there.
fn write_table(out: &mut dyn Write, headers: &[(&str, bool)], rows: &[Vec<String>]) -> std::io::Result<()> {
    let mut widths: Vec<usize> = headers.iter().map(|(h, _)| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut line = |cells: Vec<&str>| -> std::io::Result<()> {
        let mut s = String::new();
        for (i, ((cell, width), (_, right))) in cells.iter().zip(&widths).zip(headers).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = " ".repeat(width.saturating_sub(cell.chars().count()));
            if *right {
                s.push_str(&pad);
                s.push_str(cell);
            } else {
                s.push_str(cell);
                if i + 1 < headers.len() {
                    s.push_str(&pad);
                }
            }
        }
        writeln!(out, "{}", s.trim_end())
    };
    line(headers.iter().map(|(h, _)| *h).collect())?;
    for row in rows {
        line(row.iter().map(String::as_str).collect())?;
    }
    Ok(())
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn pct(n: u64, of: u64) -> String {
    if of == 0 { "-".to_string() } else { format!("{:.0}%", n as f64 * 100.0 / of as f64) }
}

fn bar(n: u64, top: u64, width: u64) -> String {
    if n == 0 || top == 0 {
        return String::new();
    }
    let len = (n * width).div_ceil(top).clamp(1, width);
    "█".repeat(len as usize)
}

fn duration(ms: u64) -> String {
    if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else if ms < 3_600_000 {
        let s = ms / 1000;
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        let m = ms / 60_000;
        format!("{}h {:02}m", m / 60, m % 60)
    }
}

fn cost(usd: f64) -> String {
    format!("${usd:.4}")
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A stored RFC 3339 time as `2026-11-21 15:35:01 UTC`; anything else as it is.
fn when(ts: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(ts) {
        Ok(t) => t.with_timezone(&chrono::Utc).format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        Err(_) if ts.is_empty() => "-".to_string(),
        Err(_) => ts.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};
    use std::sync::Arc;
    use wright_events::{EventKind, Phase};
    use wright_store::{Attempt, AttemptError, BuildFinish, Draft, NewBuild, RunEnd, RunLog, SqliteStore, Tokens};

    #[derive(Parser)]
    struct NotesCli {
        #[command(subcommand)]
        cmd: NotesCommand,
    }

    #[derive(Parser)]
    struct BuildsCli {
        #[command(subcommand)]
        cmd: BuildsCommand,
        #[command(flatten)]
        stats: StatsArgs,
    }

    fn note(id: &str, help: u32, fail: u32, status: NoteStatus) -> Note {
        Note {
            libraries: vec!["express".into()],
            error_patterns: vec!["Expected values to be strictly equal".into()],
            tags: vec!["countdown timer".into()],
            help_count: help,
            fail_count: fail,
            confidence: wright_store::note::score(help, fail),
            status,
            source_build: Some("b-1".into()),
            source_error: Some("1 test failed".into()),
            ..Note::new(id, format!("trigger of {id}"), format!("lesson of {id}\nwith a second line"))
        }
    }

    async fn memory() -> SqliteStore {
        SqliteStore::memory().await.unwrap()
    }

    async fn file_store(dir: &tempfile::TempDir) -> Arc<dyn Store> {
        wright_store::open(&format!("sqlite://{}", dir.path().join("wright.db").display())).await.unwrap()
    }

    async fn seed_notes(store: &dyn Store) {
        store.put_note(&note("n-aaa111", 3, 0, NoteStatus::Active)).await.unwrap();
        store.put_note(&note("n-bbb222", 1, 3, NoteStatus::Candidate)).await.unwrap();
        store.put_note(&note("n-ccc333", 0, 6, NoteStatus::Deprecated)).await.unwrap();
    }

    async fn run_notes(store: &dyn Store, cmd: NotesCommand) -> Result<String> {
        let mut out = Vec::new();
        notes(cmd, store, &mut out).await?;
        Ok(String::from_utf8(out)?)
    }

    async fn run_builds(store: &dyn Store, cmd: BuildsCommand) -> Result<String> {
        let mut out = Vec::new();
        let here = wright_engine::LocalArtifacts::new("/data/wright");
        builds(cmd, store, &here, &mut out).await?;
        Ok(String::from_utf8(out)?)
    }

    async fn run_stats(store: &dyn Store, json: bool) -> String {
        let mut out = Vec::new();
        stats(StatsArgs { json }, store, &mut out).await.unwrap();
        String::from_utf8(out).unwrap()
    }

    async fn all_notes(store: &dyn Store) -> Vec<Note> {
        store.list_notes(&NoteFilter::default()).await.unwrap()
    }

    fn export(status: Option<&str>) -> NotesCommand {
        NotesCommand::Export { file: "-".into(), status: status.map(str::to_string) }
    }

    /// The fields of `notes edit`, all unset by default.
    #[derive(Default)]
    struct EditArgs {
        lesson: Option<String>,
        trigger: Option<String>,
        tags: Option<Vec<String>>,
        libraries: Option<Vec<String>>,
        error_patterns: Option<Vec<String>>,
        status: Option<String>,
    }

    fn edit(id: &str, a: EditArgs) -> NotesCommand {
        NotesCommand::Edit {
            id: id.into(),
            lesson: a.lesson,
            trigger: a.trigger,
            tags: a.tags,
            libraries: a.libraries,
            error_patterns: a.error_patterns,
            status: a.status,
        }
    }

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_command_lines_parse() {
        NotesCli::command().debug_assert();
        BuildsCli::command().debug_assert();
        let cli = NotesCli::try_parse_from([
            "notes",
            "edit",
            "n-1",
            "--tags",
            "modal, dialog",
            "--error-pattern",
            "a, b",
            "--error-pattern",
            "c",
        ])
        .unwrap();
        let NotesCommand::Edit { tags, error_patterns, libraries, .. } = cli.cmd else { panic!("not edit") };
        assert_eq!(tags.unwrap(), ["modal", " dialog"]);
        assert_eq!(error_patterns.unwrap(), ["a, b", "c"], "error patterns keep their commas");
        assert!(libraries.is_none());
        let cli = NotesCli::try_parse_from(["notes", "export"]).unwrap();
        assert!(matches!(cli.cmd, NotesCommand::Export { file, status: None } if file == "-"));
        let cli = NotesCli::try_parse_from(["notes", "list"]).unwrap();
        assert!(matches!(cli.cmd, NotesCommand::List { status: None, limit: 50, json: false }));
        let cli = BuildsCli::try_parse_from(["builds", "events", "b1", "--after", "7"]).unwrap();
        assert!(matches!(cli.cmd, BuildsCommand::Events { after: 7, .. }));
    }

    #[tokio::test]
    async fn export_then_import_round_trips_into_a_fresh_store() {
        let a = memory().await;
        seed_notes(&a).await;
        let lines = run_notes(&a, export(None)).await.unwrap();
        assert_eq!(lines.lines().count(), 3);
        for line in lines.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            assert!(v.get("helpCount").is_some() && v.get("triggerType").is_some(), "camelCase fields: {line}");
        }

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.jsonl");
        let path = path.to_str().unwrap();
        let said = run_notes(&a, NotesCommand::Export { file: path.into(), status: None }).await.unwrap();
        assert_eq!(said.trim(), format!("wrote 3 notes to {path}"));
        assert_eq!(std::fs::read_to_string(path).unwrap(), lines);

        // Into a fresh file-backed store: every field comes back equal.
        let b = file_store(&dir).await;
        let said = run_notes(&*b, NotesCommand::Import { file: path.into() }).await.unwrap();
        assert_eq!(said.trim(), format!("imported 3 notes from {path} (3 new, 0 replaced)"));
        assert_eq!(all_notes(&*b).await, all_notes(&a).await);
        assert_eq!(run_notes(&*b, export(None)).await.unwrap(), lines);

        // Into the store it came from: the same ids are replaced, nothing changes.
        let said = run_notes(&a, NotesCommand::Import { file: path.into() }).await.unwrap();
        assert!(said.contains("(0 new, 3 replaced)"), "{said}");
        assert_eq!(all_notes(&a).await, all_notes(&*b).await);

        // A status filter exports only those notes.
        let active = run_notes(&a, export(Some("Active"))).await.unwrap();
        assert_eq!(active.lines().count(), 1);
        assert!(active.contains("n-aaa111"));
    }

    #[tokio::test]
    async fn a_bad_line_stops_the_whole_import_and_is_named() {
        let store = memory().await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.jsonl");
        let good = serde_json::to_string(&note("n-good", 0, 0, NoteStatus::Candidate)).unwrap();
        let text = [
            good.as_str(),
            "",
            r#"{"trigger": "x", "lesson": "#,
            r#"{"trigger": "modals"}"#,
            r#"{"trigger":"t","lesson":"l","status":"shiny"}"#,
            r#"{"trigger":"t","lesson":"l","tags":"modal"}"#,
            r#"{"trigger":7,"lesson":"l"}"#,
            "[1]",
        ]
        .join("\n");
        std::fs::write(&path, text).unwrap();
        let err = run_notes(&store, NotesCommand::Import { file: path.display().to_string() }).await.unwrap_err();
        let msg = format!("{err:#}");
        let lines: Vec<&str> = msg.lines().collect();
        assert!(lines[0].ends_with("has 6 invalid notes; nothing was imported:"), "{msg}");
        assert!(lines[1].starts_with("  line 3: EOF while parsing a value (column "), "{msg}");
        assert_eq!(lines[2], "  line 4: missing field `lesson`", "{msg}");
        assert_eq!(lines[3], "  line 5: unknown status `shiny`; use candidate, active or deprecated", "{msg}");
        assert_eq!(lines[4], "  line 6: `tags` must be a list of text, not \"modal\"", "{msg}");
        assert_eq!(lines[5], "  line 7: `trigger` must be text, not 7", "{msg}");
        assert_eq!(lines[6], "  line 8: expected a JSON object (one note)", "{msg}");
        assert!(!msg.contains("line 1"), "{msg}");
        assert!(all_notes(&store).await.is_empty(), "nothing may be written");

        let missing = run_notes(&store, NotesCommand::Import { file: "/nonexistent/notes.jsonl".into() }).await;
        assert!(format!("{:#}", missing.unwrap_err()).contains("could not read /nonexistent/notes.jsonl"));
    }

    #[tokio::test]
    async fn hand_written_notes_get_defaults_and_arrays_work() {
        let store = memory().await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.json");
        std::fs::write(
            &path,
            r#"[
  {"trigger": "modal dialogs", "lesson": "Close on Escape.", "tags": ["modal"], "sourceFix": null},
  {"id": "n-mine", "trigger": "express", "lesson": "Use express.json().", "status": "active",
   "helpCount": 3, "libraries": ["express"]}
]"#,
        )
        .unwrap();
        let said = run_notes(&store, NotesCommand::Import { file: path.display().to_string() }).await.unwrap();
        assert!(said.contains("imported 2 notes"), "{said}");
        let notes = all_notes(&store).await;
        let mine = notes.iter().find(|n| n.id == "n-mine").unwrap();
        assert_eq!((mine.status, mine.help_count, mine.fail_count, mine.confidence), (NoteStatus::Active, 3, 0, 0.8));
        let other = notes.iter().find(|n| n.id != "n-mine").unwrap();
        assert!(other.id.starts_with("n-") && other.id.len() > 4, "{}", other.id);
        assert_eq!((other.status, other.help_count, other.fail_count), (NoteStatus::Candidate, 0, 0));
        assert_eq!((other.confidence, other.trigger_type.as_str()), (0.5, "pattern"));
        assert!(!other.created_at.is_empty() && other.updated_at == other.created_at);
        let hits = store.find_notes(&keys(&["tag:modal"]), 5).await.unwrap();
        assert_eq!(hits.len(), 1);

        // The same id twice in one file is a mistake, not a silent overwrite.
        std::fs::write(
            &path,
            "{\"id\":\"x\",\"trigger\":\"t\",\"lesson\":\"l\"}\n{\"id\":\"x\",\"trigger\":\"t\",\"lesson\":\"m\"}\n",
        )
        .unwrap();
        let err = run_notes(&store, NotesCommand::Import { file: path.display().to_string() }).await.unwrap_err();
        assert!(err.to_string().contains("line 2: note x appears twice (first at line 1)"), "{err}");
    }

    #[tokio::test]
    async fn edit_changes_what_retrieval_finds() {
        let dir = tempfile::tempdir().unwrap();
        let store = file_store(&dir).await;
        let store = &*store;
        seed_notes(store).await;
        assert_eq!(store.find_notes(&keys(&["tag:timer"]), 5).await.unwrap().len(), 2);
        let before = store.note("n-aaa111").await.unwrap();

        let said = run_notes(
            store,
            edit(
                "n-aaa",
                EditArgs {
                    tags: Some(vec!["Modal".into(), " dialog ".into(), "".into()]),
                    libraries: Some(vec!["React".into()]),
                    error_patterns: Some(vec!["Cannot read properties of undefined".into()]),
                    lesson: Some("  Check for undefined first.  ".into()),
                    ..Default::default()
                },
            ),
        )
        .await
        .unwrap();
        assert!(said.contains("updated note n-aaa111 (ACTIVE)"), "{said}");
        assert!(said.contains("lib:react") && said.contains("tag:modal"), "{said}");

        let after = store.note("n-aaa111").await.unwrap();
        assert_eq!(after.tags, ["Modal", "dialog"]);
        assert_eq!(after.lesson, "Check for undefined first.");
        assert_eq!((after.confidence, after.help_count, after.status), (before.confidence, 3, NoteStatus::Active));
        assert_eq!(after.trigger, before.trigger);
        assert!(after.updated_at >= before.updated_at);
        let ids = |hits: Vec<wright_store::NoteHit>| hits.into_iter().map(|h| h.note.id).collect::<Vec<_>>();
        assert_eq!(ids(store.find_notes(&keys(&["tag:timer"]), 5).await.unwrap()), ["n-bbb222"]);
        assert_eq!(ids(store.find_notes(&keys(&["tag:modal"]), 5).await.unwrap()), ["n-aaa111"]);
        assert_eq!(ids(store.find_notes(&keys(&["lib:react"]), 5).await.unwrap()), ["n-aaa111"]);
        assert_eq!(ids(store.find_notes(&keys(&["err:undefined"]), 5).await.unwrap()), ["n-aaa111"]);
        assert!(store.find_notes(&keys(&["lib:express"]), 5).await.unwrap().iter().all(|h| h.note.id != "n-aaa111"));

        // Status by hand, case-insensitively; a deprecated note leaves retrieval.
        run_notes(store, edit("n-aaa111", EditArgs { status: Some("deprecated".into()), ..Default::default() }))
            .await
            .unwrap();
        assert!(store.find_notes(&keys(&["tag:modal"]), 5).await.unwrap().is_empty());

        let bad =
            run_notes(store, edit("n-aaa111", EditArgs { status: Some("great".into()), ..Default::default() })).await;
        assert!(bad.unwrap_err().to_string().contains("unknown note status `great`"));
        let empty =
            run_notes(store, edit("n-aaa111", EditArgs { lesson: Some("  ".into()), ..Default::default() })).await;
        assert_eq!(empty.unwrap_err().to_string(), "the lesson cannot be empty");
        let nothing = run_notes(store, edit("n-aaa111", EditArgs::default())).await;
        assert!(nothing.unwrap_err().to_string().starts_with("nothing to change"));
        let ambiguous =
            run_notes(store, edit("n-", EditArgs { trigger: Some("t".into()), ..Default::default() })).await;
        assert!(ambiguous.unwrap_err().to_string().contains("matches more than one note"));
    }

    #[tokio::test]
    async fn deprecate_takes_a_note_out_of_use() {
        let store = memory().await;
        seed_notes(&store).await;
        let said = run_notes(&store, NotesCommand::Deprecate { id: "n-bbb".into() }).await.unwrap();
        assert!(said.contains("note n-bbb222 is deprecated"), "{said}");
        assert!(said.contains("--status candidate"), "{said}");
        let n = store.note("n-bbb222").await.unwrap();
        assert_eq!((n.status, n.help_count, n.fail_count), (NoteStatus::Deprecated, 1, 3));
        assert!(store.find_notes(&keys(&["tag:timer"]), 5).await.unwrap().iter().all(|h| h.note.id == "n-aaa111"));
        let again = run_notes(&store, NotesCommand::Deprecate { id: "n-bbb222".into() }).await.unwrap();
        assert!(again.contains("already deprecated"));
        let err = run_notes(&store, NotesCommand::Deprecate { id: "zzz".into() }).await.unwrap_err();
        assert_eq!(err.to_string(), "no note matches `zzz`; see `wright notes list`");
    }

    #[tokio::test]
    async fn notes_list_and_show() {
        let store = memory().await;
        let empty = run_notes(&store, NotesCommand::List { status: None, limit: 50, json: false }).await.unwrap();
        assert!(empty.starts_with("No learning notes yet"), "{empty}");
        seed_notes(&store).await;

        let table = run_notes(&store, NotesCommand::List { status: None, limit: 50, json: false }).await.unwrap();
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("ID") && lines[0].contains("HELP/FAIL") && lines[0].ends_with("TRIGGER"));
        assert!(lines[1].starts_with("n-aaa111  ACTIVE") && lines[1].contains("0.80") && lines[1].contains("3/0"));
        assert_eq!(lines.len(), 4, "best first, all three: {table}");
        let col = lines[0].find("TRIGGER").unwrap();
        assert!(lines[1..].iter().all(|l| l[col..].starts_with("trigger of")), "aligned:\n{table}");

        let few = run_notes(&store, NotesCommand::List { status: None, limit: 1, json: false }).await.unwrap();
        assert!(few.contains("n-aaa111") && few.contains("… and more; see them with --limit 2"), "{few}");
        let deprecated =
            run_notes(&store, NotesCommand::List { status: Some("DEPRECATED".into()), limit: 50, json: true })
                .await
                .unwrap();
        let parsed: Vec<Note> = serde_json::from_str(&deprecated).unwrap();
        assert_eq!(parsed.len(), 1);
        assert_eq!(parsed[0].id, "n-ccc333");
        let bad = run_notes(&store, NotesCommand::List { status: Some("old".into()), limit: 5, json: false }).await;
        assert!(bad.unwrap_err().to_string().contains("use candidate, active or deprecated"));

        let shown = run_notes(&store, NotesCommand::Show { id: "n-bbb".into(), json: false }).await.unwrap();
        assert!(shown.starts_with("note n-bbb222 · CANDIDATE · score 0.33 (helped 1, failed 3)"), "{shown}");
        assert!(shown.contains("lesson of n-bbb222\n               with a second line"), "{shown}");
        assert!(shown.contains("found by") && shown.contains("lib:express"), "{shown}");
        assert!(shown.contains("from build     b-1"), "{shown}");
        let json = run_notes(&store, NotesCommand::Show { id: "n-bbb222".into(), json: true }).await.unwrap();
        assert_eq!(serde_json::from_str::<Note>(&json).unwrap(), store.note("n-bbb222").await.unwrap());
    }

    fn new_build(id: &str, template: &str, prompt: &str) -> NewBuild {
        NewBuild {
            id: id.into(),
            kind: wright_events::RunKind::Build,
            parent_id: None,
            prompt: prompt.into(),
            template: wright_store::Template::parse(template),
            lang: wright_store::Lang::En,
            provider: "openai".into(),
            model: "gpt-4o-mini".into(),
            workspace: format!("/tmp/ws/{id}"),
            started_at: format!("2026-01-01T10:00:0{}.000Z", id.len() % 10),
        }
    }

    fn finish(status: RunStatus, fixes: u32, ms: u64) -> BuildFinish {
        BuildFinish {
            status,
            end_reason: (status == RunStatus::Failed).then_some(wright_events::EndReason::VerificationFailed),
            fix_attempts: fixes,
            turns: 6,
            tokens: Tokens { input_tokens: 12_000, output_tokens: 3_000, cached_tokens: 1_000, cost_usd: 0.0123 },
            duration_ms: ms,
            files: vec!["index.html".into(), "app.js".into()],
            report: Some("Tried: padding the seconds.\nStill failing: the reset button.".into()),
            finished_at: wright_store::now(),
        }
    }

    /// Three finished builds (one with a note) and one still running.
    async fn seed_builds(store: &dyn Store) {
        seed_notes(store).await;
        let long = concat!(
            "a countdown timer with a start button, a reset button, ",
            "and a big display that turns red in the last ten seconds"
        );
        store.create_build(&new_build("b1", "interactive", long)).await.unwrap();
        store.finish("b1", None, RunEnd::of(finish(RunStatus::Published, 0, 12_300), vec![])).await.unwrap();
        store.create_build(&new_build("b22", "interactive", "a counter app")).await.unwrap();
        let said = [
            EventKind::Phase { phase: Phase::Generating, iteration: 0, message: "Writing the code".into() },
            EventKind::FileWritten { path: "index.html".into(), bytes: 120, created: true },
        ];
        store.append("b22", None, said.into_iter().map(Draft::now).collect()).await.unwrap();
        // Its stream's `complete` is made from its record, as every run's is.
        let end = RunEnd::of(finish(RunStatus::Published, 2, 65_000), vec![]);
        store.finish("b22", None, end).await.unwrap();
        store.record_note_uses("b22", &keys(&["n-aaa111"]), "GENERATING").await.unwrap();
        store
            .record_attempt(&Attempt {
                id: "a-1".into(),
                build_id: "b22".into(),
                template: wright_events::Template::Interactive,
                success: true,
                iterations: 2,
                duration_ms: 65_000,
                notes_applied: keys(&["n-aaa111"]),
                errors: vec![AttemptError {
                    iteration: 1,
                    kind: "test_failure".into(),
                    error: "Expected values to be strictly equal\n  at test.js:3".into(),
                    fixed: true,
                }],
                model: "gpt-4o-mini".into(),
                tokens: Tokens::default(),
                created_at: wright_store::now(),
            })
            .await
            .unwrap();
        store.create_build(&new_build("b333", "static", "a landing page")).await.unwrap();
        store.finish("b333", None, RunEnd::of(finish(RunStatus::Failed, 3, 200_000), vec![])).await.unwrap();
        store.create_build(&new_build("b4444", "static", "still going")).await.unwrap();
    }

    #[tokio::test]
    async fn builds_list_show_and_events() {
        let store = memory().await;
        let empty = run_builds(&store, BuildsCommand::List { limit: 20, json: false }).await.unwrap();
        assert_eq!(empty, "No builds yet; start one with `wright run \"a counter app\"`.\n");
        seed_builds(&store).await;

        let table = run_builds(&store, BuildsCommand::List { limit: 20, json: false }).await.unwrap();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 5, "{table}");
        assert!(lines[0].starts_with("ID") && lines[0].ends_with("PROMPT"), "{table}");
        assert!(lines[1].starts_with("b4444  running") && lines[1].contains(" - "), "newest first:\n{table}");
        let b1 = lines.iter().find(|l| l.starts_with("b1 ")).unwrap();
        assert!(b1.contains("published") && b1.contains("12.3s") && b1.contains("$0.0123"), "{b1}");
        assert!(b1.ends_with('…') && b1.contains("a countdown timer with a start button"), "{b1}");
        let b22 = lines.iter().find(|l| l.starts_with("b22 ")).unwrap();
        assert!(b22.contains("1m 05s") && b22.contains("a counter app"), "{b22}");
        let json = run_builds(&store, BuildsCommand::List { limit: 2, json: true }).await.unwrap();
        let parsed: Vec<BuildRecord> = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed.iter().map(|b| b.start.id.as_str()).collect::<Vec<_>>(), ["b4444", "b333"]);
        let more = run_builds(&store, BuildsCommand::List { limit: 2, json: false }).await.unwrap();
        assert!(more.contains("… and older ones"), "{more}");

        let shown = run_builds(&store, BuildsCommand::Show { id: "b22".into(), json: false }).await.unwrap();
        for want in [
            "build b22 · published",
            "request        a counter app",
            "outcome        published after 2 fix attempts",
            "template       interactive · language en",
            "model          openai gpt-4o-mini",
            "took 1m 05s",
            "tokens         12,000 in (1,000 cached) · 3,000 out · cost $0.0123 · 6 turns",
            "notes applied (1)",
            "n-aaa111  ACTIVE  0.80  trigger of n-aaa111",
            "attempt a-1: succeeded after 2 fix attempts",
            "fix 1 test_failure: Expected values to be strictly equal (fixed)",
            "files (2)\n  index.html\n  app.js",
            "report\n  Tried: padding the seconds.\n  Still failing: the reset button.",
        ] {
            assert!(shown.contains(want), "missing {want:?} in:\n{shown}");
        }
        let failed = run_builds(&store, BuildsCommand::Show { id: "b333".into(), json: false }).await.unwrap();
        assert!(failed.contains("failed (verification failed) after 3 fix attempts"), "{failed}");
        assert!(failed.contains("notes applied  none"), "{failed}");
        let running = run_builds(&store, BuildsCommand::Show { id: "b44".into(), json: false }).await.unwrap();
        assert!(running.contains("running, or stopped before it could finish"), "{running}");
        let json = run_builds(&store, BuildsCommand::Show { id: "b22".into(), json: true }).await.unwrap();
        let v: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["build"]["id"], "b22");
        assert_eq!(v["notes_applied"][0], "n-aaa111");
        assert_eq!(v["notes"][0]["helpCount"], 3);
        assert_eq!(v["attempts"][0]["iterations"], 2);

        let err = run_builds(&store, BuildsCommand::Show { id: "xyz".into(), json: false }).await.unwrap_err();
        assert_eq!(err.to_string(), "no build matches `xyz`; see `wright builds list`");
        let err = run_builds(&store, BuildsCommand::Show { id: "b".into(), json: false }).await.unwrap_err();
        assert!(err.to_string().contains("matches more than one build"), "{err}");

        let events = run_builds(&store, BuildsCommand::Events { id: "b22".into(), after: 0 }).await.unwrap();
        let stored = store.events("b22", 0).await.unwrap();
        let expected: String = stored.iter().map(|e| e.to_json_line() + "\n").collect();
        assert_eq!(events, expected);
        let first: Value = serde_json::from_str(events.lines().next().unwrap()).unwrap();
        assert_eq!((first["seq"].as_u64(), first["type"].as_str()), (Some(1), Some("phase")));
        let resumed = run_builds(&store, BuildsCommand::Events { id: "b22".into(), after: 2 }).await.unwrap();
        assert_eq!(resumed.lines().count(), 1);
        assert!(resumed.contains("\"type\":\"complete\""), "{resumed}");
        let err = run_builds(&store, BuildsCommand::Events { id: "nope".into(), after: 0 }).await.unwrap_err();
        assert_eq!(err.to_string(), "no build matches `nope`; see `wright builds list`");
    }

    #[tokio::test]
    async fn stats_for_an_empty_store_and_a_few_builds() {
        let store = memory().await;
        let empty = run_stats(&store, false).await;
        assert_eq!(empty.lines().count(), 1, "{empty}");
        assert!(empty.starts_with("No finished builds yet"), "{empty}");
        let json: Stats = serde_json::from_str(&run_stats(&store, true).await).unwrap();
        assert_eq!(json, Stats::default());

        seed_builds(&store).await;
        let text = run_stats(&store, false).await;
        for want in [
            "Builds         3 finished · 2 published (67%) · 1 on the first try (33%)",
            "TEMPLATE     BUILDS  PUBLISHED  FIRST TRY",
            "interactive       2   2 (100%)    1 (50%)",
            "static            1     0 (0%)     0 (0%)",
            "Fix attempts per finished build",
            "  0  ████████████████████  1",
            "  1                        0",
            "Notes          3: 1 active · 1 candidate · 1 deprecated",
            "Note hit rate  33% (1 of 3 finished builds used at least one note)",
            "Success        with notes 1 of 1 published (100%) · without notes 1 of 2 (50%)",
            "Tokens         36,000 in (3,000 cached) · 9,000 out · cost $0.0369",
            "Duration       p50 1m 05s · p95 3m 20s",
        ] {
            assert!(text.contains(want), "missing {want:?} in:\n{text}");
        }
        let json: Stats = serde_json::from_str(&run_stats(&store, true).await).unwrap();
        assert_eq!(json, store.stats().await.unwrap());
    }

    #[test]
    fn small_formatters() {
        assert_eq!(clip("a  b\nc", 10), "a b c");
        assert_eq!(clip("abcdefghij", 5), "abcd…");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(duration(999), "1.0s");
        assert_eq!(duration(3_725_000), "1h 02m");
        assert_eq!(bar(1, 40, 20), "█");
        assert_eq!(bar(0, 40, 20), "");
        assert_eq!(pct(1, 0), "-");
        assert_eq!(when("2026-01-01T10:00:01.000Z"), "2026-01-01 10:00:01 UTC");
    }
}
