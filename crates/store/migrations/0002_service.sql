-- wright serve: builds wait in a queue that lives in the database (so several servers and
-- workers can share it), belong to users, and are claimed by a worker under a lease that it
-- renews while the build runs; a build whose lease ran out was lost with its worker.

ALTER TABLE builds ADD COLUMN owner TEXT;
ALTER TABLE builds ADD COLUMN request TEXT;
ALTER TABLE builds ADD COLUMN idempotency_key TEXT;
ALTER TABLE builds ADD COLUMN queued_at TEXT;
ALTER TABLE builds ADD COLUMN worker TEXT;
ALTER TABLE builds ADD COLUMN lease_until TEXT;
ALTER TABLE builds ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
ALTER TABLE builds ADD COLUMN preview_key TEXT;
-- Hash of the request: the same request from the same user while one is queued or running
-- is that build, not a second one.
ALTER TABLE builds ADD COLUMN dedup_key TEXT;

CREATE UNIQUE INDEX builds_idempotency ON builds (owner, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX builds_dedup ON builds (owner, dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('queued', 'running');
CREATE INDEX builds_queue ON builds (status, queued_at);
CREATE INDEX builds_owner ON builds (owner, started_at);
CREATE INDEX builds_lease ON builds (status, lease_until);

CREATE TABLE users (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    role       TEXT NOT NULL,
    -- SHA-256 of the API token, hex; the token itself is shown once and never stored.
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

-- Browser sessions and one-time login links, by the SHA-256 of their secret.
CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    expires_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id);

-- Requests refused by a limit, for the admin's usage view.
CREATE TABLE refusals (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL,
    reason  TEXT NOT NULL,
    ts      TEXT NOT NULL
);
CREATE INDEX refusals_user ON refusals (user_id, ts);
