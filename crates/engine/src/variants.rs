//! Experiment variants applied to a build (`docs/experiments.md`): a variant may name a model,
//! a prompt version, a note budget and a starter policy; whatever it leaves out stays as
//! configured. Prompt versions are `wright.toml`'s `[prompt_versions.NAME]`: text added after
//! the shipped system prompt, inline or from a file, read when a build uses it.

use crate::EngineError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use wright_experiments::Variant;
use wright_starters::{Library, Starter};

/// The shipped system prompt, with nothing added: always known.
pub const BUILTIN_PROMPT: &str = "builtin";

/// One `[prompt_versions.NAME]` table: `extra` or `file`, not both.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptVersion {
    /// Instructions added after the system prompt.
    pub extra: Option<String>,
    /// A file whose text is added after the system prompt.
    pub file: Option<PathBuf>,
}

/// `[prompt_versions]`: named additions to the system prompt that variants choose between.
pub type PromptVersions = BTreeMap<String, PromptVersion>;

/// The text `name` adds to the system prompt (`None` for `builtin`), or why it cannot be used.
pub fn prompt_extra(versions: &PromptVersions, name: &str) -> Result<Option<String>, EngineError> {
    if name == BUILTIN_PROMPT {
        return Ok(None);
    }
    let Some(v) = versions.get(name) else {
        let mut known: Vec<&str> = versions.keys().map(String::as_str).collect();
        known.insert(0, BUILTIN_PROMPT);
        return Err(EngineError::Usage(format!(
            "unknown prompt version `{name}`; wright.toml's [prompt_versions] has {}",
            known.join(", ")
        )));
    };
    match (&v.extra, &v.file) {
        (Some(text), None) => Ok(Some(text.clone())),
        (None, Some(path)) => std::fs::read_to_string(path)
            .map(Some)
            .map_err(|e| EngineError::Usage(format!("prompt version `{name}`: {}: {e}", path.display()))),
        _ => Err(EngineError::Usage(format!("prompt version `{name}` needs one of `extra` or `file`, not both"))),
    }
}

/// Check what a variant names before any build uses it: its prompt version exists, and its
/// starter policy parses and, when it names a starter, `starters` has it. (Its model is the
/// provider's to judge, at the first call.)
fn check_variant(versions: &PromptVersions, starters: &Library, v: &Variant) -> Result<(), EngineError> {
    if let Some(p) = &v.prompt_version {
        prompt_extra(versions, p)?;
    }
    if let Some(StarterUse::Force(id)) = v.starter_policy.as_deref().map(StarterUse::parse).transpose()? {
        forced_starter(starters, &id)?;
    }
    Ok(())
}

/// Check every arm of an experiment or an eval, naming the arm that cannot be used: an
/// experiment is checked when it is created and when it starts, so a prompt version or
/// starter nobody has fails then rather than in each build it is given.
pub fn check_variants<'a>(
    versions: &PromptVersions,
    starters: &Library,
    variants: impl IntoIterator<Item = &'a Variant>,
) -> Result<(), EngineError> {
    for v in variants {
        check_variant(versions, starters, v).map_err(|e| EngineError::Usage(format!("variant `{}`: {e}", v.name)))?;
    }
    Ok(())
}

/// The starter `--starter ID` (or a variant's starter policy) names, or which ones there are.
pub(crate) fn forced_starter<'a>(starters: &'a Library, id: &str) -> Result<&'a Starter, EngineError> {
    starters.get(id).ok_or_else(|| {
        let ids: Vec<&str> = starters.list().iter().map(|s| s.id()).collect();
        EngineError::Usage(format!("no starter `{id}`; the starters are {}", ids.join(", ")))
    })
}

/// How builds use starters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StarterUse {
    /// Fill with the built-in model, follow as a reference with any other.
    Auto,
    Fill,
    Reference,
    Off,
    /// This starter, whatever the request says (`--starter ID`): filled by the built-in model,
    /// followed by any other.
    Force(String),
}

impl StarterUse {
    pub fn parse(s: &str) -> Result<Self, EngineError> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "fill" => Ok(Self::Fill),
            "reference" => Ok(Self::Reference),
            "off" => Ok(Self::Off),
            id if !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') => {
                Ok(Self::Force(id.to_string()))
            }
            other => Err(EngineError::Usage(format!(
                "unknown starter use `{other}`; use auto, fill, reference, off or a starter's id (`wright starters`)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn prompt_versions_resolve_or_say_what_exists() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v3.md");
        std::fs::write(&file, "Prefer one file.").unwrap();
        let mut versions = PromptVersions::new();
        versions.insert("v2".into(), PromptVersion { extra: Some("Write tests first.".into()), file: None });
        versions.insert("v3".into(), PromptVersion { extra: None, file: Some(file) });
        versions.insert("both".into(), PromptVersion { extra: Some("a".into()), file: Some("b".into()) });
        assert_eq!(prompt_extra(&versions, "builtin").unwrap(), None);
        assert_eq!(prompt_extra(&versions, "v2").unwrap().as_deref(), Some("Write tests first."));
        assert_eq!(prompt_extra(&versions, "v3").unwrap().as_deref(), Some("Prefer one file."));
        let err = prompt_extra(&versions, "v9").unwrap_err().to_string();
        assert!(err.contains("builtin, both, v2, v3"), "{err}");
        assert!(prompt_extra(&versions, "both").is_err());
        let bad = Variant { prompt_version: Some("v9".into()), ..Variant::named("b", 1.0) };
        let starters = Library::builtin().unwrap();
        assert!(check_variant(&versions, &starters, &bad).is_err());
        let good = Variant { prompt_version: Some("v2".into()), note_budget: Some(0), ..Variant::named("b", 1.0) };
        assert!(check_variant(&versions, &starters, &good).is_ok());
    }

    #[test]
    fn an_experiments_arms_are_checked_for_prompt_versions_and_starters_and_named() {
        let starters = Library::builtin().unwrap();
        let known = starters.list()[0].id().to_string();
        let versions = PromptVersions::new();
        let arm =
            |name: &str, policy: &str| Variant { starter_policy: Some(policy.into()), ..Variant::named(name, 1.0) };
        assert!(check_variants(&versions, &starters, &[arm("a", "off"), arm("b", &known)]).is_ok());
        let err = check_variants(&versions, &starters, &[arm("a", "off"), arm("b", "no-such")]).unwrap_err();
        assert!(err.to_string().starts_with("variant `b`: no starter `no-such`; the starters are "), "{err}");
        let err = check_variants(&versions, &starters, &[arm("a", "fill now")]).unwrap_err();
        assert!(err.to_string().starts_with("variant `a`: unknown starter use"), "{err}");
        let typo = Variant { prompt_version: Some("v2".into()), ..Variant::named("c", 1.0) };
        let err = check_variants(&versions, &starters, &[typo]).unwrap_err();
        assert!(err.to_string().starts_with("variant `c`: unknown prompt version `v2`"), "{err}");
    }
}
