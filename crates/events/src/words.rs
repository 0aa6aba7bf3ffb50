//! The words more than one front end says about a run, one table per language
//! (`words/en.json`, `words/pt.json`): the CLI renders queue notices with them, the server
//! words the endings it stores with them, and the web UI loads the very same tables
//! (`wright_webui` serves them as `words.js`). A message is a [`Said`]; each front end picks
//! the language, and the event itself stays typed.

use crate::{Lang, RestartReason};
use std::collections::HashMap;
use std::sync::LazyLock;

/// The tables, as shipped: JSON objects of key → text with `{name}` placeholders.
pub const EN: &str = include_str!("../words/en.json");
pub const PT: &str = include_str!("../words/pt.json");

/// Parsed once; read-only afterwards. A table that does not parse leaves its language empty,
/// and [`say`] falls back to English, then to the key (the tests keep both whole).
static TABLES: LazyLock<[HashMap<String, String>; 2]> =
    LazyLock::new(|| [serde_json::from_str(EN).unwrap_or_default(), serde_json::from_str(PT).unwrap_or_default()]);

/// Something a front end says about a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said {
    /// `queued {position}`.
    Queued { position: u64 },
    /// `started {worker}`.
    Started,
    /// `restarted {attempt, reason}`.
    Restarted { attempt: u32, reason: RestartReason },
    /// A build cancelled while it waited.
    CancelledWhileQueued,
    /// A build interrupted once more than the server may run it again.
    ServerStopped,
    /// A build whose server stopped while it was being cancelled.
    StoppedWhileCancelling,
    /// The model could not be used (unreachable, refused the key, answered with an error):
    /// kind words for a beginner, the technical reason kept as the error's detail.
    ModelUnavailable,
    /// The model's provider limits requests; room again in `seconds`.
    ModelBusy { seconds: u64 },
}

impl Said {
    /// The table's key, and the values of its placeholders.
    pub fn key(&self) -> (&'static str, Vec<(&'static str, String)>) {
        match *self {
            Said::Queued { position: 0 } => ("queue.next", vec![]),
            Said::Queued { position } => ("queue.behind", vec![("n", position.to_string())]),
            Said::Started => ("queue.started", vec![]),
            Said::Restarted { attempt, reason } => {
                let key = match reason {
                    RestartReason::Shutdown => "restarted.shutdown",
                    RestartReason::WorkerLost => "restarted.worker_lost",
                };
                (key, vec![("attempt", attempt.to_string())])
            }
            Said::CancelledWhileQueued => ("queue.cancelled", vec![]),
            Said::ServerStopped => ("ended.server_stopped", vec![]),
            Said::StoppedWhileCancelling => ("ended.stopped_while_cancelling", vec![]),
            Said::ModelUnavailable => ("model.unavailable", vec![]),
            Said::ModelBusy { seconds } => ("model.busy", vec![("seconds", seconds.max(1).to_string())]),
        }
    }
}

/// `said` in `lang`.
pub fn say(lang: Lang, said: Said) -> String {
    let (key, vars) = said.key();
    let table = match lang {
        Lang::En => &TABLES[0],
        Lang::Pt => &TABLES[1],
    };
    let text = table.get(key).or_else(|| TABLES[0].get(key)).map_or(key, String::as_str);
    vars.iter().fold(text.to_string(), |t, (name, value)| t.replace(&format!("{{{name}}}"), value))
}

/// The word or phrase under `key` in `lang`, for front ends that narrate in their own words
/// (the CLI's `narrate.*` keys): English when `lang`'s table lacks it, the key itself when
/// neither has it (a test keeps every key the CLI uses in both tables).
pub fn word(lang: Lang, key: &'static str) -> &'static str {
    let table: &'static HashMap<String, String> = match lang {
        Lang::En => &TABLES[0],
        Lang::Pt => &TABLES[1],
    };
    table.get(key).or_else(|| TABLES[0].get(key)).map_or(key, String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn placeholders(text: &str) -> BTreeSet<String> {
        text.split('{').skip(1).filter_map(|p| p.split_once('}')).map(|(name, _)| name.to_string()).collect()
    }

    #[test]
    fn both_tables_parse_and_have_the_same_keys_and_placeholders() {
        let en: HashMap<String, String> = serde_json::from_str(EN).unwrap();
        let pt: HashMap<String, String> = serde_json::from_str(PT).unwrap();
        assert_eq!(en.keys().collect::<BTreeSet<_>>(), pt.keys().collect::<BTreeSet<_>>());
        for (k, v) in &en {
            assert_eq!(placeholders(v), placeholders(&pt[k]), "{k}");
        }
    }

    #[test]
    fn every_message_has_words_in_every_language() {
        let all = [
            Said::Queued { position: 0 },
            Said::Queued { position: 3 },
            Said::Started,
            Said::Restarted { attempt: 2, reason: RestartReason::WorkerLost },
            Said::Restarted { attempt: 3, reason: RestartReason::Shutdown },
            Said::CancelledWhileQueued,
            Said::ServerStopped,
            Said::StoppedWhileCancelling,
            Said::ModelUnavailable,
            Said::ModelBusy { seconds: 20 },
        ];
        for lang in [Lang::En, Lang::Pt] {
            for s in all {
                let text = say(lang, s);
                assert!(!text.contains('{') && text != s.key().0, "{lang:?} {s:?}: {text}");
            }
        }
        assert_eq!(say(Lang::En, Said::Queued { position: 3 }), "Queued behind 3 other build(s).");
        assert_eq!(word(Lang::Pt, "narrate.done"), "Pronto!");
        assert_eq!(word(Lang::Pt, "no.such.key"), "no.such.key");
        assert_eq!(
            say(Lang::Pt, Said::Restarted { attempt: 2, reason: RestartReason::Shutdown }),
            "O servidor foi parado durante esta construção; ela roda de novo do início (tentativa 2)."
        );
    }
}
