-- Cost per user and monthly spending caps. A run's cost is paid by its owner (builds, task
-- runs, and the explanations logged under them); a chat or assistant turn has no owner, so the
-- server names who pays for it (`payer`: the user, or for an app's visitor the embed key's
-- owner) when it records the turn. Caps live here so every server sharing the store enforces
-- the same ones; the row of user `*` is the default for everyone without a cap of their own.

ALTER TABLE builds ADD COLUMN payer TEXT;
CREATE INDEX builds_payer ON builds (payer, started_at) WHERE payer IS NOT NULL;
-- A month's model calls are read by time, for every user at once (dashboard, stats).
CREATE INDEX usage_ts ON usage_log (ts);

CREATE TABLE spend_caps (
    user_id    TEXT PRIMARY KEY,
    cap_usd    DOUBLE PRECISION NOT NULL,
    updated_at TEXT NOT NULL
);
