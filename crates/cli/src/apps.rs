//! `wright apps`: the published apps in the configured store (docs/apps.md): list them, show
//! one with its related apps, rename it, take it down.

use anyhow::{Result, anyhow};
use clap::Subcommand;
use std::io::Write;
use wright_store::{App, AppChange, AppFilter, Store, StoreError};

#[derive(Subcommand)]
pub enum AppsCommand {
    /// Every app, newest first (also unpublished ones, marked).
    List {
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// One app: its names, address, build and the published apps most like it.
    Show {
        slug: String,
        #[arg(long)]
        json: bool,
    },
    /// Give an app a new address (`--slug`), title or description.
    Rename {
        slug: String,
        /// The new address: lower-case letters and digits in words joined by `-`.
        #[arg(long = "slug", value_name = "NEW")]
        new_slug: Option<String>,
        #[arg(long)]
        title: Option<String>,
        #[arg(long)]
        description: Option<String>,
    },
    /// Take an app down: its address answers 410 Gone, and the slug stays reserved.
    Unpublish { slug: String },
}

fn not_found(slug: &str) -> impl FnOnce(StoreError) -> anyhow::Error + '_ {
    move |e| match e {
        StoreError::NotFound(_) => anyhow!("there is no app `{slug}`; see `wright apps list`"),
        e => e.into(),
    }
}

fn line(a: &App) -> String {
    let state = if a.is_published() { "" } else { "  (unpublished)" };
    format!("{:<32} {:<40} {}{state}", a.url_path(), a.title, a.build_id)
}

pub async fn apps(cmd: AppsCommand, store: &dyn Store, out: &mut dyn Write) -> Result<()> {
    match cmd {
        AppsCommand::List { limit, json } => {
            let apps = store.apps(&AppFilter { owner: None, published_only: false, limit }).await?;
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&apps)?)?;
            } else if apps.is_empty() {
                writeln!(out, "No apps yet: a build that publishes becomes one.")?;
            } else {
                for a in &apps {
                    writeln!(out, "{}", line(a))?;
                }
            }
        }
        AppsCommand::Show { slug, json } => {
            let app = store.app(&slug).await.map_err(not_found(&slug))?;
            let related = store.related_apps(&slug, 5).await?;
            if json {
                let v = serde_json::json!({ "app": app, "related": related });
                writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
                return Ok(());
            }
            writeln!(out, "{}", app.title)?;
            writeln!(out, "{}", app.description)?;
            writeln!(out)?;
            writeln!(
                out,
                "address:  {}  (with `wright serve`: http://127.0.0.1:8787{})",
                app.url_path(),
                app.url_path()
            )?;
            writeln!(out, "build:    {}  ({})", app.build_id, app.template)?;
            writeln!(out, "owner:    {}", app.owner.as_deref().unwrap_or("(a local build)"))?;
            writeln!(out, "request:  {}", app.prompt)?;
            writeln!(out, "created:  {}", app.created_at)?;
            if let Some(at) = &app.unpublished_at {
                writeln!(out, "unpublished: {at}")?;
            }
            if !related.is_empty() {
                writeln!(out, "\nrelated:")?;
                for r in &related {
                    writeln!(out, "  {}", line(r))?;
                }
            }
        }
        AppsCommand::Rename { slug, new_slug, title, description } => {
            if new_slug.is_none() && title.is_none() && description.is_none() {
                return Err(anyhow!("say what changes: --slug NEW, --title T and/or --description D"));
            }
            let change = AppChange { slug: new_slug, title, description };
            let app = store.rename_app(&slug, &change).await.map_err(not_found(&slug))?;
            writeln!(out, "{}", line(&app))?;
        }
        AppsCommand::Unpublish { slug } => {
            let app = store.unpublish_app(&slug).await.map_err(not_found(&slug))?;
            writeln!(
                out,
                "Unpublished {}: its address now answers 410 Gone; the slug stays reserved.",
                app.url_path()
            )?;
        }
    }
    Ok(())
}
