//! [`Limiter`] on SQLite: each decision is one `BEGIN IMMEDIATE` transaction, and SQLite has
//! one writer, so servers sharing the file decide one request at a time. Time is this
//! machine's clock (every server of one SQLite file runs on one machine).

use crate::limits::{Admit, LONGEST_WINDOW, Limiter, Quota, SlotAsk, Usage, ms, rfc3339_ms, usage_of, wait};
use crate::{Result, SqliteStore};
use async_trait::async_trait;
use sqlx::Row;
use std::time::Duration;

/// Milliseconds since 1970 by this machine's clock.
fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[async_trait]
impl Limiter for SqliteStore {
    async fn admit(&self, slot: Option<&SlotAsk>, quotas: &[Quota]) -> Result<Admit> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let now = now_ms();
        if let Some(s) = slot {
            let held = sqlx::query("SELECT holder, until_ms FROM limit_slots WHERE key = ?")
                .bind(&s.key)
                .fetch_optional(&mut *tx)
                .await?;
            if let Some(row) = held {
                let (holder, until): (String, i64) = (row.try_get("holder")?, row.try_get("until_ms")?);
                if holder != s.holder && until > now {
                    tx.rollback().await?;
                    return Ok(Admit::Busy { retry_after: wait(until, 0, now) });
                }
            }
        }
        for q in quotas {
            let window = ms(q.window.min(LONGEST_WINDOW));
            // Uses no window can reach any more go as the key is used (the sweep takes the
            // rest), so a busy key's rows stay bounded.
            sqlx::query("DELETE FROM limit_uses WHERE key = ? AND at_ms <= ?")
                .bind(&q.key)
                .bind(now - ms(LONGEST_WINDOW))
                .execute(&mut *tx)
                .await?;
            let row =
                sqlx::query("SELECT COUNT(*) AS n, MIN(at_ms) AS oldest FROM limit_uses WHERE key = ? AND at_ms > ?")
                    .bind(&q.key)
                    .bind(now - window)
                    .fetch_one(&mut *tx)
                    .await?;
            let count = u64::try_from(row.try_get::<i64, _>("n")?).unwrap_or_default();
            if count >= u64::from(q.max) {
                let oldest: Option<i64> = row.try_get("oldest")?;
                tx.rollback().await?;
                return Ok(Admit::Over {
                    key: q.key.clone(),
                    count,
                    max: q.max,
                    retry_after: wait(oldest.unwrap_or(now), window, now),
                });
            }
        }
        for q in quotas {
            sqlx::query("INSERT INTO limit_uses (key, at_ms) VALUES (?, ?)")
                .bind(&q.key)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(s) = slot {
            sqlx::query(
                "INSERT INTO limit_slots (key, holder, until_ms) VALUES (?, ?, ?) \
                 ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms",
            )
            .bind(&s.key)
            .bind(&s.holder)
            .bind(now.saturating_add(ms(s.lease)))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(Admit::Admitted)
    }

    async fn quota_usage(&self, quotas: &[Quota]) -> Result<Vec<Usage>> {
        let now = now_ms();
        let mut out = Vec::with_capacity(quotas.len());
        for q in quotas {
            let window = ms(q.window.min(LONGEST_WINDOW));
            let row =
                sqlx::query("SELECT COUNT(*) AS n, MIN(at_ms) AS oldest FROM limit_uses WHERE key = ? AND at_ms > ?")
                    .bind(&q.key)
                    .bind(now - window)
                    .fetch_one(&self.pool)
                    .await?;
            out.push(usage_of(row.try_get("n")?, row.try_get("oldest")?, window, now));
        }
        Ok(out)
    }

    async fn runs_used(&self, owner: &str, kind: wright_events::RunKind, window: Duration) -> Result<Usage> {
        let now = now_ms();
        let since = crate::sqlite::from_now_minus(window);
        let row = sqlx::query(
            "SELECT COUNT(*) AS n, MIN(queued_at) AS oldest FROM builds WHERE owner = ? AND kind = ? AND queued_at >= ?",
        )
        .bind(owner)
        .bind(kind.as_str())
        .bind(&since)
        .fetch_one(&self.pool)
        .await?;
        let oldest: Option<String> = row.try_get("oldest")?;
        Ok(usage_of(row.try_get("n")?, oldest.as_deref().and_then(rfc3339_ms), ms(window), now))
    }

    async fn renew_slot(&self, key: &str, holder: &str, lease: Duration) -> Result<bool> {
        let n = sqlx::query("UPDATE limit_slots SET until_ms = ? WHERE key = ? AND holder = ?")
            .bind(now_ms().saturating_add(ms(lease)))
            .bind(key)
            .bind(holder)
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(n == 1)
    }

    async fn release_slot(&self, key: &str, holder: &str) -> Result<()> {
        sqlx::query("DELETE FROM limit_slots WHERE key = ? AND holder = ?")
            .bind(key)
            .bind(holder)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn sweep_limits(&self) -> Result<u64> {
        let now = now_ms();
        let uses = sqlx::query("DELETE FROM limit_uses WHERE at_ms <= ?")
            .bind(now - ms(LONGEST_WINDOW))
            .execute(&self.pool)
            .await?
            .rows_affected();
        let slots = sqlx::query("DELETE FROM limit_slots WHERE until_ms <= ?")
            .bind(now)
            .execute(&self.pool)
            .await?
            .rows_affected();
        let visitors = sqlx::query("DELETE FROM visitors WHERE expires_at <= ?")
            .bind(crate::now())
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(uses + slots + visitors)
    }
}
