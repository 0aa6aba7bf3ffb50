//! [`Limiter`] on PostgreSQL: a decision takes a transaction-scoped advisory lock per key (in
//! one order, so two requests sharing keys cannot deadlock), so two servers deciding for the
//! same user wait for each other; every time is the database's (`wright_now_ms()`).

use super::PgStore;
use crate::Result;
use crate::limits::{
    Admit, LONGEST_WINDOW, Limiter, Quota, SlotAsk, Usage, lock_order, ms, rfc3339_ms, usage_of, wait,
};
use async_trait::async_trait;
use sqlx::Row;
use std::time::Duration;

#[async_trait]
impl Limiter for PgStore {
    async fn admit(&self, slot: Option<&SlotAsk>, quotas: &[Quota]) -> Result<Admit> {
        let mut tx = self.pool.begin().await?;
        for key in lock_order(slot, quotas) {
            sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('wright-limit:' || $1, 0))")
                .bind(&key)
                .execute(&mut *tx)
                .await?;
        }
        let now: i64 = sqlx::query_scalar("SELECT wright_now_ms()").fetch_one(&mut *tx).await?;
        if let Some(s) = slot {
            let held = sqlx::query("SELECT holder, until_ms FROM limit_slots WHERE key = $1")
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
            sqlx::query("DELETE FROM limit_uses WHERE key = $1 AND at_ms <= $2")
                .bind(&q.key)
                .bind(now - ms(LONGEST_WINDOW))
                .execute(&mut *tx)
                .await?;
            let row =
                sqlx::query("SELECT COUNT(*) AS n, MIN(at_ms) AS oldest FROM limit_uses WHERE key = $1 AND at_ms > $2")
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
            sqlx::query("INSERT INTO limit_uses (key, at_ms) VALUES ($1, $2)")
                .bind(&q.key)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(s) = slot {
            sqlx::query(
                "INSERT INTO limit_slots (key, holder, until_ms) VALUES ($1, $2, $3) \
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
        let mut out = Vec::with_capacity(quotas.len());
        for q in quotas {
            let window = ms(q.window.min(LONGEST_WINDOW));
            let row = sqlx::query(
                "SELECT COUNT(u.key) AS n, MIN(u.at_ms) AS oldest, MAX(t.now) AS now \
                 FROM (SELECT wright_now_ms() AS now) AS t \
                 LEFT JOIN limit_uses AS u ON u.key = $1 AND u.at_ms > t.now - $2",
            )
            .bind(&q.key)
            .bind(window)
            .fetch_one(&self.pool)
            .await?;
            out.push(usage_of(row.try_get("n")?, row.try_get("oldest")?, window, row.try_get("now")?));
        }
        Ok(out)
    }

    async fn runs_used(&self, owner: &str, kind: wright_events::RunKind, window: Duration) -> Result<Usage> {
        let row = sqlx::query(
            "SELECT COUNT(b.id) AS n, MIN(b.queued_at) AS oldest, MAX(t.now) AS now \
             FROM (SELECT wright_now_ms() AS now, wright_now(-$3) AS since) AS t \
             LEFT JOIN builds AS b ON b.owner = $1 AND b.kind = $2 AND b.queued_at >= t.since",
        )
        .bind(owner)
        .bind(kind.as_str())
        .bind(window.as_secs_f64())
        .fetch_one(&self.pool)
        .await?;
        let oldest: Option<String> = row.try_get("oldest")?;
        Ok(usage_of(row.try_get("n")?, oldest.as_deref().and_then(rfc3339_ms), ms(window), row.try_get("now")?))
    }

    async fn renew_slot(&self, key: &str, holder: &str, lease: Duration) -> Result<bool> {
        let n = sqlx::query("UPDATE limit_slots SET until_ms = wright_now_ms() + $1 WHERE key = $2 AND holder = $3")
            .bind(ms(lease))
            .bind(key)
            .bind(holder)
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(n == 1)
    }

    async fn release_slot(&self, key: &str, holder: &str) -> Result<()> {
        sqlx::query("DELETE FROM limit_slots WHERE key = $1 AND holder = $2")
            .bind(key)
            .bind(holder)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn sweep_limits(&self) -> Result<u64> {
        let uses = sqlx::query("DELETE FROM limit_uses WHERE at_ms <= wright_now_ms() - $1")
            .bind(ms(LONGEST_WINDOW))
            .execute(&self.pool)
            .await?
            .rows_affected();
        let slots = sqlx::query("DELETE FROM limit_slots WHERE until_ms <= wright_now_ms()")
            .execute(&self.pool)
            .await?
            .rows_affected();
        let visitors = sqlx::query("DELETE FROM visitors WHERE expires_at <= wright_now()")
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(uses + slots + visitors)
    }
}
