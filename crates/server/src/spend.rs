//! Monthly spending caps on every route that calls a model (builds, task runs, explanations,
//! chat messages, assistant turns): each handler asks [`check`] for the user who pays before
//! anything is queued or sent. At or over the cap the answer is 429 with `Retry-After` (until
//! the month resets, UTC) and the figures; past 80 % the request goes through with a warning.
//! Spend and caps are the store's, so every server of a store counts one spend, and a cap an
//! admin raises lets the user through on the next request.

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use serde_json::json;
use wright_events::{EventKind, Level};
use wright_store::{Draft, Month, UserSpend};

pub use wright_store::spend::usd;

/// The words of a user's standing against their cap, or `None` below [`wright_store::spend::WARN_AT`].
pub fn warning(me: &UserSpend, month: &Month) -> Option<String> {
    let cap = me.cap_usd?;
    if !me.near_cap() {
        return None;
    }
    Some(format!(
        "you have used {} of your {} monthly spending cap ({:.0} %); it resets on {} UTC",
        usd(me.cost_usd),
        usd(cap),
        me.share_of_cap.unwrap_or(1.0) * 100.0,
        month.resets_at.get(..10).unwrap_or(&month.resets_at)
    ))
}

/// Refuse a model-backed request of `payer` (a user id) who is at or over their monthly cap:
/// 429, `Retry-After` the seconds until the month resets, and the JSON error's `spent_usd`,
/// `cap_usd`, `month` and `resets_at`. Past 80 % the request goes on: builds and task runs
/// get the warning in their stream as they start ([`warn_run`]), pages show it from
/// `GET /api/spend`.
pub async fn check(state: &AppState, payer: &str) -> ApiResult<()> {
    let (me, month) = state.store.user_spending(chrono::Utc::now(), payer).await?;
    let Some(cap) = me.cap_usd else { return Ok(()) };
    if !me.over_cap() {
        return Ok(());
    }
    state.metrics.refused("spending_cap");
    if let Err(e) = state.store.log_refusal(payer, "spending_cap").await {
        tracing::warn!("refusal not logged: {e}");
    }
    let message = format!(
        "you have spent {} of your {} monthly spending cap for {}; it resets on {} UTC (in {}), \
         or sooner if an admin raises the cap",
        usd(me.cost_usd),
        usd(cap),
        month.month,
        month.resets_at.get(..10).unwrap_or(&month.resets_at),
        wait_words(month.seconds_left)
    );
    let details = json!({
        "spent_usd": me.cost_usd,
        "cap_usd": cap,
        "month": month.month,
        "resets_at": month.resets_at,
    });
    let details = details.as_object().cloned().unwrap_or_default();
    Err(ApiError::too_many("spending_cap", message, month.seconds_left).with_details(details))
}

/// A wait in days, hours or minutes.
fn wait_words(secs: u64) -> String {
    match secs {
        s if s >= 2 * 86_400 => format!("{} days", s / 86_400),
        s if s >= 2 * 3600 => format!("{} hours", s / 3600),
        s => format!("{} minutes", s.div_ceil(60)),
    }
}

/// Record who pays for chat or assistant turn `run` (a turn has no owner of its own).
pub async fn charge_turn(state: &AppState, run: &str, payer: &str) {
    if let Err(e) = state.store.set_payer(run, payer).await {
        tracing::warn!(run, "who pays for this turn was not stored: {e}");
    }
}

/// As `worker` starts run `run` (a build or task run) of `owner`: past 80 % of the owner's
/// monthly cap, a `status` event with level `warning` in its stream, so the warning comes with
/// the run whichever way it is followed (web UI, `wright`, MCP, curl).
pub async fn warn_run(state: &AppState, run: &str, worker: &str, owner: Option<&str>) {
    let Some(owner) = owner else { return };
    let message = match state.store.user_spending(chrono::Utc::now(), owner).await {
        Ok((me, month)) => warning(&me, &month),
        Err(e) => {
            tracing::warn!(run, "the owner's spend could not be read: {e}");
            None
        }
    };
    let Some(message) = message else { return };
    let event = Draft::now(EventKind::Status { message, level: Level::Warning });
    if let Err(e) = state.store.append(run, Some(worker), vec![event]).await {
        tracing::warn!(run, "the spending warning was not stored: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_and_dollars_read_plainly() {
        assert_eq!(
            (wait_words(3 * 86_400 + 5), wait_words(7200), wait_words(61)),
            ("3 days".into(), "2 hours".into(), "2 minutes".into())
        );
        assert_eq!((usd(1.5), usd(0.004), usd(0.0)), ("$1.50".into(), "$0.0040".into(), "$0.00".into()));
    }
}
