//! Published apps: a build that ends PUBLISHED becomes an app with an address of its own,
//! `/apps/<slug>`, a title and a one-line description (from its entry page).
//!
//! The slug is made here ([`slugify`]) and given out by the store in one transaction
//! ([`AppStore::publish_app`]): `my-todo-app`, then `my-todo-app-2`, … A unique index is the
//! guard, so two servers publishing at once can never take the same address. An unpublished
//! app keeps its row and its slug: an old link answers "gone", never someone else's app.
//!
//! Related apps ([`related`]) are ranked here too, once for both backends: TF-IDF cosine over
//! the words of title, description and request (the notes' tokenizer, accents folded).

use crate::note::tag_words;
use crate::rows::Cols;
use crate::{Result, StoreError};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use wright_events::AppRef;

/// Longest slug [`slugify`] makes (a `-N` suffix may follow it).
pub const SLUG_CHARS: usize = 40;
/// Longest slug anyone may set (room for a suffix).
pub const MAX_SLUG_CHARS: usize = 48;
/// Most words of a made slug.
pub const SLUG_WORDS: usize = 5;
/// Longest title and description kept.
pub const TITLE_CHARS: usize = 100;
pub const DESCRIPTION_CHARS: usize = 300;

/// A published (or once published) app as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct App {
    pub slug: String,
    pub build_id: String,
    /// The build's owner; `None` for a build made with `wright run`.
    pub owner: Option<String>,
    pub title: String,
    pub description: String,
    /// The request the build was made from.
    pub prompt: String,
    pub template: wright_events::Template,
    pub created_at: String,
    pub updated_at: String,
    /// When its owner took it down; its address then answers 410 and the slug stays taken.
    pub unpublished_at: Option<String>,
}

impl App {
    pub fn url_path(&self) -> String {
        AppRef::path_of(&self.slug)
    }

    pub fn is_published(&self) -> bool {
        self.unpublished_at.is_none()
    }

    /// As events and the build's record carry it.
    pub fn to_ref(&self) -> AppRef {
        AppRef {
            slug: self.slug.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            url_path: self.url_path(),
        }
    }
}

/// What publishing a build needs; the owner comes from the build's own record.
#[derive(Debug, Clone, PartialEq)]
pub struct NewApp {
    pub build_id: String,
    pub title: String,
    pub description: String,
    pub prompt: String,
    pub template: wright_events::Template,
}

/// A rename: any of a new slug, title, description.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct AppChange {
    pub slug: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
}

/// Which apps to list.
#[derive(Debug, Clone, PartialEq)]
pub struct AppFilter {
    /// Only this owner's; `None`: everyone's.
    pub owner: Option<String>,
    /// Leave unpublished apps out.
    pub published_only: bool,
    pub limit: u32,
}

/// Published apps and their addresses. Every [`crate::Store`] is one.
#[async_trait]
pub trait AppStore: Send + Sync {
    /// Give the build's app an address made from its title ([`slugify`]; the first free of
    /// `base`, `base-2`, `base-3`, … in one transaction) and store it. A build that already has
    /// an app gets that one back unchanged (a build run again after an interruption publishes
    /// again). [`StoreError::NotFound`] when there is no such build.
    async fn publish_app(&self, app: &NewApp) -> Result<App>;
    /// The app at `slug`, published or not; [`StoreError::NotFound`] when there is none.
    async fn app(&self, slug: &str) -> Result<App>;
    /// The app a build became, if it did.
    async fn app_of_build(&self, build_id: &str) -> Result<Option<App>>;
    /// Newest first.
    async fn apps(&self, filter: &AppFilter) -> Result<Vec<App>>;
    /// Change an app's slug, title and/or description. [`StoreError::Invalid`] when the new slug
    /// is malformed ([`check_slug`]) or taken (another app has it, published or not).
    async fn rename_app(&self, slug: &str, change: &AppChange) -> Result<App>;
    /// Take an app down; its slug stays reserved. Unpublishing twice changes nothing.
    async fn unpublish_app(&self, slug: &str) -> Result<App>;
    /// Take down the app build `build_id` became, as [`AppStore::unpublish_app`] does, found by
    /// its build rather than its slug (a rename in between cannot make it miss, or hit an app
    /// that took the freed slug). Retention calls it when it removes a build's files, so an
    /// address never leads to a folder that is gone. `None` when the build has no app; an app
    /// already down stays as it was.
    async fn unpublish_app_of_build(&self, build_id: &str) -> Result<Option<App>>;
    /// A continued build takes over its parent's app: the published app of `from` now shows
    /// build `to`, at the same address, with the names the owner gave it. Only when both builds
    /// have the same owner and `to` has no app yet; `None` when nothing was moved (the parent
    /// has no published app), and the caller publishes `to` as a new app.
    async fn move_app(&self, from: &str, to: &str) -> Result<Option<App>>;

    /// The `limit` published apps most like this one ([`related`] over the newest published
    /// apps), most similar first; apps that share no word with it are left out.
    async fn related_apps(&self, slug: &str, limit: u32) -> Result<Vec<App>> {
        let me = self.app(slug).await?;
        let all = self.apps(&AppFilter { owner: None, published_only: true, limit: RELATED_CANDIDATES }).await?;
        Ok(related(&me, &all, limit as usize))
    }
}

/// Which app an unpublish names: the one statement that takes an app down, shared by
/// [`AppStore::unpublish_app`] and [`AppStore::unpublish_app_of_build`], picks by this column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AppKey {
    Slug,
    Build,
}

impl AppKey {
    pub(crate) fn column(self) -> &'static str {
        match self {
            AppKey::Slug => "slug",
            AppKey::Build => "build_id",
        }
    }
}

/// How many of the newest published apps related apps are chosen from.
pub const RELATED_CANDIDATES: u32 = 2000;

/// Lower case with accents taken off (`Café Ação` → `cafe acao`), so slugs and words compare alike.
pub fn fold(text: &str) -> String {
    text.chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ã' | 'ä' | 'å' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'õ' | 'ö' | 'ø' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            'ç' => 'c',
            'ñ' => 'n',
            'ý' | 'ÿ' => 'y',
            c => c,
        })
        .collect()
}

/// A readable slug from a title: accents folded, lower-case ASCII letters and digits, at most
/// [`SLUG_WORDS`] words joined by `-`, at most [`SLUG_CHARS`] characters (whole words; a first
/// word longer than that is cut). `app` when nothing is left.
pub fn slugify(title: &str) -> String {
    let folded = fold(title);
    let words = folded.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty());
    let mut slug = String::new();
    for w in words.take(SLUG_WORDS) {
        // 32 hex digits is the form of a preview host's key ([`check_slug`]).
        let w = if w.len() == 32 && w.bytes().all(|b| b.is_ascii_hexdigit()) { &w[..31] } else { w };
        let extra = if slug.is_empty() { w.len() } else { w.len() + 1 };
        if slug.len() + extra > SLUG_CHARS {
            if slug.is_empty() {
                slug.push_str(&w[..SLUG_CHARS]);
            }
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(w);
    }
    if slug.is_empty() { "app".into() } else { slug }
}

/// Whether `slug` may be an app's address: lower-case ASCII letters and digits in words joined
/// by single `-`, at most [`MAX_SLUG_CHARS`]; and not a form a build's preview host takes (a
/// last word of 32 hex digits), so the two kinds of address can never be mistaken.
pub fn check_slug(slug: &str) -> Result<()> {
    let words: Vec<&str> = slug.split('-').collect();
    let shaped = !slug.is_empty()
        && slug.len() <= MAX_SLUG_CHARS
        && words.iter().all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
    if !shaped {
        return Err(StoreError::Invalid(format!(
            "`{slug}` is not a valid address: use lower-case letters and digits in words joined by `-`, \
             at most {MAX_SLUG_CHARS} characters (e.g. `my-todo-app`)"
        )));
    }
    if words.last().is_some_and(|w| w.len() == 32 && w.bytes().all(|b| b.is_ascii_hexdigit())) {
        return Err(StoreError::Invalid(format!("`{slug}` looks like a preview address; pick another")));
    }
    Ok(())
}

/// The first of `base`, `base-2`, `base-3`, … that is not in `taken`.
pub(crate) fn first_free(base: &str, taken: &[String]) -> String {
    let taken: BTreeSet<&str> = taken.iter().map(String::as_str).collect();
    if !taken.contains(base) {
        return base.to_string();
    }
    (2u64..).map(|n| format!("{base}-{n}")).find(|s| !taken.contains(s.as_str())).unwrap_or_else(|| base.to_string())
}

/// A title or description as kept: white space collapsed, clipped to `max` characters.
pub use wright_text::clip_line as clip;

/// A rename as it will be stored: the new slug checked, title and description clipped, an
/// empty title or description refused.
pub(crate) fn checked(change: &AppChange) -> Result<AppChange> {
    if let Some(s) = &change.slug {
        check_slug(s)?;
    }
    let text = |v: &Option<String>, what: &str, max: usize| -> Result<Option<String>> {
        match v {
            Some(t) if t.trim().is_empty() => Err(StoreError::Invalid(format!("the {what} cannot be empty"))),
            Some(t) => Ok(Some(clip(t, max))),
            None => Ok(None),
        }
    };
    Ok(AppChange {
        slug: change.slug.clone(),
        title: text(&change.title, "title", TITLE_CHARS)?,
        description: text(&change.description, "description", DESCRIPTION_CHARS)?,
    })
}

/// The message for a slug another app holds.
pub(crate) fn slug_taken(slug: &str) -> StoreError {
    StoreError::Invalid(format!("the address `{slug}` is taken; pick another"))
}

/// Words that say nothing about what an app is (English and Portuguese): two apps sharing
/// only these are not related.
const STOP: &[&str] = &[
    "an",
    "the",
    "for",
    "of",
    "to",
    "with",
    "and",
    "or",
    "in",
    "on",
    "my",
    "your",
    "our",
    "by",
    "is",
    "it",
    "at",
    "from",
    "that",
    "this",
    "me",
    "make",
    "build",
    "create",
    "want",
    "need",
    "app",
    "page",
    "website",
    "site",
    "simple",
    "web",
    "um",
    "uma",
    "de",
    "da",
    "do",
    "das",
    "dos",
    "para",
    "com",
    "os",
    "as",
    "meu",
    "minha",
    "que",
    "em",
    "no",
    "na",
    "pagina",
    "aplicativo",
];

/// The words an app is compared by: title, description and request, accents folded, plurals
/// folded, hyphenated wholes and [`STOP`] words left out.
fn terms(app: &App) -> BTreeSet<String> {
    let text = fold(&format!("{} {} {}", app.title, app.description, app.prompt));
    tag_words(&text)
        .into_iter()
        .filter(|w| !w.contains('-') && w.chars().any(char::is_alphabetic) && !STOP.contains(&w.as_str()))
        .collect()
}

/// The `limit` apps of `candidates` most like `app` (not itself, not unpublished ones): cosine
/// of TF-IDF vectors over their words (a word counts once per app; rare words weigh more),
/// most similar first, then newest; apps with nothing in common are left out.
pub fn related(app: &App, candidates: &[App], limit: usize) -> Vec<App> {
    let others: Vec<&App> = candidates.iter().filter(|c| c.slug != app.slug && c.is_published()).collect();
    let docs: Vec<BTreeSet<String>> = std::iter::once(app).chain(others.iter().copied()).map(terms).collect();
    let mut df: HashMap<&str, usize> = HashMap::new();
    for d in &docs {
        for t in d {
            *df.entry(t.as_str()).or_default() += 1;
        }
    }
    let n = docs.len() as f64;
    let idf = |t: &str| (1.0 + n / df.get(t).copied().unwrap_or(1) as f64).ln();
    let norm = |d: &BTreeSet<String>| d.iter().map(|t| idf(t).powi(2)).sum::<f64>().sqrt();
    let (mine, rest) = match docs.split_first() {
        Some(x) => x,
        None => return Vec::new(),
    };
    let my_norm = norm(mine);
    let mut scored: Vec<(f64, &App)> = rest
        .iter()
        .zip(others)
        .filter_map(|(d, other)| {
            let dot: f64 = d.intersection(mine).map(|t| idf(t).powi(2)).sum();
            let denom = my_norm * norm(d);
            (dot > 0.0 && denom > 0.0).then(|| (dot / denom, other))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| b.1.created_at.cmp(&a.1.created_at)));
    scored.into_iter().take(limit).map(|(_, a)| a.clone()).collect()
}

/// An app read back from a row of either backend.
pub(crate) fn app_row(r: &impl Cols) -> Result<App> {
    Ok(App {
        slug: r.text("slug")?,
        build_id: r.text("build_id")?,
        owner: r.opt_text("owner")?,
        title: r.text("title")?,
        description: r.text("description")?,
        prompt: r.text("prompt")?,
        template: crate::rows::template(r, "template")?
            .ok_or_else(|| crate::StoreError::Corrupt("an app without a template".into()))?,
        created_at: r.text("created_at")?,
        updated_at: r.text("updated_at")?,
        unpublished_at: r.opt_text("unpublished_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn slugs_read_like_their_titles() {
        assert_eq!(slugify("My To-Do App"), "my-to-do-app");
        assert_eq!(slugify("Café da Manhã — Cardápio"), "cafe-da-manha-cardapio");
        assert_eq!(slugify("  !!! "), "app");
        assert_eq!(slugify("one two three four five six seven"), "one-two-three-four-five");
        assert_eq!(slugify(&"x".repeat(60)).len(), SLUG_CHARS);
        assert_eq!(slugify("Pomodoro timer for students who procrastinate"), "pomodoro-timer-for-students-who");
        assert_eq!(slugify("internationalization localization documentation"), "internationalization-localization");
        assert_eq!(slugify(&format!("v {}", "ab".repeat(16))), format!("v-{}", &"ab".repeat(16)[..31]));
    }

    #[test]
    fn free_slugs_count_up() {
        let taken = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(first_free("a", &taken(&[])), "a");
        assert_eq!(first_free("a", &taken(&["a", "a-2", "a-b"])), "a-3");
    }

    #[test]
    fn slug_rules() {
        assert!(check_slug("my-app-2").is_ok());
        for bad in ["", "My-App", "a--b", "-a", "a-", "a_b", "ação", &"a".repeat(49)] {
            assert!(check_slug(bad).is_err(), "{bad}");
        }
        assert!(check_slug(&format!("x-{}", "ab".repeat(16))).is_err(), "a preview host's form");
    }

    #[test]
    fn clipping_keeps_one_line() {
        assert_eq!(clip(" a \n b ", 10), "a b");
        assert_eq!(clip("abcdefghij", 5).chars().count(), 5);
    }

    proptest! {
        #[test]
        fn made_slugs_are_valid_short_and_stable(title in "\\PC{0,120}") {
            let s = slugify(&title);
            prop_assert!(check_slug(&s).is_ok(), "{s:?} from {title:?}");
            prop_assert!(s.len() <= SLUG_CHARS);
            prop_assert!(s.split('-').count() <= SLUG_WORDS);
            prop_assert!(s.is_ascii());
            prop_assert_eq!(slugify(&s), s.clone());
        }

        #[test]
        fn suffixed_slugs_stay_valid(title in "[a-zA-Zà-ü0-9 ]{0,80}", n in 2u64..10_000) {
            let s = format!("{}-{n}", slugify(&title));
            prop_assert!(check_slug(&s).is_ok(), "{s:?}");
        }
    }
}
