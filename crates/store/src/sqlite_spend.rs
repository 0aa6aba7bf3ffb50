//! [`Spending`] on SQLite: the queries of [`crate::spend`], read through the readers' pool;
//! caps and payers written through the writer.

use crate::seeds::RunOutcome;
use crate::spend::{Caps, DEFAULT_CAP, DaySpend, Spending, check_cap, day_spend, outcome, outcomes_sql, spend_sql};
use crate::{Result, SqliteStore};
use async_trait::async_trait;
use sqlx::Row;

fn p(n: u8) -> String {
    format!("?{n}")
}

#[async_trait]
impl Spending for SqliteStore {
    async fn spend_days(&self, since: &str, user_id: Option<&str>) -> Result<Vec<DaySpend>> {
        let sql = spend_sql(p, user_id.is_some());
        let mut query = sqlx::query(&sql).bind(since);
        if let Some(user) = user_id {
            query = query.bind(user);
        }
        let rows = query.fetch_all(&self.read).await?;
        rows.iter().map(day_spend).collect()
    }

    async fn set_payer(&self, run: &str, user_id: &str) -> Result<()> {
        sqlx::query("UPDATE builds SET payer = ? WHERE id = ?").bind(user_id).bind(run).execute(&self.pool).await?;
        Ok(())
    }

    async fn set_spend_cap(&self, user_id: Option<&str>, cap_usd: Option<f64>) -> Result<()> {
        check_cap(cap_usd)?;
        let key = user_id.unwrap_or(DEFAULT_CAP);
        match cap_usd {
            Some(cap) => {
                sqlx::query(
                    "INSERT INTO spend_caps (user_id, cap_usd, updated_at) VALUES (?, ?, ?) \
                     ON CONFLICT (user_id) DO UPDATE SET cap_usd = excluded.cap_usd, updated_at = excluded.updated_at",
                )
                .bind(key)
                .bind(cap)
                .bind(crate::now())
                .execute(&self.pool)
                .await?;
            }
            None => {
                sqlx::query("DELETE FROM spend_caps WHERE user_id = ?").bind(key).execute(&self.pool).await?;
            }
        }
        Ok(())
    }

    async fn spend_caps(&self) -> Result<Caps> {
        // The writer's pool: a cap an admin just raised lets the user through at once.
        let rows = sqlx::query("SELECT user_id, cap_usd FROM spend_caps").fetch_all(&self.pool).await?;
        let mut caps = Caps::default();
        for r in &rows {
            let (user, cap): (String, f64) = (r.try_get("user_id")?, r.try_get("cap_usd")?);
            if user == DEFAULT_CAP {
                caps.default_usd = Some(cap);
            } else {
                caps.users.insert(user, cap);
            }
        }
        Ok(caps)
    }

    async fn run_outcomes(&self, since: &str) -> Result<Vec<RunOutcome>> {
        let rows = sqlx::query(&outcomes_sql(p)).bind(since).fetch_all(&self.read).await?;
        rows.iter().map(outcome).collect()
    }
}
