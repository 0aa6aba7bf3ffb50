-- Maintenance on PostgreSQL: the SQLite store's 0009. Lease and heartbeat times come from this
-- database's clock (`wright_now`).

-- A job's lease (who may run it until when) and how its last run went. The lease outlives
-- the run: a job taken for its period runs at most once a period, whoever asks.
CREATE TABLE jobs (
    name          TEXT PRIMARY KEY,
    holder        TEXT,
    lease_until   TEXT,
    last_started  TEXT,
    last_finished TEXT,
    -- 1 when the last finished run went well, 0 when it failed, NULL before any finished.
    last_ok       BIGINT,
    last_detail   TEXT
);

-- When a finished build's files were removed by retention; its row, events and conversation
-- stay.
ALTER TABLE builds ADD COLUMN pruned_at TEXT;
-- Finished builds whose files are still there, oldest first.
CREATE INDEX builds_prunable ON builds (finished_at)
    WHERE pruned_at IS NULL AND status IN ('published', 'failed');
-- Other runs working in the same folder (a follow-up build uses its parent's).
CREATE INDEX builds_by_workspace ON builds (workspace);

-- Every server (its workers) as its last heartbeat left it.
CREATE TABLE workers (
    name       TEXT PRIMARY KEY,
    host       TEXT NOT NULL,
    pid        BIGINT NOT NULL,
    slots      BIGINT NOT NULL,
    busy       BIGINT NOT NULL,
    version    TEXT NOT NULL,
    started_at TEXT NOT NULL,
    seen_at    TEXT NOT NULL
);
CREATE INDEX workers_seen ON workers (seen_at);
