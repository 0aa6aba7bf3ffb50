//! The engine's notices (a model fetched or loaded) on the terminal: a `wright:` line on
//! stderr, so it never mixes with `--events jsonl` on stdout, and a progress bar while a model
//! downloads.

use indicatif::{ProgressBar, ProgressStyle};
use std::sync::{Arc, Mutex};
use wright_engine::notice::{FetchStage, ModelRole, Notice, NoticeSink, Notices};

/// Notices said on stderr.
#[derive(Default)]
struct Terminal {
    bar: Mutex<Option<ProgressBar>>,
}

/// What `wright run`, `task`, `chat`, `explain` and `models pull` say while a model gets ready.
pub fn terminal() -> NoticeSink {
    NoticeSink(Arc::new(Terminal::default()))
}

fn what(role: ModelRole) -> &'static str {
    match role {
        ModelRole::Builtin => "the offline model",
        ModelRole::Embedding => "the embedding model",
    }
}

impl Notices for Terminal {
    fn notice(&self, notice: &Notice) {
        let Ok(mut bar) = self.bar.lock() else { return };
        match notice {
            Notice::Fetching { role, name, megabytes, python } => {
                eprintln!("wright: fetching {} {name} ({megabytes} MB, once) with {python} -m pip…", what(*role));
                let pb = ProgressBar::new(megabytes * 1_000_000);
                pb.set_style(
                    ProgressStyle::with_template("{msg:10} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec})")
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                );
                *bar = Some(pb);
            }
            Notice::Progress { stage, done, total, .. } => {
                if let Some(pb) = bar.as_ref() {
                    pb.set_length(*total);
                    pb.set_position(*done);
                    pb.set_message(match stage {
                        FetchStage::Download => "download",
                        FetchStage::Verify => "verify",
                        FetchStage::Extract => "extract",
                    });
                }
            }
            Notice::Fetched { path, .. } => {
                if let Some(pb) = bar.take() {
                    pb.finish_and_clear();
                }
                eprintln!("wright: model ready at {}", path.display());
            }
            Notice::Loading { role, name } => eprintln!("wright: loading {} {name}…", what(*role)),
        }
    }
}
