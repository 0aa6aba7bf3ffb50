-- Per-user limits every server of this store shares (docs/api.md, "Limits"): a quota's uses
-- (one row per use, counted over a sliding window) and one-holder slots with a lease.
CREATE TABLE limit_uses (
    key   TEXT NOT NULL,
    -- Milliseconds since 1970 by the store's clock.
    at_ms INTEGER NOT NULL
);
CREATE INDEX limit_uses_key_at ON limit_uses (key, at_ms);

CREATE TABLE limit_slots (
    key      TEXT PRIMARY KEY,
    holder   TEXT NOT NULL,
    until_ms INTEGER NOT NULL
) WITHOUT ROWID;

-- A visitor session ends when it has not been used for a while (each message moves this on);
-- sessions made before this migration get a day.
ALTER TABLE visitors ADD COLUMN expires_at TEXT NOT NULL DEFAULT '';
UPDATE visitors SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+1 day');
CREATE INDEX visitors_key_expires ON visitors (key_id, expires_at);
