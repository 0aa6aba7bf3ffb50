//! The `[sampling]`, `[budgets]`, `[limits]` and `[packages]` sections as `wright.toml` spells them: read
//! through the whole file's type, so a typo in any of them is an error there.

use crate::config::FileConfig;
use crate::route_limits::RouteLimits;
use crate::sampling::Phase;
use wright_agent::TokenBudget;

fn parse(text: &str) -> FileConfig {
    toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn phases_default_to_the_seed_and_the_flag_sets_them_all() {
    let f = parse("[sampling.fix]\ntemperature = 0.1\n");
    assert_eq!(f.sampling.temperature(Phase::Generate, None), 0.3);
    assert_eq!(f.sampling.temperature(Phase::Fix, None), 0.1);
    assert_eq!(f.sampling.temperature(Phase::Chat, None), 0.4);
    assert_eq!(f.sampling.temperature(Phase::Fix, Some(0.9)), 0.9);
    assert!(parse("[sampling.explain]\ntemperature = 3.0\n").sampling.check(None).is_err());
    assert!(f.sampling.check(Some(-1.0)).is_err());
    assert!(f.sampling.check(Some(1.0)).is_ok());
    assert!(toml::from_str::<FileConfig>("[sampling.generate]\ntop_k = 3\n").is_err(), "typos show");
}

#[test]
fn budgets_keep_the_seed_numbers_where_nothing_is_set() {
    let b = parse("[budgets]\nenforce = true\n[budgets.static]\ntotal = 4000\n").budgets.resolve().unwrap();
    assert!(b.enforce);
    assert_eq!(b.static_page, TokenBudget { total: 4000, ..TokenBudget::STATIC });
    assert_eq!(b.fullstack, TokenBudget::FULLSTACK);
    let bad = parse("[budgets.interactive]\nanswer = 5000\n").budgets.resolve().unwrap_err();
    assert!(bad.to_string().contains("[budgets.interactive]"), "{bad}");
    assert!(parse("[budgets]\nkeep_turns = 0\n").budgets.resolve().is_err());
}

#[test]
fn the_older_limit_keys_are_aliases_and_the_section_and_flag_win() {
    let old = parse("[serve]\nbuilds_per_hour = 4\n[chat]\nmessages_per_hour = 7\n");
    let r = old.route_limits(None);
    assert_eq!(
        (r.builds_per_hour, r.tasks_per_hour, r.chat_messages_per_hour, r.assistant_turns_per_hour),
        (4, 4, 7, 7)
    );
    let both = parse(
        "[serve]\nbuilds_per_hour = 4\n[chat]\nmessages_per_hour = 7\n[limits]\nbuilds_per_hour = 5\n\
         tasks_per_hour = 2\nexplanations_per_hour = 3\nchat_messages_per_hour = 9\nassistant_turns_per_hour = 1\n",
    );
    assert_eq!(
        both.route_limits(None),
        RouteLimits {
            builds_per_hour: 5,
            tasks_per_hour: 2,
            explanations_per_hour: 3,
            chat_messages_per_hour: 9,
            assistant_turns_per_hour: 1
        }
    );
    assert_eq!(both.route_limits(Some(8)).builds_per_hour, 8, "the flag beats the file");
}

#[test]
fn a_misspelt_limit_key_is_an_error() {
    let e = toml::from_str::<FileConfig>("[limits]\nexplanation_per_hour = 3\n").err().map(|e| e.to_string());
    assert!(e.is_some_and(|e| e.contains("explanation_per_hour")));
}

#[test]
fn packages_settings_come_from_their_section_and_default_otherwise() {
    let cache = std::path::PathBuf::from("/cache");
    let f = parse("[packages]\nmax_cache_mb = 512\nallow_sdists = true\nfetch_timeout_secs = 30\n");
    let s = f.packages.settings(cache.clone());
    assert_eq!((s.max_cache_bytes, s.allow_sdists, s.fetch_timeout.as_secs()), (512 << 20, true, 30));
    assert_eq!(s.cache_root, cache);
    let d = parse("").packages.settings(cache);
    assert_eq!((d.max_cache_bytes, d.allow_sdists, d.fetch_timeout.as_secs()), (2 << 30, false, 600));
    assert!(toml::from_str::<FileConfig>("[packages]\nallow_sdist = true\n").is_err(), "typos show");
}
