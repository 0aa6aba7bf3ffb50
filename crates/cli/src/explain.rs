//! `wright explain ID`: the code of a build explained to a beginner, streamed as it is written.

use crate::{DbArgs, Exit, ModelArgs, parse_lang};
use anyhow::anyhow;
use std::io::Write;
use std::path::PathBuf;
use tokio_util::sync::CancellationToken;
use wright_engine::config::FileConfig;
use wright_engine::{Engine, Overrides};

#[derive(clap::Args)]
pub struct ExplainArgs {
    /// The build to explain (its id or the start of it; see `wright builds list`).
    id: String,
    #[command(flatten)]
    llm: ModelArgs,
    /// Language of the explanation: en or pt [default: the build's].
    #[arg(long, value_name = "CODE")]
    lang: Option<String>,
    /// Ask for the whole answer at once instead of streaming it.
    #[arg(long)]
    no_stream: bool,
    #[command(flatten)]
    db: DbArgs,
}

pub async fn explain(args: ExplainArgs, config_path: Option<PathBuf>) -> Result<u8, Exit> {
    let (file, _) = FileConfig::load(config_path.as_deref())?;
    let lang_setting = args.lang.clone().or(file.lang.clone());
    let overrides = Overrides {
        provider: args.llm.provider,
        model: args.llm.model,
        base_url: args.llm.base_url,
        db: args.db.db,
        data_dir: args.db.data_dir,
        artifacts: args.db.artifacts,
        no_stream: args.no_stream,
        notices: crate::notices::terminal(),
        ..Overrides::default()
    };
    let engine = Engine::new(file, overrides).await?;
    let build =
        engine.store().resolve_build(&args.id).await.map_err(|e| Exit(1, anyhow!("{e}; see `wright builds list`")))?;
    let lang = match lang_setting {
        Some(l) => parse_lang(&l)?,
        None => build.start.lang,
    };
    let mut out = std::io::stdout();
    let cancel = CancellationToken::new();
    let explained = engine
        .explain(
            &build,
            lang,
            &cancel,
            |t| {
                let _ = out.write_all(t.as_bytes());
                let _ = out.flush();
            },
            |note| eprintln!("wright: {note}"),
        )
        .await;
    match explained {
        Ok(_) => {
            println!();
            Ok(0)
        }
        Err(e) => Err(Exit(e.exit_code(), anyhow!("{e}"))),
    }
}
