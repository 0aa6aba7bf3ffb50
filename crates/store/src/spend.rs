//! What each user's model calls cost, and the monthly caps on it, kept in the store so every
//! server sharing it counts one spend and enforces one cap.
//!
//! A user pays for every model call made for them:
//! - builds and task runs: each call their journal logs (`usage_log`), as it is made, so a
//!   running build counts at once;
//! - explanations: logged under the build explained (phase `EXPLAIN`), paid by its owner;
//! - chat and assistant turns: the turn's record (`builds.cost_usd` of the run, written when it
//!   ends) and its background tools (`CHAT_BACKGROUND` in `usage_log`), paid by the run's
//!   `payer`, whom the server names when it records the turn: the user, or for an app's
//!   visitor the owner of the app's embed key.
//!
//! Months are UTC calendar months; the projection for a month is what was spent so far over
//! the days begun (today included) times the days in the month.

use crate::Result;
use crate::types::Tokens;
use async_trait::async_trait;
use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The user id under which the default cap is kept.
pub const DEFAULT_CAP: &str = "*";

/// The share of a cap past which a user is warned (80 %).
pub const WARN_AT: f64 = 0.8;

/// One user's model calls of one UTC day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaySpend {
    pub user_id: String,
    /// The user's name; `None` once the user was removed.
    pub name: Option<String>,
    /// `YYYY-MM-DD`.
    pub day: String,
    pub tokens: Tokens,
    /// Model calls (a chat turn's record counts as one).
    pub calls: u64,
}

/// The caps in force: the default, and each user's own (by user id).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Caps {
    pub default_usd: Option<f64>,
    pub users: BTreeMap<String, f64>,
}

impl Caps {
    /// The cap of `user_id`: their own, else the default.
    pub fn of(&self, user_id: &str) -> Option<f64> {
        self.users.get(user_id).copied().or(self.default_usd)
    }
}

/// A UTC calendar month as the caps count it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Month {
    /// `YYYY-MM`.
    pub month: String,
    /// Its first instant, in the store's time form (`…T00:00:00.000Z`).
    pub start: String,
    /// When it ends and the caps start again: the next month's first instant.
    pub resets_at: String,
    /// Days begun so far, today included (1 on the first).
    pub days_elapsed: u32,
    pub days_in_month: u32,
    /// Seconds from `now` until `resets_at` (at least 1).
    pub seconds_left: u64,
}

impl Month {
    /// The month `now` falls in.
    pub fn of(now: DateTime<Utc>) -> Month {
        let first = NaiveDate::from_ymd_opt(now.year(), now.month(), 1).unwrap_or_default();
        let next = if now.month() == 12 {
            NaiveDate::from_ymd_opt(now.year() + 1, 1, 1)
        } else {
            NaiveDate::from_ymd_opt(now.year(), now.month() + 1, 1)
        }
        .unwrap_or_default();
        let at = |d: NaiveDate| Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default());
        let days_in_month = u32::try_from((next - first).num_days()).unwrap_or(30);
        Month {
            month: format!("{:04}-{:02}", now.year(), now.month()),
            start: stamp(at(first)),
            resets_at: stamp(at(next)),
            days_elapsed: now.day(),
            days_in_month,
            seconds_left: u64::try_from((at(next) - now).num_seconds()).unwrap_or(0).max(1),
        }
    }

    /// What `so_far` comes to at the month's end at the same pace.
    pub fn project(&self, so_far: f64) -> f64 {
        so_far / f64::from(self.days_elapsed.max(1)) * f64::from(self.days_in_month)
    }
}

/// A time in the store's form (RFC 3339, milliseconds, `Z`), so it compares as text.
fn stamp(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// One day of one user's spend, in a [`UserSpend`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Day {
    pub day: String,
    pub cost_usd: f64,
    /// Input and output tokens (cached ones are part of the input).
    pub tokens: u64,
    pub calls: u64,
}

/// One user's month.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserSpend {
    pub user_id: String,
    pub name: Option<String>,
    /// This month so far.
    pub cost_usd: f64,
    pub tokens: Tokens,
    pub calls: u64,
    /// The month at this pace.
    pub projected_usd: f64,
    pub projected_tokens: u64,
    /// Their cap (their own, else the default); `None` for no cap.
    pub cap_usd: Option<f64>,
    /// `cost_usd / cap_usd`, when there is a cap.
    pub share_of_cap: Option<f64>,
    /// Each day of the month with any spend, oldest first.
    pub days: Vec<Day>,
}

impl UserSpend {
    /// At or over the cap: model calls are refused until the month resets or the cap is raised.
    pub fn over_cap(&self) -> bool {
        self.cap_usd.is_some_and(|cap| self.cost_usd >= cap)
    }

    /// At [`WARN_AT`] of the cap or more.
    pub fn near_cap(&self) -> bool {
        self.share_of_cap.is_some_and(|s| s >= WARN_AT)
    }
}

/// Every user's month (or one user's), with the caps in force.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpendReport {
    #[serde(flatten)]
    pub month: Month,
    pub default_cap_usd: Option<f64>,
    /// Most spent first.
    pub users: Vec<UserSpend>,
    /// Every user together, per day, oldest first.
    pub days: Vec<Day>,
    pub cost_usd: f64,
    pub projected_usd: f64,
}

impl SpendReport {
    /// One user's month: their row, or an empty one (nothing spent yet) with their cap.
    pub fn user(&self, user_id: &str, caps: &Caps) -> UserSpend {
        self.users.iter().find(|u| u.user_id == user_id).cloned().unwrap_or_else(|| {
            let cap = caps.of(user_id);
            UserSpend {
                user_id: user_id.to_string(),
                name: None,
                cost_usd: 0.0,
                tokens: Tokens::default(),
                calls: 0,
                projected_usd: 0.0,
                projected_tokens: 0,
                cap_usd: cap,
                share_of_cap: cap.map(|c| if c > 0.0 { 0.0 } else { 1.0 }),
                days: Vec::new(),
            }
        })
    }
}

/// Put days of spend together into a month's report.
pub fn report(month: Month, rows: Vec<DaySpend>, caps: &Caps) -> SpendReport {
    let mut users: BTreeMap<String, UserSpend> = BTreeMap::new();
    let mut all: BTreeMap<String, Day> = BTreeMap::new();
    for r in rows {
        let user = users.entry(r.user_id.clone()).or_insert_with(|| UserSpend {
            user_id: r.user_id.clone(),
            name: r.name.clone(),
            cost_usd: 0.0,
            tokens: Tokens::default(),
            calls: 0,
            projected_usd: 0.0,
            projected_tokens: 0,
            cap_usd: caps.of(&r.user_id),
            share_of_cap: None,
            days: Vec::new(),
        });
        let t = r.tokens;
        user.cost_usd += t.cost_usd;
        user.tokens.input_tokens += t.input_tokens;
        user.tokens.output_tokens += t.output_tokens;
        user.tokens.cached_tokens += t.cached_tokens;
        user.tokens.cost_usd += t.cost_usd;
        user.calls += r.calls;
        let day =
            Day { day: r.day.clone(), cost_usd: t.cost_usd, tokens: t.input_tokens + t.output_tokens, calls: r.calls };
        let total =
            all.entry(r.day).or_insert_with(|| Day { day: day.day.clone(), cost_usd: 0.0, tokens: 0, calls: 0 });
        total.cost_usd += day.cost_usd;
        total.tokens += day.tokens;
        total.calls += day.calls;
        user.days.push(day);
    }
    let mut users: Vec<UserSpend> = users
        .into_values()
        .map(|mut u| {
            u.days.sort_by(|a, b| a.day.cmp(&b.day));
            u.projected_usd = month.project(u.cost_usd);
            u.projected_tokens = month.project((u.tokens.input_tokens + u.tokens.output_tokens) as f64).round() as u64;
            u.share_of_cap = u.cap_usd.map(|cap| if cap > 0.0 { u.cost_usd / cap } else { 1.0 });
            u
        })
        .collect();
    users.sort_by(|a, b| b.cost_usd.total_cmp(&a.cost_usd).then_with(|| a.user_id.cmp(&b.user_id)));
    let cost_usd = users.iter().map(|u| u.cost_usd).sum();
    SpendReport {
        projected_usd: month.project(cost_usd),
        cost_usd,
        month,
        default_cap_usd: caps.default_usd,
        users,
        days: all.into_values().collect(),
    }
}

/// A cap must be a finite amount of dollars, zero or more.
pub fn check_cap(cap: Option<f64>) -> Result<()> {
    match cap {
        Some(c) if !c.is_finite() || c < 0.0 => {
            Err(crate::StoreError::Invalid(format!("a spending cap is 0 or more US dollars, not {c}")))
        }
        _ => Ok(()),
    }
}

/// Dollars as people read them: cents, or tenths of a cent below one dollar's cent.
pub fn usd(v: f64) -> String {
    if v != 0.0 && v.abs() < 0.01 { format!("${v:.4}") } else { format!("${v:.2}") }
}

/// Spending per user and the caps on it. Times are compared as stored text (RFC 3339 UTC).
#[async_trait]
pub trait Spending: Send + Sync {
    /// Each user's cost and tokens per UTC day of the model calls made since `since` (the
    /// store's time form); only `user_id`'s when given. Oldest day first per user.
    async fn spend_days(&self, since: &str, user_id: Option<&str>) -> Result<Vec<DaySpend>>;
    /// Name who pays for run `run` (a chat or assistant turn, which has no owner).
    async fn set_payer(&self, run: &str, user_id: &str) -> Result<()>;
    /// Set (`Some`) or clear (`None`) the monthly cap of `user_id`, or the default cap when
    /// `user_id` is `None`. A user without a cap of their own has the default.
    async fn set_spend_cap(&self, user_id: Option<&str>, cap_usd: Option<f64>) -> Result<()>;
    async fn spend_caps(&self) -> Result<Caps>;
    /// Finished builds (not task runs or chat turns) that started since `since`: when each was
    /// accepted and ended, how, and the notes it used (see [`crate::seeds`]).
    async fn run_outcomes(&self, since: &str) -> Result<Vec<crate::seeds::RunOutcome>>;

    /// The month `now` falls in: every user's spend (or `user_id`'s), per day, so far and
    /// projected, with their caps. One read of the calls and one of the caps.
    async fn spending(&self, now: DateTime<Utc>, user_id: Option<&str>) -> Result<SpendReport> {
        let month = Month::of(now);
        let rows = self.spend_days(&month.start, user_id).await?;
        let caps = self.spend_caps().await?;
        Ok(report(month, rows, &caps))
    }

    /// The seeds' metrics of the builds that finished in the `days` UTC days up to `now`'s
    /// (today included): the one window `/metrics`, `wright stats` and the dashboard count in.
    async fn seeds(&self, now: DateTime<Utc>, days: u32) -> Result<crate::seeds::SeedMetrics> {
        let day = now.date_naive() - chrono::Days::new(u64::from(days.max(1) - 1));
        Ok(crate::seeds::seed_metrics(&self.run_outcomes(&format!("{day}T00:00:00.000Z")).await?))
    }

    /// `user_id`'s month so far (an empty one when they spent nothing), with their cap.
    async fn user_spending(&self, now: DateTime<Utc>, user_id: &str) -> Result<(UserSpend, Month)> {
        let month = Month::of(now);
        let rows = self.spend_days(&month.start, Some(user_id)).await?;
        let caps = self.spend_caps().await?;
        let r = report(month, rows, &caps);
        Ok((r.user(user_id, &caps), r.month))
    }
}

/// The query behind [`Spending::spend_days`], the same on both backends but for how a
/// parameter is written (`p(1)`: `?1` or `$1`). Parameter 1 is `since`, 2 the user (only with
/// `one_user`).
pub(crate) fn spend_sql(p: fn(u8) -> String, one_user: bool) -> String {
    let (since, user) = (p(1), p(2));
    // A user's runs: the ones they own or pay for (both indexed), rather than an OR that
    // would read every run.
    let runs_of = |col: &str| {
        if one_user {
            format!(
                "AND {col} IN (SELECT id FROM builds WHERE owner = {user} \
                 UNION ALL SELECT id FROM builds WHERE payer = {user} AND owner IS NULL)"
            )
        } else {
            String::new()
        }
    };
    let (usage_runs, turn_runs) = (runs_of("u.build_id"), runs_of("b.id"));
    format!(
        "SELECT c.user_id, MAX(us.name) AS name, c.day, CAST(SUM(c.i) AS BIGINT) AS input_tokens, \
         CAST(SUM(c.o) AS BIGINT) AS output_tokens, CAST(SUM(c.k) AS BIGINT) AS cached_tokens, \
         SUM(c.cost) AS cost_usd, COUNT(*) AS calls FROM ( \
           SELECT COALESCE(b.owner, b.payer) AS user_id, substr(u.ts, 1, 10) AS day, u.input_tokens AS i, \
                  u.output_tokens AS o, u.cached_tokens AS k, u.cost_usd AS cost \
             FROM usage_log u JOIN builds b ON b.id = u.build_id \
            WHERE u.ts >= {since} AND (b.owner IS NOT NULL OR b.payer IS NOT NULL) {usage_runs} \
           UNION ALL \
           SELECT b.payer, substr(COALESCE(b.finished_at, b.started_at), 1, 10), b.input_tokens, \
                  b.output_tokens, b.cached_tokens, b.cost_usd \
             FROM builds b \
            WHERE b.kind = 'chat' AND b.payer IS NOT NULL AND b.owner IS NULL \
              AND b.status IN ('published', 'failed') AND COALESCE(b.finished_at, b.started_at) >= {since} {turn_runs} \
         ) c LEFT JOIN users us ON us.id = c.user_id \
         GROUP BY c.user_id, c.day ORDER BY c.user_id, c.day"
    )
}

/// The query behind [`Spending::run_outcomes`] (parameter 1: `since`).
pub(crate) fn outcomes_sql(p: fn(u8) -> String) -> String {
    format!(
        "SELECT b.id, b.status, COALESCE(b.queued_at, b.started_at) AS accepted_at, b.finished_at, b.duration_ms, \
         (SELECT COUNT(*) FROM note_uses x WHERE x.build_id = b.id) AS notes_used, \
         (SELECT AVG(n.confidence) FROM note_uses x JOIN notes n ON n.id = x.note_id WHERE x.build_id = b.id) \
           AS notes_confidence \
         FROM builds b WHERE b.kind = 'build' AND b.status IN ('published', 'failed') AND b.started_at >= {} \
         ORDER BY b.started_at",
        p(1)
    )
}

/// A row of [`spend_sql`].
pub(crate) fn day_spend(r: &impl crate::rows::Cols) -> Result<DaySpend> {
    use crate::rows::n;
    Ok(DaySpend {
        user_id: r.text("user_id")?,
        name: r.opt_text("name")?,
        day: r.text("day")?,
        tokens: Tokens {
            input_tokens: n(r, "input_tokens")?,
            output_tokens: n(r, "output_tokens")?,
            cached_tokens: n(r, "cached_tokens")?,
            cost_usd: r.real("cost_usd")?,
        },
        calls: n(r, "calls")?,
    })
}

/// A row of [`outcomes_sql`].
pub(crate) fn outcome(r: &impl crate::rows::Cols) -> Result<crate::seeds::RunOutcome> {
    use crate::rows::n;
    Ok(crate::seeds::RunOutcome {
        id: r.text("id")?,
        published: r.text("status")? == "published",
        accepted_at: r.text("accepted_at")?,
        finished_at: r.opt_text("finished_at")?,
        duration_ms: r.opt_int("duration_ms")?.map(crate::rows::u),
        notes_used: n(r, "notes_used")?,
        notes_confidence: r.opt_real("notes_confidence")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).map(|t| t.with_timezone(&Utc)).unwrap_or_default()
    }

    #[test]
    fn a_month_knows_its_days_and_reset() {
        let m = Month::of(at("2024-02-10T12:00:00Z"));
        assert_eq!((m.month.as_str(), m.days_elapsed, m.days_in_month), ("2024-02", 10, 29));
        assert_eq!(m.start, "2024-02-01T00:00:00.000Z");
        assert_eq!(m.resets_at, "2024-03-01T00:00:00.000Z");
        assert_eq!(m.seconds_left, (19 * 24 + 12) * 3600);
        let dec = Month::of(at("2026-12-31T23:59:59Z"));
        assert_eq!((dec.resets_at.as_str(), dec.seconds_left), ("2027-01-01T00:00:00.000Z", 1));
        assert!((m.project(10.0) - 29.0).abs() < 1e-9, "10 days at $1 a day");
    }

    #[test]
    fn a_report_sums_users_and_days() {
        let row = |user: &str, day: &str, cost: f64, calls: u64| DaySpend {
            user_id: user.into(),
            name: Some(user.into()),
            day: day.into(),
            tokens: Tokens { input_tokens: 100, output_tokens: 10, cached_tokens: 0, cost_usd: cost },
            calls,
        };
        let caps = Caps { default_usd: Some(10.0), users: [("bo".to_string(), 1.0)].into() };
        let r = report(
            Month::of(at("2026-11-05T08:00:00Z")),
            vec![row("al", "2026-11-01", 1.0, 2), row("al", "2026-11-04", 3.0, 1), row("bo", "2026-11-04", 0.9, 1)],
            &caps,
        );
        assert_eq!(r.users.len(), 2);
        let al = &r.users[0];
        assert_eq!((al.user_id.as_str(), al.calls, al.days.len()), ("al", 3, 2));
        assert!((al.cost_usd - 4.0).abs() < 1e-9 && (al.projected_usd - 24.0).abs() < 1e-9, "{al:?}");
        assert_eq!(al.projected_tokens, 1320);
        assert_eq!(al.cap_usd, Some(10.0));
        assert!(!al.near_cap());
        let bo = &r.users[1];
        assert_eq!(bo.cap_usd, Some(1.0));
        assert!(bo.near_cap() && !bo.over_cap(), "{bo:?}");
        assert_eq!(r.days.len(), 2);
        assert!((r.days[1].cost_usd - 3.9).abs() < 1e-9);
        assert!((r.cost_usd - 4.9).abs() < 1e-9);
        let cy = r.user("cy", &caps);
        assert_eq!((cy.cost_usd, cy.cap_usd), (0.0, Some(10.0)));
        assert!(check_cap(Some(-1.0)).is_err() && check_cap(Some(f64::NAN)).is_err() && check_cap(None).is_ok());
    }
}
