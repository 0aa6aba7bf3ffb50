//! [`AppStore`] on PostgreSQL. Many servers may publish at once: each takes the first free
//! `base`, `base-2`, … it can see and inserts it with `ON CONFLICT DO NOTHING`; the unique
//! index decides between racers, and a loser reads again and takes the next free one. Times
//! come from the database's clock (`wright_now()`).

use super::PgStore;
use super::chat::refused;
use crate::apps::{
    App, AppChange, AppFilter, AppKey, AppStore, NewApp, app_row, checked, first_free, slug_taken, slugify,
};
use crate::rows::like_prefix;
use crate::{Result, StoreError};
use async_trait::async_trait;
use sqlx::Row;

/// Tries before a publish gives up (each lost only to another publish of the same slug).
const TRIES: u32 = 50;

fn renamed(e: sqlx::Error, slug: &str) -> StoreError {
    match &e {
        sqlx::Error::Database(d) if d.is_unique_violation() => slug_taken(slug),
        _ => refused(e),
    }
}

#[async_trait]
impl AppStore for PgStore {
    async fn publish_app(&self, app: &NewApp) -> Result<App> {
        let base = slugify(&app.title);
        for _ in 0..TRIES {
            if let Some(existing) = self.app_of_build(&app.build_id).await? {
                return Ok(existing);
            }
            let owner: Option<String> = sqlx::query("SELECT owner FROM builds WHERE id = $1")
                .bind(&app.build_id)
                .fetch_optional(&self.pool)
                .await?
                .ok_or_else(|| StoreError::NotFound(format!("build {}", app.build_id)))?
                .try_get("owner")?;
            let taken: Vec<String> =
                sqlx::query_scalar("SELECT slug FROM apps WHERE slug = $1 OR slug LIKE $2 ESCAPE '\\'")
                    .bind(&base)
                    .bind(like_prefix(&format!("{base}-")))
                    .fetch_all(&self.pool)
                    .await?;
            let slug = first_free(&base, &taken);
            // One reading of the clock for both times.
            let inserted = sqlx::query(
                "INSERT INTO apps (slug, build_id, owner, title, description, prompt, template, created_at, updated_at) \
                 SELECT $1, $2, $3, $4, $5, $6, $7, n.now, n.now FROM (SELECT wright_now() AS now) n \
                 ON CONFLICT DO NOTHING",
            )
            .bind(&slug)
            .bind(&app.build_id)
            .bind(&owner)
            .bind(&app.title)
            .bind(&app.description)
            .bind(&app.prompt)
            .bind(app.template.as_str())
            .execute(&self.pool)
            .await
            .map_err(refused)?;
            if inserted.rows_affected() == 1 {
                return self.app(&slug).await;
            }
        }
        Err(StoreError::Invalid(format!("no free address for `{base}` after {TRIES} tries; try again")))
    }

    async fn app(&self, slug: &str) -> Result<App> {
        let row = sqlx::query("SELECT * FROM apps WHERE slug = $1").bind(slug).fetch_optional(&self.pool).await?;
        row.as_ref().map(app_row).transpose()?.ok_or_else(|| StoreError::NotFound(format!("app {slug}")))
    }

    async fn app_of_build(&self, build_id: &str) -> Result<Option<App>> {
        let row =
            sqlx::query("SELECT * FROM apps WHERE build_id = $1").bind(build_id).fetch_optional(&self.pool).await?;
        row.as_ref().map(app_row).transpose()
    }

    async fn apps(&self, f: &AppFilter) -> Result<Vec<App>> {
        let rows = sqlx::query(
            "SELECT * FROM apps WHERE ($1::text IS NULL OR owner = $1) AND (NOT $2 OR unpublished_at IS NULL) \
             ORDER BY created_at DESC, slug LIMIT $3",
        )
        .bind(&f.owner)
        .bind(f.published_only)
        .bind(i64::from(f.limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(app_row).collect()
    }

    async fn rename_app(&self, slug: &str, change: &AppChange) -> Result<App> {
        let c = checked(change)?;
        let to = c.slug.clone().unwrap_or_else(|| slug.to_string());
        let done = sqlx::query(
            "UPDATE apps SET slug = $1, title = COALESCE($2, title), description = COALESCE($3, description), \
             updated_at = wright_now() WHERE slug = $4",
        )
        .bind(&to)
        .bind(&c.title)
        .bind(&c.description)
        .bind(slug)
        .execute(&self.pool)
        .await
        .map_err(|e| renamed(e, &to))?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("app {slug}")));
        }
        self.app(&to).await
    }

    async fn unpublish_app(&self, slug: &str) -> Result<App> {
        self.take_down(AppKey::Slug, slug).await?;
        self.app(slug).await
    }

    async fn unpublish_app_of_build(&self, build_id: &str) -> Result<Option<App>> {
        self.take_down(AppKey::Build, build_id).await?;
        self.app_of_build(build_id).await
    }

    async fn move_app(&self, from: &str, to: &str) -> Result<Option<App>> {
        // The unique index on build_id is the guard if two moves race.
        let done = sqlx::query(
            "UPDATE apps SET build_id = $2, updated_at = wright_now() WHERE build_id = $1 AND unpublished_at IS NULL \
             AND owner IS NOT DISTINCT FROM (SELECT owner FROM builds WHERE id = $2) \
             AND NOT EXISTS (SELECT 1 FROM apps WHERE build_id = $2)",
        )
        .bind(from)
        .bind(to)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(None);
        }
        self.app_of_build(to).await
    }
}

impl PgStore {
    /// Mark the app `key` names unpublished, unless it is already: its first time down stays.
    async fn take_down(&self, key: AppKey, value: &str) -> Result<()> {
        let sql = format!(
            "UPDATE apps SET unpublished_at = n.now, updated_at = n.now FROM (SELECT wright_now() AS now) n \
             WHERE {} = $1 AND unpublished_at IS NULL",
            key.column()
        );
        sqlx::query(&sql).bind(value).execute(&self.pool).await?;
        Ok(())
    }
}
