//! [`AppStore`] on SQLite. A slug is given out inside a `BEGIN IMMEDIATE` transaction (one
//! writer at a time), so the first free `base`, `base-2`, … read there is still free when it
//! is inserted; the unique index stands behind it anyway.

use crate::apps::{
    App, AppChange, AppFilter, AppKey, AppStore, NewApp, app_row, checked, first_free, slug_taken, slugify,
};
use crate::rows::like_prefix;
use crate::sqlite::SqliteStore;
use crate::{Result, StoreError};
use async_trait::async_trait;
use sqlx::Row;

/// A unique-key refusal on a rename as "taken"; any other error as it is.
fn renamed(e: sqlx::Error, slug: &str) -> StoreError {
    match &e {
        sqlx::Error::Database(d) if d.is_unique_violation() => slug_taken(slug),
        _ => e.into(),
    }
}

#[async_trait]
impl AppStore for SqliteStore {
    async fn publish_app(&self, app: &NewApp) -> Result<App> {
        let base = slugify(&app.title);
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let existing =
            sqlx::query("SELECT * FROM apps WHERE build_id = ?").bind(&app.build_id).fetch_optional(&mut *tx);
        if let Some(row) = existing.await? {
            return app_row(&row);
        }
        let owner: Option<String> = sqlx::query("SELECT owner FROM builds WHERE id = ?")
            .bind(&app.build_id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("build {}", app.build_id)))?
            .try_get("owner")?;
        let taken: Vec<String> = sqlx::query_scalar("SELECT slug FROM apps WHERE slug = ? OR slug LIKE ? ESCAPE '\\'")
            .bind(&base)
            .bind(like_prefix(&format!("{base}-")))
            .fetch_all(&mut *tx)
            .await?;
        let slug = first_free(&base, &taken);
        let now = crate::now();
        sqlx::query(
            "INSERT INTO apps (slug, build_id, owner, title, description, prompt, template, created_at, updated_at) \
             VALUES (?,?,?,?,?,?,?,?,?)",
        )
        .bind(&slug)
        .bind(&app.build_id)
        .bind(&owner)
        .bind(&app.title)
        .bind(&app.description)
        .bind(&app.prompt)
        .bind(app.template.as_str())
        .bind(&now)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.app(&slug).await
    }

    async fn app(&self, slug: &str) -> Result<App> {
        let row = sqlx::query("SELECT * FROM apps WHERE slug = ?").bind(slug).fetch_optional(&self.pool).await?;
        row.as_ref().map(app_row).transpose()?.ok_or_else(|| StoreError::NotFound(format!("app {slug}")))
    }

    async fn app_of_build(&self, build_id: &str) -> Result<Option<App>> {
        let row =
            sqlx::query("SELECT * FROM apps WHERE build_id = ?").bind(build_id).fetch_optional(&self.pool).await?;
        row.as_ref().map(app_row).transpose()
    }

    async fn apps(&self, f: &AppFilter) -> Result<Vec<App>> {
        let rows = sqlx::query(
            "SELECT * FROM apps WHERE (?1 IS NULL OR owner = ?1) AND (?2 = 0 OR unpublished_at IS NULL) \
             ORDER BY created_at DESC, slug LIMIT ?3",
        )
        .bind(&f.owner)
        .bind(i64::from(f.published_only))
        .bind(i64::from(f.limit))
        .fetch_all(&self.read)
        .await?;
        rows.iter().map(app_row).collect()
    }

    async fn rename_app(&self, slug: &str, change: &AppChange) -> Result<App> {
        let c = checked(change)?;
        let to = c.slug.clone().unwrap_or_else(|| slug.to_string());
        let done = sqlx::query(
            "UPDATE apps SET slug = ?, title = COALESCE(?, title), description = COALESCE(?, description), \
             updated_at = ? WHERE slug = ?",
        )
        .bind(&to)
        .bind(&c.title)
        .bind(&c.description)
        .bind(crate::now())
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
        let done = sqlx::query(
            "UPDATE apps SET build_id = ?2, updated_at = ?3 WHERE build_id = ?1 AND unpublished_at IS NULL \
             AND owner IS (SELECT owner FROM builds WHERE id = ?2) \
             AND NOT EXISTS (SELECT 1 FROM apps WHERE build_id = ?2)",
        )
        .bind(from)
        .bind(to)
        .bind(crate::now())
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Ok(None);
        }
        self.app_of_build(to).await
    }
}

impl SqliteStore {
    /// Mark the app `key` names unpublished, unless it is already: its first time down stays.
    async fn take_down(&self, key: AppKey, value: &str) -> Result<()> {
        let sql = format!(
            "UPDATE apps SET unpublished_at = ?1, updated_at = ?1 WHERE {} = ?2 AND unpublished_at IS NULL",
            key.column()
        );
        sqlx::query(&sql).bind(crate::now()).bind(value).execute(&self.pool).await?;
        Ok(())
    }
}
