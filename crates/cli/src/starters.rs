//! `wright starters`: the tested starter apps builds begin from (`docs/starters.md`): list
//! them, show one, add your own (checked first, like a build), remove yours.

use crate::{Exit, usage};
use anyhow::anyhow;
use std::io::Write;
use std::path::PathBuf;
use wright_engine::config::FileConfig;
use wright_engine::{Engine, Overrides};
use wright_starters::{Library, Starter};

#[derive(clap::Subcommand)]
pub enum StartersCommand {
    /// Every starter: id, template, where it comes from, title.
    List {
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
    /// One starter: its manifest (slots and defaults) and its files.
    Show {
        id: String,
        /// The manifest as JSON.
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Add a starter folder of your own, after it passes verification with its defaults.
    Add {
        dir: PathBuf,
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Remove one of your own starters.
    Remove {
        id: String,
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
}

async fn engine(config: Option<PathBuf>, data_dir: Option<PathBuf>) -> Result<Engine, Exit> {
    let (file, _) = FileConfig::load(config.as_deref())?;
    Ok(Engine::new(file, Overrides { data_dir, ..Overrides::default() }).await?)
}

fn builtin_ids() -> Vec<String> {
    Library::builtin().map(|l| l.list().iter().map(|s| s.id().to_string()).collect()).unwrap_or_default()
}

pub async fn starters(cmd: StartersCommand, config: Option<PathBuf>, out: &mut dyn Write) -> Result<u8, Exit> {
    match cmd {
        StartersCommand::List { data_dir } => {
            let engine = engine(config, data_dir).await?;
            let library = engine.starters()?;
            let yours = engine.starters_dir();
            writeln!(out, "{:<16} {:<12} {:<9} TITLE", "ID", "TEMPLATE", "FROM").map_err(usage)?;
            for s in library.list() {
                let from = if yours.join(s.id()).is_dir() { "yours" } else { "built-in" };
                writeln!(
                    out,
                    "{:<16} {:<12} {:<9} {}",
                    s.id(),
                    s.manifest.template.as_str(),
                    from,
                    s.manifest.title.en
                )
                .map_err(usage)?;
            }
            writeln!(out, "Try: wright run \"{}\"", first_example(&library)).map_err(usage)?;
        }
        StartersCommand::Show { id, json, data_dir } => {
            let library = engine(config, data_dir).await?.starters()?;
            let s = library.get(&id).ok_or_else(|| usage(anyhow!("no starter `{id}`; see `wright starters list`")))?;
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&s.manifest).unwrap_or_default()).map_err(usage)?;
                return Ok(0);
            }
            show(s, out).map_err(usage)?;
        }
        StartersCommand::Add { dir, data_dir } => {
            let engine = engine(config, data_dir).await?;
            let starter = Starter::load(&dir).map_err(usage)?;
            if builtin_ids().iter().any(|b| b == starter.id()) {
                return Err(usage(anyhow!("`{}` is a built-in starter's id; give yours another", starter.id())));
            }
            writeln!(out, "Checking {} with its defaults (tests, browser)…", starter.id()).map_err(usage)?;
            engine.check_starter(&starter).await?;
            let target = engine.starters_dir().join(starter.id());
            copy_dir(&dir, &target).map_err(|e| usage(anyhow!("copying to {}: {e}", target.display())))?;
            writeln!(out, "Added starter {} ({}).", starter.id(), target.display()).map_err(usage)?;
        }
        StartersCommand::Remove { id, data_dir } => {
            let engine = engine(config, data_dir).await?;
            let target = engine.starters_dir().join(&id);
            if !target.is_dir() {
                let why = if builtin_ids().contains(&id) {
                    "is built in; `--starter off` builds without starters"
                } else {
                    "is not one of yours; see `wright starters list`"
                };
                return Err(usage(anyhow!("starter `{id}` {why}")));
            }
            std::fs::remove_dir_all(&target).map_err(|e| usage(anyhow!("removing {}: {e}", target.display())))?;
            writeln!(out, "Removed starter {id}.").map_err(usage)?;
        }
    }
    Ok(0)
}

fn first_example(library: &Library) -> String {
    library.list().first().and_then(|s| s.manifest.examples.en.first().cloned()).unwrap_or_default()
}

fn show(s: &Starter, out: &mut dyn Write) -> std::io::Result<()> {
    let m = &s.manifest;
    writeln!(out, "starter {} · {} · {}", m.id, m.template.as_str(), m.title.en)?;
    writeln!(out, "  {}", m.description.en)?;
    writeln!(out, "  tags: {}", m.tags.join(", "))?;
    writeln!(out, "  for example: {}", m.examples.en.join(" · "))?;
    writeln!(out, "slots:")?;
    if let Some(props) = m.slots.get("properties").and_then(|p| p.as_object()) {
        for (name, schema) in props {
            let about = schema.get("description").and_then(|d| d.as_str()).unwrap_or_default();
            let default = schema.get("default").map(|d| d.to_string()).unwrap_or_default();
            writeln!(out, "  {name}: {about} (default {})", wright_tools::clip(&default, 80))?;
        }
    }
    writeln!(out, "files:")?;
    for (path, text) in s.files() {
        writeln!(out, "  {path} ({} bytes)", text.len())?;
    }
    Ok(())
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let dest = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &dest)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), dest)?;
        }
    }
    Ok(())
}
