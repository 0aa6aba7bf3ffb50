-- Per-user limits every server of this store shares (docs/api.md, "Limits"): a quota's uses
-- (one row per use, counted over a sliding window) and one-holder slots with a lease. Times
-- are milliseconds since 1970 by this database's clock.
CREATE FUNCTION wright_now_ms() RETURNS bigint
LANGUAGE sql VOLATILE AS $$
    SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint
$$;

CREATE TABLE limit_uses (
    key   TEXT COLLATE "C" NOT NULL,
    at_ms BIGINT NOT NULL
);
CREATE INDEX limit_uses_key_at ON limit_uses (key, at_ms);

CREATE TABLE limit_slots (
    key      TEXT COLLATE "C" PRIMARY KEY,
    holder   TEXT NOT NULL,
    until_ms BIGINT NOT NULL
);

-- A visitor session ends when it has not been used for a while (each message moves this on);
-- sessions made before this migration get a day.
ALTER TABLE visitors ADD COLUMN expires_at TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE visitors SET expires_at = wright_now(86400);
CREATE INDEX visitors_key_expires ON visitors (key_id, expires_at);
