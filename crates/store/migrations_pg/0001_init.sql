-- wright's store on PostgreSQL: the same tables as the SQLite store (migrations/), in one
-- step. Times are TEXT in the events' form (RFC 3339, milliseconds, `Z`), so rows and events
-- sort together as text on both backends; lists are JSON arrays in TEXT columns. Lease times
-- come from this database's clock (`wright_now`), never from a worker's.

-- Now plus `extra` seconds, by the database's clock, in the stored form.
CREATE FUNCTION wright_now(extra double precision DEFAULT 0) RETURNS text
LANGUAGE sql VOLATILE AS $$
    SELECT to_char((clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => extra),
                   'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

CREATE TABLE builds (
    id               TEXT PRIMARY KEY,
    parent_id        TEXT,
    prompt           TEXT NOT NULL,
    template         TEXT NOT NULL,
    lang             TEXT NOT NULL,
    provider         TEXT NOT NULL,
    model            TEXT NOT NULL,
    workspace        TEXT NOT NULL,
    status           TEXT NOT NULL,
    end_reason       TEXT,
    fix_attempts     BIGINT NOT NULL DEFAULT 0,
    turns            BIGINT NOT NULL DEFAULT 0,
    input_tokens     BIGINT NOT NULL DEFAULT 0,
    output_tokens    BIGINT NOT NULL DEFAULT 0,
    cached_tokens    BIGINT NOT NULL DEFAULT 0,
    cost_usd         DOUBLE PRECISION NOT NULL DEFAULT 0,
    duration_ms      BIGINT,
    files            TEXT NOT NULL DEFAULT '[]',
    report           TEXT,
    started_at       TEXT NOT NULL,
    finished_at      TEXT,
    owner            TEXT,
    request          TEXT,
    idempotency_key  TEXT,
    queued_at        TEXT,
    worker           TEXT,
    lease_until      TEXT,
    cancel_requested BIGINT NOT NULL DEFAULT 0,
    preview_key      TEXT,
    dedup_key        TEXT,
    attempt          BIGINT NOT NULL DEFAULT 1,
    kind             TEXT NOT NULL DEFAULT 'build'
);
CREATE INDEX builds_started ON builds (started_at);
CREATE UNIQUE INDEX builds_idempotency ON builds (owner, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX builds_dedup ON builds (owner, dedup_key)
    WHERE dedup_key IS NOT NULL AND status IN ('queued', 'running');
CREATE INDEX builds_queue ON builds (status, queued_at);
CREATE INDEX builds_owner ON builds (owner, started_at);
-- An owner's limits, decided as each request is queued: what they have queued or running, and
-- what they queued this past hour.
CREATE INDEX builds_owner_active ON builds (owner) WHERE status IN ('queued', 'running');
CREATE INDEX builds_owner_queued ON builds (owner, queued_at);
CREATE INDEX builds_lease ON builds (status, lease_until);
CREATE INDEX builds_workspace ON builds (workspace) WHERE status IN ('queued', 'running');

CREATE TABLE events (
    build_id TEXT NOT NULL,
    seq      BIGINT NOT NULL,
    ts       TEXT NOT NULL,
    type     TEXT NOT NULL,
    data     TEXT NOT NULL,
    PRIMARY KEY (build_id, seq)
);
CREATE INDEX events_type_ts ON events (type, ts);

CREATE TABLE turns (
    build_id      TEXT NOT NULL,
    idx           BIGINT NOT NULL,
    phase         TEXT NOT NULL,
    role          TEXT NOT NULL,
    message       TEXT NOT NULL,
    ts            TEXT NOT NULL,
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    cached_tokens BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (build_id, idx)
);

CREATE TABLE attempts (
    id            TEXT PRIMARY KEY,
    build_id      TEXT NOT NULL,
    template      TEXT NOT NULL,
    success       BIGINT NOT NULL,
    iterations    BIGINT NOT NULL,
    duration_ms   BIGINT NOT NULL,
    notes_applied TEXT NOT NULL DEFAULT '[]',
    errors        TEXT NOT NULL DEFAULT '[]',
    model         TEXT NOT NULL,
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    cached_tokens BIGINT NOT NULL DEFAULT 0,
    cost_usd      DOUBLE PRECISION NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL
);
CREATE INDEX attempts_build ON attempts (build_id);
CREATE INDEX attempts_created ON attempts (created_at);

CREATE TABLE notes (
    id             TEXT PRIMARY KEY,
    trigger        TEXT NOT NULL,
    trigger_type   TEXT NOT NULL,
    lesson         TEXT NOT NULL,
    libraries      TEXT NOT NULL DEFAULT '[]',
    error_patterns TEXT NOT NULL DEFAULT '[]',
    tags           TEXT NOT NULL DEFAULT '[]',
    help_count     BIGINT NOT NULL DEFAULT 0,
    fail_count     BIGINT NOT NULL DEFAULT 0,
    confidence     DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    status         TEXT NOT NULL DEFAULT 'CANDIDATE',
    source_build   TEXT,
    source_error   TEXT,
    source_fix     TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX notes_status ON notes (status, confidence DESC);

CREATE TABLE note_keys (
    key     TEXT NOT NULL,
    note_id TEXT NOT NULL,
    rank    DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (key, note_id)
);
CREATE INDEX note_keys_note ON note_keys (note_id);
CREATE INDEX note_keys_rank ON note_keys (key, rank DESC, note_id);

CREATE TABLE note_uses (
    build_id TEXT NOT NULL,
    note_id  TEXT NOT NULL,
    phase    TEXT NOT NULL,
    ts       TEXT NOT NULL,
    PRIMARY KEY (build_id, note_id)
);
CREATE INDEX note_uses_note ON note_uses (note_id);

CREATE TABLE usage_log (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    build_id      TEXT NOT NULL,
    phase         TEXT NOT NULL,
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,
    input_tokens  BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    cached_tokens BIGINT NOT NULL,
    cost_usd      DOUBLE PRECISION NOT NULL,
    ts            TEXT NOT NULL
);
CREATE INDEX usage_build ON usage_log (build_id);

CREATE TABLE users (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    role       TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE refusals (
    id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id TEXT NOT NULL,
    reason  TEXT NOT NULL,
    ts      TEXT NOT NULL
);
CREATE INDEX refusals_user ON refusals (user_id, ts);

CREATE TABLE task_results (
    run_id      TEXT NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
    task_id     TEXT NOT NULL,
    position    BIGINT NOT NULL,
    kind        TEXT NOT NULL,
    status      TEXT NOT NULL,
    message     TEXT NOT NULL,
    result      TEXT NOT NULL,
    task_hash   TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    PRIMARY KEY (run_id, task_id)
);

CREATE TABLE lent_projects (
    run_id    TEXT PRIMARY KEY,
    path      TEXT NOT NULL,
    uid       BIGINT NOT NULL,
    gid       BIGINT NOT NULL,
    pid       BIGINT NOT NULL,
    pid_start TEXT NOT NULL,
    lent_at   TEXT NOT NULL
);
