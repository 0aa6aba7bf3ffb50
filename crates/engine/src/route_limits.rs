//! `[limits]` in wright.toml: how many requests of each model-backed route one user may make
//! an hour on `wright serve` (builds, task runs, explanations, chat messages, assistant turns).
//! Each costs model calls, so each has its own hourly limit, all in one section; the settings
//! that came before it (`--builds-per-hour`, `[serve] builds_per_hour`, `[chat]
//! messages_per_hour`) still work as aliases: a flag beats `[limits]`, which beats the older
//! key, which beats the default.

use serde::Deserialize;

/// The `[limits]` table. Every key is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    /// Builds one user may start an hour [default: `[serve] builds_per_hour`, else 10].
    pub builds_per_hour: Option<u32>,
    /// Task runs one user may start an hour [default: the builds' number].
    pub tasks_per_hour: Option<u32>,
    /// "Explain the code" answers one user may ask for an hour (the seed's "coach questions")
    /// [default: 20].
    pub explanations_per_hour: Option<u32>,
    /// Chat messages one user may send an hour, each model call of the in-app assistant
    /// included [default: `[chat] messages_per_hour`, else 120].
    pub chat_messages_per_hour: Option<u32>,
    /// In-app assistant turns (messages to the assistant) one user or visitor may start an
    /// hour [default: the chat messages' number].
    pub assistant_turns_per_hour: Option<u32>,
}

/// Every route's hourly limit, resolved. 0 closes a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteLimits {
    pub builds_per_hour: u32,
    pub tasks_per_hour: u32,
    pub explanations_per_hour: u32,
    pub chat_messages_per_hour: u32,
    pub assistant_turns_per_hour: u32,
}

impl Default for RouteLimits {
    fn default() -> Self {
        Self::resolve(&LimitsFile::default(), None, None, None)
    }
}

impl RouteLimits {
    /// The limits `l` sets, over the older keys (`[serve] builds_per_hour`, `[chat]
    /// messages_per_hour`), `builds_flag` (`--builds-per-hour`) beating them all
    /// ([`crate::FileConfig::route_limits`] passes them from the file).
    pub fn resolve(
        l: &LimitsFile,
        serve_builds_per_hour: Option<u32>,
        chat_messages_per_hour: Option<u32>,
        builds_flag: Option<u32>,
    ) -> Self {
        let builds_per_hour = builds_flag.or(l.builds_per_hour).or(serve_builds_per_hour).unwrap_or(10);
        // A chat message is at least one: 0 would keep a user from ever talking to it, which
        // `[chat] messages_per_hour` never allowed either.
        let chat_messages_per_hour = l.chat_messages_per_hour.or(chat_messages_per_hour).unwrap_or(120).max(1);
        Self {
            builds_per_hour,
            tasks_per_hour: l.tasks_per_hour.unwrap_or(builds_per_hour),
            explanations_per_hour: l.explanations_per_hour.unwrap_or(20),
            chat_messages_per_hour,
            assistant_turns_per_hour: l.assistant_turns_per_hour.unwrap_or(chat_messages_per_hour),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_seed() {
        let d = RouteLimits::default();
        assert_eq!(
            (d.builds_per_hour, d.tasks_per_hour, d.explanations_per_hour, d.chat_messages_per_hour),
            (10, 10, 20, 120)
        );
        assert_eq!(d.assistant_turns_per_hour, 120);
    }
}
