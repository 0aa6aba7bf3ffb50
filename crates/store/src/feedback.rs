//! A person's 👍/👎 on a finished build (docs/feedback.md).
//!
//! A rating is a signal about the notes the build used: a 👎 counts as "did not help" for each
//! of them and a 👍 as "helped", through the same Bayesian update verification applies
//! ([`Store::record_note_outcome`](crate::Store::record_note_outcome)). The row remembers which
//! value the notes have been moved for (`notes_moved`), so rating 👎 twice moves them once and
//! changing 👎 to 👍 moves them up once. Ratings are also counted for the admin dashboard,
//! together with the chat's 👍/👎 on replies, so one signal shows both.
//!
//! Both backends run the same statements ([`impl_feedback_store!`], `$N` parameters that SQLite
//! reads as `?N`).

use crate::Result;
use async_trait::async_trait;
use serde::Serialize;

/// Longest comment kept with a rating, in characters.
pub const MAX_COMMENT: usize = 2000;

/// The rating of one build.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuildFeedback {
    pub build_id: String,
    /// Who rated it (`None` for a build of `wright run`, rated on the local store).
    pub user_id: Option<String>,
    /// 1 (👍) or -1 (👎).
    pub value: i8,
    pub comment: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// A note whose confidence a rating moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MovedNote {
    pub id: String,
    pub before: f64,
    pub after: f64,
}

/// What rating a build did: the rating as stored and the notes it moved (none when the notes
/// had already been moved for this value, or the build used none).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rated {
    pub feedback: BuildFeedback,
    pub moved: Vec<MovedNote>,
}

/// How many ratings were 👍 and how many 👎.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub up: u64,
    pub down: u64,
}

/// One name's tally: a variant's builds, or a tool's chat replies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamedTally {
    pub name: String,
    pub up: u64,
    pub down: u64,
}

/// The ratings people gave, for the dashboard: builds overall and per experiment variant, and
/// the chat's replies per tool they used.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RatingSummary {
    pub builds: Tally,
    /// Builds that ran under a variant, by variant name.
    pub by_variant: Vec<NamedTally>,
    /// Chat replies, by tool name (a reply counts for each tool it used).
    pub chat_by_tool: Vec<NamedTally>,
}

/// Ratings of builds.
#[async_trait]
pub trait FeedbackStore {
    /// Rate build `build_id` (`value` 1 or -1) for `user_id`, replacing an earlier rating,
    /// and move the confidence of the notes it used when they have not been moved for this
    /// value yet. [`StoreError::NotFound`](crate::StoreError::NotFound) for an unknown build,
    /// [`StoreError::Invalid`](crate::StoreError::Invalid) for one not finished, another value
    /// or a comment longer than [`MAX_COMMENT`].
    async fn rate_build(
        &self,
        build_id: &str,
        user_id: Option<&str>,
        value: i8,
        comment: Option<&str>,
    ) -> Result<Rated>;
    /// The build's rating, if it has one.
    async fn build_feedback(&self, build_id: &str) -> Result<Option<BuildFeedback>>;
    /// Counts of 👍 and 👎 for the dashboard.
    async fn rating_summary(&self) -> Result<RatingSummary>;
}

/// Checks that hold on both backends before anything is written.
pub(crate) fn check(value: i8, comment: Option<&str>) -> Result<()> {
    if value != 1 && value != -1 {
        return Err(crate::StoreError::Invalid(format!("a rating is 1 (up) or -1 (down), not {value}")));
    }
    if comment.is_some_and(|c| c.chars().count() > MAX_COMMENT) {
        return Err(crate::StoreError::Invalid(format!("a comment is at most {MAX_COMMENT} characters")));
    }
    Ok(())
}

/// The statements of [`FeedbackStore`], for a store type with a `pool`, that is a
/// [`Store`](crate::Store), and a function that turns a `$N` statement into its dialect.
macro_rules! impl_feedback_store {
    ($store:ty, $sql:path) => {
        #[async_trait::async_trait]
        impl $crate::feedback::FeedbackStore for $store {
            async fn rate_build(
                &self,
                build_id: &str,
                user_id: Option<&str>,
                value: i8,
                comment: Option<&str>,
            ) -> $crate::Result<$crate::feedback::Rated> {
                use $crate::Store;
                $crate::feedback::check(value, comment)?;
                let build = self.build(build_id).await?;
                if !build.status.is_final() {
                    return Err($crate::StoreError::Invalid(format!(
                        "build {build_id} has not finished; rate it once it has"
                    )));
                }
                let now = $crate::now();
                let comment = comment.map(str::trim).filter(|c| !c.is_empty());
                sqlx::query(&$sql(
                    "INSERT INTO build_feedback (build_id, user_id, value, comment, notes_moved, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, 0, $5, $5) \
                     ON CONFLICT (build_id) DO UPDATE SET user_id = excluded.user_id, value = excluded.value, \
                     comment = excluded.comment, updated_at = excluded.updated_at",
                ))
                .bind(build_id)
                .bind(user_id)
                .bind(i16::from(value))
                .bind(comment)
                .bind(&now)
                .execute(&self.pool)
                .await?;
                // Claim the move: of two ratings racing, only the one that changes
                // `notes_moved` moves the notes.
                let before: i64 = sqlx::query_scalar(&$sql(
                    "SELECT CAST(notes_moved AS BIGINT) FROM build_feedback WHERE build_id = $1",
                ))
                .bind(build_id)
                .fetch_one(&self.pool)
                .await?;
                let claimed = sqlx::query(&$sql(
                    "UPDATE build_feedback SET notes_moved = $2 WHERE build_id = $1 AND notes_moved <> $2",
                ))
                .bind(build_id)
                .bind(i16::from(value))
                .execute(&self.pool)
                .await?
                .rows_affected()
                    == 1;
                let mut moved = Vec::new();
                if claimed {
                    match self.move_notes(build_id, value > 0).await {
                        Ok(m) => moved = m,
                        Err(e) => {
                            // Give the claim back so the next rating tries again.
                            sqlx::query(&$sql("UPDATE build_feedback SET notes_moved = $2 WHERE build_id = $1"))
                                .bind(build_id)
                                .bind(before as i16)
                                .execute(&self.pool)
                                .await?;
                            return Err(e);
                        }
                    }
                }
                let feedback = self
                    .build_feedback(build_id)
                    .await?
                    .ok_or_else(|| $crate::StoreError::NotFound(format!("rating of build {build_id}")))?;
                Ok($crate::feedback::Rated { feedback, moved })
            }

            async fn build_feedback(&self, build_id: &str) -> $crate::Result<Option<$crate::feedback::BuildFeedback>> {
                use sqlx::Row;
                let row = sqlx::query(&$sql(
                    "SELECT build_id, user_id, CAST(value AS BIGINT) AS value, comment, created_at, updated_at \
                     FROM build_feedback WHERE build_id = $1",
                ))
                .bind(build_id)
                .fetch_optional(&self.pool)
                .await?;
                row.map(|r| {
                    Ok($crate::feedback::BuildFeedback {
                        build_id: r.try_get("build_id")?,
                        user_id: r.try_get("user_id")?,
                        value: if r.try_get::<i64, _>("value")? > 0 { 1 } else { -1 },
                        comment: r.try_get("comment")?,
                        created_at: r.try_get("created_at")?,
                        updated_at: r.try_get("updated_at")?,
                    })
                })
                .transpose()
            }

            async fn rating_summary(&self) -> $crate::Result<$crate::feedback::RatingSummary> {
                use $crate::ChatStore;
                use sqlx::Row;
                let rows = sqlx::query(
                    "SELECT b.variant AS variant, \
                     SUM(CASE WHEN f.value > 0 THEN 1 ELSE 0 END) AS up, \
                     SUM(CASE WHEN f.value < 0 THEN 1 ELSE 0 END) AS down \
                     FROM build_feedback f JOIN builds b ON b.id = f.build_id \
                     GROUP BY b.variant ORDER BY b.variant",
                )
                .fetch_all(&self.pool)
                .await?;
                let mut summary = $crate::feedback::RatingSummary::default();
                for r in &rows {
                    let up = $crate::rows::u(r.try_get::<i64, _>("up")?);
                    let down = $crate::rows::u(r.try_get::<i64, _>("down")?);
                    summary.builds.up += up;
                    summary.builds.down += down;
                    if let Some(name) = r.try_get::<Option<String>, _>("variant")? {
                        summary.by_variant.push($crate::feedback::NamedTally { name, up, down });
                    }
                }
                summary.chat_by_tool = self
                    .feedback_by_tool()
                    .await?
                    .into_iter()
                    .map(|(name, up, down)| $crate::feedback::NamedTally { name, up, down })
                    .collect();
                Ok(summary)
            }
        }

        impl $store {
            /// Move the confidence of the notes build `build_id` used, saying how far.
            async fn move_notes(&self, build_id: &str, helped: bool) -> $crate::Result<Vec<$crate::feedback::MovedNote>> {
                use $crate::Store;
                let ids = self.note_uses(build_id).await?;
                let mut before = std::collections::HashMap::new();
                for id in &ids {
                    if let Ok(n) = self.note(id).await {
                        before.insert(n.id.clone(), n.confidence);
                    }
                }
                let after = self.record_note_outcome(&ids, helped).await?;
                Ok(after
                    .into_iter()
                    .map(|n| $crate::feedback::MovedNote {
                        before: before.get(&n.id).copied().unwrap_or(n.confidence),
                        after: n.confidence,
                        id: n.id,
                    })
                    .collect())
            }
        }
    };
}
pub(crate) use impl_feedback_store;
